// price: the stream side of the workload (io.hpp).
#include "io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <omp.h>

#include "black.hpp"
#include "calibrate.hpp"
#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/progress.hpp"
#include "detail/backends.hpp"
#include "detail/grid.hpp"
#include "detail/work.hpp"

namespace numpipe::price {
namespace {

void warn(const std::string& message) { std::fprintf(stderr, "price: %s\n", message.c_str()); }

// The shape and dims of a result over the problem's contracts: list mode [Q] over
// quotes, else [S] for one maturity, [M, S] for several.
struct Layout {
  Shape shape;
  json dims;
};
Layout layout_of(const Problem& pr) {
  if (pr.list()) return {{static_cast<std::int64_t>(pr.quotes.size())}, {"quote"}};
  if (pr.maturities.size() > 1)
    return {{static_cast<std::int64_t>(pr.maturities.size()), pr.p.outer}, {"maturity", "strike"}};
  return {{pr.p.outer}, {"strike"}};
}

// The coordinate records: strike (and maturity), or per quote strike, maturity,
// option type and the quote.
void coordinate_records(const Problem& pr, const Stamp& stamp, std::vector<Record>& out) {
  const json& from = pr.source->attrs;
  if (pr.list()) {
    const std::int64_t q = static_cast<std::int64_t>(pr.quotes.size());
    std::vector<double> strike, maturity, quote;
    std::vector<std::string> type;
    for (const Quote& qt : pr.quotes) {
      strike.push_back(qt.strike);
      maturity.push_back(qt.maturity);
      quote.push_back(qt.quote);
      type.push_back(qt.put ? "put" : "call");
    }
    out.push_back(Record::from<double>("strike", {q}, strike.data(), stamp({{"dims", {"quote"}}}, from)));
    out.push_back(Record::from<double>("maturity", {q}, maturity.data(), stamp({{"dims", {"quote"}}, {"units", "years"}}, from)));
    Record labels = make_labels("option", type, "quote", "type");
    labels.attrs["dims"] = {"quote"};
    out.push_back(std::move(labels));
    if (pr.quote_kind != QuoteKind::none)
      out.push_back(Record::from<double>("quote", {q}, quote.data(),
                                         stamp({{"dims", {"quote"}}, {"quote_kind", quote_kind_name(pr.quote_kind)}}, from)));
    return;
  }
  if (pr.user_strikes)
    out.push_back(Record::from<double>("strike", {pr.p.outer}, pr.strikes.data(), stamp({{"dims", {"strike"}}}, from)));
  if (pr.maturities.size() > 1)
    out.push_back(Record::from<double>("maturity", {static_cast<std::int64_t>(pr.maturities.size())},
                                       pr.maturities.data(), stamp({{"dims", {"maturity"}}, {"units", "years"}}, from)));
}

}  // namespace

bool keep_input_record(const RecordHeader& h) {
  if (h.name == "strike" || h.name == "maturity" || h.name == "quotes") return true;  // read_problems checks them
  const std::string kind =
      h.attrs.contains("kind") && h.attrs["kind"].is_string() ? h.attrs["kind"].get<std::string>() : std::string("(none)");
  if (kind != kInputKind)
    fail_input(h.label() + " has kind '" + kind + "', expected '" + kInputKind + "' (make one with gen-input price)");
  return true;
}

void require_memory(const Params& p, const Engine& engine) {
  // Per grid point 4 values for each thread rolling a strike back (forward) or 5 once
  // (adjoint), the pivot table (forward: numT-1 values per grid point, at most 1 GiB),
  // the per-step y tables, 16 bytes per strike.
  const double value = engine.precision == Precision::fp64 ? 8 : 4, points = double(p.num_x) * double(p.num_y);
  const bool forward = engine.method == Method::forward;
  const double rollers =
      forward && !engine.cuda ? double(std::min<std::int64_t>(omp_get_max_threads(), p.outer)) : 1.0;
  MemoryEstimate e{"numX*numY = " + std::to_string(p.num_x) + "*" + std::to_string(p.num_y) + " grid points" +
                       (rollers > 1 ? " on " + std::to_string(int(rollers)) + " threads" : std::string()),
                   points * rollers, (forward ? 4 : 5) * value,
                   "grid point" + std::string(rollers > 1 ? " and thread" : "")};
  e.fixed = (forward && !engine.cuda ? std::min(double(p.num_t) * points * value, 1073741824.0) : 0.0) +
            3 * double(p.num_t) * double(p.num_y) * value + 16 * double(p.outer) +
            8 * (4 * double(p.num_x) + 4 * double(p.num_y) + 3 * double(p.num_t));
  require_host_memory(e);
  if (engine.cuda && !forward) require_device_memory(engine.device, e);
}

Work work_of_strikes(const Params& p, Precision precision, Method method, const std::string& kernel) {
  if (method == Method::forward) return {cuda_bytes_of(p, precision, kernel), flops_of(p)};
  Params one_grid = p;
  one_grid.outer = 1;
  return {cuda_bytes_of(one_grid, precision, "sweep") + 16.0 * p.outer * p.num_x, adjoint_flops_of(p)};
}

Work work_of_contracts(const Params& p, std::size_t contracts, std::size_t functionals, Precision precision,
                       Method method) {
  const double nf = static_cast<double>(functionals);
  if (method == Method::adjoint) {
    Params one_grid = p;
    one_grid.outer = 1;
    return {nf * (p.rho != 0 ? 2.0 : 1.0) * cuda_bytes_of(one_grid, precision, "sweep") +
                16.0 * static_cast<double>(contracts * functionals) * static_cast<double>(p.num_x),
            nf * adjoint_flops_of(p)};
  }
  Params all = p;
  all.outer = static_cast<std::int64_t>(contracts);
  return {static_cast<double>(functionals > 0) * cuda_bytes_of(all, precision, "sweep"), nf * flops_of(p)};
}

StrikeSolve price_strikes(const Setup& setup, const Engine& engine, StrikeRange range, bool distributed,
                          Progress& progress, PhaseLog& log) {
  StrikeSolve out;
  CudaRun run;
  if (!engine.cuda) {
    const Work work = work_of_strikes(setup.p, engine.precision, engine.method);
    log.time("solve", work.bytes, work.flops, [&] {
      ActiveProgress active(progress);  // the forward method counts strikes as they finish
      out.prices = solve_strikes(setup, engine, range, &run);
    });
  } else {
    HostTimer timer;
    out.prices = solve_strikes(setup, engine, range, &run);
    const double wall = timer.seconds();
    const Work work = work_of_strikes(setup.p, engine.precision, engine.method, run.kernel);
    log.add("upload", run.upload_seconds);
    log.add("solve", run.seconds, work.bytes, work.flops);
    // Phases must not overlap (profile-report sums them): the rest of the wall time
    // is allocation, table set-up on the device, launches and the copy back.
    log.add("device setup and copies", std::max(0.0, wall - run.upload_seconds - run.seconds));
    // Under MPI the devices, group and memory are a rank's: not in the attrs.
    if (engine.method == Method::adjoint) {
      if (!distributed) out.attrs = {{"devices", engine.devices}};
    } else if (distributed) {
      out.attrs = {{"gpu_kernel", run.kernel}};
    } else {
      out.attrs = {{"devices", engine.devices},
                   {"gpu_group", run.group},
                   {"gpu_kernel", run.kernel},
                   {"device_bytes", run.device_bytes}};
    }
  }
  require_finite(ExitCode::internal, "price", Shape{static_cast<std::int64_t>(out.prices.size())}, out.prices.data(),
                 "a price came out non-finite (please report the input)");
  return out;
}

Record strike_prices_record(const Problem& pr, const Setup& setup, const std::vector<double>& prices,
                            const Engine& engine, const json& extra, const Stamp& stamp) {
  json attrs = {{"kind", kOutputKind},
                {"params", params_json(pr.p)},
                {"precision", precision_name(engine.precision)},
                {"method", method_name(engine.method)},
                {"backend", engine.cuda ? "cuda" : "cpu"},
                {"strike", "0.001*o, o = 0..outer-1"},
                {"ind_x", setup.ind_x},
                {"ind_y", setup.ind_y}};
  for (auto& [key, value] : extra.items()) attrs[key] = value;
  return Record::from<double>("price", {pr.p.outer}, prices.data(), stamp(attrs, pr.source->attrs));
}

std::vector<Record> price_contracts(const Problem& pr, const Engine& engine, bool greeks, bool implied,
                                   const Stamp& stamp, bool quiet, PhaseLog& log) {
  Setup setup;
  log.time("setup", 0, 0, [&] { setup = make_setup(pr.p, pr.maturities); });
  const std::vector<Contract> contracts = pr.contracts();
  const std::vector<Functional> fs = functionals_of(setup, greeks);
  std::vector<double> values;
  {
    const bool forward = engine.method == Method::forward;
    Progress progress("price", forward ? "contracts" : "steps",
                      forward ? contracts.size() : fs.size() * static_cast<std::uint64_t>(pr.p.num_t - 1), quiet);
    HostTimer timer;
    EvalTiming timing;
    values = evaluate(setup, contracts, fs, engine, &timing,
                      [&](std::int64_t done, std::int64_t) { progress.update(static_cast<std::uint64_t>(done)); });
    progress.finish();
    const double wall = timer.seconds();
    const Work work = work_of_contracts(pr.p, contracts.size(), fs.size(), engine.precision, engine.method);
    const double bytes = work.bytes, flops = work.flops;
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
  if (pr.p.grid == GridKind::sinh) {
    const Setup coarse = make_setup(coarser_by_two(pr.p, setup.maturities.size()), pr.maturities);
    HostTimer timer;
    const std::vector<double> rough = evaluate(coarse, contracts, functionals_of(coarse, false), engine);
    log.add("error estimate", timer.seconds());
    errors.resize(count);
    for (std::size_t c = 0; c < count; ++c) errors[c] = std::fabs(values[c] - rough[c]) / 3.0;
  }
  const double tolerance = (pr.tolerance > 0 ? pr.tolerance : kDefaultTolerance) * pr.p.s0;
  const BoundsReport bounds = check_bounds(setup, contracts, values.data(), tolerance);
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
  coordinate_records(pr, stamp, out);
  json attrs = {{"kind", kOutputKind},
                {"params", params_json(pr.p)},
                {"precision", precision_name(engine.precision)},
                {"method", method_name(engine.method)},
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
    out.push_back(Record::from<double>(fs[f].name, lay.shape, values.data() + f * count, stamp(a, pr.source->attrs)));
    if (f == 0 && !errors.empty()) {
      json e = attrs;
      e["quantity"] = "estimated absolute error of price: |price - price on the grid coarser by 2 each way| / 3";
      out.push_back(Record::from<double>("price_error", lay.shape, errors.data(), stamp(e, pr.source->attrs)));
    }
  }
  if (implied) {
    std::vector<double> vols(count);
    std::size_t outside = 0, first = 0;
    for (std::size_t c = 0; c < count; ++c) {
      const double t = setup.maturities[contracts[c].maturity];
      vols[c] = implied_vol(values[c], pr.p.s0, contracts[c].strike, t, contracts[c].put);
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
    out.push_back(Record::from<double>("implied_vol", lay.shape, vols.data(), stamp(a, pr.source->attrs)));
    if (!errors.empty()) {
      // the price's error estimate carried to the volatility to first order: price_error / vega
      std::vector<double> vol_errors(count);
      for (std::size_t c = 0; c < count; ++c)
        vol_errors[c] = errors[c] / black_vega(pr.p.s0, contracts[c].strike,
                                                      setup.maturities[contracts[c].maturity], vols[c]);
      json e = attrs;
      e["quantity"] = "estimated absolute error of implied_vol: price_error / Black's vega (NaN where implied_vol is)";
      out.push_back(Record::from<double>("implied_vol_error", lay.shape, vol_errors.data(), stamp(e, pr.source->attrs)));
    }
  }
  return out;
}

std::vector<Record> calibrate_problem(const Problem& pr, const Engine& engine, const CalibrationOptions& options,
                                      const Stamp& stamp, bool quiet, PhaseLog& log) {
  CalibrationResult fit;
  {
    Progress progress("price", "pricing passes", static_cast<std::uint64_t>(options.max_evaluations), quiet);
    HostTimer timer;
    fit = calibrate(pr, options, engine, [&](int done) { progress.update(static_cast<std::uint64_t>(done)); });
    progress.finish();
    Params coarse = pr.p;
    if (!fit.coarse_grid.empty()) {
      coarse.num_x = fit.coarse_grid[0];
      coarse.num_y = fit.coarse_grid[1];
      coarse.num_t = fit.coarse_grid[2];
    }
    log.add("calibrate", timer.seconds(), 0.0,
            static_cast<double>(fit.evaluations - fit.coarse_evaluations) * adjoint_flops_of(pr.p) +
                static_cast<double>(fit.coarse_evaluations) * adjoint_flops_of(coarse));
    // CUDA: the pricing passes' device time inside 'calibrate' (CUDA events)
    if (engine.cuda) log.add("calibration solves", fit.device_seconds, 0.0, 0.0);
  }
  if (!fit.converged)
    warn("calibration " + fit.status + " after " + std::to_string(fit.log.size() - 1) + " iterations and " +
         std::to_string(fit.evaluations) + " pricing passes; the record 'calibrated' holds the last iterate "
         "(attrs converged: false)");
  std::vector<Record> out;
  json log_rows = json::array();
  std::vector<double> table;
  for (const CalibrationIteration& it : fit.log) {
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
                {"discretisation_error", fit.discretisation_error},
                {"coarse_grid", fit.coarse_grid},
                {"coarse_evaluations", fit.coarse_evaluations},
                {"coarse_fit", fit.coarse_values},
                {"converged", fit.converged},
                {"status", fit.status},
                {"iterations", fit.log.empty() ? 0 : static_cast<int>(fit.log.size()) - 1},
                {"evaluations", fit.evaluations},
                {"rms", fit.rms},
                {"rms_units", "implied volatility (weighted, to first order)"},
                {"params", params_json(fit.fitted)},
                {"quote_kind", quote_kind_name(pr.quote_kind)},
                {"precision", precision_name(engine.precision)},
                {"backend", engine.cuda ? "cuda" : "cpu"}};
  out.push_back(Record::from<double>("calibrated", {static_cast<std::int64_t>(fit.values.size())}, fit.values.data(),
                                     stamp(attrs, pr.source->attrs)));
  coordinate_records(pr, stamp, out);
  const std::int64_t q = static_cast<std::int64_t>(pr.quotes.size());
  json common = {{"dims", {"quote"}}, {"params", params_json(fit.fitted)}};
  json a = common;
  a["quantity"] = "model price at the fit";
  out.push_back(Record::from<double>("price", {q}, fit.model_price.data(), stamp(a, pr.source->attrs)));
  a = common;
  a["quantity"] = "Black implied volatility of the model price at the fit";
  out.push_back(Record::from<double>("implied_vol", {q}, fit.model_vol.data(), stamp(a, pr.source->attrs)));
  a = common;
  a["quantity"] = std::string("model - quote, in the quote's units (") + quote_kind_name(pr.quote_kind) + ")";
  out.push_back(Record::from<double>("residual", {q}, fit.residual.data(), stamp(a, pr.source->attrs)));
  json la = {{"columns", columns}, {"kind", "price.calibration_log"}};
  out.push_back(Record::from<double>("calibration_log", {static_cast<std::int64_t>(fit.log.size()),
                                                         static_cast<std::int64_t>(columns.size())},
                                     table.data(), stamp(la, pr.source->attrs)));
  return out;
}

}  // namespace numpipe::price
