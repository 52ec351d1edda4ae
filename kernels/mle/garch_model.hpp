// mle-fit --model garch: the fit of one window, shared by the CPU and CUDA
// backends (NUMPIPE_HD): the GARCH(1,1) variance recursion with its
// derivatives, the AEPD log-likelihood's terms and analytic gradient, and the
// search (BFGS in unconstrained coordinates, restarts, the edges of the
// constraints, the information), written once over a window type that sums
// over the window's points:
//
//   window.n                      the points
//   window.sum(f)                 sum over t of f(r[t]) (a fixed order)
//   window.sum_pair(f, g, &sf, &sg) two such sums at once
//   window.loglik(par, &h_next)   the log-likelihood (garch_run_terms)
//   window.loglik_gradient(par, grad)
//   window.side_by_side(out, body)  out[j] = body(j) for independent pieces of
//                                 a search (the re-search's starts)
//   Window::kSearchAhead          whether those pieces run side by side (then
//                                 each does all it may need, see garch_fit)
//
// The CPU's window (GarchSerialWindow, below) sums in time order; the CUDA
// backend's (garch_cuda.cu) splits each pass over the 32 lanes of a warp,
// every lane running the same search on the same values, and runs the
// re-search's starts on the block's warps side by side.
//
// The search runs in unconstrained coordinates u (Nocedal and Wright 2006,
// BFGS with a backtracking Armijo line search, analytic gradients):
//   mu = m + sd u0, omega = sd^2 exp(u1), alpha + beta = P = L(u2),
//   alpha = P L(u3), beta = P (1 - L(u3)), a = L(u4), p1 = p_min + (p_max - p_min) L(u5),
//   p2 = p_min + (p_max - p_min) L(u6) (one shape: p2 = p1, u6 held),
// L the logistic function, m and sd the window's mean and standard deviation,
// so that the constraints hold at every point tried. Standard errors: the
// inverse of minus the Hessian of the log-likelihood in the natural parameters
// (central differences), the observed information.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "garch.hpp"

