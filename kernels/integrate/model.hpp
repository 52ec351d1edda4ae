// integrate: the collective spouse pension reserve (GF820) by three nested RK4
// integrations, as defined in spec/integrate.md (Actulus project, ITU 2013;
// J. W. Nielsen's note on "820"), and the single-life products by Thiele's
// differential equation (products.hpp) on the same step grids. The formulas live
// here once, in NUMPIPE_HD functions, so that the CPU backend (g++) and the CUDA
// backend (nvcc) compute the same model from the same source.
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
// These are the default basis. The user's basis replaces them (MortalityView,
// SpouseView below): each life's mortality a Gompertz-Makeham law with other
// constants or a table, the marriage probability a table by age, the spouse's age
// a normal law with another mean difference and spread or a table.
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
// The forward rate at t on the piece of `inside`, a point strictly inside a step whose
// ends may lie on maturities (the default scheme's steps never cross one): the
// one-sided value, so that a step ending on a maturity keeps the piece it covers.
NUMPIPE_HD_INLINE double forward_rate_within(const RateView& rv, double t, double inside) {
  if (rv.n == 0) return rv.constant;
  int piece = 0;
  while (piece < rv.n && rv.knots[piece] <= inside) ++piece;
  return rv.alpha[piece] + rv.beta[piece] * t;
}
// The integral of the forward rate over [t0, t1] (t0 <= t1): piece by piece, each linear.
NUMPIPE_HD_INLINE double rate_integral(const RateView& rv, double t0, double t1) {
  if (rv.n == 0) return rv.constant * (t1 - t0);
  double sum = 0.0;
  for (int j = 0; j <= rv.n; ++j) {
    const double a = j == 0 ? t0 : fmax(t0, rv.knots[j - 1]);
    const double b = j == rv.n ? t1 : fmin(t1, rv.knots[j]);
    if (b > a) sum += rv.alpha[j] * (b - a) + rv.beta[j] * (b * b - a * a) / 2;
  }
  return sum;
}
// The largest maturity of the curve strictly between lo and hi (by more than tol), or lo.
NUMPIPE_HD_INLINE double curve_break_below(const RateView& rv, double lo, double hi, double tol) {
  for (int i = 0; i < rv.n; ++i)
    if (rv.knots[i] < hi - tol && rv.knots[i] > lo + tol) lo = rv.knots[i];
  return lo;
}

// ---- the basis: each life's mortality, the marriage probability, the spouse's age ----
// A life's force of mortality: a Gompertz-Makeham law mu(a) = A + 10^(B + C a),
// computed as A + exp((B + C a) ln 10) (the same value up to rounding, and exp is
// cheaper than pow on GPUs), or a table of one force per whole year of age,
// constant within the year: mu[i] on [age0 + i, age0 + i + 1). A table's first
// row also serves ages below it and its last row ages past it (the input is
// checked to cover the ages the integrals reach: the last row's year reaches 120).
struct MortalityView {
  int table = 0;          // 0: Gompertz-Makeham (A, B, C); 1: the table mu
  int age0 = 0, ages = 0; // table: the age of row 0, the number of rows
  double A = 0.0005, B = 5.728 - 10.0, C = 0.038;
  const double* mu = nullptr;
  // Select mortality (select.hpp): for the first select_years years after the policy's
  // start the force is select_factor^(select_years - s) times the law's (s the years
  // since the start), or, with select_mu, a table's force per age at selection (rows as
  // mu) and year of duration. select_years 0: the law alone (ultimate).
  int select_years = 0;
  double select_factor = 1.0;
  const double* select_mu = nullptr;
  // Mortality improvement (select.hpp): a table of q_x in the base year (improve_q, rows
  // as mu) with yearly improvement factors AI_x (improve_ai): q_x(year) = q_x (1 - AI_x)^(year
  // - base year). Null: none. With rates by age and calendar year, improve_cum (rows x
  // (improve_span + 1)) holds prod_{j=1..k} (1 - AI(x, base year + j)) for k = 0 ..
  // improve_span, and improve_ai the rates of the years after the table's last.
  const double* improve_q = nullptr;
  const double* improve_ai = nullptr;
  double improve_base_year = 0;
  const double* improve_cum = nullptr;
  int improve_span = 0;
};
// The default basis: Danish women (the insured) and men (the spouse).
NUMPIPE_HD_INLINE MortalityView danish_women() { return MortalityView{}; }
NUMPIPE_HD_INLINE MortalityView danish_men() {
  MortalityView m;
  m.B = 5.880 - 10.0;
  return m;
}

