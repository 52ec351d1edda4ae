// price: LocVolCalib option pricing (FinPar), one price per strike for every
// problem in the input stream.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "common/cli.hpp"
#include "common/parallel.hpp"
#include "common/profile.hpp"
#include "common/progress.hpp"
#include "kernels/price/price.hpp"

int main(int argc, char** argv) {
  using namespace numpipe;
  return run_tool("price", [&]() -> int {
    Cli cli({"price", "Price options by LocVolCalib (local volatility, Crank-Nicolson ADI), one price per strike", "",
             "  gen-input price --dataset large | price | verify --text-ref share/ref/finpar-locvolcalib/large.output.data "
             "--array price --range 0:128 --rtol 1e-4\n"
             "  gen-input price --dataset xl | price --backend cuda --devices all --profile run.prof | inspect",
             "the prices, one record per problem"},
            kInput | kOutput | kCompute | kProfile | kMultiDevice);
    cli.add("Price")("precision", "Arithmetic: fp64 (the reference) or fp32",
                     cxxopts::value<std::string>()->default_value("fp64"), "P")(
        "method", "adjoint (one backward pass of the transposed steps prices every strike; the default) or "
        "forward (FinPar's algorithm: every strike's grid rolled back, the reference); the same prices to "
        "rounding",
        cxxopts::value<std::string>()->default_value("adjoint"), "M")(
        "repeat", "Benchmark: after the run, solve every problem N more times; median solve times on stderr",
        cxxopts::value<int>()->default_value("0"), "N");
    cli.tuning()("gpu-group", "CUDA, forward method: strikes resident at once per device (0 = automatic)",
                 cxxopts::value<std::int64_t>()->default_value("0"), "N")(
        "gpu-kernel", "CUDA, forward method: x-phase kernel, auto, sweep (thread per column) or chunk (thread per "
        "column and 8 rows; numX <= 256)",
        cxxopts::value<std::string>()->default_value("auto"), "K");
    cli.parse(argc, argv);
    const int repeat = cli.get<int>("repeat");
    if (repeat < 0 || repeat > 1000) fail_input("--repeat must be in [0, 1000], got " + std::to_string(repeat));
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

    std::uint64_t my_strikes = 0;  // this rank's, for the progress line
    for (const auto& p : problems)
      my_strikes += par::split_evenly(static_cast<std::size_t>(p.outer), world.size(), world.rank()).size();
    Progress progress("price", "strikes", my_strikes, cli.quiet());
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
      const std::uint64_t strikes_before = progress.done();
      std::vector<double> repeat_seconds;  // --repeat
      if (backend == Backend::cpu) {
        auto solve = [&] {
          return method == price::Method::forward ? price::solve_cpu(setup, precision, range)
                                                  : price::solve_cpu_adjoint(setup, precision, range);
        };
        log.time("solve", bytes, flops, [&] {
          ActiveProgress active(progress);  // the forward method counts strikes as they finish
          prices = solve();
        });
        for (int r = 0; r < repeat; ++r) {
          HostTimer timer;
          solve();
          repeat_seconds.push_back(timer.seconds());
        }
      } else {
#ifdef NUMPIPE_HAVE_CUDA
        price::CudaRun run;
        HostTimer timer;
        const bool forward = method == price::Method::forward;
        auto solve = [&](price::CudaRun* r) {
          return forward ? price::solve_cuda(setup, precision, range, devices, group, r, gpu_kernel)
                         : price::prices_from_weights(
                               setup, precision, price::adjoint_weights_cuda(setup, precision, devices.front(), r), range);
        };
        prices = solve(&run);
        const double wall = timer.seconds();
        for (int r = 0; r < repeat; ++r) {
          price::CudaRun again;
          solve(&again);
          repeat_seconds.push_back(again.seconds);
        }
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
      progress.update(strikes_before + range.last - range.first);
      if (!repeat_seconds.empty() && world.is_root()) {
        std::sort(repeat_seconds.begin(), repeat_seconds.end());
        const std::size_t n = repeat_seconds.size();
        const double median = n % 2 ? repeat_seconds[n / 2] : 0.5 * (repeat_seconds[n / 2 - 1] + repeat_seconds[n / 2]);
        std::fprintf(stderr, "price: problem %zu (%lld strikes, %s, %s): %d runs after the first, median solve %.4f ms\n",
                     k, static_cast<long long>(p.outer), price::method_name(method), backend_name(backend), repeat,
                     median * 1e3);
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
    progress.finish();
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
