// integrate: the collective spouse pension reserve (GF820) by three nested RK4
// integrations, as defined in spec/integrate.md (Actulus project, ITU 2013;
// J. W. Nielsen's note on "820"). The formulas live here once, in NUMPIPE_HD
// functions, so that the CPU backend (g++) and the CUDA backend (nvcc) compute
// the same model from the same source.
//
//   muF(a) = 0.0005 + 10^(5.728 - 10 + 0.038 a)   insured woman (Gompertz-Makeham)
//   muM(a) = 0.0005 + 10^(5.880 - 10 + 0.038 a)   spouse, a man
//   gp(tau) = P(tau) / (P(67.5) / 0.9),  P(t) = max((15 - t)(t - 120), 0)
//   h(eta, tau) = N(tau - eta; 0, 3^2) for 0 < eta < 120, else 0
//   k(tau) = g (tau < r), r + g - tau (r <= tau < r + g), 0 (tau >= r + g)
//   Inner(eta, k, t): V(120 - eta) = 0, dV/ds = (r(t + s) + muM(eta + s)) V - [s >= k]
//   Middle(tau, t):   V(120) = 0,       dV/deta = -gp(tau) h(eta, tau) Inner(eta, k(tau), t)
//   Outer:            V(120 - x) = 0,   dV/dt = r(t) V - muF(x + t) (Middle(x + t, t) - V)
//
// Every level steps backwards with classical RK4 (h = -1/steps). Where a span
// is not a whole number of steps a first partial step covers the remainder;
// step i then starts at b + (i - full) h (computed, not accumulated).
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"

