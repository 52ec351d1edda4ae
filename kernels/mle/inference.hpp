// mle-fit after the grid: the refined optimum, the observed information and
// its standard errors, and a profile-likelihood interval for theta where the
// likelihood is not smooth in theta. One window per call, the same source for
// the CPU (one OpenMP iteration per window) and CUDA (one thread per window).
//
// The general model has two shapes, p1 left of theta and p2 right of it
// (Zhu and Zinde-Walsh 2009, J. Econometrics 148, 86-99, in the scale form of
// model.hpp):
//   f(x) = exp(-((theta - x)/s_l)^p1) / D   x <= theta
//          exp(-((x - theta)/s_r)^p2) / D   x >  theta
//   D = s_l g1 + s_r g2,  g_i = Gamma(1 + 1/p_i)
// (continuous at theta; the left branch holds mass s_l g1 / D). With p1 = p2 = p,
// D = (s_l + s_r) Gamma(1/p) / p: model.hpp's density. Log-likelihood of a window
// of n points, with X- = sum over x <= theta of (theta - x)^p1 and X+ the same on
// the right with p2:
//   loglik = -n log D - X- / s_l^p1 - X+ / s_r^p2.
// Maximising over the scales: d/ds_l = 0 and d/ds_r = 0 give, with lambda = n / D,
//   s_l^(p1+1) = p1 X- / (g1 lambda),  s_r^(p2+1) = p2 X+ / (g2 lambda),
// and D = n / lambda becomes one equation in u = log lambda,
//   c1 exp(e1 u) + c2 exp(e2 u) = n,  e_i = p_i/(p_i+1),
//   c1 = g1^e1 (p1 X-)^(1/(p1+1)),  c2 = g2^e2 (p2 X+)^(1/(p2+1)),
// increasing and convex in u: Newton from the right converges monotonically.
// Then loglik = n u - n log n - c1 exp(e1 u)/p1 - c2 exp(e2 u)/p2. With p1 = p2
// the root is closed-form and this is the spec's profile formula.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "model.hpp"

namespace numpipe::mle {

// Finite (neither inf nor NaN), the same on host and device.
NUMPIPE_HD_INLINE bool finite(double v) { return v - v == 0.0; }

// ---- special functions -------------------------------------------------------
// Digamma and trigamma for x > 0: the recurrences psi(x) = psi(x+1) - 1/x and
// psi'(x) = psi'(x+1) + 1/x^2 up to x >= 10, then the asymptotic series
// (Abramowitz and Stegun 6.3.18 and 6.4.12, Bernoulli numbers to B14): the first
// omitted term is below 1e-17 at x = 10.
NUMPIPE_HD_INLINE double digamma(double x) {
  double r = 0;
  while (x < 10) {
    r -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  const double tail =
      f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132 - f * (691.0 / 32760 - f / 12.0))))));
  return r + log(x) - 0.5 / x - tail;
}
NUMPIPE_HD_INLINE double trigamma(double x) {
  double r = 0;
  while (x < 10) {
    r += 1.0 / (x * x);
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  const double tail =
      (f / x) * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * (5.0 / 66 - f * (691.0 / 2730 - f * 7.0 / 6.0))))));
  return r + 1.0 / x + 0.5 * f + tail;
}

// ---- the two-shape profile ------------------------------------------------------
// Per shape constants: e = p/(p+1), 1/(p+1), log g = lgamma(1 + 1/p), log p.
struct ShapeConst {
  double p, e, inv_p1, log_g, log_p;
};
NUMPIPE_HD_INLINE ShapeConst shape_const(double p) {
  return {p, p / (p + 1.0), 1.0 / (p + 1.0), lgamma(1.0 + 1.0 / p), log(p)};
}

// u = log lambda solving c1 exp(e1 u) + c2 exp(e2 u) = n (log c_i given; a
// missing side has log c = -inf). Newton from the largest one-term root.
NUMPIPE_HD_INLINE double lambda_root(double lc1, double e1, double lc2, double e2, double n) {
  const double ln = log(n);
  double u = -INFINITY;
  if (lc1 > -INFINITY) u = (ln - lc1) / e1;
  if (lc2 > -INFINITY) u = fmax(u, (ln - lc2) / e2);
  for (int it = 0; it < 200; ++it) {
    const double t1 = exp(lc1 + e1 * u), t2 = exp(lc2 + e2 * u);
    const double phi = t1 + t2 - n, dphi = e1 * t1 + e2 * t2;
    if (!(dphi > 0)) break;
    const double step = phi / dphi;
    u -= step;
    if (!(fabs(step) > 1e-15 * (1.0 + fabs(u)))) break;
  }
  return u;
}

struct Fit2 {
  double loglik, s_l, s_r;
};
// The profile log-likelihood and the scales at (theta, p1, p2) from X- (xm,
// with shape p1) and X+ (xp, shape p2). p1 == p2: model.hpp's closed form, the
// same bits as the one-shape fit. Every point equal (xm = xp = 0): +inf.
NUMPIPE_HD_INLINE Fit2 profile2(double xm, double xp, const ShapeConst& a, const ShapeConst& b, double n) {
  if (a.p == b.p) {
    const Scales sc = closed_form_scales(xm, xp, a.p, n);
    return {profile_loglik(scale_sum(xm, xp, a.inv_p1), a.p, n), sc.s_l, sc.s_r};
  }
  if (!(xm > 0) && !(xp > 0)) return {INFINITY, 0.0, 0.0};
  const double lxm = xm > 0 ? log(xm) : -INFINITY, lxp = xp > 0 ? log(xp) : -INFINITY;
  const double lc1 = a.e * a.log_g + (a.log_p + lxm) * a.inv_p1;
  const double lc2 = b.e * b.log_g + (b.log_p + lxp) * b.inv_p1;
  const double u = lambda_root(lc1, a.e, lc2, b.e, n);
  const double ll = n * u - n * log(n) - exp(lc1 + a.e * u) / a.p - exp(lc2 + b.e * u) / b.p;
  const double sl = xm > 0 ? exp((a.log_p + lxm - a.log_g - u) * a.inv_p1) : 0.0;
  const double sr = xp > 0 ? exp((b.log_p + lxp - b.log_g - u) * b.inv_p1) : 0.0;
  return {ll, sl, sr};
}

// An upper bound of the two-shape profile at one candidate, per side
// (for pruning the (p1, p2) pairs): for any w in (0, 1), by the concavity of log,
//   log(s_l g1 + s_r g2) >= w log(s_l g1 / w) + (1 - w) log(s_r g2 / (1 - w)),
// so loglik <= U1(p1) + U2(p2) with, for m = n w and X = X-,
//   U1 = max over s of [-m log(s g1 / w) - X s^-p1] = -m log(g1 / w) - (m/p1)(log(p1 X / m) + 1)
// and U2 likewise with 1 - w and X+. X = 0 gives +inf (no bound).
NUMPIPE_HD_INLINE double side_bound(double X, const ShapeConst& c, double m, double log_w) {
  if (!(X > 0)) return INFINITY;
  return -m * (c.log_g - log_w) - (m / c.p) * (c.log_p + log(X) - log(m) + 1.0);
}

