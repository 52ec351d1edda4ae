// mle-fit, after the grid search (host, both backends): estimates from the
// grid fits, --refine's searches (inference.hpp) on the CPU, quantiles
// (Value-at-Risk, distribution.hpp) where the CUDA backend does not compute
// them, goodness of fit, the normal and Student-t fits, and the backtest.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "common/error.hpp"
#include "detail/backends.hpp"
#include "mle.hpp"
#include "model.hpp"
#include "statistics.hpp"

namespace numpipe::mle {

double full_loglik(const double* x, std::int64_t n, double theta, double p, double s_l, double s_r) {
  double ll = 0;
  for (std::int64_t k = 0; k < n; ++k) ll += log_density(x[k], theta, p, s_l, s_r);
  return ll;
}

double profile_loglik_at(const double* x, std::int64_t n, double theta, double p) {
  double xm = 0, xp = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    if (x[k] <= theta) xm += std::pow(theta - x[k], p);
    else xp += std::pow(x[k] - theta, p);
  }
  return profile_loglik(scale_sum(xm, xp, 1.0 / (p + 1.0)), p, static_cast<double>(n));
}

// ---- goodness of fit ---------------------------------------------------------------
// Kolmogorov-Smirnov D = max over the sorted sample of max(i/n - F_i, F_i - (i-1)/n);
// Anderson-Darling A^2 = -n - (1/n) sum (2i - 1) (log F_i + log(1 - F_(n+1-i)))
// (Anderson and Darling 1954). With estimated parameters their usual critical
// values do not apply (docs/mle.md).
void gof_statistics(const double* x, std::int64_t n, double theta, double p1, double p2, double s_l, double s_r,
                    double* ks, double* ad) {
  if (!(s_l > 0 && s_r > 0 && std::isfinite(s_l) && std::isfinite(s_r))) {  // no fitted distribution
    *ks = *ad = NAN;
    return;
  }
  std::vector<double> v(x, x + n);
  std::sort(v.begin(), v.end());
  const double nd = static_cast<double>(n), lo = 1e-300, hi = 1.0 - std::ldexp(1.0, -53);
  double d = 0, a = 0;
  std::vector<double> F(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double f = aepd_cdf(v[static_cast<std::size_t>(i)], theta, p1, p2, s_l, s_r);
    F[static_cast<std::size_t>(i)] = f;
    d = std::max({d, static_cast<double>(i + 1) / nd - f, f - static_cast<double>(i) / nd});
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const double f = std::min(hi, std::max(lo, F[static_cast<std::size_t>(i)]));
    const double g = std::min(hi, std::max(lo, F[static_cast<std::size_t>(n - 1 - i)]));
    a += static_cast<double>(2 * i + 1) * (std::log(f) + std::log1p(-g));
  }
  *ks = d;
  *ad = -nd - a / nd;
}

// ---- normal and Student-t ------------------------------------------------------------
void fit_normal(const double* x, std::int64_t n, double* out) {
  const double nd = static_cast<double>(n);
  double mu = 0;
  for (std::int64_t k = 0; k < n; ++k) mu += x[k];
  mu /= nd;
  double ss = 0;
  for (std::int64_t k = 0; k < n; ++k) ss += (x[k] - mu) * (x[k] - mu);
  const double var = ss / nd;
  out[0] = mu;
  out[1] = std::sqrt(var);
  out[2] = -0.5 * nd * (std::log(2.0 * M_PI * var) + 1.0);
}

