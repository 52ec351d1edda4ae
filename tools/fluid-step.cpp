// fluid-step: advances a stable-fluids state (seed 003, spec/fluid.md) by K steps
// on the CPU (OpenMP) or the GPU (CUDA) and writes the state, so that runs chain.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
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
    return make_cuda_solver<T>(p, fields, cli.device());
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
  const std::string what = "a fluid state of shape " + shape_string(d.shape) + " (" + std::to_string(static_cast<long long>(cells)) + " cells)";
  if (backend == Backend::cuda) {
    require_host_memory({what, cells, 6 * in + 6 * s, "cell"});
    require_device_memory(device, {what, cells, 7 * s, "cell", 64.0 * 1048576});
  } else {
    require_host_memory({what, cells, std::max(6 * in + 6 * s, 13 * s), "cell", 4.0 * 1048576 * omp_get_max_threads()});
  }
}

// Every value written must be finite (diagnose() checks d, u, v; this names the record and the cell).
template <class T>
void require_finite_fields(const Fields<T>& f, const std::string& prefix, bool all_six, std::int64_t step) {
  const Shape shape{f.n + 2, f.n + 2};
  const std::vector<T>* src[6] = {&f.d, &f.u, &f.v, &f.d0, &f.u0, &f.v0};
  for (int k = 0; k < (all_six ? 6 : 3); ++k)
    require_finite(ExitCode::bad_input, prefix + kFieldNames[k], shape, src[k]->data(),
                   "the state became non-finite by step " + std::to_string(step) + " (try a smaller --dt)");
}