// ---- sums over a window ------------------------------------------------------
// At location t and shapes p1 (left), p2 (right), over the window's points y
// (x times a power of two, exact): per side, with d the distance to t,
//   A0 = sum d^p, A1 = sum d^p log d, A2 = sum d^p log^2 d,
//   B0 = sum d^(p-1), B1 = sum d^(p-1) log d, C0 = sum d^(p-2);
// points at t count to `zero` (their terms are 0; their d^(p-2) is not finite
// for p < 2, so theta's second derivative does not exist there). `above` and
// `below`: the nearest points strictly above and below t (+-inf: none).
struct SideSums {
  double A0, A1, A2, B0, B1, C0;
};
struct WindowSums {
  SideSums l, r;
  std::int64_t zero;
  double above, below;
};
// The sums over the points k = lane, lane + lanes, ... (all of them: lane 0 of 1).
// Division: d^(p-1) and d^(p-2) as e / u and (e / u) / u; with recip, as
// e (1/u) and e (1/u)^2 (one division instead of two; the CUDA kernel's).
NUMPIPE_HD_INLINE WindowSums window_sums_part(const double* x, std::int64_t n, double scale, double t, double p1,
                                              double p2, bool all, int lane, int lanes, bool recip) {
  WindowSums s{{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, 0, INFINITY, -INFINITY};
  for (std::int64_t k = lane; k < n; k += lanes) {
    const double y = x[k] * scale;
    const double d = t - y;
    if (d == 0) {
      ++s.zero;
      continue;
    }
    const bool left = d > 0;
    const double u = left ? d : -d;
    if (left) s.below = fmax(s.below, y);
    else s.above = fmin(s.above, y);
    const double L = log(u), e = exp((left ? p1 : p2) * L);
    SideSums& q = left ? s.l : s.r;
    q.A0 += e;
    if (all) {
      const double iu = recip ? 1.0 / u : 0.0, eu = recip ? e * iu : e / u;
      q.A1 += e * L;
      q.A2 += e * L * L;
      q.B0 += eu;
      q.B1 += eu * L;
      q.C0 += recip ? eu * iu : eu / u;
    }
  }
  return s;
}

// s += o, field by field (IEEE addition is commutative: two lanes that add
// each other's partial sums hold the same bits).
NUMPIPE_HD_INLINE void add_sums(WindowSums& s, const WindowSums& o, bool all) {
  SideSums* a[2] = {&s.l, &s.r};
  const SideSums* b[2] = {&o.l, &o.r};
  for (int i = 0; i < 2; ++i) {
    a[i]->A0 += b[i]->A0;
    if (all) {
      a[i]->A1 += b[i]->A1;
      a[i]->A2 += b[i]->A2;
      a[i]->B0 += b[i]->B0;
      a[i]->B1 += b[i]->B1;
      a[i]->C0 += b[i]->C0;
    }
  }
  s.zero += o.zero;
  s.above = fmin(s.above, o.above);
  s.below = fmax(s.below, o.below);
}

#ifdef __CUDACC__
// Lanes per window of the CUDA estimate kernel (1, 2, 4, 8, 16 or 32; cuda.cu
// sets it before a launch): a window's `lanes` consecutive threads split its
// points and combine their partial sums by a butterfly of shuffles, so every
// lane holds the same sums and takes the same path through the searches.
static __constant__ int g_estimate_lanes = 1;
// The shuffle mask of this thread's group of `lanes` (aligned within its warp).
__device__ __forceinline__ unsigned estimate_group(int lanes) {
  if (lanes == 32) return 0xffffffffu;
  return ((1u << lanes) - 1u) << (static_cast<int>(threadIdx.x) & 31 & ~(lanes - 1));
}
#endif

// The sums of the window at t. On the host in point order (lanes = 1); the CUDA
// estimate kernel splits the points over `lanes` threads (above), a different
// order of the same additions. NUMPIPE_MLE_EMULATE_LANES (tests only) runs the
// kernel's order and arithmetic on the host.
NUMPIPE_HD_OUTLINE WindowSums window_sums(const double* x, std::int64_t n, double scale, double t, double p1, double p2,
                                         bool all) {
#if defined(__CUDA_ARCH__)
  const int lanes = g_estimate_lanes;
  if (lanes == 1) return window_sums_part(x, n, scale, t, p1, p2, all, 0, 1, true);
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const unsigned group = estimate_group(lanes);
  WindowSums s = window_sums_part(x, n, scale, t, p1, p2, all, lane, lanes, true);
  for (int m = lanes >> 1; m > 0; m >>= 1) {
    WindowSums o;
    o.l.A0 = __shfl_xor_sync(group, s.l.A0, m);
    o.r.A0 = __shfl_xor_sync(group, s.r.A0, m);
    if (all) {
      o.l.A1 = __shfl_xor_sync(group, s.l.A1, m);
      o.l.A2 = __shfl_xor_sync(group, s.l.A2, m);
      o.l.B0 = __shfl_xor_sync(group, s.l.B0, m);
      o.l.B1 = __shfl_xor_sync(group, s.l.B1, m);
      o.l.C0 = __shfl_xor_sync(group, s.l.C0, m);
      o.r.A1 = __shfl_xor_sync(group, s.r.A1, m);
      o.r.A2 = __shfl_xor_sync(group, s.r.A2, m);
      o.r.B0 = __shfl_xor_sync(group, s.r.B0, m);
      o.r.B1 = __shfl_xor_sync(group, s.r.B1, m);
      o.r.C0 = __shfl_xor_sync(group, s.r.C0, m);
    }
    o.zero = __shfl_xor_sync(group, static_cast<long long>(s.zero), m);
    o.above = __shfl_xor_sync(group, s.above, m);
    o.below = __shfl_xor_sync(group, s.below, m);
    add_sums(s, o, all);
  }
  return s;
#elif defined(NUMPIPE_MLE_EMULATE_LANES)
  constexpr int lanes = NUMPIPE_MLE_EMULATE_LANES;
  WindowSums v[lanes];
  for (int l = 0; l < lanes; ++l) v[l] = window_sums_part(x, n, scale, t, p1, p2, all, l, lanes, true);
  for (int m = lanes >> 1; m > 0; m >>= 1) {
    WindowSums w[lanes];
    for (int l = 0; l < lanes; ++l) {
      w[l] = v[l];
      add_sums(w[l], v[l ^ m], all);
    }
    for (int l = 0; l < lanes; ++l) v[l] = w[l];
  }
  return v[0];
#else
  return window_sums_part(x, n, scale, t, p1, p2, all, 0, 1, false);
#endif
}

// ---- derivatives --------------------------------------------------------------
// Parameters of the general model, in this order.
enum : int { kTheta = 0, kP1 = 1, kP2 = 2, kSl = 3, kSr = 4, kParams = 5 };

// Gradient g and Hessian H of the log-likelihood in (theta, p1, p2, s_l, s_r)
// at scales (sl, sr), from the sums at (theta, p1, p2). With T = X- / s_l^p1 and
// z = d/s_l, lambda = log z, every derivative of T is a sum of z^p1 times a
// polynomial in lambda and 1/d (e.g. dT/dtheta = p1 s_l^-p1 B0,
// d2T/dtheta dp1 = s_l^-p1 (B0 + p1 (B1 - B0 log s_l))); the right side is the
// mirror (d = x - theta flips the sign of odd theta derivatives); -n log D gives
// the rest, with g' = g psi(h) h' and g'' = g ((psi(h)^2 + psi'(h)) h'^2 + psi(h) h''),
// h = 1 + 1/p.
NUMPIPE_HD_INLINE void loglik_derivatives(const WindowSums& s, double p1, double p2, double sl, double sr, double n,
                                          double* g, double (*H)[kParams]) {
  for (int i = 0; i < kParams; ++i) {
    g[i] = 0;
    for (int j = 0; j < kParams; ++j) H[i][j] = 0;
  }
  // -n log D
  double gam[2], dgam[2], d2gam[2];  // g_i and its first two derivatives in p_i
  const double ps[2] = {p1, p2};
  for (int i = 0; i < 2; ++i) {
    const double h = 1.0 + 1.0 / ps[i], hp = -1.0 / (ps[i] * ps[i]), hpp = 2.0 / (ps[i] * ps[i] * ps[i]);
    const double psi = digamma(h), tri = trigamma(h);
    gam[i] = exp(lgamma(h));
    dgam[i] = gam[i] * psi * hp;
    d2gam[i] = gam[i] * ((psi * psi + tri) * hp * hp + psi * hpp);
  }
  const double D = sl * gam[0] + sr * gam[1];
  double Dk[kParams] = {0, sl * dgam[0], sr * dgam[1], gam[0], gam[1]};
  double Dkl[kParams][kParams] = {};
  Dkl[kP1][kP1] = sl * d2gam[0];
  Dkl[kP2][kP2] = sr * d2gam[1];
  Dkl[kP1][kSl] = Dkl[kSl][kP1] = dgam[0];
  Dkl[kP2][kSr] = Dkl[kSr][kP2] = dgam[1];
  for (int i = 0; i < kParams; ++i) {
    g[i] -= n * Dk[i] / D;
    for (int j = 0; j < kParams; ++j) H[i][j] -= n * (Dkl[i][j] / D - Dk[i] * Dk[j] / (D * D));
  }
  // the sums' terms, left (sign +1 for theta) and right (sign -1)
  for (int side = 0; side < 2; ++side) {
    const SideSums& q = side == 0 ? s.l : s.r;
    const double p = side == 0 ? p1 : p2, sc = side == 0 ? sl : sr, sg = side == 0 ? 1.0 : -1.0;
    const int ip = side == 0 ? kP1 : kP2, is = side == 0 ? kSl : kSr;
    const double ls = log(sc), f = exp(-p * ls);
    const double Tt = sg * p * f * q.B0;
    const double Ts = -p * f * q.A0 / sc;
    const double Tp = f * (q.A1 - ls * q.A0);
    const double Ttt = p * (p - 1.0) * f * q.C0;
    const double Tts = -sg * p * p * f * q.B0 / sc;
    const double Ttp = sg * f * (q.B0 + p * (q.B1 - ls * q.B0));
    const double Tss = p * (p + 1.0) * f * q.A0 / (sc * sc);
    const double Tsp = -f * (q.A0 + p * (q.A1 - ls * q.A0)) / sc;
    const double Tpp = f * (q.A2 - 2.0 * ls * q.A1 + ls * ls * q.A0);
    g[kTheta] -= Tt;
    g[is] -= Ts;
    g[ip] -= Tp;
    H[kTheta][kTheta] -= Ttt;
    H[kTheta][is] -= Tts;
    H[is][kTheta] -= Tts;
    H[kTheta][ip] -= Ttp;
    H[ip][kTheta] -= Ttp;
    H[is][is] -= Tss;
    H[is][ip] -= Tsp;
    H[ip][is] -= Tsp;
    H[ip][ip] -= Tpp;
  }
}

// The full log-likelihood of the general model at (theta, p1, p2, s_l, s_r)
// from the sums (for checks).
NUMPIPE_HD_INLINE double loglik_from_sums(const WindowSums& s, double p1, double p2, double sl, double sr, double n) {
  const double D = sl * exp(lgamma(1.0 + 1.0 / p1)) + sr * exp(lgamma(1.0 + 1.0 / p2));
  return -n * log(D) - s.l.A0 * exp(-p1 * log(sl)) - s.r.A0 * exp(-p2 * log(sr));
}

// Theta's rows of the information from their expectations. Theta's
// derivatives are the only ones that use the sums B0 = sum d^(p-1),
// B1 = sum d^(p-1) log d and C0 = sum d^(p-2) of a side (d the distance to
// theta): for p < 2 C0 is dominated by the point nearest theta (its variance
// is infinite for p <= 1.5), and for p near 1 so are B0 and B1 (d^(p-1) is
// near 1 however close the point). This replaces them by their expectations
// under the fitted distribution (n points; on the left branch, of mass
// s_l g1 / D, d = s_l t^(1/p1) with t ~ Gamma(1/p1); int z^(p-1) e^(-z^p) dz = 1/p,
// int z^(p-1) log z e^(-z^p) dz = -gamma/p^2, int z^(p-2) e^(-z^p) dz = Gamma(1 - 1/p)/p):
//   E B0 = n s^p / (p D),  E B1 = E B0 (log s - gamma_E / p),
//   E C0 = n s^(p-1) Gamma(1 - 1/p) / (p D),  D = s_l g1 + s_r g2,
// finite for p > 1. Then theta's expected score is 0, and minus the expected
// second derivative in theta is
//   n [p1 Gamma(2 - 1/p1) / s_l + p2 Gamma(2 - 1/p2) / s_r] / D
// (one shape, p = 2: 2n / (s_l s_r), the normal's n / sigma^2 when s_l = s_r),
// the expected squared score (the tests integrate both numerically).
NUMPIPE_HD_INLINE void expect_theta_sums(WindowSums& s, double p1, double p2, double sl, double sr, double n) {
  const double euler = 0.57721566490153286;
  const double D = sl * exp(lgamma(1.0 + 1.0 / p1)) + sr * exp(lgamma(1.0 + 1.0 / p2));
  for (int side = 0; side < 2; ++side) {
    SideSums& q = side == 0 ? s.l : s.r;
    const double p = side == 0 ? p1 : p2, sc = side == 0 ? sl : sr;
    const double ls = log(sc), sp = exp(p * ls);
    q.B0 = n * sp / (p * D);
    q.B1 = q.B0 * (ls - euler / p);
    q.C0 = n * (sp / sc) * exp(lgamma(1.0 - 1.0 / p)) / (p * D);
  }
}

// ---- small dense linear algebra -------------------------------------------------
// Cholesky of the m x m symmetric positive definite matrix M (rows idx[0..m) of
// a kParams matrix); false when not positive definite. L lower, in place.
NUMPIPE_HD_INLINE bool cholesky(double (*L)[kParams], int m) {
  for (int j = 0; j < m; ++j) {
    double d = L[j][j];
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    if (!(d > 0) || !finite(d)) return false;
    L[j][j] = sqrt(d);
    for (int i = j + 1; i < m; ++i) {
      double v = L[i][j];
      for (int k = 0; k < j; ++k) v -= L[i][k] * L[j][k];
      L[i][j] = v / L[j][j];
    }
  }
  return true;
}
// Solves (L L^T) z = b in place.
NUMPIPE_HD_INLINE void cholesky_solve(const double (*L)[kParams], int m, double* b) {
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= L[i][k] * b[k];
    b[i] /= L[i][i];
  }
  for (int i = m - 1; i >= 0; --i) {
    for (int k = i + 1; k < m; ++k) b[i] -= L[k][i] * b[k];
    b[i] /= L[i][i];
  }
}

