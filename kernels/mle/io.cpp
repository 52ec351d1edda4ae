// mle: the stream side of the workload (io.hpp).
#include "io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/progress.hpp"
#include "common/strings.hpp"
#include "garch.hpp"

namespace numpipe::mle {

std::vector<double> parse_levels(const std::string& text) {
  std::vector<double> levels;
  if (text.empty()) return levels;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    auto refuse = [&] { fail_input("--quantiles takes probabilities in (0, 1) separated by commas, got '" + item + "'"); };
    if (item.empty()) refuse();
    const double v = decimal_number(item, "--quantiles");
    if (!(v > 0 && v < 1)) refuse();
    levels.push_back(v);
  }
  return levels;
}

// The working set (docs/mle.md "Memory"), checked from the header of x before its
// payload is read: per point the record and its copy in double; per window the
// grid fits (44 bytes), the estimates and the output (56 bytes and 8 per level).
void require_mle_memory(const RecordHeader& x, const Params& params, std::size_t levels) {
  if (x.shape.empty() || x.shape.size() > 2) return;  // refused after the read, with the shape
  const double length = static_cast<double>(x.shape.back());
  const double series = x.shape.size() == 2 ? static_cast<double>(x.shape[0]) : 1.0;
  const double windows = length >= static_cast<double>(params.window)
                             ? series * (std::floor((length - double(params.window)) / double(params.step)) + 1)
                             : 0;
  const double per_window = 44 + 56 + 8.0 * static_cast<double>(levels);
  MemoryEstimate e{std::to_string(static_cast<long long>(windows)) + " windows of " + std::to_string(params.window) +
                       " points",
                   windows, per_window, "window"};
  e.fixed = series * length * (static_cast<double>(dtype_size(x.dtype)) + 8);
  require_host_memory(e);
}

// A series so large or small that |x - theta|^p would overflow or underflow (1e150
// with p up to 4.45) is fitted scaled by a power of two, exactly: 2^-e per series
// (0: as it is). Series with |log2 max|x|| * max p <= 900 are fitted as they are
// (the same bits as without this).
std::vector<int> scale_series(std::vector<double>& x, const Series& s, const Params& params) {
  double max_shape = 1;
  for (double a : params.grid.alpha) max_shape = std::max(max_shape, a);
  std::vector<int> exponent(static_cast<std::size_t>(s.series), 0);
  for (std::int64_t k = 0; k < s.series; ++k) {
    double* xs = x.data() + k * s.length;
    double big = 0;
    for (std::int64_t i = 0; i < s.length; ++i) big = std::max(big, std::fabs(xs[i]));
    if (big == 0 || std::fabs(std::log2(big)) * max_shape <= 900) continue;
    int& e = exponent[static_cast<std::size_t>(k)];
    std::frexp(big, &e);
    for (std::int64_t i = 0; i < s.length; ++i) xs[i] = std::ldexp(xs[i], -e);
  }
  return exponent;
}

// The estimates of a scaled series back in the data's units: locations, scales and
// quantiles times 2^e (their standard errors and intervals too), log-likelihoods
// shifted by -n log(2^e); shapes, skew and the goodness-of-fit statistics do not
// change. The series itself is scaled back as well.
void unscale(std::vector<double>& x, const Series& s, const Params& params, std::int64_t windows,
             const std::vector<int>& exponent, std::size_t levels, Estimates& est) {
  const std::size_t K = params.shapes == 2 ? 5 : 4;  // stderr columns: theta, p (p1, p2), s_l, s_r
  for (std::int64_t k = 0; k < s.series; ++k) {
    const int e = exponent[static_cast<std::size_t>(k)];
    if (e == 0) continue;
    const double shift = static_cast<double>(params.window) * e * std::log(2.0);
    auto scale = [e](std::vector<double>& v, std::size_t at) {
      if (at < v.size()) v[at] = std::ldexp(v[at], e);
    };
    for (std::int64_t w = k * windows; w < (k + 1) * windows; ++w) {
      const std::size_t i = static_cast<std::size_t>(w);
      for (auto* v : {&est.theta, &est.s_l, &est.s_r}) scale(*v, i);
      if (i < est.loglik.size()) est.loglik[i] -= shift;
      for (std::size_t q = 0; q < levels; ++q) scale(est.quantiles, i * levels + q);
      for (std::size_t c : {std::size_t(0), K - 2, K - 1}) scale(est.stderr_, i * K + c);
      for (std::size_t c = 0; c < 2; ++c) scale(est.theta_ci, i * 2 + c);
      for (std::size_t c = 0; c < 2; ++c) scale(est.normal, i * 3 + c);
      if (3 * i + 2 < est.normal.size()) est.normal[3 * i + 2] -= shift;
      for (std::size_t c = 0; c < 2; ++c) scale(est.student, i * 4 + c);
      if (4 * i + 3 < est.student.size()) est.student[4 * i + 3] -= shift;
    }
    double* xs = x.data() + k * s.length;
    for (std::int64_t i = 0; i < s.length; ++i) xs[i] = std::ldexp(xs[i], e);
  }
}

