// price: LocVolCalib option pricing (FinPar), one price per strike for every
// problem in the input stream.
#include <algorithm>
#include <cmath>
#include <memory>

#include "common/cli.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "kernels/price/price.hpp"

int main(int argc, char** argv) {
  using namespace numpipe;
  return run_tool("price", [&]() -> int {
    Cli cli({"price", "Price options by LocVolCalib (local volatility, Crank-Nicolson ADI), one price per strike", "",
             "  gen-input price --dataset large | price | verify --text-ref share/ref/finpar-locvolcalib/large.output.data "
             "--array price --range 0:128 --rtol 1e-4\n"
             "  gen-input price --dataset xl | price --backend cuda --devices all --profile run.prof | inspect"},
            kInput | kOutput | kCompute | kProfile | kMultiDevice);
    cli.add("Price")("precision", "Arithmetic: fp64 (the reference) or fp32",
                     cxxopts::value<std::string>()->default_value("fp64"), "P")(
        "method", "adjoint (one backward pass of the transposed steps prices every strike; the default) or "
        "forward (FinPar's algorithm: every strike's grid rolled back, the reference); the same prices to "
        "rounding",
        cxxopts::value<std::string>()->default_value("adjoint"), "M")(
        "gpu-group", "CUDA backend: strikes resident at once per device (tuning; 0 = automatic)",
        cxxopts::value<std::int64_t>()->default_value("0"), "N")(
        "gpu-kernel", "CUDA backend: x-phase kernel, auto, sweep (thread per column) or chunk (thread per column "
        "and 8 rows; numX <= 256) (tuning)",
        cxxopts::value<std::string>()->default_value("auto"), "K");
    cli.parse(argc, argv);
    const price::Precision precision = price::parse_precision(cli.get<std::string>("precision"));
    const price::Method method = price::parse_method(cli.get<std::string>("method"));
    const std::int64_t group = cli.get<std::int64_t>("gpu-group");
    if (group < 0) fail_input("--gpu-group must be >= 0, got " + std::to_string(group));
    const std::string gpu_kernel = cli.get<std::string>("gpu-kernel");
    if (gpu_kernel != "auto" && gpu_kernel != "sweep" && gpu_kernel != "chunk")
      fail_input("--gpu-kernel must be auto, sweep or chunk, got '" + gpu_kernel + "'");
    if (method == price::Method::adjoint && (cli.has("gpu-group") || cli.has("gpu-kernel")))
      fail_input("--gpu-group and --gpu-kernel tune the forward method's kernels: add --method forward");
    const Backend backend = cli.backend();
    // Under MPI (mpirun -np P price ...) rank 0 reads and writes; each rank prices a
    // contiguous share of every problem's strikes, on its own GPU (node-local rank).
    auto& world = par::world();
    std::vector<int> devices;
    if (backend == Backend::cuda) {
      devices = cli.devices();
      if (world.distributed() && !cli.has("devices"))
        devices = {par::default_device_for_rank(cli.device(), cli.args().count("device") > 0, cuda_device_count())};
      if (method == price::Method::adjoint) devices.resize(1);  // one pass over one grid: the first device
    }

    std::unique_ptr<OutputFile> out;
    if (world.is_root()) out = std::make_unique<OutputFile>(cli.output());  // refuses a terminal before any work
    std::vector<Record> records = world.read_input(cli);
    std::vector<price::Params> problems;
    std::vector<const Record*> sources;
    for (const Record& r : records) {
      problems.push_back(price::params_from_record(r));  // bad input names the record
      sources.push_back(&r);
    }
    if (problems.empty()) fail_input("the input holds no price.input record (make one with gen-input price)");

    PhaseLog log;
    if (backend == Backend::cuda)  // the CUDA context, once per process: not inside the first solve
      log.time("device init", 0, 0, [&] {
        for (int d : devices) init_cuda_context(d);
      });
    DeviceInfo info = backend == Backend::cuda ? query_cuda_device(devices.front()) : query_host_cpu();
    std::vector<Record> results;
    json params = json::array();
    for (std::size_t k = 0; k < problems.size(); ++k) {
      const price::Params& p = problems[k];
      price::Setup setup;
      log.time("setup", 0, 0, [&] { setup = price::make_setup(p); });
      std::vector<double> prices;
      json extra = json::object();
      const double flops = method == price::Method::forward ? price::flops_of(p) : price::adjoint_flops_of(p);
      // Bytes (docs/profile.md, "Traffic models"): forward, the two-pass-per-step model
      // (7 accesses per strike, grid point and step); adjoint, one grid's backward pass
      // by the same model plus a weight and a payoff per strike and x point.
      price::Params one_grid = p;
      one_grid.outer = 1;
      const double bytes = method == price::Method::forward
                               ? price::cuda_bytes_of(p, precision, "sweep")
                               : price::cuda_bytes_of(one_grid, precision, "sweep") + 16.0 * p.outer * p.num_x;
      const par::Range mine = par::split_evenly(static_cast<std::size_t>(p.outer), world.size(), world.rank());
      const price::StrikeRange range{static_cast<std::int64_t>(mine.begin), static_cast<std::int64_t>(mine.end)};
      if (backend == Backend::cpu) {
        log.time("solve", bytes, flops, [&] {
          prices = method == price::Method::forward ? price::solve_cpu(setup, precision, range)
                                                    : price::solve_cpu_adjoint(setup, precision, range);
        });
      } else {
#ifdef NUMPIPE_HAVE_CUDA
        price::CudaRun run;
        HostTimer timer;
        const bool forward = method == price::Method::forward;
        if (forward)
          prices = price::solve_cuda(setup, precision, range, devices, group, &run, gpu_kernel);
        else
          prices = price::prices_from_weights(
              setup, precision, price::adjoint_weights_cuda(setup, precision, devices.front(), &run), range);
        const double wall = timer.seconds();
        log.add("upload", run.upload_seconds);
        log.add("solve", run.seconds, forward ? price::cuda_bytes_of(p, precision, run.kernel) : bytes, flops);
        // Phases must not overlap (profile-report sums them): the rest of the wall time
        // is allocation, table set-up on the device, launches and the copy back.
        log.add("device setup and copies", std::max(0.0, wall - run.upload_seconds - run.seconds));
        // Under MPI the devices, group and memory are a rank's: not in the attrs.
        if (!forward) {
          if (!world.distributed()) extra = {{"devices", devices}};
        } else if (world.distributed()) {
          extra = {{"gpu_kernel", run.kernel}};
        } else {
          extra = {{"devices", devices},
                   {"gpu_group", run.group},
                   {"gpu_kernel", run.kernel},
                   {"device_bytes", run.device_bytes}};
        }
#else
        fail_resource("this build has no CUDA backend");
#endif
      }
      for (double v : prices)
        if (!std::isfinite(v)) fail_internal("a price came out non-finite; please report the input");
      if (world.distributed()) {
        prices = world.gather_concat(prices);  // rank 0: every strike, in order
        if (!world.is_root()) continue;
      }
      json attrs = {{"kind", price::kOutputKind},
                    {"params", price::params_json(p)},
                    {"precision", price::precision_name(precision)},
                    {"method", price::method_name(method)},
                    {"backend", backend_name(backend)},
                    {"strike", "0.001*o, o = 0..outer-1"},
                    {"ind_x", setup.ind_x},
                    {"ind_y", setup.ind_y}};
      for (auto& [key, value] : extra.items()) attrs[key] = value;
      if (world.distributed()) attrs["ranks"] = world.size();
      results.push_back(Record::from<double>("price", {p.outer}, prices.data(), cli.stamp(attrs, sources[k]->attrs)));
      params.push_back(price::params_json(p));
    }
    if (!world.is_root()) return 0;
    StreamWriter writer(*out);
    for (const Record& r : results) writer.write(r);
    writer.finish();
    out->commit();
    write_profile_if_requested(
        cli, backend, info,
        {{"problems", params}, {"precision", price::precision_name(precision)}, {"ranks", world.size()}}, log);
    return 0;
  });
}
