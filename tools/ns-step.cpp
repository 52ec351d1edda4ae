// ns-step: advances a 3-D weakly compressible Navier-Stokes state (gen-input ns)
// by K Williamson RK3 steps and writes the final state plus diagnostics. The run in
// the stream lives in kernels/ns/io.hpp, the backend's choice in kernels/ns/dispatch.hpp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "common/run.hpp"
#include "common/strings.hpp"
#include "common/timeline.hpp"
#include "kernels/ns/coefficients.hpp"
#include "kernels/ns/dispatch.hpp"
#include "kernels/ns/io.hpp"
#include "kernels/ns/units.hpp"

namespace numpipe {
namespace {

// The options, declared once with their checks (run(), step 1): the run's plan and
// the solver's options in ns::RunOptions, the tool's own beside them.
struct NsOptions {
  ns::RunOptions o;
  std::optional<double> dt;
  std::string prec = "fp64", snapshot_fields = "rho,vx,vy,vz";
  std::optional<std::string> dims;
  bool strict = false, no_overlap = false, timing = false;
  std::optional<int> repeat;  // --repeat (common/run.hpp)
  // the reference of the force coefficients (kernels/ns/coefficients.hpp)
  std::optional<double> ref_area, ref_velocity, ref_length, spectrum_from;
  double ref_density = 1;
  std::optional<long long> from_snapshot;  // start from the input's snapshot of this step

  void declare(Cli& cli) {
    o.steps = 10;
    o.declare(cli, "Number of RK3 steps", "the fields as snap_<field> records", true, "Solver");
    cli.option("dt", &dt, "Fixed time step (default: from --cfl)", "DT", "Solver").positive();
    cli.option("cfl", &o.cfl, "Time step = CFL * min(h) / (max|v| + c), capped by the viscous limit", "C", "Solver");
    cli.option("order", &o.order,
               "Spatial order: 4 (4th-order central, 3rd-order upwind advection) or 2 (2nd-order central, 1st-order upwind)",
               "2|4", "Solver");
    cli.option("precision", &prec, "fp64 or fp32 (state written as f8 or f4)", "P", "Solver").one_of({"fp64", "fp32"});
    cli.flag("strict", &strict, "Refuse a --dt above the explicit stability estimate (else: a warning)", "Solver");
    declare_repeat(cli, &repeat, "Solver");  // the median step time, ps per point per sub-step and GB/s
    cli.option("dims", &dims, "MPI: ranks per axis of the decomposition (default: MPI_Dims_create chooses)", "PX,PY,PZ",
               "Solver");
    cli.flag("no-overlap", &no_overlap,
             "MPI: exchange the halos first, then update the whole block (default: the block's inner part is updated "
             "while the halos travel)",
             "Solver");
    cli.option("snapshot-fields", &snapshot_fields,
               "Fields of the snapshots: rho, vx, vy, vz, vorticity_x, vorticity_y, vorticity_z, vorticity_magnitude, "
               "q_criterion",
               "LIST", "Output");
    cli.option("from-snapshot", &from_snapshot,
               "Start from the input's snapshot of step STEP (snap_rho, snap_vx, snap_vy, snap_vz) instead of its final "
               "state: the run goes on as the one that wrote it, bit for bit",
               "STEP", "Input")
        .min(0);
    cli.option("ref-area", &ref_area,
               "Reference area of the force coefficients (a length in 2-D: the coefficients per unit span): writes "
               "body_coefficients (Cd, Cl, and Cs in 3-D, with their means), the Strouhal number, surface_pressure (Cp) "
               "and its time average surface_pressure_mean",
               "A", "Bodies")
        .positive();
    cli.option("ref-velocity", &ref_velocity, "Reference velocity of the coefficients (default: the free stream's speed)",
               "U", "Bodies")
        .positive();
    cli.option("ref-density", &ref_density,
               "Reference density of the coefficients, in the solver's units (the free stream's density is 1)", "RHO",
               "Bodies")
        .positive();
    cli.option("ref-length", &ref_length,
               "Length of the Strouhal number f L / U (default: the --ref-area length in 2-D, in 3-D the diameter of a "
               "disc of area --ref-area)",
               "L", "Bodies")
        .positive();
    cli.option("spectrum-from", &spectrum_from,
               "Time from which the lift's spectrum gives the Strouhal number and the means of the coefficients and of "
               "Cp are taken (default: the second half of the run)",
               "T",
               "Bodies");
    o.declare_tuning(cli);  // --chunk, --kernel and the environment (kernels/ns/tuning.hpp)
    cli.flag("timing", &timing, "", "Removed");  // the former name of --repeat 1, kept for scripts
  }

