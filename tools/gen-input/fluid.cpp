// gen-input fluid: an initial state for fluid-step (kind "fluid.state").
//   react   all zeros; the seed's react forcing injects on the first step
//   vortex  a Gaussian vortex at the centre and a density disc beside it
//   plume   a density disc near the bottom moving up
//   random  uniform random density in [0, 1) and velocities in [-0.5, 0.5)
// Scenes other than react carry forcing "none" (react's zeroing, no injection).
#include <cmath>

#include "common/cli.hpp"
#include "common/random.hpp"
#include "generator.hpp"
#include "kernels/fluid/state_io.hpp"

namespace numpipe {
namespace {

using fluid::Fields;

template <class T>
void set_bnd(int b, std::vector<T>& x, int n) {
  const int w = n + 2;
  for (int i = 1; i <= n; ++i) {
    x[fluid::ix(0, i, w)] = b == fluid::kU ? -x[fluid::ix(1, i, w)] : x[fluid::ix(1, i, w)];
    x[fluid::ix(n + 1, i, w)] = b == fluid::kU ? -x[fluid::ix(n, i, w)] : x[fluid::ix(n, i, w)];
    x[fluid::ix(i, 0, w)] = b == fluid::kV ? -x[fluid::ix(i, 1, w)] : x[fluid::ix(i, 1, w)];
    x[fluid::ix(i, n + 1, w)] = b == fluid::kV ? -x[fluid::ix(i, n, w)] : x[fluid::ix(i, n, w)];
  }
  x[fluid::ix(0, 0, w)] = fluid::corner(x[fluid::ix(1, 0, w)], x[fluid::ix(0, 1, w)]);
  x[fluid::ix(n + 1, 0, w)] = fluid::corner(x[fluid::ix(n, 0, w)], x[fluid::ix(n + 1, 1, w)]);
  x[fluid::ix(0, n + 1, w)] = fluid::corner(x[fluid::ix(1, n + 1, w)], x[fluid::ix(0, n, w)]);
  x[fluid::ix(n + 1, n + 1, w)] = fluid::corner(x[fluid::ix(n, n + 1, w)], x[fluid::ix(n + 1, n, w)]);
}

template <class T>
Fields<T> make_scene(const std::string& scene, int n, std::uint64_t seed) {
  Fields<T> f(n);
  const int w = n + 2;
  if (scene == "react") return f;
  Rng rng(seed);
  for (int j = 1; j <= n; ++j)
    for (int i = 1; i <= n; ++i) {
      const double x = (i - 0.5) / n, y = (j - 0.5) / n;  // cell centre in [0, 1]^2
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
  set_bnd(fluid::kScalar, f.d, n);
  set_bnd(fluid::kU, f.u, n);
  set_bnd(fluid::kV, f.v, n);
  return f;
}

int run_fluid(int argc, char** argv) {
  Cli cli({"gen-input fluid", "Write an initial state for fluid-step", "",
           "  gen-input fluid --n 512 --scene react | fluid-step --steps 100 | render -o d.png",
           "the initial state for fluid-step",
           "Accepted for symmetry with the other tools (gen-input fluid shows no progress line)"},
          kOutput);
  cli.add("Fluid")("n,size", "Interior cells per side (arrays are (n+2) x (n+2)), n >= 16; --n N works too",
                   cxxopts::value<int>()->default_value("256"), "N")(
      "scene", "react (zeros, and the react forcing), vortex, plume or random",
      cxxopts::value<std::string>()->default_value("react"), "NAME")(
      "seed", "Random seed (scene random)", cxxopts::value<std::uint64_t>()->default_value("1"), "S")(
      "force", "react forcing: velocity scale", cxxopts::value<double>()->default_value("5"), "F")(
      "source", "react forcing: density scale", cxxopts::value<double>()->default_value("100"), "S")(
      "precision", "fp32 (f4 arrays) or fp64 (f8)", cxxopts::value<std::string>()->default_value("fp32"), "P");
  cli.parse(argc, argv);  // --n N works too (Cli reads --n as -n)
  const int n = cli.get<int>("size");
  if (n < fluid::kMinN || n > fluid::kMaxN)
    fail_input("--n must be in [" + std::to_string(fluid::kMinN) + ", " + std::to_string(fluid::kMaxN) + "], got " + std::to_string(n));
  const std::string scene = cli.get<std::string>("scene");
  if (scene != "react" && scene != "vortex" && scene != "plume" && scene != "random")
    fail_input("--scene must be react, vortex, plume or random, got '" + scene + "'");
  const std::string precision = cli.get<std::string>("precision");
  if (precision != "fp32" && precision != "fp64") fail_input("--precision must be fp32 or fp64, got '" + precision + "'");
  const double force = cli.get<double>("force"), source = cli.get<double>("source");
  if (!std::isfinite(force) || !std::isfinite(source)) fail_input("--force and --source must be finite");
  const std::uint64_t seed = cli.get<std::uint64_t>("seed");
  json attrs = {{"kind", "fluid.state"},
                {"n", n},
                {"scene", scene},
                {"seed", seed},
                {"step", 0},
                {"layout", "[y][x], (n+2) x (n+2), boundary layer included"},
                {"forcing", {{"type", scene == "react" ? "react" : "none"}, {"force", force}, {"source", source}}}};
  OutputFile out(cli.output());
  StreamWriter writer(out);
  if (precision == "fp32") fluid::write_fields(writer, make_scene<float>(scene, n, seed), cli.stamp(attrs), "", true);
  else fluid::write_fields(writer, make_scene<double>(scene, n, seed), cli.stamp(attrs), "", true);
  writer.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"fluid", "stable-fluids state for fluid-step: react, vortex, plume or random scene", run_fluid}};

}  // namespace
}  // namespace numpipe