// A window whose fit is not finite is refused, but for the windows without a
// maximum (mark_degenerate: NaN by design).
void require_finite_fits(const Series& s, const Params& params, std::int64_t windows, const Estimates& est,
                         std::size_t levels, const std::vector<Degenerate>& degenerate) {
  std::vector<std::pair<const char*, const std::vector<double>*>> outputs = {
      {"theta", &est.theta}, {params.shapes == 2 ? "p1" : "p", &est.p}, {"s_l", &est.s_l}, {"s_r", &est.s_r},
      {"loglik", &est.loglik}, {"skew", &est.skew}};
  if (params.shapes == 2) outputs.push_back({"p2", &est.p2});
  const Shape shape{s.series, windows};
  for (std::int64_t w = 0; w < s.series * windows; ++w) {
    const std::size_t i = static_cast<std::size_t>(w);
    bool finite = true;
    for (const auto& o : outputs) finite = finite && (i >= o.second->size() || std::isfinite((*o.second)[i]));
    for (std::size_t q = 0; q < levels; ++q) finite = finite && std::isfinite(est.quantiles[i * levels + q]);
    if (finite || degenerate[i] != Degenerate::none) continue;
    for (const auto& o : outputs)
      if (i < o.second->size() && !std::isfinite((*o.second)[i]))
        fail_input(std::string(o.first) + index_in(shape, i) + " is " + value_text((*o.second)[i]) +
                   ": the window's fit is not finite (its values, or the --alpha-grid shapes, are beyond the range of "
                   "doubles)");
    fail_input("quantiles" + index_in(shape, i) +
               " are not finite (the window's values, or the --alpha-grid shapes, are beyond the range of doubles)");
  }
}

// --compare: a comma-separated list of normal and t.
void parse_compare(const std::string& text, bool& normal, bool& student) {
  normal = student = false;
  if (text.empty()) return;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item == "normal") normal = true;
    else if (item == "t") student = true;
    else fail_input("--compare takes normal and t separated by commas, got '" + item + "'");
  }
}

namespace {

std::string level_name(double q) {
  std::ostringstream s;
  s << q;
  return s.str();
}

// The labels record of x's time axis (dates), if the input carries one.
const Record* time_labels_of(const std::vector<Record>& records) {
  for (const Record& r : records)
    if (is_labels(r) && labels_of(r.attrs) == "x") return &r;
  return nullptr;
}

}  // namespace

std::vector<double> backtest_rows(const Series& s, const Params& params, const std::vector<double>& levels,
                                  const std::vector<std::uint8_t>& hits) {
  std::vector<double> rows;
  const std::int64_t T = s.length - params.window;  // out-of-sample points per series
  for (std::int64_t si = 0; si < s.series; ++si)
    for (std::size_t q = 0; q < levels.size(); ++q) {
      const BacktestRow b = backtest_statistics(
          levels[q], hits.empty() ? nullptr : hits.data() + static_cast<std::size_t>(si * T) * levels.size() + q,
          std::max<std::int64_t>(T, 0), static_cast<std::int64_t>(levels.size()));
      const double row[kBacktestColumns] = {b.level, b.n, b.exceedances, b.kupiec_lr, b.kupiec_p,
                                            b.christoffersen_ind_lr, b.christoffersen_ind_p, b.cc_lr, b.cc_p,
                                            b.no_forecast};
      rows.insert(rows.end(), row, row + kBacktestColumns);
    }
  return rows;
}

std::vector<std::string> read_time_labels(const std::vector<Record>& records, const Series& s, const Record** xlabels) {
  *xlabels = time_labels_of(records);
  std::vector<std::string> time_labels;
  if (*xlabels) {
    time_labels = read_labels(**xlabels);
    if (static_cast<std::int64_t>(time_labels.size()) != s.length)
      fail_input("record '" + (*xlabels)->name + "': " + std::to_string(time_labels.size()) +
                 " labels for a series of length " + std::to_string(s.length));
  }
  return time_labels;
}