  // After cli.parse(): the values read into the run's options.
  void finish(const Cli& cli) {
    o.check(cli);
    if (timing && !cli.has("repeat")) repeat = 1;
    // One GPU per process: several GPUs take one MPI rank each.
    if (cli.has("devices") && cli.devices().size() > 1)
      fail_input("ns-step drives one GPU per process: for several GPUs run it under mpirun, one rank per GPU "
                 "(mpirun -np 4 ns-step --backend cuda ...), or give one device with --device N");
    o.dt = dt.value_or(0);
    o.fp32 = prec == "fp32";
    o.device = cli.has("devices") ? cli.devices().front() : cli.device();
    if (cli.threads() > 0) omp_set_num_threads(cli.threads());
    if (dims) {
      int got = std::sscanf(dims->c_str(), "%d,%d,%d", &o.dims[0], &o.dims[1], &o.dims[2]);
      if (got != 3 || o.dims[0] < 1 || o.dims[1] < 1 || o.dims[2] < 1)
        fail_input("--dims must be three positive integers PX,PY,PZ, got '" + *dims + "'");
    }
    o.overlap = !no_overlap;
    for (const char* name : {"ref-velocity", "ref-density", "ref-length", "spectrum-from"})
      if (cli.has(name) && !ref_area)
        fail_input(std::string("--") + name + " sets a reference of the force coefficients: give --ref-area too");
    for (const std::string& item : split_fields(snapshot_fields)) {
      if (!ns::is_snapshot_field(item))
        fail_input("--snapshot-fields: unknown field '" + item +
                   "' (rho, vx, vy, vz, vorticity_x, vorticity_y, vorticity_z, vorticity_magnitude, q_criterion)");
      if (std::find(o.snapshot_fields.begin(), o.snapshot_fields.end(), item) == o.snapshot_fields.end())
        o.snapshot_fields.push_back(item);
    }
    if (o.snapshot_fields.empty()) fail_input("--snapshot-fields names no field");
  }
};

// The output stream: written by every rank together (par::StreamOut), so that the
// snapshots and the final state never pass whole through rank 0.
struct NsWriter {
  par::StreamOut out;
  Shape shape;
  DType dtype;
  json snapshot_attrs;        // what every snapshot record says (its step, time and field added)
  std::vector<std::string> fields;  // the snapshots' fields (--snapshot-fields; the solver may hold more)
  double written_bytes = 0;  // the blocked records' payload (the whole arrays)

  void snapshot(const ns::BlockFields& b) {
    json a = snapshot_attrs;
    a["step"] = b.step;
    a["time"] = b.t;
    for (std::size_t f = 0; f < b.names.size(); ++f) {
      if (std::find(fields.begin(), fields.end(), b.names[f]) == fields.end()) continue;
      a["field"] = b.names[f];
      field("snap_" + b.names[f], a, b, b.data[f]);
    }
  }

