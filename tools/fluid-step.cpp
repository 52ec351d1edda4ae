// fluid-step: advances a stable-fluids state (Stam's solver; docs/fluid.md) by K
// steps on the CPU (OpenMP) or the GPU (CUDA) and writes the state, so that runs
// chain. A plain square state runs the fused step's fast solvers; a scene
// (obstacle, emitters, temperature, other sides or grids, forces) runs the
// scene path (kernels/fluid/scene.hpp), Stam's step. The run in the stream lives
// in kernels/fluid/io.hpp, the stepping loop in common/run.hpp.
#include <cmath>
#include <cstdio>
#include <optional>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/profile.hpp"
#include "common/run.hpp"
#include "common/strings.hpp"
#include "common/timeline.hpp"
#include "kernels/fluid/io.hpp"
#include "kernels/fluid/units.hpp"

namespace numpipe {
namespace {

using namespace fluid;

// What a run measured, for the diagnostics' attrs and the profile.
struct RunFacts {
  Backend backend;
  const DeviceInfo& device;
  const json& params;
  std::int64_t steps;
  double seconds;  // the median run's
  const std::vector<double>& times;
  double cells;
  double bytes_per_cell_step;
  json kernels;
};

// Both paths end alike: the diagnostics record, the profile, then the output committed.
int finish_run(const Cli& cli, OutputFile& out, StreamWriter& writer, const RunFacts& run, const Diagnostics& g,
               const Counters& c, PhaseLog& log) {
  const double diag[4] = {g.total_density, g.max_speed, g.max_divergence,
                          static_cast<double>(c.velocity_injections + c.density_injections)};
  json dattrs = {{"kind", "fluid.diagnostics"},
                 {"columns", {"total_density", "max_speed", "max_divergence", "injections"}},
                 {"steps", run.steps},
                 {"velocity_injections", c.velocity_injections},
                 {"density_injections", c.density_injections},
                 {"bytes_per_cell_step", run.bytes_per_cell_step},
                 {"backend", backend_name(run.backend)}};
  // Timings and the kernels chosen online (by timing) differ between identical runs:
  // they go to the profile, and into the attrs only when benchmarking (--repeat), so
  // that the same input and options give the same output bytes.
  const json timing = {{"ns_per_cell_step", run.steps > 0 ? run.seconds * 1e9 / (run.cells * run.steps) : 0.0},
                       {"seconds", run.times},
                       {"kernels", run.kernels}};
  if (cli.has("repeat")) dattrs.update(timing);
  require_finite(ExitCode::bad_input, "diagnostics", Shape{4}, diag, "the state's totals overflow");
  writer.write<double>("diagnostics", Shape{4}, diag, dattrs);
  writer.finish();
  json prof = run.params;
  prof["steps"] = run.steps;
  prof.update(timing);
  write_profile_if_requested(cli, run.backend, run.device, prof, log);  // before the commit: a failure leaves no output
  out.commit();
  return 0;
}

// The options of a run, declared once with their checks (run(), step 1).
struct FluidOptions {
  StepPlan plan;
  std::optional<std::string> scheme, forcing, precision, buoyancy;
  double dt = 0.1, diff = 0, visc = 0, ambient = 0, vorticity = 0, buoyancy_a = 0, buoyancy_b = 0;
  std::optional<double> force, source;
  int iters = 20;
  std::optional<int> repeat;  // --repeat (common/run.hpp)