namespace numpipe::mle {

// Rolling fits: windows in chunks of this many, each chunk's first window
// searched from fixed starts, each later one warm-started from the previous
// one's fit (garch_fit_chunk; the same bits for any thread count, and on the
// GPU a chunk per block). The GPU's solve is the slowest chunk's chain of
// dependent passes: on the DAX's 1610 windows of 250 days, with one warm
// search a window, chunks of 4 rather than 16 shortened it from 14214 passes
// to 3700 for 1% more passes in all (mle-garch-bench passes): a warm start
// saves few passes where windows are searched again from fixed starts, and
// those dominate the slow chunks.
constexpr std::int64_t kGarchChunk = 4;

NUMPIPE_HD_INLINE double garch_logistic(double v) { return 1.0 / (1.0 + std::exp(-v)); }
NUMPIPE_HD_INLINE double garch_logit(double p) { return std::log(p / (1.0 - p)); }

// The window's mean and standard deviation (the search's scales; sd 1 for a
// constant window) and the parameterisation between u and the natural parameters.
struct GarchCoordinates {
  double m, sd, p_min, p_max;
  bool tied;  // one shape: p2 = p1
  NUMPIPE_HD_INLINE void natural(const double* u, double* par) const {
    const double P = garch_logistic(u[2]), share = garch_logistic(u[3]);
    par[kMu] = m + sd * u[0];
    par[kOmega] = sd * sd * std::exp(u[1]);
    par[kAlpha] = P * share;
    par[kBeta] = P * (1.0 - share);
    par[kSkew] = garch_logistic(u[4]);
    par[kShape] = p_min + (p_max - p_min) * garch_logistic(u[5]);
    par[kShape2] = tied ? par[kShape] : p_min + (p_max - p_min) * garch_logistic(u[6]);
  }
  NUMPIPE_HD_INLINE void unconstrained(const double* par, double* u) const {
    auto clamp = [](double v) { return std::min(1.0 - 1e-9, std::max(1e-9, v)); };
    const double P = clamp(par[kAlpha] + par[kBeta]);
    u[0] = (par[kMu] - m) / sd;
    u[1] = std::log(par[kOmega] / (sd * sd));
    u[2] = garch_logit(P);
    u[3] = garch_logit(clamp(par[kAlpha] / P));
    u[4] = garch_logit(clamp(par[kSkew]));
    u[5] = garch_logit(clamp((par[kShape] - p_min) / (p_max - p_min)));
    u[6] = garch_logit(clamp((par[kShape2] - p_min) / (p_max - p_min)));
  }
  // The gradient in u (gu) from the gradient in the natural parameters (gp) at
  // u (par = natural(u)): the derivatives of the map above. One shape: p1's
  // derivative moves p2 too (gp[kShape] + gp[kShape2]) and u6's is 0, so that
  // the search never moves it.
  NUMPIPE_HD_INLINE void chain(const double* u, const double* par, const double* gp, double* gu) const {
    const double P = garch_logistic(u[2]), share = garch_logistic(u[3]);
    const double L5 = garch_logistic(u[5]), L6 = garch_logistic(u[6]);
    const double dP = P * (1 - P), dshare = share * (1 - share);
    gu[0] = gp[kMu] * sd;
    gu[1] = gp[kOmega] * par[kOmega];
    gu[2] = (gp[kAlpha] * share + gp[kBeta] * (1 - share)) * dP;
    gu[3] = (gp[kAlpha] - gp[kBeta]) * P * dshare;
    gu[4] = gp[kSkew] * par[kSkew] * (1 - par[kSkew]);
    gu[5] = (gp[kShape] + (tied ? gp[kShape2] : 0.0)) * (p_max - p_min) * L5 * (1 - L5);
    gu[6] = tied ? 0.0 : gp[kShape2] * (p_max - p_min) * L6 * (1 - L6);
  }
};

template <class Window>
NUMPIPE_HD_INLINE GarchCoordinates garch_coordinates(const Window& w, const GarchOptions& o) {
  const double nn = static_cast<double>(w.n);
  const double m = w.sum([](double r) { return r; }) / nn;
  const double v = w.sum([m](double r) { return (r - m) * (r - m); });
  const double sd = std::sqrt(v / nn);
  return {m, sd > 0 ? sd : 1.0, o.p_min, o.p_max, o.shapes != 2};
}

// The start of a window without a previous fit: the usual one (fGarch's),
// alpha 0.1, beta 0.8, omega = 0.1 of the variance.
template <class Window>
NUMPIPE_HD_INLINE void garch_default_start(const Window& w, double* par) {
  const double nn = static_cast<double>(w.n);
  const double m = w.sum([](double r) { return r; }) / nn;
  const double v = w.sum([m](double r) { return (r - m) * (r - m); }) / nn;
  par[kMu] = m;
  par[kOmega] = 0.1 * (v > 0 ? v : 1.0);
  par[kAlpha] = 0.1;
  par[kBeta] = 0.8;
  par[kSkew] = 0.5;
  par[kShape] = par[kShape2] = 2.0;
}

// ---- the log-likelihood's gradient, term by term ----------------------------------------
// What the gradient pass sums over the points: the log-likelihood, its
// derivatives in (mu, omega, alpha, beta), and in the AEPD's constants theta,
// s_l, s_r and (the data's part) in p1 (the points left of theta) and p2.
struct GarchGradientSums {
  double ll = 0, g[4] = {0, 0, 0, 0}, g_theta = 0, g_sl = 0, g_sr = 0, g_p1 = 0, g_p2 = 0;
  NUMPIPE_HD_INLINE void add(const GarchGradientSums& o) {
    ll += o.ll;
    for (int k = 0; k < 4; ++k) g[k] += o.g[k];
    g_theta += o.g_theta;
    g_sl += o.g_sl;
    g_sr += o.g_sr;
    g_p1 += o.g_p1;
    g_p2 += o.g_p2;
  }
};

// Point t's terms: e = r_t - mu, h = sigma_t^2 and dh its derivatives; the
// log-likelihood's -log sigma_t goes to log_h (GarchLogSum: the run adds
// -0.5 log_h.log_value() to s.ll once), the rest as garch_point_density.
// With z_t = e / sigma_t, u = z_t - theta, d = |u| / scale:
//   d ll_t / d u = -p d^p / u,  d u / d h = -z_t / (2 h),  d u / d mu = -1 / sigma_t,
//   d ll_t / d theta_k = d ll_t / d u  d u / d theta_k - dh_k / (2 h),
// multiplications by 1 / sigma_t, 1 / h and 1 / scale (one division a point
// but for d^p / u). In two parts: the point's own values (garch_point_terms:
// the math library's calls) and their sums (garch_gradient_add), so that the
// CPU can run the calls over a block of points apart from the sums.
struct GarchPointTerms {
  double inv_sd, zt, u, d, log_d, dp;
};
// (two stages: log d, then d^p = exp(p log d); the CPU runs each over a block
// of points, so that the calls in a row do not wait on each other)
NUMPIPE_HD_INLINE GarchPointTerms garch_point_log_d(double e, double h, const StandardAepd& z) {
  GarchPointTerms t;
  t.inv_sd = 1.0 / std::sqrt(h);
  t.zt = e * t.inv_sd;
  t.u = t.zt - z.theta;
  const bool left = t.u <= 0;
  t.d = (left ? -t.u : t.u) * (left ? z.inv_s_l : z.inv_s_r);
  t.log_d = t.d > 0 ? std::log(t.d) : -INFINITY;
  return t;
}
NUMPIPE_HD_INLINE void garch_point_power(GarchPointTerms& t, const StandardAepd& z) {
  t.dp = t.d > 0 ? std::exp((t.u <= 0 ? z.p1 : z.p2) * t.log_d) : 0.0;
}
NUMPIPE_HD_INLINE GarchPointTerms garch_point_terms(double e, double h, const StandardAepd& z) {
  GarchPointTerms t = garch_point_log_d(e, h, z);
  garch_point_power(t, z);
  return t;
}
NUMPIPE_HD_INLINE void garch_gradient_add(const GarchPointTerms& t, double h, const double* dh, const StandardAepd& z,
                                          GarchGradientSums& s, GarchLogSum& log_h) {
  const bool left = t.u <= 0;
  const double inv_scale = left ? z.inv_s_l : z.inv_s_r, p = left ? z.p1 : z.p2, inv_h = t.inv_sd * t.inv_sd;
  s.ll += z.log_norm - t.dp;
  log_h.add(h);
  const double dl_du = t.d > 0 ? -p * t.dp / t.u : 0.0;
  // d ll_t / d theta_k = c dh_k (and d ll_t / d mu's -dl_du / sigma_t)
  const double c = -0.5 * inv_h * (dl_du * t.zt + 1.0);
  for (int k = 0; k < 4; ++k) s.g[k] += c * dh[k];
  s.g[0] -= dl_du * t.inv_sd;
  s.g_theta -= dl_du;
  // d ll_t / d scale = p d^p / scale
  (left ? s.g_sl : s.g_sr) += p * t.dp * inv_scale;
  if (t.d > 0) (left ? s.g_p1 : s.g_p2) -= t.dp * t.log_d;
}
NUMPIPE_HD_INLINE void garch_gradient_point(double e, double h, const double* dh, const StandardAepd& z,
                                            GarchGradientSums& s, GarchLogSum& log_h) {
  garch_gradient_add(garch_point_terms(e, h, z), h, dh, z, s, log_h);
}

// A pass over a run of points [t0, t1) (the whole window on the CPU, a lane's
// run on the GPU: garch_lanes.hpp) in blocks of Block points: first the
// block's sigma^2 (and derivatives) along the recursion (a cheap chain), then
// its points' terms, log d then d^p, independent of each other, so that the
// CPU's and the GPU's pipelines overlap their exp, log and sqrt; then the terms
// added in time order (the same bits as one point after another,
// garch_gradient_point). A lane's run on the GPU: blocks of 8 (a 250-day
// window's 8 points a lane); the CPU: blocks of 32.
constexpr int kGarchRunBlock = 8;
constexpr int kGarchSerialBlock = 32;

// The run's terms, given sigma^2 (and, with Derivatives, its derivatives)
// entering it; *h_end, *e_end: sigma^2 and the residual at its last point.
// Without Derivatives only the sums' ll means anything (the log-likelihood: the
// compiler drops the rest).
template <bool Derivatives, int Block = kGarchRunBlock>
NUMPIPE_HD_INLINE GarchGradientSums garch_run_terms(const double* r, std::int64_t t0, std::int64_t t1,
                                                    const double* par, double h0, const double* dh0, double h_before,
                                                    const double* dh_before, const StandardAepd& z, double* h_end,
                                                    double* e_end) {
  GarchGradientSums s;
  GarchLogSum log_h;
  double h = h_before, dh[4] = {0, 0, 0, 0}, e_prev = t0 > 0 ? r[t0 - 1] - par[kMu] : 0.0;
  if (Derivatives)
    for (int k = 0; k < 4; ++k) dh[k] = dh_before[k];
  for (std::int64_t b = t0; b < t1; b += Block) {
    double hs[Block], es[Block], dhs[Block][4];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int i = 0; i < Block; ++i) {
      const std::int64_t t = b + i;
      hs[i] = 1;  // past the run's end: a point that is not added
      es[i] = 0;
      for (int k = 0; k < 4; ++k) dhs[i][k] = 0;
      if (t < t1) {
        if (t == 0) {
          h = h0;
          if (Derivatives)
            for (int k = 0; k < 4; ++k) dh[k] = dh0[k];
        } else if (Derivatives) {
          garch_variance_step(par[kOmega], par[kAlpha], par[kBeta], e_prev, h, dh);
        } else {
          h = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], e_prev, h);
        }
        es[i] = r[t] - par[kMu];
        hs[i] = h;
        for (int k = 0; k < 4; ++k) dhs[i][k] = dh[k];
        e_prev = es[i];
      }
    }
    // the points' own values (the math library's calls, d^p as exp(p log d):
    // inline on the GPU, where pow is a call), then added to the sums in time
    // order. Each backend's loops as it ran them fastest: the GPU a point's
    // terms and its sum in one unrolled loop, past the run's end a point
    // computed and not added (a log-likelihood pass 8.1 us on the H200, 8.6 us
    // with the CPU's loops); the CPU log d over the block, then d^p, then the
    // sums, over its points only, so that the calls in a row do not wait on
    // each other.
    const int count = static_cast<int>(t1 - b < Block ? t1 - b : Block);
