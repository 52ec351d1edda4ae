// gen-input fluid: an initial state for fluid-step (kind "fluid.state").
//   react   all zeros; the react forcing injects on the first step
//   empty   all zeros, no forcing (the default for a scene of the user's own)
//   vortex  a Gaussian vortex at the centre and a density disc beside it
//   plume   a density disc near the bottom moving up
//   random  uniform random density in [0, 1) and velocities in [-0.5, 0.5)
// Scenes other than react carry forcing "none" (react's zeroing, no injection).
// A scene of the user's own: NX x NY cells (--n NX,NY), the box's length, its
// sides (--bc, --inflow), obstacles (--obstacle), emitters (--emit) and initial
// values in shapes (--set); docs/fluid.md "Scenes".
#include <cmath>

#include "common/cli.hpp"
#include "common/memory.hpp"
#include "common/strings.hpp"
#include "common/random.hpp"
#include "generator.hpp"
#include "kernels/fluid/scene.hpp"
#include "kernels/fluid/state_io.hpp"
#include "kernels/fluid/units.hpp"

namespace numpipe {
namespace {

using fluid::Scene;
using fluid::SceneFields;

template <class T>
SceneFields<T> make_scene(const std::string& scene, int nx, int ny, std::uint64_t seed) {
  SceneFields<T> f(nx, ny);
  const int w = nx + 2;
  if (scene == "react" || scene == "empty") return f;
  Rng rng(seed);
  for (int j = 1; j <= ny; ++j)
    for (int i = 1; i <= nx; ++i) {
      const double x = (i - 0.5) / nx, y = (j - 0.5) / ny;  // cell centre in [0, 1]^2
      double d = 0, u = 0, v = 0;
      if (scene == "vortex") {
        const double rx = x - 0.5, ry = y - 0.5, g = std::exp(-(rx * rx + ry * ry) / 0.02);
        u = -2.0 * ry * g;  // solid-body core, Gaussian envelope: max speed about 0.2
        v = 2.0 * rx * g;
        const double dx = x - 0.65, dy = y - 0.5;
        d = dx * dx + dy * dy < 0.01 ? 1.0 : 0.0;
      } else if (scene == "plume") {
        const double dx = x - 0.5, dy = y - 0.15;
        if (dx * dx + dy * dy < 0.01) {
          d = 1.0;
          v = 0.5;
        }
      } else {  // random
        d = rng.uniform();
        u = rng.uniform(-0.5, 0.5);
        v = rng.uniform(-0.5, 0.5);
      }
      f.d[fluid::ix(i, j, w)] = static_cast<T>(d);
      f.u[fluid::ix(i, j, w)] = static_cast<T>(u);
      f.v[fluid::ix(i, j, w)] = static_cast<T>(v);
    }
  return f;
}

double to_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  fail_input(what + ": expected a finite number, got '" + text + "'");
}


// A shape in the box's coordinates (x right, y up, from the box's lower left
// corner, in the units of --length): which cells have their centre inside.
struct Shape2 {
  enum { circle, box } kind;
  double a[4];
};
Shape2 parse_shape(const std::string& spec, const std::string& option) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::vector<std::string> parts = colon == std::string::npos ? std::vector<std::string>{} : split_fields(spec.substr(colon + 1), ',');
  Shape2 s{};
  const std::string what = option + " '" + spec + "'";
  if (kind == "circle" && parts.size() == 3) {
    s.kind = Shape2::circle;
  } else if (kind == "box" && parts.size() == 4) {
    s.kind = Shape2::box;
  } else {
    fail_input(option + ": a shape is circle:X,Y,R or box:X0,Y0,X1,Y1" + (option == "--obstacle" ? " or png:FILE" : "") +
               ", got '" + spec + "'");
  }
  for (std::size_t k = 0; k < parts.size(); ++k) s.a[k] = to_number(parts[k], what);
  if (s.kind == Shape2::circle && !(s.a[2] > 0)) fail_input(what + ": the radius must be > 0");
  if (s.kind == Shape2::box && !(s.a[2] > s.a[0] && s.a[3] > s.a[1])) fail_input(what + ": need X0 < X1 and Y0 < Y1");
  return s;
}
// Calls fn(flat index) for every interior cell whose centre lies in the shape.
template <class F>
int for_cells(const Shape2& s, const Scene& sc, F&& fn) {
  const double h = sc.length / sc.nx;
  int count = 0;
  for (int j = 1; j <= sc.ny; ++j)
    for (int i = 1; i <= sc.nx; ++i) {
      const double x = (i - 0.5) * h, y = (j - 0.5) * h;
      bool in;
      if (s.kind == Shape2::circle) in = (x - s.a[0]) * (x - s.a[0]) + (y - s.a[1]) * (y - s.a[1]) <= s.a[2] * s.a[2];
      else in = x >= s.a[0] && x <= s.a[2] && y >= s.a[1] && y <= s.a[3];
      if (in) {
        fn(static_cast<std::size_t>(fluid::ix(i, j, sc.nx + 2)));
        ++count;
      }
    }
  return count;
}