// --model garch: GARCH(1,1) with AEPD innovations (kernels/mle/garch.hpp) over
// the whole series (no --window) or rolling windows; writes its records and
// commits the output.
GridRun grid_search(const Series& s, const Params& params, const Engine& engine, const BatchRun& run, bool quiet,
                    PhaseLog& log) {
  GridRun g;
  auto& world = run.world();
  const std::int64_t W = window_count(s, params);
  const Work work = work_estimate(s, params);
  // The grid's traffic and flop model (docs/profile.md, "Traffic models"): memory
  // moves the series once and each window's fit (shape, candidate, X-, X+, S,
  // loglik: 44 bytes); the sums stay in cache (CPU) or registers (GPU). Flops: 5 a
  // power term (a ladder multiply, a compensated add), 58 a pair and shape group
  // (two exp at 29).
  const double grid_bytes = 8.0 * static_cast<double>(s.series * s.length) + 44.0 * static_cast<double>(s.series * W);
  const double grid_flops = 5.0 * work.terms + 58.0 * work.pairs;
  // This rank's tasks and windows (all of them in one process).
  std::int64_t task0 = 0, task1 = 0;
  g.win1 = s.series * W;
  if (engine.cuda) {
    g.device = query_cuda_device(engine.devices.front());
    // per window on a device: 12 bytes per shape (the best sums) and 44 of fits (docs/mle.md "Memory")
    const double per_device = double(s.series * W) / double(world.size() * engine.devices.size());
    require_device_memory(engine.devices.front(), {std::to_string(s.series * W) + " windows", per_device,
                                                   12.0 * double(params.grid.alpha.size()) + 44, "window", 64.0 * 1048576});
  } else {
    g.device = query_host_cpu();
  }
  HostTimer t;
  if (world.distributed()) {
    const TaskPlan tasks = plan(s, params, engine);
    const par::Range mine = run.share(static_cast<std::size_t>(tasks.tasks()));
    task0 = static_cast<std::int64_t>(mine.begin);
    task1 = static_cast<std::int64_t>(mine.end);
    g.win0 = tasks.first_window(task0);
    g.win1 = tasks.first_window(task1);
  }
  Progress progress("mle-fit", "windows", static_cast<std::uint64_t>(g.win1 - g.win0), quiet);
  const bool whole = !world.distributed();
  if (engine.cuda) {
    CudaTiming timing;
    solve(s, params, engine, whole, task0, task1, g.fits, &timing);
    const double total = t.seconds();
    log.add("grid kernels", timing.kernel_seconds, grid_bytes, grid_flops);
    log.add("copies and launch", std::max(0.0, total - timing.kernel_seconds));
  } else {
    // Under MPI the bytes and flops of this rank's share.
    const double mine = world.distributed() ? static_cast<double>(g.win1 - g.win0) /
                                                  static_cast<double>(std::max<std::int64_t>(1, s.series * W))
                                            : 1.0;
    log.time("grid", grid_bytes * mine, grid_flops * mine, [&] {
      ActiveProgress active(progress);  // the CPU loop counts windows as they finish
      solve(s, params, engine, whole, task0, task1, g.fits);
    });
  }
  const std::int64_t windows = g.win1 - g.win0;
  progress.update(static_cast<std::uint64_t>(windows));
  progress.finish();
  run.repeat_runs(
      [&] {
        WindowFits again;
        return solve(s, params, engine, whole, task0, task1, again);
      },
      std::to_string(windows) + " windows (" + (engine.cuda ? "cuda" : "cpu") + ")",
      [&](double median) {
        char text[64];
        std::snprintf(text, sizeof text, "%.4g us/window", windows > 0 ? median / static_cast<double>(windows) * 1e6 : 0.0);
        return std::string(text);
      },
      "grid search");
  return g;
}

