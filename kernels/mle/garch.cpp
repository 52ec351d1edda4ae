// GARCH(1,1) with AEPD innovations (garch.hpp): the search and the information.
//
// The search runs in unconstrained coordinates u (Nocedal and Wright 2006,
// BFGS with a backtracking Armijo line search, analytic gradients):
//   mu = m + sd u0, omega = sd^2 exp(u1), alpha + beta = P = L(u2),
//   alpha = P L(u3), beta = P (1 - L(u3)), a = L(u4), p = p_min + (p_max - p_min) L(u5),
// L the logistic function, m and sd the window's mean and standard deviation,
// so that the constraints hold at every point tried. Standard errors: the
// inverse of minus the Hessian of the log-likelihood in the natural parameters
// (central differences), the observed information.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "garch.hpp"

namespace numpipe::mle {
namespace {

constexpr int K = kGarchParams;
double logistic(double v) { return 1.0 / (1.0 + std::exp(-v)); }
double logit(double p) { return std::log(p / (1.0 - p)); }

struct Coordinates {
  double m, sd, p_min, p_max;
  void natural(const double* u, double* par) const {
    const double P = logistic(u[2]), share = logistic(u[3]);
    par[kMu] = m + sd * u[0];
    par[kOmega] = sd * sd * std::exp(u[1]);
    par[kAlpha] = P * share;
    par[kBeta] = P * (1.0 - share);
    par[kSkew] = logistic(u[4]);
    par[kShape] = p_min + (p_max - p_min) * logistic(u[5]);
  }
  void unconstrained(const double* par, double* u) const {
    auto clamp = [](double v) { return std::min(1.0 - 1e-9, std::max(1e-9, v)); };
    const double P = clamp(par[kAlpha] + par[kBeta]);
    u[0] = (par[kMu] - m) / sd;
    u[1] = std::log(par[kOmega] / (sd * sd));
    u[2] = logit(P);
    u[3] = logit(clamp(par[kAlpha] / P));
    u[4] = logit(clamp(par[kSkew]));
    u[5] = logit(clamp((par[kShape] - p_min) / (p_max - p_min)));
  }
};

Coordinates coordinates(const double* r, std::int64_t n, const GarchOptions& o) {
  double m = 0, v = 0;
  for (std::int64_t t = 0; t < n; ++t) m += r[t];
  m /= static_cast<double>(n);
  for (std::int64_t t = 0; t < n; ++t) v += (r[t] - m) * (r[t] - m);
  const double sd = std::sqrt(v / static_cast<double>(n));
  return {m, sd > 0 ? sd : 1.0, o.p_min, o.p_max};
}

// Inverse of a symmetric positive definite K x K matrix by Cholesky; false if not.
bool spd_inverse(double (*A)[K], double (*inv)[K]) {
  double L[K][K] = {};
  for (int i = 0; i < K; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = A[i][j];
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      if (i == j) {
        if (!(s > 0)) return false;
        L[i][i] = std::sqrt(s);
      } else {
        L[i][j] = s / L[j][j];
      }
    }
  for (int c = 0; c < K; ++c) {
    double y[K];
    for (int i = 0; i < K; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= L[i][k] * y[k];
      y[i] = s / L[i][i];
    }
    for (int i = K - 1; i >= 0; --i) {
      double s = y[i];
      for (int k = i + 1; k < K; ++k) s -= L[k][i] * y[k];
      y[i] = s / L[i][i];
    }
    for (int i = 0; i < K; ++i) inv[i][c] = y[i];
  }
  return true;
}

// The log-likelihood's gradient in the natural parameters, in one pass: the
// derivative recursion of sigma_t^2 in mu, omega, alpha, beta (differentiating
// the GARCH recursion, as in Fiorentini, Calzolari and Panattoni 1996), and the
// AEPD's terms through its constants theta, s_l, s_r, log_norm, whose
// derivatives in a and p (no data involved) are central differences of
// standard_aepd. Returns the log-likelihood (NaN outside the constraints).
double loglik_gradient(const double* r, std::int64_t n, const double* par, double* grad) {
  const double mu = par[kMu], omega = par[kOmega], alpha = par[kAlpha], beta = par[kBeta], a = par[kSkew],
               p = par[kShape];
  if (!(omega > 0 && alpha >= 0 && beta >= 0 && alpha + beta < 1 && a > 0 && a < 1 && p > 0)) return NAN;
  const StandardAepd z = standard_aepd(a, p);
  double e2 = 0, e1 = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    e2 += (r[t] - mu) * (r[t] - mu);
    e1 += r[t] - mu;
  }
  const double nn = static_cast<double>(n);
  double h = e2 / nn, dh[4] = {-2 * e1 / nn, 0, 0, 0};  // d h / d (mu, omega, alpha, beta)
  double ll = 0, g[4] = {0, 0, 0, 0}, g_theta = 0, g_sl = 0, g_sr = 0, g_p = 0, e_prev = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    if (t > 0) {
      dh[0] = -2 * alpha * e_prev + beta * dh[0];
      dh[1] = 1 + beta * dh[1];
      dh[2] = e_prev * e_prev + beta * dh[2];
      dh[3] = h + beta * dh[3];
      h = omega + alpha * e_prev * e_prev + beta * h;
    }
    const double e = r[t] - mu, sd = std::sqrt(h), u = e / sd - z.theta;
    const bool left = u <= 0;
    const double scale = left ? z.s_l : z.s_r, d = std::fabs(u) / scale;
    const double log_d = d > 0 ? std::log(d) : -INFINITY, dp = d > 0 ? std::exp(p * log_d) : 0.0;
    ll += z.log_norm - dp - std::log(sd);
    // d ll_t / d u = -p d^(p-1) d d / d u, d d / d u = sign(u) / scale
    const double dl_dd = d > 0 ? -p * dp / d : 0.0;
    const double dl_du = dl_dd * (left ? -1.0 : 1.0) / scale;
    for (int k = 0; k < 4; ++k) {
      const double du = (k == 0 ? -1.0 / sd : 0.0) - 0.5 * e / (sd * h) * dh[k];
      g[k] += dl_du * du - 0.5 * dh[k] / h;
    }
    g_theta -= dl_du;
    (left ? g_sl : g_sr) += dl_dd * (-d / scale);
    if (d > 0) g_p -= dp * log_d;
    e_prev = e;
  }
  for (int k = 0; k < 4; ++k) grad[k] = g[k];
  auto through_constants = [&](const StandardAepd& up, const StandardAepd& dn, double step) {
    return (g_theta * (up.theta - dn.theta) + g_sl * (up.s_l - dn.s_l) + g_sr * (up.s_r - dn.s_r) +
            nn * (up.log_norm - dn.log_norm)) /
           (2 * step);
  };
  const double ha = 1e-6 * std::min(a, 1 - a), hp = 1e-6 * p;
  grad[kSkew] = through_constants(standard_aepd(a + ha, p), standard_aepd(a - ha, p), ha);
  grad[kShape] = g_p + through_constants(standard_aepd(a, p + hp), standard_aepd(a, p - hp), hp);
  return ll;
}

}  // namespace

