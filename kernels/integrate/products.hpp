// integrate: the single-life products (life annuity, term insurance, pure
// endowment, endowment insurance) by Thiele's differential equation (model.hpp,
// thiele_step), integrated backwards with the outer level's RK4 steps: from the
// product's end min(term, 120 - x) down to now, h = -1/h1, a first partial step
// where the span is not whole, and with --align-breaks step boundaries at every
// break of the integrands. The per-policy functions are NUMPIPE_HD: the CPU backend
// and the CUDA kernel run the same chain.
//
// A policy pays, to a life aged x now (benefit B, level premium P, all continuous
// in time except the sums at death and at the term):
//   life annuity:         b = B per year while alive from the deferment m to the term
//   term insurance:       S = B on death before the term
//   pure endowment:       B at the term if alive
//   endowment insurance:  S = B on death before the term, B at the term if alive
// and receives the premium P per year while alive before the premium term. Ages
// end at 120 (everybody is dead there): a term past 120 - x is cut there, and
// nothing is paid at 120. The reserve at a whole year t is V(t); at the term, V is
// the sum due there (the value just before it is paid); after it 0.
#pragma once
#include <cmath>
#include <limits>

#include "model.hpp"
#include "select.hpp"

namespace numpipe::integrate {

enum ProductKind : int {
  kSpousePension = 0,
  kLifeAnnuity = 1,
  kTermInsurance = 2,
  kPureEndowment = 3,
  kEndowmentInsurance = 4,
  kProductKinds = 5,         // the products on the insured's life alone: the five above
  kJointLifeAnnuity = 5,     // B per year while both of two lives are alive (select.hpp)
  kLastSurvivorAnnuity = 6,  // B per year while at least one of them is alive
  kProductCodes = 7          // every product, those on two lives included
};

// A single-life policy as its chain integrates it (integrate.hpp, product_spec).
struct ProductSpec {
  double x = 35;            // age now
  double end = 85;          // the chain's start: min(term, 120 - x)
  double end_value = 0;     // V(end): paid at the term to a survivor (0 at the horizon 120)
  double death = 0;         // S: paid on death before the term
  double annuity = 0;       // b: paid per year while alive from `from` until the end
  double from = 0;          // the annuity's deferment (years from now)
  double premium_end = 0;   // premiums are paid while alive before this time
  double premium = 0;       // the level premium P per year (ignored with equivalence)
  int h1 = 10;              // steps per year
  int insured = 0;          // the insured's mortality law
  int equivalence = 0;      // 1: P solves V(0) = 0
  int frequency = 0;        // payments a year (--frequency); 0: continuous
  int advance = 1;          // discrete payments: 1 at each period's start, 0 at its end
  int second = 1;           // two lives: the second life's mortality law
  int lives = 0;            // 0 one life; kJointLifeAnnuity or kLastSurvivorAnnuity: two lives
  int pad = 0;
  double y = 0;             // two lives: the second life's age now
  double year = 0;          // the calendar year now (improving mortality tables)
};

// The status of a policy's chain from the laws (LifeStatus, select.hpp): the insured
// alone, or with a joint-life annuity both lives jointly.
NUMPIPE_HD_INLINE LifeStatus policy_status(const ProductSpec& p, const MortalityView* laws) {
  LifeStatus L;
  L.first = laws[p.insured];
  L.x = p.x;
  L.year = p.year;
  if (p.lives == kJointLifeAnnuity) {
    L.second = laws[p.second];
    L.y = p.y;
    L.joint = 1;
  }
  return L;
}

// ---- discrete payments (--frequency M) -------------------------------------------
// Annuity and premium sums of 1/M of the yearly amount at the dates k/M (the annuity's
// from + k/M), at each period's start (advance) or end (arrears), while alive, before
// the end (advance) or up to it (arrears); nothing at the horizon 120. In Thiele's
// framework each such sum is a jump of the reserve at its date (Norberg 1991; Dickson,
// Hardy and Waters, ch. 7): V(t-) = V(t+) + b/M - P/M, so the dates are breaks and the
// chain adds the jump at the end of the step reaching them. The sum on death is paid at
// the end of the 1/M period of death (from now): its value at the moment of death t is
// S exp(-int_t^tau r), tau = the period's end, the sum at risk in Thiele's equation.
NUMPIPE_HD_INLINE bool on_payment_grid(double u, double per_year) {
  const double k = u * per_year;
  return fabs(k - round(k)) <= kBreakTolerance * per_year;
}
NUMPIPE_HD_INLINE double payment_jump(const ProductSpec& p, double premium, bool benefits, double t) {
  if (p.frequency <= 0 || !(t < kMaxAge - p.x - kBreakTolerance)) return 0.0;
  const double M = static_cast<double>(p.frequency);
  double jump = 0.0;
  auto due = [&](double first, double last) {  // a payment date of a stream on [first, last]
    return p.advance ? (t > first - kBreakTolerance && t < last - kBreakTolerance)
                     : (t > first + kBreakTolerance && t < last + kBreakTolerance);
  };
  if (benefits && p.annuity != 0.0 && due(p.from, p.end) && on_payment_grid(t - p.from, M)) jump += p.annuity / M;
  if (premium != 0.0 && due(0.0, p.premium_end) && on_payment_grid(t, M)) jump -= premium / M;
  return jump;
}
// The sum on death at time t (inside: a point of t's period, strictly inside the step).
NUMPIPE_HD_INLINE double death_sum(const ProductSpec& p, const RateView& rv, double t, double inside) {
  if (p.frequency <= 0 || p.death == 0.0) return p.death;
  const double M = static_cast<double>(p.frequency);
  const double tau = (floor(inside * M) + 1.0) / M;
  return p.death * exp(-rate_integral(rv, t, tau));
}

// The default (aligned) scheme: the largest break of the product's integrands below
// hi (by more than kBreakTolerance), else 0: whole years (reported), the annuity's
// start, the premiums' end, for a table's life every whole age x + t (its force is
// constant within a year of age), and a yield curve's maturities (its forward rate
// jumps there).
NUMPIPE_HD_INLINE double product_next_break(const ProductSpec& p, const RateView& rv, bool table, double hi) {
  double lo = ceil(hi - kBreakTolerance) - 1.0;  // the last whole year below hi
  if (!(lo > kBreakTolerance)) lo = 0.0;
  auto take = [&](double b) {
    if (b < hi - kBreakTolerance && b > lo + kBreakTolerance) lo = b;
  };
  if (p.annuity != 0.0) take(p.from);
  take(p.premium_end);
  if (table) take(ceil(p.x + hi - kBreakTolerance) - 1.0 - p.x);
  if (p.frequency > 0) {  // the payment dates k/M and the annuity's from + k/M
    const double M = static_cast<double>(p.frequency);
    take((ceil(hi * M - kBreakTolerance * M) - 1.0) / M);
    if (p.annuity != 0.0 && hi > p.from) take(p.from + (ceil((hi - p.from) * M - kBreakTolerance * M) - 1.0) / M);
  }
  return curve_break_below(rv, lo, hi, kBreakTolerance);
}
// ... and for a status of two lives also the second life's whole ages (a table's).
NUMPIPE_HD_INLINE double status_next_break(const ProductSpec& p, const RateView& rv, const LifeStatus& L, double hi) {
  return second_life_break_below(L, product_next_break(p, rv, L.first.table != 0, hi), hi, kBreakTolerance);
}

// Thiele's inputs at time t. The faithful scheme evaluates the indicators (annuity
// started, premium still due) and a table's force at t itself; --align-breaks at
// `inside`, a point strictly inside the step, whose segment lies between breaks:
// the one-sided values. benefits = false: the premium alone (the equivalence
// premium's second chain).
NUMPIPE_HD_INLINE ThielePoint product_point(const ProductSpec& p, const RateView& rv, const LifeStatus& L,
                                            double premium, bool benefits, bool align, double t, double inside) {
  const double u = align ? inside : t;
  ThielePoint q;
  q.r = align ? forward_rate_within(rv, t, inside) : forward_rate(rv, t);
  q.mu = status_force(L, t, u);
  q.S = benefits ? death_sum(p, rv, t, u) : 0.0;
  double c = 0.0;  // discrete payments are jumps (payment_jump), not rates
  if (premium != 0.0 && u < p.premium_end && p.frequency <= 0) c = premium;
  if (benefits && p.annuity != 0.0 && u >= p.from && p.frequency <= 0) c = c - p.annuity;
  q.c = c;
  return q;
}

// The aligned scheme's steps per year on [lo, hi] (at most a year: whole years are
// breaks): h1, or a multiple of it where the law is steep (steep_steps, model.hpp).
NUMPIPE_HD_INLINE int product_stable_steps(const ProductSpec& p, const RateView& rv, const LifeStatus& L, double hi,
                                           double lo) {
  return steep_steps(p.h1, max_rate(rv, lo, hi) + status_max_force(L, lo, hi));
}

// One chain: V from the end down to 0 with the premium P (and the benefits, or
// not); out(year, V) at every whole year on the way (the end first when whole).
// Returns V(0). The equivalence premium's chains and the reserve's chain take the
// same steps (the breaks come from p, whatever P and benefits are), so that the
// reserve is linear in P step by step.
template <class Out>
NUMPIPE_HD_INLINE double product_chain(const ProductSpec& p, const RateView& rv, const LifeStatus& m, bool align,
                                       double premium, bool benefits, Out&& out) {
  double V = benefits ? p.end_value : 0.0;
  V += payment_jump(p, premium, benefits, p.end);  // arrears sums due at the end
  if (p.end == floor(p.end)) out(static_cast<int>(p.end), V);
  double hi = p.end;
  while (hi > 0.0) {
    const double lo = align ? status_next_break(p, rv, m, hi) : 0.0;
    const int per_year = align ? product_stable_steps(p, rv, m, hi, lo) : p.h1;
    const Segment s = make_segment(hi, lo, per_year);
    const int steps = segment_steps(s);
    // A step's end point is the next one's start (the same double), and within a
    // segment the aligned one-sided values do not change: carried over.
    double t0 = segment_point(s, 0);
    double tm0 = steps > 0 ? segment_point(s, 1) : t0;
    ThielePoint a = product_point(p, rv, m, premium, benefits, align, t0, tm0);
    for (int q = 0; q < steps; ++q) {
      const double tm = segment_point(s, 2 * q + 1), t1 = segment_point(s, 2 * q + 2);
      const ThielePoint b = product_point(p, rv, m, premium, benefits, align, tm, tm);
      const ThielePoint c = product_point(p, rv, m, premium, benefits, align, t1, tm);
      V = thiele_step(V, segment_step_size(s, q), a, b, c);
      if (q + 1 == steps) V += payment_jump(p, premium, benefits, lo);  // the sums due at lo
      const int y = segment_year(s, per_year, 2 * q + 2);
      if (y >= 0) out(y, V);
      a = c;
    }
    if (steps == 0) V += payment_jump(p, premium, benefits, lo);
    hi = lo;
  }
  return V;
}

// A last-survivor annuity as the chains of its three statuses (AMLCR sec. 9.5: the
// last-survivor status pays while either life is: a_xy-bar = a_x + a_y - a_xy): the
// annuity on each life alone and on both jointly, on the steps of each; premiums are
// paid while both are alive (the joint status). status 0, 1: each life alone, 2: both.
NUMPIPE_HD_INLINE ProductSpec last_survivor_part(const ProductSpec& p, int status) {
  ProductSpec q = p;
  q.lives = 0;
  if (status == 2) {
    q.lives = kJointLifeAnnuity;
    q.end = fmin(p.end, kMaxAge - fmax(p.x, p.y));
    q.premium_end = fmin(p.premium_end, q.end);
    return q;
  }
  q.premium = 0.0;
  q.equivalence = 0;
  if (status == 1) {
    q.x = p.y;
    q.insured = p.second;
  }
  q.end = fmin(p.end, kMaxAge - q.x);
  q.premium_end = 0.0;
  return q;
}

// RK4 steps of one chain (for the operation counts).
NUMPIPE_HD_INLINE int chain_steps(const ProductSpec& p, const RateView& rv, const LifeStatus& L, bool align) {
  int n = 0;
  double hi = p.end;
  while (hi > 0.0) {
    const double lo = align ? status_next_break(p, rv, L, hi) : 0.0;
    n += segment_steps(make_segment(hi, lo, align ? product_stable_steps(p, rv, L, hi, lo) : p.h1));
    hi = lo;
  }
  return n;
}
NUMPIPE_HD_INLINE int product_steps(const ProductSpec& p, const RateView& rv, const MortalityView* laws, bool align) {
  if (p.lives != kLastSurvivorAnnuity) return chain_steps(p, rv, policy_status(p, laws), align);
  int n = 0;
  for (int k = 0; k < 3; ++k) {
    const ProductSpec q = last_survivor_part(p, k);
    n += chain_steps(q, rv, policy_status(q, laws), align);
  }
  return n;
}

// The last age of the policy's status as a time from now: 120 - x, for two lives
// 120 - the older's age (joint life) or the younger's (last survivor).
NUMPIPE_HD_INLINE double status_horizon(const ProductSpec& p) {
  if (p.lives == kJointLifeAnnuity) return kMaxAge - fmax(p.x, p.y);
  if (p.lives == kLastSurvivorAnnuity) return kMaxAge - fmin(p.x, p.y);
  return kMaxAge - p.x;
}

// The last-survivor annuity's reserve (while both are alive; once the older life would
// be past 120, the younger's alone) and premium: the sum of its parts' chains, the
// joint status's with the sign that subtracts it and its premiums.
NUMPIPE_HD_INLINE double last_survivor_reserve(const ProductSpec& p, const RateView& rv, const MortalityView* laws,
                                               bool align, double* row) {
  ProductSpec part[3];
  LifeStatus status[3];
  for (int k = 0; k < 3; ++k) {
    part[k] = last_survivor_part(p, k);
    status[k] = policy_status(part[k], laws);
  }
  double premium = p.premium;
  if (p.equivalence) {
    auto none = [](int, double) {};
    const double vb = product_chain(part[0], rv, status[0], align, 0.0, true, none) +
                      product_chain(part[1], rv, status[1], align, 0.0, true, none) -
                      product_chain(part[2], rv, status[2], align, 0.0, true, none);
    const double vp = product_chain(part[2], rv, status[2], align, 1.0, false, none);
    premium = -vb / vp;
  }
  product_chain(part[0], rv, status[0], align, 0.0, true, [&](int y, double v) { row[y] += v; });
  product_chain(part[1], rv, status[1], align, 0.0, true, [&](int y, double v) { row[y] += v; });
  product_chain(part[2], rv, status[2], align, 0.0, true, [&](int y, double v) { row[y] -= v; });
  product_chain(part[2], rv, status[2], align, premium, false, [&](int y, double v) { row[y] += v; });
  return premium;
}

// The product's reserve row (kYears values: NaN past the status's horizon, 120 - x for
// one life, 0 after the end) and its premium: the given one, or with equivalence the P
// that makes V(0) = 0, from V(0) = V_b + P V_p (the benefits' chain without premium and
// the premium's chain without benefits: Thiele's equation is linear in the payments);
// then the reserve by the chain with P, whose V(0) is then zero up to rounding.
// laws: every mortality law of the problem (the policy's insured's, its second life's).
NUMPIPE_HD_INLINE double product_reserve(const ProductSpec& p, const RateView& rv, const MortalityView* laws, bool align,
                                         double* row) {
  const double horizon = status_horizon(p);
  for (int y = 0; y < kYears; ++y) row[y] = static_cast<double>(y) <= horizon ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  if (p.lives == kLastSurvivorAnnuity) return last_survivor_reserve(p, rv, laws, align, row);
  const LifeStatus m = policy_status(p, laws);
  double premium = p.premium;
  if (p.equivalence) {
    auto none = [](int, double) {};
    const double vb = product_chain(p, rv, m, align, 0.0, true, none);
    const double vp = product_chain(p, rv, m, align, 1.0, false, none);
    premium = -vb / vp;
  }
  product_chain(p, rv, m, align, premium, true, [&](int y, double v) { row[y] = v; });
  return premium;
}

// The product on one law m for every life of the spec (its law indices not used).
NUMPIPE_HD_INLINE double product_reserve(const ProductSpec& p, const RateView& rv, const MortalityView& m, bool align,
                                         double* row) {
  ProductSpec one = p;
  one.insured = 0;
  one.second = 0;
  return product_reserve(one, rv, &m, align, row);
}

// ---- expected cash flows (the cash_flow record) ------------------------------------
// The integral of the force of mortality over the ages [a0, a1] (a0 <= a1), -ln of the
// probability of surviving from a0 to a1: for A + 10^(B + C a) in closed form, for a
// table row by row (its force is constant within a year of age).
NUMPIPE_HD_INLINE double cumulative_force(const MortalityView& m, double a0, double a1) {
  if (!m.table) {
    const double gompertz = m.C != 0.0 ? (exp((m.B + m.C * a1) * kLn10) - exp((m.B + m.C * a0) * kLn10)) / (m.C * kLn10)
                                       : exp(m.B * kLn10) * (a1 - a0);
    return m.A * (a1 - a0) + gompertz;
  }
  double sum = 0.0;
  for (double a = a0; a < a1;) {
    const double next = fmin(floor(a) + 1.0, a1);
    sum += m.mu[mortality_row(m, a)] * (next - a);
    a = next;
  }
  return sum;
}

// The same for a life of the everyday basis (select.hpp) aged `entry` now, over the
// durations [t0, t1] within one step of the aligned grid (no whole year from now, no
// whole age of a table's life inside): an ultimate life's cumulative_force; a select
// table's or an improving table's force is constant there; a select factor's
// f^(d - s) mu(entry + s) in closed form (AMLCR sec. 3.9's model: exponentials in s).
NUMPIPE_HD_INLINE double select_cumulative_force(const MortalityView& m, double entry, double t0, double t1,
                                                 double year) {
  const double inside = 0.5 * (t0 + t1), width = t1 - t0;
  if (m.improve_q) return improved_force(m, entry, year, inside) * width;
  if (m.select_years > 0 && inside < static_cast<double>(m.select_years)) {
    if (m.select_mu) return select_force(m, entry, t0, inside, year) * width;
    const double k = log(m.select_factor);
    auto growth = [&](double g) { return g != 0.0 ? expm1(g * width) / g : width; };  // int_t0^t1 e^(g (s - t0)) ds
    const double at_t0 = pow(m.select_factor, static_cast<double>(m.select_years) - t0);
    if (m.table) return at_t0 * m.mu[mortality_row(m, entry + inside)] * growth(-k);
    return at_t0 * (m.A * growth(-k) + exp((m.B + m.C * (entry + t0)) * kLn10) * growth(m.C * kLn10 - k));
  }
  return cumulative_force(m, entry + t0, entry + t1);
}
// The status's (one life, or two jointly: the sum of their forces).
NUMPIPE_HD_INLINE double status_cumulative_force(const LifeStatus& L, double t0, double t1) {
  const double first = select_cumulative_force(L.first, L.x, t0, t1, L.year);
  return L.joint ? first + select_cumulative_force(L.second, L.y, t0, t1, L.year) : first;
}
// A life on its ultimate law alone (its survival in closed form over many years).
NUMPIPE_HD_INLINE bool ultimate_life(const LifeStatus& L) {
  return !L.joint && L.first.select_years == 0 && !L.first.improve_q;
}

// The year (0..120) of a payment at time t from now: payments at t in [y, y + 1) are
// year y's (a payment date is exact up to kBreakTolerance); -1 past 120.
NUMPIPE_HD_INLINE int payment_year(double t) {
  const double y = floor(t + kBreakTolerance);
  return y < static_cast<double>(kYears) ? static_cast<int>(y < 0.0 ? 0.0 : y) : -1;
}

// The policy's expected cash flows by year, undiscounted, for the life alive now (the
// amounts each year times the probability that they are paid; Dickson, Hardy and Waters,
// "Actuarial Mathematics for Life Contingent Risks", ch. 7 and 14, profit testing):
// flows[2 y] the benefits paid in year y (annuity payments, sums on death, the sum at the
// term), flows[2 y + 1] the premiums received, y = 0..120 (zero where nothing is paid).
// Payments are dated as the reserve's chain dates them: continuous annuities and premiums
// at every moment while alive, discrete ones (--frequency M) at their dates k/M, a sum on
// death at the moment of death (continuous) or at the end of the 1/M period of death, the
// sum at the term at the term. The survival probability t_p_x = exp(-cumulative_force) is
// exact; within each step of the aligned scheme's grid (no step crosses a whole year or a
// break of the payments) a continuous stream's integral int b t_p_x dt is taken by
// Simpson's rule (fourth order, the steps the reserve's chain takes where the law is
// steep: steep_steps), a sum on death exactly as B (t0_p_x - t1_p_x).
// One status's flows added to `flows`, its benefits times benefit_sign (a last
// survivor's joint part subtracts them).
NUMPIPE_HD_INLINE void status_cash_flows(const ProductSpec& p, const RateView& rv, const LifeStatus& L, double premium,
                                         double benefit_sign, double* flows) {
  auto add = [&](int year, int kind, double amount) {
    if (year >= 0 && amount != 0.0) flows[2 * year + kind] += kind == 0 ? benefit_sign * amount : amount;
  };
  // ln t_p_x at t = the end: in closed form on an ultimate law, else segment by segment.
  double log_survival = 0.0;
  if (ultimate_life(L)) {
    log_survival = -cumulative_force(L.first, p.x, p.x + p.end);
  } else {
    for (double hi = p.end; hi > 0.0;) {
      const double lo = status_next_break(p, rv, L, hi);
      log_survival -= status_cumulative_force(L, lo, hi);
      hi = lo;
    }
  }
  const double at_end = exp(log_survival);
  add(payment_year(p.end), 0, p.end_value * at_end);
  // The discrete sums due at a date t (payment_jump's, split into benefits and premiums).
  auto sums_at = [&](double t, double survival) {
    add(payment_year(t), 0, payment_jump(p, 0.0, true, t) * survival);
    add(payment_year(t), 1, -payment_jump(p, premium, false, t) * survival);
  };
  sums_at(p.end, at_end);
  const double M = static_cast<double>(p.frequency);
  double hi = p.end;
  while (hi > 0.0) {
    const double lo = status_next_break(p, rv, L, hi);
    const Segment s = make_segment(hi, lo, steep_steps(p.h1, status_max_force(L, lo, hi)));
    const int steps = segment_steps(s);
    for (int q = 0; q < steps; ++q) {  // backwards: t0 > tm > t1
      const double t0 = segment_point(s, 2 * q), tm = segment_point(s, 2 * q + 1), t1 = segment_point(s, 2 * q + 2);
      const double log_m = log_survival + status_cumulative_force(L, tm, t0);
      const double log_1 = log_m + status_cumulative_force(L, t1, tm);
      const double p0 = exp(log_survival), pm = exp(log_m), p1 = exp(log_1), width = t0 - t1;
      const int year = payment_year(tm);
      const double simpson = width * kSixth * (p0 + 4.0 * pm + p1);  // int t_p_x dt over the step
      if (p.frequency <= 0) {
        if (p.annuity != 0.0 && tm >= p.from) add(year, 0, p.annuity * simpson);
        if (premium != 0.0 && tm < p.premium_end) add(year, 1, premium * simpson);
      }
      if (p.death != 0.0) {
        const double dying = p1 * -expm1(log_survival - log_1);  // t1_p_x - t0_p_x
        add(p.frequency > 0 ? payment_year((floor(tm * M) + 1.0) / M) : year, 0, p.death * dying);
      }
      log_survival = log_1;
    }
    sums_at(lo, exp(log_survival));
    hi = lo;
  }
}

// The policy's flows (laws: every mortality law of the problem). A last-survivor
// annuity's as its parts' (last_survivor_part): each life's annuity alone, less the
// joint status's, whose premiums it receives (paid while both are alive).
NUMPIPE_HD_INLINE void product_cash_flows(const ProductSpec& p, const RateView& rv, const MortalityView* laws,
                                          double premium, double* flows) {
  for (int k = 0; k < 2 * kYears; ++k) flows[k] = 0.0;
  if (p.lives != kLastSurvivorAnnuity) {
    status_cash_flows(p, rv, policy_status(p, laws), premium, 1.0, flows);
    return;
  }
  for (int k = 0; k < 3; ++k) {
    const ProductSpec q = last_survivor_part(p, k);
    status_cash_flows(q, rv, policy_status(q, laws), k == 2 ? premium : 0.0, k == 2 ? -1.0 : 1.0, flows);
  }
}

}  // namespace numpipe::integrate
