// mle-fit: rolling grid maximum-likelihood fits of the asymmetric exponential
// power distribution, or GARCH(1,1) with AEPD innovations (kernels/mle: the model,
// the backends, io.hpp the records; spec ../shared/spec/mle-fit.md).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cli.hpp"
#include "common/labels.hpp"
#include "common/run.hpp"
#include "common/units.hpp"
#include "kernels/mle/io.hpp"
#include "kernels/mle/tuning.hpp"
#include "kernels/mle/units.hpp"

// The windows without a maximum (all points equal; tied values), said on stderr.
static std::pair<long long, long long> count_degenerate(const std::vector<numpipe::mle::Degenerate>& degenerate) {
  using numpipe::mle::Degenerate;
  const long long all_equal = std::count(degenerate.begin(), degenerate.end(), Degenerate::constant);
  const long long tied = std::count(degenerate.begin(), degenerate.end(), Degenerate::ties);
  if (all_equal + tied > 0)
    std::fprintf(stderr,
                 "mle-fit: %lld of %lld windows have no maximum (fits and quantiles NaN): %lld with all points equal, "
                 "%lld with tied values at the location and the shape at the grid's smallest\n",
                 all_equal + tied, static_cast<long long>(degenerate.size()), all_equal, tied);
  return {all_equal, tied};
}

