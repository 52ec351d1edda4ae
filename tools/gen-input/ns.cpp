// gen-input ns: an initial state for ns-step (kind ns.state): rho, vx, vy, vz on an
// nx x ny x nz grid with the model parameters in the attrs.
#include <cmath>
#include <sstream>
#include <vector>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/progress.hpp"
#include "common/random.hpp"
#include "generator.hpp"
#include "kernels/ns/bodies.hpp"
#include "kernels/ns/ns.hpp"
#include "kernels/ns/units.hpp"

namespace numpipe {
namespace {

std::vector<double> parse_list(const std::string& option, const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end || !std::isfinite(v)) fail_input("--" + option + " takes numbers separated by commas, got '" + text + "'");
    out.push_back(v);
  }
  if (out.empty()) fail_input("--" + option + " is empty");
  return out;
}

// One value for all three axes, or three.
void parse_triple(const std::string& option, const std::string& text, double out[3]) {
  auto v = parse_list(option, text);
  if (v.size() == 1) v = {v[0], v[0], v[0]};
  if (v.size() != 3) fail_input("--" + option + " takes one value or three (x,y,z), got '" + text + "'");
  for (int a = 0; a < 3; ++a) out[a] = v[a];
}

int run_ns(int argc, char** argv) {
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
  cli.parse(argc, argv);  // --n and --c work too (Cli reads --n as -n)

  ns::Params p;
  {
    auto n = parse_list("n", cli.get<std::string>("size"));
    if (n.size() == 1) n = {n[0], n[0], n[0]};
    if (n.size() != 3) fail_input("--n takes N or NX,NY,NZ, got '" + cli.get<std::string>("size") + "'");
    for (int a = 0; a < 3; ++a) {
      if (n[a] != std::floor(n[a]) || n[a] < 1 || n[a] > (1 << 20))
        fail_input("--n: grid sizes must be integers from 1 to 1048576, got '" + cli.get<std::string>("size") + "'");
      p.n[a] = static_cast<long long>(n[a]);
    }
  }
  // --solid: the mask's record, whose shape is the grid's (and sets it without --n)
  Record solid;
  bool have_solid = false;
  if (cli.has("solid")) {
    const std::string path = cli.get<std::string>("solid");
    for (Record& r : read_stream(path))
      if (r.name == "solid") {
        if (have_solid) fail_input("--solid " + path + ": more than one record 'solid'");
        solid = std::move(r);
        have_solid = true;
      }
    if (!have_solid) fail_input("--solid " + path + ": no record 'solid' (a u1 array of the grid's shape, 1 inside a body)");
    if (solid.dtype != DType::u1) fail_input("--solid " + path + ": record solid must be u1, got " + dtype_name(solid.dtype));
    if (solid.shape.size() != 3) fail_input("--solid " + path + ": record solid must be 3-D, got shape " + shape_string(solid.shape));
    if (cli.args().count("size") == 0)
      for (int a = 0; a < 3; ++a) p.n[a] = solid.shape[static_cast<std::size_t>(a)];
    else if (solid.shape != Shape{p.n[0], p.n[1], p.n[2]})
      fail_input("--solid " + path + ": record solid has shape " + shape_string(solid.shape) + ", the grid (--n) is " +
                 shape_string(Shape{p.n[0], p.n[1], p.n[2]}));
  }
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
  std::vector<double> shift_d;
  {
    double s[3];
    parse_triple("shift", cli.get<std::string>("shift"), s);
    shift_d.assign(s, s + 3);
    for (double v : shift_d)
      if (v != std::floor(v)) fail_input("--shift takes whole cells, got '" + cli.get<std::string>("shift") + "'");
  }
  ns::Bodies bodies;
  for (const auto& kv : cli.args().arguments())
    if (kv.key() == "body") bodies.list.push_back(ns::parse_body(kv.value()));
  if (have_solid) {
    const std::uint8_t* m = solid.data<std::uint8_t>();
    bodies.mask.assign(m, m + solid.size());
    ns::Body b;
    b.kind = ns::Body::Kind::mask;
    b.spec = "solid";
    bodies.list.push_back(b);
  }
  if (cli.has("free-stream")) {
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
  } else if (cli.has("fringe")) {
    fail_input("--fringe needs --free-stream");
  }
  const std::string init = cli.has("init") ? cli.get<std::string>("init") : p.free_stream ? "uniform" : "taylor-green";
  if (init != "taylor-green" && init != "taylor-green-3d" && init != "acoustic" && init != "shear" && init != "random" &&
      init != "uniform")
    fail_input("--init must be taylor-green, taylor-green-3d, acoustic, shear, random or uniform, got '" + init + "'");
  double amp = init == "acoustic" ? 1e-3 : init == "random" ? 0.1 : 1.0;
  if (cli.has("amplitude")) amp = cli.get<double>("amplitude");
  if (!std::isfinite(amp)) fail_input("--amplitude must be finite");
  const std::uint64_t seed = cli.get<std::uint64_t>("seed");

  // Validate the parameters through the solver's own checks (empty fields of the right size).
  ns::Problem pr;
  pr.params = p;
  const std::size_t count = static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]);
  {
    ns::Problem probe;
    probe.params = p;
    probe.bodies = bodies;
    for (auto& f : probe.fields) {
      f.resize(count);
      parallel_fill(f.data(), count, 0.0);
    }
    ns::validate(probe, ns::RunOptions{});
  }
  double width = init == "acoustic" ? p.box[0] / 16 : p.box[1] / 30;
  if (cli.has("width")) width = cli.get<double>("width");
  if (!(std::isfinite(width) && width > 0)) fail_input("--width must be positive and finite, got " + std::to_string(width));

  OutputFile out(cli.output());  // refuse a terminal before the work
  // the four fields, and one more while --shift rolls them
  require_host_memory({"a state of " + std::to_string(p.n[0]) + "x" + std::to_string(p.n[1]) + "x" + std::to_string(p.n[2]) +
                           " points", double(count), 40, "point"});
  const ns::Geometry g = ns::make_geometry(p);
  for (auto& f : pr.fields) f.resize(count);  // every point is written below
  const double kx = 2 * M_PI / p.box[0], ky = 2 * M_PI / p.box[1], kz = 2 * M_PI / p.box[2];
  const double c2 = p.c * p.c;
  Rng rng(seed);
  // The analytic states on all threads (each point alone: the same bits); the random
  // one draws its numbers in order, on one.
  const bool drawn = init == "random";