#ifdef __CUDA_ARCH__
#pragma unroll
    for (int i = 0; i < Block; ++i) {
      const GarchPointTerms terms = garch_point_terms(es[i], hs[i], z);
      if (i < count) garch_gradient_add(terms, hs[i], dhs[i], z, s, log_h);
    }
#else
    GarchPointTerms terms[Block];
    for (int i = 0; i < count; ++i) terms[i] = garch_point_log_d(es[i], hs[i], z);
    for (int i = 0; i < count; ++i) garch_point_power(terms[i], z);
    for (int i = 0; i < count; ++i) garch_gradient_add(terms[i], hs[i], dhs[i], z, s, log_h);
#endif
  }
  s.ll -= 0.5 * log_h.log_value();  // the run's -sum log sigma_t: one log (GarchLogSum)
  if (h_end) *h_end = h;
  if (e_end) *e_end = e_prev;
  return s;
}

// The run's log-likelihood, given sigma^2 entering it; *h_end, *e_end as above.
template <int Block = kGarchRunBlock>
NUMPIPE_HD_INLINE double garch_run_loglik(const double* r, std::int64_t t0, std::int64_t t1, const double* par, double h0,
                                          double h_before, const StandardAepd& z, double* h_end, double* e_end) {
  return garch_run_terms<false, Block>(r, t0, t1, par, h0, nullptr, h_before, nullptr, z, h_end, e_end).ll;
}

// The run's gradient terms, given sigma^2 and its derivatives entering it.
template <int Block = kGarchRunBlock>
NUMPIPE_HD_INLINE GarchGradientSums garch_run_gradient(const double* r, std::int64_t t0, std::int64_t t1,
                                                       const double* par, double h0, const double* dh0, double h_before,
                                                       const double* dh_before, const StandardAepd& z) {
  return garch_run_terms<true, Block>(r, t0, t1, par, h0, dh0, h_before, dh_before, z, nullptr, nullptr);
}

// What a pass starts from: sigma_1^2 (the window's mean square residual,
// fGarch's "mci" start) and its derivatives in (mu, omega, alpha, beta).
struct GarchPassStart {
  double nn, h0, dh0[4];
};
template <class Window>
NUMPIPE_HD_INLINE GarchPassStart garch_pass_start(const Window& w, const double* par, bool derivatives) {
  const double mu = par[kMu];
  GarchPassStart s;
  s.nn = static_cast<double>(w.n);
  double e2, e1;  // both in one exchange on the GPU (the same bits as two sums)
  w.sum_pair([mu](double x) { return (x - mu) * (x - mu); }, [mu](double x) { return x - mu; }, &e2, &e1);
  s.h0 = e2 / s.nn;
  s.dh0[0] = -2 * (derivatives ? e1 : 0.0) / s.nn;
  s.dh0[1] = s.dh0[2] = s.dh0[3] = 0;
  return s;
}

