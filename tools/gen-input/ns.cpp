// gen-input ns: an initial state for ns-step (kind ns.state): rho, vx, vy, vz on an
// nx x ny x nz grid with the model parameters in the attrs. Each field is written in
// pieces (StreamWriter::write_in_pieces), its values computed point by point where a
// piece needs them: memory is a piece, not the four fields.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/progress.hpp"
#include "common/random.hpp"
#include "common/strings.hpp"
#include "generator.hpp"
#include "output.hpp"
#include "kernels/ns/bodies.hpp"
#include "kernels/ns/ns.hpp"
#include "kernels/ns/units.hpp"

namespace numpipe {
namespace {

std::vector<double> parse_list(const std::string& option, const std::string& text) {
  if (text.empty()) fail_input("--" + option + " is empty");
  std::vector<double> out;
  for (const std::string& item : split_fields(text)) {
    if (item.empty()) fail_input("--" + option + " takes numbers separated by commas, got '" + text + "'");
    out.push_back(decimal_number(item, "--" + option));
  }
  return out;
}

// One value for all three axes, or three.
void parse_triple(const std::string& option, const std::string& text, double out[3]) {
  auto v = parse_list(option, text);
  if (v.size() == 1) v = {v[0], v[0], v[0]};
  if (v.size() != 3) fail_input("--" + option + " takes one value or three (x,y,z), got '" + text + "'");
  for (int a = 0; a < 3; ++a) out[a] = v[a];
}

Cli ns_cli() {
  Cli cli({"gen-input ns", "Write an initial state for ns-step", "",
           "  gen-input ns --n 64 --init taylor-green-3d --re 1600 --c 10 | ns-step --steps 100 --cfl 0.5 | inspect\n"
           "  gen-input ns --n 96,64,1 --box 12,8,1 --re 100 --body cylinder:3,4,0.5 --free-stream 1,0,0 -o cyl.nps",
           "the initial state for ns-step"},
          kOutput);
  cli.add("State")("n,size", "Grid points: N for a cube, or NX,NY,NZ (also --n)", cxxopts::value<std::string>()->default_value("32"), "N[,NY,NZ]")(
      "box", "Box lengths LX,LY,LZ (one value: a cube)", cxxopts::value<std::string>()->default_value("6.283185307179586"), "L[,LY,LZ]")(
      "re", "Reynolds number (viscosity 1/Re)", cxxopts::value<double>()->default_value("100"), "RE")(
      "c,sound-speed", "Speed of sound (also --c)", cxxopts::value<double>()->default_value("10"), "C")(
      "bc", "Boundary conditions, e.g. x=periodic,y=noslip,z=freeslip (periodic, noslip, freeslip, noflux); "
            "one name sets all axes; unnamed axes are periodic",
      cxxopts::value<std::string>()->default_value("periodic"), "SPEC")(
      "init", "taylor-green (2-D vortex in x-y), taylor-green-3d, acoustic (plane pulse along x), shear "
              "(double shear layer), random, uniform (at rest, or the free stream); default taylor-green, with "
              "--free-stream uniform",
      cxxopts::value<std::string>(), "KIND")(
      "amplitude", "Velocity amplitude (density amplitude for acoustic); default 1 (acoustic 0.001, random 0.1)",
      cxxopts::value<double>(), "A")(
      "width", "Acoustic: pulse width sigma (default lx/16); shear: layer thickness (default ly/30)", cxxopts::value<double>(), "W")(
      "force", "Constant body force FX,FY,FZ", cxxopts::value<std::string>()->default_value("0,0,0"), "F")(
      "kolmogorov", "Kolmogorov forcing f_x = A sin(2 pi K y / ly): A[,K]", cxxopts::value<std::string>(), "A[,K]")(
      "shift", "Roll the fields by I,J,K cells (periodic translation)", cxxopts::value<std::string>()->default_value("0,0,0"), "I,J,K")(
      "seed", "Random seed (init random)", cxxopts::value<std::uint64_t>()->default_value("1"), "S");
  cli.add("Bodies and free stream")(
      "body", "A body at rest, no-slip (repeatable): cylinder:CX,CY,R (axis along z), sphere:CX,CY,CZ,R or "
              "box:X0,Y0,Z0,X1,Y1,Z1, in the box's coordinates",
      cxxopts::value<std::string>(), "SPEC")(
      "solid", "Bodies from a mask: a stream whose record 'solid' (u1, the grid's shape) is 1 inside a body",
      cxxopts::value<std::string>(), "FILE")(
      "free-stream", "A free stream UX,UY,UZ: the flow starts as it, enters at the upstream face of the axis of its "
                     "largest component (which must be periodic) and leaves through a fringe at the downstream end",
      cxxopts::value<std::string>(), "UX,UY,UZ")(
      "fringe", "The free stream's fringe: its length at the downstream end (default 1/8 of the axis) and its peak "
                "relaxation rate (default: sound crossing it is damped by e^-10)",
      cxxopts::value<std::string>(), "LENGTH[,RATE]");
  return cli;
}

// --n: the grid's points per axis.
void read_grid(const Cli& cli, ns::Params& p) {
  for (const std::string& item : split_fields(cli.get<std::string>("size")))
    if (number_in_any_notation(item) && !decimal_integer(item)) fail_not_decimal_integer("--n", item);  // "0x10", "1.5"
  auto n = parse_list("n", cli.get<std::string>("size"));
  if (n.size() == 1) n = {n[0], n[0], n[0]};
  if (n.size() != 3) fail_input("--n takes N or NX,NY,NZ, got '" + cli.get<std::string>("size") + "'");
  for (int a = 0; a < 3; ++a) {
    if (n[a] != std::floor(n[a]) || n[a] < 1 || n[a] > (1 << 20))
      fail_input("--n: grid sizes must be integers from 1 to 1048576, got '" + cli.get<std::string>("size") + "'");
    p.n[a] = static_cast<long long>(n[a]);
  }
}

// --solid: the mask's record, whose shape is the grid's (and sets it without --n). The
// mask goes to bodies.mask (a byte a point, held whole: the bodies test it point by
// point); the record keeps its attrs, not its payload.
bool read_solid(const Cli& cli, ns::Params& p, ns::Bodies& bodies, Record& solid) {
  if (!cli.has("solid")) return false;
  const std::string path = cli.get<std::string>("solid");
  bool have = false;
  for (Record& r : read_stream(path))
    if (r.name == "solid") {
      if (have) fail_input("--solid " + path + ": more than one record 'solid'");
      solid = std::move(r);
      have = true;
    }
  if (!have) fail_input("--solid " + path + ": no record 'solid' (a u1 array of the grid's shape, 1 inside a body)");
  if (solid.dtype != DType::u1) fail_input("--solid " + path + ": record solid must be u1, got " + dtype_name(solid.dtype));
  if (solid.shape.size() != 3) fail_input("--solid " + path + ": record solid must be 3-D, got shape " + shape_string(solid.shape));
  if (cli.args().count("size") == 0)
    for (int a = 0; a < 3; ++a) p.n[a] = solid.shape[static_cast<std::size_t>(a)];
  else if (solid.shape != Shape{p.n[0], p.n[1], p.n[2]})
    fail_input("--solid " + path + ": record solid has shape " + shape_string(solid.shape) + ", the grid (--n) is " +
               shape_string(Shape{p.n[0], p.n[1], p.n[2]}));
  const std::uint8_t* m = solid.data<std::uint8_t>();
  bodies.mask.assign(m, m + solid.size());
  solid.payload = HostArray<std::byte>();
  return true;
}

// --box, --force, --re, --c, --bc, --kolmogorov; --shift (whole cells) into shift.
void read_model(const Cli& cli, ns::Params& p, long long shift[3]) {
  parse_triple("box", cli.get<std::string>("box"), p.box);
  parse_triple("force", cli.get<std::string>("force"), p.force);
  p.re = cli.get<double>("re");
  p.c = cli.get<double>("sound-speed");
  ns::parse_bc(cli.get<std::string>("bc"), p.bc);
  if (cli.has("kolmogorov")) {
    auto k = parse_list("kolmogorov", cli.get<std::string>("kolmogorov"));
    if (k.size() > 2 || (k.size() == 2 && (k[1] != std::floor(k[1]) || k[1] < 1)))
      fail_input("--kolmogorov takes A[,K] with K a positive integer, got '" + cli.get<std::string>("kolmogorov") + "'");
    p.kol_amp = k[0];
    p.kol_k = k.size() == 2 ? static_cast<int>(k[1]) : 1;
  }
  double s[3];
  parse_triple("shift", cli.get<std::string>("shift"), s);
  for (int a = 0; a < 3; ++a) {
    if (s[a] != std::floor(s[a])) fail_input("--shift takes whole cells, got '" + cli.get<std::string>("shift") + "'");
    shift[a] = static_cast<long long>(s[a]);
  }
}

// --free-stream and --fringe.
void read_free_stream(const Cli& cli, ns::Params& p) {
  if (!cli.has("free-stream")) {
    if (cli.has("fringe")) fail_input("--fringe needs --free-stream");
    return;
  }
  double u[3];
  parse_triple("free-stream", cli.get<std::string>("free-stream"), p.stream);
  for (int a = 0; a < 3; ++a) u[a] = std::fabs(p.stream[a]);
  p.free_stream = true;
  p.fringe_axis = u[0] >= u[1] && u[0] >= u[2] ? 0 : u[1] >= u[2] ? 1 : 2;
  if (u[p.fringe_axis] == 0) fail_input("--free-stream must not be zero, got '" + cli.get<std::string>("free-stream") + "'");
  const double len = p.box[p.fringe_axis];
  p.fringe_length = len / 8;
  if (cli.has("fringe")) {
    auto f = parse_list("fringe", cli.get<std::string>("fringe"));
    if (f.size() > 2) fail_input("--fringe takes LENGTH[,RATE], got '" + cli.get<std::string>("fringe") + "'");
    p.fringe_length = f[0];
    if (!(p.fringe_length > 0 && p.fringe_length < len))
      fail_input("--fringe: the length must be in (0, " + std::to_string(len) + "), the box along the stream, got '" +
                 cli.get<std::string>("fringe") + "'");
    if (f.size() == 2) {
      if (!(f[1] >= 0)) fail_input("--fringe: the rate must be >= 0, got '" + cli.get<std::string>("fringe") + "'");
      p.fringe_strength = f[1];
    }
  }
  if (!cli.has("fringe") || parse_list("fringe", cli.get<std::string>("fringe")).size() < 2)
    p.fringe_strength = ns::default_fringe_strength(p, p.fringe_length);
  if (p.bc[p.fringe_axis] != ns::Bc::periodic)
    fail_input(std::string("--free-stream: the stream's axis ") + "xyz"[p.fringe_axis] +
               " must be periodic (its fringe turns the wrap into an outflow and an inflow), got --bc " + ns::bc_spec(p.bc));
}

// The solver's own checks (ns::validate) of the parameters and the bodies, without the
// four whole fields it also checks (zeros here): the parameters on a grid of at most
// 5 points an axis (its checks of the sizes give the same answers there), the size of
// the whole grid as ns::validate states it, then the bodies on the whole grid.
void validate_params(const ns::Params& p, const ns::Bodies& bodies) {
  ns::Problem probe;
  probe.params = p;
  for (int a = 0; a < 3; ++a) probe.params.n[a] = std::min<long long>(p.n[a], 5);
  const std::size_t count = static_cast<std::size_t>(probe.params.n[0] * probe.params.n[1] * probe.params.n[2]);
  for (auto& f : probe.fields) f.assign(count, 0.0);
  long long total = 1;
  for (int a = 0; a < 3; ++a) {
    total *= p.n[a] + 2 * ns::kGhost;
    if (total > (1LL << 40)) fail_input("grid is too large: " + std::to_string(p.n[0]) + "x" + std::to_string(p.n[1]) + "x" + std::to_string(p.n[2]));
  }
  ns::validate(probe, ns::RunOptions{});
  ns::validate_bodies(p, bodies);
}

// The initial state, point by point: the values at grid point (i, j, k) before --shift
// (0 where a wall pins a variable), and at output point o after it (0 velocity inside
// a body). The analytic states are each point alone; the random one draws its numbers
// in the grid's order, four per point.
struct InitialState {
  ns::Params p;
  ns::Geometry g;
  const ns::Bodies* bodies = nullptr;
  std::string init;
  double amp = 1, width = 1;
  long long shift[3] = {0, 0, 0};
  std::uint64_t seed = 1;

