// mle-fit, after the grid search (host, both backends): estimates from the
// grid fits, --refine's bounded 1-D searches, and quantiles (Value-at-Risk)
// from the regularised incomplete gamma function.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "mle.hpp"
#include "model.hpp"

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

// ---- incomplete gamma ---------------------------------------------------------
// P(a, x) by its power series for x < a + 1 (DLMF 8.11.4 with 8.7.1:
// gamma(a, x) = x^a e^-x sum_k x^k / (a (a+1) ... (a+k))), else Q(a, x) by the
// continued fraction of DLMF 8.9.2 evaluated with the modified Lentz method
// (Lentz 1976; Thompson and Barnett 1986).
namespace {
double series_p(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * 1e-17) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}
double fraction_q(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}
}  // namespace

double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  if (std::isinf(x)) return 1;
  return x < a + 1.0 ? series_p(a, x) : 1.0 - fraction_q(a, x);
}
double gamma_q(double a, double x) {
  if (x <= 0) return 1;
  if (std::isinf(x)) return 0;
  return x < a + 1.0 ? 1.0 - series_p(a, x) : fraction_q(a, x);
}

namespace {
// Solves F(x) = prob for a monotone F on (0, inf) (increasing when up):
// bracket by doubling, then Newton steps in log x kept inside the bracket,
// bisection when a step leaves it.
template <class F, class D>
double solve_monotone(F f, D density, double prob, bool up) {
  double lo = 0, hi = 1;
  auto below = [&](double x) { return up ? f(x) < prob : f(x) > prob; };  // root lies above x
  for (int i = 0; i < 2100 && below(hi); ++i) {
    lo = hi;
    hi *= 2;
  }
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 300; ++it) {
    const double fx = f(x) - prob;
    if (fx == 0) return x;
    if ((fx < 0) == up) lo = x;
    else hi = x;
    const double dens = density(x);
    double nx = dens > 0 ? x - (up ? fx : -fx) / dens : -1;
    if (!(nx > lo && nx < hi)) nx = 0.5 * (lo + hi);
    if (std::fabs(nx - x) <= 1e-15 * std::fabs(x) || hi - lo <= 1e-15 * hi) return nx;
    x = nx;
  }
  return x;
}
}  // namespace

double gamma_p_inverse(double a, double prob) {
  if (prob <= 0) return 0;
  if (prob >= 1) return std::numeric_limits<double>::infinity();
  auto dens = [a](double x) { return std::exp(-x + (a - 1) * std::log(x) - std::lgamma(a)); };
  return solve_monotone([a](double x) { return gamma_p(a, x); }, dens, prob, true);
}
double gamma_q_inverse(double a, double prob) {
  if (prob >= 1) return 0;
  if (prob <= 0) return std::numeric_limits<double>::infinity();
  auto dens = [a](double x) { return std::exp(-x + (a - 1) * std::log(x) - std::lgamma(a)); };
  return solve_monotone([a](double x) { return gamma_q(a, x); }, dens, prob, false);
}

// The AEPD's quantile: the left branch theta - s_l G^(1/p) holds mass
// w = s_l / (s_l + s_r), with G ~ Gamma(1/p, 1) (spec, "Generating data"), so
// for q <= w: q = w Q(1/p, ((theta - x)/s_l)^p); else q = w + (1-w) P(1/p, ((x - theta)/s_r)^p).
double aepd_quantile(double q, double theta, double p, double s_l, double s_r) {
  if (!(s_l + s_r > 0)) return theta;
  const double w = s_l / (s_l + s_r), a = 1.0 / p;
  if (q <= w) return theta - s_l * std::pow(gamma_q_inverse(a, q / w), 1.0 / p);
  return theta + s_r * std::pow(gamma_p_inverse(a, (q - w) / (1.0 - w)), 1.0 / p);
}

