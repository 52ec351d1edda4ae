// ns-step: parameters, validation and the host-side pieces both backends share.
#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/finite.hpp"
#include "common/strings.hpp"
#include "ns.hpp"

namespace numpipe::ns {

Bc parse_bc_name(const std::string& name) {
  if (name == "periodic") return Bc::periodic;
  if (name == "noslip" || name == "no-slip") return Bc::noslip;
  if (name == "freeslip" || name == "free-slip") return Bc::freeslip;
  if (name == "noflux" || name == "no-flux") return Bc::noflux;
  fail_input("boundary condition must be periodic, noslip, freeslip or noflux, got '" + name + "'");
}

void parse_bc(const std::string& spec, Bc result[3]) {
  Bc out[3];  // result is written only when the whole spec parses
  if (spec.find('=') == std::string::npos) {
    Bc b = parse_bc_name(spec);
    for (int a = 0; a < 3; ++a) result[a] = b;
    return;
  }
  bool seen[3] = {false, false, false};
  for (const std::string& item : split_fields(spec)) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq != 1 || (item[0] != 'x' && item[0] != 'y' && item[0] != 'z'))
      fail_input("--bc items must be AXIS=KIND with AXIS x, y or z, got '" + item + "' in '" + spec + "'");
    int a = item[0] - 'x';
    if (seen[a]) fail_input("--bc names axis " + std::string(1, item[0]) + " twice: '" + spec + "'");
    seen[a] = true;
    out[a] = parse_bc_name(item.substr(2));
  }
  for (int a = 0; a < 3; ++a)
    result[a] = seen[a] ? out[a] : Bc::periodic;
}

std::string bc_spec(const Bc bc[3]) {
  return std::string("x=") + bc_name(bc[0]) + ",y=" + bc_name(bc[1]) + ",z=" + bc_name(bc[2]);
}

Geometry make_geometry(const Params& p) {
  Geometry g;
  for (int a = 0; a < 3; ++a) {
    g.n[a] = static_cast<int>(p.n[a]);
    g.global_n[a] = p.n[a];
    g.offset[a] = 0;
    g.bc[a] = p.bc[a];
    g.lo[a] = g.hi[a] = p.bc[a] == Bc::periodic ? Face::periodic_self : Face::wall;
    g.h[a] = spacing(p.bc[a], p.n[a], p.box[a]);
  }
  g.gk = p.n[2] == 1 ? 0 : kGhost;
  return g;
}

std::vector<double> kolmogorov_table(const Geometry& g, const Params& p) {
  std::vector<double> kol(static_cast<std::size_t>(g.n[1]), 0.0);
  if (p.kol_amp != 0)
    for (int j = 0; j < g.n[1]; ++j) {
      const double y = double(g.offset[1] + j) * g.h[1];
      kol[static_cast<std::size_t>(j)] = p.kol_amp * std::sin(2.0 * M_PI * p.kol_k * y / p.box[1]);
    }
  return kol;
}