  std::size_t count() const { return static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]); }
  bool drawn() const { return init == "random"; }
  bool shifted() const { return shift[0] || shift[1] || shift[2]; }

  // The analytic states are products of functions of one axis each: tables of them
  // (the same expressions, so the same bits as at each point).
  void make_tables() {
    kind = init == "taylor-green" ? kTaylorGreen : init == "taylor-green-3d" ? kTaylorGreen3d
         : init == "acoustic" ? kAcoustic : init == "shear" ? kShear : kAtRest;
    const double kx = 2 * M_PI / p.box[0], ky = 2 * M_PI / p.box[1], kz = 2 * M_PI / p.box[2];
    auto table = [&](int axis, auto&& f) {
      std::vector<double> t(static_cast<std::size_t>(p.n[axis]));
      for (long long i = 0; i < p.n[axis]; ++i) t[static_cast<std::size_t>(i)] = f(double(i) * g.h[axis]);
      return t;
    };
    sx = table(0, [&](double x) { return std::sin(kx * x); });
    cx = table(0, [&](double x) { return std::cos(kx * x); });
    c2x = table(0, [&](double x) { return std::cos(2 * kx * x); });
    sy = table(1, [&](double y) { return std::sin(ky * y); });
    cy = table(1, [&](double y) { return std::cos(ky * y); });
    c2y = table(1, [&](double y) { return std::cos(2 * ky * y); });
    cz = table(2, [&](double z) { return std::cos(kz * z); });
    c2z = table(2, [&](double z) { return std::cos(2 * kz * z); });
    pulse = table(0, [&](double x) {
      const double d = x - p.box[0] / 2;
      return std::exp(-d * d / (2 * width * width));
    });
    shear = table(1, [&](double y) {
      return y <= p.box[1] / 2 ? amp * std::tanh((y - p.box[1] / 4) / width) : amp * std::tanh((3 * p.box[1] / 4 - y) / width);
    });
  }
  // Variable v at grid point (i, j, k), an analytic state (make_tables first).
  double value(int v, long long i, long long j, long long k) const {
    const double kx = 2 * M_PI / p.box[0], ky = 2 * M_PI / p.box[1];
    const double c2 = p.c * p.c;
    const std::size_t a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j), c = static_cast<std::size_t>(k);
    if (ns::pinned_point(g, int(i), int(j), int(k), v)) return 0.0;
    double x = v == ns::kRho ? 1 : 0;
    if (kind == kTaylorGreen) {
      // Taylor & Green (1937) 2-D vortex, an exact solution of incompressible NS:
      // v = A exp(-nu (kx^2+ky^2) t) (sin kx x cos ky y, -(kx/ky) cos kx x sin ky y),
      // p = A^2/4 (cos 2kx x + (kx/ky)^2 cos 2ky y); rho = 1 + p / c^2.
      if (v == ns::kVx) x = amp * sx[a] * cy[b];
      else if (v == ns::kVy) x = -amp * (kx / ky) * cx[a] * sy[b];
      else if (v == ns::kRho) x = 1 + amp * amp / 4 * (c2x[a] + (kx / ky) * (kx / ky) * c2y[b]) / c2;
    } else if (kind == kTaylorGreen3d) {
      // The 3-D Taylor-Green vortex of the DNS benchmarks (Brachet et al. 1983;
      // DeBonis 2013): v = V0 (sin x cos y cos z, -cos x sin y cos z, 0),
      // p = V0^2/16 (cos 2x + cos 2y)(cos 2z + 2).
      if (v == ns::kVx) x = amp * sx[a] * cy[b] * cz[c];
      else if (v == ns::kVy) x = -amp * cx[a] * sy[b] * cz[c];
      else if (v == ns::kRho) x = 1 + amp * amp / 16 * (c2x[a] + c2y[b]) * (c2z[c] + 2) / c2;
    } else if (kind == kAcoustic) {
      if (v == ns::kRho) x = 1 + amp * pulse[a];
    } else if (kind == kShear) {
      // Double shear layer (Bell, Colella & Glaz 1989): vx = A tanh((y - ly/4)/w) below
      // ly/2, A tanh((3ly/4 - y)/w) above; vy = 0.05 A sin(2 pi x / lx).
      if (v == ns::kVx) x = shear[b];
      else if (v == ns::kVy) x = 0.05 * amp * sx[a];
    }  // uniform: at rest (the free stream is added below)
    if (p.free_stream && v != ns::kRho) x += p.stream[v - 1];
    return x;
  }
  // The random state's four values at grid point (i, j, k): four draws.
  void draw(long long i, long long j, long long k, Rng& rng, double out[4]) const {
    double vx = amp * rng.uniform(-1, 1);
    double vy = amp * rng.uniform(-1, 1);
    double vz = amp * rng.uniform(-1, 1);
    const double rho = 1 + amp * 0.1 * rng.uniform(-1, 1);
    if (p.free_stream) vx += p.stream[0], vy += p.stream[1], vz += p.stream[2];
    const double vals[4] = {rho, vx, vy, vz};
    for (int v = 0; v < ns::kVars; ++v) out[v] = ns::pinned_point(g, int(i), int(j), int(k), v) ? 0.0 : vals[v];
  }
  // Variable v at output point o, an analytic state: from grid point o - shift, wrapped.
  double at_output(int v, std::size_t o) const {
    const long long q = static_cast<long long>(o);
    long long s[3] = {q / p.n[2] / p.n[1], q / p.n[2] % p.n[1], q % p.n[2]};
    for (int a = 0; a < 3; ++a) s[a] = ((s[a] - shift[a]) % p.n[a] + p.n[a]) % p.n[a];
    return after_bodies(o, v, value(v, s[0], s[1], s[2]));
  }
  // --shift: f'(i) = f(i - I), wrapped. The output point of grid point (i, j, k).
  std::size_t output_of(long long i, long long j, long long k) const {
    const long long ii = ((i + shift[0]) % p.n[0] + p.n[0]) % p.n[0];
    const long long jj = ((j + shift[1]) % p.n[1] + p.n[1]) % p.n[1];
    const long long kk = ((k + shift[2]) % p.n[2] + p.n[2]) % p.n[2];
    return static_cast<std::size_t>((ii * p.n[1] + jj) * p.n[2] + kk);
  }
  // Bodies: velocities 0 at the output points inside them (the density as initialised).
  double after_bodies(std::size_t o, int v, double value) const {
    if (v == ns::kRho || !bodies->any()) return value;
    const long long k = static_cast<long long>(o) % p.n[2], j = static_cast<long long>(o) / p.n[2] % p.n[1],
                    i = static_cast<long long>(o) / p.n[2] / p.n[1];
    return ns::solid_node(p, *bodies, i, j, k) ? 0.0 : value;
  }
  // fn(o, values) for every grid point of the random state, in the grid's order (the draws in order).
  template <class Fn>
  void for_draws(Fn&& fn) const {
    Rng rng(seed);
    double vals[4];
    for (long long i = 0; i < p.n[0]; ++i)
      for (long long j = 0; j < p.n[1]; ++j)
        for (long long k = 0; k < p.n[2]; ++k) {
          draw(i, j, k, rng, vals);
          fn(output_of(i, j, k), vals);
        }
  }
  enum Kind { kTaylorGreen, kTaylorGreen3d, kAcoustic, kShear, kAtRest } kind = kAtRest;
  std::vector<double> sx, cx, c2x, sy, cy, c2y, cz, c2z, pulse, shear;
};

