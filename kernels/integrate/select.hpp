// integrate: the everyday basis of the single-life products and of annuities on two
// lives: select mortality and the status whose force the products' chains integrate
// (one life, or two independent lives jointly). NUMPIPE_HD: both backends compute the
// same force from the same source.
//
// Select mortality (Dickson, Hardy and Waters, "Actuarial Mathematics for Life
// Contingent Risks" (AMLCR), 2nd ed., sec. 3.7-3.9): a life accepted for insurance at
// age [x] dies at a lower rate during a select period of d years; s years after the
// selection its force is mu_[x]+s, after d years the ultimate mu_{x+s}. Here the
// selection is at the policy's start (the life aged x now, s = t). Two forms:
//   - a factor: mu_[x]+s = f^(d - s) mu_{x+s} for s < d, the Standard Select Survival
//     Model's form (AMLCR sec. 3.9: d = 2, f = 0.9 on the Makeham law A = 0.00022,
//     B = 2.7e-6, c = 1.124);
//   - a select table: q_[x]+k for k = 0 .. d-1 by age at selection [x] (whole), the
//     force constant within each year of duration: mu = -ln(1 - q_[x]+k).
// Durations end at whole years from now, which are breaks of the aligned scheme's
// steps already, so the select period keeps its fourth order.
//
// Two lives (AMLCR ch. 9, independent future lifetimes): while both are alive the
// joint-life status fails at the first death, its force mu_x(x + t) + mu_y(y + t).
#pragma once
#include <cmath>

#include "model.hpp"

namespace numpipe::integrate {

// Mortality improvement: a table's q_x(base) and its improvement rates AI_x by age,
//   q_x(year) = q_x(base) (1 - AI_x)^(year - base year),
// or AI(x, j) by age and calendar year j (the CMI and SOA MP scales' convention: the rate
// of year j takes q from year j - 1 to j),
//   q_x(year) = q_x(base) prod_{j = base + 1 .. year} (1 - AI(x, j)),
// the last year's rates holding after the table's last year; the force constant within
// each year of age and each year from now: mu = -ln(1 - q). The life aged `entry` now, in
// the calendar year `year`, t years on: its age entry + t in the year year + floor(t) (the
// cohort's diagonal; whole years from now are breaks; so are a table's ages).
NUMPIPE_HD_INLINE double improved_force(const MortalityView& m, double entry, double year, double inside) {
  const int row = mortality_row(m, entry + inside);
  const double years = year - m.improve_base_year + floor(inside);  // whole with improve_cum (validated)
  double factor;
  if (m.improve_cum) {
    const int k = years < static_cast<double>(m.improve_span) ? static_cast<int>(years) : m.improve_span;
    factor = m.improve_cum[row * (m.improve_span + 1) + k] * pow(1.0 - m.improve_ai[row], years - static_cast<double>(k));
  } else {
    factor = pow(1.0 - m.improve_ai[row], years);
  }
  return -log1p(-m.improve_q[row] * factor);
}

// The force of a life selected at age `entry` now, t years on (`inside` a point of the
// step strictly inside it for the aligned scheme's one-sided values, or t itself); year:
// the calendar year now (for an improving table).
NUMPIPE_HD_INLINE double select_force(const MortalityView& m, double entry, double t, double inside, double year = 0.0) {
  if (m.improve_q) return improved_force(m, entry, year, inside);
  if (m.select_years > 0 && inside < static_cast<double>(m.select_years)) {
    if (m.select_mu) {
      const int duration = static_cast<int>(floor(inside));
      return m.select_mu[mortality_row(m, entry) * m.select_years + (duration < 0 ? 0 : duration)];
    }
    return pow(m.select_factor, static_cast<double>(m.select_years) - t) * mortality_within(m, entry + t, entry + inside);
  }
  return mortality_within(m, entry + t, entry + inside);
}

// The largest force of a select life on the durations [t0, t1] (for the steps a steep
// law needs): the ultimate law's, or the select period's where it reaches above.
NUMPIPE_HD_INLINE double select_max_force(const MortalityView& m, double entry, double t0, double t1) {
  double v = max_force(m, entry + t0, entry + t1);
  if (m.select_years > 0 && t0 < static_cast<double>(m.select_years)) {
    if (m.select_mu) {
      const int row = mortality_row(m, entry);
      for (int k = static_cast<int>(floor(t0)); k < m.select_years && static_cast<double>(k) <= t1; ++k)
        v = fmax(v, m.select_mu[row * m.select_years + (k < 0 ? 0 : k)]);
    } else if (m.select_factor > 1.0) {
      v = v * pow(m.select_factor, static_cast<double>(m.select_years) - t0);
    }
  }
  return v;
}

// The status a product's chain integrates: the insured alone (aged x now), or the
// insured and a second life (aged y now) jointly: alive while both are.
struct LifeStatus {
  MortalityView first, second;
  double x = 0, y = 0;
  int joint = 0;
  double year = 0;  // the calendar year now (improving tables)
};
NUMPIPE_HD_INLINE double status_force(const LifeStatus& L, double t, double inside) {
  const double mu = select_force(L.first, L.x, t, inside, L.year);
  return L.joint ? mu + select_force(L.second, L.y, t, inside, L.year) : mu;
}
NUMPIPE_HD_INLINE double status_max_force(const LifeStatus& L, double t0, double t1) {
  const double mu = select_max_force(L.first, L.x, t0, t1);
  return L.joint ? mu + select_max_force(L.second, L.y, t0, t1) : mu;
}
// The largest whole age of the second life (a table's, whose force changes there) below
// hi (by more than tol) and above lo, as a time from now; else lo.
NUMPIPE_HD_INLINE double second_life_break_below(const LifeStatus& L, double lo, double hi, double tol) {
  if (!L.joint || !L.second.table) return lo;
  const double b = ceil(L.y + hi - tol) - 1.0 - L.y;
  return (b < hi - tol && b > lo + tol) ? b : lo;
}

}  // namespace numpipe::integrate