  void declare(Cli& cli) {
    plan.declare(cli, "Steps to run", "d, u, v (and T) as snap_d, snap_u, snap_v (snap_T)", false, "Fluid");
    cli.option("scheme", &scheme,
               "fused (one step: density and velocity advected together by the projected velocity; the default for a "
               "plain state; 'seed' is its former name) or stam (Stam's vel_step, then dens_step; the default, and the "
               "only scheme, for a scene)",
               "S", "Fluid")
        .one_of({"fused", "stam"})
        .alias("seed", "fused");
    cli.option("dt", &dt, "Time step", "DT", "Fluid").min(0);
    cli.option("diff", &diff, "Density diffusion", "K", "Fluid").min(0);
    cli.option("visc", &visc, "Viscosity", "K", "Fluid").min(0);
    cli.option("force", &force, "react: velocity scale (default: the input's forcing, else 5)", "F", "Fluid");
    cli.option("source", &source, "react: density scale (default: the input's forcing, else 100)", "S", "Fluid");
    cli.option("forcing", &forcing, "react or none (default: the input's forcing, else react)", "F", "Fluid")
        .one_of({"react", "none"});
    cli.option("iters", &iters, "Red-black Gauss-Seidel iterations per solve", "N", "Fluid").range(1, 100000);
    cli.option("buoyancy", &buoyancy, "Buoyant smoke: force -A d + B (T - ambient) upward (Fedkiw, Stam and Jensen 2001)",
               "A,B", "Fluid")
        .check([this](const std::string& b) {
          const auto comma = b.find(',');
          if (comma == std::string::npos) fail_input("--buoyancy must be A,B, got '" + b + "'");
          buoyancy_a = finite_number(b.substr(0, comma), "--buoyancy's A");
          buoyancy_b = finite_number(b.substr(comma + 1), "--buoyancy's B");
        });
    cli.option("ambient", &ambient, "The ambient temperature of --buoyancy", "TA", "Fluid");
    cli.option("vorticity", &vorticity, "Vorticity confinement's epsilon (0: off)", "EPS", "Fluid").min(0);
    cli.option("precision", &precision, "fp32 or fp64 (default: the input's dtype)", "P", "Fluid").one_of({"fp32", "fp64"});
    declare_repeat(cli, &repeat, "Fluid");  // the median also in the diagnostics' attrs and the profile
    cli.tuning_env("NUMPIPE_FLUID_TILE", "CUDA tile of the solves: r7x8 (default), r10x8, r7x8a, r5x8, r7x16, r10x16, r7x4, s5x10, s10x16");
    cli.tuning_env("NUMPIPE_FLUID_SCENE=1", "run a plain state on the scene path (the same bits as --scheme stam)");
    cli.tuning_env("NUMPIPE_FLUID_SCENE_TILES=0",
                   "run a scene on the scene path's own solver (CUDA: one kernel per operation; CPU: one pass per "
                   "half-sweep), not on the fused solver's temporally blocked passes");
    cli.tuning_env("NUMPIPE_FLUID_NO_GRAPH", "launch each step's kernels one by one (no CUDA Graph)");
    cli.tuning_env("NUMPIPE_FLUID_CPU_ISA, _DIV, _ADVECT", "force the CPU row kernels: avx512|avx2|generic, reciprocal|divide, gather|scalar");
    cli.tuning_env("NUMPIPE_FLUID_CPU_WINDOW, _BLOCKS, _GROUP, _ALIGNED, _TRAPEZOID, _PREFETCH, _PIN, _HUGE, _BALANCE, _ADVECT_TILE",
                   "the CPU schedule (docs/DEVELOPING.md, Tuning)");
    cli.tuning_env("NUMPIPE_FLUID_CPU_GATHER=single", "AVX-512 advection: one float per gather instead of corner pairs");
    cli.tuning_env("NUMPIPE_FLUID_CPU_PHASES", "print where the CPU backend's time went");
  }
};

// The state's solver as common/run.hpp's stepping loop drives it: a --t-end run's
// last step, shortened, on a solver made for its dt from the state reached (a
// state's run continues bit for bit on a new solver: chained runs equal one).
template <class State, class Make>
struct FluidStepper {
  State& st;
  std::unique_ptr<typename State::SolverT>& solver;
  const Make& make;
  StreamWriter& writer;
  Counters counters;