namespace {
// Location-scale t log-likelihood at (mu, sigma, nu).
double t_loglik(const double* x, std::int64_t n, double mu, double sigma, double nu) {
  const double nd = static_cast<double>(n);
  double s = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const double z = (x[k] - mu) / sigma;
    s += std::log1p(z * z / nu);
  }
  return nd * (std::lgamma(0.5 * (nu + 1.0)) - std::lgamma(0.5 * nu) - 0.5 * std::log(nu * M_PI) - std::log(sigma)) -
         0.5 * (nu + 1.0) * s;
}
// The maximum over (mu, sigma) at fixed nu from (mu, sigma): Newton steps on
// the analytic 2x2 Hessian where it is negative definite and the step raises
// the log-likelihood, else one EM step (weights (nu+1)/(nu + z^2); Dempster,
// Laird and Rubin 1977, which never lowers it); until the step is below 1e-12.
double t_location_scale(const double* x, std::int64_t n, double nu, double& mu, double& sigma) {
  const double nd = static_cast<double>(n);
  double ll = t_loglik(x, n, mu, sigma, nu);
  for (int it = 0; it < 200; ++it) {
    // with r = x - mu, c = nu sigma^2, q = 1 + r^2/c, f = (nu+1)/c:
    // dl/dmu = f sum r/q, dl/dsigma = -n/sigma + f sum r^2/q / sigma, and
    // d2/dmu2 = f sum(-1/q + 2 r^2/(c q^2)), d2/dmu dsigma = -2 f sum(r/q)/sigma + 2 f sum(r^3/q^2)/(c sigma),
    // d2/dsigma2 = n/sigma^2 - 3 f sum(r^2/q)/sigma^2 + 2 f sum(r^4/q^2)/(c sigma^2)
    const double c = nu * sigma * sigma, f = (nu + 1.0) / c;
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, sq = 0, r2q2 = 0, sw = 0, swr = 0, swr2 = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const double r = x[k] - mu, iq = 1.0 / (1.0 + r * r / c), iq2 = iq * iq;
      s1 += r * iq;
      s2 += r * r * iq;
      s3 += r * r * r * iq2;
      s4 += r * r * r * r * iq2;
      sq += iq;
      r2q2 += r * r * iq2;
      const double w = (nu + 1.0) / nu * iq;  // EM weight (nu+1)/(nu + z^2)
      sw += w;
      swr += w * r;
      swr2 += w * r * r;
    }
    const double gm = f * s1, gs = -nd / sigma + f * s2 / sigma;
    const double Hmm = f * (-sq + 2.0 * r2q2 / c);
    const double Hms = -2.0 * f * s1 / sigma + 2.0 * f * s3 / (c * sigma);
    const double Hss = nd / (sigma * sigma) - 3.0 * f * s2 / (sigma * sigma) + 2.0 * f * s4 / (c * sigma * sigma);
    double nmu = mu, nsig = sigma;
    bool newton = false;
    const double det = Hmm * Hss - Hms * Hms;
    if (Hmm < 0 && det > 0) {
      const double dm = -(Hss * gm - Hms * gs) / det, ds = -(-Hms * gm + Hmm * gs) / det;
      if (sigma + ds > 0) {
        const double l2 = t_loglik(x, n, mu + dm, sigma + ds, nu);
        if (l2 >= ll) {
          nmu = mu + dm;
          nsig = sigma + ds;
          ll = l2;
          newton = true;
        }
      }
    }
    if (!newton) {  // EM: mu = sum w x / sum w, sigma^2 = sum w (x - mu)^2 / n, weights at the old point
      const double delta = swr / sw;
      nmu = mu + delta;
      nsig = std::sqrt(std::max(0.0, swr2 - delta * delta * sw) / nd);
      const double l2 = t_loglik(x, n, nmu, nsig, nu);
      if (!(l2 >= ll)) break;
      ll = l2;
    }
    const bool done = std::fabs(nmu - mu) <= 1e-12 * nsig && std::fabs(nsig - sigma) <= 1e-12 * nsig;
    mu = nmu;
    sigma = nsig;
    if (done) break;
  }
  return ll;
}
}  // namespace

