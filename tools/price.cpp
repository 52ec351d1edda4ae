// price: LocVolCalib option pricing (FinPar), one price per strike for every
// problem in the input stream.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdio>
#include <memory>

#include <omp.h>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/parallel.hpp"
#include "common/labels.hpp"
#include "common/profile.hpp"
#include "common/progress.hpp"
#include "common/timeline.hpp"
#include "kernels/price/black.hpp"
#include "kernels/price/calibrate.hpp"
#include "kernels/price/price.hpp"
#include "kernels/price/units.hpp"

namespace {
using namespace numpipe;

void warn(const std::string& message) { std::fprintf(stderr, "price: %s\n", message.c_str()); }

// The shape and dims of a result over the problem's contracts: list mode [Q] over
// quotes, else [S] for one maturity, [M, S] for several.
struct Layout {
  Shape shape;
  json dims;
};
Layout layout_of(const price::Problem& pr) {
  if (pr.list()) return {{static_cast<std::int64_t>(pr.quotes.size())}, {"quote"}};
  if (pr.maturities.size() > 1)
    return {{static_cast<std::int64_t>(pr.maturities.size()), pr.p.outer}, {"maturity", "strike"}};
  return {{pr.p.outer}, {"strike"}};
}

// The coordinate records: strike (and maturity), or per quote strike, maturity,
// option type and the quote.
void coordinate_records(const Cli& cli, const price::Problem& pr, std::vector<Record>& out) {
  const json& from = pr.source->attrs;
  if (pr.list()) {
    const std::int64_t q = static_cast<std::int64_t>(pr.quotes.size());
    std::vector<double> strike, maturity, quote;
    std::vector<std::string> type;
    for (const price::Quote& qt : pr.quotes) {
      strike.push_back(qt.strike);
      maturity.push_back(qt.maturity);
      quote.push_back(qt.quote);
      type.push_back(qt.put ? "put" : "call");
    }
    out.push_back(Record::from<double>("strike", {q}, strike.data(), cli.stamp({{"dims", {"quote"}}}, from)));
    out.push_back(Record::from<double>("maturity", {q}, maturity.data(), cli.stamp({{"dims", {"quote"}}, {"units", "years"}}, from)));
    Record labels = make_labels("option", type, "quote", "type");
    labels.attrs["dims"] = {"quote"};
    out.push_back(std::move(labels));
    if (pr.quote_kind != price::QuoteKind::none)
      out.push_back(Record::from<double>("quote", {q}, quote.data(),
                                         cli.stamp({{"dims", {"quote"}}, {"quote_kind", price::quote_kind_name(pr.quote_kind)}}, from)));
    return;
  }
  if (pr.user_strikes)
    out.push_back(Record::from<double>("strike", {pr.p.outer}, pr.strikes.data(), cli.stamp({{"dims", {"strike"}}}, from)));
  if (pr.maturities.size() > 1)
    out.push_back(Record::from<double>("maturity", {static_cast<std::int64_t>(pr.maturities.size())},
                                       pr.maturities.data(), cli.stamp({{"dims", {"maturity"}}, {"units", "years"}}, from)));
}

std::vector<Record> price_contracts(const Cli& cli, const price::Problem& pr, const price::Engine& engine, bool greeks,
                                    bool implied, PhaseLog& log) {
  price::Setup setup;
  log.time("setup", 0, 0, [&] { setup = price::make_setup(pr.p, pr.maturities); });
  const std::vector<price::Contract> contracts = pr.contracts();
  const std::vector<price::Functional> fs = price::functionals_of(setup, greeks);
  std::vector<double> values;
  {
    const bool forward = engine.method == price::Method::forward;
    Progress progress("price", forward ? "contracts" : "steps",
                      forward ? contracts.size() : fs.size() * static_cast<std::uint64_t>(pr.p.num_t - 1), cli.quiet());
    HostTimer timer;
    price::EvalTiming timing;
    values = price::evaluate(setup, contracts, fs, engine, &timing,
                             [&](std::int64_t done, std::int64_t) { progress.update(static_cast<std::uint64_t>(done)); });
    progress.finish();
    const double wall = timer.seconds();
    const double flops = static_cast<double>(fs.size()) * (engine.method == price::Method::adjoint
                                                               ? price::adjoint_flops_of(pr.p)
                                                               : price::flops_of(pr.p));
    // Bytes by the traffic model of FinPar's path (docs/profile.md): the adjoint one
    // grid's pass per functional (two solves of each kind a step with the mixed term),
    // plus a weight and a payoff per contract and x point; forward, every contract's grid
    price::Params one_grid = pr.p;
    one_grid.outer = 1;
    price::Params all = pr.p;
    all.outer = static_cast<std::int64_t>(contracts.size());
    const double bytes =
        engine.method == price::Method::adjoint
            ? static_cast<double>(fs.size()) * (pr.p.rho != 0 ? 2.0 : 1.0) *
                      price::cuda_bytes_of(one_grid, engine.precision, "sweep") +
                  16.0 * static_cast<double>(contracts.size() * fs.size()) * static_cast<double>(pr.p.num_x)
            : static_cast<double>(fs.size() > 0) * price::cuda_bytes_of(all, engine.precision, "sweep");
    if (engine.cuda) {
      log.add("upload", timing.upload_seconds);
      log.add("solve", timing.solve_seconds, bytes, flops);
      log.add("device setup and copies", std::max(0.0, wall - timing.upload_seconds - timing.solve_seconds));
    } else {
      log.add("solve", wall, bytes, flops);
    }
  }
  const std::size_t count = contracts.size();
  for (std::size_t c = 0; c < count; ++c)
    if (!std::isfinite(values[c])) fail_internal("a price came out non-finite; please report the input");
  // The error estimate (sinh grid, the user's contracts): the prices again on the grid
  // coarser by 2 each way; price_error = |difference| / 3 (Richardson, second order).
  std::vector<double> errors;
  if (pr.p.grid == price::GridKind::sinh) {
    const price::Setup coarse = price::make_setup(price::coarser_by_two(pr.p, setup.maturities.size()), pr.maturities);
    HostTimer timer;
    const std::vector<double> rough = price::evaluate(coarse, contracts, price::functionals_of(coarse, false), engine);
    log.add("error estimate", timer.seconds());
    errors.resize(count);
    for (std::size_t c = 0; c < count; ++c) errors[c] = std::fabs(values[c] - rough[c]) / 3.0;
  }
  const double tolerance = (pr.tolerance > 0 ? pr.tolerance : price::kDefaultTolerance) * pr.p.s0;
  const price::BoundsReport bounds = price::check_bounds(setup, contracts, values.data(), tolerance);
  if (bounds.violations)
    warn(std::to_string(bounds.violations) + " of " + std::to_string(count) +
         " prices lie outside the no-arbitrage bounds (0 or the intrinsic value below, s0 for calls or the strike "
         "for puts above) by more than the tolerance " + std::to_string(tolerance) + "; the largest by " +
         std::to_string(bounds.largest) + " (" + bounds.first + "): refine the grid (a smaller --tolerance in "
         "gen-input price)");
  std::size_t over = 0;
  double largest_error = 0;
  for (double e : errors) {
    over += e > tolerance;
    largest_error = std::max(largest_error, e);
  }
  if (over)
    warn(std::to_string(over) + " of " + std::to_string(count) + " price_error estimates exceed the tolerance " +
         std::to_string(tolerance) + " (largest " + std::to_string(largest_error) +
         "): refine the grid (a smaller --tolerance, or larger --num-x/--num-y/--num-t in gen-input price)");
  const Layout lay = layout_of(pr);
  std::vector<Record> out;
  coordinate_records(cli, pr, out);
  json attrs = {{"kind", price::kOutputKind},
                {"params", price::params_json(pr.p)},
                {"precision", price::precision_name(engine.precision)},
                {"method", price::method_name(engine.method)},
                {"backend", engine.cuda ? "cuda" : "cpu"},
                {"dims", lay.dims},
                {"ind_x", setup.ind_x},
                {"ind_y", setup.ind_y}};
  if (!pr.list()) attrs["option"] = pr.put ? "put" : "call";
  if (!pr.user_strikes && !pr.list()) attrs["strike"] = "0.001*o, o = 0..outer-1";
  if (setup.levels.size() > 1) attrs["maturity_levels"] = setup.levels;
  attrs["tolerance"] = tolerance;
  attrs["bound_violations"] = bounds.violations;
  if (bounds.violations) attrs["bound_violation_largest"] = bounds.largest;
  if (!errors.empty()) {
    attrs["price_error_largest"] = largest_error;
    attrs["price_error_over_tolerance"] = over;
  }
  static const char* units[] = {"price", "price per unit of s0", "price per unit of s0 squared", "price per unit of alpha"};
  for (std::size_t f = 0; f < fs.size(); ++f) {
    json a = attrs;
    a["quantity"] = units[f];
    out.push_back(Record::from<double>(fs[f].name, lay.shape, values.data() + f * count, cli.stamp(a, pr.source->attrs)));
    if (f == 0 && !errors.empty()) {
      json e = attrs;
      e["quantity"] = "estimated absolute error of price: |price - price on the grid coarser by 2 each way| / 3";
      out.push_back(Record::from<double>("price_error", lay.shape, errors.data(), cli.stamp(e, pr.source->attrs)));
    }
  }
  if (implied) {
    std::vector<double> vols(count);
    std::size_t outside = 0, first = 0;
    for (std::size_t c = 0; c < count; ++c) {
      const double t = setup.maturities[contracts[c].maturity];
      vols[c] = price::implied_vol(values[c], pr.p.s0, contracts[c].strike, t, contracts[c].put);
      if (std::isnan(vols[c]) && outside++ == 0) first = c;
    }
    if (outside)
      warn("implied_vol: " + std::to_string(outside) + " of " + std::to_string(count) +
           " prices lie outside Black's no-arbitrage bounds; their implied_vol is NaN (first: " +
           (contracts[first].put ? "put" : "call") + " strike " + std::to_string(contracts[first].strike) +
           ", maturity " + std::to_string(setup.maturities[contracts[first].maturity]) + ", price " +
           std::to_string(values[first]) + ")");
    json a = attrs;
    a["quantity"] = "Black implied volatility, zero rates, forward s0";
    a["nan_count"] = outside;
    out.push_back(Record::from<double>("implied_vol", lay.shape, vols.data(), cli.stamp(a, pr.source->attrs)));
    if (!errors.empty()) {
      // the price's error estimate carried to the volatility to first order: price_error / vega
      std::vector<double> vol_errors(count);
      for (std::size_t c = 0; c < count; ++c)
        vol_errors[c] = errors[c] / price::black_vega(pr.p.s0, contracts[c].strike,
                                                      setup.maturities[contracts[c].maturity], vols[c]);
      json e = attrs;
      e["quantity"] = "estimated absolute error of implied_vol: price_error / Black's vega (NaN where implied_vol is)";
      out.push_back(Record::from<double>("implied_vol_error", lay.shape, vol_errors.data(), cli.stamp(e, pr.source->attrs)));
    }
  }
  return out;
}

std::vector<Record> calibrate_problem(const Cli& cli, const price::Problem& pr, const price::Engine& engine,
                                      const price::CalibrationOptions& options, PhaseLog& log) {
  price::CalibrationResult fit;
  {
    Progress progress("price", "pricing passes", static_cast<std::uint64_t>(options.max_evaluations), cli.quiet());
    HostTimer timer;
    fit = price::calibrate(pr, options, engine, [&](int done) { progress.update(static_cast<std::uint64_t>(done)); });
    progress.finish();
    log.add("calibrate", timer.seconds(), 0.0,
            static_cast<double>(fit.evaluations) * price::adjoint_flops_of(pr.p));
  }
  if (!fit.converged)
    warn("calibration " + fit.status + " after " + std::to_string(fit.log.size() - 1) + " iterations and " +
         std::to_string(fit.evaluations) + " pricing passes; the record 'calibrated' holds the last iterate "
         "(attrs converged: false)");
  std::vector<Record> out;
  json log_rows = json::array();
  std::vector<double> table;
  for (const price::CalibrationIteration& it : fit.log) {
    table.push_back(it.iteration);
    table.push_back(it.evaluations);
    table.push_back(it.rms);
    for (double v : it.values) table.push_back(v);
  }
  json columns = {"iteration", "evaluations", "rms"};
  for (const std::string& n : fit.names) columns.push_back(n);
  json attrs = {{"kind", "price.calibrated"},
                {"parameters", fit.names},
                {"start", fit.start},
                {"started_from", fit.started_from},
                {"hagan_start", fit.hagan_values},
                {"standard_error", fit.standard_error},
                {"converged", fit.converged},
                {"status", fit.status},
                {"iterations", fit.log.empty() ? 0 : static_cast<int>(fit.log.size()) - 1},
                {"evaluations", fit.evaluations},
                {"rms", fit.rms},
                {"rms_units", "implied volatility (weighted, to first order)"},
                {"params", price::params_json(fit.fitted)},
                {"quote_kind", price::quote_kind_name(pr.quote_kind)},
                {"precision", price::precision_name(engine.precision)},
                {"backend", engine.cuda ? "cuda" : "cpu"}};
  out.push_back(Record::from<double>("calibrated", {static_cast<std::int64_t>(fit.values.size())}, fit.values.data(),
                                     cli.stamp(attrs, pr.source->attrs)));
  coordinate_records(cli, pr, out);
  const std::int64_t q = static_cast<std::int64_t>(pr.quotes.size());
  json common = {{"dims", {"quote"}}, {"params", price::params_json(fit.fitted)}};
  json a = common;
  a["quantity"] = "model price at the fit";
  out.push_back(Record::from<double>("price", {q}, fit.model_price.data(), cli.stamp(a, pr.source->attrs)));
  a = common;
  a["quantity"] = "Black implied volatility of the model price at the fit";
  out.push_back(Record::from<double>("implied_vol", {q}, fit.model_vol.data(), cli.stamp(a, pr.source->attrs)));
  a = common;
  a["quantity"] = std::string("model - quote, in the quote's units (") + price::quote_kind_name(pr.quote_kind) + ")";
  out.push_back(Record::from<double>("residual", {q}, fit.residual.data(), cli.stamp(a, pr.source->attrs)));
  json la = {{"columns", columns}, {"kind", "price.calibration_log"}};
  out.push_back(Record::from<double>("calibration_log", {static_cast<std::int64_t>(fit.log.size()),
                                                         static_cast<std::int64_t>(columns.size())},
                                     table.data(), cli.stamp(la, pr.source->attrs)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace numpipe;
  return run_tool("price", [&]() -> int {
    Cli cli({"price", "Price options under SABR-type stochastic volatility by Crank-Nicolson ADI (FinPar's LocVolCalib "
             "by default): prices, Greeks, implied volatilities, calibration to quotes", "",
             "  gen-input price --dataset large | price | verify --text-ref share/ref/finpar-locvolcalib/large.output.data "
             "--array price --range 0:128 --rtol 1e-4\n"
             "  gen-input price --dataset xl | price --backend cuda --devices all --profile run.prof | inspect",
             "the prices, one record per problem"},
            kInput | kOutput | kCompute | kProfile | kMultiDevice | kMpi);
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
    cli.tuning_env("NUMPIPE_PRICE_GRAPH=1", "CUDA adjoint: launch each pass as a captured CUDA graph");
    cli.add("Results")("greeks", "Also delta and gamma (with respect to s0) and vega (with respect to alpha) of "
                       "every contract, from the grid's neighbours of the spot")(
        "implied-vol", "Also each price's Black implied volatility (zero rates; NaN with a warning where the price "
        "lies outside the no-arbitrage bounds)");
    cli.add("Calibration")("calibrate", "Fit the model to the input's quote table (gen-input price --from-text) by "
                           "Levenberg-Marquardt")(
        "fit", "With --calibrate: the free parameters, a comma list of alpha, nu, rho, beta",
        cxxopts::value<std::string>()->default_value("alpha,nu,rho"), "LIST")(
        "max-evaluations", "With --calibrate: at most this many pricing passes",
        cxxopts::value<int>()->default_value("200"), "N")(
        "start", "With --calibrate: hagan (fit Hagan's short-expiry formula to the quotes' implied volatilities "
        "first, and start from there when the model fits the quotes better there than at the input's parameters) "
        "or given (start from the input's parameters)",
        cxxopts::value<std::string>()->default_value("hagan"), "S");
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
    const bool greeks = cli.has("greeks"), implied = cli.has("implied-vol"), calibrate = cli.has("calibrate");
    if ((cli.has("fit") || cli.has("max-evaluations") || cli.has("start")) && !calibrate)
      fail_input("--fit, --max-evaluations and --start need --calibrate");
    price::CalibrationOptions calibration;
    if (calibrate) {
      calibration.fit = price::parse_fit(cli.get<std::string>("fit"));
      calibration.max_evaluations = cli.get<int>("max-evaluations");
      const std::string start = cli.get<std::string>("start");
      if (start != "hagan" && start != "given") fail_input("--start must be hagan or given, got '" + start + "'");
      calibration.hagan_start = start == "hagan";
      if (calibration.max_evaluations < 1)
        fail_input("--max-evaluations must be >= 1, got " + std::to_string(calibration.max_evaluations));
      if (!price::calibration_available())
        fail_resource("this build has no calibration: Eigen 3 (libeigen3-dev) was not found when it was built");
    }
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
    // Every record must be a problem or belong to one (strikes, maturities, quotes):
    // another is refused from its header, before its payload is read.
    std::vector<Record> records = world.read_input(cli, [](const RecordHeader& h) {
      if (h.name == "strike" || h.name == "maturity" || h.name == "quotes") return true;  // read_problems checks them
      const std::string kind = h.attrs.contains("kind") && h.attrs["kind"].is_string() ? h.attrs["kind"].get<std::string>()
                                                                                    : std::string("(none)");
      if (kind != price::kInputKind)
        fail_input(h.label() + " has kind '" + kind + "', expected '" + price::kInputKind +
                   "' (make one with gen-input price)");
      return true;
    });
    const std::vector<price::Problem> all = price::read_problems(records);  // bad input names the record
    std::vector<price::Params> problems;
    std::vector<const Record*> sources;
    for (const price::Problem& pr : all) {
      problems.push_back(pr.p);
      sources.push_back(pr.source);
      // The working set (docs/price.md "Memory", measured): per grid point 4 values for
      // each thread rolling a strike back (forward) or 5 once (adjoint), the pivot table
      // (forward: numT-1 values per grid point, at most 1 GiB), the per-step y tables,
      // 16 bytes per strike.
      const price::Params& p = problems.back();
      const double value = precision == price::Precision::fp64 ? 8 : 4, points = double(p.num_x) * double(p.num_y);
      const bool forward = method == price::Method::forward;
      const double rollers = forward && backend == Backend::cpu
                                 ? double(std::min<std::int64_t>(omp_get_max_threads(), p.outer)) : 1.0;
      MemoryEstimate e{"numX*numY = " + std::to_string(p.num_x) + "*" + std::to_string(p.num_y) + " grid points" +
                           (rollers > 1 ? " on " + std::to_string(int(rollers)) + " threads" : std::string()),
                       points * rollers, (forward ? 4 : 5) * value,
                       "grid point" + std::string(rollers > 1 ? " and thread" : "")};
      e.fixed = (forward && backend == Backend::cpu ? std::min(double(p.num_t) * points * value, 1073741824.0) : 0.0) +
                3 * double(p.num_t) * double(p.num_y) * value + 16 * double(p.outer) +
                8 * (4 * double(p.num_x) + 4 * double(p.num_y) + 3 * double(p.num_t));
      require_host_memory(e);
      if (backend == Backend::cuda && !forward) require_device_memory(devices.front(), e);
    }
    if (problems.empty()) fail_input("the input holds no price.input record (make one with gen-input price)");
    if (method == price::Method::forward && backend == Backend::cuda)
      for (const price::Problem& pr : all)
        if (pr.p.rho != 0)
          fail_input("--method forward on the CUDA backend has no mixed term (rho = " + std::to_string(pr.p.rho) +
                     "): use the adjoint method (the default) or --backend cpu");

    std::uint64_t my_strikes = 0;  // this rank's, for the progress line
    for (const auto& p : problems)
      my_strikes += par::split_evenly(static_cast<std::size_t>(p.outer), world.size(), world.rank()).size();
    Progress progress("price", "strikes", my_strikes, cli.quiet());
    PhaseLog log;
    if (backend == Backend::cuda) {  // the CUDA contexts, once per process: not inside the first solve
      timeline::Scope phase("cuda start-up");  // with the early start's wait (common/device.hpp)
      for (int d : devices) init_cuda_context(d);
    }
    DeviceInfo info = backend == Backend::cuda ? query_cuda_device(devices.front()) : query_host_cpu();
    std::vector<Record> results;
    json params = json::array();
    for (std::size_t k = 0; k < problems.size(); ++k) {
      const price::Params& p = problems[k];
      if (calibrate || greeks || implied || !all[k].finpar()) {
        // the user's contracts, Greeks, implied vols, rho, calibration: on rank 0 (the
        // adjoint pass is one grid; under MPI the other ranks wait)
        if (!world.is_root()) continue;
        const price::Engine engine{backend == Backend::cuda, devices.empty() ? 0 : devices.front(), precision, method};
        std::vector<Record> recs = calibrate ? calibrate_problem(cli, all[k], engine, calibration, log)
                                             : price_contracts(cli, all[k], engine, greeks, implied, log);
        for (Record& r : recs) results.push_back(std::move(r));
        params.push_back(price::params_json(p));
        continue;
      }
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
        const double median = median_of(repeat_seconds);
        std::fprintf(stderr, "price: problem %zu (%lld strikes, %s, %s): %d runs after the first, median solve %.4f ms\n",
                     k, static_cast<long long>(p.outer), price::method_name(method), backend_name(backend), repeat,
                     median * 1e3);
      }
      require_finite(ExitCode::internal, "price", Shape{static_cast<std::int64_t>(prices.size())}, prices.data(),
                     "a price came out non-finite (please report the input)");
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
    writer.set_units(price::units());
    for (const Record& r : results) writer.write(r);
    writer.finish();
    // The profile before the commit: a failure to append it leaves no output behind.
    write_profile_if_requested(
        cli, backend, info,
        {{"problems", params}, {"precision", price::precision_name(precision)}, {"ranks", world.size()}}, log);
    out->commit();
    return 0;
  });
}
