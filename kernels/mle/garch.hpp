// mle-fit --model garch: GARCH(1,1) (Bollerslev 1986) with AEPD innovations
// (Zhu and Zinde-Walsh 2009, one shape or a shape on each side of the mode),
// fitted by maximum likelihood over the whole series or rolling windows.
//
//   r_t = mu + e_t,  e_t = sigma_t z_t,  sigma_t^2 = omega + alpha e_{t-1}^2 + beta sigma_{t-1}^2
//
// z_t is the AEPD standardised to mean 0 and variance 1. In scale form (the
// i.i.d. fit's, docs/mle.md "Two shapes") its density is
//   exp(-((theta - z)/s_l)^p1) / D  (z <= theta),  exp(-((z - theta)/s_r)^p2) / D  (z > theta),
//   D = s_l g1 + s_r g2,  g_i = Gamma(1 + 1/p_i),
// and the left branch holds mass a = s_l g1 / D (Zhu and Zinde-Walsh's alpha).
// Each branch is theta -/+ s G^(1/p) with G ~ Gamma(1/p, 1), so
// E[(z - theta)^k | branch] = (-/+ s)^k m_k(p), m_k(p) = Gamma((k+1)/p) / Gamma(1/p)
// (the moments of Zhu and Zinde-Walsh 2009, section 2). With s_l = a c / g1 and
// s_r = (1 - a) c / g2 (so that D = c):
//   E z - theta = c [(1-a)^2 m_1(p2)/g2 - a^2 m_1(p1)/g1] = c mean1,
//   E (z - theta)^2 = c^2 [a^3 m_2(p1)/g1^2 + (1-a)^3 m_2(p2)/g2^2] = c^2 second,
// and variance 1, mean 0 give c = 1 / sqrt(second - mean1^2), theta = -c mean1,
// log D = log c. With p1 = p2 = p this is the one-shape form (s_l = a c',
// s_r = (1-a) c', c' = c / g). One shape: p2 is tied to p1.
// sigma_1^2 is the mean of e_t^2 over the window (fGarch's "mci" start).
// Constraints: omega > 0, alpha >= 0, beta >= 0, alpha + beta < 1, enforced by
// the parameterisation the search runs in (garch_model.hpp). The model's math is
// NUMPIPE_HD so that a CUDA backend can run the same source.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/hd.hpp"
#include "distribution.hpp"

