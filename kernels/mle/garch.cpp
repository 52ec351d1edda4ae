// GARCH(1,1) with AEPD innovations (garch.hpp): the search and the information.
//
// The search runs in unconstrained coordinates u (Nocedal and Wright 2006,
// BFGS with a backtracking Armijo line search, central-difference gradients):
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
  auto gradient = [&](const double* u, double* g) {
    for (int i = 0; i < K; ++i) {
      double up[K], dn[K];
      std::copy(u, u + K, up);
      std::copy(u, u + K, dn);
      const double h = 1e-6 * std::max(1.0, std::fabs(u[i]));
      up[i] += h;
      dn[i] -= h;
      g[i] = (f(up) - f(dn)) / (2 * h);
    }
  };
  double u[K], g[K], B[K][K] = {};  // B: the inverse Hessian estimate
  cs.unconstrained(start, u);
  for (int i = 0; i < K; ++i) B[i][i] = 1;
  double fu = f(u);
  if (!std::isfinite(fu)) {  // a start outside the constraints' interior: the default one
    double par[K];
    garch_default_start(r, n, par);
    cs.unconstrained(par, u);
    fu = f(u);
  }
  gradient(u, g);
  int it = 0, stalled = 0;
  bool converged = false;
  for (; it < 500 && std::isfinite(fu); ++it) {
    double d[K], slope = 0;
    for (int i = 0; i < K; ++i) {
      d[i] = 0;
      for (int j = 0; j < K; ++j) d[i] -= B[i][j] * g[j];
      slope += d[i] * g[i];
    }
    if (!(slope < 0)) {  // not a descent direction: restart from steepest descent
      for (int i = 0; i < K; ++i) {
        for (int j = 0; j < K; ++j) B[i][j] = i == j ? 1 : 0;
        d[i] = -g[i];
      }
      slope = 0;
      for (int i = 0; i < K; ++i) slope += d[i] * g[i];
    }
    double step = 1, un[K], fn = INFINITY;
    for (int half = 0; half < 60; ++half, step *= 0.5) {
      for (int i = 0; i < K; ++i) un[i] = u[i] + step * d[i];
      fn = f(un);
      if (fn <= fu + 1e-4 * step * slope) break;
    }
    if (!(fn <= fu)) {
      converged = true;  // no descent left at the gradient's resolution
      break;
    }
    double gn[K], s[K], y[K], sy = 0;
    gradient(un, gn);
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
    // less than 1e-9 in 5 steps running (a maximum on an edge of the
    // constraints lies at infinity in u, where the gradient only decays)
    stalled = gain * static_cast<double>(n) < 1e-9 ? stalled + 1 : 0;
    if ((gain * static_cast<double>(n) < 1e-10 && gmax < 1e-6) || stalled >= 5) {
      converged = true;
      break;
    }
  }
  cs.natural(u, fit.par);
  fit.loglik = garch_loglik(r, n, fit.par, &fit.h_next);
  fit.iterations = it;
  fit.converged = converged;
  fit.on_edge = fit.par[kAlpha] < 1e-6 || fit.par[kBeta] < 1e-6 || fit.par[kAlpha] + fit.par[kBeta] > 1 - 1e-6;
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