void garch_default_start(const double* r, std::int64_t n, double* par) {
  double m = 0, v = 0;
  for (std::int64_t t = 0; t < n; ++t) m += r[t];
  m /= static_cast<double>(n);
  for (std::int64_t t = 0; t < n; ++t) v += (r[t] - m) * (r[t] - m);
  v /= static_cast<double>(n);
  // the usual start (fGarch's): alpha 0.1, beta 0.8, omega = 0.1 of the variance
  par[kMu] = m;
  par[kOmega] = 0.1 * (v > 0 ? v : 1.0);
  par[kAlpha] = 0.1;
  par[kBeta] = 0.8;
  par[kSkew] = 0.5;
  par[kShape] = 2.0;
}

GarchFit fit_garch_window(const double* r, std::int64_t n, const double* start, const GarchOptions& o) {
  const Coordinates cs = coordinates(r, n, o);
  GarchFit fit{};
  auto f = [&](const double* u) {  // minus the log-likelihood per point (NaN -> +inf)
    double par[K];
    cs.natural(u, par);
    const double ll = garch_loglik(r, n, par);
    return std::isfinite(ll) ? -ll / static_cast<double>(n) : INFINITY;
  };
  // the gradient of f in u: the natural parameters' gradient times the
  // derivatives of the parameterisation (Coordinates)
  auto gradient = [&](const double* u, double* g) {  // returns f(u) too
    double par[K], gp[K];
    cs.natural(u, par);
    const double ll = loglik_gradient(r, n, par, gp);
    if (!std::isfinite(ll)) {
      for (int i = 0; i < K; ++i) g[i] = 0;
      return static_cast<double>(INFINITY);
    }
    const double P = logistic(u[2]), share = logistic(u[3]), L5 = logistic(u[5]);
    const double dP = P * (1 - P), dshare = share * (1 - share);
    double gu[K];
    gu[0] = gp[kMu] * cs.sd;
    gu[1] = gp[kOmega] * par[kOmega];
    gu[2] = (gp[kAlpha] * share + gp[kBeta] * (1 - share)) * dP;
    gu[3] = (gp[kAlpha] - gp[kBeta]) * P * dshare;
    gu[4] = gp[kSkew] * par[kSkew] * (1 - par[kSkew]);
    gu[5] = gp[kShape] * (cs.p_max - cs.p_min) * L5 * (1 - L5);
    for (int i = 0; i < K; ++i) g[i] = -gu[i] / static_cast<double>(n);
    return -ll / static_cast<double>(n);
  };
  double u[K];
  cs.unconstrained(start, u);
  double fu = f(u);
  if (!std::isfinite(fu)) {  // a start outside the constraints' interior: the default one
    double par[K];
    garch_default_start(r, n, par);
    cs.unconstrained(par, u);
    fu = f(u);
  }
  // BFGS over the coordinates not marked fixed (their gradient is held at 0,
  // so that they keep their value); returns the iterations, sets *converged
  auto bfgs = [&](double* u, double& fu, const bool* fixed, bool* converged) {
    double g[K], B[K][K] = {};  // B: the inverse Hessian estimate
    auto masked_gradient = [&](const double* v, double* gv) {
      const double fv = gradient(v, gv);
      for (int i = 0; i < K; ++i)
        if (fixed[i]) gv[i] = 0;
      return fv;
    };
    auto reset = [&] {
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) B[i][j] = i == j && !fixed[i] ? 1 : 0;
    };
    reset();
    masked_gradient(u, g);
    int it = 0, stalled = 0;
    *converged = false;
    for (; it < 500 && std::isfinite(fu); ++it) {
      double d[K], slope = 0;
      for (int i = 0; i < K; ++i) {
        d[i] = 0;
        for (int j = 0; j < K; ++j) d[i] -= B[i][j] * g[j];
        slope += d[i] * g[i];
      }
      if (!(slope < 0)) {  // not a descent direction: restart from steepest descent
        reset();
        slope = 0;
        for (int i = 0; i < K; ++i) {
          d[i] = -g[i];
          slope += d[i] * g[i];
        }
      }
      // the full step's value comes with its gradient (one pass over the data),
      // as the full step is the one usually taken
      double step = 1, un[K], fn = INFINITY, gn[K];
      bool have_gn = false;
      for (int half = 0; half < 60; ++half, step *= 0.5) {
        for (int i = 0; i < K; ++i) un[i] = u[i] + step * d[i];
        have_gn = half == 0;
        fn = have_gn ? masked_gradient(un, gn) : f(un);
        if (fn <= fu + 1e-4 * step * slope) break;
      }
      if (!(fn <= fu)) {
        *converged = true;  // no descent left at the gradient's resolution
        break;
      }
      double s[K], y[K], sy = 0;
      if (!have_gn || step != 1) masked_gradient(un, gn);
      for (int i = 0; i < K; ++i) {
        s[i] = un[i] - u[i];
        y[i] = gn[i] - g[i];
        sy += s[i] * y[i];
      }
      const double gain = fu - fn;
      std::copy(un, un + K, u);
      std::copy(gn, gn + K, g);
      fu = fn;
      if (sy > 1e-300) {  // BFGS update of the inverse Hessian
        double By[K], yBy = 0;
        for (int i = 0; i < K; ++i) {
          By[i] = 0;
          for (int j = 0; j < K; ++j) By[i] += B[i][j] * y[j];
          yBy += y[i] * By[i];
        }
        for (int i = 0; i < K; ++i)
          for (int j = 0; j < K; ++j)
            B[i][j] += ((sy + yBy) * s[i] * s[j]) / (sy * sy) - (By[i] * s[j] + s[i] * By[j]) / sy;
      }
      double gmax = 0;
      for (int i = 0; i < K; ++i) gmax = std::max(gmax, std::fabs(g[i]));
      // stop when the gradient vanishes, or when the log-likelihood has gained
      // less than 1e-9 in 5 steps running (a search drifting towards an edge
      // of the constraints, which lies at infinity in u)
      stalled = gain * static_cast<double>(n) < 1e-9 ? stalled + 1 : 0;
      if ((gain * static_cast<double>(n) < 1e-10 && gmax < 1e-9) || stalled >= 5) {
        *converged = true;
        break;
      }
    }
    return it;
  };
  bool fixed[K] = {}, converged = false;
  int it = bfgs(u, fu, fixed, &converged);
  // restarts with a fresh inverse Hessian while they gain: a stale BFGS
  // estimate stalls in the long curved ridge of omega against alpha + beta
  for (int restart = 0; restart < 5 && std::isfinite(fu); ++restart) {
    const double before = fu;
    it += bfgs(u, fu, fixed, &converged);
    if ((before - fu) * static_cast<double>(n) < 1e-9) break;
  }
  // Active set (Nocedal and Wright 2006, ch. 16.5): a search drifting to an edge
  // of alpha + beta < 1, alpha >= 0 or beta >= 0 crawls there (the logistic
  // flattens), so each such coordinate is put on its edge (1e-10 inside, where
  // the log-likelihood equals its limit to ~1e-10 per point) and the others
  // searched; then a free search restarts from well inside it, so that an
  // optimum inside the edge that the first search passed by is found too. The highest of the three is kept;
  // the fit is on the edge only where the edge's search is the highest.
  constexpr double kEdgeLogit = 23.0258509299;  // logit(1 - 1e-10)
  constexpr double kNearLogit = 9.21024036697;  // logit(1 - 1e-4): drifting to the edge
  bool on_edge = false;
  bool any_edge = false;
  double ue[K];
  std::copy(u, u + K, ue);
  for (int i : {2, 3})
    if (std::fabs(u[i]) > kNearLogit) {
      fixed[i] = any_edge = true;
      ue[i] = std::copysign(kEdgeLogit, u[i]);
    }
  if (any_edge && std::isfinite(fu)) {
    double fe = f(ue);
    bool ce = false;
    it += bfgs(ue, fe, fixed, &ce);
    double ui[K];
    std::copy(ue, ue + K, ui);
    // well inside: alpha + beta 0.99 with omega giving the window's variance
    // unconditionally, the share alpha / (alpha + beta) within [0.05, 0.95]
    // (the search into the edge may have dragged omega to 0 on the way)
    if (fixed[2]) {
      ui[2] = logit(0.99);
      ui[1] = std::log(0.01);
    }
    if (fixed[3]) ui[3] = std::copysign(logit(0.95), ue[3]);
    double fi = f(ui);
    bool ci = false;
    const bool none[K] = {};
    it += bfgs(ui, fi, none, &ci);
    if (fe < fu && fe <= fi) {
      std::copy(ue, ue + K, u);
      fu = fe;
      converged = ce;
      on_edge = true;
    }
    if (fi < fu) {
      std::copy(ui, ui + K, u);
      fu = fi;
      converged = ci;
      on_edge = false;
    }
  }
  cs.natural(u, fit.par);
  fit.loglik = garch_loglik(r, n, fit.par, &fit.h_next);
  fit.iterations = it;
  fit.converged = converged;
  fit.on_edge = on_edge;
  for (double& v : fit.se) v = NAN;
  if (o.inform && std::isfinite(fit.loglik)) {
    // minus the Hessian in the natural parameters, central differences with
    // steps relative to each parameter's scale
    double h[K], H[K][K], inv[K][K];
    const double scale[K] = {cs.sd, cs.sd * cs.sd, 1, 1, 1, 1};
    for (int i = 0; i < K; ++i) h[i] = 1e-4 * std::max(std::fabs(fit.par[i]), 1e-2 * scale[i]);
    auto ll = [&](int i, double di, int j, double dj) {
      double q[K];
      std::copy(fit.par, fit.par + K, q);
      q[i] += di;
      q[j] += dj;
      return garch_loglik(r, n, q);
    };
    for (int i = 0; i < K; ++i)
      for (int j = i; j < K; ++j) {
        const double v = (ll(i, h[i], j, h[j]) - ll(i, h[i], j, -h[j]) - ll(i, -h[i], j, h[j]) + ll(i, -h[i], j, -h[j])) /
                         (4 * h[i] * h[j]);
        H[i][j] = H[j][i] = -v;
      }
    if (spd_inverse(H, inv))
      for (int i = 0; i < K; ++i) fit.se[i] = inv[i][i] > 0 ? std::sqrt(inv[i][i]) : NAN;
  }
  return fit;
}

std::vector<GarchFit> fit_garch(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o) {
  const std::int64_t n = o.window > 0 ? o.window : length;
  const std::int64_t W = (length - n) / o.step + 1;
  // chunks of a fixed number of windows: each starts afresh, then warm starts
  constexpr std::int64_t kChunk = 64;
  const std::int64_t chunks = (W + kChunk - 1) / kChunk;
  std::vector<GarchFit> fits(static_cast<std::size_t>(series * W));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t task = 0; task < series * chunks; ++task) {
    const std::int64_t si = task / chunks, c = task % chunks;
    double start[K];
    for (std::int64_t w = c * kChunk; w < std::min(W, (c + 1) * kChunk); ++w) {
      const double* r = x + si * length + w * o.step;
      GarchFit& fit = fits[static_cast<std::size_t>(si * W + w)];
      if (w == c * kChunk) {
        garch_default_start(r, n, start);
        fit = fit_garch_window(r, n, start, o);
      } else {
        // warm: the previous window's estimate, kept only where it beats the default start
        fit = fit_garch_window(r, n, start, o);
      }
      if (std::isfinite(fit.loglik)) std::copy(fit.par, fit.par + K, start);
    }
  }
  return fits;
}

}  // namespace numpipe::mle