// ---- finishing -------------------------------------------------------------------
namespace {
// Golden-section search for the maximum of f on [lo, hi] (Kiefer 1953).
template <class F>
double golden_max(F f, double lo, double hi, double x0, double f0, double* fbest) {
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double best = x0, fb = f0;
  double a = lo, b = hi;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int it = 0; it < 80 && (b - a) > 1e-14 * std::max(std::fabs(a), std::fabs(b)) + 1e-300; ++it) {
    if (fc >= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  const double cand[4] = {a, b, c, d};
  for (double x : cand) {
    const double fx = f(x);
    if (fx > fb) {
      fb = fx;
      best = x;
    }
  }
  *fbest = fb;
  return best;
}
}  // namespace

Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels) {
  return finish(s, p, fits, refine, levels, 0, s.series * window_count(s, p));
}

Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels, std::int64_t begin, std::int64_t end) {
  const std::int64_t W = window_count(s, p), n = p.window;
  if (begin < 0 || begin > end || end > s.series * W || fits.shape.size() != static_cast<std::size_t>(end - begin))
    fail_internal("mle finish: window range [" + std::to_string(begin) + ", " + std::to_string(end) + ") does not fit");
  const std::size_t count = static_cast<std::size_t>(end - begin), L = levels.size();
  Estimates e;
  e.theta.resize(count);
  e.p.resize(count);
  e.s_l.resize(count);
  e.s_r.resize(count);
  e.loglik.resize(count);
  e.skew.resize(count);
  e.refined.assign(count, 0);
  e.quantiles.resize(count * L);
  const auto& alpha = p.grid.alpha;
  const std::int64_t A = static_cast<std::int64_t>(alpha.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i) {
    const std::size_t u = static_cast<std::size_t>(i);
    const std::int64_t si = (begin + i) / W, w = (begin + i) % W;
    const double* x = s.x + si * s.length;
    const double* win = x + w * p.step;
    double theta = x[fits.index[u]], shape = alpha[static_cast<std::size_t>(fits.shape[u])];
    double ll = fits.loglik[u];
    double xm = fits.xm[u], xp = fits.xp[u];
    if (refine && std::isfinite(ll)) {
      const std::int64_t a = fits.shape[u];
      double tlo = -std::numeric_limits<double>::infinity(), thi = std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < n; ++k) {
        if (win[k] < theta) tlo = std::max(tlo, win[k]);
        if (win[k] > theta) thi = std::min(thi, win[k]);
      }
      if (!std::isfinite(tlo)) tlo = theta;
      if (!std::isfinite(thi)) thi = theta;
      const double plo = alpha[static_cast<std::size_t>(std::max<std::int64_t>(a - 1, 0))];
      const double phi = alpha[static_cast<std::size_t>(std::min<std::int64_t>(a + 1, A - 1))];
      double best = profile_loglik_at(win, n, theta, shape);
      for (int round = 0; round < 30; ++round) {
        const double t0 = theta, p0 = shape;
        double fb = best;
        if (thi > tlo)
          theta = golden_max([&](double t) { return profile_loglik_at(win, n, t, shape); }, tlo, thi, theta, best, &fb);
        best = fb;
        if (phi > plo)
          shape = golden_max([&](double q) { return profile_loglik_at(win, n, theta, q); }, plo, phi, shape, best, &fb);
        best = fb;
        if (std::fabs(theta - t0) <= 1e-13 * (std::fabs(theta) + 1e-300) && std::fabs(shape - p0) <= 1e-13 * shape) break;
      }
      ll = best;
      xm = xp = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        if (win[k] <= theta) xm += std::pow(theta - win[k], shape);
        else xp += std::pow(win[k] - theta, shape);
      }
      e.refined[u] = 1;
    }
    const Scales sc = closed_form_scales(xm, xp, shape, static_cast<double>(n));
    e.theta[u] = theta;
    e.p[u] = shape;
    e.s_l[u] = sc.s_l;
    e.s_r[u] = sc.s_r;
    e.loglik[u] = ll;
    e.skew[u] = sc.s_l / (sc.s_l + sc.s_r);
    for (std::size_t q = 0; q < L; ++q) e.quantiles[u * L + q] = aepd_quantile(levels[q], theta, shape, sc.s_l, sc.s_r);
  }
  return e;
}

}  // namespace numpipe::mle