NUMPIPE_HD_INLINE int mortality_row(const MortalityView& m, double age) {
  double i = floor(age) - static_cast<double>(m.age0);
  if (!(i > 0.0)) return 0;
  return i >= static_cast<double>(m.ages - 1) ? m.ages - 1 : static_cast<int>(i);
}
NUMPIPE_HD_INLINE double mortality(const MortalityView& m, double age) {
  if (!m.table) return m.A + exp((m.B + m.C * age) * kLn10);
  return m.mu[mortality_row(m, age)];
}
// The force at `age` within one step of --align-breaks, whose steps never cross a
// whole age of a table's life: a table's row is that of `inside`, a point strictly
// inside the step (its midpoint), so that a step that starts or ends on a whole
// age takes the force of the year it covers (the one-sided value).
NUMPIPE_HD_INLINE double mortality_within(const MortalityView& m, double age, double inside) {
  if (!m.table) return m.A + exp((m.B + m.C * age) * kLn10);
  return m.mu[mortality_row(m, inside)];
}

// y at v on the piecewise linear function through (x[i], y[i]), i < n (x increasing);
// `below` and `above` outside [x[0], x[n-1]].
NUMPIPE_HD_INLINE double interpolate(const double* x, const double* y, int n, double v, double below, double above) {
  if (!(v >= x[0])) return below;
  if (v > x[n - 1]) return above;
  int lo = 0, hi = n - 1;  // x[lo] <= v <= x[hi]
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (x[mid] <= v) lo = mid;
    else hi = mid;
  }
  if (hi == lo) return y[lo];
  return y[lo] + (y[hi] - y[lo]) * ((v - x[lo]) / (x[hi] - x[lo]));
}

// The spouse assumptions. Marriage: the spec's parabola, or a table (age,
// probability) linearly interpolated, flat beyond its ends. The spouse's age eta
// given the insured's tau: normal with mean tau + mean and standard deviation sd
// (norm = 1 / (sqrt(2 pi) sd), inv2s2 = 1 / (2 sd^2); the default 0 and 3), or a
// table of the density of eta - tau, linearly interpolated, 0 beyond its ends.
// Either way 0 unless 0 < eta < 120.
struct SpouseView {
  int marriage_table = 0, marriage_points = 0;
  int age_table = 0, age_points = 0;
  const double* marriage_age = nullptr;
  const double* marriage_prob = nullptr;
  double mean = 0.0, norm = 0.13298076013381091, inv2s2 = 1.0 / 18.0;
  const double* age_diff = nullptr;
  const double* age_density = nullptr;
};

