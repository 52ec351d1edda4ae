// mle, internal: the per-window arithmetic of inference.hpp, the same source on the
// host and the device: special functions, the two-shape profile, the sums over a
// window, the log-likelihood's derivatives, small dense linear algebra.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "../model.hpp"

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

}  // namespace numpipe::mle