// ---- one window ------------------------------------------------------------------
// What the caller asks for and where the search may go.
struct WindowTask {
  double theta0;                 // the grid's location (a data point)
  double p1, p1_lo, p1_hi;       // the grid's left (or common) shape and its grid neighbours
  double p2, p2_lo, p2_hi;       // right shape (= p1 and its box with one shape)
  double p_min, p_max;           // the grid's range
  bool two_shapes;
  bool refine;                   // search for the continuous optimum
  bool inform;                   // observed information, standard errors, theta interval
};
// The result, in the data's units. se: standard errors in the order of the
// `stderr` record's columns: (theta, p, s_l, s_r), or (theta, p1, p2, s_l, s_r)
// with two shapes; NaN where not defined. smooth: theta's row of the
// information exists (p > 1 on both sides); otherwise se[0] is NaN. [ci_lo, ci_hi]: theta's 95% profile-likelihood
// interval.
struct WindowEstimate {
  double theta, p1, p2, s_l, s_r, loglik;
  double se[kParams];
  double ci_lo, ci_hi;
  int smooth;
  int iterations;  // profile evaluations (passes over the window) of the searches
};

// The 95% point of chi-square with one degree of freedom (1.959963984540054^2).
inline constexpr double kChi2One95 = 3.841458820694124;
inline constexpr double kZ95 = 1.959963984540054;

