#include "io.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/cli.hpp"
#include "common/error.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"

namespace numpipe::ns {

namespace {

bool is_state_var(const std::string& name) {
  for (int v = 0; v < kVars; ++v)
    if (name == kVarNames[v]) return true;
  return false;
}

double attr_number(const json& attrs, const char* key, const std::string& rec) {
  if (!attrs.contains(key) || !attrs[key].is_number())
    fail_input("input record " + rec + " lacks a numeric attrs." + key + " (make states with gen-input ns)");
  double v = attrs[key].get<double>();
  return v;
}

void attr_triple(const json& attrs, const char* key, const std::string& rec, double out[3]) {
  if (!attrs.contains(key) || !attrs[key].is_array() || attrs[key].size() != 3)
    fail_input("input record " + rec + " lacks attrs." + key + " as three numbers");
  for (int a = 0; a < 3; ++a) {
    if (!attrs[key][a].is_number()) fail_input("input record " + rec + ": attrs." + key + " holds a non-number");
    out[a] = attrs[key][a].get<double>();
  }
}

}  // namespace

// The bodies (attrs.bodies: the specs gen-input ns --body took; a record `solid`: the
// mask of --solid) and the free stream (attrs.free_stream) of a state.
void read_bodies(const std::vector<Record>& records, const Record& r0, Problem& pr) {
  const json& at = r0.attrs;
  if (at.contains("bodies")) {
    if (!at["bodies"].is_array()) fail_input("input record rho: attrs.bodies must be a list of body specs");
    for (const json& b : at["bodies"]) {
      if (!b.is_object() || !b.contains("spec") || !b["spec"].is_string())
        fail_input("input record rho: attrs.bodies holds an entry without a spec string: " + b.dump());
      const std::string spec = b["spec"].get<std::string>();
      if (spec == "solid") continue;  // the mask's entry: the record below
      pr.bodies.list.push_back(parse_body(spec));
    }
  }
  const Record* solid = nullptr;
  for (const Record& r : records)
    if (r.name == "solid") {
      if (solid) fail_input("input holds more than one record 'solid'");
      solid = &r;
    }
  if (solid) {
    if (solid->dtype != DType::u1) fail_input(std::string("record solid must be u1 (1 inside a body), got ") + dtype_name(solid->dtype));
    if (solid->shape != r0.shape)
      fail_input("record solid has shape " + shape_string(solid->shape) + ", the state " + shape_string(r0.shape));
    const std::uint8_t* m = solid->data<std::uint8_t>();
    pr.bodies.mask.assign(m, m + solid->size());
    Body b;
    b.kind = Body::Kind::mask;
    b.spec = "solid";
    pr.bodies.list.push_back(b);
  }
  Params& p = pr.params;
  if (at.contains("free_stream") && !at["free_stream"].is_null()) {
    const json& fs = at["free_stream"];
    if (!fs.is_object() || !fs.contains("velocity") || !fs["velocity"].is_array() || fs["velocity"].size() != 3 ||
        !fs.contains("axis") || !fs["axis"].is_number_integer() || !fs.contains("fringe_length") ||
        !fs["fringe_length"].is_number() || !fs.contains("fringe_strength") || !fs["fringe_strength"].is_number())
      fail_input("input record rho: attrs.free_stream must hold velocity [3], axis, fringe_length and fringe_strength, got " +
                 fs.dump());
    p.free_stream = true;
    for (int a = 0; a < 3; ++a) {
      if (!fs["velocity"][a].is_number()) fail_input("input record rho: attrs.free_stream.velocity holds a non-number");
      p.stream[a] = fs["velocity"][a].get<double>();
    }
    p.fringe_axis = fs["axis"].get<int>();
    p.fringe_length = fs["fringe_length"].get<double>();
    p.fringe_strength = fs["fringe_strength"].get<double>();
  }
}

RecordFilter snapshot_records(long long step) {
  RecordFilter once = keep_names_once({"snap_rho", "snap_vx", "snap_vy", "snap_vz", "solid"});
  return [once, step](const RecordHeader& h) {
    if (h.name != "solid") {
      if (h.name.rfind("snap_", 0) != 0 || !is_state_var(h.name.substr(5))) return false;
      const json& at = h.attrs;
      if (!at.is_object() || !at.contains("step") || !at["step"].is_number_integer() ||
          at["step"].get<long long>() != step)
        return false;
    }
    return once(h);
  };
}

void snapshot_as_state(std::vector<Record>& records, long long step) {
  bool have[kVars] = {false, false, false, false};
  for (Record& r : records) {
    if (r.name.rfind("snap_", 0) != 0) continue;
    r.name = r.name.substr(5);
    for (int v = 0; v < kVars; ++v) have[v] = have[v] || r.name == kVarNames[v];
    if (!r.attrs.contains("time") || !r.attrs["time"].is_number() || !r.attrs.contains("box"))
      fail_input("the snapshot snap_" + r.name + " of step " + std::to_string(step) +
                 " lacks the state's attrs (time, box, ...): it cannot start a run (snapshots of this version can)");
    r.attrs["kind"] = "ns.state";
    r.attrs["t"] = r.attrs["time"];
  }
  if (!have[0] && !have[1] && !have[2] && !have[3])
    fail_input("--from-snapshot " + std::to_string(step) + ": the input holds no snapshot of step " + std::to_string(step) +
               " (inspect lists the snap_rho records with their attrs.step)");
  for (int v = 0; v < kVars; ++v)
    if (!have[v])
      fail_input(std::string("--from-snapshot ") + std::to_string(step) + ": the snapshot of step " + std::to_string(step) +
                 " lacks snap_" + kVarNames[v] + ": restartable snapshots hold rho, vx, vy and vz (--snapshot-fields)");
}

Problem read_state(std::vector<Record>& records, json& input_attrs) {
  Problem pr;
  Record* rec[kVars] = {nullptr, nullptr, nullptr, nullptr};
  for (Record& r : records)
    for (int v = 0; v < kVars; ++v)
      if (r.name == kVarNames[v]) {
        if (rec[v]) fail_input("input holds more than one record '" + r.name + "' (one state per stream)");
        rec[v] = &r;
      }
  if (rec[0] && (!rec[0]->attrs.is_object() || rec[0]->attrs.value("kind", "") != "ns.state"))
    fail_input("input record rho is not an ns.state (attrs.kind: " +
               (rec[0]->attrs.is_object() && rec[0]->attrs.contains("kind") ? rec[0]->attrs["kind"].dump() : std::string("none")) +
               ")");
  for (int v = 0; v < kVars; ++v)
    if (!rec[v]) fail_input(std::string("input lacks the record '") + kVarNames[v] + "' (make states with gen-input ns)");
  const Record& r0 = *rec[0];
  input_attrs = r0.attrs;
  if (r0.shape.size() != 3) fail_input("record rho must be 3-D [nx, ny, nz], got shape " + shape_string(r0.shape));
  for (int v = 0; v < kVars; ++v) {
    const Record& r = *rec[v];
    if (r.shape != r0.shape)
      fail_input("record " + r.name + " has shape " + shape_string(r.shape) + ", rho " + shape_string(r0.shape));
    if (r.dtype != DType::f8 && r.dtype != DType::f4)
      fail_input("record " + r.name + " must be f8 or f4, got " + dtype_name(r.dtype));
  }
  Params& p = pr.params;
  for (int a = 0; a < 3; ++a) p.n[a] = r0.shape[a];
  attr_triple(r0.attrs, "box", "rho", p.box);
  p.re = attr_number(r0.attrs, "re", "rho");
  p.c = attr_number(r0.attrs, "c", "rho");
  if (!r0.attrs.contains("bc") || !r0.attrs["bc"].is_string()) fail_input("input record rho lacks attrs.bc (a string such as x=periodic,y=noslip,z=freeslip)");
  parse_bc(r0.attrs["bc"].get<std::string>(), p.bc);
  if (r0.attrs.contains("force")) attr_triple(r0.attrs, "force", "rho", p.force);
  if (r0.attrs.contains("kolmogorov") && r0.attrs["kolmogorov"].is_object()) {
    p.kol_amp = r0.attrs["kolmogorov"].value("amplitude", 0.0);
    p.kol_k = r0.attrs["kolmogorov"].value("k", 1);
  }
  read_bodies(records, r0, pr);
  pr.t0 = r0.attrs.contains("t") && r0.attrs["t"].is_number() ? r0.attrs["t"].get<double>() : 0.0;
  pr.step0 = r0.attrs.contains("step") && r0.attrs["step"].is_number_integer() ? r0.attrs["step"].get<long long>() : 0;
  for (int v = 0; v < kVars; ++v) {
    pr.fields[v].resize(rec[v]->size());  // written (first touched) by the conversion, on all threads
    rec[v]->convert_to(pr.fields[v].data());
    rec[v]->payload = HostArray<std::byte>();  // converted: the record's payload goes now
  }
  return pr;
}

// The working set (docs/ns.md "Memory"), checked from the header of record rho
// before any payload is read. CPU: the problem's fields (4 values of 8 bytes per
// point) and the solver's three register sets (4 variables each, with two ghost
// layers per side); the result replaces two of them. Under MPI rank 0 holds the
// whole problem and its block's sets. CUDA: the host holds the problem's and the
// result's fields and one pinned staging field, the device the three register sets.
void require_ns_memory(const RecordHeader& rho, Backend backend, bool fp32, int device) {
  if (rho.shape.size() != 3) return;  // read_state refuses it
  const double s = fp32 ? 4 : 8, points = static_cast<double>(element_count(rho.shape));
  double padded = 1;
  for (std::int64_t n : rho.shape) padded *= static_cast<double>(n + 2 * kGhost);
  const double ghosts = points > 0 ? padded / points : 1;
  const std::string what = "a state of " + shape_string(rho.shape) + " points";
  const par::Group& world = par::world();
  if (backend == Backend::cuda) {
    require_host_memory({what, points, 64 + s * ghosts, "point"});
    require_device_memory(device, {what, points / world.size(), 12 * s * ghosts, "point", 64.0 * 1048576});
  } else if (world.distributed()) {
    require_host_memory({what + " on " + std::to_string(world.size()) + " ranks", points,
                         64 + 4 * s + 12 * s * ghosts / world.size(), "point"});
  } else {
    require_host_memory({what, points, 32 + 12 * s * ghosts, "point"});
  }
}

void require_positive_density(const Problem& pr) {
  const double* rho = pr.fields[0].data();
  const std::int64_t at = first_where(pr.fields[0].size(), [rho](std::int64_t i) { return !(rho[i] > 0); });
  if (at >= 0)
    fail_input("rho" + index_in(Shape{pr.params.n[0], pr.params.n[1], pr.params.n[2]}, static_cast<std::uint64_t>(at)) +
               " is " + value_text(rho[at]) + ": the density must be positive everywhere");
}

std::string unstable_dt_message(const Problem& pr, const RunOptions& o) {
  if (!(o.dt > 0)) return "";
  const Geometry g = make_geometry(pr.params);
  double vmax = 0;  // a maximum: the same whatever the threads' order
  const double *fx = pr.fields[1].data(), *fy = pr.fields[2].data(), *fz = pr.fields[3].data();
  const std::int64_t count = static_cast<std::int64_t>(pr.fields[1].size());
#pragma omp parallel for reduction(max : vmax) schedule(static)
  for (std::int64_t i = 0; i < count; ++i) vmax = std::max(vmax, std::sqrt(fx[i] * fx[i] + fy[i] * fy[i] + fz[i] * fz[i]));
  const double limit = stable_dt(g, o.order, vmax, pr.params.c, pr.params.re);
  if (o.dt <= limit) return "";
  char msg[256];
  std::snprintf(msg, sizeof msg, "--dt %.6g exceeds the explicit stability estimate %.6g (c=%g, max|v|=%g, Re=%g)", o.dt,
                limit, pr.params.c, vmax, pr.params.re);
  return msg;
}

std::string first_non_finite_point(const Result& res) {
  for (int v = 0; v < kVars; ++v) {
    const std::int64_t at = first_non_finite(res.fields[v].data(), res.fields[v].size());
    if (at < 0) continue;
    const std::int64_t nb[3] = {res.block_n[0], res.block_n[1], res.block_n[2]};
    const std::int64_t i = at / (nb[1] * nb[2]), j = at / nb[2] % nb[1], k = at % nb[2];
    return std::string(kVarNames[v]) + "[" + std::to_string(res.block_offset[0] + i) + ", " +
           std::to_string(res.block_offset[1] + j) + ", " + std::to_string(res.block_offset[2] + k) + "] is " +
           value_text(res.fields[v][static_cast<std::size_t>(at)]);
  }
  return "";
}

std::vector<double> diagnostics_table(const Result& res) {
  std::vector<double> diag;
  for (const auto& row : res.diag) diag.insert(diag.end(), row.v, row.v + kDiagColumns);
  return diag;
}

std::vector<double> body_force_total(const std::vector<ForceRow>& forces, std::size_t bodies) {
  std::vector<double> total(forces.size() * 4);
  for (std::size_t r = 0; r < forces.size(); ++r) {
    total[r * 4] = forces[r].t;
    for (int c = 0; c < 3; ++c) {
      double sum = 0;
      for (std::size_t b = 0; b < bodies; ++b) sum += forces[r].f[3 * b + c];
      total[r * 4 + 1 + c] = sum;
    }
  }
  return total;
}

std::vector<double> body_force_of(const std::vector<ForceRow>& forces, std::size_t body) {
  std::vector<double> one(forces.size() * 4);
  for (std::size_t r = 0; r < forces.size(); ++r) {
    one[r * 4] = forces[r].t;
    for (int c = 0; c < 3; ++c) one[r * 4 + 1 + c] = forces[r].f[3 * body + c];
  }
  return one;
}

double flops_per_point_substep(int order) { return order == 4 ? 190 : 120; }

double bytes_per_step(double points, bool fp32) { return 3 * points * bytes_per_point_substep(fp32); }

}  // namespace numpipe::ns