int main(int argc, char** argv) {
  using namespace numpipe;
  return run_tool("mle-fit", [&]() -> int {
    // 1. The options, each declared once with its checks (applied by cli.parse).
    Cli cli({"mle-fit",
             "Rolling maximum-likelihood fits of the asymmetric exponential power distribution (grid over location and shape)",
             "",
             "  gen-input mle --length 100000 --p 1.5 --sl 1 --sr 2 --seed 7 \\\n"
             "    | mle-fit --window 500 --step 1 --alpha-grid 0.5:4.45:80 --quantiles 0.01,0.05 | inspect\n"
             "  gen-input mle --from-text share/ref/mle-prices.csv --columns close --returns log | mle-fit --window 250 --quantiles 0.01 -o var.nps",
             "the fits of every window (theta, p, s_l, s_r, loglik, skew, start; quantiles)"},
            kInput | kOutput | kCompute | kMultiDevice | kProfile | kMpi);
    mle::Params params;
    mle::FinishOptions fo;
    std::string alpha_grid = "0.5:4.45:80", quantiles, compare, model = "iid";
    std::optional<int> repeat;
    bool refine = false, backtest = false, fhs = false;
    cli.option("window", &params.window, "Points per window (n >= 3)", "N", "Fit").min(3);
    cli.option("step", &params.step, "A window starts every K points", "K", "Fit").min(1);
    cli.option("alpha-grid", &alpha_grid, "Shape grid: START:STOP:COUNT (evenly spaced, ends included) or a list a,b,c",
               "GRID", "Fit")
        .check([&](const std::string& v) { params.grid = mle::parse_grid(v); });
    cli.flag("refine", &refine,
             "Search for the continuous optimum near the grid's (Newton steps on the profile likelihood, p between its "
             "grid neighbours), keeping the higher of competing maxima",
             "Fit");
    cli.flag("exact", &params.exact, "Recompute every window from scratch instead of rolling updates (for checking)", "Fit");
    cli.option("refresh", &params.refresh, "Rolling sums are recomputed from scratch at least every R windows", "R", "Fit")
        .min(1);
    cli.option("quantiles", &quantiles, "Quantiles (Value-at-Risk levels) of each fitted distribution, e.g. 0.01,0.05",
               "Q,...", "Fit")
        .check([&](const std::string& v) { fo.levels = mle::parse_levels(v); });
    cli.option("shapes", &params.shapes,
               "1: one shape p; 2: a shape p1 left of theta and p2 right of it (grid over theta, p1, p2; with --model "
               "garch: the innovations' AEPD)",
               "N", "Fit")
        .check([](int v) {
          if (v != 1 && v != 2) fail_input("--shapes must be 1 or 2, got " + std::to_string(v));
        });
    cli.option("model", &model,
               "iid: the AEPD fitted to each window (default); garch: GARCH(1,1) with AEPD innovations (one shape, or "
               "two with --shapes 2) over the whole series (without --window) or rolling windows",
               "M", "Fit")
        .one_of({"iid", "garch"});
    cli.flag("fhs", &fhs,
             "With --model garch: quantiles by filtered historical simulation (the empirical quantiles of the window's "
             "standardised residuals, scaled by the forecast sigma) instead of the fitted AEPD's",
             "Fit");
    BatchRun::declare(cli, &repeat, "Fit");
    mle::declare_tuning(cli);
    cli.flag("stderr", &fo.inform,
             "Standard errors of the estimates from the information at the refined optimum (observed; theta's row and "
             "column expected), implies --refine; and a 95% interval for theta",
             "Inference");
    cli.option("compare", &compare, "Also fit a normal and/or a Student-t to each window: their log-likelihoods, AIC and BIC",
               "normal,t", "Inference")
        .check([&](const std::string& v) { mle::parse_compare(v, fo.normal, fo.student); });
    cli.flag("gof", &fo.gof, "Kolmogorov-Smirnov and Anderson-Darling statistics of each window against its fitted distribution",
             "Inference");
    cli.flag("backtest", &backtest,
             "Each window's quantiles against the next return(s) out of sample: exceedances, Kupiec and Christoffersen "
             "tests (needs --quantiles); points after a window without a maximum are counted apart",
             "Inference");
    // 2. Parse: every value checked; then the checks that join options.
    params.grid = mle::parse_grid(alpha_grid);  // the default's (a given grid: by its check)
    cli.parse(argc, argv);
    fo.refine = refine || fo.inform;
    const std::vector<double> levels = fo.levels;
    if (fhs && (model != "garch" || levels.empty()))
      fail_input("--fhs needs --model garch and --quantiles (the levels to simulate), e.g. --quantiles 0.01");
    if (backtest && levels.empty()) fail_input("--backtest needs --quantiles (the VaR levels to test), e.g. --quantiles 0.01,0.05");
    Backend backend = cli.backend();
    if (params.shapes == 2 && model != "garch" && backend == Backend::cuda) {  // the two-shape grid runs on the CPU backend; auto picks it
      if (cli.has("backend") && cli.get<std::string>("backend") == "cuda")
        fail_input("--shapes 2 runs on the CPU backend only: use --backend cpu (or auto)");
      backend = Backend::cpu;
    }
    // 3. The run: under MPI rank 0 reads and writes; the backend's tasks (a series
    // and a chunk of windows each) are split over the ranks, each on its own GPU.
    BatchRun run(cli, repeat, backend);
    const mle::Engine engine{run.cuda(), run.devices()};
    PhaseLog log;  // the tool's phases; reading and writing are the process's (common/timeline.hpp)

    // 4. Read: x (one record of that name) and the labels of its points; the memory
    // checked from x's header, before its payload is read.
    const RecordFilter series_record = keep_names_once({"x"});
    const std::vector<Record> records = run.read([&](const RecordHeader& h) {
      if (is_labels(h)) return labels_of(h.attrs) == "x";
      if (!series_record(h)) return false;
      mle::require_mle_memory(h, params, levels.size());
      return true;
    });
    const auto xr = std::find_if(records.begin(), records.end(), [](const Record& r) { return r.name == "x"; });
    if (xr == records.end()) fail_input("the input holds no array 'x' (make one with: gen-input mle)");
    if (xr->shape.size() != 1 && xr->shape.size() != 2)
      fail_input("x: expected shape [length] or [series, length], got " + shape_string(xr->shape));
    std::vector<double> x = xr->to_vector<double>();
    const mle::Series s{x.data(), xr->shape.size() == 2 ? xr->shape[0] : 1, xr->shape.back()};
    const Stamp stamp = [&](json attrs, const json& from) { return cli.stamp(std::move(attrs), from); };
    const json units = mle::units(units_of(xr->attrs, "x", xr->name));  // in the series' units
    if (model == "garch") {  // GARCH over the whole series (no --window) or rolling windows: one process
      const bool whole = !cli.has("window");
      if (whole) params.window = s.length;
      mle::validate(s, params);
      if (run.world().distributed()) fail_input("--model garch runs in one process (no MPI)");
      if (fo.normal || fo.student || fo.gof) fail_input("--model garch takes neither --compare nor --gof");
      run.writer().set_units(mle::garch_units(units_of(xr->attrs, "x", xr->name)));
      mle::write_garch(run.writer(), stamp, records, *xr, s, params, whole, fo.inform, levels, backtest, fhs, engine);
      return run.commit();  // (no profile)
    }
    mle::validate(s, params);
    const std::vector<int> exponent = mle::scale_series(x, s, params);

    // 5. Solve: the grid fits of this rank's windows, their estimates, gathered on rank 0.
    const std::int64_t W = mle::window_count(s, params);
    const mle::GridRun grid = mle::grid_search(s, params, engine, run, cli.quiet(), log);
    mle::Estimates est = mle::finish_estimates(s, params, grid, fo, engine, cli.quiet(), run.world().is_root(), log);
    mle::gather_estimates(run, est);
    if (!run.world().is_root()) return 0;
    mle::unscale(x, s, params, W, exponent, levels.size(), est);
    // windows without a maximum: NaN fits and quantiles, counted on stderr and in the attrs
    const std::vector<mle::Degenerate> degenerate = mle::mark_degenerate(s, params, levels.size(), est);
    const auto [all_equal, tied] = count_degenerate(degenerate);
    mle::require_finite_fits(s, params, W, est, levels.size(), degenerate);
    std::vector<std::uint8_t> hits;  // the backtest needs every window of a series: on rank 0
    std::vector<double> rows;
    if (backtest)
      log.time("backtest", 0, 0, [&] {
        hits = mle::exceedances(s, params, levels, est.quantiles);
        rows = mle::backtest_rows(s, params, levels, hits);
      });
    const Record* xlabels = nullptr;  // dates: carried to every window (its last point)
    const std::vector<std::string> time_labels = mle::read_time_labels(records, s, &xlabels);

    // 6. Write (rank 0): the records, the profile, the commit.
    const json attrs = mle::fit_attrs(s, params, fo.refine, alpha_grid, run.backend(), run.world().size(), all_equal, tied);
    run.writer().set_units(units);
    mle::write_fits(run.writer(), {s, params, est, fo, backtest, degenerate, hits, rows, xlabels, time_labels,
                                   cli.stamp(attrs, xr->attrs)});
    const json prof = {{"window", params.window}, {"step", params.step}, {"series", s.series}, {"length", s.length},
                       {"shapes", params.grid.alpha.size()}, {"windows", W}, {"exact", params.exact},
                       {"refresh", params.refresh}, {"terms", mle::work_estimate(s, params).terms},
                       {"ranks", run.world().size()}, {"tail_shapes", params.shapes}, {"stderr", fo.inform},
                       {"backtest", backtest}};
    return run.write({}, prof, log, grid.device);
  });
}