namespace detail {

struct State {
  double theta, p1, p2, s_l, s_r, ll;
  WindowSums sums;
};

// The profile at (t, p1, p2): sums, optimal scales, log-likelihood.
NUMPIPE_HD_OUTLINE State profile_state(const double* x, std::int64_t n, double scale, double t, double p1, double p2,
                                      bool all) {
  State st;
  st.theta = t;
  st.p1 = p1;
  st.p2 = p2;
  st.sums = window_sums(x, n, scale, t, p1, p2, all);
  const Fit2 f = profile2(st.sums.l.A0, st.sums.r.A0, shape_const(p1), shape_const(p2), static_cast<double>(n));
  st.ll = f.loglik;
  st.s_l = f.s_l;
  st.s_r = f.s_r;
  return st;
}

// The free coordinates of a step: theta (when smooth), p (tied) or p1 and p2.
struct Free {
  int idx[3];
  int m;
};

// Profile gradient and Hessian in the free coordinates: the full derivatives at
// the optimal scales (the scales' gradient is 0 there) with the scales
// eliminated: Hff - Hfs Hss^-1 Hsf. One shape: p1 and p2 tied (summed).
NUMPIPE_HD_INLINE void profile_derivatives(const State& st, double n, bool two, const Free& fr, double* gf,
                                           double (*Hf)[kParams]) {
  double g[kParams], H[kParams][kParams];
  loglik_derivatives(st.sums, st.p1, st.p2, st.s_l, st.s_r, n, g, H);
  // tie p2 to p1 with one shape
  if (!two) {
    g[kP1] += g[kP2];
    for (int j = 0; j < kParams; ++j) H[kP1][j] += H[kP2][j];
    for (int i = 0; i < kParams; ++i) H[i][kP1] += H[i][kP2];
  }
  // Hss^-1 (2x2)
  const double a = H[kSl][kSl], b = H[kSl][kSr], d = H[kSr][kSr], det = a * d - b * b;
  for (int i = 0; i < fr.m; ++i) {
    const int fi = fr.idx[i];
    gf[i] = g[fi];
    for (int j = 0; j < fr.m; ++j) {
      const int fj = fr.idx[j];
      const double ui = H[fi][kSl], vi = H[fi][kSr], uj = H[kSl][fj], vj = H[kSr][fj];
      // [ui vi] Hss^-1 [uj vj]^T with Hss^-1 = [d -b; -b a] / det
      const double corr = (ui * (d * uj - b * vj) + vi * (-b * uj + a * vj)) / det;
      Hf[i][j] = H[fi][fj] - corr;
    }
  }
}

// The profile's slope and curvature in theta alone (scales eliminated, shapes
// held): profile_derivatives with theta free, computing only the entries of
// loglik_derivatives it uses (theta's and the scales'), by the same operations
// in the same order, so the same bits; it needs no digamma or trigamma (the
// shapes' derivatives), which made up most of a theta step's work beside its
// pass over the window.
NUMPIPE_HD_INLINE void theta_slope(const State& st, double n, double* G, double* H) {
  const double sl = st.s_l, sr = st.s_r;
  const double gam0 = exp(lgamma(1.0 + 1.0 / st.p1)), gam1 = exp(lgamma(1.0 + 1.0 / st.p2));
  const double D = sl * gam0 + sr * gam1;
  // -n log D (loglik_derivatives' first loop; theta's entries of D's derivatives are 0)
  double gt = 0, Htt = 0, Hts[2] = {0, 0}, Hll = 0, Hlr = 0, Hrr = 0;
  gt -= n * 0.0 / D;
  Htt -= n * (0.0 / D - 0.0 * 0.0 / (D * D));
  Hts[0] -= n * (0.0 / D - 0.0 * gam0 / (D * D));
  Hts[1] -= n * (0.0 / D - 0.0 * gam1 / (D * D));
  Hll -= n * (0.0 / D - gam0 * gam0 / (D * D));
  Hlr -= n * (0.0 / D - gam0 * gam1 / (D * D));
  Hrr -= n * (0.0 / D - gam1 * gam1 / (D * D));
  // the sums' terms
  for (int side = 0; side < 2; ++side) {
    const SideSums& q = side == 0 ? st.sums.l : st.sums.r;
    const double p = side == 0 ? st.p1 : st.p2, sc = side == 0 ? sl : sr, sg = side == 0 ? 1.0 : -1.0;
    const double ls = log(sc), f = exp(-p * ls);
    const double Tt = sg * p * f * q.B0;
    const double Ttt = p * (p - 1.0) * f * q.C0;
    const double Tts = -sg * p * p * f * q.B0 / sc;
    const double Tss = p * (p + 1.0) * f * q.A0 / (sc * sc);
    gt -= Tt;
    Htt -= Ttt;
    Hts[side] -= Tts;
    (side == 0 ? Hll : Hrr) -= Tss;
  }
  // profile_derivatives' elimination of the scales
  const double a = Hll, b = Hlr, d = Hrr, det = a * d - b * b;
  const double ui = Hts[0], vi = Hts[1], uj = Hts[0], vj = Hts[1];
  const double corr = (ui * (d * uj - b * vj) + vi * (-b * uj + a * vj)) / det;
  *G = gt;
  *H = Htt - corr;
}

// The root of the profile's slope in the bracket [a, b] (G(a) dir > 0 >= G(b) dir,
// with their curvatures H): shrunk by Newton steps from its end with the smaller
// slope where they land inside and at least halve it, else by halving; towards
// an end on a data point by halving the logarithm of the distance from it (the
// root may be within a few ulps of the point). It stops when the bracket is 4
// ulps of theta plus tol_abs wide: where the slope's rounding cannot move the
// root further, so the result is the same on any machine to that width.
NUMPIPE_HD_OUTLINE State bracket_root(const double* x, std::int64_t n, double scale, State a, double Ga, double Ha,
                                     State b, double Gb, double Hb, double dir, double tol_abs, int* passes) {
  const double nd = static_cast<double>(n);
  for (int k = 0; k < 200; ++k) {
    const double tl = fmin(a.theta, b.theta), th = fmax(a.theta, b.theta), w = th - tl;
    if (w <= 0x1p-50 * (fabs(a.theta) + fabs(b.theta)) + tol_abs) break;
    const bool from_a = fabs(Ga) <= fabs(Gb);
    const double te = from_a ? a.theta : b.theta, Ge = from_a ? Ga : Gb, He = from_a ? Ha : Hb;
    double c = He < 0 && finite(He) ? te - Ge / He : NAN;
    if (!(c > tl && c < th && fabs(c - te) <= 0.5 * w)) {
      const double inner = dir > 0 ? a.sums.above : a.sums.below;  // a data point inside the bracket
      if (inner > tl && inner < th) {
        c = inner;
      } else if (a.sums.zero > 0 || b.sums.zero > 0) {
        const bool at_a = a.sums.zero > 0;
        const double y = at_a ? a.theta : b.theta, toward = at_a ? dir : -dir;
        const double dmin = fmax(0x1p-52 * fabs(y), tol_abs);
        c = y + toward * sqrt(dmin * w);
        if (!(c > tl && c < th)) c = 0.5 * (a.theta + b.theta);
      } else {
        c = 0.5 * (a.theta + b.theta);
      }
    }
    const State sc = profile_state(x, n, scale, c, a.p1, a.p2, true);
    ++*passes;
    double Gc = 0, Hc = 0;
    theta_slope(sc, nd, &Gc, &Hc);
    if (!finite(sc.ll) || !finite(Gc)) break;
    if (Gc == 0) return sc;
    if (Gc * dir > 0) {
      a = sc;
      Ga = Gc;
      Ha = Hc;
    } else {
      b = sc;
      Gb = Gc;
      Hb = Hc;
    }
  }
  return fabs(Ga) <= fabs(Gb) ? a : b;
}

// Two maxima of the profile whose log-likelihoods differ by less than
// kTieMargin (|loglik| + n) count as tied, and the smaller theta is taken: the
// backends' log-likelihoods of one point differ by about 1e-13 of that, so an
// exact tie (symmetric or repeated data) is decided the same way on both.
inline constexpr double kTieMargin = 1e-10;

// c replaces r as theta's maximum: higher by more than the margin, or tied and
// at a smaller theta.
NUMPIPE_HD_INLINE bool better_maximum(const State& c, const State& r, double n) {
  if (!finite(c.ll)) return false;
  const double margin = kTieMargin * (fabs(r.ll) + n);
  if (c.ll > r.ll + margin) return true;
  return !(c.ll < r.ll - margin) && c.theta < r.theta;
}

// The maximum next to the data point y at one end e of a bracket whose other
// maximum r is known. toward: the direction from e into the bracket; Ge, He: the
// slope and curvature at e, where y's own term has slope 0. Leaving y by u, the
// m points at y, m |theta - y|^q / s^q (q, s: the shape and scale of y's side),
// take m q s^-q u^(q-1) off the slope g = Ge toward, so for 1 <= q < 2, which
// bends within u* = (g s^q / (m q))^(1/(q-1)) of y, the profile has a maximum there, about
// g u* (1 - 1/q) above its value at y (at y itself when q = 1 and g < q s^-q).
// The search: a probe at sqrt(u* |r - y|) from y, past that maximum and before
// r's, then bracket_root between y and the probe. False when there is no such
// maximum apart from r, or it cannot be higher than r (its value at y plus twice
// that gain, below r's less the margin): the two are never compared then.
NUMPIPE_HD_OUTLINE bool end_maximum(const double* x, std::int64_t n, double scale, const State& e, double Ge,
                                   double He, double toward, double dir, const State& r, double tol_abs, int* passes,
                                   State* out) {
  const double nd = static_cast<double>(n);
  const bool left = toward > 0;  // y lies left of the thetas inside the bracket
  const double q = left ? e.p1 : e.p2, s = left ? e.s_l : e.s_r, g = Ge * toward;
  if (!(e.sums.zero > 0) || !(q >= 1 && q < 2) || !(s > 0) || !(g > 0) || !finite(e.ll)) return false;
  const double lr = log(g) + q * log(s) - log(q * static_cast<double>(e.sums.zero));  // log u*^(q-1), m points at y
  double u;
  if (q == 1) {
    if (!(lr < 0)) return false;
    u = 0;
  } else {
    u = exp(lr / (q - 1));
  }
  // r is that maximum (or there is none before r) when it lies within 4 u* of y
  // or within 4 widths of the search (bracket_root's) of y
  const double dist = fabs(r.theta - e.theta), width = 0x1p-50 * (fabs(e.theta) + fabs(r.theta)) + tol_abs;
  if (!(u < 0.25 * dist) || !(dist > 4.0 * width)) return false;
  const double margin = kTieMargin * (fabs(r.ll) + nd);
  if (e.ll + 2.0 * g * u + margin < r.ll) return false;
  if (u <= width) {  // at y to the search's width
    *out = e;
    return true;
  }
  const double tq = e.theta + toward * sqrt(u * dist);
  const State sq = profile_state(x, n, scale, tq, e.p1, e.p2, true);
  ++*passes;
  double Gq = 0, Hq = 0;
  theta_slope(sq, nd, &Gq, &Hq);
  if (!finite(sq.ll) || !(Gq * toward < 0)) return false;  // the profile still rises there: no maximum near y
  *out = toward == dir ? bracket_root(x, n, scale, e, Ge, He, sq, Gq, Hq, dir, tol_abs, passes)
                       : bracket_root(x, n, scale, sq, Gq, Hq, e, Ge, He, dir, tol_abs, passes);
  return fabs(out->theta - r.theta) > 4.0 * width;  // else r itself
}

// The profile's maximum over theta in [lo, hi] at the state's shapes, from the
// state's theta: the root of its slope G, which is continuous for p > 1 but
// bends sharply at the data points (the point's term varies as |x - theta|^(p-1):
// for p near 1 nearly a kink, where Newton steps hop across the point instead
// of converging, and the root can lie within rounding of the point). So the
// root is bracketed: steps in the rising direction (Newton's, at least doubling,
// never past the next data point) until the slope changes sign, then the bracket
// is shrunk (bracket_root). For 1 <= p < 2 such a bracket between two data points
// can hold two maxima, one next to each point (end_maximum), with a dip between
// them: which one the shrinking reaches depends on the rounding of the slopes
// it compares, so the two backends could end on different maxima. Both are
// found then and the higher taken (better_maximum: ties within the margin go
// to the smaller theta). passes: profile evaluations (one pass over the window
// each).
NUMPIPE_HD_OUTLINE State theta_solve(const double* x, std::int64_t n, double scale, State a, double lo, double hi,
                                    int* passes) {
  const double nd = static_cast<double>(n);
  double Ga = 0, Ha = 0;
  theta_slope(a, nd, &Ga, &Ha);
  if (!finite(a.ll) || !finite(Ga) || Ga == 0) return a;
  const double dir = Ga > 0 ? 1.0 : -1.0;
  const double tol_abs = 1e-15 * (a.s_l + a.s_r);
  auto newton_distance = [](double G, double H) { return H < 0 && finite(H) ? fabs(G / H) : 0.0; };
  // 1. the bracket [a, b]: G(a) dir > 0 >= G(b) dir
  double h = newton_distance(Ga, Ha);
  if (!(h > 0)) h = (a.s_l + a.s_r) / sqrt(nd);
  State b = a;
  double Gb = Ga, Hb = Ha;
  for (int k = 0;; ++k) {
    const double next = dir > 0 ? a.sums.above : a.sums.below;  // the nearest data point beyond a
    double t = a.theta + dir * h;
    if (finite(next) && (dir > 0 ? next < t : next > t)) t = next;
    t = fmin(hi, fmax(lo, t));
    if (t == a.theta) return a;  // on the bound, the slope pointing out
    b = profile_state(x, n, scale, t, a.p1, a.p2, true);
    ++*passes;
    theta_slope(b, nd, &Gb, &Hb);
    if (!finite(b.ll) || !finite(Gb)) return a;
    if (Gb * dir <= 0) break;
    if (k >= 60 || t == (dir > 0 ? hi : lo)) return b;
    a = b;
    Ga = Gb;
    Ha = Hb;
    h = fmax(newton_distance(Ga, Ha), 2.0 * h);
  }
  if (Gb == 0) return b;
  // 2. shrink it
  State r = bracket_root(x, n, scale, a, Ga, Ha, b, Gb, Hb, dir, tol_abs, passes);
  // 3. a maximum next to a data point at either end of the bracket
  State c;
  if (end_maximum(x, n, scale, a, Ga, Ha, dir, dir, r, tol_abs, passes, &c) && better_maximum(c, r, nd)) r = c;
  if (end_maximum(x, n, scale, b, Gb, Hb, -dir, dir, r, tol_abs, passes, &c) && better_maximum(c, r, nd)) r = c;
  return r;
}

// Bounded maximisation of the profile over the free coordinates (theta, and the
// shape or shapes). Theta, when free, is maximised by theta_solve at every
// shape tried (the profile over theta and the scales is smooth in the shapes,
// where the joint one bends at every data point); the shapes take Newton steps
// on it (Cholesky of minus its Hessian, theta eliminated by its Schur
// complement; where that fails, per-coordinate steps g_i / |H_ii|), projected
// into the box, halved until the log-likelihood does not fall. A shape on a
// bound whose gradient points out of the box is held there and the step solved
// for the others (projected Newton), so the convergence stays quadratic at a
// bound too.
//
// Where it stops must not depend on rounding (the CPU's and CUDA's exp, log
// and pow differ in the last bit, and CUDA contracts a*b + c). A step that
// gains less than the log-likelihood's own rounding, kLoglikNoise (|ll| + n),
// cannot be judged by comparing values: stopping at the first such comparison
// left the optimum wherever the rounding happened to say no, about
// sqrt(noise / curvature), 1e-8 of the scale, from the maximum. Instead, a
// Newton step whose first-order gain g.step is below the noise is accepted
// unless the log-likelihood falls by more than the noise; at that distance
// Newton converges quadratically (1e-7 -> 1e-13 -> the rounding of the
// gradient), and after kPolishSteps such steps the search stops: at the root
// of the gradient to its rounding, the same to about 1e-14 of the scale with
// any math library (tests/unit/test_mle_rounding.cpp). Other stops: no
// coordinate moves, a step is refused after 40 halvings, or 100 steps.
// passes: profile evaluations.
inline constexpr double kLoglikNoise = 1e-13;
inline constexpr int kPolishSteps = 2;

NUMPIPE_HD_OUTLINE State newton_maximise(const double* x, std::int64_t n, double scale, State st, bool two, Free fr,
                                        const double* lo, const double* hi, int* passes) {
  const double nd = static_cast<double>(n);
  // theta (inner) and the shapes (this loop)
  bool free_theta = false;
  double tlo = 0, thi = 0, slo[3], shi[3];
  Free all, sh;
  all.m = 0;
  sh.m = 0;
  for (int i = 0; i < fr.m; ++i)
    if (fr.idx[i] == kTheta) {
      free_theta = true;
      tlo = lo[i];
      thi = hi[i];
    }
  if (free_theta) all.idx[all.m++] = kTheta;
  for (int i = 0; i < fr.m; ++i)
    if (fr.idx[i] != kTheta) {
      slo[sh.m] = lo[i];
      shi[sh.m] = hi[i];
      sh.idx[sh.m++] = fr.idx[i];
      all.idx[all.m++] = fr.idx[i];
    }
  const int o = free_theta ? 1 : 0;  // the shapes' offset in `all`
  if (free_theta) st = theta_solve(x, n, scale, st, tlo, thi, passes);
  int polish = 0;
  for (int it = 0; it < 100 && sh.m > 0; ++it) {
    if (!finite(st.ll)) break;
    double gf[3] = {}, Hf[kParams][kParams] = {};
    profile_derivatives(st, nd, two, all, gf, Hf);
    // theta eliminated: it follows the shapes, d theta = -H_tt^-1 H_ts d shape;
    // not at a data point with p < 2 (the point's curvature is infinite: theta
    // stays on it)
    double g[3], Hs[3][3];
    const bool pinned = st.sums.zero > 0 && (st.p1 < 2 || st.p2 < 2);
    const double htt = Hf[0][0];
    const bool eliminate = free_theta && htt < 0 && finite(htt) && !pinned;
    for (int i = 0; i < sh.m; ++i) {
      g[i] = gf[i + o];
      for (int j = 0; j < sh.m; ++j) Hs[i][j] = Hf[i + o][j + o] - (eliminate ? Hf[i + o][0] * Hf[0][j + o] / htt : 0.0);
    }
    bool all_finite = true;
    for (int i = 0; i < sh.m; ++i) all_finite = all_finite && finite(g[i]);
    if (!all_finite) break;
    double cur[3];
    for (int i = 0; i < sh.m; ++i) cur[i] = sh.idx[i] == kP1 ? st.p1 : st.p2;
    // the shapes that may move: not on a bound with the gradient pushing out
    int act[3], m = 0;
    for (int i = 0; i < sh.m; ++i)
      if (!((cur[i] <= slo[i] && g[i] < 0) || (cur[i] >= shi[i] && g[i] > 0))) act[m++] = i;
    if (m == 0) break;  // a corner of the box is the maximum
    double L[kParams][kParams] = {}, sub[3] = {0, 0, 0}, step[3] = {0, 0, 0};
    for (int a = 0; a < m; ++a) {
      sub[a] = g[act[a]];
      for (int b = 0; b < m; ++b) L[a][b] = -Hs[act[a]][act[b]];
    }
    const bool newton = cholesky(L, m);
    if (newton) {
      cholesky_solve(L, m, sub);
      for (int a = 0; a < m; ++a) step[act[a]] = sub[a];
    } else {
      for (int a = 0; a < m; ++a) {
        const int i = act[a];
        const double h = fabs(Hs[i][i]);
        step[i] = h > 0 && finite(h) ? g[i] / h : (g[i] > 0 ? 0.25 : -0.25) * (shi[i] - slo[i]);
      }
    }
    const double noise = kLoglikNoise * (fabs(st.ll) + nd);
    bool accepted = false, moved = false, fine = false;
    for (int half = 0; half < 40 && !accepted; ++half) {
      double nx[3], gain = 0;
      moved = false;
      for (int i = 0; i < sh.m; ++i) {
        nx[i] = fmin(shi[i], fmax(slo[i], cur[i] + step[i]));
        gain += g[i] * (nx[i] - cur[i]);
        // the fallback steps have no quadratic convergence to finish them:
        // they stop at 1e-12 of the shape
        if (newton ? nx[i] != cur[i] : fabs(nx[i] - cur[i]) > 1e-12 * cur[i]) moved = true;
      }
      if (!moved) break;
      fine = newton && gain <= noise;
      double q1 = st.p1, q2 = st.p2;
      for (int i = 0; i < sh.m; ++i) {
        if (sh.idx[i] == kP1) q1 = nx[i];
        else q2 = nx[i];
      }
      if (!two) q2 = q1;
      State trial = profile_state(x, n, scale, st.theta, q1, q2, true);
      ++*passes;
      if (free_theta) trial = theta_solve(x, n, scale, trial, tlo, thi, passes);
      if (trial.ll >= st.ll || (fine && trial.ll >= st.ll - noise)) {
        st = trial;
        accepted = true;
      } else {
        for (int i = 0; i < sh.m; ++i) step[i] *= 0.5;
      }
    }
    if (!accepted || !moved) break;
    if (fine && ++polish >= kPolishSteps) break;
  }
  return st;
}

// The root of f in (a, b) with f(a) and f(b) of opposite signs, by false
// position with the Illinois modification (Dowell and Jarratt 1971).
template <class F>
NUMPIPE_HD_INLINE double illinois(F f, double a, double fa, double b, double fb, double tol) {
  int side = 0;
  double c = a;
  for (int it = 0; it < 100; ++it) {
    c = (a * fb - b * fa) / (fb - fa);
    if (!(c > fmin(a, b) && c < fmax(a, b))) c = 0.5 * (a + b);
    const double fc = f(c);
    if (fc == 0) return c;
    if ((fc > 0) == (fb > 0)) {
      b = c;
      fb = fc;
      if (side == -1) fa *= 0.5;
      side = -1;
    } else {
      a = c;
      fa = fc;
      if (side == 1) fb *= 0.5;
      side = 1;
    }
    if (fabs(b - a) <= tol) break;
  }
  return c;
}

// One end of the profile-likelihood interval for theta at fixed shapes: from
// theta-hat outward (dir +1 or -1) over the data points while the profile stays
// at or above `level`, then the crossing between the last such point and the
// next (between data points the profile is a smooth function of theta; for
// p <= 1 it is lowest midway, so the first crossing is the end). Past the last
// point the distance doubles until the profile falls below the level.
// The profile at theta = t: the scales maximised, the shapes held at the
// estimate's, or (shapes != nullptr, two shapes) maximised too in [lo, hi].
NUMPIPE_HD_OUTLINE State profile_at(const double* x, std::int64_t n, double scale, const State& best, double t,
                                   const Free* shapes, const double* lo, const double* hi) {
  if (!shapes) return profile_state(x, n, scale, t, best.p1, best.p2, false);
  int iterations = 0;
  return newton_maximise(x, n, scale, profile_state(x, n, scale, t, best.p1, best.p2, true), true, *shapes, lo, hi,
                         &iterations);
}

NUMPIPE_HD_OUTLINE double profile_end(const double* x, std::int64_t n, double scale, const State& best, double level,
                                     int dir, double span, const Free* shapes, const double* lo, const double* hi) {
  auto prof = [&](double t) { return profile_at(x, n, scale, best, t, shapes, lo, hi); };
  double t = best.theta, ft = best.ll;
  double next = dir > 0 ? best.sums.above : best.sums.below;
  for (std::int64_t k = 0; k <= n; ++k) {
    double b;
    State sb;
    if (finite(next)) {
      b = next;
      sb = prof(b);
    } else {
      double h = fmax(fabs(t - best.theta), span);
      b = t + dir * h;
      sb = prof(b);
      for (int i = 0; i < 200 && sb.ll >= level; ++i) {
        t = b;
        ft = sb.ll;
        h *= 2;
        b = t + dir * h;
        sb = prof(b);
      }
    }
    if (sb.ll >= level && finite(next)) {
      t = b;
      ft = sb.ll;
      next = dir > 0 ? sb.sums.above : sb.sums.below;
      continue;
    }
    if (!(sb.ll < level)) return b;  // no crossing found (NaN): the last point reached
    return illinois([&](double c) { return prof(c).ll - level; }, t, ft - level, b, sb.ll - level,
                    1e-13 * (fabs(t) + fabs(b)) + 1e-15 * span);
  }
  return t;
}

// The same where the profile is smooth in theta (p > 1): steps of h, 2h, 4h ...
// from theta-hat until the profile falls below the level, then the crossing.
NUMPIPE_HD_OUTLINE double profile_step_out(const double* x, std::int64_t n, double scale, const State& best,
                                          double level, int dir, double h, const Free* shapes, const double* lo,
                                          const double* hi) {
  auto prof = [&](double t) { return profile_at(x, n, scale, best, t, shapes, lo, hi).ll; };
  double t = best.theta, ft = best.ll, b = t + dir * h, fb = prof(b);
  for (int i = 0; i < 200 && fb >= level; ++i) {
    t = b;
    ft = fb;
    h *= 2;
    b = t + dir * h;
    fb = prof(b);
  }
  if (!(fb < level)) return b;
  return illinois([&](double c) { return prof(c) - level; }, t, ft - level, b, fb - level,
                  1e-13 * (fabs(t) + fabs(b)) + 1e-15 * h);
}

// The refine from the state st (its theta a data point or not): with p > 1 on
// both sides theta moves to the nearest maximum of the smooth profile while the
// shapes move within `box` (p1_lo, p1_hi, p2_lo, p2_hi; kept >= 1 in a smooth
// pass); with p <= 1 theta stays at its data point while the shapes move, and
// where they end above 1 a second, smooth pass frees theta. Both by
// newton_maximise on the profile (scales closed-form).
NUMPIPE_HD_OUTLINE State refine_from(const double* x, std::int64_t n, double scale, State st, const WindowTask& task,
                                    const double* box, double tmin, double tmax, int* passes) {
  const bool two = task.two_shapes;
  const bool smooth_start = st.p1 > 1 && st.p2 > 1;
  for (int pass = 0; pass < 2 && finite(st.ll); ++pass) {
    const bool smooth_pass = pass == 0 ? smooth_start : (!smooth_start && st.p1 > 1 && st.p2 > 1);
    if (pass == 1 && !smooth_pass) break;
    Free fr;
    fr.m = 0;
    double lo[3], hi[3];
    if (smooth_pass) {
      fr.idx[fr.m] = kTheta;
      lo[fr.m] = tmin;
      hi[fr.m] = tmax;
      ++fr.m;
    }
    const double p1lo = smooth_pass ? fmax(box[0], 1.0) : box[0];
    const double p2lo = smooth_pass ? fmax(box[2], 1.0) : box[2];
    if (box[1] > p1lo) {
      fr.idx[fr.m] = kP1;
      lo[fr.m] = p1lo;
      hi[fr.m] = box[1];
      ++fr.m;
    }
    if (two && box[3] > p2lo) {
      fr.idx[fr.m] = kP2;
      lo[fr.m] = p2lo;
      hi[fr.m] = box[3];
      ++fr.m;
    }
    st = newton_maximise(x, n, scale, st, two, fr, lo, hi, passes);
  }
  return st;
}

}  // namespace detail