namespace numpipe::mle {

// The natural parameters, in the order of the stderr record's columns: p1
// (kShape) is the left shape (the one shape p), p2 (kShape2) the right one
// (equal to p1 with one shape, and then not a column of its own).
enum GarchParam { kMu = 0, kOmega, kAlpha, kBeta, kSkew, kShape, kShape2, kGarchParams };

// What standardising needs of one shape p: m_1 and m_2 (above) and g = Gamma(1 + 1/p).
struct AepdShapeMoments {
  double p, m1, m2, g;
};
NUMPIPE_HD_INLINE AepdShapeMoments aepd_shape_moments(double p) {
  const double lg1 = lgamma(1.0 / p);
  return {p, exp(lgamma(2.0 / p) - lg1), exp(lgamma(3.0 / p) - lg1), exp(lg1 - log(p))};
}

struct StandardAepd {
  double theta, s_l, s_r, log_norm;  // log_norm = -log D = -log c
  double p1, p2;                     // the shapes left and right of theta
  double inv_s_l, inv_s_r;           // 1 / s_l, 1 / s_r (the points' terms multiply)
};

// The AEPD with left mass a and shapes p1 (left), p2 (right) standardised to
// mean 0, variance 1 (above), from its shapes' moments.
NUMPIPE_HD_INLINE StandardAepd standard_aepd(double a, const AepdShapeMoments& left, const AepdShapeMoments& right) {
  const double b = 1.0 - a;
  const double mean1 = b * b * right.m1 / right.g - a * a * left.m1 / left.g;
  const double second = a * a * a * left.m2 / (left.g * left.g) + b * b * b * right.m2 / (right.g * right.g);
  const double c = 1.0 / sqrt(second - mean1 * mean1);
  StandardAepd z;
  z.s_l = a * c / left.g;
  z.s_r = b * c / right.g;
  z.theta = -c * mean1;
  z.log_norm = -log(c);
  z.p1 = left.p;
  z.p2 = right.p;
  z.inv_s_l = 1.0 / z.s_l;
  z.inv_s_r = 1.0 / z.s_r;
  return z;
}
NUMPIPE_HD_INLINE StandardAepd standard_aepd(double a, double p1, double p2) {
  const AepdShapeMoments left = aepd_shape_moments(p1);
  return standard_aepd(a, left, p1 == p2 ? left : aepd_shape_moments(p2));
}

// Inside the constraints (and the AEPD's domain).
NUMPIPE_HD_INLINE bool garch_inside(const double* par) {
  const double omega = par[kOmega], alpha = par[kAlpha], beta = par[kBeta], a = par[kSkew];
  return omega > 0 && alpha >= 0 && beta >= 0 && alpha + beta < 1 && a > 0 && a < 1 && par[kShape] > 0 &&
         par[kShape2] > 0;
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

// d^p for d >= 0 as exp(p log d), the form the gradient's terms share (its
// log d is d^p's derivative in p): the log-likelihood and its gradient's pass
// compute the same bits.
NUMPIPE_HD_INLINE double garch_power(double d, double p) { return d > 0 ? exp(p * log(d)) : 0.0; }

// Point t's log-likelihood term but for -log sigma_t (summed apart, as the log
// of the window's product of sigma_t^2: GarchLogSum): e = r_t - mu, h =
// sigma_t^2, inv_sd = 1 / sigma_t; the standardised residual e / sigma_t is
// e * inv_sd, as in the gradient's terms (garch_model.hpp).
NUMPIPE_HD_INLINE double garch_point_density(double e, double inv_sd, const StandardAepd& z) {
  const double u = e * inv_sd - z.theta;
  const bool left = u <= 0;
  const double d = left ? -u * z.inv_s_l : u * z.inv_s_r;
  return z.log_norm - garch_power(d, left ? z.p1 : z.p2);
}

// The sum of log(x_t) over a run of points with one log: the product of the
// x_t kept as a mantissa and a power of two, rescaled exactly (frexp, by a
// power of two) only where a product could leave [2^-400, 2^400], so that it
// neither overflows nor underflows; the rescalings do not change the
// products' roundings (one per point, relative, below that of a sum of logs),
// so that the value is the same bits as with a rescaling at every point. The
// log-likelihood's -sum log sigma_t = -0.5 log prod sigma_t^2.
struct GarchLogSum {
  double mantissa = 1;  // the product / 2^exponent
  int exponent = 0;
  NUMPIPE_HD_INLINE void add(double x) {
    if (!(x >= 0x1p-600 && x <= 0x1p600)) {  // a factor that could take the product out of range
      int e;
      x = frexp(x, &e);
      exponent += e;
    }
    mantissa *= x;
    if (!(mantissa >= 0x1p-400 && mantissa <= 0x1p400)) {
      int e;
      mantissa = frexp(mantissa, &e);
      exponent += e;
    }
  }
  NUMPIPE_HD_INLINE double log_value() const {
    int e;
    const double m = frexp(mantissa, &e);  // m in [0.5, 1)
    return log(m) + (exponent + e) * 0.69314718055994530942;
  }
};

// One-step-ahead quantile at level q: mu + sigma_{n+1} z_q.
NUMPIPE_HD_INLINE double garch_quantile(double q, const double* par, double h_next) {
  const StandardAepd z = standard_aepd(par[kSkew], par[kShape], par[kShape2]);
  return par[kMu] + sqrt(h_next) * aepd_quantile2(q, z.theta, z.p1, z.p2, z.s_l, z.s_r);
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
  double par[kGarchParams];  // mu, omega, alpha, beta, a (skew), p1 (p), p2 (= p1 with one shape)
  double se[kGarchParams];   // standard errors (NaN where the information is not positive definite; p2's
                             // with one shape: p1's)
  double loglik, h_next;
  int iterations;
  bool converged;
  bool on_edge;  // the maximum is on an edge: alpha = 0, beta = 0 or alpha + beta = 1 (1e-10 inside), omega = 0 (1e-14 of the variance)
};

struct GarchOptions {
  std::int64_t window = 0, step = 1;  // window 0: the whole series (one fit)
  bool inform = false;                // standard errors
  double p_min = 0.3, p_max = 20;     // the shapes' range
  int shapes = 1;                     // 1: p2 tied to p1; 2: p1 and p2 free
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