// nu by golden-section search of the profile log-likelihood over log nu in
// [log 0.2, log 1000] to 1e-6 (Kiefer 1953), (mu, sigma) maximised at each nu
// (t_location_scale, started from the previous nu's). nu = 1000 means the data
// cannot tell the t from the normal.
void fit_student_t(const double* x, std::int64_t n, double* out) {
  double normal[3];
  fit_normal(x, n, normal);
  double mu = normal[0], sigma = normal[1] > 0 ? normal[1] : 1.0;
  if (!(normal[1] > 0)) {
    out[0] = normal[0];
    out[1] = 0;
    out[2] = NAN;
    out[3] = INFINITY;
    return;
  }
  auto prof = [&](double lnu) { return t_location_scale(x, n, std::exp(lnu), mu, sigma); };
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double a = std::log(0.2), b = std::log(1000.0);
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = prof(c), fd = prof(d);
  while (b - a > 1e-6) {
    if (fc >= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = prof(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = prof(d);
    }
  }
  const double lnu = fc >= fd ? c : d;
  const double ll = prof(lnu);
  out[0] = mu;
  out[1] = sigma;
  out[2] = std::exp(lnu);
  out[3] = ll;
}

// ---- finishing -------------------------------------------------------------------
namespace {
// The grid's range of shapes (make_task's p_min, p_max), once per run.
struct ShapeRange {
  double lo, hi;
};
ShapeRange shape_range(const Params& p) {
  const auto& alpha = p.grid.alpha;
  return {*std::min_element(alpha.begin(), alpha.end()), *std::max_element(alpha.begin(), alpha.end())};
}

WindowTask make_task(const Series& s, const Params& p, const WindowFits& fits, std::size_t u, std::int64_t begin,
                     bool refine, bool inform, const ShapeRange& range) {
  const std::int64_t W = window_count(s, p);
  const std::int64_t si = (begin + static_cast<std::int64_t>(u)) / W;
  const auto& alpha = p.grid.alpha;
  const std::int64_t A = static_cast<std::int64_t>(alpha.size());
  auto box = [&](std::int64_t a, double& v, double& lo, double& hi) {
    v = alpha[static_cast<std::size_t>(a)];
    lo = alpha[static_cast<std::size_t>(std::max<std::int64_t>(a - 1, 0))];
    hi = alpha[static_cast<std::size_t>(std::min<std::int64_t>(a + 1, A - 1))];
  };
  WindowTask t;
  t.theta0 = s.x[si * s.length + fits.index[u]];
  box(fits.shape[u], t.p1, t.p1_lo, t.p1_hi);
  t.p_min = range.lo;
  t.p_max = range.hi;
  t.two_shapes = p.shapes == 2;
  if (t.two_shapes) box(fits.shape2[u], t.p2, t.p2_lo, t.p2_hi);
  else {
    t.p2 = t.p1;
    t.p2_lo = t.p1_lo;
    t.p2_hi = t.p1_hi;
  }
  t.refine = refine || inform;
  t.inform = inform;
  return t;
}
}  // namespace

namespace {
// fits must hold exactly windows [begin, end) (fits[u] is window begin + u):
// passing a whole run's fits with a sub-range would pair each window with
// another window's grid optimum.
void require_range_fits(const char* who, const WindowFits& fits, std::int64_t begin, std::int64_t end) {
  if (begin < 0 || end < begin || fits.index.size() != static_cast<std::size_t>(end - begin))
    fail_internal(std::string(who) + ": the fits hold " + std::to_string(fits.index.size()) + " windows, not the " +
                  std::to_string(end - begin) + " of [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
}
}  // namespace

std::vector<WindowTask> make_tasks(const Series& s, const Params& p, const WindowFits& fits, bool refine, bool inform,
                                   std::int64_t begin, std::int64_t end) {
  require_range_fits("mle make_tasks", fits, begin, end);
  std::vector<WindowTask> tasks(static_cast<std::size_t>(end - begin));
  const ShapeRange range = shape_range(p);
#pragma omp parallel for schedule(static)
  for (std::int64_t u = 0; u < end - begin; ++u)
    tasks[static_cast<std::size_t>(u)] = make_task(s, p, fits, static_cast<std::size_t>(u), begin, refine, inform, range);
  return tasks;
}

namespace {
// Progress from an OpenMP loop: every thread counts, the master reports.
struct LoopProgress {
  const std::function<void(std::int64_t)>& report;
  std::atomic<std::int64_t> done{0};
  void step() {
    if (!report) return;  // no shared counter for every thread to contend on
    const std::int64_t d = ++done;
    if (omp_get_thread_num() == 0) report(d);
  }
};
}  // namespace

std::vector<WindowEstimate> estimate_cpu(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                                         bool inform, std::int64_t begin, std::int64_t end,
                                         const std::function<void(std::int64_t)>& progress) {
  require_range_fits("mle estimate_cpu", fits, begin, end);
  const std::int64_t W = window_count(s, p);
  std::vector<WindowEstimate> out(static_cast<std::size_t>(end - begin));
  LoopProgress lp{progress};
  const ShapeRange range = shape_range(p);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t i = 0; i < end - begin; ++i) {
    const std::size_t u = static_cast<std::size_t>(i);
    const std::int64_t si = (begin + i) / W, w = (begin + i) % W;
    const WindowTask t = make_task(s, p, fits, u, begin, refine, inform, range);
    out[u] = estimate_window(s.x + si * s.length + w * p.step, p.window, t);
    lp.step();
  }
  return out;
}

Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels) {
  return finish(s, p, fits, refine, levels, 0, s.series * window_count(s, p));
}

Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels, std::int64_t begin, std::int64_t end) {
  FinishOptions o;
  o.refine = refine;
  o.levels = levels;
  return finish(s, p, fits, o, begin, end);
}