  double advance(long long n) { return solver->advance(static_cast<int>(n)); }
  double last_step(double dt) {
    solver->fetch(st.fields);
    add_counters();
    solver.reset();
    Params last = st.p;
    last.dt = dt;
    solver = make(last, st.fields);
    return solver->advance(1);
  }
  void snapshot(long long step, double time) {
    solver->fetch(st.fields);  // the tool's copy serves as the snapshot's buffer (the final fetch overwrites it)
    st.require_finite("snap_", false, step);
    st.write(writer, st.snapshot_attrs(step, time), "snap_", false);
  }
  void add_counters() {
    const Counters c = solver->counters();
    counters.steps += c.steps;
    counters.velocity_injections += c.velocity_injections;
    counters.density_injections += c.density_injections;
  }
};

// A run of either path (State: PlainState or SceneState): convert, --repeat's timed
// runs, the stepping loop, the checks, the state written, the diagnostics, the profile.
template <class State, class... Args>
int run_state(Cli& cli, OutputFile& out, const StateInput& in, const FluidOptions& o, Args&&... args) {
  std::optional<timeline::Scope> convert(std::in_place, "convert input");
  State st(std::forward<Args>(args)...);
  convert.reset();
  const Backend backend = cli.backend();
  const bool cuda = backend == Backend::cuda;
  const DeviceInfo device = cuda ? query_cuda_device(cli.devices().front()) : query_host_cpu();
  const Params& p = st.p;
  const std::int64_t step0 = input_step(in);
  const double time0 = input_time(in, p.dt);
  auto make = [&](const Params& q, const typename State::FieldsT& f) { return st.make(backend, q, f, cli.devices().front()); };
  // --repeat N: N more timed runs of the whole steps from the input state, before the one
  // whose state is written (every run computes the same bits); their median counts.
  std::vector<double> times;
  const long long whole = StepClock(o.plan, time0, 0, p.dt).total_steps();
  for (int r = 0; r < o.repeat.value_or(0); ++r) times.push_back(make(p, st.fields)->advance(static_cast<int>(whole)));
  PhaseLog log;
  std::unique_ptr<typename State::SolverT> solver;
  log.time(cuda ? "upload" : "set-up", st.state_bytes(), 0, [&] { solver = make(p, st.fields); });

  StreamWriter writer(out);
  writer.set_units(fluid::units());
  const double loop_t0 = timeline::now(), loop_covered0 = timeline::total_seconds();
  FluidStepper<State, decltype(make)> stepper{st, solver, make, writer, {}};
  const SteppedRun run = run_steps(stepper, o.plan, time0, step0, p.dt, "fluid-step", st.steps_per_call(cuda), cli.quiet());
  stepper.add_counters();
  const std::int64_t steps = run.steps;
  const double loop_rest = timeline::now() - loop_t0 - (timeline::total_seconds() - loop_covered0) - run.seconds;
  const double seconds = times.empty() ? run.seconds : median_of(times);
  if (!times.empty())  // asked for: printed with -q too
    std::fprintf(stderr, "fluid-step: %lld steps: %zu more runs, median %.4f ms, %.3f ns per cell step\n", whole, times.size(),
                 seconds * 1e3, whole > 0 ? seconds * 1e9 / (st.cells() * double(whole)) : 0.0);
  times.push_back(run.seconds);  // the attrs' and profile's seconds: the more runs', then the written run's
  const double cells = st.cells(), bytes_cell = st.bytes_per_cell_step(cuda);
  log.add("steps", seconds, bytes_cell * cells * steps, kFlopsPerCellStep * cells * steps);
  if (loop_rest > 0) log.add("step launches and waits", loop_rest);  // graph set-up, host waits beyond the steps' time

  log.time(cuda ? "download" : "fetch", st.state_bytes(), 0, [&] { solver->fetch(st.fields); });
  std::optional<timeline::Scope> check(std::in_place, "check output");
  st.require_finite("", true, step0 + steps);
  const Diagnostics g = st.diagnose();
  check.reset();
  if (!g.finite) fail_input("the state became non-finite after " + std::to_string(steps) + " steps (try a smaller --dt)");

  json attrs = in.attrs;
  attrs["kind"] = "fluid.state";
  st.state_attrs(attrs);
  attrs["step"] = step0 + steps;
  attrs["time"] = run.time;
  attrs["grid"] = st.grid();
  attrs["params"] = st.params();
  attrs["forcing"] = forcing_attrs(p);
  const std::string kernels = solver->kernels();
  log.time("release", 0, 0, [&] { solver.reset(); });
  if (cuda) release_devices_in_background(cli.devices());  // its teardown beside the writing
  st.write(writer, cli.stamp(attrs, in.attrs), "", true);
  return finish_run(cli, out, writer, {backend, device, st.params(), steps, seconds, times, cells, bytes_cell, kernels},
                    g, stepper.counters, log);
}

int run(int argc, char** argv) {
  Cli cli({"fluid-step", "Advance a 2-D stable-fluids state (Jos Stam's stable fluids) or scene", "",
           "  gen-input fluid --n 1024 | fluid-step --steps 100 --diff 0.0001 --visc 0.0001 | render --interior -o d.png\n"
           "  gen-input fluid --n 256 | fluid-step --steps 10 | fluid-step --steps 10 -o s20.nps   # = --steps 20, bit for bit",
           "the state after the steps (and the snapshots, the diagnostics)"},
          kInput | kOutput | kCompute | kProfile | kMultiDevice);
  // 1. The options, declared once with their checks.
  FluidOptions o;
  o.declare(cli);
  // 2. Parse: every value checked.
  cli.parse(argc, argv);
  o.plan.check(cli);
  std::string precision = o.precision.value_or("");
  if (cli.has("devices") && cli.devices().size() > 1)
    fail_input("fluid-step drives one GPU per process: give one device (--device N), and run one process per GPU "
               "for several states");
  const Backend backend = cli.backend();  // refuse --backend cuda without a device before reading
  request_staging_early();  // pinned buffers for the upload, made with the context while the input is read

  // 3. Read: the state's and the scene's records only (snapshots and diagnostics of a previous
  // run are passed over unread), one of each name; the memory the run needs is
  // checked from the header of 'd', before any payload is read.
  const RecordFilter state_records = keep_names_once(
      {"d", "u", "v", "d0", "u0", "v0", "solid", "T", kSourceNames[0], kSourceNames[1], kSourceNames[2], kSourceNames[3]});
  OutputFile out(cli.output());
  auto records = read_input(cli, [&](const RecordHeader& h) {
    if (!state_records(h)) return false;
    if (h.name == "d") require_fluid_memory(h, backend, precision, cli.device());
    return true;
  });
  // 4. The state, its scene and the parameters, checked.
  std::optional<timeline::Scope> check_input(std::in_place, "check input");  // every value finite, the scene's arrays
  const StateInput in = find_state(records);
  Scene scene = scene_from_attrs(in.attrs, in.nx, in.ny);
  scene.buoyancy_a = o.buoyancy_a;
  scene.buoyancy_b = o.buoyancy_b;
  scene.ambient = o.ambient;
  scene.vorticity = o.vorticity;
  const SceneRecords scene_records = find_scene_records(records, in);
  const std::string reason = scene_reason(in, scene, scene_records);
  const std::string scheme = o.scheme ? *o.scheme : reason.empty() ? "fused" : "stam";
  if (!reason.empty() && scheme == "fused")
    fail_input("--scheme fused runs a plain square box only, and this run has " + reason + ": use --scheme stam");

  Params p;
  p.n = in.n;
  p.dt = o.dt;
  p.diff = o.diff;
  p.visc = o.visc;
  p.iters = o.iters;
  p.scheme = scheme == "stam" ? Scheme::stam : Scheme::seed;
  p.force = o.force.value_or(attr_number(in.attrs, "forcing", "force", 5.0));
  p.source = o.source.value_or(attr_number(in.attrs, "forcing", "source", 100.0));
  if (!std::isfinite(p.force) || !std::isfinite(p.source)) fail_input("--force and --source must be finite");
  const std::string forcing = o.forcing ? *o.forcing : input_forcing(in);
  p.forcing = forcing == "react" ? Forcing::react : Forcing::none;
  refuse_discarded_sources(in, p.forcing);
  check_input.reset();
  if (precision.empty()) precision = in.dtype == DType::f8 ? "fp64" : "fp32";
  // 5. The run: the scene path or the fused step, in the precision asked for.
  if (!reason.empty()) {
    if (precision == "fp64") return run_state<SceneState<double>>(cli, out, in, o, p, in, records, scene_records, scene);
    return run_state<SceneState<float>>(cli, out, in, o, p, in, records, scene_records, scene);
  }
  if (precision == "fp64") return run_state<PlainState<double>>(cli, out, in, o, p, in, records);
  return run_state<PlainState<float>>(cli, out, in, o, p, in, records);
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("fluid-step", [&] { return numpipe::run(argc, argv); });
}