// FIELD=VALUE@SHAPE (--emit, --set).
struct Placed {
  std::string field;
  double value;
  Shape2 shape;
};
Placed parse_placed(const std::string& spec, const std::string& option) {
  const auto eq = spec.find('='), at = spec.find('@');
  if (eq == std::string::npos || at == std::string::npos || at < eq)
    fail_input(option + ": expected FIELD=VALUE@SHAPE (FIELD d, u, v or T), got '" + spec + "'");
  Placed p;
  p.field = spec.substr(0, eq);
  if (p.field != "d" && p.field != "u" && p.field != "v" && p.field != "T")
    fail_input(option + ": FIELD must be d, u, v or T, got '" + p.field + "' in '" + spec + "'");
  p.value = to_number(spec.substr(eq + 1, at - eq - 1), option + " '" + spec + "'");
  p.shape = parse_shape(spec.substr(at + 1), option);
  return p;
}

std::vector<std::string> all_values(const Cli& cli, const std::string& option) {
  std::vector<std::string> out;
  for (const auto& kv : cli.args().arguments())
    if (kv.key() == option) out.push_back(kv.value());
  return out;
}

template <class T>
void write_state(const Cli& cli, const std::string& scene_name, const Scene& sc, std::uint64_t seed,
                 const json& attrs_in, OutputFile& out) {
  SceneFields<T> f = make_scene<T>(scene_name, sc.nx, sc.ny, seed);
  const std::size_t cells = f.cells();
  // obstacles
  for (const std::string& spec : all_values(cli, "obstacle")) {
    if (f.solid.empty()) f.solid.assign(cells, 0);
    if (spec.rfind("png:", 0) == 0) {
      const std::vector<std::uint8_t> m = fluid::read_png_mask(spec.substr(4), sc.nx, sc.ny);
      for (std::size_t i = 0; i < cells; ++i) f.solid[i] |= m[i];
      continue;
    }
    const Shape2 s = parse_shape(spec, "--obstacle");
    if (for_cells(s, sc, [&](std::size_t c) { f.solid[c] = 1; }) == 0)
      fail_input("--obstacle '" + spec + "' covers no cell's centre (cell size " + std::to_string(sc.length / sc.nx) + ")");
  }
  auto field = [&](const std::string& name, bool source) -> fluid::FieldVector<T>& {
    if (name == "T" && f.t.empty()) f.t.assign(cells, T(0));
    fluid::FieldVector<T>& a = source ? (name == "d" ? f.src_d : name == "u" ? f.src_u : name == "v" ? f.src_v : f.src_t)
                               : (name == "d" ? f.d : name == "u" ? f.u : name == "v" ? f.v : f.t);
    if (a.empty()) a.assign(cells, T(0));
    return a;
  };
  for (const std::string& spec : all_values(cli, "set")) {
    const Placed p = parse_placed(spec, "--set");
    fluid::FieldVector<T>& a = field(p.field, false);
    if (for_cells(p.shape, sc, [&](std::size_t c) { a[c] = static_cast<T>(p.value); }) == 0)
      fail_input("--set '" + spec + "' covers no cell's centre");
  }
  for (const std::string& spec : all_values(cli, "emit")) {
    const Placed p = parse_placed(spec, "--emit");
    fluid::FieldVector<T>& a = field(p.field, true);
    if (for_cells(p.shape, sc, [&](std::size_t c) { a[c] = a[c] + static_cast<T>(p.value); }) == 0)
      fail_input("--emit '" + spec + "' covers no cell's centre");
  }
  if (!f.solid.empty())  // the fluid fields are 0 inside obstacles
    for (std::size_t c = 0; c < cells; ++c)
      if (f.solid[c])
        for (auto* a : {&f.d, &f.u, &f.v, &f.t})
          if (!a->empty()) (*a)[c] = T(0);
  fluid::validate_scene(sc, f);
  fluid::scene_set_bnd(sc, fluid::kSceneScalar, f.d.data());
  fluid::scene_set_bnd(sc, fluid::kSceneU, f.u.data());
  fluid::scene_set_bnd(sc, fluid::kSceneV, f.v.data());
  if (!f.t.empty()) fluid::scene_set_bnd(sc, fluid::kSceneScalar, f.t.data());
  StreamWriter writer(out);
  writer.set_units(fluid::units());
  fluid::write_scene_fields(writer, f, cli.stamp(attrs_in), "", true);
  writer.finish();
}