Estimates finish(const Series& s, const Params& p, const WindowFits& fits, const FinishOptions& o,
                 std::int64_t begin, std::int64_t end, const std::vector<WindowEstimate>* refined) {
  const std::int64_t W = window_count(s, p), n = p.window;
  if (begin < 0 || begin > end || end > s.series * W || fits.shape.size() != static_cast<std::size_t>(end - begin))
    fail_internal("mle finish: window range [" + std::to_string(begin) + ", " + std::to_string(end) + ") does not fit");
  const std::size_t count = static_cast<std::size_t>(end - begin), L = o.levels.size();
  const bool two = p.shapes == 2, search = o.refine || o.inform;
  std::vector<WindowEstimate> own;
  if (search && !refined) {
    own = estimate_cpu(s, p, fits, o.refine, o.inform, begin, end, o.progress);
    refined = &own;
  }
  if (search && refined->size() != count) fail_internal("mle finish: refined estimates do not match the windows");
  const std::size_t K = two ? 5 : 4;
  Estimates e;
  for (auto* v : {&e.theta, &e.p, &e.p2, &e.s_l, &e.s_r, &e.loglik, &e.skew}) v->resize(count);
  e.refined.assign(count, search ? 1 : 0);
  e.quantiles.resize(count * L);
  if (o.inform) {
    e.stderr_.resize(count * K);
    e.theta_ci.resize(count * 2);
    e.smooth.resize(count);
  }
  if (o.gof) {
    e.ks.resize(count);
    e.ad.resize(count);
  }
  if (o.normal) e.normal.resize(count * 3);
  if (o.student) e.student.resize(count * 4);
  const auto& alpha = p.grid.alpha;
  // the second loop reports progress only where it does the slow work
  const std::function<void(std::int64_t)> none;
  LoopProgress lp{o.gof || o.student ? o.progress : none};
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i) {
    lp.step();
    const std::size_t u = static_cast<std::size_t>(i);
    const std::int64_t si = (begin + i) / W, w = (begin + i) % W;
    const double* x = s.x + si * s.length;
    const double* win = x + w * p.step;
    double theta, p1, p2, sl, sr, ll;
    if (search) {
      const WindowEstimate& r = (*refined)[u];
      theta = r.theta;
      p1 = r.p1;
      p2 = r.p2;
      sl = r.s_l;
      sr = r.s_r;
      ll = r.loglik;
      if (o.inform) {
        for (std::size_t k = 0; k < K; ++k) e.stderr_[u * K + k] = r.se[k];
        e.theta_ci[u * 2] = r.ci_lo;
        e.theta_ci[u * 2 + 1] = r.ci_hi;
        e.smooth[u] = static_cast<std::uint8_t>(r.smooth);
      }
    } else {
      theta = x[fits.index[u]];
      p1 = alpha[static_cast<std::size_t>(fits.shape[u])];
      p2 = two ? alpha[static_cast<std::size_t>(fits.shape2[u])] : p1;
      ll = fits.loglik[u];
      if (two) {
        const Fit2 f = profile2(fits.xm[u], fits.xp[u], shape_const(p1), shape_const(p2), static_cast<double>(n));
        sl = f.s_l;
        sr = f.s_r;
      } else {
        const Scales sc = closed_form_scales(fits.xm[u], fits.xp[u], p1, static_cast<double>(n));
        sl = sc.s_l;
        sr = sc.s_r;
      }
    }
    e.theta[u] = theta;
    e.p[u] = p1;
    e.p2[u] = p2;
    e.s_l[u] = sl;
    e.s_r[u] = sr;
    e.loglik[u] = ll;
    if (p1 == p2) {
      e.skew[u] = sl / (sl + sr);
    } else {
      const double g1 = sl * std::exp(std::lgamma(1.0 + 1.0 / p1)), g2 = sr * std::exp(std::lgamma(1.0 + 1.0 / p2));
      e.skew[u] = g1 / (g1 + g2);
    }
    for (std::size_t q = 0; q < L; ++q) e.quantiles[u * L + q] = aepd_quantile2(o.levels[q], theta, p1, p2, sl, sr);
    if (o.gof) gof_statistics(win, n, theta, p1, p2, sl, sr, &e.ks[u], &e.ad[u]);
    if (o.normal) fit_normal(win, n, &e.normal[u * 3]);
    if (o.student) fit_student_t(win, n, &e.student[u * 4]);
  }
  return e;
}