Estimates finish_estimates(const Series& s, const Params& params, const GridRun& grid, FinishOptions fo,
                           const Engine& engine, bool quiet, bool root, PhaseLog& log) {
  const std::int64_t win0 = grid.win0, win1 = grid.win1;
  const bool refine = fo.refine;
  const std::vector<double> levels = fo.levels;
  // The refined optimum and the information: on the GPU with the CUDA backend
  // (a few threads per window), with the quantiles of the refined estimates;
  // else inside finish on the CPU.
  std::vector<WindowEstimate> refined;
  std::vector<double> device_quantiles;  // [windows][levels], from the device
  const bool have_refined = engine.cuda && refine;
  if (have_refined) {
    double kernel = 0;
    HostTimer t;
    refined = estimate_on_device(s, params, grid.fits, refine, fo.inform, win0, win1, engine, &kernel, levels,
                                 &device_quantiles);
    log.add("estimate kernel", kernel);
    log.add("estimate copies", std::max(0.0, t.seconds() - kernel));
  }
  Estimates est;
  // a progress line for the CPU's slow finishing work: the refine and the
  // information (without a GPU), the goodness of fit, the t fits
  const bool slow = (refine && !have_refined) || fo.gof || fo.student;
  std::unique_ptr<Progress> progress;
  std::int64_t base = 0, last = 0;
  if (slow && root) {
    const int passes = ((refine && !have_refined) ? 1 : 0) + ((fo.gof || fo.student) ? 1 : 0);
    progress = std::make_unique<Progress>("mle-fit", "windows finished", static_cast<std::uint64_t>((win1 - win0) * passes),
                                          quiet);
    fo.progress = [&, passes](std::int64_t done) {
      if (done < last) base += last;  // the second loop starts again from 1
      last = done;
      progress->update(static_cast<std::uint64_t>(std::min<std::int64_t>(base + done, (win1 - win0) * passes)));
    };
  }
  // With the CUDA backend the quantiles (a root search per window and level)
  // are computed on the device: with the refined estimates (above), or from
  // finish's estimates of the grid's fits.
  const bool on_device = engine.cuda && !levels.empty();
  if (on_device) fo.levels.clear();
  log.time("finish", 0, 0, [&] { est = finish(s, params, grid.fits, fo, win0, win1, have_refined ? &refined : nullptr); });
  if (progress) progress->finish();
  if (on_device && have_refined) {
    est.quantiles = std::move(device_quantiles);
  } else if (on_device) {
    double kernel = 0;
    HostTimer t;
    est.quantiles = quantiles_on_device(est, levels, engine, &kernel);
    log.add("quantile kernel", kernel);
    log.add("quantile copies", std::max(0.0, t.seconds() - kernel));
  }
  return est;
}

void gather_estimates(const BatchRun& run, Estimates& est) {
  for (auto* v : {&est.theta, &est.p, &est.p2, &est.s_l, &est.s_r, &est.loglik, &est.skew, &est.quantiles,
                  &est.stderr_, &est.theta_ci, &est.ks, &est.ad, &est.normal, &est.student})
    *v = run.gather(*v);
  est.smooth = run.gather(est.smooth);
}

std::vector<double> aic(const std::vector<double>& loglik, double parameters) {
  std::vector<double> a(loglik.size());
  for (std::size_t i = 0; i < loglik.size(); ++i) a[i] = 2.0 * parameters - 2.0 * loglik[i];
  return a;
}

std::vector<double> bic(const std::vector<double>& loglik, double parameters, double points) {
  std::vector<double> b(loglik.size());
  for (std::size_t i = 0; i < loglik.size(); ++i) b[i] = parameters * std::log(points) - 2.0 * loglik[i];
  return b;
}