// Before anything is written: never a state ns-step refuses, or non-finite values
// (require_finite's words, the first point of each field in the output's order), nor a
// density zero or negative. A pass over the points, nothing held.
void check_state(const InitialState& st, const Shape& shape) {
  std::int64_t first_bad[ns::kVars], first_low = -1;
  double bad_value[ns::kVars], low_value = 0;
  if (st.drawn()) {
    std::fill(first_bad, first_bad + ns::kVars, INT64_MAX);
    first_low = INT64_MAX;
    st.for_draws([&](std::size_t o, const double* vals) {
      const std::int64_t at = static_cast<std::int64_t>(o);
      for (int v = 0; v < ns::kVars; ++v) {
        const double x = st.after_bodies(o, v, vals[v]);
        if (!std::isfinite(x) && at < first_bad[v]) first_bad[v] = at, bad_value[v] = x;
      }
      if (!(vals[ns::kRho] > 0) && at < first_low) first_low = at, low_value = vals[ns::kRho];
    });
    for (std::int64_t& f : first_bad) f = f == INT64_MAX ? -1 : f;
    first_low = first_low == INT64_MAX ? -1 : first_low;
  } else {
    for (int v = 0; v < ns::kVars; ++v) {
      first_bad[v] = first_where(st.count(), [&](std::int64_t o) { return !std::isfinite(st.at_output(v, std::size_t(o))); });
      if (first_bad[v] >= 0) bad_value[v] = st.at_output(v, std::size_t(first_bad[v]));
    }
    first_low = first_where(st.count(), [&](std::int64_t o) { return !(st.at_output(ns::kRho, std::size_t(o)) > 0); });
    if (first_low >= 0) low_value = st.at_output(ns::kRho, std::size_t(first_low));
  }
  const std::string amp = value_text(st.amp);
  for (int v = 0; v < ns::kVars; ++v)
    if (first_bad[v] >= 0)
      throw Error(ExitCode::bad_input, std::string(ns::kVarNames[v]) + index_in(shape, std::uint64_t(first_bad[v])) + " is " +
                                           value_text(bad_value[v]) + ": --amplitude " + amp + " gives values beyond the range of doubles");
  if (first_low >= 0)
    fail_input("rho" + index_in(shape, std::uint64_t(first_low)) + " is " + value_text(low_value) + ": --amplitude " + amp +
               " makes the density zero or negative");
}