template <class T>
int run_with(Cli& cli, OutputFile& out, const StateInput& in, std::vector<Record>& records, Params p, int steps, int every,
             int repeat) {
  const Backend backend = cli.backend();
  Fields<T> fields = load_fields<T>(in);
  std::vector<Record>().swap(records);  // converted: the input's payloads go (in.records is not used again)
  const DeviceInfo device = backend == Backend::cuda ? query_cuda_device(cli.device()) : query_host_cpu();
  // --repeat R: R-1 timed runs of all steps from the input state before the one
  // whose state is written (every run computes the same bits); the median counts.
  std::vector<double> times;
  for (int r = 1; r < repeat; ++r) times.push_back(make_solver<T>(backend, cli, p, fields)->advance(steps));
  PhaseLog log;
  std::unique_ptr<Solver<T>> solver;
  const double state_bytes = 6.0 * static_cast<double>(fields.cells()) * sizeof(T);
  log.time(backend == Backend::cuda ? "upload" : "set-up", state_bytes, 0, [&] { solver = make_solver<T>(backend, cli, p, fields); });

  const std::int64_t step0 = in.attrs.contains("step") && in.attrs["step"].is_number_integer()
                                 ? in.attrs["step"].get<std::int64_t>()
                                 : 0;
  json params = {{"n", p.n},
                 {"dt", p.dt},
                 {"diff", p.diff},
                 {"visc", p.visc},
                 {"iters", p.iters},
                 {"scheme", p.scheme == Scheme::seed ? "seed" : "stam"},
                 {"precision", sizeof(T) == 4 ? "fp32" : "fp64"}};
  json forcing = {{"type", p.forcing == Forcing::react ? "react" : "none"}, {"force", p.force}, {"source", p.source}};

  StreamWriter writer(out);
  Progress progress("fluid-step", static_cast<std::uint64_t>(steps), cli.quiet());
  double seconds = 0;
  for (int done = 0; done < steps;) {
    const int chunk = every > 0 ? std::min(every, steps - done) : steps - done;
    seconds += solver->advance(chunk);
    done += chunk;
    progress.update(static_cast<std::uint64_t>(done));
    if (every > 0 && done % every == 0) {
      solver->fetch(fields);  // the tool's copy serves as the snapshot's buffer (the final fetch overwrites it)
      require_finite_fields(fields, "snap_", false, step0 + done);
      json a = {{"kind", "fluid.snapshot"}, {"n", p.n}, {"step", step0 + done}};
      write_fields(writer, fields, a, "snap_", false);
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

  log.time(backend == Backend::cuda ? "download" : "fetch", state_bytes, 0, [&] { solver->fetch(fields); });
  require_finite_fields(fields, "", true, step0 + steps);
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
                 {"bytes_per_cell_step", bytes_per_cell_step(p, sizeof(T), backend == Backend::cuda)},
                 {"backend", backend_name(backend)}};
  // Timings and the kernels chosen online (by timing) differ between identical runs:
  // they go to the profile, and into the attrs only when benchmarking (--repeat), so
  // that the same input and options give the same output bytes.
  const json timing = {{"ns_per_cell_step", steps > 0 ? seconds * 1e9 / (cells * steps) : 0.0},
                       {"seconds", times},
                       {"kernels", solver->kernels()}};
  if (cli.has("repeat")) dattrs.update(timing);
  require_finite(ExitCode::bad_input, "diagnostics", Shape{4}, diag, "the state's totals overflow");
  writer.write<double>("diagnostics", Shape{4}, diag, dattrs);
  writer.finish();
  json prof = params;
  prof["steps"] = steps;
  prof.update(timing);
  write_profile_if_requested(cli, backend, device, prof, log);  // before the commit: a failure leaves no output
  out.commit();
  return 0;
}

int run(int argc, char** argv) {
  Cli cli({"fluid-step", "Advance a 2-D stable-fluids state (Stam's solver as seed 003 runs it)", "",
           "  gen-input fluid --n 1024 | fluid-step --steps 100 --diff 0.0001 --visc 0.0001 | render -o d.png\n"
           "  gen-input fluid --n 256 | fluid-step --steps 10 | fluid-step --steps 10   # = --steps 20, bit for bit"},
          kInput | kOutput | kCompute | kProfile);
  cli.add("Fluid")("steps", "Steps to run", cxxopts::value<int>()->default_value("1"), "K")(
      "scheme", "seed (the seed's step and buffers) or stam (Stam's vel_step + dens_step)",
      cxxopts::value<std::string>()->default_value("seed"), "S")(
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
      "repeat", "Benchmarking: run the steps R times from the input, report the median time",
      cxxopts::value<int>()->default_value("1"), "R");
  cli.parse(argc, argv);

  const int steps = cli.get<int>("steps");
  if (steps < 0) fail_input("--steps must be >= 0, got " + std::to_string(steps));
  const int iters = cli.get<int>("iters");
  if (iters < 1 || iters > 100000) fail_input("--iters must be in [1, 100000], got " + std::to_string(iters));
  const int every = cli.get<int>("snapshot-every");
  const int repeat = cli.get<int>("repeat");
  if (repeat < 1 || repeat > 1000) fail_input("--repeat must be in [1, 1000], got " + std::to_string(repeat));
  if (every < 0) fail_input("--snapshot-every must be >= 0, got " + std::to_string(every));
  const std::string scheme = cli.get<std::string>("scheme");
  if (scheme != "seed" && scheme != "stam") fail_input("--scheme must be seed or stam, got '" + scheme + "'");
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
  const Backend backend = cli.backend();  // refuse --backend cuda without a device before reading
  request_staging_early();  // pinned buffers for the upload, made with the context while the input is read

  OutputFile out(cli.output());
  // The six fields only (snapshots and diagnostics of a previous run are passed
  // over unread), one of each name; the memory the run needs is checked from the
  // header of 'd', before any payload is read.
  const RecordFilter state_records = keep_names_once({"d", "u", "v", "d0", "u0", "v0"});
  auto records = read_input(cli, [&](const RecordHeader& h) {
    if (!state_records(h)) return false;
    if (h.name == "d") require_fluid_memory(h, backend, precision, cli.device());
    return true;
  });
  const StateInput in = find_state(records);

  Params p;
  p.n = in.n;
  p.dt = dt;
  p.diff = diff;
  p.visc = visc;
  p.iters = iters;
  p.scheme = scheme == "seed" ? Scheme::seed : Scheme::stam;
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
  if (precision == "fp64") return run_with<double>(cli, out, in, records, p, steps, every, repeat);
  return run_with<float>(cli, out, in, records, p, steps, every, repeat);
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("fluid-step", [&] { return numpipe::run(argc, argv); });
}
