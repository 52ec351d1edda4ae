// fluid-step: advances a stable-fluids state (Stam's solver; docs/fluid.md) by K
// steps on the CPU (OpenMP) or the GPU (CUDA) and writes the state, so that runs
// chain. A plain square state runs the fused step's fast solvers; a scene
// (obstacle, emitters, temperature, other sides or grids, forces) runs the
// scene path (kernels/fluid/scene.hpp), Stam's step.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/profile.hpp"
#include "common/progress.hpp"
#include "common/run.hpp"
#include "common/timeline.hpp"
#include "kernels/fluid/fluid.hpp"
#include "kernels/fluid/scene.hpp"
#include "kernels/fluid/state_io.hpp"
#include "kernels/fluid/units.hpp"

namespace numpipe {
namespace {

using namespace fluid;

double attr_number(const json& attrs, const char* group, const char* key, double fallback) {
  if (attrs.contains(group) && attrs[group].is_object() && attrs[group].contains(key) && attrs[group][key].is_number())
    return attrs[group][key].get<double>();
  return fallback;
}

std::int64_t input_step(const StateInput& in) {
  return in.attrs.contains("step") && in.attrs["step"].is_number_integer() ? in.attrs["step"].get<std::int64_t>() : 0;
}
// The solver's time of the input state: its attrs' "time", else step * dt.
double input_time(const StateInput& in, double dt) {
  if (in.attrs.contains("time") && in.attrs["time"].is_number()) return in.attrs["time"].get<double>();
  return static_cast<double>(input_step(in)) * dt;
}

// A state at step 0 whose d0, u0 or v0 hold values that --forcing none would
// discard: these arrays are the solver's work buffers (Stam's *_prev), cleared
// at the start of every step (react's zeroing; Stam's demo clears them every
// frame likewise), so a density put there is never injected. Refused, with the
// way to say what was meant: an emitter record, added every step.
void refuse_discarded_sources(const StateInput& in, Forcing forcing) {
  if (forcing != Forcing::none || input_step(in) != 0) return;
  static const char* const emitter[3] = {"source_d", "source_u", "source_v"};
  for (int k = 3; k < 6; ++k) {
    const Record& r = *in.records[static_cast<std::size_t>(k)];
    const std::size_t w = static_cast<std::size_t>(in.nx) + 2;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double x = r.value_as_double(i);
      if (x == 0) continue;
      std::ostringstream value;
      value << x;
      fail_input(std::string("'") + kFieldNames[k] + "' holds " + value.str() + " at [" + std::to_string(i / w) + ", " +
                 std::to_string(i % w) + "] in a state at step 0, but d0, u0 and v0 are the solver's work buffers, " +
                 "cleared at the start of every step (with --forcing none nothing is injected from them): give what " +
                 "should be added every step as a record " + emitter[k - 3] +
                 " (a rate per unit time; gen-input fluid --emit makes one), or set " + kFieldNames[k] + " to zero");
    }
  }
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

// The working set (docs/fluid.md "Memory"), checked from the header of record 'd'
// before any payload is read: the input records (until they are converted), the
// tool's copy of the state (6 fields, kept for the final fetch) and the CPU
// solver's (6 fields, a scratch field, a window per thread); on the GPU the
// device holds the 6 fields and the scratch field.
void require_fluid_memory(const RecordHeader& d, Backend backend, const std::string& precision, int device) {
  const double cells = static_cast<double>(element_count(d.shape));
  const double in = static_cast<double>(dtype_size(d.dtype));
  const double s = precision.empty() ? in : precision == "fp64" ? 8.0 : 4.0;
  const std::string what = "a fluid state of shape " + shape_string(d.shape) + " (" +
                           std::to_string(static_cast<long long>(cells)) + " cells)";
  if (backend == Backend::cuda) {
    require_host_memory({what, cells, 6 * in + 6 * s, "cell"});
    require_device_memory(device, {what, cells, 7 * s, "cell", 64.0 * 1048576});
  } else {
    require_host_memory({what, cells, std::max(6 * in + 6 * s, 13 * s), "cell", 4.0 * 1048576 * omp_get_max_threads()});
  }
}

// The input's payloads, once converted (the records stay: the scene's refer to them).
void release_payloads(std::vector<Record>& records) {
  for (Record& r : records) r.payload = HostArray<std::byte>();
}

// Every field written must be finite (diagnose() checks d, u, v; this names the record and the cell).
template <class T>
void require_finite_field(const std::string& name, const Shape& shape, const FieldVector<T>& f, std::int64_t step) {
  if (f.empty()) return;
  require_finite(ExitCode::bad_input, name, shape, f.data(),
                 "the state became non-finite by step " + std::to_string(step) + " (try a smaller --dt)");
}
template <class F>
void require_finite_fields(const F& f, const Shape& shape, const std::string& prefix, bool all_six, std::int64_t step) {
  require_finite_field(prefix + "d", shape, f.d, step);
  require_finite_field(prefix + "u", shape, f.u, step);
  require_finite_field(prefix + "v", shape, f.v, step);
  if (!all_six) return;
  require_finite_field(prefix + "d0", shape, f.d0, step);
  require_finite_field(prefix + "u0", shape, f.u0, step);
  require_finite_field(prefix + "v0", shape, f.v0, step);
}

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

// The options of a run, declared once (run()).
struct FluidOptions {
  StepPlan plan;
  std::optional<std::string> scheme, forcing, precision, buoyancy;
  double dt = 0.1, diff = 0, visc = 0, ambient = 0, vorticity = 0;
  std::optional<double> force, source;
  int iters = 20, repeat = 1;
};

// What the stepping loop did.
struct Stepped {
  double seconds = 0;  // the solvers' own time
  Counters counters;
  std::int64_t steps = 0;
  double time = 0;
};

// The stepping loop of both paths (plain and scene): whole steps in chunks up to the
// next snapshot (and, with a progress line, of about a quarter second; at most
// max_chunk), a snapshot where the clock says, and the last step of a --t-end run,
// shortened, on a solver made for its dt from the state reached (a state's run
// continues bit for bit on a new solver: chained runs equal one).
template <class SolverPtr, class FieldsT, class Make, class Snapshot>
Stepped step_loop(SolverPtr& solver, FieldsT& fields, const Make& make, const Snapshot& snapshot, const Params& p,
                  const StepPlan& plan, std::int64_t step0, double time0, long long max_chunk, bool quiet) {
  StepClock clock(plan, time0, step0, p.dt);
  Progress progress("fluid-step", "steps", static_cast<std::uint64_t>(std::max(0LL, clock.total_steps())), quiet);
  Stepped out;
  long long chunk_steps = 1;
  while (!clock.done()) {
    long long chunk = clock.full_steps_to_next_event();
    if (chunk == 0) {  // the last step, shortened to end at --t-end
      solver->fetch(fields);
      const Counters c = solver->counters();
      out.counters.steps += c.steps;
      out.counters.velocity_injections += c.velocity_injections;
      out.counters.density_injections += c.density_injections;
      solver.reset();
      Params last = p;
      last.dt = clock.next_dt();
      solver = make(last, fields);
      out.seconds += solver->advance(1);
      clock.advance(last.dt);
    } else {
      chunk = std::min(chunk, max_chunk);
      if (progress.enabled()) chunk = std::min(chunk, chunk_steps);
      const double s = solver->advance(static_cast<int>(chunk));
      out.seconds += s;
      if (progress.enabled()) chunk_steps = s > 0 ? std::max(1LL, static_cast<long long>(chunk * 0.25 / s)) : 2 * chunk;
      clock.advance_steps(chunk);
    }
    progress.update(static_cast<std::uint64_t>(clock.steps_taken()));
    if (clock.snapshot_due()) {
      solver->fetch(fields);  // the tool's copy serves as the snapshot's buffer (the final fetch overwrites it)
      snapshot(clock.step(), clock.time());
    }
  }
  progress.finish();
  const Counters c = solver->counters();
  out.counters.steps += c.steps;
  out.counters.velocity_injections += c.velocity_injections;
  out.counters.density_injections += c.density_injections;
  out.steps = clock.steps_taken();
  out.time = clock.time();
  return out;
}

// --repeat R: R-1 timed runs of the whole steps from the input state before the one
// whose state is written (every run computes the same bits); the median counts.
template <class Make, class FieldsT>
std::vector<double> repeat_runs(const Make& make, const Params& p, const FieldsT& fields, const FluidOptions& o,
                                double time0) {
  std::vector<double> times;
  const long long steps = StepClock(o.plan, time0, 0, p.dt).total_steps();
  for (int r = 1; r < o.repeat; ++r) times.push_back(make(p, fields)->advance(static_cast<int>(steps)));
  return times;
}

template <class T>
int run_with(Cli& cli, OutputFile& out, const StateInput& in, std::vector<Record>& records, const Params& p,
             const FluidOptions& o) {
  const Backend backend = cli.backend();
  Fields<T> fields;
  {
    timeline::Scope convert("convert input");
    fields = load_fields<T>(in);
    release_payloads(records);
  }
  const DeviceInfo device = backend == Backend::cuda ? query_cuda_device(cli.devices().front()) : query_host_cpu();
  const std::int64_t step0 = input_step(in);
  const double time0 = input_time(in, p.dt);
  auto make = [&](const Params& q, const Fields<T>& f) { return make_solver<T>(backend, cli, q, f); };
  std::vector<double> times = repeat_runs(make, p, fields, o, time0);
  PhaseLog log;
  std::unique_ptr<Solver<T>> solver;
  const double state_bytes = 6.0 * static_cast<double>(fields.cells()) * sizeof(T);
  log.time(backend == Backend::cuda ? "upload" : "set-up", state_bytes, 0, [&] { solver = make(p, fields); });

  Scene square;
  square.nx = square.ny = p.n;
  const json grid = grid_attrs(square);
  json params = {{"n", p.n},
                 {"dt", p.dt},
                 {"diff", p.diff},
                 {"visc", p.visc},
                 {"iters", p.iters},
                 {"scheme", p.scheme == Scheme::seed ? "fused" : "stam"},
                 {"precision", sizeof(T) == 4 ? "fp32" : "fp64"}};
  json forcing = {{"type", p.forcing == Forcing::react ? "react" : "none"}, {"force", p.force}, {"source", p.source}};

  StreamWriter writer(out);
  writer.set_units(fluid::units());
  const double loop_t0 = timeline::now(), loop_covered0 = timeline::total_seconds();
  auto snapshot = [&](std::int64_t step, double time) {
    require_finite_fields(fields, Shape{p.n + 2, p.n + 2}, "snap_", false, step);
    json a = {{"kind", "fluid.snapshot"}, {"n", p.n}, {"step", step}, {"time", time}, {"grid", grid}};
    write_fields(writer, fields, a, "snap_", false);
  };
  const Stepped run = step_loop(solver, fields, make, snapshot, p, o.plan, step0, time0, INT_MAX, cli.quiet());
  const std::int64_t steps = run.steps;
  double seconds = run.seconds;
  const double loop_rest = timeline::now() - loop_t0 - (timeline::total_seconds() - loop_covered0) - seconds;
  times.push_back(seconds);
  seconds = median_of(times);
  const double cells = static_cast<double>(p.n) * p.n;
  log.add("steps", seconds, bytes_per_cell_step(p, sizeof(T), backend == Backend::cuda) * cells * steps,
          800.0 * cells * steps);
  if (loop_rest > 0) log.add("step launches and waits", loop_rest);  // graph set-up, host waits beyond the steps' time

  log.time(backend == Backend::cuda ? "download" : "fetch", state_bytes, 0, [&] { solver->fetch(fields); });
  std::optional<timeline::Scope> check(std::in_place, "check output");
  require_finite_fields(fields, Shape{p.n + 2, p.n + 2}, "", true, step0 + steps);
  const Counters c = run.counters;
  const Diagnostics g = diagnose(fields);
  check.reset();
  if (!g.finite) fail_input("the state became non-finite after " + std::to_string(steps) + " steps (try a smaller --dt)");

  json attrs = in.attrs;
  attrs["kind"] = "fluid.state";
  attrs["n"] = p.n;
  attrs["step"] = step0 + steps;
  attrs["time"] = run.time;
  attrs["grid"] = grid;
  attrs["params"] = params;
  attrs["forcing"] = forcing;
  const std::string kernels = solver->kernels();
  log.time("release", 0, 0, [&] { solver.reset(); });
  if (backend == Backend::cuda) release_devices_in_background(cli.devices());  // its teardown beside the writing
  write_fields(writer, fields, cli.stamp(attrs, in.attrs), "", true);
  return finish_run(cli, out, writer, {backend, device, params, steps, seconds, times, cells,
                                        bytes_per_cell_step(p, sizeof(T), backend == Backend::cuda), kernels},
                    g, c, log);
}

template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_solver(Backend backend, const Cli& cli, const Params& p, const Scene& s,
                                                  const SceneFields<T>& fields) {
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_FLUID_CUDA
    return make_scene_cuda_solver<T>(p, s, fields, cli.devices().front());
#else
    (void)cli;
    fail_resource("this build has no CUDA backend for fluid-step (use --backend cpu)");
#endif
  }
  return make_scene_cpu_solver<T>(p, s, fields);
}

// The scene path: Stam's step with the scene's obstacle, emitters, sides and forces.
template <class T>
int run_scene(Cli& cli, OutputFile& out, const StateInput& in, std::vector<Record>& input, const SceneRecords& records,
              const Scene& scene, const Params& p, const FluidOptions& o) {
  const Backend backend = cli.backend();
  std::optional<timeline::Scope> convert(std::in_place, "convert input");
  SceneFields<T> fields = load_scene_fields<T>(in, records);
  release_payloads(input);  // (records' pointers stay valid: only their payloads go)
  validate_scene(scene, fields);
  convert.reset();
  const DeviceInfo device = backend == Backend::cuda ? query_cuda_device(cli.devices().front()) : query_host_cpu();
  const std::int64_t step0 = input_step(in);
  const double time0 = input_time(in, p.dt);
  auto make = [&](const Params& q, const SceneFields<T>& f) { return make_scene_solver<T>(backend, cli, q, scene, f); };
  std::vector<double> times = repeat_runs(make, p, fields, o, time0);
  PhaseLog log;
  std::unique_ptr<SceneSolver<T>> solver;
  const double state_bytes = (fields.temperature() ? 7.0 : 6.0) * static_cast<double>(fields.cells()) * sizeof(T);
  log.time(backend == Backend::cuda ? "upload" : "set-up", state_bytes, 0, [&] { solver = make(p, fields); });

  const json grid = grid_attrs(scene);
  json params = {{"nx", scene.nx},
                 {"ny", scene.ny},
                 {"dt", p.dt},
                 {"diff", p.diff},
                 {"visc", p.visc},
                 {"iters", p.iters},
                 {"scheme", "stam"},
                 {"buoyancy", {scene.buoyancy_a, scene.buoyancy_b}},
                 {"ambient", scene.ambient},
                 {"vorticity", scene.vorticity},
                 {"precision", sizeof(T) == 4 ? "fp32" : "fp64"}};
  json forcing = {{"type", p.forcing == Forcing::react ? "react" : "none"}, {"force", p.force}, {"source", p.source}};
  int sources = 0;
  for (const Record* r : records.src) sources += r != nullptr;
  const double bytes_cell = scene_bytes_per_cell_step(p, scene, records.solid != nullptr, sources,
                                                      fields.temperature(), static_cast<int>(sizeof(T)));

  StreamWriter writer(out);
  writer.set_units(fluid::units());
  const double loop_t0 = timeline::now(), loop_covered0 = timeline::total_seconds();
  auto snapshot = [&](std::int64_t step, double time) {
    require_finite_fields(fields, Shape{scene.ny + 2, scene.nx + 2}, "snap_", false, step);
    require_finite_field("snap_T", Shape{scene.ny + 2, scene.nx + 2}, fields.t, step);
    json a = {{"kind", "fluid.snapshot"}, {"nx", scene.nx}, {"ny", scene.ny}, {"step", step}, {"time", time}, {"grid", grid}};
    write_scene_fields(writer, fields, a, "snap_", false);
  };
  // The CPU reports every step (no cost); the GPU every snapshot or at the end,
  // so that no step waits for the host.
  const long long per_call = backend == Backend::cuda ? INT_MAX : 1;
  const Stepped run = step_loop(solver, fields, make, snapshot, p, o.plan, step0, time0, per_call, cli.quiet());
  const std::int64_t steps = run.steps;
  double seconds = run.seconds;
  const double loop_rest = timeline::now() - loop_t0 - (timeline::total_seconds() - loop_covered0) - seconds;
  times.push_back(seconds);
  seconds = median_of(times);
  const double cells = static_cast<double>(scene.nx) * scene.ny;
  log.add("steps", seconds, bytes_cell * cells * steps, 800.0 * cells * steps);
  if (loop_rest > 0) log.add("step launches and waits", loop_rest);  // graph set-up, host waits beyond the steps' time

  log.time(backend == Backend::cuda ? "download" : "fetch", state_bytes, 0, [&] { solver->fetch(fields); });
  std::optional<timeline::Scope> check(std::in_place, "check output");
  require_finite_fields(fields, Shape{scene.ny + 2, scene.nx + 2}, "", true, step0 + steps);
  require_finite_field("T", Shape{scene.ny + 2, scene.nx + 2}, fields.t, step0 + steps);
  const Counters c = run.counters;
  const Diagnostics g = diagnose_scene(scene, fields);
  check.reset();
  if (!g.finite) fail_input("the state became non-finite after " + std::to_string(steps) + " steps (try a smaller --dt)");

  json attrs = in.attrs;
  attrs["kind"] = "fluid.state";
  attrs.erase("n");
  attrs["nx"] = scene.nx;
  attrs["ny"] = scene.ny;
  attrs["step"] = step0 + steps;
  attrs["time"] = run.time;
  attrs["grid"] = grid;
  attrs["box"] = scene_attrs(scene);
  attrs["params"] = params;
  attrs["forcing"] = forcing;
  const std::string kernels = solver->kernels();
  log.time("release", 0, 0, [&] { solver.reset(); });
  if (backend == Backend::cuda) release_devices_in_background(cli.devices());  // its teardown beside the writing
  write_scene_fields(writer, fields, cli.stamp(attrs, in.attrs), "", true);
  return finish_run(cli, out, writer, {backend, device, params, steps, seconds, times, cells, bytes_cell, kernels},
                    g, c, log);
}

// Why a state needs the scene path (empty: it does not).
std::string scene_reason(const StateInput& in, const Scene& s, const SceneRecords& r) {
  if (in.nx != in.ny) return "a " + std::to_string(in.nx) + " x " + std::to_string(in.ny) + " grid";
  if (r.solid) return "an obstacle (record 'solid')";
  for (int k = 0; k < 4; ++k)
    if (r.src[k]) return std::string("an emitter (record '") + kSourceNames[k] + "')";
  if (r.t) return "a temperature field (record 'T')";
  if (!s.all_closed()) return "sides other than closed walls";
  if (s.length != 1.0) return "a domain length other than 1";
  if (s.buoyancy_a != 0 || s.buoyancy_b != 0) return "--buoyancy";
  if (s.vorticity != 0) return "--vorticity";
  if (const char* e = std::getenv("NUMPIPE_FLUID_SCENE"); e && std::string(e) == "1") return "NUMPIPE_FLUID_SCENE=1";
  return "";
}

double parse_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  fail_input(what + " must be a finite number, got '" + text + "'");
}

