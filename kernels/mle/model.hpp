// mle-fit: the asymmetric exponential power distribution (AEPD) with a common
// shape p and separate left/right scales, fitted by grid maximum likelihood
// (../shared/spec/mle-fit.md). One source for the CPU and the CUDA backends.
//
//   f(x) = p / ((s_l + s_r) Gamma(1/p)) * exp(-((theta - x)/s_l)^p)   x <= theta
//                                         exp(-((x - theta)/s_r)^p)   x >  theta
// (Komunjer 2007; Zhu and Zinde-Walsh 2009, J. Econometrics 148, with p1 = p2.)
//
// For a window of n points and a candidate location theta:
//   X-(theta, p) = sum over x <= theta of (theta - x)^p   (equal points: term 0)
//   X+(theta, p) = sum over x >  theta of (x - theta)^p
// Maximising over s_l, s_r in closed form (set d loglik / d s = 0; spec):
//   A = X-^(1/(p+1)), B = X+^(1/(p+1)), S = A + B
//   s_l = A (p S / n)^(1/p), s_r = B (p S / n)^(1/p)
//   loglik = n [log p - lgamma(1/p) - 1/p - ((p+1)/p) log S - (1/p) log(p/n)]
// For a fixed p, loglik falls as S grows: the best theta minimises S.
#pragma once
#include <cmath>

#include "common/hd.hpp"

namespace numpipe::mle {

// Shapes are processed in groups of kGroup: a GPU thread keeps the sums of one
// group in registers, and for an evenly spaced grid the powers d^p of one group
// come from two exponentials: d^(p0 + i h) = d^p0 * (d^h)^i (a "ladder"),
// restarted every group so that rounding grows by at most kGroup ulps.
inline constexpr int kGroup = 8;

// Powers d^alpha[g0 .. g0+cnt) of one group, from L = log d (d > 0).
// uniform: alpha[g0 + i] = alpha[g0] + i*h.
// G: the group size (the CUDA rolling kernel may use smaller groups).
template <int G = kGroup>
NUMPIPE_HD_INLINE void group_powers(double L, const double* alpha, int g0, int cnt, bool uniform, double h,
                                    double* out) {
  if (uniform) {
    double t = exp(alpha[g0] * L);
    const double r = exp(h * L);
    for (int i = 0; i < G; ++i) {
      out[i] = i < cnt ? t : 0.0;
      t *= r;
    }
  } else {
    for (int i = 0; i < G; ++i) out[i] = i < cnt ? exp(alpha[g0 + i] * L) : 0.0;
  }
}

// X^(1/(p+1)) for X >= 0 (0 stays 0).
NUMPIPE_HD_INLINE double root_p1(double X, double inv_p1) { return X > 0 ? exp(log(X) * inv_p1) : 0.0; }

// S = X-^(1/(p+1)) + X+^(1/(p+1)): the quantity the best theta minimises.
NUMPIPE_HD_INLINE double scale_sum(double xm, double xp, double inv_p1) {
  return root_p1(xm, inv_p1) + root_p1(xp, inv_p1);
}

// The profile log-likelihood at the closed-form scales (spec formula).
// S = 0 (every point of the window equal) gives +inf: no finite maximum.
NUMPIPE_HD_INLINE double profile_loglik(double S, double p, double n) {
  return n * (log(p) - lgamma(1.0 / p) - 1.0 / p - ((p + 1.0) / p) * log(S) - (1.0 / p) * log(p / n));
}

struct Scales {
  double s_l, s_r;
};
NUMPIPE_HD_INLINE Scales closed_form_scales(double xm, double xp, double p, double n) {
  const double inv_p1 = 1.0 / (p + 1.0);
  const double A = root_p1(xm, inv_p1), B = root_p1(xp, inv_p1), S = A + B;
  const double f = pow(p * S / n, 1.0 / p);
  return {A * f, B * f};
}

// Full log-likelihood of one point (for checks and --refine's reference).
NUMPIPE_HD_INLINE double log_density(double x, double theta, double p, double s_l, double s_r) {
  const double z = x <= theta ? (theta - x) / s_l : (x - theta) / s_r;
  return log(p) - log(s_l + s_r) - lgamma(1.0 / p) - pow(z, p);
}

// Neumaier's compensated summation (Neumaier 1974): running sum s and
// correction c; the value is s + c. Used by the rolling updates, whose
// subtractions would otherwise lose digits over many windows.
struct Compensated {
  double s, c;
};
NUMPIPE_HD_INLINE void comp_add(double& s, double& c, double v) {
  const double t = s + v;
  if (fabs(s) >= fabs(v)) c += (s - t) + v;
  else c += (v - t) + s;
  s = t;
}

// The order of candidates: smaller S wins; equal S: smaller theta; equal theta:
// smaller index. A total order, so any reduction tree picks the same one.
NUMPIPE_HD_INLINE bool better_candidate(double S1, double th1, int j1, double S2, double th2, int j2) {
  if (S1 != S2) {
    if (S2 != S2) return S1 == S1;  // NaN (overflowed sums) never wins
    if (S1 != S1) return false;
    return S1 < S2;
  }
  if (th1 != th2) return th1 < th2;
  return j1 < j2;
}

// The best shape of one window: the largest loglik over the grid, given each
// shape's smallest S; equal loglik: the smaller shape index. NaN never wins.
NUMPIPE_HD_INLINE int pick_shape(const double* S, const double* alpha, int A, double n, double* loglik) {
  int best = -1;
  double bl = 0;
  for (int a = 0; a < A; ++a) {
    const double ll = profile_loglik(S[a], alpha[a], n);
    if (ll != ll) continue;
    if (best < 0 || ll > bl) {
      best = a;
      bl = ll;
    }
  }
  if (best < 0) {
    best = 0;
    bl = profile_loglik(S[0], alpha[0], n);
  }
  *loglik = bl;
  return best;
}

}  // namespace numpipe::mle
