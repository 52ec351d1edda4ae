// fluid-step: advances a stable-fluids state (seed 003, spec/fluid.md) by K steps
// on the CPU (OpenMP) or the GPU (CUDA) and writes the state, so that runs chain.
#include <algorithm>
#include <cmath>

#include "common/cli.hpp"
#include "common/profile.hpp"
#include "common/progress.hpp"
#include "kernels/fluid/fluid.hpp"
#include "kernels/fluid/state_io.hpp"

namespace numpipe {
namespace {

using namespace fluid;

double attr_number(const json& attrs, const char* group, const char* key, double fallback) {
  if (attrs.contains(group) && attrs[group].is_object() && attrs[group].contains(key) && attrs[group][key].is_number())
    return attrs[group][key].get<double>();
  return fallback;
}

template <class T>
std::unique_ptr<Solver<T>> make_solver(Backend backend, const Cli& cli, const Params& p, const Fields<T>& fields) {
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_FLUID_CUDA
    return make_cuda_solver<T>(p, fields, cli.devices().front());
#else
    (void)cli;
    fail_resource("this build has no CUDA backend for fluid-step (use --backend cpu)");
#endif
  }
  return make_cpu_solver<T>(p, fields);
}

template <class T>
int run_with(Cli& cli, OutputFile& out, const StateInput& in, Params p, int steps, int every, int repeat) {
  const Backend backend = cli.backend();
  Fields<T> fields = load_fields<T>(in);
  const DeviceInfo device = backend == Backend::cuda ? query_cuda_device(cli.devices().front()) : query_host_cpu();
  // --repeat R: R-1 timed runs of all steps from the input state before the one
  // whose state is written (every run computes the same bits); the median counts.
  std::vector<double> times;
  for (int r = 1; r < repeat; ++r) times.push_back(make_solver<T>(backend, cli, p, fields)->advance(steps));
  std::unique_ptr<Solver<T>> solver = make_solver<T>(backend, cli, p, fields);

  const std::int64_t step0 = in.attrs.contains("step") && in.attrs["step"].is_number_integer()
                                 ? in.attrs["step"].get<std::int64_t>()
                                 : 0;
  json params = {{"n", p.n},
                 {"dt", p.dt},
                 {"diff", p.diff},
                 {"visc", p.visc},
                 {"iters", p.iters},
                 {"scheme", p.scheme == Scheme::seed ? "fused" : "stam"},
                 {"precision", sizeof(T) == 4 ? "fp32" : "fp64"}};
  json forcing = {{"type", p.forcing == Forcing::react ? "react" : "none"}, {"force", p.force}, {"source", p.source}};

  StreamWriter writer(out);
  PhaseLog log;
  Progress progress("fluid-step", "steps", static_cast<std::uint64_t>(steps), cli.quiet());
  double seconds = 0;
  // With a progress line the steps run in chunks of about a quarter second (the
  // first of one step); without one (pipes, benchmarks), in one call as before.
  int chunk_steps = 1;
  for (int done = 0; done < steps;) {
    int chunk = every > 0 ? std::min(every - done % every, steps - done) : steps - done;  // up to the next snapshot
    if (progress.enabled()) chunk = std::min(chunk, chunk_steps);
    const double s = solver->advance(chunk);
    seconds += s;
    if (progress.enabled()) chunk_steps = s > 0 ? std::max(1, static_cast<int>(chunk * 0.25 / s)) : 2 * chunk;
    done += chunk;
    progress.update(static_cast<std::uint64_t>(done));
    if (every > 0 && done % every == 0) {
      Fields<T> snap;
      solver->fetch(snap);
      json a = {{"kind", "fluid.snapshot"}, {"n", p.n}, {"step", step0 + done}};
      write_fields(writer, snap, a, "snap_", false);
    }
  }
  progress.finish();
  times.push_back(seconds);
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  seconds = sorted.size() % 2 ? sorted[sorted.size() / 2] : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  const double cells = static_cast<double>(p.n) * p.n;
  log.add("steps", seconds, bytes_per_cell_step(p, sizeof(T), backend == Backend::cuda) * cells * steps,
          800.0 * cells * steps);

  solver->fetch(fields);
  const Counters c = solver->counters();
  const Diagnostics g = diagnose(fields);
  if (!g.finite) fail_input("the state became non-finite after " + std::to_string(steps) + " steps (try a smaller --dt)");

  json attrs = in.attrs;
  attrs["kind"] = "fluid.state";
  attrs["n"] = p.n;
  attrs["step"] = step0 + steps;
  attrs["params"] = params;
  attrs["forcing"] = forcing;
  write_fields(writer, fields, cli.stamp(attrs, in.attrs), "", true);
  const double diag[4] = {g.total_density, g.max_speed, g.max_divergence,
                          static_cast<double>(c.velocity_injections + c.density_injections)};
  json dattrs = {{"kind", "fluid.diagnostics"},
                 {"columns", {"total_density", "max_speed", "max_divergence", "injections"}},
                 {"steps", steps},
                 {"velocity_injections", c.velocity_injections},
                 {"density_injections", c.density_injections},
                 {"ns_per_cell_step", steps > 0 ? seconds * 1e9 / (cells * steps) : 0.0},
                 {"seconds", times},
                 {"bytes_per_cell_step", bytes_per_cell_step(p, sizeof(T), backend == Backend::cuda)},
                 {"backend", backend_name(backend)},
                 {"kernels", solver->kernels()}};
  writer.write<double>("diagnostics", Shape{4}, diag, dattrs);
  writer.finish();
  out.commit();
  json prof = params;
  prof["steps"] = steps;
  write_profile_if_requested(cli, backend, device, prof, log);
  return 0;
}

int run(int argc, char** argv) {
  Cli cli({"fluid-step", "Advance a 2-D stable-fluids state (Jos Stam's stable fluids)", "",
           "  gen-input fluid --n 1024 | fluid-step --steps 100 --diff 0.0001 --visc 0.0001 | render --interior -o d.png\n"
           "  gen-input fluid --n 256 | fluid-step --steps 10 | fluid-step --steps 10 -o s20.nps   # = --steps 20, bit for bit",
           "the state after the steps (and the snapshots, the diagnostics)"},
          kInput | kOutput | kCompute | kProfile | kMultiDevice);
  cli.add("Fluid")("steps", "Steps to run", cxxopts::value<int>()->default_value("1"), "K")(
      "scheme", "fused (one step: density and velocity advected together by the projected velocity) or stam "
      "(Stam's vel_step, then dens_step)",
      cxxopts::value<std::string>()->default_value("fused"), "S")(
      "dt", "Time step", cxxopts::value<double>()->default_value("0.1"), "DT")(
      "diff", "Density diffusion", cxxopts::value<double>()->default_value("0"), "K")(
      "visc", "Viscosity", cxxopts::value<double>()->default_value("0"), "K")(
      "force", "react: velocity scale (default: the input's forcing, else 5)", cxxopts::value<double>(), "F")(
      "source", "react: density scale (default: the input's forcing, else 100)", cxxopts::value<double>(), "S")(
      "forcing", "react or none (default: the input's forcing, else react)", cxxopts::value<std::string>(), "F")(
      "iters", "Red-black Gauss-Seidel iterations per solve", cxxopts::value<int>()->default_value("20"), "N")(
      "snapshot-every", "Write d, u, v as snap_d, snap_u, snap_v every M steps (0: never)",
      cxxopts::value<int>()->default_value("0"), "M")(
      "precision", "fp32 or fp64 (default: the input's dtype)", cxxopts::value<std::string>(), "P")(
      "repeat", "Benchmark: run the steps R times from the input, report the median time on stderr",
      cxxopts::value<int>()->default_value("1"), "R");
  cli.tuning_env("NUMPIPE_FLUID_TILE", "CUDA tile of the solves: r7x8 (default), r10x8, r7x8a, r5x8, r7x16, r10x16, r7x4, s5x10, s10x16");
  cli.tuning_env("NUMPIPE_FLUID_NO_GRAPH", "launch each step's kernels one by one (no CUDA Graph)");
  cli.tuning_env("NUMPIPE_FLUID_CPU_ISA, _DIV, _ADVECT", "force the CPU row kernels: avx512|avx2|generic, reciprocal|divide, gather|scalar");
  cli.tuning_env("NUMPIPE_FLUID_CPU_WINDOW, _BLOCKS, _GROUP, _ALIGNED, _TRAPEZOID, _PREFETCH, _PIN, _HUGE, _BALANCE, _ADVECT_TILE",
                 "the CPU schedule (docs/DEVELOPING.md, Tuning)");
  cli.tuning_env("NUMPIPE_FLUID_CPU_PHASES", "print where the CPU backend's time went");
  cli.parse(argc, argv);

  const int steps = cli.get<int>("steps");
  if (steps < 0) fail_input("--steps must be >= 0, got " + std::to_string(steps));
  const int iters = cli.get<int>("iters");
  if (iters < 1 || iters > 100000) fail_input("--iters must be in [1, 100000], got " + std::to_string(iters));
  const int every = cli.get<int>("snapshot-every");
  const int repeat = cli.get<int>("repeat");
  if (repeat < 1 || repeat > 1000) fail_input("--repeat must be in [1, 1000], got " + std::to_string(repeat));
  if (every < 0) fail_input("--snapshot-every must be >= 0, got " + std::to_string(every));
  // "seed" is the fused scheme's first name, still accepted.
  const std::string scheme = cli.get<std::string>("scheme");
  if (scheme != "fused" && scheme != "seed" && scheme != "stam")
    fail_input("--scheme must be fused or stam, got '" + scheme + "'");
  const double dt = cli.get<double>("dt"), diff = cli.get<double>("diff"), visc = cli.get<double>("visc");
  if (!std::isfinite(dt) || dt < 0) fail_input("--dt must be finite and >= 0, got " + std::to_string(dt));
  if (!std::isfinite(diff) || diff < 0) fail_input("--diff must be finite and >= 0, got " + std::to_string(diff));
  if (!std::isfinite(visc) || visc < 0) fail_input("--visc must be finite and >= 0, got " + std::to_string(visc));
  std::string precision;
  if (cli.has("precision")) {
    precision = cli.get<std::string>("precision");
    if (precision != "fp32" && precision != "fp64") fail_input("--precision must be fp32 or fp64, got '" + precision + "'");
  }
  std::string forcing_opt;
  if (cli.has("forcing")) {
    forcing_opt = cli.get<std::string>("forcing");
    if (forcing_opt != "react" && forcing_opt != "none") fail_input("--forcing must be react or none, got '" + forcing_opt + "'");
  }
  if (cli.has("devices") && cli.devices().size() > 1)
    fail_input("fluid-step drives one GPU per process: give one device (--device N), and run one process per GPU "
               "for several states");
  cli.backend();  // refuse --backend cuda without a device before reading

  OutputFile out(cli.output());
  const auto records = read_input(cli);
  const StateInput in = find_state(records);

  Params p;
  p.n = in.n;
  p.dt = dt;
  p.diff = diff;
  p.visc = visc;
  p.iters = iters;
  p.scheme = scheme == "stam" ? Scheme::stam : Scheme::seed;
  p.force = cli.has("force") ? cli.get<double>("force") : attr_number(in.attrs, "forcing", "force", 5.0);
  p.source = cli.has("source") ? cli.get<double>("source") : attr_number(in.attrs, "forcing", "source", 100.0);
  if (!std::isfinite(p.force) || !std::isfinite(p.source)) fail_input("--force and --source must be finite");
  std::string forcing = forcing_opt;
  if (forcing.empty()) {
    forcing = "react";
    if (in.attrs.contains("forcing") && in.attrs["forcing"].is_object() && in.attrs["forcing"].contains("type") &&
        in.attrs["forcing"]["type"].is_string())
      forcing = in.attrs["forcing"]["type"].get<std::string>();
    if (forcing != "react" && forcing != "none") fail_input("input attrs: forcing type must be react or none, got '" + forcing + "'");
  }
  p.forcing = forcing == "react" ? Forcing::react : Forcing::none;
  if (precision.empty()) precision = in.dtype == DType::f8 ? "fp64" : "fp32";
  if (precision == "fp64") return run_with<double>(cli, out, in, p, steps, every, repeat);
  return run_with<float>(cli, out, in, p, steps, every, repeat);
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("fluid-step", [&] { return numpipe::run(argc, argv); });
}
