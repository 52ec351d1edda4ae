// mle-fit --model garch: GARCH(1,1) (Bollerslev 1986) with AEPD innovations
// (Zhu and Zinde-Walsh 2009, one shape), fitted by maximum likelihood over the
// whole series or rolling windows.
//
//   r_t = mu + e_t,  e_t = sigma_t z_t,  sigma_t^2 = omega + alpha e_{t-1}^2 + beta sigma_{t-1}^2
//
// z_t is the AEPD standardised to mean 0 and variance 1: with left mass a
// (= s_l / (s_l + s_r)) and shape p, s_l = a c and s_r = (1 - a) c, where, with
// m_k = Gamma((k+1)/p) / Gamma(1/p) (E |z - theta|^k on each branch),
//   c = 1 / sqrt((a^3 + (1-a)^3) m_2 - (1 - 2a)^2 m_1^2),  theta = -(1 - 2a) c m_1.
// sigma_1^2 is the mean of e_t^2 over the window (fGarch's "mci" start).
// Constraints: omega > 0, alpha >= 0, beta >= 0, alpha + beta < 1, enforced by
// the parameterisation the search runs in (garch.cpp). The model's math is
// NUMPIPE_HD so that a CUDA backend can run the same source.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/hd.hpp"
#include "distribution.hpp"

namespace numpipe::mle {

// The natural parameters, in the order of the stderr record's columns.
enum GarchParam { kMu = 0, kOmega, kAlpha, kBeta, kSkew, kShape, kGarchParams };

struct StandardAepd {
  double theta, s_l, s_r, log_norm;  // log_norm = log p - log(s_l + s_r) - lgamma(1/p)
};

// The AEPD with left mass a and shape p standardised to mean 0, variance 1.
NUMPIPE_HD_INLINE StandardAepd standard_aepd(double a, double p) {
  const double lg1 = lgamma(1.0 / p);
  const double m1 = exp(lgamma(2.0 / p) - lg1), m2 = exp(lgamma(3.0 / p) - lg1);
  const double b = 1.0 - a;
  const double c = 1.0 / sqrt((a * a * a + b * b * b) * m2 - (b - a) * (b - a) * m1 * m1);
  StandardAepd z;
  z.s_l = a * c;
  z.s_r = b * c;
  z.theta = -(b - a) * c * m1;
  z.log_norm = log(p) - log(c) - lg1;
  return z;
}

// Bollerslev's recursion: sigma_t^2 from sigma_{t-1}^2 = h and e_prev = r_{t-1} - mu.
NUMPIPE_HD_INLINE double garch_next_variance(double omega, double alpha, double beta, double e_prev, double h) {
  return omega + alpha * e_prev * e_prev + beta * h;
}

// The derivatives of sigma_t^2 in (mu, omega, alpha, beta) along the recursion
// (differentiating it, as in Fiorentini, Calzolari and Panattoni 1996): the
// step from point t - 1 to t > 0, e_prev = r_{t-1} - mu; h and dh advance together.
NUMPIPE_HD_INLINE void garch_variance_step(double omega, double alpha, double beta, double e_prev, double& h,
                                           double* dh) {
  dh[0] = -2 * alpha * e_prev + beta * dh[0];
  dh[1] = 1 + beta * dh[1];
  dh[2] = e_prev * e_prev + beta * dh[2];
  dh[3] = h + beta * dh[3];
  h = garch_next_variance(omega, alpha, beta, e_prev, h);
}

// The conditional variance path over r[0..n) at the parameters, the one every
// pass of the CPU follows (the log-likelihood, its gradient, the filtered
// residuals): sigma_1^2 is the window's mean square residual (fGarch's "mci"
// start), then Bollerslev's recursion. visit(t, e_t, h_t, dh_t) for t = 0 ..
// n-1 in time order, e_t = r_t - mu, h_t = sigma_t^2 and, with Derivatives,
// dh_t its derivatives in (mu, omega, alpha, beta) (zeros without). Returns
// the one-step-ahead sigma_{n+1}^2.
template <bool Derivatives, class Visit>
NUMPIPE_HD_INLINE double garch_variance_path(const double* r, std::int64_t n, const double* par, Visit&& visit) {
  const double mu = par[kMu], omega = par[kOmega], alpha = par[kAlpha], beta = par[kBeta];
  double e2 = 0, e1 = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    e2 += (r[t] - mu) * (r[t] - mu);
    if (Derivatives) e1 += r[t] - mu;
  }
  const double nn = static_cast<double>(n);
  double h = e2 / nn, dh[4] = {Derivatives ? -2 * e1 / nn : 0.0, 0, 0, 0}, e_prev = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    if (t > 0) {
      if (Derivatives)
        garch_variance_step(omega, alpha, beta, e_prev, h, dh);
      else
        h = garch_next_variance(omega, alpha, beta, e_prev, h);
    }
    const double e = r[t] - mu;
    visit(t, e, h, static_cast<const double*>(dh));
    e_prev = e;
  }
  return garch_next_variance(omega, alpha, beta, e_prev, h);
}