void write_fits(StreamWriter& writer, const FitOutput& o) {
  const Series& s = o.s;
  const Params& params = o.params;
  const Estimates& est = o.est;
  const FinishOptions& fo = o.options;
  const std::vector<double>& levels = fo.levels;
  const bool backtest = o.backtest;
  const std::int64_t W = window_count(s, params), T = s.length - params.window;
  const json& attrs = o.attrs;
  const auto& degenerate = o.degenerate;
  const auto& hits = o.hits;
  const auto& backtest_rows = o.backtest_rows;
  const auto& time_labels = o.time_labels;
  const Shape shape{s.series, W};
  std::vector<std::int64_t> start(static_cast<std::size_t>(W));
  for (std::int64_t w = 0; w < W; ++w) start[static_cast<std::size_t>(w)] = w * params.step;
  json a_start = attrs;
  a_start["description"] = "index of each window's first point";
  writer.write("start", Shape{W}, start.data(), a_start);
  auto put = [&](const char* name, const std::vector<double>& v, const char* what) {
    json a = attrs;
    a["description"] = what;
    writer.write(name, shape, v.data(), a);
  };
  put("theta", est.theta, "location estimate");
  if (params.shapes == 2) {
    put("p1", est.p, "left shape estimate");
    put("p2", est.p2, "right shape estimate");
  } else {
    put("p", est.p, "shape estimate");
  }
  put("s_l", est.s_l, "left scale");
  put("s_r", est.s_r, "right scale");
  put("loglik", est.loglik, "maximised log-likelihood");
  {
    json a = attrs;
    a["description"] = "0: the window's fit is a maximum; 1: no maximum, all points equal; 2: no maximum, the "
                       "location holds tied values and the shape sits at the grid's smallest (the likelihood grows "
                       "without bound as the shape falls to 0); fits and quantiles NaN where not 0";
    writer.write("no_maximum", shape, reinterpret_cast<const std::uint8_t*>(degenerate.data()), a);
  }
  put("skew", est.skew, params.shapes == 2 ? "left mass s_l g1 / (s_l g1 + s_r g2), g_i = Gamma(1 + 1/p_i)"
                                           : "s_l / (s_l + s_r)");
  // information criteria: k parameters (theta, shapes, two scales), n points per window
  const double kpar = params.shapes == 2 ? 5 : 4, nwin = static_cast<double>(params.window);
  auto criteria = [&](const std::vector<double>& ll, double k, const char* aic_name, const char* bic_name,
                      const char* what) {
    json at = attrs;
    at["description"] = std::string("Akaike information criterion 2k - 2 loglik of the ") + what;
    at["parameters"] = k;
    writer.write(aic_name, shape, aic(ll, k).data(), at);
    at["description"] = std::string("Bayesian information criterion k log(n) - 2 loglik of the ") + what;
    writer.write(bic_name, shape, bic(ll, k, nwin).data(), at);
  };
  criteria(est.loglik, kpar, "aic", "bic", "AEPD fit");
  auto table = [&](const char* name, const std::vector<double>& v, std::int64_t cols, const json& names,
                   const std::string& what) {
    json a = attrs;
    a["description"] = what;
    a["columns"] = names;
    writer.write(name, Shape{s.series, W, cols}, v.data(), a);
  };
  if (fo.inform) {
    const json names = params.shapes == 2 ? json{"theta", "p1", "p2", "s_l", "s_r"} : json{"theta", "p", "s_l", "s_r"};
    table("stderr", est.stderr_, params.shapes == 2 ? 5 : 4, names,
          "standard errors: square roots of the diagonal of the inverse observed information (minus the Hessian of "
          "the log-likelihood) at the refined optimum; theta's is NaN where p <= 1 or theta sits on a data point (the "
          "log-likelihood has no second derivative in theta there; the others then hold theta fixed)");
    table("theta_ci", est.theta_ci, 2, json{"lower", "upper"},
          "95% interval for theta: theta +- 1.96 stderr where theta's information exists, else the profile-likelihood "
          "interval {theta : 2 (loglik - profile(theta)) <= 3.841} with the shapes at their estimates");
  }
  if (fo.gof) {
    put("ks", est.ks, "Kolmogorov-Smirnov statistic sup |F_n - F| of the window against its fitted distribution "
                      "(parameters estimated from the same window: the usual critical values do not apply)");
    put("ad", est.ad, "Anderson-Darling statistic A^2 of the window against its fitted distribution "
                      "(parameters estimated from the same window: the usual critical values do not apply)");
  }
  auto column = [&](const std::vector<double>& v, std::size_t cols, std::size_t c) {
    std::vector<double> out(v.size() / cols);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = v[i * cols + c];
    return out;
  };
  if (fo.normal) {
    std::vector<double> par(est.normal.size() / 3 * 2);
    for (std::size_t i = 0; i < par.size() / 2; ++i) {
      par[2 * i] = est.normal[3 * i];
      par[2 * i + 1] = est.normal[3 * i + 1];
    }
    table("normal", par, 2, json{"mu", "sigma"}, "normal fit of each window (maximum likelihood: mean, sd with 1/n)");
    const std::vector<double> ll = column(est.normal, 3, 2);
    put("loglik_normal", ll, "maximised log-likelihood of the normal fit");
    criteria(ll, 2, "aic_normal", "bic_normal", "normal fit");
  }
  if (fo.student) {
    std::vector<double> par(est.student.size() / 4 * 3);
    for (std::size_t i = 0; i < par.size() / 3; ++i)
      for (int c = 0; c < 3; ++c) par[3 * i + c] = est.student[4 * i + c];
    table("t", par, 3, json{"mu", "sigma", "nu"},
          "location-scale Student-t fit of each window (maximum likelihood; nu searched in [0.2, 1000])");
    const std::vector<double> ll = column(est.student, 4, 3);
    put("loglik_t", ll, "maximised log-likelihood of the Student-t fit");
    criteria(ll, 3, "aic_t", "bic_t", "Student-t fit");
  }
  if (!levels.empty()) {
    json a = attrs;
    a["description"] = "quantiles of the fitted distribution, last axis by level";
    json names = json::array();
    for (double q : levels) names.push_back(level_name(q));
    a["levels"] = levels;
    a["level_names"] = names;
    writer.write("quantiles", Shape{s.series, W, static_cast<std::int64_t>(levels.size())}, est.quantiles.data(), a);
  }
  if (backtest) {
    const std::int64_t L = static_cast<std::int64_t>(levels.size());
    json a = attrs;
    a["description"] = "1 where the out-of-sample point x[window + i] falls beyond the quantile of the latest window "
                       "ending before it (window (i / step)): below it for levels <= 0.5, above it for levels > 0.5; "
                       "2 where that window has no maximum (no forecast)";
    a["levels"] = levels;
    a["first_index"] = params.window;
    a["dims"] = json{"series", "time", "level"};
    if (T > 0) writer.write("exceedances", Shape{s.series, T, L}, hits.data(), a);
    json b = attrs;
    b["description"] = "VaR backtest per series and level: Kupiec's proportion-of-failures LR test (chi-square 1), "
                       "Christoffersen's independence LR test (chi-square 1) and conditional coverage (their sum, "
                       "chi-square 2); expected rate: the level, or 1 - level above 0.5; points whose window has "
                       "no maximum (no forecast) are counted in no_forecast and left out of n and the tests";
    b["columns"] = json{"level", "n", "exceedances", "kupiec_lr", "kupiec_p", "christoffersen_ind_lr",
                        "christoffersen_ind_p", "cc_lr", "cc_p", "no_forecast"};
    writer.write("backtest", Shape{s.series, L, kBacktestColumns}, backtest_rows.data(), b);
  }
  if (o.xlabels) {
    const std::string column_name = o.xlabels->attrs.value("column", std::string("label"));
    std::vector<std::string> last(static_cast<std::size_t>(W));
    for (std::int64_t w = 0; w < W; ++w)
      last[static_cast<std::size_t>(w)] = time_labels[static_cast<std::size_t>(w * params.step + params.window - 1)];
    writer.write(make_labels("window_label", last, "window", column_name));
    if (backtest && T > 0)
      writer.write(make_labels("exceedance_label",
                               std::vector<std::string>(time_labels.begin() + params.window, time_labels.end()),
                               "exceedances", column_name));
  }
}