int run(int argc, char** argv) {
  Cli cli({"fluid-step", "Advance a 2-D stable-fluids state (Jos Stam's stable fluids) or scene", "",
           "  gen-input fluid --n 1024 | fluid-step --steps 100 --diff 0.0001 --visc 0.0001 | render --interior -o d.png\n"
           "  gen-input fluid --n 256 | fluid-step --steps 10 | fluid-step --steps 10 -o s20.nps   # = --steps 20, bit for bit",
           "the state after the steps (and the snapshots, the diagnostics)"},
          kInput | kOutput | kCompute | kProfile | kMultiDevice);
  // 1. The options, declared once with their checks.
  FluidOptions o;
  o.plan.declare(cli, "Steps to run", "d, u, v (and T) as snap_d, snap_u, snap_v (snap_T)", false, "Fluid");
  cli.option("scheme", &o.scheme,
             "fused (one step: density and velocity advected together by the projected velocity; the default for a "
             "plain state; 'seed' is its former name) or stam (Stam's vel_step, then dens_step; the default, and the "
             "only scheme, for a scene)",
             "S", "Fluid")
      .one_of({"fused", "stam"})
      .alias("seed", "fused");
  cli.option("dt", &o.dt, "Time step", "DT", "Fluid").min(0);
  cli.option("diff", &o.diff, "Density diffusion", "K", "Fluid").min(0);
  cli.option("visc", &o.visc, "Viscosity", "K", "Fluid").min(0);
  cli.option("force", &o.force, "react: velocity scale (default: the input's forcing, else 5)", "F", "Fluid");
  cli.option("source", &o.source, "react: density scale (default: the input's forcing, else 100)", "S", "Fluid");
  cli.option("forcing", &o.forcing, "react or none (default: the input's forcing, else react)", "F", "Fluid")
      .one_of({"react", "none"});
  cli.option("iters", &o.iters, "Red-black Gauss-Seidel iterations per solve", "N", "Fluid").range(1, 100000);
  cli.option("buoyancy", &o.buoyancy, "Buoyant smoke: force -A d + B (T - ambient) upward (Fedkiw, Stam and Jensen 2001)",
             "A,B", "Fluid");
  cli.option("ambient", &o.ambient, "The ambient temperature of --buoyancy", "TA", "Fluid");
  cli.option("vorticity", &o.vorticity, "Vorticity confinement's epsilon (0: off)", "EPS", "Fluid").min(0);
  cli.option("precision", &o.precision, "fp32 or fp64 (default: the input's dtype)", "P", "Fluid").one_of({"fp32", "fp64"});
  cli.option("repeat", &o.repeat,
             "Benchmark: run the steps R times from the input; the median time goes to the diagnostics record's attrs "
             "(ns_per_cell_step, seconds) and the profile",
             "R", "Fluid")
      .range(1, 1000);
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
  cli.parse(argc, argv);

  o.plan.check(cli);
  double buoyancy_a = 0, buoyancy_b = 0;
  if (o.buoyancy) {
    const std::string& b = *o.buoyancy;
    const auto comma = b.find(',');
    if (comma == std::string::npos) fail_input("--buoyancy must be A,B, got '" + b + "'");
    buoyancy_a = parse_number(b.substr(0, comma), "--buoyancy's A");
    buoyancy_b = parse_number(b.substr(comma + 1), "--buoyancy's B");
  }
  std::string precision = o.precision.value_or("");
  if (cli.has("devices") && cli.devices().size() > 1)
    fail_input("fluid-step drives one GPU per process: give one device (--device N), and run one process per GPU "
               "for several states");
  const Backend backend = cli.backend();  // refuse --backend cuda without a device before reading
  request_staging_early();  // pinned buffers for the upload, made with the context while the input is read

  OutputFile out(cli.output());
  // The state's and the scene's records only (snapshots and diagnostics of a previous
  // run are passed over unread), one of each name; the memory the run needs is
  // checked from the header of 'd', before any payload is read.
  const RecordFilter state_records = keep_names_once(
      {"d", "u", "v", "d0", "u0", "v0", "solid", "T", kSourceNames[0], kSourceNames[1], kSourceNames[2], kSourceNames[3]});
  auto records = read_input(cli, [&](const RecordHeader& h) {
    if (!state_records(h)) return false;
    if (h.name == "d") require_fluid_memory(h, backend, precision, cli.device());
    return true;
  });
  std::optional<timeline::Scope> check_input(std::in_place, "check input");  // every value finite, the scene's arrays
  const StateInput in = find_state(records);
  Scene scene = scene_from_attrs(in.attrs, in.nx, in.ny);
  scene.buoyancy_a = buoyancy_a;
  scene.buoyancy_b = buoyancy_b;
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
  std::string forcing = o.forcing.value_or("");
  if (forcing.empty()) {
    forcing = "react";
    if (in.attrs.contains("forcing") && in.attrs["forcing"].is_object() && in.attrs["forcing"].contains("type") &&
        in.attrs["forcing"]["type"].is_string())
      forcing = in.attrs["forcing"]["type"].get<std::string>();
    if (forcing != "react" && forcing != "none") fail_input("input attrs: forcing type must be react or none, got '" + forcing + "'");
  }
  p.forcing = forcing == "react" ? Forcing::react : Forcing::none;
  refuse_discarded_sources(in, p.forcing);
  check_input.reset();
  if (precision.empty()) precision = in.dtype == DType::f8 ? "fp64" : "fp32";
  if (!reason.empty()) {
    if (precision == "fp64") return run_scene<double>(cli, out, in, records, scene_records, scene, p, o);
    return run_scene<float>(cli, out, in, records, scene_records, scene, p, o);
  }
  if (precision == "fp64") return run_with<double>(cli, out, in, records, p, o);
  return run_with<float>(cli, out, in, records, p, o);
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("fluid-step", [&] { return numpipe::run(argc, argv); });
}