// ---- VaR backtest ------------------------------------------------------------------
std::vector<std::uint8_t> exceedances(const Series& s, const Params& p, const std::vector<double>& levels,
                                      const std::vector<double>& quantiles) {
  const std::int64_t W = window_count(s, p), n = p.window, T = s.length - n;
  const std::size_t L = levels.size();
  if (T <= 0 || L == 0) return {};
  std::vector<std::uint8_t> hits(static_cast<std::size_t>(s.series * T) * L);
  for (std::int64_t si = 0; si < s.series; ++si)
    for (std::int64_t t = n; t < s.length; ++t) {
      const std::int64_t w = (t - n) / p.step;
      const double r = s.x[si * s.length + t];
      for (std::size_t q = 0; q < L; ++q) {
        const double v = quantiles[static_cast<std::size_t>(si * W + w) * L + q];
        const bool hit = levels[q] <= 0.5 ? r < v : r > v;
        hits[static_cast<std::size_t>(si * T + t - n) * L + q] = std::isnan(v) ? kNoForecast : (hit ? 1 : 0);
      }
    }
  return hits;
}

std::vector<Degenerate> mark_degenerate(const Series& s, const Params& p, std::size_t levels, Estimates& e) {
  const std::int64_t W = window_count(s, p), n = p.window;
  const double smallest = *std::min_element(p.grid.alpha.begin(), p.grid.alpha.end());
  std::vector<Degenerate> code(static_cast<std::size_t>(s.series * W), Degenerate::none);
  for (std::int64_t w = 0; w < s.series * W; ++w) {
    const std::size_t i = static_cast<std::size_t>(w);
    const double* x = s.x + (w / W) * s.length + (w % W) * p.step;
    bool all_equal = true;
    for (std::int64_t k = 1; k < n && all_equal; ++k) all_equal = x[k] == x[0];
    const bool at_edge = (i < e.p.size() && e.p[i] <= smallest) || (i < e.p2.size() && e.p2[i] <= smallest);
    // the points at the data point nearest theta (theta itself, but where a
    // refine with shapes above 1 moved it off)
    std::int64_t tied = 0;
    if (!all_equal && at_edge) {
      double nearest = x[0];
      for (std::int64_t k = 1; k < n; ++k)
        if (std::fabs(x[k] - e.theta[i]) < std::fabs(nearest - e.theta[i])) nearest = x[k];
      for (std::int64_t k = 0; k < n; ++k) tied += x[k] == nearest ? 1 : 0;
    }
    code[i] = all_equal ? Degenerate::constant : (tied >= 2 ? Degenerate::ties : Degenerate::none);
    if (code[i] == Degenerate::none) continue;
    auto blank = [](std::vector<double>& v, std::size_t from, std::size_t count) {
      for (std::size_t k = from; k < from + count && k < v.size(); ++k) v[k] = NAN;
    };
    for (auto* v : {&e.theta, &e.p, &e.p2, &e.s_l, &e.s_r, &e.loglik, &e.skew, &e.ks, &e.ad}) blank(*v, i, 1);
    blank(e.quantiles, i * levels, levels);
    if (!e.stderr_.empty()) {
      const std::size_t K = e.stderr_.size() / code.size();
      blank(e.stderr_, i * K, K);
    }
    blank(e.theta_ci, 2 * i, 2);
  }
  return code;
}