// Field v at output points [first, first + n) into dst. Pieces come in order: the
// random state's draws go on from the piece before (rng); shifted, its field is drawn
// whole first (the draws come in the grid's order, the output in the shifted one).
void field_piece(const InitialState& st, int v, std::size_t first, std::size_t n, double* dst, Rng& rng,
                 HostVector<double>& whole) {
  if (st.drawn() && st.shifted()) {
    if (whole.empty()) {
      whole.resize(st.count());  // every point written below
      st.for_draws([&](std::size_t o, const double* vals) { whole[o] = vals[v]; });
    }
    for (std::size_t c = 0; c < n; ++c) dst[c] = st.after_bodies(first + c, v, whole[first + c]);
    return;
  }
  if (st.drawn()) {
    const long long nz = st.p.n[2], ny = st.p.n[1];
    double vals[4];
    for (std::size_t c = 0; c < n; ++c) {
      const long long o = static_cast<long long>(first + c);
      st.draw(o / nz / ny, o / nz % ny, o % nz, rng, vals);
      dst[c] = st.after_bodies(first + c, v, vals[v]);
    }
    return;
  }
  const std::int64_t count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < count; ++c)  // each point alone: the same bits on any thread count
    dst[c] = st.at_output(v, first + static_cast<std::size_t>(c));
}