// The AEPD's constants at point k of the central differences in a, p1 and p2
// that the gradient takes through them (no data involved): 0 (a, p1, p2),
// 1 (a + ha, ..), 2 (a - ha, ..), 3 (p1 + h1), 4 (p1 - h1), 5 (p2 + h2),
// 6 (p2 - h2), each from the shapes' moments at p, p + h, p - h
// (garch_shape_stencil: index 0, 1, 2).
constexpr int kGarchStencil = 7;
constexpr int kGarchShapeStencil = 3;
NUMPIPE_HD_INLINE double garch_step_a(double a) { return 1e-6 * std::min(a, 1 - a); }
NUMPIPE_HD_INLINE double garch_step_p(double p) { return 1e-6 * p; }
NUMPIPE_HD_INLINE AepdShapeMoments garch_shape_stencil(double p, int k) {
  const double hp = garch_step_p(p);
  return aepd_shape_moments(k == 1 ? p + hp : k == 2 ? p - hp : p);
}
// left[0..2], right[0..2]: garch_shape_stencil at p1 and at p2.
NUMPIPE_HD_INLINE StandardAepd garch_aepd_stencil(double a, const AepdShapeMoments* left,
                                                  const AepdShapeMoments* right, int k) {
  const double ha = garch_step_a(a);
  return standard_aepd(k == 1 ? a + ha : k == 2 ? a - ha : a, left[k == 3 ? 1 : k == 4 ? 2 : 0],
                       right[k == 5 ? 1 : k == 6 ? 2 : 0]);
}
// All of the stencil's points (the CPU's way; the GPU's threads share the moments).
NUMPIPE_HD_INLINE void garch_aepd_stencil(const double* par, StandardAepd* stencil) {
  AepdShapeMoments left[kGarchShapeStencil], right[kGarchShapeStencil];
  for (int k = 0; k < kGarchShapeStencil; ++k) {
    left[k] = garch_shape_stencil(par[kShape], k);
    right[k] = par[kShape2] == par[kShape] ? left[k] : garch_shape_stencil(par[kShape2], k);
  }
  for (int k = 0; k < kGarchStencil; ++k) stencil[k] = garch_aepd_stencil(par[kSkew], left, right, k);
}

// The gradient in the natural parameters from the sums, with the AEPD's
// constants at the stencil's points (garch_aepd_stencil). Returns the
// log-likelihood.
NUMPIPE_HD_OUTLINE double garch_gradient_finish(const GarchGradientSums& s, const double* par, double nn,
                                                const StandardAepd* stencil, double* grad) {
  for (int k = 0; k < 4; ++k) grad[k] = s.g[k];
  auto through_constants = [&](const StandardAepd& up, const StandardAepd& dn, double step) {
    return (s.g_theta * (up.theta - dn.theta) + s.g_sl * (up.s_l - dn.s_l) + s.g_sr * (up.s_r - dn.s_r) +
            nn * (up.log_norm - dn.log_norm)) /
           (2 * step);
  };
  grad[kSkew] = through_constants(stencil[1], stencil[2], garch_step_a(par[kSkew]));
  grad[kShape] = s.g_p1 + through_constants(stencil[3], stencil[4], garch_step_p(par[kShape]));
  grad[kShape2] = s.g_p2 + through_constants(stencil[5], stencil[6], garch_step_p(par[kShape2]));
  return s.ll;
}

// The CPU's window: the points in time order, one pass each; the re-search's
// starts one after another (side_by_side), each searched to the end only when
// the pick asks (kSearchAhead false).
struct GarchSerialWindow {
  const double* r;
  std::int64_t n;
  static constexpr bool kSearchAhead = false;
  template <class Result, int N, class Body>
  void side_by_side(Result (&out)[N], const Body& body) const {
    for (int j = 0; j < N; ++j) out[j] = body(j);
  }
  template <class F>
  double sum(F f) const {
    double s = 0;
    for (std::int64_t t = 0; t < n; ++t) s += f(r[t]);
    return s;
  }
  template <class F, class G>
  void sum_pair(F f, G g, double* sf, double* sg) const {
    double a = 0, b = 0;
    for (std::int64_t t = 0; t < n; ++t) {
      a += f(r[t]);
      b += g(r[t]);
    }
    *sf = a;
    *sg = b;
  }
  // the log-likelihood (NaN outside the constraints) and sigma_{n+1}^2: one run over the window
  double loglik(const double* par, double* h_next) const {
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, false);
    const StandardAepd z = standard_aepd(par[kSkew], par[kShape], par[kShape2]);
    double h_end = 0, e_end = 0;
    const double ll = garch_run_loglik<kGarchSerialBlock>(r, 0, n, par, ps.h0, ps.h0, z, &h_end, &e_end);
    if (h_next) *h_next = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], e_end, h_end);
    return ll;
  }
  // the log-likelihood's gradient in the natural parameters, in one run;
  // returns the log-likelihood (NaN outside the constraints)
  double loglik_gradient(const double* par, double* grad) const {
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, true);
    StandardAepd stencil[kGarchStencil];
    garch_aepd_stencil(par, stencil);
    const GarchGradientSums s =
        garch_run_gradient<kGarchSerialBlock>(r, 0, n, par, ps.h0, ps.dh0, ps.h0, ps.dh0, stencil[0]);
    return garch_gradient_finish(s, par, ps.nn, stencil, grad);
  }
};