double chi2_sf1(double x) { return x > 0 ? std::erfc(std::sqrt(0.5 * x)) : 1.0; }
double chi2_sf2(double x) { return x > 0 ? std::exp(-0.5 * x) : 1.0; }

namespace {
// k log(q), 0 when k = 0 (the likelihoods' convention 0 log 0 = 0).
double xlogy(double k, double q) { return k > 0 ? k * std::log(q) : 0.0; }
}  // namespace

// Kupiec (1995): LR_pof = -2 log[(1-pi)^(T-x) pi^x] + 2 log[(1-x/T)^(T-x) (x/T)^x],
// chi-square(1). Christoffersen (1998): with n_ij the transitions i -> j of the
// hit series, pi01 = n01/(n00+n01), pi11 = n11/(n10+n11), pi = (n01+n11)/(T-1),
// LR_ind = -2 log[(1-pi)^(n00+n10) pi^(n01+n11)]
//          + 2 log[(1-pi01)^n00 pi01^n01 (1-pi11)^n10 pi11^n11], chi-square(1);
// LR_cc = LR_pof + LR_ind, chi-square(2).
BacktestRow backtest_statistics(double level, const std::uint8_t* hits, std::int64_t count, std::int64_t stride) {
  const double pi = level <= 0.5 ? level : 1.0 - level;
  double x = 0, n00 = 0, n01 = 0, n10 = 0, n11 = 0, valid = 0, missing = 0;
  for (std::int64_t t = 0; t < count; ++t) {
    const int h = hits[t * stride];
    if (h == kNoForecast) {
      ++missing;
      continue;
    }
    ++valid;
    x += h;
    if (t > 0 && hits[(t - 1) * stride] != kNoForecast) {
      const int g = hits[(t - 1) * stride];
      (g ? (h ? n11 : n10) : (h ? n01 : n00)) += 1;
    }
  }
  const double T = valid;
  BacktestRow b{};
  b.level = level;
  b.n = T;
  b.no_forecast = missing;
  b.exceedances = x;
  const double ph = T > 0 ? x / T : 0;
  b.kupiec_lr = std::max(0.0, -2.0 * (xlogy(T - x, 1.0 - pi) + xlogy(x, pi)) + 2.0 * (xlogy(T - x, 1.0 - ph) + xlogy(x, ph)));
  const double p01 = n00 + n01 > 0 ? n01 / (n00 + n01) : 0, p11 = n10 + n11 > 0 ? n11 / (n10 + n11) : 0;
  const double p2 = n00 + n01 + n10 + n11 > 0 ? (n01 + n11) / (n00 + n01 + n10 + n11) : 0;
  b.christoffersen_ind_lr =
      std::max(0.0, -2.0 * (xlogy(n00 + n10, 1.0 - p2) + xlogy(n01 + n11, p2)) +
                        2.0 * (xlogy(n00, 1.0 - p01) + xlogy(n01, p01) + xlogy(n10, 1.0 - p11) + xlogy(n11, p11)));
  b.cc_lr = b.kupiec_lr + b.christoffersen_ind_lr;
  b.kupiec_p = chi2_sf1(b.kupiec_lr);
  b.christoffersen_ind_p = chi2_sf1(b.christoffersen_ind_lr);
  b.cc_p = chi2_sf2(b.cc_lr);
  if (T == 0) b.kupiec_lr = b.christoffersen_ind_lr = b.cc_lr = b.kupiec_p = b.christoffersen_ind_p = b.cc_p = NAN;
  return b;
}

}  // namespace numpipe::mle