int run_fluid(int argc, char** argv) {
  Cli cli({"gen-input fluid", "Write an initial state or scene for fluid-step", "",
           "  gen-input fluid --n 512 --scene react | fluid-step --steps 100 | render -o d.png\n"
           "  gen-input fluid --n 256,64 --length 4 --inflow left:1 --obstacle circle:1,0.5,0.1 | fluid-step --steps 50 -o tunnel.nps",
           "the initial state or scene for fluid-step",
           "Accepted for symmetry with the other tools (gen-input fluid shows no progress line)"},
          kOutput);
  cli.add("Fluid")("n,size", "Interior cells: N (N x N) or NX,NY, each >= 16 (arrays are (NY+2) x (NX+2))",
                   cxxopts::value<std::string>()->default_value("256"), "N")(
      "scene", "react (zeros, the react forcing; the default), empty (zeros, no forcing; the default with --bc, "
               "--inflow, --obstacle, --emit or --set), vortex, plume or random",
      cxxopts::value<std::string>(), "NAME")(
      "seed", "Random seed (scene random)", cxxopts::value<std::uint64_t>()->default_value("1"), "S")(
      "force", "react forcing: velocity scale", cxxopts::value<double>()->default_value("5"), "F")(
      "source", "react forcing: density scale", cxxopts::value<double>()->default_value("100"), "S")(
      "length", "The box's length along x (the cell size is LENGTH / NX)", cxxopts::value<double>()->default_value("1"), "L")(
      "bc", "Sides: SIDE=KIND[,...], SIDE left, right, bottom, top, x, y or all, KIND closed, open or periodic",
      cxxopts::value<std::string>(), "SPEC")(
      "inflow", "A wind tunnel: fluid enters at SIDE at SPEED (the opposite side opens unless --bc names it)",
      cxxopts::value<std::string>(), "SIDE:SPEED")(
      "obstacle", "Solid cells: circle:X,Y,R, box:X0,Y0,X1,Y1 or png:FILE (dark pixels); repeatable",
      cxxopts::value<std::string>(), "SHAPE")(
      "emit", "An emitter: FIELD=RATE@SHAPE adds RATE per unit time to d, u, v or T in the shape; repeatable",
      cxxopts::value<std::string>(), "SPEC")(
      "set", "Initial values: FIELD=VALUE@SHAPE sets d, u, v or T in the shape; repeatable",
      cxxopts::value<std::string>(), "SPEC")(
      "precision", "fp32 (f4 arrays) or fp64 (f8)", cxxopts::value<std::string>()->default_value("fp32"), "P");
  cli.parse(argc, argv);  // --n N works too (Cli reads --n as -n)
  const std::string size = cli.get<std::string>("size");
  const std::vector<std::string> dims = split_fields(size, ',');
  if (dims.size() > 2) fail_input("--n must be N or NX,NY, got '" + size + "'");
  int n[2] = {0, 0};
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const double x = to_number(dims[k], "--n");
    if (x != std::floor(x) || x < fluid::kMinN || x > fluid::kMaxN)
      fail_input("--n must be in [" + std::to_string(fluid::kMinN) + ", " + std::to_string(fluid::kMaxN) + "], got " + dims[k]);
    n[k] = static_cast<int>(x);
  }
  Scene sc;
  sc.nx = n[0];
  sc.ny = dims.size() == 2 ? n[1] : n[0];
  sc.length = cli.get<double>("length");
  bool set[4] = {false, false, false, false};
  if (cli.has("bc")) fluid::apply_bc_spec(sc, cli.get<std::string>("bc"), set);
  if (cli.has("inflow")) fluid::apply_inflow_spec(sc, cli.get<std::string>("inflow"), set);
  fluid::check_sides(sc);
  const bool user_scene = cli.has("bc") || cli.has("inflow") || cli.has("obstacle") || cli.has("emit") || cli.has("set");
  const std::string scene = cli.has("scene") ? cli.get<std::string>("scene") : user_scene ? "empty" : "react";
  if (scene != "react" && scene != "empty" && scene != "vortex" && scene != "plume" && scene != "random")
    fail_input("--scene must be react, empty, vortex, plume or random, got '" + scene + "'");
  const std::string precision = cli.get<std::string>("precision");
  if (precision != "fp32" && precision != "fp64") fail_input("--precision must be fp32 or fp64, got '" + precision + "'");
  const double force = cli.get<double>("force"), source = cli.get<double>("source");
  if (!std::isfinite(force) || !std::isfinite(source)) fail_input("--force and --source must be finite");
  const std::uint64_t seed = cli.get<std::uint64_t>("seed");
  json attrs = {{"kind", "fluid.state"},
                {"scene", scene},
                {"seed", seed},
                {"step", 0},
                {"time", 0.0},
                {"layout", "[y][x], (ny+2) x (nx+2), boundary layer included"},
                {"grid", fluid::grid_attrs(sc)},
                {"forcing", {{"type", scene == "react" ? "react" : "none"}, {"force", force}, {"source", source}}}};
  if (sc.nx == sc.ny) attrs["n"] = sc.nx;
  attrs["nx"] = sc.nx;
  attrs["ny"] = sc.ny;
  if (sc.length != 1.0 || !sc.all_closed()) attrs["box"] = fluid::scene_attrs(sc);
  OutputFile out(cli.output());
  // the state, made before it is written: up to 11 fields (d u v d0 u0 v0, heat, sources) and a mask
  const double cells = double(sc.nx + 2) * double(sc.ny + 2);
  require_host_memory({"a grid of " + std::to_string(sc.nx) + " x " + std::to_string(sc.ny) + " cells", cells,
                       11.0 * (precision == "fp32" ? 4 : 8) + 1, "cell"});
  if (precision == "fp32") write_state<float>(cli, scene, sc, seed, attrs, out);
  else write_state<double>(cli, scene, sc, seed, attrs, out);
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"fluid", "stable-fluids state or scene for fluid-step: react, empty, vortex, plume or random; obstacles, emitters, sides", run_fluid}};

}  // namespace
}  // namespace numpipe