// Inverse of the leading K x K block of a symmetric matrix (K <= kGarchParams)
// by Cholesky; false where it is not positive definite.
NUMPIPE_HD_INLINE bool garch_spd_inverse(double (*A)[kGarchParams], double (*inv)[kGarchParams],
                                         int K = kGarchParams) {
  double L[kGarchParams][kGarchParams] = {};
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
    double y[kGarchParams];
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

NUMPIPE_HD_INLINE void garch_copy(const double* from, double* to) {
  for (int i = 0; i < kGarchParams; ++i) to[i] = from[i];
}

// The gradient of f (below) at a point, unmasked, carried from one search to
// the next that starts there (a restart, a screen's second stage), so that the
// pass is not repeated; valid: it holds the gradient at the search's start.
struct GarchGradientAt {
  double g[kGarchParams];
  bool valid = false;
};

// BFGS over the coordinates not marked fixed (their gradient is held at 0, so
// that they keep their value); returns the iterations, sets *converged.
// f(u): minus the log-likelihood per point (+inf outside); gradient(u, g): the
// same with its gradient in u (the same value as f's: the passes compute the
// same bits). at: the gradient at u if valid (fu is f(u) then), and the
// gradient at the final u on return.
template <class F, class G>
NUMPIPE_HD_OUTLINE int garch_bfgs(const F& f, const G& gradient, double n, double* u, double& fu, const bool* fixed,
                                 bool* converged, GarchGradientAt& at, int max_iterations = 500) {
  constexpr int K = kGarchParams;
  double g[K], B[K][K] = {};  // B: the inverse Hessian estimate
  double gn_full[K];          // the unmasked gradient at the last point evaluated
  auto masked_gradient = [&](const double* v, double* gv) {
    const double fv = gradient(v, gn_full);
    for (int i = 0; i < K; ++i) gv[i] = fixed[i] ? 0.0 : gn_full[i];
    return fv;
  };
  auto reset = [&] {
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) B[i][j] = i == j && !fixed[i] ? 1 : 0;
  };
  reset();
  if (!at.valid) {
    masked_gradient(u, g);
    garch_copy(gn_full, at.g);
    at.valid = true;
  } else {
    for (int i = 0; i < K; ++i) g[i] = fixed[i] ? 0.0 : at.g[i];
  }
  int it = 0, stalled = 0;
  *converged = false;
  for (; it < max_iterations && std::isfinite(fu); ++it) {
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
    double step = 1, un[K], fn = INFINITY, gn[K] = {};
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
    garch_copy(gn_full, at.g);  // the gradient at un, the new u
    for (int i = 0; i < K; ++i) {
      s[i] = un[i] - u[i];
      y[i] = gn[i] - g[i];
      sy += s[i] * y[i];
    }
    const double gain = fu - fn;
    garch_copy(un, u);
    garch_copy(gn, g);
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
    stalled = gain * n < 1e-9 ? stalled + 1 : 0;
    if ((gain * n < 1e-10 && gmax < 1e-9) || stalled >= 5) {
      *converged = true;
      break;
    }
  }
  return it;
}

// Standard errors at the estimate par: the inverse of minus the Hessian of the
// log-likelihood in the natural parameters (the observed information), by
// central differences with steps of 1e-3 of each parameter's scale (omega:
// 1e-5 of the variance). With p < 2 the log-likelihood's second derivative in
// mu and the skew is infinite at every point at the mode (|u|^p's kink): steps
// this wide average the curvature over the points near it (about the expected
// information), where steps 1e-4 of the estimates gave standard errors off by
// 20-40% (DAX returns, p 1.23) depending on which points fell inside the step.
// One shape: p1 and p2 move together (6 parameters; p2's error is p1's).
// se: NaN where the matrix is not positive definite.
template <class Window>
NUMPIPE_HD_INLINE void garch_standard_errors(const Window& w, const GarchCoordinates& cs, const double* par,
                                             double* se) {
  constexpr int K = kGarchParams;
  const int free = cs.tied ? K - 1 : K;
  double h[K], H[K][K], inv[K][K];
  const double scale[K] = {cs.sd, 1e-2 * cs.sd * cs.sd, 1, 1, 1, 1, 1};
  for (int i = 0; i < K; ++i) h[i] = 1e-3 * scale[i];
  auto ll = [&](int i, double di, int j, double dj) {
    double q[K];
    garch_copy(par, q);
    q[i] += di;
    q[j] += dj;
    if (cs.tied) q[kShape2] = q[kShape];
    return w.loglik(q, nullptr);
  };
  for (int i = 0; i < free; ++i)
    for (int j = i; j < free; ++j) {
      const double v =
          (ll(i, h[i], j, h[j]) - ll(i, h[i], j, -h[j]) - ll(i, -h[i], j, h[j]) + ll(i, -h[i], j, -h[j])) /
          (4 * h[i] * h[j]);
      H[i][j] = H[j][i] = -v;
    }
  for (int i = 0; i < K; ++i) se[i] = NAN;
  if (garch_spd_inverse(H, inv, free))
    for (int i = 0; i < free; ++i) se[i] = inv[i][i] > 0 ? std::sqrt(inv[i][i]) : NAN;
  if (cs.tied) se[kShape2] = se[kShape];
}

// Whether two estimates lie by one maximum: within 1e-2 of the window's
// standard deviation in mu and sqrt(omega), 5e-3 in alpha, beta and the skew,
// 2e-2 in p1 and p2.
NUMPIPE_HD_INLINE bool garch_same_maximum(const double* a, const double* b, double sd) {
  return std::fabs(a[kMu] - b[kMu]) < 1e-2 * sd && std::fabs(std::sqrt(a[kOmega]) - std::sqrt(b[kOmega])) < 1e-2 * sd &&
         std::fabs(a[kAlpha] - b[kAlpha]) < 5e-3 && std::fabs(a[kBeta] - b[kBeta]) < 5e-3 &&
         std::fabs(a[kSkew] - b[kSkew]) < 5e-3 && std::fabs(a[kShape] - b[kShape]) < 2e-2 &&
         std::fabs(a[kShape2] - b[kShape2]) < 2e-2;
}

// The re-search's pieces (garch_fit): a search's end point in u, minus its
// log-likelihood per point, its iterations; and one fixed start's, screened
// and (where it was searched ahead) searched to the end.
struct GarchRun {
  double u[kGarchParams];
  double f;
  int iterations;
  bool converged;
  GarchGradientAt at;  // the gradient at u (a search from the run starts there)
  bool on_edge;        // u is on an edge of the constraints (garch_fit's edge stage)
  bool search_again;   // the search ended where the window is searched again from the fixed starts
};
struct GarchStart {
  GarchRun screened, searched;
  bool searched_ahead;
};

// Whether the re-search runs a screened start to the end, fu being the best
// so far (minus the log-likelihood per point) and par_warm the warm search's
// maximum: within 0.1 of the best log-likelihood, and not by the warm
// search's maximum unless above it.
NUMPIPE_HD_INLINE bool garch_worth_searching(const GarchRun& screened, double fu, double nn, const double* par_warm,
                                             const GarchCoordinates& cs) {
  if (!(screened.f < fu + 0.1 / nn)) return false;
  double par[kGarchParams];
  cs.natural(screened.u, par);
  return !(garch_same_maximum(par, par_warm, cs.sd) && !(screened.f < fu));
}