json state_attrs(const InitialState& st) {
  const ns::Params& p = st.p;
  json attrs = {{"kind", "ns.state"},
                {"n", {p.n[0], p.n[1], p.n[2]}},
                {"box", {p.box[0], p.box[1], p.box[2]}},
                {"bc", ns::bc_spec(p.bc)},
                {"re", p.re},
                {"c", p.c},
                {"force", {p.force[0], p.force[1], p.force[2]}},
                {"kolmogorov", {{"amplitude", p.kol_amp}, {"k", p.kol_k}}},
                {"t", 0.0},
                {"step", 0},
                {"init", st.init},
                {"amplitude", st.amp},
                {"width", st.width},
                {"seed", st.seed},
                {"shift", {st.shift[0], st.shift[1], st.shift[2]}}};
  attrs["grid"] = {{"dims", {"x", "y", "z"}}, {"origin", {0.0, 0.0, 0.0}}, {"spacing", {st.g.h[0], st.g.h[1], st.g.h[2]}}};
  if (st.bodies->any()) {
    json list = json::array();
    for (const ns::Body& b : st.bodies->list) {
      json e = {{"spec", b.spec}};
      switch (b.kind) {
        case ns::Body::Kind::cylinder: e["kind"] = "cylinder", e["center"] = {b.a[0], b.a[1]}, e["radius"] = b.a[2]; break;
        case ns::Body::Kind::sphere: e["kind"] = "sphere", e["center"] = {b.a[0], b.a[1], b.a[2]}, e["radius"] = b.a[3]; break;
        case ns::Body::Kind::box: e["kind"] = "box", e["lo"] = {b.a[0], b.a[1], b.a[2]}, e["hi"] = {b.a[3], b.a[4], b.a[5]}; break;
        case ns::Body::Kind::mask: e["kind"] = "mask"; break;
      }
      list.push_back(e);
    }
    attrs["bodies"] = list;
  }
  if (p.free_stream)
    attrs["free_stream"] = {{"velocity", {p.stream[0], p.stream[1], p.stream[2]}},
                            {"axis", p.fringe_axis},
                            {"fringe_length", p.fringe_length},
                            {"fringe_strength", p.fringe_strength}};
  return attrs;
}