NUMPIPE_HD_INLINE double married_probability(const SpouseView& sv, double tau) {
  if (!sv.marriage_table) return married_probability(tau);
  return interpolate(sv.marriage_age, sv.marriage_prob, sv.marriage_points, tau, sv.marriage_prob[0],
                     sv.marriage_prob[sv.marriage_points - 1]);
}
NUMPIPE_HD_INLINE double spouse_density(const SpouseView& sv, double eta, double tau) {
  if (eta <= 0.0 || eta >= kMaxAge) return 0.0;
  if (!sv.age_table) {
    double d = tau - eta;
    if (sv.mean != 0.0) d = d + sv.mean;  // (eta - (tau + mean))^2; the default adds nothing
    return sv.norm * exp(-d * d * sv.inv2s2);
  }
  return interpolate(sv.age_diff, sv.age_density, sv.age_points, eta - tau, 0.0, 0.0);
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

// ---- stability and accuracy: a step no longer than the law allows ------------------
// Each level solves dV/dt = c V + ... backwards with c = r + mu. RK4 multiplies the
// homogeneous part by R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24 per step, z = h c; R
// stays positive and below 1 only for z > -2.785 (RK4's stability interval), and
// close to e^z well inside it (within 2% at |z| = 1). The default (aligned) scheme:
// - the spouse's inner level (long stretches between breaks) keeps |h| c <= kStableStep:
//   where the steps asked for are longer, the stretch takes the least whole multiple
//   of them that keeps it;
// - the stretches of at most a year of the products' chains and of the spouse
//   pension's outer level take m = ceil(c / kSteepForce) times the steps asked where
//   c exceeds kSteepForce (a Makeham law past age 100): at the default 10 steps a
//   year |h| c <= 0.05, where RK4's error, about z^5 / 120 a step, stays near 1e-9 of
//   the reserve even where the force reaches 3 a year; m does not depend on the
//   steps asked, so that doubling them halves every step (the order and Richardson's
//   estimate hold).
// The faithful scheme takes the steps as asked.
inline constexpr double kStableStep = 1.0;
inline constexpr double kSteepForce = 0.5;
// The largest force of mortality on the ages [a0, a1] (Gompertz-Makeham: monotone,
// at an end; a table: its largest row there).
NUMPIPE_HD_INLINE double max_force(const MortalityView& m, double a0, double a1) {
  if (!m.table) return fmax(mortality(m, a0), mortality(m, a1));
  double v = 0.0;
  for (int i = mortality_row(m, a0), j = mortality_row(m, a1); i <= j; ++i) v = fmax(v, m.mu[i]);
  return v;
}
// The largest forward rate on [t0, t1] (linear between maturities: at the ends and
// on both sides of each maturity inside).
NUMPIPE_HD_INLINE double max_rate(const RateView& rv, double t0, double t1) {
  if (rv.n == 0) return rv.constant;
  double v = fmax(forward_rate(rv, t0), forward_rate_within(rv, t1, t1 - (t1 - t0) * 1e-9));
  for (int i = 0; i < rv.n; ++i)
    if (rv.knots[i] > t0 && rv.knots[i] < t1)
      v = fmax(v, fmax(rv.alpha[i] + rv.beta[i] * rv.knots[i], rv.alpha[i + 1] + rv.beta[i + 1] * rv.knots[i]));
  return v;
}
// Steps per year for a stretch whose coefficient r + mu is at most c_max: `steps`,
// or the least whole multiple of it with c_max / steps <= kStableStep.
NUMPIPE_HD_INLINE int stable_steps(int steps, double c_max) {
  const double z = c_max / static_cast<double>(steps);
  if (!(z > kStableStep)) return steps;
  const double m = ceil(z / kStableStep);
  return m * steps > 1e6 ? 1000000 : static_cast<int>(m) * steps;
}
// Steps per year for a stretch of at most a year whose r + mu is at most c_max:
// `steps` times ceil(c_max / kSteepForce) where that exceeds 1.
NUMPIPE_HD_INLINE int steep_steps(int steps, double c_max) {
  if (!(c_max > kSteepForce)) return steps;
  const double m = ceil(c_max / kSteepForce);
  return m * steps > 1e6 ? 1000000 : static_cast<int>(m) * steps;
}

// RK4's weights (1, 2, 2, 1) / 6, applied by one multiplication: fp64 division
// is a long instruction sequence on GPUs.
inline constexpr double kSixth = 1.0 / 6.0;

// ---- the inner level ---------------------------------------------------------------
// dV/ds = c(s) V - p(s), with c = r(t + s) + muM(eta + s), p = pension indicator.
NUMPIPE_HD_INLINE double inner_coefficient(const RateView& rv, const MortalityView& spouse, double eta, double t,
                                           double s) {
  return forward_rate(rv, t + s) + mortality(spouse, eta + s);
}
NUMPIPE_HD_INLINE double inner_coefficient(const RateView& rv, double eta, double t, double s) {
  return inner_coefficient(rv, danish_men(), eta, t, s);
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
// faithful indicator [s >= k] and the force of mortality at every stage point;
// otherwise (--align-breaks) the segment lies wholly on one side of s = k (the
// constant pension 0 or 1) and, for a table's life, within one year of age (the
// force of that year, from the segment's midpoint).
NUMPIPE_HD_INLINE double inner_segment(const RateView& rv, const MortalityView& spouse, const Segment& seg, double V,
                                       double eta, double t, double k, int pension) {
  auto ind = [&](double s) { return pension < 0 ? (s >= k ? 1.0 : 0.0) : static_cast<double>(pension); };
  const bool one_year = pension >= 0 && spouse.table;
  const double inside = (seg.a + seg.b) / 2;
  const double mu_year = one_year ? mortality_within(spouse, 0.0, eta + inside) : 0.0;
  // A curve's forward rate, aligned: the piece of the segment (its ends may be maturities).
  const bool curve_side = pension >= 0 && rv.n > 0;
  auto rate = [&](double s) { return curve_side ? forward_rate_within(rv, t + s, t + inside) : forward_rate(rv, t + s); };
  auto coef = [&](double s) {
    if (one_year) return rate(s) + mu_year;
    return curve_side ? rate(s) + mortality(spouse, eta + s) : inner_coefficient(rv, spouse, eta, t, s);
  };
  // The end stage of each step is evaluated at the start of the next one (the
  // same point up to one rounding) and carried over: two new coefficient
  // evaluations per step.
  double s0 = seg.start(0);
  double c0 = coef(s0), p0 = ind(s0);
  if (seg.partial) {
    double sa = seg.a, sm = seg.a + seg.hp / 2;
    V = rk4_linear_step(V, seg.hp, coef(sa), ind(sa), coef(sm), ind(sm), c0, p0);
  }
  for (int i = 0; i < seg.full; ++i) {
    double sm = s0 + seg.h / 2, s1 = seg.start(i + 1);
    double cm = coef(sm), c1 = coef(s1);
    double pm = ind(sm), p1 = ind(s1);
    V = rk4_linear_step(V, seg.h, c0, p0, cm, pm, c1, p1);
    s0 = s1;
    c0 = c1;
    p0 = p1;
  }
  return V;
}

// Breaks closer than this (years) are one break: as the planned grids (plan.cpp).
inline constexpr double kBreakTolerance = 1e-9;

// The default (aligned) scheme: the inner level's segments from s = 120 - eta down
// to 0, in order: boundaries at s = k (the pension starts), for a table's spouse at
// every whole age eta + s, and for a yield curve at every maturity t + s (the forward
// rate jumps there). f(segment, pension) for each (pension 0 below k, 1 above).
template <class F>
NUMPIPE_HD_INLINE void inner_aligned_segments(const RateView& rv, const MortalityView& spouse, double eta, double k,
                                              double t, int steps, F&& f) {
  double a = kMaxAge - eta;
  if (k >= a) return;  // the pension never starts: V stays exactly 0
  auto segment = [&](double hi, double lo) {  // the steps the stretch's r + mu allows
    return make_segment(hi, lo, stable_steps(steps, max_rate(rv, t + lo, t + hi) + max_force(spouse, eta + lo, eta + hi)));
  };
  if (!spouse.table && rv.n == 0) {
    if (k <= 0.0) {
      f(segment(a, 0.0), 1);
      return;
    }
    f(segment(a, k), 1);
    f(segment(k, 0.0), 0);
    return;
  }
  double hi = a;
  while (hi > kBreakTolerance) {
    // The largest break below hi: the last whole age below eta + hi, k, a maturity.
    double lo = 0.0;
    if (spouse.table) {
      lo = ceil(eta + hi - kBreakTolerance) - 1.0 - eta;
      if (!(lo > kBreakTolerance)) lo = 0.0;
    }
    if (k < hi - kBreakTolerance && k > lo + kBreakTolerance) lo = k;
    for (int i = 0; i < rv.n; ++i) {
      const double m = rv.knots[i] - t;
      if (m < hi - kBreakTolerance && m > lo + kBreakTolerance) lo = m;
    }
    f(segment(hi, lo), lo >= k ? 1 : 0);
    hi = lo;
  }
}

// Inner(eta, k, t) with `steps` steps per year: the value at time t of a unit
// pension, starting k years later, to a spouse aged eta.
// align: step boundaries at s = k, each side with its own one-sided indicator
// (and at the spouse's whole ages for a table's life).
NUMPIPE_HD_INLINE double inner_value(const RateView& rv, const MortalityView& spouse, double eta, double k, double t,
                                     int steps, bool align) {
  double a = kMaxAge - eta;
  if (a <= 0.0) return 0.0;
  if (!align) return inner_segment(rv, spouse, make_segment(a, 0.0, steps), 0.0, eta, t, k, -1);
  double V = 0.0;
  inner_aligned_segments(rv, spouse, eta, k, t, steps,
                         [&](const Segment& seg, int pension) { V = inner_segment(rv, spouse, seg, V, eta, t, k, pension); });
  return V;
}
NUMPIPE_HD_INLINE double inner_value(const RateView& rv, double eta, double k, double t, int steps, bool align) {
  return inner_value(rv, danish_men(), eta, k, t, steps, align);
}

// Number of RK4 steps Inner takes (for the operation counts of profiles).
NUMPIPE_HD_INLINE int inner_steps(const RateView& rv, const MortalityView& spouse, double eta, double k, double t,
                                  int steps, bool align) {
  double a = kMaxAge - eta;
  if (a <= 0.0) return 0;
  if (!align) return segment_steps(make_segment(a, 0.0, steps));
  int n = 0;
  inner_aligned_segments(rv, spouse, eta, k, t, steps, [&](const Segment& seg, int) { n += segment_steps(seg); });
  return n;
}

// ---- the middle level ----------------------------------------------------------------
// The middle integrand without Inner: dV/deta = -gp(tau) h(eta, tau) Inner.
NUMPIPE_HD_INLINE double middle_weight(double eta, double tau) {
  return -married_probability(tau) * spouse_density(eta, tau);
}
NUMPIPE_HD_INLINE double middle_weight(const SpouseView& sv, double eta, double tau) {
  return -married_probability(sv, tau) * spouse_density(sv, eta, tau);
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

// Thiele's differential equation for the reserve V(t) of a life aged x + t
// (e.g. Norberg, "Reserves in life and pension insurance", Scand. Actuarial J. 1991):
//   dV/dt = r(t) V - mu(x + t) (S(t) - V) + c(t),
// S the sum paid on death, c the payments while alive (level premium in, annuity
// benefit out: c = P pi(t) - b(t)). The spouse pension's outer level is the case
// S = Middle, c = 0 (outer_derivative, whose arithmetic it keeps).
struct ThielePoint {
  double r, mu, S, c;
};
NUMPIPE_HD_INLINE double thiele_derivative(const ThielePoint& p, double V) {
  return outer_derivative(p.r, p.mu, p.S, V) + p.c;
}
NUMPIPE_HD_INLINE double thiele_step(double V, double h, const ThielePoint& p0, const ThielePoint& pm,
                                     const ThielePoint& p1) {
  double k1 = h * thiele_derivative(p0, V);
  double k2 = h * thiele_derivative(pm, V + k1 / 2);
  double k3 = h * thiele_derivative(pm, V + k2 / 2);
  double k4 = h * thiele_derivative(p1, V + k3);
  return V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
}

}  // namespace numpipe::integrate