// The fixed starts (alpha, beta, omega as a share of the window's variance):
// the usual one, a persistent, a calm and an ARCH-like one, and one by the
// corner omega = 0, alpha = 0, beta = 1 (a variance drifting slowly from sigma_1^2).
// Fixed start j < kGarchStarts of a window (natural parameters).
constexpr int kGarchStarts = 5;
template <class Window>
NUMPIPE_HD_INLINE void garch_fixed_start(const Window& w, int j, double* par) {
  constexpr double kStart[kGarchStarts][3] = {
      {0.1, 0.8, 0.1}, {0.05, 0.93, 0.02}, {0.05, 0.15, 0.8}, {0.3, 0.05, 0.65}, {1e-3, 0.998, 1e-5}};
  garch_default_start(w, par);
  par[kOmega] *= kStart[j][2] / 0.1;  // garch_default_start's omega is 0.1 of the variance
  par[kAlpha] = kStart[j][0];
  par[kBeta] = kStart[j][1];
}

// What a window's fit hands the next window of its chunk (garch_fit_chunk):
// the estimate and, where the window's two warm searches ended at distinct
// maxima, the lower one (natural parameters).
struct GarchCarry {
  double best[kGarchParams] = {};
  double other[kGarchParams] = {};
  bool has_best = false, has_other = false;
};

// A carry that starts a window from one estimate (natural parameters).
NUMPIPE_HD_INLINE GarchCarry garch_carry_from(const double* start) {
  GarchCarry carry;
  garch_copy(start, carry.best);
  carry.has_best = true;
  return carry;
}