json fit_attrs(const Series& s, const Params& params, bool refined, const std::string& alpha_grid, Backend backend,
               int ranks, std::int64_t all_equal, std::int64_t tied) {
  json attrs = {{"kind", "mle.fit"},
                {"window", params.window},
                {"step", params.step},
                {"windows", window_count(s, params)},
                {"series", s.series},
                {"alpha_grid", alpha_grid},
                {"shapes", params.grid.alpha.size()},
                {"method", params.exact ? "exact" : "rolling"},
                {"refresh", params.refresh},
                {"refined", refined},
                {"tail_shapes", params.shapes},
                {"backend", backend_name(backend)},
                {"model", params.shapes == 2
                              ? "AEPD with two shapes: f(x) = exp(-(|x-theta|/s)^q) / (s_l Gamma(1+1/p1) + s_r Gamma(1+1/p2)), "
                                "s = s_l and q = p1 left of theta, s = s_r and q = p2 right"
                              : "AEPD: f(x) = p/((s_l+s_r) Gamma(1/p)) exp(-(|x-theta|/s)^p), s = s_l left of theta, s_r right"}};
  if (ranks > 1) attrs["ranks"] = ranks;
  attrs["no_maximum"] = {
      {"windows", all_equal + tied},
      {"all_equal", all_equal},
      {"tied", tied},
      {"reason", "windows without a maximum of the likelihood have NaN fits and quantiles (record no_maximum: "
                 "1 all points equal, 2 tied values at the location with the shape at the grid's smallest)"}};
  return attrs;
}