#pragma omp parallel for schedule(static) if (!drawn)
  for (long long i = 0; i < p.n[0]; ++i)
    for (long long j = 0; j < p.n[1]; ++j)
      for (long long k = 0; k < p.n[2]; ++k) {
        const std::size_t s = static_cast<std::size_t>((i * p.n[1] + j) * p.n[2] + k);
        const double x = double(i) * g.h[0], y = double(j) * g.h[1], z = double(k) * g.h[2];
        double rho = 1, vx = 0, vy = 0, vz = 0;
        if (init == "taylor-green") {
          // Taylor & Green (1937) 2-D vortex, an exact solution of incompressible NS:
          // v = A exp(-nu (kx^2+ky^2) t) (sin kx x cos ky y, -(kx/ky) cos kx x sin ky y),
          // p = A^2/4 (cos 2kx x + (kx/ky)^2 cos 2ky y); rho = 1 + p / c^2.
          vx = amp * std::sin(kx * x) * std::cos(ky * y);
          vy = -amp * (kx / ky) * std::cos(kx * x) * std::sin(ky * y);
          rho = 1 + amp * amp / 4 * (std::cos(2 * kx * x) + (kx / ky) * (kx / ky) * std::cos(2 * ky * y)) / c2;
        } else if (init == "taylor-green-3d") {
          // The 3-D Taylor-Green vortex of the DNS benchmarks (Brachet et al. 1983;
          // DeBonis 2013): v = V0 (sin x cos y cos z, -cos x sin y cos z, 0),
          // p = V0^2/16 (cos 2x + cos 2y)(cos 2z + 2).
          vx = amp * std::sin(kx * x) * std::cos(ky * y) * std::cos(kz * z);
          vy = -amp * std::cos(kx * x) * std::sin(ky * y) * std::cos(kz * z);
          rho = 1 + amp * amp / 16 * (std::cos(2 * kx * x) + std::cos(2 * ky * y)) * (std::cos(2 * kz * z) + 2) / c2;
        } else if (init == "acoustic") {
          const double d = x - p.box[0] / 2;
          rho = 1 + amp * std::exp(-d * d / (2 * width * width));
        } else if (init == "shear") {
          // Double shear layer (Bell, Colella & Glaz 1989): vx = A tanh((y - ly/4)/w) below
          // ly/2, A tanh((3ly/4 - y)/w) above; vy = 0.05 A sin(2 pi x / lx).
          vx = y <= p.box[1] / 2 ? amp * std::tanh((y - p.box[1] / 4) / width) : amp * std::tanh((3 * p.box[1] / 4 - y) / width);
          vy = 0.05 * amp * std::sin(kx * x);
        } else if (init == "uniform") {
          // at rest (the free stream is added below)
        } else {
          vx = amp * rng.uniform(-1, 1);
          vy = amp * rng.uniform(-1, 1);
          vz = amp * rng.uniform(-1, 1);
          rho = 1 + amp * 0.1 * rng.uniform(-1, 1);
        }
        if (p.free_stream) vx += p.stream[0], vy += p.stream[1], vz += p.stream[2];
        const double vals[4] = {rho, vx, vy, vz};
        for (int v = 0; v < ns::kVars; ++v)
          pr.fields[v][s] = ns::pinned_point(g, int(i), int(j), int(k), v) ? 0.0 : vals[v];
      }
  // --shift: f'(i) = f(i - I), wrapped.
  const long long sh[3] = {static_cast<long long>(shift_d[0]), static_cast<long long>(shift_d[1]), static_cast<long long>(shift_d[2])};
  if (sh[0] || sh[1] || sh[2]) {
    for (auto& f : pr.fields) {
      HostVector<double> rolled(count);  // every value written below
      for (long long i = 0; i < p.n[0]; ++i)
        for (long long j = 0; j < p.n[1]; ++j)
          for (long long k = 0; k < p.n[2]; ++k) {
            const long long ii = ((i + sh[0]) % p.n[0] + p.n[0]) % p.n[0];
            const long long jj = ((j + sh[1]) % p.n[1] + p.n[1]) % p.n[1];
            const long long kk = ((k + sh[2]) % p.n[2] + p.n[2]) % p.n[2];
            rolled[static_cast<std::size_t>((ii * p.n[1] + jj) * p.n[2] + kk)] = f[static_cast<std::size_t>((i * p.n[1] + j) * p.n[2] + k)];
          }
      f.swap(rolled);
    }
  }

  // bodies: nodes inside are at rest (the density as initialised)
  if (bodies.any())
    for (long long i = 0; i < p.n[0]; ++i)
      for (long long j = 0; j < p.n[1]; ++j)
        for (long long k = 0; k < p.n[2]; ++k)
          if (ns::solid_node(p, bodies, i, j, k))
            for (int v = ns::kVx; v < ns::kVars; ++v) pr.fields[v][static_cast<std::size_t>((i * p.n[1] + j) * p.n[2] + k)] = 0;

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
                {"init", init},
                {"amplitude", amp},
                {"width", width},
                {"seed", seed},
                {"shift", {sh[0], sh[1], sh[2]}}};
  attrs["grid"] = {{"dims", {"x", "y", "z"}}, {"origin", {0.0, 0.0, 0.0}}, {"spacing", {g.h[0], g.h[1], g.h[2]}}};
  if (bodies.any()) {
    json list = json::array();
    for (const ns::Body& b : bodies.list) {
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
  attrs = cli.stamp(attrs);
  const Shape shape = {p.n[0], p.n[1], p.n[2]};
  for (int v = 0; v < ns::kVars; ++v)  // never a state ns-step refuses, or non-finite values
    require_finite(ExitCode::bad_input, ns::kVarNames[v], shape, pr.fields[v].data(),
                   "--amplitude " + value_text(amp) + " gives values beyond the range of doubles");
  for (std::size_t i = 0; i < pr.fields[0].size(); ++i)
    if (!(pr.fields[0][i] > 0))
      fail_input("rho" + index_in(shape, i) + " is " + value_text(pr.fields[0][i]) + ": --amplitude " + value_text(amp) +
                 " makes the density zero or negative");
  StreamWriter w(out);
  w.set_units(ns::units());
  // Large states take seconds to compress and write: a progress line in MB of the arrays.
  const double mb = 8e-6 * static_cast<double>(pr.fields[0].size());
  Progress progress("gen-input", "MB", static_cast<std::uint64_t>(std::llround(ns::kVars * mb)), cli.quiet());
  for (int v = 0; v < ns::kVars; ++v) {
    w.write<double>(ns::kVarNames[v], shape, pr.fields[v].data(), attrs);
    progress.update(static_cast<std::uint64_t>(std::llround((v + 1) * mb)));
  }
  progress.finish();
  if (have_solid) {
    json sattrs = {{"kind", "ns.solid"}, {"grid", attrs["grid"]}};
    w.write("solid", DType::u1, shape, solid.payload.data(), cli.stamp(sattrs, solid.attrs));
  }
  w.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"ns", "3-D Navier-Stokes initial state for ns-step (Taylor-Green, acoustic, shear, random)", run_ns}};

}  // namespace
}  // namespace numpipe