// The fit of one window from the starts in carry (natural parameters; a start
// outside the constraints' interior: the default one); *next: what the next
// window starts from.
//
// Two warm searches, side by side (the GPU: a warp each), from the previous
// window's estimate and from the other maximum it found, so that where two
// maxima trade places along a rolling series (DAX, 250-day windows from
// 1996-97: alpha 0.04, beta 0.92 against alpha 0.08, beta 0.67, up to 0.29
// of log-likelihood apart) the fit follows the higher rather than the one the
// chain was on; a chunk's first window searches from the usual start and the
// persistent one.
template <class Window>
NUMPIPE_HD_OUTLINE GarchFit garch_fit(const Window& w, const GarchCarry& carry, const GarchOptions& o,
                                      GarchCarry* next = nullptr) {
  constexpr int K = kGarchParams;
  const double nn = static_cast<double>(w.n);
  const GarchCoordinates cs = garch_coordinates(w, o);
  GarchFit fit{};
  auto f = [&](const double* u) {  // minus the log-likelihood per point (NaN -> +inf)
    double par[K];
    cs.natural(u, par);
    const double ll = w.loglik(par, nullptr);
    return std::isfinite(ll) ? -ll / nn : INFINITY;
  };
  // the gradient of f in u: the natural parameters' gradient times the
  // derivatives of the parameterisation (GarchCoordinates)
  auto gradient = [&](const double* u, double* g) {  // returns f(u) too
    double par[K], gp[K];
    cs.natural(u, par);
    const double ll = w.loglik_gradient(par, gp);
    if (!std::isfinite(ll)) {
      for (int i = 0; i < K; ++i) g[i] = 0;
      return static_cast<double>(INFINITY);
    }
    double gu[K];
    cs.chain(u, par, gp, gu);
    for (int i = 0; i < K; ++i) g[i] = -gu[i] / nn;
    return -ll / nn;
  };
  double u[K], fu = INFINITY;
  const bool none_held[K] = {};  // the searches run over every coordinate
  bool converged = false;
  // the search with restarts (a fresh inverse Hessian) while they gain: a stale
  // BFGS estimate stalls in the long curved ridge of omega against alpha + beta
  auto search = [&](double* v, double& fv, const bool* held, bool* done, GarchGradientAt& at) {
    int count = garch_bfgs(f, gradient, nn, v, fv, held, done, at);
    for (int restart = 0; restart < 5 && std::isfinite(fv); ++restart) {
      const double before = fv;
      count += garch_bfgs(f, gradient, nn, v, fv, held, done, at);
      if ((before - fv) * nn < 1e-9) break;
    }
    return count;
  };
  // Where the likelihood has several maxima the warm start may sit in the
  // wrong one: with p < 1 every data point is a local maximum in mu (|u|^p's
  // cusp; tied returns, holidays' zeros, are deep ones), and on an edge of the
  // constraints (alpha = 0, beta = 0 or alpha + beta = 1) a window is often
  // explained almost as well by the other edge (DAX returns: alpha 0, beta 0.98
  // against alpha 0.05, beta 0, 0.15 of log-likelihood apart). Such a fit is
  // searched again from fixed starts spread over the (alpha, beta) triangle,
  // each first with p held at 2 (smooth in mu) where p < 1, then freed: 40
  // iterations each, and those within 0.1 of the best log-likelihood so far
  // and not by the warm search's maximum run to the end; the highest kept.
  constexpr double kNearLogit = 9.21024036697;  // logit(1 - 1e-4): drifting to the edge
  constexpr double kNearOmega = -9.21034037198;  // log(1e-4): omega drifting to 0 (of the variance)
  constexpr double kCloseLogit = 4.59511985014;  // logit(1 - 1e-2): close enough to an edge to search again
  // whether a fit at v (natural parameters par) is searched again, and whether with p held first
  auto cusps_at = [](const double* par) { return std::min(par[kShape], par[kShape2]) < 1; };
  auto searched_again = [&](const double* v, double fv, const double* par) {
    const bool near_edge = std::fabs(v[2]) > kCloseLogit || std::fabs(v[3]) > kCloseLogit || v[1] < kNearOmega;
    return std::isfinite(fv) && (cusps_at(par) || near_edge);
  };
  constexpr int kStarts = kGarchStarts;
  constexpr int kScreen = 40;
  // the pieces: start j screened (p held at 2 first where p < 1, then 40
  // iterations free), a screened start searched to the end
  auto screen = [&](int j, bool cusps) {
    GarchRun run{};
    double par[K];
    garch_fixed_start(w, j, par);
    cs.unconstrained(par, run.u);
    run.f = gradient(run.u, run.at.g);
    run.at.valid = true;
    bool held_p[K] = {};
    held_p[kShape] = held_p[kShape2] = true;
    if (cusps) run.iterations += garch_bfgs(f, gradient, nn, run.u, run.f, held_p, &run.converged, run.at, kScreen);
    run.iterations += garch_bfgs(f, gradient, nn, run.u, run.f, none_held, &run.converged, run.at, kScreen);
    return run;
  };
  auto search_from = [&](const GarchRun& screened) {
    GarchRun run = screened;
    run.iterations = search(run.u, run.f, none_held, &run.converged, run.at);
    return run;
  };
  // Active set (Nocedal and Wright 2006, ch. 16.5): a search drifting to an edge
  // of alpha + beta < 1, alpha >= 0, beta >= 0 or omega > 0 crawls there (the
  // logistic and the exponential flatten), so each such coordinate is put on its
  // edge (1e-10 inside; omega 1e-14 of the variance: the log-likelihood equals
  // its limit to ~1e-10 per point) and the others
  // searched; then a free search restarts from well inside it, so that an
  // optimum inside the edge that the first search passed by is found too. The
  // highest of the three is kept; the fit is on the edge only where the edge's
  // search is the highest. finish(run): that stage on a search's end.
  constexpr double kEdgeLogit = 23.0258509299;  // logit(1 - 1e-10)
  auto finish = [&](GarchRun& run) {
    run.on_edge = false;
    bool held[K] = {}, any_edge = false;
    double ue[K];
    garch_copy(run.u, ue);
    for (int i = 2; i <= 3; ++i)
      if (std::fabs(run.u[i]) > kNearLogit) {
        held[i] = any_edge = true;
        ue[i] = std::copysign(kEdgeLogit, run.u[i]);
      }
    if (run.u[1] < kNearOmega) {
      held[1] = any_edge = true;
      ue[1] = -32.2362019158;  // log(1e-14)
    }
    if (!any_edge || !std::isfinite(run.f)) return;
    GarchGradientAt at_e;
    double fe = gradient(ue, at_e.g);
    at_e.valid = true;
    bool ce = false;
    run.iterations += garch_bfgs(f, gradient, nn, ue, fe, held, &ce, at_e);
    double ui[K];
    garch_copy(ue, ui);
    // well inside: alpha + beta 0.99 with omega giving the window's variance
    // unconditionally, the share alpha / (alpha + beta) within [0.05, 0.95]
    // (the search into the edge may have dragged omega to 0 on the way)
    if (held[2]) ui[2] = garch_logit(0.99);
    if (held[1] || held[2]) ui[1] = std::log(0.01);
    if (held[3]) ui[3] = std::copysign(garch_logit(0.95), ue[3]);
    GarchGradientAt at_i;
    double fi = gradient(ui, at_i.g);
    at_i.valid = true;
    bool ci = false;
    const bool none[K] = {};
    run.iterations += garch_bfgs(f, gradient, nn, ui, fi, none, &ci, at_i);
    // the edge only where it is higher beyond rounding (1e-10 relative): along
    // a flat edge (omega to 0) the two differ by rounding alone, and the flag
    // would follow the backend's order of operations
    const double tie = 1e-10 * std::fabs(run.f);
    if (fe < run.f - tie && fe <= fi - tie) {
      garch_copy(ue, run.u);
      run.f = fe;
      run.converged = ce;
      run.on_edge = true;
    }
    if (fi < run.f) {
      garch_copy(ui, run.u);
      run.f = fi;
      run.converged = ci;
      run.on_edge = false;
    }
  };
  GarchStart starts[kStarts];
  int it = 0;
  // the warm searches, pieces of their own: on the GPU a warp each while the
  // block's others wait (rather than all running the same passes, whose
  // arithmetic would compete for the SM with other blocks' searches)
  GarchRun warm[2];
  w.side_by_side(warm, [&](int j) {
    GarchRun run{};
    run.f = INFINITY;
    double par[K];
    if (j == 0 && carry.has_best)
      garch_copy(carry.best, par);
    else if (j == 1 && carry.has_other)
      garch_copy(carry.other, par);
    else if (!carry.has_best)  // a chunk's first window: the usual start, the persistent one
      garch_fixed_start(w, j, par);
    else
      return run;  // no other maximum known
    cs.unconstrained(par, run.u);
    run.f = gradient(run.u, run.at.g);  // each search's start comes with its gradient (one pass)
    if (!std::isfinite(run.f) && j == 0) {  // a start outside the constraints' interior: the default one
      garch_default_start(w, par);
      cs.unconstrained(par, run.u);
      run.f = gradient(run.u, run.at.g);
    }
    if (!std::isfinite(run.f)) return run;
    run.at.valid = true;
    run.iterations = search(run.u, run.f, none_held, &run.converged, run.at);
    cs.natural(run.u, par);
    run.search_again = searched_again(run.u, run.f, par);
    finish(run);
    return run;
  });
  const int higher = warm[1].f < warm[0].f ? 1 : 0;  // (a tie: the previous estimate's)
  garch_copy(warm[higher].u, u);
  fu = warm[higher].f;
  converged = warm[higher].converged;
  bool on_edge = warm[higher].on_edge;
  it = warm[0].iterations + warm[1].iterations;
  double par_now[K];
  cs.natural(u, par_now);
  const bool cusps = cusps_at(par_now);
  // The corner omega = 0, alpha + beta = 1 (a variance drifting slowly from
  // sigma_1^2) can hold the highest maximum far from the warm searches' (DAX,
  // 250-day windows of 1995-96: 0.17 above an interior one at alpha 0.02-0.03,
  // beta 0.85-0.94), which nothing near it reveals: the log-likelihood at the
  // corner's fixed start, with the fit's mu, skew and shapes (one pass), within
  // kCornerMargin of the fit's sends the window to the re-search, whose corner
  // start finds it (on the DAX 0.3 and 1 gave the same fits; 0.5 costs 6%
  // more passes).
  constexpr double kCornerMargin = 0.5;
  bool corner_close = false;
  if (std::isfinite(fu)) {
    double corner[K];
    garch_fixed_start(w, kGarchStarts - 1, corner);
    corner[kMu] = par_now[kMu];
    corner[kSkew] = par_now[kSkew];
    corner[kShape] = par_now[kShape];
    corner[kShape2] = par_now[kShape2];
    const double ll_corner = w.loglik(corner, nullptr);
    corner_close = std::isfinite(ll_corner) && ll_corner > -fu * nn - kCornerMargin;
  }
  if (warm[0].search_again || warm[1].search_again || corner_close) {
    // The starts side by side where the window runs them so (the GPU: a warp
    // each), each searched ahead where it is worth it against the warm fit: a
    // superset of the searches the pick below runs, as the best so far only
    // rises; elsewhere (the CPU) screened only, and searched in the pick.
    const double fu_warm = fu;
    w.side_by_side(starts, [&](int j) {
      GarchStart s{};
      s.screened = screen(j, cusps);
      s.searched_ahead = Window::kSearchAhead && garch_worth_searching(s.screened, fu_warm, nn, par_now, cs);
      if (s.searched_ahead) s.searched = search_from(s.screened);
      return s;
    });
    // The pick: the starts in order, as one loop running them would decide
    // (the same fits on every backend); the highest kept, then its edge stage.
    GarchRun picked{};
    bool start_won = false;
    for (int j = 0; j < kStarts; ++j) {
      it += starts[j].screened.iterations;
      if (!garch_worth_searching(starts[j].screened, fu, nn, par_now, cs)) continue;
      const GarchRun run = starts[j].searched_ahead ? starts[j].searched : search_from(starts[j].screened);
      it += run.iterations;
      if (run.f < fu) {
        picked = run;
        fu = run.f;
        start_won = true;
      }
    }
    if (start_won) {
      picked.iterations = 0;
      finish(picked);
      it += picked.iterations;
      garch_copy(picked.u, u);
      fu = picked.f;
      converged = picked.converged;
      on_edge = picked.on_edge;
    }
  }
  cs.natural(u, fit.par);
  fit.loglik = w.loglik(fit.par, &fit.h_next);
  fit.iterations = it;
  fit.converged = converged;
  fit.on_edge = on_edge;
  if (next) {
    // the next window's starts: this estimate, and the higher warm search's
    // end that is another maximum than it
    next->has_best = std::isfinite(fit.loglik);
    if (next->has_best) garch_copy(fit.par, next->best);
    next->has_other = false;
    for (int j : {higher, 1 - higher}) {
      double par[K];
      cs.natural(warm[j].u, par);
      if (next->has_best && std::isfinite(warm[j].f) && !garch_same_maximum(par, fit.par, cs.sd)) {
        garch_copy(par, next->other);
        next->has_other = true;
        break;
      }
    }
  }
  for (int i = 0; i < K; ++i) fit.se[i] = NAN;
  if (o.inform && std::isfinite(fit.loglik)) garch_standard_errors(w, cs, fit.par, fit.se);
  return fit;
}

