// ns-step: advances a 3-D weakly compressible Navier-Stokes state (gen-input ns)
// by K Williamson RK3 steps and writes the final state plus diagnostics.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "common/timeline.hpp"
#include "common/progress.hpp"
#include "common/run.hpp"
#include "common/workers.hpp"
#include "kernels/ns/ns.hpp"
#include "kernels/ns/units.hpp"

namespace numpipe {
namespace {

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

// The bodies (attrs.bodies: the specs gen-input ns --body took; a record `solid`: the
// mask of --solid) and the free stream (attrs.free_stream) of a state.
void read_bodies(const std::vector<Record>& records, const Record& r0, ns::Problem& pr) {
  const json& at = r0.attrs;
  if (at.contains("bodies")) {
    if (!at["bodies"].is_array()) fail_input("input record rho: attrs.bodies must be a list of body specs");
    for (const json& b : at["bodies"]) {
      if (!b.is_object() || !b.contains("spec") || !b["spec"].is_string())
        fail_input("input record rho: attrs.bodies holds an entry without a spec string: " + b.dump());
      const std::string spec = b["spec"].get<std::string>();
      if (spec == "solid") continue;  // the mask's entry: the record below
      pr.bodies.list.push_back(ns::parse_body(spec));
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
    ns::Body b;
    b.kind = ns::Body::Kind::mask;
    b.spec = "solid";
    pr.bodies.list.push_back(b);
  }
  ns::Params& p = pr.params;
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

ns::Problem read_state(std::vector<Record>& records, json& input_attrs) {
  ns::Problem pr;
  Record* rec[ns::kVars] = {nullptr, nullptr, nullptr, nullptr};
  for (Record& r : records)
    for (int v = 0; v < ns::kVars; ++v)
      if (r.name == ns::kVarNames[v]) {
        if (rec[v]) fail_input("input holds more than one record '" + r.name + "' (one state per stream)");
        rec[v] = &r;
      }
  if (rec[0] && (!rec[0]->attrs.is_object() || rec[0]->attrs.value("kind", "") != "ns.state"))
    fail_input("input record rho is not an ns.state (attrs.kind: " +
               (rec[0]->attrs.is_object() && rec[0]->attrs.contains("kind") ? rec[0]->attrs["kind"].dump() : std::string("none")) +
               ")");
  for (int v = 0; v < ns::kVars; ++v)
    if (!rec[v]) fail_input(std::string("input lacks the record '") + ns::kVarNames[v] + "' (make states with gen-input ns)");
  const Record& r0 = *rec[0];
  input_attrs = r0.attrs;
  if (r0.shape.size() != 3) fail_input("record rho must be 3-D [nx, ny, nz], got shape " + shape_string(r0.shape));
  for (int v = 0; v < ns::kVars; ++v) {
    const Record& r = *rec[v];
    if (r.shape != r0.shape)
      fail_input("record " + r.name + " has shape " + shape_string(r.shape) + ", rho " + shape_string(r0.shape));
    if (r.dtype != DType::f8 && r.dtype != DType::f4)
      fail_input("record " + r.name + " must be f8 or f4, got " + dtype_name(r.dtype));
  }
  ns::Params& p = pr.params;
  for (int a = 0; a < 3; ++a) p.n[a] = r0.shape[a];
  attr_triple(r0.attrs, "box", "rho", p.box);
  p.re = attr_number(r0.attrs, "re", "rho");
  p.c = attr_number(r0.attrs, "c", "rho");
  if (!r0.attrs.contains("bc") || !r0.attrs["bc"].is_string()) fail_input("input record rho lacks attrs.bc (a string such as x=periodic,y=noslip,z=freeslip)");
  ns::parse_bc(r0.attrs["bc"].get<std::string>(), p.bc);
  if (r0.attrs.contains("force")) attr_triple(r0.attrs, "force", "rho", p.force);
  if (r0.attrs.contains("kolmogorov") && r0.attrs["kolmogorov"].is_object()) {
    p.kol_amp = r0.attrs["kolmogorov"].value("amplitude", 0.0);
    p.kol_k = r0.attrs["kolmogorov"].value("k", 1);
  }
  read_bodies(records, r0, pr);
  pr.t0 = r0.attrs.contains("t") && r0.attrs["t"].is_number() ? r0.attrs["t"].get<double>() : 0.0;
  pr.step0 = r0.attrs.contains("step") && r0.attrs["step"].is_number_integer() ? r0.attrs["step"].get<long long>() : 0;
  for (int v = 0; v < ns::kVars; ++v) {
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
  for (std::int64_t n : rho.shape) padded *= static_cast<double>(n + 2 * ns::kGhost);
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

int run(int argc, char** argv) {
  Cli cli({"ns-step", "Advance a 3-D Navier-Stokes state (weakly compressible, RK3, 4th-order stencils)", "",
           "  gen-input ns --n 64 --init taylor-green-3d --re 1600 | ns-step --steps 200 --cfl 0.5 --diag-every 20 -o s.nps\n"
           "  inspect s.nps --array diagnostics --values 8",
           "the state after the steps, the diagnostics table and the snapshots"},
          kInput | kOutput | kCompute | kProfile | kMultiDevice | kMpi);
  // 1. The options, declared once with their checks.
  ns::RunOptions o;
  o.steps = 10;
  StepPlan plan;
  plan.steps = 10;
  plan.declare(cli, "Number of RK3 steps", "the fields as snap_<field> records", true, "Solver");
  std::optional<double> dt;
  cli.option("dt", &dt, "Fixed time step (default: from --cfl)", "DT", "Solver").positive();
  cli.option("cfl", &o.cfl, "Time step = CFL * min(h) / (max|v| + c), capped by the viscous limit", "C", "Solver");
  cli.option("order", &o.order,
             "Spatial order: 4 (4th-order central, 3rd-order upwind advection) or 2 (2nd-order central, 1st-order upwind)",
             "2|4", "Solver");
  std::string prec = "fp64";
  cli.option("precision", &prec, "fp64 or fp32 (state written as f8 or f4)", "P", "Solver").one_of({"fp64", "fp32"});
  bool strict = false, no_overlap = false, timing = false;
  cli.flag("strict", &strict, "Refuse a --dt above the explicit stability estimate (else: a warning)", "Solver");
  int repeat = 0;
  cli.option("repeat", &repeat,
             "Benchmark: run the steps N times from the input state (the runs before the last are warm-ups) and print "
             "the last run's median step time, ps per point per sub-step and GB/s on stderr",
             "N", "Solver")
      .range(0, 1000);
  std::optional<std::string> dims;
  cli.option("dims", &dims, "MPI: ranks per axis of the decomposition (default: MPI_Dims_create chooses)", "PX,PY,PZ",
             "Solver");
  cli.flag("no-overlap", &no_overlap,
           "MPI: exchange the halos first, then update the whole block (default: the block's inner part is updated "
           "while the halos travel)",
           "Solver");
  std::string snapshot_fields = "rho,vx,vy,vz";
  cli.option("snapshot-fields", &snapshot_fields,
             "Fields of the snapshots: rho, vx, vy, vz, vorticity_x, vorticity_y, vorticity_z, vorticity_magnitude, "
             "q_criterion",
             "LIST", "Output");
  cli.option("chunk", &o.chunk, "CUDA: x-planes per thread block (0: automatic)", "P", "Tuning").min(0);
  cli.option("kernel", &o.kernel,
             "CUDA: sub-step kernel variant: 4 the default (fp64: 6, fp32: 5); 0 32x8 tile, 1 32x8 with read-only "
             "loads, 2 32x16, 3 32x8 without a register cap, 5 32x16 with Q prefetched by cp.async, 6 32x16 "
             "shared-memory ring (planes and Q one plane ahead by cp.async, writes its own ghosts), 7 the ring with "
             "32x8 tiles, 8 one thread per point (what 2-D problems take)",
             "V", "Tuning")
      .check([](int k) {
        if (k < 0 || k > 8) fail_input("--kernel must be 0 to 8, got " + std::to_string(k));
      });
  cli.tuning_env("NUMPIPE_MPI_IPC=0", "under MPI on CUDA: no CUDA IPC between the ranks of a node");
  cli.tuning_env("NUMPIPE_MPI_GPU_AWARE=0", "under MPI on CUDA: no CUDA-aware MPI (halos through pinned host buffers)");
  cli.flag("timing", &timing, "", "Removed");  // the former name of --repeat 1, kept for scripts
  cli.parse(argc, argv);
  plan.check(cli);
  if (timing && !cli.has("repeat")) repeat = 1;
  // One GPU per process: several GPUs take one MPI rank each.
  if (cli.has("devices") && cli.devices().size() > 1)
    fail_input("ns-step drives one GPU per process: for several GPUs run it under mpirun, one rank per GPU "
               "(mpirun -np 4 ns-step --backend cuda ...), or give one device with --device N");

  o.steps = static_cast<int>(std::min<long long>(plan.steps, INT_MAX));
  o.t_end = plan.t_end;
  o.diag_every = static_cast<int>(std::min<long long>(plan.diag_every, INT_MAX));
  o.diag_dt = plan.diag_dt;
  o.snapshot_every = static_cast<int>(std::min<long long>(plan.snapshot_every, INT_MAX));
  o.snapshot_dt = plan.snapshot_dt;
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
  {
    std::stringstream ss(snapshot_fields);
    for (std::string item; std::getline(ss, item, ',');) {
      if (!ns::is_snapshot_field(item))
        fail_input("--snapshot-fields: unknown field '" + item +
                   "' (rho, vx, vy, vz, vorticity_x, vorticity_y, vorticity_z, vorticity_magnitude, q_criterion)");
      if (std::find(o.snapshot_fields.begin(), o.snapshot_fields.end(), item) == o.snapshot_fields.end())
        o.snapshot_fields.push_back(item);
    }
    if (o.snapshot_fields.empty()) fail_input("--snapshot-fields names no field");
  }
  par::Group& world = par::world();
  request_staging_early();  // pinned buffers for the upload, made with the context while the input is read
  const Backend backend = cli.backend();

  std::unique_ptr<OutputFile> out_file;
  if (world.is_root()) out_file = std::make_unique<OutputFile>(cli.output());  // refuses a terminal before any work
  // The state's four fields and the bodies' mask only, one of each name; the memory
  // the run needs is checked from rho's header before any payload is read.
  const RecordFilter state_records = keep_names_once({"rho", "vx", "vy", "vz", "solid"});
  auto records = world.read_input(cli, [&](const RecordHeader& h) {
    if (!state_records(h)) return false;
    if (h.name == "rho") require_ns_memory(h, backend, o.fp32, o.device);
    return true;
  });
  json input_attrs;
  std::optional<timeline::Scope> convert(std::in_place, "convert input");
  ns::Problem pr = read_state(records, input_attrs);
  ns::validate(pr, o);
  {  // the model divides by rho: a state with rho <= 0 (or NaN) is not one it can run
    const double* rho = pr.fields[0].data();
    const std::int64_t at = first_where(pr.fields[0].size(), [rho](std::int64_t i) { return !(rho[i] > 0); });
    if (at >= 0)
      fail_input("rho" + index_in(Shape{pr.params.n[0], pr.params.n[1], pr.params.n[2]}, static_cast<std::uint64_t>(at)) +
                 " is " + value_text(rho[at]) + ": the density must be positive everywhere");
  }

  if (o.dt > 0) {  // an explicit dt above the stability estimate: warn, or refuse with --strict
    const ns::Geometry g = ns::make_geometry(pr.params);
    double vmax = 0;  // a maximum: the same whatever the threads' order
    const double *fx = pr.fields[1].data(), *fy = pr.fields[2].data(), *fz = pr.fields[3].data();
    const std::int64_t count = static_cast<std::int64_t>(pr.fields[1].size());
#pragma omp parallel for reduction(max : vmax) schedule(static)
    for (std::int64_t i = 0; i < count; ++i) vmax = std::max(vmax, std::sqrt(fx[i] * fx[i] + fy[i] * fy[i] + fz[i] * fz[i]));
    const double limit = ns::stable_dt(g, o.order, vmax, pr.params.c, pr.params.re);
    if (o.dt > limit) {
      char msg[256];
      std::snprintf(msg, sizeof msg, "--dt %.6g exceeds the explicit stability estimate %.6g (c=%g, max|v|=%g, Re=%g)", o.dt,
                    limit, pr.params.c, vmax, pr.params.re);
      if (strict) fail_input(msg);
      if (!cli.quiet() && world.is_root()) std::fprintf(stderr, "ns-step: warning: %s\n", msg);
    }
  }
  convert.reset();

  // The output stream: written by every rank together (par::StreamOut), so that the
  // snapshots and the final state never pass whole through rank 0.
  const ns::Params& p = pr.params;
  const Shape shape = {p.n[0], p.n[1], p.n[2]};
  json state_attrs = input_attrs;
  state_attrs.erase("history");
  state_attrs["order"] = o.order;
  state_attrs["precision"] = prec;
  state_attrs["backend"] = backend_name(backend);
  {
    const ns::Geometry g = ns::make_geometry(p);
    state_attrs["grid"] = {{"dims", {"x", "y", "z"}}, {"origin", {0.0, 0.0, 0.0}}, {"spacing", {g.h[0], g.h[1], g.h[2]}}};
  }
  par::StreamOut writer(world.is_root() ? out_file.get() : nullptr);
  writer.set_units(ns::units());
  double written_bytes = 0;  // the blocked records' payload (the whole arrays)
  const DType field_dtype = o.fp32 ? DType::f4 : DType::f8;
  auto write_field = [&](const std::string& name, const json& attrs, const ns::BlockFields& b, const void* data) {
    const std::int64_t off[3] = {b.offset[0], b.offset[1], b.offset[2]}, cnt[3] = {b.n[0], b.n[1], b.n[2]};
    writer.write_blocks(name, field_dtype, shape, attrs, off, cnt, data);
    written_bytes += double(p.n[0]) * double(p.n[1]) * double(p.n[2]) * double(dtype_size(field_dtype));
  };
  json snap_base = {{"kind", "ns.snapshot"}, {"grid", state_attrs["grid"]}, {"re", p.re}, {"c", p.c}};
  snap_base = cli.stamp(snap_base, input_attrs);
  o.on_snapshot = [&](const ns::BlockFields& b) {
    json a = snap_base;
    a["step"] = b.step;
    a["time"] = b.t;
    for (std::size_t f = 0; f < b.names.size(); ++f) {
      a["field"] = b.names[f];
      write_field("snap_" + b.names[f], a, b, b.data[f]);
    }
  };
  // By steps, or with --t-end by thousandths of the time to run.
  const bool by_time = o.t_end.has_value();
  const double span = by_time ? *o.t_end - pr.t0 : 0;
  Progress progress("ns-step", by_time ? "thousandths of the time" : "steps",
                    by_time ? 1000 : static_cast<std::uint64_t>(o.steps), cli.quiet() || !world.is_root());
  o.on_step = [&](long long done, double t) {
    progress.update(by_time ? static_cast<std::uint64_t>(span > 0 ? std::clamp((t - pr.t0) / span, 0.0, 1.0) * 1000 : 1000)
                            : static_cast<std::uint64_t>(done));
  };
  // --repeat N: N-1 warm-up runs of the steps from the input state first (no snapshots,
  // no progress), then the run that is written and timed (every run gives the same bits).
  double solve_wall = 0;
  auto solve_repeated = [&](auto&& solve) {
    if (repeat > 1) {
      ns::RunOptions warm = o;
      warm.on_step = nullptr;
      warm.on_snapshot = nullptr;
      warm.snapshot_every = 0;
      warm.snapshot_dt = 0;
      std::swap(o, warm);
      for (int r = 1; r < repeat; ++r) solve();
      std::swap(o, warm);
    }
    // The written run's wall time and the process phases inside it (snapshots written),
    // so that the profile can name what the solver's own phases leave out.
    const double t0 = timeline::now(), covered0 = timeline::total_seconds();
    auto r = solve();
    solve_wall = timeline::now() - t0 - (timeline::total_seconds() - covered0);
    return r;
  };

  ns::Result res;
  DeviceInfo dev;
  if (backend == Backend::cuda) {
#ifdef NUMPIPE_HAVE_CUDA
    // under MPI, one GPU per rank from the node-local rank unless --device (or --devices) names one
    o.device = par::default_device_for_rank(o.device, cli.args().count("device") > 0 || cli.has("devices"),
                                            cuda_device_count());
    dev = query_cuda_device(o.device);
    res = solve_repeated([&] { return ns::solve_cuda(pr, o); });
    // the device's work is done: its teardown beside the checks and the writing
    if (!world.distributed()) release_devices_in_background({o.device});
#else
    fail_resource("this build has no CUDA backend");
#endif
  } else {
    dev = query_host_cpu();
    res = solve_repeated([&] { return ns::solve_cpu(pr, o); });
  }
  progress.finish();
  std::optional<timeline::Scope> check(std::in_place, "check output");
  std::string bad;  // this rank's first non-finite value, named by its point in the whole grid
  for (int v = 0; v < ns::kVars && bad.empty(); ++v) {
    const std::int64_t at = first_non_finite(res.fields[v].data(), res.fields[v].size());
    if (at < 0) continue;
    const std::int64_t nb[3] = {res.block_n[0], res.block_n[1], res.block_n[2]};
    const std::int64_t i = at / (nb[1] * nb[2]), j = at / nb[2] % nb[1], k = at % nb[2];
    bad = std::string(ns::kVarNames[v]) + "[" + std::to_string(res.block_offset[0] + i) + ", " +
          std::to_string(res.block_offset[1] + j) + ", " + std::to_string(res.block_offset[2] + k) + "] is " +
          value_text(res.fields[v][static_cast<std::size_t>(at)]);
  }
  if (!par::all_ranks(bad.empty()))
    fail_input("the run blew up after step " + std::to_string(res.step) + (bad.empty() ? " (on another rank)" : ": " + bad) +
               ": lower --dt or --cfl, or raise the resolution");
  check.reset();

  // Output: the state (same attrs, new t and step, history), the mask of --solid, the
  // diagnostics and the forces on the bodies.
  json attrs = state_attrs;
  attrs["t"] = res.t;
  attrs["step"] = res.step;
  attrs["dt_last"] = res.dt_last;
  attrs = cli.stamp(attrs, input_attrs);
  {
    ns::BlockFields b;
    for (int a = 0; a < 3; ++a) b.offset[a] = res.block_offset[a], b.n[a] = res.block_n[a];
    for (int v = 0; v < ns::kVars; ++v) {
      if (o.fp32) {
        std::vector<float> f(res.fields[v].begin(), res.fields[v].end());
        write_field(ns::kVarNames[v], attrs, b, f.data());
      } else {
        write_field(ns::kVarNames[v], attrs, b, res.fields[v].data());
      }
    }
  }
  for (const Record& r : records)
    if (r.name == "solid") writer.write(r.name, r.dtype, r.shape, r.payload.data(), cli.stamp(r.attrs, r.attrs));
  std::vector<double> diag;
  for (const auto& row : res.diag) diag.insert(diag.end(), row.v, row.v + ns::kDiagColumns);
  json dattrs = {{"kind", "ns.diagnostics"},
                 {"columns", std::vector<std::string>(ns::kDiagColumnNames, ns::kDiagColumnNames + ns::kDiagColumns)},
                 {"order", o.order},
                 {"precision", prec},
                 {"backend", backend_name(backend)},
                 {"re", p.re},
                 {"c", p.c}};
  const Shape diag_shape{static_cast<std::int64_t>(res.diag.size()), ns::kDiagColumns};
  if (world.is_root())
    require_finite(ExitCode::bad_input, "diagnostics", diag_shape, diag.data(),
                   "a diagnostic overflowed: lower --dt or --cfl, or raise the resolution");
  writer.write<double>("diagnostics", diag_shape, diag.data(), cli.stamp(dattrs, input_attrs));
  if (pr.bodies.any() && world.is_root()) {
    // body_force: the total over the bodies; body_force_<b>: each body's, with several
    const std::size_t nb = pr.bodies.list.size(), rows = res.forces.size();
    json fattrs = {{"kind", "ns.body_force"},
                   {"columns", {"t", "Fx", "Fy", "Fz"}},
                   {"reference_density", 1.0},
                   {"units", "the solver's: density 1 (the reference), lengths of the box, time of the run; a force over the "
                             "body's whole extent in the box"},
                   {"re", p.re},
                   {"c", p.c}};
    if (p.free_stream) fattrs["free_stream"] = {p.stream[0], p.stream[1], p.stream[2]};
    std::vector<double> total(rows * 4);
    for (std::size_t r = 0; r < rows; ++r) {
      total[r * 4] = res.forces[r].t;
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (std::size_t b = 0; b < nb; ++b) sum += res.forces[r].f[3 * b + c];
        total[r * 4 + 1 + c] = sum;
      }
    }
    json all = fattrs;
    all["body"] = "all";
    writer.write<double>("body_force", Shape{static_cast<std::int64_t>(rows), 4}, total.data(), cli.stamp(all, input_attrs));
    if (nb > 1)
      for (std::size_t b = 0; b < nb; ++b) {
        std::vector<double> one(rows * 4);
        for (std::size_t r = 0; r < rows; ++r) {
          one[r * 4] = res.forces[r].t;
          for (int c = 0; c < 3; ++c) one[r * 4 + 1 + c] = res.forces[r].f[3 * b + c];
        }
        json a = fattrs;
        a["body"] = static_cast<int>(b);
        a["spec"] = pr.bodies.list[b].spec;
        writer.write<double>("body_force_" + std::to_string(b), Shape{static_cast<std::int64_t>(rows), 4}, one.data(),
                             cli.stamp(a, input_attrs));
      }
  }
  writer.finish();
  const double write_seconds = par::max_all(writer.blocked_seconds());
  if (!world.is_root()) return 0;

  // Timing and profile.
  const long long steps_run = res.step - pr.step0;
  const double points = double(p.n[0]) * double(p.n[1]) * double(p.n[2]);
  const double bytes_step = 3 * points * ns::bytes_per_point_substep(o.fp32);
  std::vector<double> steady = res.step_seconds;
  if (steady.size() > 1) steady.erase(steady.begin());  // the first step is the warm-up
  const double med = median_of(steady);
  if (repeat > 0 && med > 0) {
    std::fprintf(stderr,
                 "ns-step: timing: %s %s order %d n=%lldx%lldx%lld steps=%d median %.4f ms/step, %.2f ps/point/substep, "
                 "%.1f GB/s (model: 128 B/point in fp64, 64 in fp32), %.3f Gpoint-steps/s\n",
                 backend_name(backend), prec.c_str(), o.order, p.n[0], p.n[1], p.n[2], static_cast<int>(steps_run), med * 1e3,
                 med / (3 * points) * 1e12, bytes_step / med * 1e-9, points / med * 1e-9);
    if (world.distributed()) {
      const auto d = ns::mpi_dims_used();
      std::fprintf(stderr, "ns-step: timing: %d MPI ranks, decomposition %dx%dx%d, halos %s\n", world.size(), d[0], d[1], d[2],
                   res.halo_path.c_str());
      std::vector<double> ex = res.exchange_seconds;
      if (ex.size() > 1) ex.erase(ex.begin());
      if (!ex.empty())
        std::fprintf(stderr,
                     "ns-step: timing: halo exchange %.4f ms/step (median; the slowest rank's wait for packing, copies "
                     "and messages, %s)\n",
                     median_of(ex) * 1e3, o.overlap ? "the inner part computed meanwhile" : "no overlap");
    }
  }
  if (repeat > 0 && write_seconds > 0)
    std::fprintf(stderr, "ns-step: timing: fields written: %.3f GB (uncompressed) in %.3f s by %d rank%s, %.2f GB/s\n",
                 written_bytes * 1e-9, write_seconds, world.size(), world.size() > 1 ? "s" : "",
                 written_bytes / write_seconds * 1e-9);
  PhaseLog log;
  double total_steps = 0;
  for (double s : res.step_seconds) total_steps += s;
  // ~ flops per point per sub-step of the order-4 right-hand side and update (counted from rhs()).
  const double flops_pt = o.order == 4 ? 190 : 120;
  log.add("upload", res.upload_seconds, 4 * points * (o.fp32 ? 4 : 8));
  log.add("steps", total_steps, bytes_step * steps_run, flops_pt * 3 * points * steps_run);
  log.add("diagnostics", res.diag_seconds);
  log.add("download", res.download_seconds, 4 * points * (o.fp32 ? 4 : 8));
  // The solver's host work around its timed phases: allocations, graph set-up, waits, release.
  const double solver_rest = solve_wall - (res.upload_seconds + total_steps + res.diag_seconds + res.download_seconds);
  if (solver_rest > 0) log.add("solver set-up and release", solver_rest);
  // writing the output is the process phase "write output" (par::StreamOut)
  json params = {{"n", {p.n[0], p.n[1], p.n[2]}}, {"order", o.order}, {"precision", prec}, {"steps", steps_run},
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
  out_file->commit();
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) { return numpipe::run_tool("ns-step", [&] { return numpipe::run(argc, argv); }); }