  void field(const std::string& name, const json& attrs, const ns::BlockFields& b, const void* data) {
    const std::int64_t off[3] = {b.offset[0], b.offset[1], b.offset[2]}, cnt[3] = {b.n[0], b.n[1], b.n[2]};
    out.write_blocks(name, dtype, shape, attrs, off, cnt, data);
    written_bytes += double(shape[0]) * double(shape[1]) * double(shape[2]) * double(dtype_size(dtype));
  }
};

// body_coefficients (body_coefficients_<b> with several bodies) beside body_force, with
// their means over the window; surface_pressure from the final state and
// surface_pressure_mean over the window (rank 0: the surfaces gathered from every rank).
void write_coefficients(const Cli& cli, NsWriter& w, const ns::Problem& pr, const ns::Result& res, const ns::Reference& ref,
                        const std::vector<std::vector<double>>& forces, const std::vector<std::vector<double>>& coefficients,
                        const json& strouhal, double from, const std::vector<double>& cp, const ns::SurfaceMean* mean,
                        const json& input_attrs) {
  const int cols = ns::coefficient_columns(ref);
  for (std::size_t k = 0; k < coefficients.size(); ++k) {
    json a = ns::coefficient_attrs(ref);
    a["strouhal"] = strouhal[k == 0 ? "all" : std::to_string(k - 1)];
    a["mean"] = ns::mean_coefficients(coefficients[k], ref, from);
    a["body"] = k == 0 ? json("all") : json(static_cast<int>(k - 1));
    if (k > 0) a["spec"] = pr.bodies.list[k - 1].spec;
    const Shape shape{static_cast<std::int64_t>(forces[k].size() / 4), cols};
    require_finite(ExitCode::bad_input, "body_coefficients", shape, coefficients[k].data(),
                   "a coefficient overflowed: check --ref-area, --ref-velocity and --ref-density");
    w.out.write<double>(k == 0 ? "body_coefficients" : "body_coefficients_" + std::to_string(k - 1), shape,
                        coefficients[k].data(), cli.stamp(a, input_attrs));
  }
  const Shape shape{static_cast<std::int64_t>(cp.size() / ns::kSurfaceColumns), ns::kSurfaceColumns};
  require_finite(ExitCode::bad_input, "surface_pressure", shape, cp.data(), "the surface pressure overflowed");
  json a = ns::surface_pressure_attrs(ref);
  a["t"] = res.t;
  a["step"] = res.step;
  w.out.write<double>("surface_pressure", shape, cp.data(), cli.stamp(a, input_attrs));
  if (!mean) return;
  if (mean->rows == 0) {
    if (!cli.quiet())
      std::fprintf(stderr, "ns-step: note: no diagnostics row at or after t = %g: no surface_pressure_mean\n", from);
    return;
  }
  const std::vector<double> mean_cp = mean->mean();
  const std::vector<double> rows = ns::surface_rows(pr, mean->probe, mean_cp, ref);
  const Shape mshape{static_cast<std::int64_t>(rows.size() / ns::kSurfaceColumns), ns::kSurfaceColumns};
  require_finite(ExitCode::bad_input, "surface_pressure_mean", mshape, rows.data(), "the surface pressure overflowed");
  w.out.write<double>("surface_pressure_mean", mshape, rows.data(),
                      cli.stamp(ns::surface_mean_attrs(*mean, mean_cp, ref), input_attrs));
}

// The start of the window of the Strouhal number and the means: --spectrum-from, or the
// run's second half. Before the run it is known with --t-end or a fixed --dt only (else
// nullopt); after it (`reached`: the time the run reached), --steps with a CFL step too.
std::optional<double> mean_window_from(const NsOptions& no, const ns::Problem& pr,
                                       std::optional<double> reached = std::nullopt) {
  if (no.spectrum_from) return *no.spectrum_from;
  if (no.o.t_end) return pr.t0 + 0.5 * (*no.o.t_end - pr.t0);
  if (no.o.dt > 0) return pr.t0 + 0.5 * (static_cast<double>(no.o.steps) * no.o.dt);
  if (reached) return pr.t0 + 0.5 * (*reached - pr.t0);
  return std::nullopt;
}

// The state (same attrs, new t and step, history), the mask of --solid, the
// diagnostics and the forces on the bodies.
void write_results(const Cli& cli, NsWriter& w, const std::vector<Record>& records, const ns::Problem& pr,
                   const ns::Result& res, const NsOptions& no, json attrs, const json& input_attrs, Backend backend,
                   const std::optional<ns::Reference>& ref, const ns::SurfaceMean* mean) {
  const ns::RunOptions& o = no.o;
  const ns::Params& p = pr.params;
  const bool root = par::world().is_root();
  attrs["t"] = res.t;
  attrs["step"] = res.step;
  attrs["dt_last"] = res.dt_last;
  attrs = cli.stamp(attrs, input_attrs);
  ns::BlockFields b;
  for (int a = 0; a < 3; ++a) b.offset[a] = res.block_offset[a], b.n[a] = res.block_n[a];
  for (int v = 0; v < ns::kVars; ++v) {
    if (o.fp32) {
      std::vector<float> f(res.fields[v].begin(), res.fields[v].end());
      w.field(ns::kVarNames[v], attrs, b, f.data());
    } else {
      w.field(ns::kVarNames[v], attrs, b, res.fields[v].data());
    }
  }
  for (const Record& r : records)
    if (r.name == "solid") w.out.write(r.name, r.dtype, r.shape, r.payload.data(), cli.stamp(r.attrs, r.attrs));
  const std::vector<double> diag = ns::diagnostics_table(res);
  json dattrs = {{"kind", "ns.diagnostics"},
                 {"columns", std::vector<std::string>(ns::kDiagColumnNames, ns::kDiagColumnNames + ns::kDiagColumns)},
                 {"order", o.order},
                 {"precision", no.prec},
                 {"backend", backend_name(backend)},
                 {"re", p.re},
                 {"c", p.c}};
  // The coefficients of each body's forces and their Strouhal numbers (rank 0, --ref-area):
  // the total's first, then each body's when there are several.
  const std::size_t nb = pr.bodies.list.size();
  std::vector<std::vector<double>> forces, coefficients;
  json strouhal = json::object();
  const double from = *mean_window_from(no, pr, res.t);  // the window of the Strouhal number and the means
  if (pr.bodies.any() && root) {
    forces.push_back(ns::body_force_total(res.forces, nb));
    if (nb > 1)
      for (std::size_t k = 0; k < nb; ++k) forces.push_back(ns::body_force_of(res.forces, k));
    for (std::size_t k = 0; ref && k < forces.size(); ++k) {
      coefficients.push_back(ns::coefficient_table(forces[k], *ref));
      strouhal[k == 0 ? "all" : std::to_string(k - 1)] =
          ns::strouhal_attrs(ns::strouhal_from_lift(coefficients.back(), *ref, from));
    }
  }
  if (ref) dattrs["strouhal"] = strouhal;
  // the final state's surface pressure: every rank's block (its crossings gathered on rank 0)
  const std::vector<double> cp = ref ? ns::surface_pressure(pr, res, *ref) : std::vector<double>{};
  const Shape diag_shape{static_cast<std::int64_t>(res.diag.size()), ns::kDiagColumns};
  if (root)
    require_finite(ExitCode::bad_input, "diagnostics", diag_shape, diag.data(),
                   "a diagnostic overflowed: lower --dt or --cfl, or raise the resolution");
  w.out.write<double>("diagnostics", diag_shape, diag.data(), cli.stamp(dattrs, input_attrs));
  if (!pr.bodies.any() || !root) return;
  // body_force: the total over the bodies; body_force_<b>: each body's, with several
  const Shape force_shape{static_cast<std::int64_t>(res.forces.size()), 4};
  json fattrs = {{"kind", "ns.body_force"},
                 {"columns", {"t", "Fx", "Fy", "Fz"}},
                 {"reference_density", 1.0},
                 {"units", "the solver's: density 1 (the reference), lengths of the box, time of the run; a force over the "
                           "body's whole extent in the box"},
                 {"re", p.re},
                 {"c", p.c}};
  if (p.free_stream) fattrs["free_stream"] = {p.stream[0], p.stream[1], p.stream[2]};
  json all = fattrs;
  all["body"] = "all";
  w.out.write<double>("body_force", force_shape, forces[0].data(), cli.stamp(all, input_attrs));
  if (nb > 1)
    for (std::size_t k = 0; k < nb; ++k) {
      json a = fattrs;
      a["body"] = static_cast<int>(k);
      a["spec"] = pr.bodies.list[k].spec;
      w.out.write<double>("body_force_" + std::to_string(k), force_shape, forces[k + 1].data(), cli.stamp(a, input_attrs));
    }
  if (ref)
    write_coefficients(cli, w, pr, res, *ref, forces, coefficients, strouhal, from, cp, mean, input_attrs);
}

// The step and halo exchange times of --repeat's more runs, each run's first step left out (its warm-up).
struct MoreRuns {
  std::vector<double> step_seconds, exchange_seconds;
  void add(const ns::Result& r) {
    step_seconds.insert(step_seconds.end(), r.step_seconds.begin() + (r.step_seconds.size() > 1), r.step_seconds.end());
    exchange_seconds.insert(exchange_seconds.end(), r.exchange_seconds.begin() + (r.exchange_seconds.size() > 1),
                            r.exchange_seconds.end());
  }
};

// --repeat's timing lines on stderr (the more runs' medians), and the profile (rank 0).
void report_run(const Cli& cli, const ns::Problem& pr, const ns::Result& res, const MoreRuns& more, const NsOptions& no,
                Backend backend, const DeviceInfo& dev, double solve_wall, double written_bytes, double write_seconds) {
  const ns::RunOptions& o = no.o;
  const ns::Params& p = pr.params;
  const par::Group& world = par::world();
  const long long steps_run = res.step - pr.step0;
  const double points = double(p.n[0]) * double(p.n[1]) * double(p.n[2]);
  const double bytes_step = ns::bytes_per_step(points, o.fp32);
  std::vector<double> steady = res.step_seconds;
  if (steady.size() > 1) steady.erase(steady.begin());  // the first step is the warm-up
  const double med = median_of(steady), more_med = median_of(more.step_seconds);
  if (no.repeat && more_med > 0) {
    std::fprintf(stderr,
                 "ns-step: timing: %s %s order %d n=%lldx%lldx%lld steps=%d runs=%d median %.4f ms/step, %.2f ps/point/substep, "
                 "%.1f GB/s (model: 128 B/point in fp64, 64 in fp32), %.3f Gpoint-steps/s\n",
                 backend_name(backend), no.prec.c_str(), o.order, p.n[0], p.n[1], p.n[2], static_cast<int>(steps_run), *no.repeat,
                 more_med * 1e3, more_med / (3 * points) * 1e12, bytes_step / more_med * 1e-9, points / more_med * 1e-9);
    if (world.distributed()) {
      const auto d = ns::mpi_dims_used();
      std::fprintf(stderr, "ns-step: timing: %d MPI ranks, decomposition %dx%dx%d, halos %s\n", world.size(), d[0], d[1], d[2],
                   res.halo_path.c_str());
      const std::vector<double>& ex = more.exchange_seconds;
      if (!ex.empty())
        std::fprintf(stderr,
                     "ns-step: timing: halo exchange %.4f ms/step (median; the slowest rank's wait for packing, copies "
                     "and messages, %s)\n",
                     median_of(ex) * 1e3, o.overlap ? "the inner part computed meanwhile" : "no overlap");
    }
  }
  if (no.repeat && write_seconds > 0)
    std::fprintf(stderr, "ns-step: timing: fields written: %.3f GB (uncompressed) in %.3f s by %d rank%s, %.2f GB/s\n",
                 written_bytes * 1e-9, write_seconds, world.size(), world.size() > 1 ? "s" : "",
                 written_bytes / write_seconds * 1e-9);
  PhaseLog log;
  double total_steps = 0;
  for (double s : res.step_seconds) total_steps += s;
  const double flops_pt = ns::flops_per_point_substep(o.order);
  log.add("upload", res.upload_seconds, 4 * points * (o.fp32 ? 4 : 8));
  log.add("steps", total_steps, bytes_step * steps_run, flops_pt * 3 * points * steps_run);
  log.add("diagnostics", res.diag_seconds);
  log.add("download", res.download_seconds, 4 * points * (o.fp32 ? 4 : 8));
  // The solver's host work around its timed phases: allocations, graph set-up, waits, release.
  const double solver_rest = solve_wall - (res.upload_seconds + total_steps + res.diag_seconds + res.download_seconds);
  if (solver_rest > 0) log.add("solver set-up and release", solver_rest);
  // writing the output is the process phase "write output" (par::StreamOut)
  json params = {{"n", {p.n[0], p.n[1], p.n[2]}}, {"order", o.order}, {"precision", no.prec}, {"steps", steps_run},
                 {"dt_last", res.dt_last}, {"bc", ns::bc_spec(p.bc)}, {"median_step_seconds", med},
                 {"ps_per_point_substep", points > 0 ? med / (3 * points) * 1e12 : 0}};
  if (world.distributed()) {
    const auto d = ns::mpi_dims_used();
    params["ranks"] = world.size();
    params["decomposition"] = {d[0], d[1], d[2]};
    params["overlap"] = o.overlap;
    params["halo_path"] = res.halo_path;
    if (!res.exchange_seconds.empty()) params["halo_exchange_median_seconds_per_step"] = median_of(res.exchange_seconds);
  }
  write_profile_if_requested(cli, backend, dev, params, log);  // before the commit: a failure leaves no output
}

int run(int argc, char** argv) {
  Cli cli({"ns-step", "Advance a 3-D Navier-Stokes state (weakly compressible, RK3, 4th-order stencils)", "",
           "  gen-input ns --n 64 --init taylor-green-3d --re 1600 | ns-step --steps 200 --cfl 0.5 --diag-every 20 -o s.nps\n"
           "  inspect s.nps --array diagnostics --values 8",
           "the state after the steps, the diagnostics table and the snapshots"},
          kInput | kOutput | kCompute | kProfile | kMultiDevice | kMpi);
  // 1. The options, declared once with their checks.
  NsOptions no;
  no.declare(cli);
  // 2. Parse: every value checked, then read into the run's options.
  cli.parse(argc, argv);
  no.finish(cli);
  ns::RunOptions& o = no.o;
  par::Group& world = par::world();
  request_staging_early();  // pinned buffers for the upload, made with the context while the input is read
  const Backend backend = cli.backend();

  // 3. Read: the state's four fields and the bodies' mask only, one of each name; the
  // memory the run needs is checked from rho's header before any payload is read.
  std::unique_ptr<OutputFile> out_file;
  if (world.is_root()) out_file = std::make_unique<OutputFile>(cli.output());  // refuses a terminal before any work
  // (--from-snapshot: the snapshot's records of that step, named as a state)
  const RecordFilter state_records = no.from_snapshot ? ns::snapshot_records(*no.from_snapshot)
                                                      : keep_names_once({"rho", "vx", "vy", "vz", "solid"});
  auto records = world.read_input(cli, [&](const RecordHeader& h) {
    if (!state_records(h)) return false;
    if (h.name == "rho" || h.name == "snap_rho") ns::require_ns_memory(h, backend, o.fp32, o.device);
    return true;
  });
  if (no.from_snapshot) ns::snapshot_as_state(records, *no.from_snapshot);
  json input_attrs;
  std::optional<timeline::Scope> convert(std::in_place, "convert input");
  ns::Problem pr = ns::read_state(records, input_attrs);
  ns::validate(pr, o);
  ns::require_positive_density(pr);
  if (const std::string msg = ns::unstable_dt_message(pr, o); !msg.empty()) {  // warn, or refuse with --strict
    if (no.strict) fail_input(msg);
    if (!cli.quiet() && world.is_root()) std::fprintf(stderr, "ns-step: warning: %s\n", msg.c_str());
  }
  std::optional<ns::Reference> ref;  // --ref-area: the coefficients' reference
  if (no.ref_area) {
    if (!pr.bodies.any()) fail_input("--ref-area: the state has no bodies (gen-input ns --body or --solid)");
    ref = ns::make_reference(pr.params, *no.ref_area, no.ref_velocity, no.ref_density, no.ref_length);
  }
  convert.reset();

  // 4. The output's attrs, and the writer the snapshots go to.
  const ns::Params& p = pr.params;
  json state_attrs = input_attrs;
  state_attrs.erase("history");
  state_attrs["order"] = o.order;
  state_attrs["precision"] = no.prec;
  state_attrs["backend"] = backend_name(backend);
  const ns::Geometry g = ns::make_geometry(p);
  state_attrs["grid"] = {{"dims", {"x", "y", "z"}}, {"origin", {0.0, 0.0, 0.0}}, {"spacing", {g.h[0], g.h[1], g.h[2]}}};
  // a snapshot carries the state's attrs (its model, bodies, free stream), so that a run
  // can start from it (--from-snapshot); its time is attrs.time
  json snapshot_attrs = state_attrs;
  snapshot_attrs["kind"] = "ns.snapshot";
  for (const char* stale : {"t", "step", "dt_last"}) snapshot_attrs.erase(stale);
  NsWriter writer{par::StreamOut(world.is_root() ? out_file.get() : nullptr), Shape{p.n[0], p.n[1], p.n[2]},
                  o.fp32 ? DType::f4 : DType::f8, cli.stamp(snapshot_attrs, input_attrs), o.snapshot_fields};
  writer.out.set_units(ns::units());

  // 5. Solve: --repeat N runs the steps N more times from the input state first (no
  // snapshots, no progress; timed), then the run that is written (the same bits),
  // stepped by common/run.hpp's run_steps (the progress line, snapshots, diagnostics).
  const DeviceInfo dev = ns::prepare_backend(backend, o, cli.args().count("device") > 0 || cli.has("devices"));
  MoreRuns more;
  if (no.repeat) {
    ns::RunOptions warm = o;
    warm.snapshot_every = 0;
    warm.snapshot_dt = 0;
    for (int r = 0; r < *no.repeat; ++r) more.add(ns::solve(backend, pr, warm));
  }
  // The written run's wall time and the process phases inside it (snapshots written),
  // so that the profile can name what the solver's own phases leave out.
  const double wall0 = timeline::now(), covered0 = timeline::total_seconds();
  // --ref-area: the surface pressure summed at every diagnostics row of the window, when
  // the window is known before the run (the solver's snapshot fields then hold rho)
  std::optional<ns::SurfaceMean> mean;
  ns::RunOptions solver_options = o;
  if (ref) {
    if (const std::optional<double> from = mean_window_from(no, pr)) {
      mean.emplace();
      mean->probe = ns::make_surface_probe(pr);
      mean->from = *from;
      if (std::find(o.snapshot_fields.begin(), o.snapshot_fields.end(), "rho") == o.snapshot_fields.end())
        solver_options.snapshot_fields.push_back("rho");
    } else if (!cli.quiet() && world.is_root()) {
      std::fprintf(stderr,
                   "ns-step: note: no surface_pressure_mean: with --steps and a CFL time step the window is not known "
                   "before the run (give --spectrum-from T, --t-end or --dt)\n");
    }
  }
  std::unique_ptr<ns::Solver> solver = ns::make_solver(backend, pr, solver_options);
  ns::Stepper stepper{*solver, [&](const ns::BlockFields& b) { writer.snapshot(b); }, {}, 0};
  if (mean) {
    stepper.sample_from = mean->from;
    stepper.sample = [&](const ns::BlockFields& b) { mean->add(pr, b, *ref); };
    if (pr.t0 >= mean->from) mean->add(pr, solver->snapshot(pr.step0, pr.t0), *ref);  // the first row, made with the solver
  }
  const SteppedRun steps = run_steps(stepper, o, pr.t0, pr.step0, 0, "ns-step", 1, cli.quiet() || !world.is_root());
  const ns::Result res = solver->finish(pr.step0 + steps.steps, steps.time);
  solver.reset();
  const double solve_wall = timeline::now() - wall0 - (timeline::total_seconds() - covered0);
  // the device's work is done: its teardown beside the checks and the writing
  if (backend == Backend::cuda && !world.distributed()) release_devices_in_background({o.device});

  // 6. Check: every value of every rank's block finite.
  std::optional<timeline::Scope> check(std::in_place, "check output");
  const std::string bad = ns::first_non_finite_point(res);
  if (!par::all_ranks(bad.empty()))
    fail_input("the run blew up after step " + std::to_string(res.step) + (bad.empty() ? " (on another rank)" : ": " + bad) +
               ": lower --dt or --cfl, or raise the resolution");
  check.reset();

  // 7. Write (every rank), then the timing and the profile before the commit (rank 0).
  write_results(cli, writer, records, pr, res, no, state_attrs, input_attrs, backend, ref, mean ? &*mean : nullptr);
  writer.out.finish();
  const double write_seconds = par::max_all(writer.out.blocked_seconds());
  if (!world.is_root()) return 0;
  report_run(cli, pr, res, more, no, backend, dev, solve_wall, writer.written_bytes, write_seconds);
  out_file->commit();
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) { return numpipe::run_tool("ns-step", [&] { return numpipe::run(argc, argv); }); }