void validate(const Problem& pr, const RunOptions& o) {
  const Params& p = pr.params;
  const char* axis = "xyz";
  long long total = 1;
  for (int a = 0; a < 3; ++a) {
    if (p.n[a] < 1) fail_input(std::string("grid size n") + axis[a] + " must be at least 1, got " + std::to_string(p.n[a]));
    if (p.bc[a] != Bc::periodic && p.n[a] < 5)
      fail_input(std::string("grid size n") + axis[a] + " must be at least 5 with " + bc_name(p.bc[a]) + " walls, got " +
                 std::to_string(p.n[a]));
    if (p.n[a] > (1 << 20)) fail_input(std::string("grid size n") + axis[a] + " is too large: " + std::to_string(p.n[a]));
    if (!(std::isfinite(p.box[a]) && p.box[a] > 0))
      fail_input(std::string("box length l") + axis[a] + " must be positive and finite, got " + std::to_string(p.box[a]));
    if (!std::isfinite(p.force[a])) fail_input("body force must be finite");
    total *= p.n[a] + 2 * kGhost;
    if (total > (1LL << 40)) fail_input("grid is too large: " + std::to_string(p.n[0]) + "x" + std::to_string(p.n[1]) + "x" + std::to_string(p.n[2]));
  }
  if (!(std::isfinite(p.re) && p.re > 0)) fail_input("Reynolds number re must be positive and finite, got " + std::to_string(p.re));
  if (!(std::isfinite(p.c) && p.c > 0)) fail_input("speed of sound c must be positive and finite, got " + std::to_string(p.c));
  if (!std::isfinite(p.kol_amp)) fail_input("Kolmogorov forcing amplitude must be finite");
  const std::size_t count = static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]);
  for (int v = 0; v < kVars; ++v) {
    if (pr.fields[v].size() != count)
      fail_input(std::string("field ") + kVarNames[v] + " holds " + std::to_string(pr.fields[v].size()) + " values, the grid " +
                 std::to_string(count));
    const std::int64_t i = first_non_finite(pr.fields[v].data(), count);
    if (i >= 0)
      fail_input(std::string("field ") + kVarNames[v] + " is not finite at flat index " + std::to_string(i) + ": " +
                 std::to_string(pr.fields[v][static_cast<std::size_t>(i)]));
  }
  if (o.steps < 0) fail_input("--steps must be >= 0, got " + std::to_string(o.steps));
  if (o.order != 2 && o.order != 4) fail_input("--order must be 2 or 4, got " + std::to_string(o.order));
  if (o.dt < 0 || !std::isfinite(o.dt)) fail_input("--dt must be positive and finite, got " + std::to_string(o.dt));
  if (o.dt == 0 && !(o.cfl > 0 && o.cfl <= 2)) fail_input("--cfl must be in (0, 2], got " + std::to_string(o.cfl));
  if (o.diag_every < 0) fail_input("--diag-every must be >= 0, got " + std::to_string(o.diag_every));
  if (o.snapshot_every < 0) fail_input("--snapshot-every must be >= 0, got " + std::to_string(o.snapshot_every));
  for (const std::string& f : o.snapshot_fields)
    if (!is_snapshot_field(f))
      fail_input("--snapshot-fields: unknown field '" + f +
                 "' (rho, vx, vy, vz, vorticity_x, vorticity_y, vorticity_z, vorticity_magnitude, q_criterion)");
  if (p.free_stream) {
    for (int a = 0; a < 3; ++a)
      if (!std::isfinite(p.stream[a])) fail_input("the free stream must be finite");
    if (p.fringe_axis < 0 || p.fringe_axis > 2 || p.bc[p.fringe_axis] != Bc::periodic)
      fail_input(std::string("the free stream's axis ") + "xyz"[std::clamp(p.fringe_axis, 0, 2)] +
                 " must be periodic (its fringe turns the wrap into an outflow and an inflow)");
    if (!(std::isfinite(p.fringe_length) && p.fringe_length > 0 && p.fringe_length < p.box[p.fringe_axis]))
      fail_input("the fringe length must be in (0, " + std::to_string(p.box[p.fringe_axis]) + "), got " +
                 std::to_string(p.fringe_length));
    if (!(std::isfinite(p.fringe_strength) && p.fringe_strength >= 0))
      fail_input("the fringe strength must be >= 0 and finite, got " + std::to_string(p.fringe_strength));
  }
  validate_bodies(p, pr.bodies);
}

bool is_snapshot_field(const std::string& name) {
  for (const char* v : kVarNames)
    if (name == v) return true;
  for (const char* d : kDerivedNames)
    if (name == d) return true;
  return false;
}

Result run(Solver& solver, const Problem& pr, const RunOptions& o, const std::string& progress) {
  Stepper stepper{solver, o.on_snapshot, {}, 0};
  const SteppedRun steps = run_steps(stepper, step_plan(o), pr.t0, pr.step0, 0, progress, 1, progress.empty());
  return solver.finish(pr.step0 + steps.steps, steps.time);
}

StepPlan step_plan(const RunOptions& o) { return o; }

double choose_dt(const Geometry& g, const Params& p, const RunOptions& o, double max_speed) {
  if (o.dt > 0) return o.dt;
  return cfl_dt(g, o.cfl, max_speed, p.c, p.re);
}

DiagRow finish_diagnostics(const Geometry& g, const Params& p, long long step, double t, const std::vector<double>& line_sums,
                           const std::vector<double>& line_max_div, const std::vector<double>& line_max_speed) {
  double s[kDiagSums] = {0, 0, 0};
  double mdiv = 0, msp = 0;
  const std::size_t lines = line_max_div.size();
  for (std::size_t l = 0; l < lines; ++l) {  // fixed order: i, then j
    for (int d = 0; d < kDiagSums; ++d) s[d] += line_sums[l * kDiagSums + d];
    if (line_max_div[l] > mdiv || std::isnan(line_max_div[l])) mdiv = line_max_div[l];
    if (line_max_speed[l] > msp || std::isnan(line_max_speed[l])) msp = line_max_speed[l];
  }
  const double dv = g.h[0] * g.h[1] * g.h[2];
  const double volume = p.box[0] * p.box[1] * p.box[2];
  DiagRow r{};
  r.v[0] = double(step);
  r.v[1] = t;
  r.v[2] = s[kDiagKe] * dv / volume;
  r.v[3] = s[kDiagEns] * dv / volume;
  r.v[4] = 2.0 * r.v[3] / p.re;  // incompressible identity eps = 2 nu <|omega|^2/2>
  r.v[5] = mdiv;
  r.v[6] = msp / p.c;
  r.v[7] = s[kDiagMass] * dv;
  return r;
}

}  // namespace numpipe::ns