namespace numpipe::integrate {

inline constexpr double kMaxAge = 120.0;   // everybody is dead at 120
inline constexpr int kYears = 121;         // reserve reported at t = 0 .. 120
inline constexpr double kMiddleLow = 1.0;  // the middle level integrates eta down to 1
inline constexpr double kLn10 = 2.302585092994045684;
inline constexpr double kDefaultRate = 0.05;
// Spouse age density: normal with standard deviation 3 (spec "h(eta, tau)").
inline constexpr double kSigma = 3.0;
inline constexpr double kInvSqrt2PiSigma = 0.13298076013381091;  // 1 / (sqrt(2 pi) * 3)
inline constexpr double kInvTwoSigma2 = 1.0 / 18.0;              // 1 / (2 * 3^2)
// gp: P(67.5) = 52.5^2 = 2756.25, so gp(tau) = P(tau) / (2756.25 / 0.9).
inline constexpr double kGpScale = 2756.25 / 0.9;

// 10^(c + 0.038 a) is evaluated as exp((c + 0.038 a) ln 10): the same value
// up to rounding (|y ln 10| ulps at most), and exp is cheaper than pow on GPUs.
NUMPIPE_HD_INLINE double mu_female(double age) { return 0.0005 + exp((5.728 - 10.0 + 0.038 * age) * kLn10); }
NUMPIPE_HD_INLINE double mu_male(double age) { return 0.0005 + exp((5.880 - 10.0 + 0.038 * age) * kLn10); }

NUMPIPE_HD_INLINE double marriage_parabola(double t) { return fmax((15.0 - t) * (t - 120.0), 0.0); }
NUMPIPE_HD_INLINE double married_probability(double tau) { return marriage_parabola(tau) / kGpScale; }

NUMPIPE_HD_INLINE double spouse_density(double eta, double tau) {
  if (eta <= 0.0 || eta >= kMaxAge) return 0.0;
  double d = tau - eta;
  return kInvSqrt2PiSigma * exp(-d * d * kInvTwoSigma2);
}

// Years from the insured's death (at age tau) until the spouse's pension starts.
NUMPIPE_HD_INLINE double pension_delay(double tau, double g, double r) {
  if (tau < r) return g;
  if (tau < r + g) return r + g - tau;
  return 0.0;
}

// ---- interest --------------------------------------------------------------------
// A constant rate (n == 0) or a yield curve: zero rates R_i at maturities T_i,
// linearly interpolated and flat outside [T_0, T_{n-1}]; the rate used is the
// forward rate f(T) = d/dT (T R(T)) = R(T) + T R'(T), on segment i
// [T_i, T_{i+1}) equal to alpha_i + beta_i T with beta_i = 2 slope_i,
// alpha_i = R_i - slope_i T_i. Knots hold T_0..T_{n-1}; alpha/beta hold n+1
// pieces: piece 0 below T_0 (flat R_0), piece n above T_{n-1} (flat R_{n-1}).
struct RateView {
  int n = 0;                       // knots; 0: constant rate
  double constant = kDefaultRate;  // used when n == 0
  const double* knots = nullptr;
  const double* alpha = nullptr;
  const double* beta = nullptr;
};

NUMPIPE_HD_INLINE double forward_rate(const RateView& rv, double t) {
  if (rv.n == 0) return rv.constant;
  int piece = 0;  // number of knots <= t
  while (piece < rv.n && rv.knots[piece] <= t) ++piece;
  return rv.alpha[piece] + rv.beta[piece] * t;
}

// ---- step grids ------------------------------------------------------------------
// One stretch integrated backwards from a down to b (a >= b) with `steps` steps
// per unit: an optional first partial step of size hp (a -> start), then `full`
// whole steps of size h = -1/steps, step i starting at b + (i - full) h.
struct Segment {
  double a = 0, b = 0, h = 0, hp = 0;
  int full = 0;
  bool partial = false;
  NUMPIPE_HD double start(int i) const { return b + static_cast<double>(i - full) * h; }
};

NUMPIPE_HD_INLINE Segment make_segment(double a, double b, int steps) {
  Segment s;
  s.a = a;
  s.b = b;
  s.h = -1.0 / static_cast<double>(steps);
  double n = (a - b) * static_cast<double>(steps);
  double f = floor(n);
  // A span that is whole up to rounding ((120 - 119.7) * 10 = 2.9999999999999996)
  // takes no partial step.
  if (f + 1.0 - n <= 1e-12 * (n + 1.0)) f += 1.0;
  s.full = static_cast<int>(f);
  double first = s.start(0);
  s.hp = first - a;
  s.partial = !(fabs(s.hp) <= 1e-12 * (fabs(a) + 1.0)) && s.hp < 0.0;
  return s;
}

// The stage points of a segment in integration order, l = 0 .. segment_points - 1:
// with a partial step a and a + hp/2 first; then start(i) and start(i) + h/2 for
// each whole step; last start(full) (= b). Step q uses points 2q, 2q+1, 2q+2. The
// expressions are those of inner_segment and of the planned grids, so the values
// are the same bits; the points strictly decrease along l.
NUMPIPE_HD_INLINE int segment_steps(const Segment& s) { return s.full + (s.partial ? 1 : 0); }
NUMPIPE_HD_INLINE int segment_points(const Segment& s) { return 2 * segment_steps(s) + 1; }
NUMPIPE_HD_INLINE double segment_point(const Segment& s, int l) {
  if (s.partial) {
    if (l == 0) return s.a;
    if (l == 1) return s.a + s.hp / 2;
    l -= 2;
  }
  double u = s.start(l / 2);
  return (l & 1) ? u + s.h / 2 : u;
}
NUMPIPE_HD_INLINE double segment_step_size(const Segment& s, int q) { return (s.partial && q == 0) ? s.hp : s.h; }
// The whole year (from now) at point l of an outer segment with `steps` steps per
// year, or -1: whole-step starts at whole years, b and a when whole.
NUMPIPE_HD_INLINE int segment_year(const Segment& s, int steps, int l) {
  if (s.partial) {
    if (l == 0) return s.a == floor(s.a) ? static_cast<int>(s.a) : -1;
    if (l == 1) return -1;
    l -= 2;
  }
  if (l & 1) return -1;
  int i = l / 2;
  if (s.b != floor(s.b) || (s.full - i) % steps != 0) return -1;
  return static_cast<int>(s.b) + (s.full - i) / steps;
}
// The number of stage points >= k (the first l with point < k): the faithful
// indicator [s >= k] is 1 exactly on points 0 .. count-1. An estimate from the
// uniform spacing, then exact comparisons with the points themselves.
NUMPIPE_HD_INLINE int segment_count_ge(const Segment& s, int steps, double k) {
  int L = segment_points(s);
  int off = s.partial ? 2 : 0;
  double est = 2.0 * (static_cast<double>(s.full) - (k - s.b) * static_cast<double>(steps));
  int n = est < -1.0 ? 0 : (est > static_cast<double>(L) ? L : off + static_cast<int>(floor(est)) + 1);
  if (n < 0) n = 0;
  if (n > L) n = L;
  while (n > 0 && !(segment_point(s, n - 1) >= k)) --n;
  while (n < L && segment_point(s, n) >= k) ++n;
  return n;
}

// The whole-step points of an inner segment (b = 0) are the same values for every
// eta: start(full - m) = 0 + (-m) h =: s_m, and the midpoint of the step below it
// s_m + h/2 =: mid_m (m >= 1). Only their number (full) and the first partial
// step differ between rows.
NUMPIPE_HD_INLINE double inner_grid_point(double h, int m) { return 0.0 + static_cast<double>(-m) * h; }
NUMPIPE_HD_INLINE double inner_grid_mid(double h, int m) { return inner_grid_point(h, m) + h / 2; }
// The smallest m >= 0 with s_m >= k and the smallest m >= 1 with mid_m >= k
// (k >= 0): an estimate, then exact comparisons.
NUMPIPE_HD_INLINE int inner_first_point_ge(double h, int steps, double k) {
  int m = static_cast<int>(ceil(k * static_cast<double>(steps)));
  if (m < 0) m = 0;
  while (m > 0 && inner_grid_point(h, m - 1) >= k) --m;
  while (!(inner_grid_point(h, m) >= k)) ++m;
  return m;
}
NUMPIPE_HD_INLINE int inner_first_mid_ge(double h, int steps, double k) {
  int m = static_cast<int>(ceil(k * static_cast<double>(steps) + 0.5));
  if (m < 1) m = 1;
  while (m > 1 && inner_grid_mid(h, m - 1) >= k) --m;
  while (!(inner_grid_mid(h, m) >= k)) ++m;
  return m;
}

// RK4's weights (1, 2, 2, 1) / 6, applied by one multiplication: fp64 division
// is a long instruction sequence on GPUs.
inline constexpr double kSixth = 1.0 / 6.0;

// ---- the inner level ---------------------------------------------------------------
// dV/ds = c(s) V - p(s), with c = r(t + s) + muM(eta + s), p = pension indicator.
NUMPIPE_HD_INLINE double inner_coefficient(const RateView& rv, double eta, double t, double s) {
  return forward_rate(rv, t + s) + mu_male(eta + s);
}

// One RK4 step of dV/ds = c V - p given c and p at the step's start, middle and end.
NUMPIPE_HD_INLINE double rk4_linear_step(double V, double h, double c0, double p0, double cm, double pm, double c1,
                                         double p1) {
  double k1 = h * (c0 * V - p0);
  double k2 = h * (cm * (V + k1 / 2) - pm);
  double k3 = h * (cm * (V + k2 / 2) - pm);
  double k4 = h * (c1 * (V + k3) - p1);
  return V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
}

// Integrates one inner segment from V at seg.a down to seg.b. pension < 0: the
// faithful indicator [s >= k] at every stage point; otherwise the constant 0 or 1
// (--align-breaks: the segment lies wholly on one side of s = k).
NUMPIPE_HD_INLINE double inner_segment(const RateView& rv, const Segment& seg, double V, double eta, double t,
                                       double k, int pension) {
  auto ind = [&](double s) { return pension < 0 ? (s >= k ? 1.0 : 0.0) : static_cast<double>(pension); };
  // The end stage of each step is evaluated at the start of the next one (the
  // same point up to one rounding) and carried over: two new coefficient
  // evaluations per step.
  double s0 = seg.start(0);
  double c0 = inner_coefficient(rv, eta, t, s0), p0 = ind(s0);
  if (seg.partial) {
    double sa = seg.a, sm = seg.a + seg.hp / 2;
    V = rk4_linear_step(V, seg.hp, inner_coefficient(rv, eta, t, sa), ind(sa), inner_coefficient(rv, eta, t, sm),
                        ind(sm), c0, p0);
  }
  for (int i = 0; i < seg.full; ++i) {
    double sm = s0 + seg.h / 2, s1 = seg.start(i + 1);
    double cm = inner_coefficient(rv, eta, t, sm), c1 = inner_coefficient(rv, eta, t, s1);
    double pm = ind(sm), p1 = ind(s1);
    V = rk4_linear_step(V, seg.h, c0, p0, cm, pm, c1, p1);
    s0 = s1;
    c0 = c1;
    p0 = p1;
  }
  return V;
}

// Inner(eta, k, t) with `steps` steps per year: the value at time t of a unit
// pension, starting k years later, to a spouse aged eta.
// align: a step boundary at s = k, each side with its own one-sided indicator.
NUMPIPE_HD_INLINE double inner_value(const RateView& rv, double eta, double k, double t, int steps, bool align) {
  double a = kMaxAge - eta;
  if (a <= 0.0) return 0.0;
  if (!align) return inner_segment(rv, make_segment(a, 0.0, steps), 0.0, eta, t, k, -1);
  if (k >= a) return 0.0;  // the pension never starts: V stays exactly 0
  if (k <= 0.0) return inner_segment(rv, make_segment(a, 0.0, steps), 0.0, eta, t, k, 1);
  double V = inner_segment(rv, make_segment(a, k, steps), 0.0, eta, t, k, 1);
  return inner_segment(rv, make_segment(k, 0.0, steps), V, eta, t, k, 0);
}

// Number of RK4 steps Inner takes (for the operation counts of profiles).
NUMPIPE_HD_INLINE int inner_steps(double eta, double k, int steps, bool align) {
  double a = kMaxAge - eta;
  if (a <= 0.0) return 0;
  auto count = [&](double hi, double lo) {
    Segment s = make_segment(hi, lo, steps);
    return s.full + (s.partial ? 1 : 0);
  };
  if (!align) return count(a, 0.0);
  if (k >= a) return 0;
  if (k <= 0.0) return count(a, 0.0);
  return count(a, k) + count(k, 0.0);
}

// ---- the middle level ----------------------------------------------------------------
// The middle integrand without Inner: dV/deta = -gp(tau) h(eta, tau) Inner.
NUMPIPE_HD_INLINE double middle_weight(double eta, double tau) {
  return -married_probability(tau) * spouse_density(eta, tau);
}

// The RK4 increment of one middle step (the integrand does not depend on V, so
// k2 = k3): f0, fm, f1 are the integrand at the step's start, middle and end.
NUMPIPE_HD_INLINE double middle_increment(double h, double f0, double fm, double f1) {
  double k1 = h * f0, k2 = h * fm, k4 = h * f1;
  return (k1 + 4 * k2 + k4) * kSixth;
}

// ---- the outer level -----------------------------------------------------------------
NUMPIPE_HD_INLINE double outer_derivative(double rate, double muf, double middle, double V) {
  return rate * V - muf * (middle - V);
}

}  // namespace numpipe::integrate