// Point t's log-likelihood term: e = r_t - mu, h = sigma_t^2.
NUMPIPE_HD_INLINE double garch_point_loglik(double e, double h, const StandardAepd& z, double p) {
  const double sd = sqrt(h), u = e / sd - z.theta;
  const double d = u <= 0 ? -u / z.s_l : u / z.s_r;
  return z.log_norm - pow(d, p) - log(sd);
}

// The log-likelihood of r[0..n) at the parameters; *h_next: the one-step-ahead
// conditional variance sigma_{n+1}^2. NaN outside the constraints.
NUMPIPE_HD_INLINE double garch_loglik(const double* r, std::int64_t n, const double* par, double* h_next = nullptr) {
  const double omega = par[kOmega], alpha = par[kAlpha], beta = par[kBeta], a = par[kSkew], p = par[kShape];
  if (!(omega > 0 && alpha >= 0 && beta >= 0 && alpha + beta < 1 && a > 0 && a < 1 && p > 0)) return NAN;
  const StandardAepd z = standard_aepd(a, p);
  double ll = 0;
  const double h_after = garch_variance_path<false>(
      r, n, par, [&](std::int64_t, double e, double h, const double*) { ll += garch_point_loglik(e, h, z, p); });
  if (h_next) *h_next = h_after;
  return ll;
}

// One-step-ahead quantile at level q: mu + sigma_{n+1} z_q.
NUMPIPE_HD_INLINE double garch_quantile(double q, const double* par, double h_next) {
  const StandardAepd z = standard_aepd(par[kSkew], par[kShape]);
  return par[kMu] + sqrt(h_next) * aepd_quantile(q, z.theta, par[kShape], z.s_l, z.s_r);
}

// Filtered historical simulation (Barone-Adesi, Giannopoulos and Vosper 1999):
// the one-step-ahead quantiles mu + sigma_{n+1} z_q with z_q the empirical
// quantile of the window's standardised residuals (r_t - mu) / sigma_t at the
// fitted parameters, linear between order statistics (Hyndman and Fan 1996,
// definition 7: z_(1 + (n-1) q)), instead of the AEPD's quantile. (garch.cpp)
std::vector<double> garch_fhs_quantiles(const double* r, std::int64_t n, const double* par, double h_next,
                                        const std::vector<double>& levels);

// ---- fitting (garch.cpp) -------------------------------------------------------------
struct GarchFit {
  double par[kGarchParams];  // mu, omega, alpha, beta, a (skew), p
  double se[kGarchParams];   // standard errors (NaN where the information is not positive definite)
  double loglik, h_next;
  int iterations;
  bool converged;
  bool on_edge;  // the maximum is on an edge: alpha = 0, beta = 0 or alpha + beta = 1 (1e-10 inside), omega = 0 (1e-14 of the variance)
};

struct GarchOptions {
  std::int64_t window = 0, step = 1;  // window 0: the whole series (one fit)
  bool inform = false;                // standard errors
  double p_min = 0.3, p_max = 20;     // the shape's range
};

// Fits every window of every series [series][windows] (warm-started from the
// previous window within chunks of a fixed number of windows, each chunk
// started afresh: the same bits for any thread count).
std::vector<GarchFit> fit_garch(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o);
// One fit from a start (natural parameters), for tests.
GarchFit fit_garch_window(const double* r, std::int64_t n, const double* start, const GarchOptions& o);
// The start of a window without a previous fit.
void garch_default_start(const double* r, std::int64_t n, double* par);

// fit_garch on the CPU or (engine.cuda) on the engine's first GPU
// (garch_cuda.cu: a block of threads per chunk of windows); *solve_seconds: the
// solve's time (the kernel's, by CUDA events, on the GPU). The dispatch
// (backend.cpp) says when the build has no CUDA backend.
struct Engine;
std::vector<GarchFit> fit_garch(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o,
                                const Engine& engine, double* solve_seconds);

}  // namespace numpipe::mle