int run_ns(int argc, char** argv) {
  // 1. The options: the grid (or the --solid mask's), the model, the bodies, the free stream.
  Cli cli = ns_cli();
  cli.parse(argc, argv);  // --n and --c work too (Cli reads --n as -n)
  InitialState st;
  ns::Params& p = st.p;
  ns::Bodies bodies;
  Record solid;
  read_grid(cli, p);
  const bool have_solid = read_solid(cli, p, bodies, solid);
  read_model(cli, p, st.shift);
  for (const auto& kv : cli.args().arguments())
    if (kv.key() == "body") bodies.list.push_back(ns::parse_body(kv.value()));
  if (have_solid) {
    ns::Body b;
    b.kind = ns::Body::Kind::mask;
    b.spec = "solid";
    bodies.list.push_back(b);
  }
  read_free_stream(cli, p);
  // 2. The initial state's kind and size, checked as ns-step checks them.
  st.init = cli.has("init") ? cli.get<std::string>("init") : p.free_stream ? "uniform" : "taylor-green";
  if (st.init != "taylor-green" && st.init != "taylor-green-3d" && st.init != "acoustic" && st.init != "shear" &&
      st.init != "random" && st.init != "uniform")
    fail_input("--init must be taylor-green, taylor-green-3d, acoustic, shear, random or uniform, got '" + st.init + "'");
  st.amp = st.init == "acoustic" ? 1e-3 : st.init == "random" ? 0.1 : 1.0;
  if (cli.has("amplitude")) st.amp = cli.get<double>("amplitude");
  if (!std::isfinite(st.amp)) fail_input("--amplitude must be finite");
  st.seed = cli.get<std::uint64_t>("seed");
  validate_params(p, bodies);
  st.width = st.init == "acoustic" ? p.box[0] / 16 : p.box[1] / 30;
  if (cli.has("width")) st.width = cli.get<double>("width");
  if (!(std::isfinite(st.width) && st.width > 0)) fail_input("--width must be positive and finite, got " + std::to_string(st.width));
  // 3. The output (a terminal refused before the work) and the memory: a piece, the
  //    mask, and a whole field for a random state with --shift.
  OutputFile out(cli.output());
  const double points = double(st.count());
  const double per_point = (have_solid ? 1.0 : 0.0) + (st.drawn() && st.shifted() ? 8.0 : 0.0);
  require_host_memory({"a state of " + std::to_string(p.n[0]) + "x" + std::to_string(p.n[1]) + "x" + std::to_string(p.n[2]) +
                           " points (written in pieces of " + format_bytes(double(StreamWriter::kPieceBytes)) + ")",
                       points, per_point, "point", std::min(8 * points, double(StreamWriter::kPieceBytes))});
  st.g = ns::make_geometry(p);
  st.bodies = &bodies;
  st.make_tables();
  const json attrs = cli.stamp(state_attrs(st));
  const Shape shape = {p.n[0], p.n[1], p.n[2]};
  // 4. The values checked, then written field by field (a progress line in MB of the arrays).
  check_state(st, shape);
  StreamWriter w(out);
  w.set_units(ns::units());
  const double mb = 8e-6 * points;
  Progress progress("gen-input", "MB", static_cast<std::uint64_t>(std::llround(ns::kVars * mb)), cli.quiet());
  for (int v = 0; v < ns::kVars; ++v) {
    Rng rng(st.seed);
    HostVector<double> whole;
    w.write_in_pieces(ns::kVarNames[v], DType::f8, shape, attrs, [&](std::uint64_t offset, std::size_t bytes, void* dst) {
      field_piece(st, v, static_cast<std::size_t>(offset / 8), bytes / 8, static_cast<double*>(dst), rng, whole);
    });
    progress.update(static_cast<std::uint64_t>(std::llround((v + 1) * mb)));
  }
  progress.finish();
  if (have_solid) {
    json sattrs = {{"kind", "ns.solid"}, {"grid", attrs["grid"]}};
    w.write("solid", DType::u1, shape, bodies.mask.data(), cli.stamp(sattrs, solid.attrs));
  }
  return finish_stream(w, out);
}

const RegisterGenerator reg{{"ns", "3-D Navier-Stokes initial state for ns-step (Taylor-Green, acoustic, shear, random)", run_ns}};

}  // namespace
}  // namespace numpipe