// The fit of one window of the model o.shapes asks for. Two shapes: the
// two-shape likelihood has more local maxima than the one-shape one (where a
// shape nears 1 every point bends it), and a search warm-started from the
// previous window's estimate often ends in a lower one (on the 1611 windows
// of 250 days of share/ref/mle-garch-prices.csv, 40 ended below the one-shape
// fit of the same window, by up to 0.33, though it is the special case p1 = p2). So the window
// is fitted with one shape (from the start's mean shape) and with two from
// that fit's maximum, beside the two-shape fit from the start, and the higher
// kept: never below the one-shape maximum. Standard errors at the one kept.
template <class Window>
NUMPIPE_HD_OUTLINE GarchFit garch_fit_model(const Window& w, const GarchCarry& carry, const GarchOptions& o,
                                            GarchCarry* next = nullptr) {
  if (o.shapes != 2) return garch_fit(w, carry, o, next);
  GarchOptions quiet = o, tied = o;
  quiet.inform = tied.inform = false;
  tied.shapes = 1;
  GarchCarry one_carry = carry;  // the starts with their mean shape
  for (double* par : {one_carry.best, one_carry.other}) par[kShape] = par[kShape2] = 0.5 * (par[kShape] + par[kShape2]);
  const GarchFit one = garch_fit(w, one_carry, tied);
  GarchFit fit = garch_fit(w, carry, quiet, next);
  if (std::isfinite(one.loglik)) {
    const GarchFit nested = garch_fit(w, garch_carry_from(one.par), quiet);
    const int iterations = fit.iterations + one.iterations + nested.iterations;
    if (nested.loglik > fit.loglik || !std::isfinite(fit.loglik)) fit = nested;
    fit.iterations = iterations;
  }
  const GarchCoordinates cs = garch_coordinates(w, o);
  if (next) {  // the estimate kept, and the other maximum where it is not that one
    next->has_best = std::isfinite(fit.loglik);
    if (next->has_best) garch_copy(fit.par, next->best);
    next->has_other = next->has_best && next->has_other && !garch_same_maximum(next->other, fit.par, cs.sd);
  }
  if (o.inform && std::isfinite(fit.loglik)) garch_standard_errors(w, cs, fit.par, fit.se);
  return fit;
}

// The windows of one chunk of a series, in order: the first from the fixed
// starts, each later one from the latest finite estimate and the other
// maximum its window found (garch_fit). window(w) gives window w's Window;
// out[w] receives its fit. store: whether this caller writes out (on the GPU,
// one thread of the block).
template <class MakeWindow>
NUMPIPE_HD_INLINE void garch_fit_chunk(const MakeWindow& window, std::int64_t first, std::int64_t last,
                                       const GarchOptions& o, GarchFit* out, bool store = true) {
  GarchCarry carry;  // none: the fixed starts
  for (std::int64_t w = first; w < last; ++w) {
    GarchCarry next;
    const GarchFit fit = garch_fit_model(window(w), carry, o, &next);
    if (store) out[w] = fit;
    if (next.has_best) carry = next;
  }
}

}  // namespace numpipe::mle