void write_garch(StreamWriter& writer, const Stamp& stamp, const std::vector<Record>& records, const Record& xr,
                 const Series& s, const Params& params, bool whole, bool inform, const std::vector<double>& levels,
                 bool backtest, bool fhs, const Engine& engine) {
  // 1. the fits
  GarchOptions o;
  o.window = whole ? s.length : params.window;
  o.step = params.step;
  o.inform = inform;
  o.shapes = params.shapes;
  const bool two = o.shapes == 2;
  const int K = two ? kGarchParams : kGarchParams - 1;  // the fitted parameters (one shape: p2 is p1)
  if (o.window < 10) fail_input("--model garch needs windows of at least 10 points, got " + std::to_string(o.window));
  Params wp = params;
  wp.window = o.window;
  const std::int64_t W = window_count(s, wp);
  double solve_seconds = 0;
  const std::vector<GarchFit> fits = fit_garch(s.x, s.series, s.length, o, engine, &solve_seconds);
  // 2. the records' columns, the quantiles and the constraints' report
  const std::size_t N = fits.size(), L = levels.size();
  std::vector<double> mu(N), omega(N), alpha(N), beta(N), skew(N), p(N), p2(N), s_l(N), s_r(N), ll(N), sigma(N),
      q(N * L), se(N * static_cast<std::size_t>(K));
  std::int64_t edge = 0, unconverged = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const GarchFit& f = fits[i];
    mu[i] = f.par[kMu];
    omega[i] = f.par[kOmega];
    alpha[i] = f.par[kAlpha];
    beta[i] = f.par[kBeta];
    skew[i] = f.par[kSkew];
    p[i] = f.par[kShape];
    p2[i] = f.par[kShape2];
    const StandardAepd z = standard_aepd(skew[i], p[i], p2[i]);
    s_l[i] = z.s_l;
    s_r[i] = z.s_r;
    ll[i] = f.loglik;
    sigma[i] = std::sqrt(f.h_next);
    if (fhs && std::isfinite(f.loglik)) {
      const std::int64_t series_index = static_cast<std::int64_t>(i) / W, w = static_cast<std::int64_t>(i) % W;
      const std::vector<double> fq =
          garch_fhs_quantiles(s.x + series_index * s.length + w * o.step, o.window, f.par, f.h_next, levels);
      std::copy(fq.begin(), fq.end(), q.begin() + static_cast<std::ptrdiff_t>(i * L));
    } else {
      for (std::size_t k = 0; k < L; ++k) q[i * L + k] = garch_quantile(levels[k], f.par, f.h_next);
    }
    for (int k = 0; k < K; ++k) se[i * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)] = f.se[k];
    edge += f.on_edge ? 1 : 0;
    unconverged += f.converged ? 0 : 1;
    if (!std::isfinite(f.loglik))
      fail_input("--model garch: the fit of window " + std::to_string(i) + " is not finite (log-likelihood " +
                 value_text(f.loglik) + ")");
  }
  if (edge > 0)
    std::fprintf(stderr, "mle-fit: %lld of %lld GARCH fits have their maximum on an edge of the "
                 "constraints (alpha = 0, beta = 0 or alpha + beta = 1, to 1e-10; omega = 0, to 1e-14 of the variance)\n", static_cast<long long>(edge), static_cast<long long>(N));
  if (unconverged > 0)
    std::fprintf(stderr, "mle-fit: %lld of %lld GARCH fits stopped at the iteration limit\n",
                 static_cast<long long>(unconverged), static_cast<long long>(N));
  // 3. the backtest: each point after the first window against the one-step quantile of the latest window before it
  std::vector<std::uint8_t> hits;
  std::vector<double> rows;
  const std::int64_t T = s.length - o.window;
  if (backtest && T > 0) {
    hits = exceedances(s, wp, levels, q);
    rows = backtest_rows(s, wp, levels, hits);
  }
  // 4. the records
  json attrs = {{"kind", "mle.fit"},
                {"model", two ? "GARCH(1,1) with AEPD innovations: r_t = mu + sigma_t z_t, sigma_t^2 = omega + garch_alpha "
                                "(r_{t-1} - mu)^2 + garch_beta sigma_{t-1}^2, z_t the AEPD with two shapes (left mass "
                                "skew, shape p1 left of its mode, p2 right of it; Zhu and Zinde-Walsh 2009) "
                                "standardised to mean 0 and variance 1; sigma_1^2 the window's mean square"
                              : "GARCH(1,1) with AEPD innovations: r_t = mu + sigma_t z_t, sigma_t^2 = omega + garch_alpha "
                                "(r_{t-1} - mu)^2 + garch_beta sigma_{t-1}^2, z_t the AEPD (left mass skew, shape p) "
                                "standardised to mean 0 and variance 1; sigma_1^2 the window's mean square"},
                {"tail_shapes", o.shapes},
                {"window", o.window},
                {"step", o.step},
                {"windows", W},
                {"series", s.series},
                {"whole_series", whole},
                {"constraints", "omega > 0, garch_alpha >= 0, garch_beta >= 0, garch_alpha + garch_beta < 1 (enforced)"},
                {"on_constraint_edge", edge},
                {"iteration_limit", unconverged},
                {"backend", engine.cuda ? "cuda" : "cpu"}};
  attrs = stamp(attrs, xr.attrs);
  const Shape shape{s.series, W};
  std::vector<std::int64_t> start(static_cast<std::size_t>(W));
  for (std::int64_t w = 0; w < W; ++w) start[static_cast<std::size_t>(w)] = w * o.step;
  auto put = [&](const char* name, const std::vector<double>& v, const char* what) {
    json a = attrs;
    a["description"] = what;
    writer.write(name, shape, v.data(), a);
  };
  {
    json a = attrs;
    a["description"] = "index of each window's first point";
    writer.write("start", Shape{W}, start.data(), a);
  }
  put("theta", mu, "mu: the conditional mean of the returns");
  put("omega", omega, "GARCH constant omega");
  put("garch_alpha", alpha, "GARCH ARCH coefficient alpha (on the last squared residual)");
  put("garch_beta", beta, "GARCH coefficient beta (on the last conditional variance)");
  if (two) {
    put("p1", p, "the innovations' AEPD shape left of its mode");
    put("p2", p2, "the innovations' AEPD shape right of its mode");
    put("skew", skew, "the innovations' left mass s_l g1 / (s_l g1 + s_r g2), g_i = Gamma(1 + 1/p_i)");
  } else {
    put("p", p, "the innovations' AEPD shape");
    put("skew", skew, "the innovations' left mass s_l / (s_l + s_r)");
  }
  put("s_l", s_l, "left scale of the standardised innovation (mean 0, variance 1)");
  put("s_r", s_r, "right scale of the standardised innovation (mean 0, variance 1)");
  put("loglik", ll, "maximised log-likelihood of the window");
  put("sigma", sigma, "one-step-ahead conditional standard deviation sigma_{n+1}");
  {
    json a = attrs;
    a["parameters"] = K;
    a["description"] = "Akaike information criterion 2k - 2 loglik";
    writer.write("aic", shape, aic(ll, K).data(), a);
    a["description"] = "Bayesian information criterion k log(n) - 2 loglik";
    writer.write("bic", shape, bic(ll, K, static_cast<double>(o.window)).data(), a);
  }
  if (inform) {
    json a = attrs;
    a["description"] = "standard errors: square roots of the diagonal of the inverse observed information (minus the "
                       "Hessian of the log-likelihood by central differences) at the estimate; NaN where it is not "
                       "positive definite";
    a["columns"] = two ? json{"mu", "omega", "garch_alpha", "garch_beta", "skew", "p1", "p2"}
                       : json{"mu", "omega", "garch_alpha", "garch_beta", "skew", "p"};
    writer.write("stderr", Shape{s.series, W, K}, se.data(), a);
  }
  if (L > 0) {
    json a = attrs;
    a["description"] = fhs ? "one-step-ahead conditional quantiles mu + sigma_{n+1} z_q, z_q the empirical quantile "
                             "(linear between order statistics, Hyndman-Fan 7) of the window's standardised residuals "
                             "(filtered historical simulation), last axis by level"
                           : "one-step-ahead conditional quantiles mu + sigma_{n+1} z_q, z_q the fitted AEPD's, last "
                             "axis by level";
    a["method"] = fhs ? "filtered historical simulation" : "AEPD";
    a["levels"] = levels;
    json names = json::array();
    for (double v : levels) names.push_back(level_name(v));
    a["level_names"] = names;
    writer.write("quantiles", Shape{s.series, W, static_cast<std::int64_t>(L)}, q.data(), a);
  }
  if (backtest && T > 0) {
    json a = attrs;
    a["description"] = "1 where the point x[window + i] falls beyond the one-step quantile of the latest window ending "
                       "before it (with --step K > 1 that quantile serves the K points after the window)";
    a["levels"] = levels;
    a["first_index"] = o.window;
    writer.write("exceedances", Shape{s.series, T, static_cast<std::int64_t>(L)}, hits.data(), a);
    json b = attrs;
    b["description"] = "VaR backtest per series and level: Kupiec, Christoffersen independence, conditional coverage";
    b["columns"] = json{"level", "n", "exceedances", "kupiec_lr", "kupiec_p", "christoffersen_ind_lr",
                        "christoffersen_ind_p", "cc_lr", "cc_p", "no_forecast"};
    writer.write("backtest", Shape{s.series, static_cast<std::int64_t>(L), kBacktestColumns}, rows.data(), b);
  }
  if (const Record* xl = time_labels_of(records)) {
    const std::vector<std::string> labels = read_labels(*xl);
    if (static_cast<std::int64_t>(labels.size()) != s.length)
      fail_input("record '" + xl->name + "': " + std::to_string(labels.size()) + " labels for a series of length " +
                 std::to_string(s.length));
    const std::string column_name = xl->attrs.value("column", std::string("label"));
    std::vector<std::string> last(static_cast<std::size_t>(W));
    for (std::int64_t w = 0; w < W; ++w)
      last[static_cast<std::size_t>(w)] = labels[static_cast<std::size_t>(w * o.step + o.window - 1)];
    writer.write(make_labels("window_label", last, "window", column_name));
  }
}

}  // namespace numpipe::mle