// The refined optimum, the observed information and the interval for theta of
// one window x[0..n). The window is scaled by a power of two (exact) so that
// the largest distance from theta0 is near 1: d^p neither overflows nor
// underflows where it matters; results are scaled back.
//
// refine: with p > 1 (both shapes) the profile is smooth in theta between data
// points: theta starts halfway to the neighbouring data point on the side the
// profile rises and moves to the nearest maximum (within the window's range: as
// the shape moves off the grid, the best theta can pass the data points next
// to theta0); the shapes move between their grid neighbours (kept >= 1 here). With p <= 1 the
// maximum over theta is at a data point (spec): theta stays at theta0 and only
// the shapes move; where they end above 1, the smooth search follows. Both by
// newton_maximise on the profile (scales closed-form).
//
// inform: the observed information -H at the estimate, H the Hessian of the full
// log-likelihood in (theta, p, s_l, s_r) (two shapes: (theta, p1, p2, s_l, s_r)),
// except theta's row and column, which are their expectations under the
// fitted distribution (expect_theta_sums: the observed ones sum powers of
// |x - theta| dominated by the point nearest theta-hat); inverted by
// Cholesky; standard errors are the square roots of its diagonal.
// Where theta's row does not exist (p <= 1 on either side: the maximum over
// theta lies at a data point, and the expected information is infinite),
// theta's standard error is NaN and the others come from the information of the
// remaining parameters at the estimated theta (theta held fixed).
// [ci_lo, ci_hi] is the profile-likelihood interval
// {theta : 2 (loglik-hat - profile(theta)) <= 3.84}, the scales maximised and
// the shape held at its estimate (two shapes: both maximised in the grid's
// range), in every case (docs/mle.md compares the two intervals' coverage).
NUMPIPE_HD_INLINE WindowEstimate estimate_window(const double* x, std::int64_t n, const WindowTask& task) {
  const double nd = static_cast<double>(n);
  const bool two = task.two_shapes;
  WindowEstimate out;
  for (int i = 0; i < kParams; ++i) out.se[i] = NAN;
  out.ci_lo = out.ci_hi = NAN;
  out.smooth = 0;
  out.iterations = 0;
  // scale: a power of two near the largest distance from theta0 (maxima and
  // minima are exact in any order: the CUDA kernel's lanes split the points)
  double span = 0, xmin = INFINITY, xmax = -INFINITY;
  int lane = 0, lanes = 1;
#ifdef __CUDA_ARCH__
  lanes = g_estimate_lanes;
  lane = static_cast<int>(threadIdx.x) & (lanes - 1);
#endif
  for (std::int64_t k = lane; k < n; k += lanes) {
    span = fmax(span, fabs(0.5 * x[k] - 0.5 * task.theta0));
    xmin = fmin(xmin, x[k]);
    xmax = fmax(xmax, x[k]);
  }
#ifdef __CUDA_ARCH__
  if (lanes > 1) {
    const unsigned group = estimate_group(lanes);
    for (int m = lanes >> 1; m > 0; m >>= 1) {
      span = fmax(span, __shfl_xor_sync(group, span, m));
      xmin = fmin(xmin, __shfl_xor_sync(group, xmin, m));
      xmax = fmax(xmax, __shfl_xor_sync(group, xmax, m));
    }
  }
#endif
  int e2 = 0;
  if (span > 0 && finite(span)) frexp(span, &e2);
  e2 = e2 + 1 > 1000 ? 1000 : (e2 + 1 < -1000 ? -1000 : e2 + 1);
  const double scale = ldexp(1.0, -e2), unscale = ldexp(1.0, e2);
  const double t0 = task.theta0 * scale;
  detail::State st = detail::profile_state(x, n, scale, t0, task.p1, task.p2, true);
  if (task.refine && finite(st.ll)) {
    const double box[4] = {task.p1_lo, task.p1_hi, task.p2_lo, task.p2_hi};
    st = detail::refine_from(x, n, scale, st, task, box, xmin * scale, xmax * scale, &out.iterations);
    // The higher maximum always: the refine climbs to the maximum next to where
    // it starts, but as the shapes move off the grid another location can win:
    // with p <= 1 another data point (the maximum over theta sits at a data
    // point), with p > 1 the maximum next to the other data point that bounds
    // theta's interval (two maxima can share an interval, with a dip between).
    // So the refine starts again from the data points just below and above the
    // estimate, and, where neither gains, from the best data point of the window
    // at the refined shapes when that beats the estimate (one pass over the
    // points each, O(n^2)); the highest result is kept, until none gains.
    for (int round = 0; round < 64; ++round) {
      bool gained = false;
      const detail::State from = st;
      auto try_from = [&](double t) {
        detail::State c = detail::profile_state(x, n, scale, t, from.p1, from.p2, true);
        ++out.iterations;
        c = detail::refine_from(x, n, scale, c, task, box, xmin * scale, xmax * scale, &out.iterations);
        if (c.ll > st.ll && detail::better_maximum(c, st, nd)) {
          st = c;
          gained = true;
        }
      };
      if (finite(from.sums.below)) try_from(from.sums.below);
      if (finite(from.sums.above)) try_from(from.sums.above);
      if (gained) continue;
      double best_t = from.theta, best_ll = from.ll;
      for (std::int64_t k = 0; k < n; ++k) {
        const double t = x[k] * scale;
        if (t == from.theta || t == from.sums.below || t == from.sums.above) continue;
        const double ll = detail::profile_state(x, n, scale, t, from.p1, from.p2, false).ll;
        if (ll > best_ll) {
          best_ll = ll;
          best_t = t;
        }
      }
      out.iterations += static_cast<int>(n);
      if (best_t != from.theta) try_from(best_t);
      if (!gained) break;
    }
    // a shape that ends on an edge of its box (the grid neighbours of the grid's
    // shape) inside the grid's range: the continuous optimum may lie beyond it,
    // so the search goes on over the grid's whole range from there
    const double edge = 1e-12;
    const bool on_edge = (st.p1 <= box[0] * (1 + edge) && box[0] > task.p_min) || (st.p1 >= box[1] * (1 - edge) && box[1] < task.p_max) ||
                         (two && ((st.p2 <= box[2] * (1 + edge) && box[2] > task.p_min) ||
                                  (st.p2 >= box[3] * (1 - edge) && box[3] < task.p_max)));
    if (on_edge) {
      const double wide[4] = {task.p_min, task.p_max, task.p_min, task.p_max};
      const detail::State c = detail::refine_from(x, n, scale, st, task, wide, xmin * scale, xmax * scale, &out.iterations);
      if (c.ll > st.ll) st = c;
    }
  }
  out.theta = st.theta * unscale;
  out.p1 = st.p1;
  out.p2 = st.p2;
  out.s_l = st.s_l * unscale;
  out.s_r = st.s_r * unscale;
  out.loglik = st.ll - nd * static_cast<double>(e2) * 0.69314718055994531;
  if (!task.inform || !finite(st.ll)) return out;

  // the information in the reported parameters (theta's rows expected, below)
  WindowSums info_sums = st.sums;
  if (st.p1 > 1 && st.p2 > 1) expect_theta_sums(info_sums, st.p1, st.p2, st.s_l, st.s_r, nd);
  double g[kParams], H[kParams][kParams];
  loglik_derivatives(info_sums, st.p1, st.p2, st.s_l, st.s_r, nd, g, H);
  // reported order: theta, p (tied) | p1, p2, s_l, s_r
  int cols[kParams];
  int K = 0;
  cols[K++] = kTheta;
  cols[K++] = kP1;
  if (two) cols[K++] = kP2;
  cols[K++] = kSl;
  cols[K++] = kSr;
  if (!two) {
    for (int j = 0; j < kParams; ++j) H[kP1][j] += H[kP2][j];
    for (int i = 0; i < kParams; ++i) H[i][kP1] += H[i][kP2];
  }
  // theta's row exists for p > 1 on both sides (the log-likelihood is then
  // continuously differentiable in theta, and theta's expected information is
  // finite); it is the expected one (expect_theta_sums), the rest observed:
  // the observed theta-theta entry sums |x - theta|^(p-2), dominated for p < 2
  // by the point nearest theta-hat, so theta +- 1.96 se from it covered 90% at
  // p = 1.5, and it changed by a factor of 4 when theta-hat moved by 1e-8
  // towards a data point, where the expectation depends on the estimates
  // smoothly.
  const bool smooth = st.p1 > 1 && st.p2 > 1;
  out.smooth = smooth ? 1 : 0;
  const int first = smooth ? 0 : 1;  // drop theta where its row does not exist
  const int m = K - first;
  double L[kParams][kParams] = {};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) L[i][j] = -H[cols[i + first]][cols[j + first]];
  if (cholesky(L, m)) {
    // diag of (L L^T)^-1 = column sums of squares of L^-1
    for (int c = 0; c < m; ++c) {
      double e[kParams];
      for (int i = 0; i < m; ++i) e[i] = i == c ? 1.0 : 0.0;
      cholesky_solve(L, m, e);
      const double var = e[c];
      const int pi = cols[c + first];
      const double unit = (pi == kTheta || pi == kSl || pi == kSr) ? unscale : 1.0;
      out.se[c + first] = var > 0 ? sqrt(var) * unit : NAN;
    }
  }
  // theta's profile-likelihood interval
  const double level = st.ll - 0.5 * kChi2One95;
  const double sp = st.s_l + st.s_r > 0 ? st.s_l + st.s_r : 1.0;
  detail::State best = detail::profile_state(x, n, scale, st.theta, st.p1, st.p2, false);
  best.ll = st.ll;
  // two shapes: theta moves with both shapes (they set the density's form on
  // each side of it), so they are maximised at each theta, over the grid's range;
  // one shape: p held at its estimate (measured coverage 94-96%, docs/mle.md)
  detail::Free shape_free;
  shape_free.idx[0] = kP1;
  shape_free.idx[1] = kP2;
  shape_free.m = 2;
  const double slo[2] = {task.p_min, task.p_min}, shi[2] = {task.p_max, task.p_max};
  const detail::Free* sfree = two && task.p_max > task.p_min ? &shape_free : nullptr;
  if (smooth) {
    // smooth in theta: step out from theta-hat (first step: the Wald half-width,
    // at least (s_l + s_r)/(2 sqrt(n))), doubling, to the first point below the
    // level, then the crossing in the last step
    const double se = out.se[0] / unscale;
    const double h0 = fmax(finite(se) ? kZ95 * se : 0.0, 0.5 * sp / sqrt(nd));
    out.ci_lo = detail::profile_step_out(x, n, scale, best, level, -1, h0, sfree, slo, shi) * unscale;
    out.ci_hi = detail::profile_step_out(x, n, scale, best, level, +1, h0, sfree, slo, shi) * unscale;
  } else {
    out.ci_lo = detail::profile_end(x, n, scale, best, level, -1, sp, sfree, slo, shi) * unscale;
    out.ci_hi = detail::profile_end(x, n, scale, best, level, +1, sp, sfree, slo, shi) * unscale;
  }
  return out;
}

}  // namespace numpipe::mle
