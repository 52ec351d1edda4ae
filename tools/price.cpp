// price: LocVolCalib option pricing (FinPar), one price per strike for every
// problem in the input stream; the user's contracts, Greeks, implied volatilities
// and calibration (kernels/price: the model, the backends, io.hpp the records).
#include <string>

#include "common/cli.hpp"
#include "common/run.hpp"
#include "kernels/price/calibrate.hpp"
#include "kernels/price/io.hpp"
#include "kernels/price/units.hpp"

int main(int argc, char** argv) {
  using namespace numpipe;
  return run_tool("price", [&]() -> int {
    // 1. The options, each declared once with its checks (applied by cli.parse).
    Cli cli({"price", "Price options under SABR-type stochastic volatility by Crank-Nicolson ADI (FinPar's LocVolCalib "
             "by default): prices, Greeks, implied volatilities, calibration to quotes", "",
             "  gen-input price --dataset large | price | verify --text-ref share/ref/finpar-locvolcalib/large.output.data "
             "--array price --range 0:128 --rtol 1e-4\n"
             "  gen-input price --dataset xl | price --backend cuda --devices all --profile run.prof | inspect",
             "the prices, one record per problem"},
            kInput | kOutput | kCompute | kProfile | kMultiDevice | kMpi);
    std::string precision = "fp64", method = "adjoint", gpu_kernel = "auto", fit = "alpha,nu,rho", start = "hagan";
    std::optional<int> repeat;
    std::int64_t gpu_group = 0;
    bool greeks = false, implied = false, calibrate = false;
    price::CalibrationOptions calibration;
    cli.option("precision", &precision, "Arithmetic: fp64 (the reference) or fp32", "P", "Price").one_of({"fp64", "fp32"});
    cli.option("method", &method,
               "adjoint (one backward pass of the transposed steps prices every strike; the default) or forward "
               "(FinPar's algorithm: every strike's grid rolled back, the reference); the same prices to rounding",
               "M", "Price")
        .one_of({"adjoint", "forward"});
    BatchRun::declare(cli, &repeat, "Price");
    cli.tuning_env("NUMPIPE_PRICE_GRAPH=1", "CUDA adjoint: launch each pass as a captured CUDA graph");
    cli.option("gpu-group", &gpu_group, "CUDA, forward method: strikes resident at once per device (0 = automatic)", "N",
               "Tuning")
        .min(0);
    cli.option("gpu-kernel", &gpu_kernel,
               "CUDA, forward method: x-phase kernel, auto, sweep (thread per column) or chunk (thread per column and 8 "
               "rows; numX <= 256)",
               "K", "Tuning")
        .one_of({"auto", "sweep", "chunk"});
    cli.flag("greeks", &greeks,
             "Also delta and gamma (with respect to s0) and vega (with respect to alpha) of every contract, from the "
             "grid's neighbours of the spot",
             "Results");
    cli.flag("implied-vol", &implied,
             "Also each price's Black implied volatility (zero rates; NaN with a warning where the price lies outside "
             "the no-arbitrage bounds)",
             "Results");
    cli.flag("calibrate", &calibrate,
             "Fit the model to the input's quote table (gen-input price --from-text) by Levenberg-Marquardt",
             "Calibration");
    cli.option("fit", &fit, "With --calibrate: the free parameters, a comma list of alpha, nu, rho, beta", "LIST",
               "Calibration")
        .check([](const std::string& v) { price::parse_fit(v); });
    cli.option("max-evaluations", &calibration.max_evaluations, "With --calibrate: at most this many pricing passes",
               "N", "Calibration")
        .min(1);
    cli.option("start", &start,
               "With --calibrate: hagan (fit Hagan's short-expiry formula to the quotes' implied volatilities first, "
               "and start from there when the model fits the quotes better there than at the input's parameters) or "
               "given (start from the input's parameters)",
               "S", "Calibration")
        .one_of({"hagan", "given"});
    // 2. Parse: every value checked; then the checks that join options.
    cli.parse(argc, argv);
    if (method == "adjoint" && (cli.has("gpu-group") || cli.has("gpu-kernel")))
      fail_input("--gpu-group and --gpu-kernel tune the forward method's kernels: add --method forward");
    if ((cli.has("fit") || cli.has("max-evaluations") || cli.has("start")) && !calibrate)
      fail_input("--fit, --max-evaluations and --start need --calibrate");
    calibration.fit = price::parse_fit(fit);
    calibration.hagan_start = start == "hagan";
    if (calibrate && !price::calibration_available())
      fail_resource("this build has no calibration: Eigen 3 (libeigen3-dev) was not found when it was built");
    // 3. The run: under MPI rank 0 reads and writes, each rank prices a contiguous
    // share of every problem's strikes on its own GPU.
    BatchRun run(cli, repeat);
    price::Engine engine{run.cuda(), run.devices().front(), price::parse_precision(precision),
                         price::parse_method(method), run.devices(), gpu_group, gpu_kernel};
    if (engine.method == price::Method::adjoint) engine.devices.resize(1);  // one pass over one grid: the first device

    // 4. Read: the problems, checked, and the memory each needs.
    const std::vector<Record> records = run.read(price::keep_input_record);
    const std::vector<price::Problem> problems = price::read_problems(records);  // bad input names the record
    for (const price::Problem& pr : problems) price::require_memory(pr.p, engine);
    if (problems.empty()) fail_input("the input holds no price.input record (make one with gen-input price)");
    if (engine.method == price::Method::forward && engine.cuda)
      for (const price::Problem& pr : problems)
        if (pr.p.rho != 0)
          fail_input("--method forward on the CUDA backend has no mixed term (rho = " + std::to_string(pr.p.rho) +
                     "): use the adjoint method (the default) or --backend cpu");

    // 5. Solve each problem: FinPar's strikes split over the ranks; the user's
    // contracts, Greeks, implied vols and calibration on rank 0 (one adjoint pass).
    std::uint64_t my_strikes = 0;  // this rank's, for the progress line
    for (const price::Problem& pr : problems) my_strikes += run.share(static_cast<std::size_t>(pr.p.outer)).size();
    Progress progress("price", "strikes", my_strikes, cli.quiet());
    PhaseLog log;
    run.start_devices();  // the CUDA contexts, once per process: not inside the first solve
    const DeviceInfo info = run.device_info();
    const Stamp stamp = [&](json attrs, const json& from) { return cli.stamp(std::move(attrs), from); };
    std::vector<Record> results;
    json params = json::array();
    for (std::size_t k = 0; k < problems.size(); ++k) {
      const price::Problem& pr = problems[k];
      if (calibrate || greeks || implied || !pr.finpar()) {
        if (!run.world().is_root()) continue;
        for (Record& r : calibrate ? price::calibrate_problem(pr, engine, calibration, stamp, cli.quiet(), log)
                                   : price::price_contracts(pr, engine, greeks, implied, stamp, cli.quiet(), log))
          results.push_back(std::move(r));
        params.push_back(price::params_json(pr.p));
        continue;
      }
      price::Setup setup;
      log.time("setup", 0, 0, [&] { setup = price::make_setup(pr.p); });
      const par::Range mine = run.share(static_cast<std::size_t>(pr.p.outer));
      const price::StrikeRange range{static_cast<std::int64_t>(mine.begin), static_cast<std::int64_t>(mine.end)};
      const std::uint64_t strikes_before = progress.done();
      price::StrikeSolve solved = price::price_strikes(setup, engine, range, run.world().distributed(), progress, log);
      run.repeat_runs(
          [&] {
            price::CudaRun again;
            price::solve_strikes(setup, engine, range, &again);
            return again.seconds;
          },
          "problem " + std::to_string(k) + " (" + std::to_string(pr.p.outer) + " strikes, " +
              price::method_name(engine.method) + ", " + backend_name(run.backend()) + ")");
      progress.update(strikes_before + static_cast<std::uint64_t>(range.last - range.first));
      solved.prices = run.gather(std::move(solved.prices));  // rank 0: every strike, in order
      if (!run.world().is_root()) continue;
      if (run.world().distributed()) solved.attrs["ranks"] = run.world().size();
      results.push_back(price::strike_prices_record(pr, setup, solved.prices, engine, solved.attrs, stamp));
      params.push_back(price::params_json(pr.p));
    }
    progress.finish();

    // 6. Write (rank 0): the records, the profile, the commit.
    if (run.world().is_root()) run.writer().set_units(price::units());
    return run.write(results,
                     {{"problems", params}, {"precision", precision}, {"ranks", run.world().size()}}, log, info);
  });
}
