// integrate's internals, included by integrate.hpp after its public types: a policy's
// terms, the validation's parts, rates, grids, the plan.
//
// Both backends run the same three phases over a Plan built once on the host:
//   1. inner:  Inner(eta, k, t) for every distinct column (k, [t], steps) and every
//              eta stage point of the middle level  (the heavy part)
//   2. middle: Middle(x + t, t) for every stage point t of every policy's outer
//              level, a weighted sum over its column
//   3. outer:  the outer RK4 recurrence per policy, the reserve at whole years.
// Sharing is exact: Inner depends on (eta, k, t) only, and with a constant rate
// on (eta, k) alone, so a column is computed once per distinct (k, steps) -- per
// distinct (k, t, steps) with a yield curve -- and the result is bit-identical to
// calling Inner afresh for every Middle stage (tests check this).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace numpipe::integrate {

// The premium term (years from now): as given, or by default until retirement
// (spouse pension; 0 past it), until the annuity starts (life annuity; 0: a single
// premium), else the term.
NUMPIPE_HD_INLINE double premium_term_of(const Policy& p) {
  if (p.premium_term >= 0) return p.premium_term;
  if (p.product == kSpousePension) return p.r - p.x > 0 ? p.r - p.x : 0.0;
  if (p.product == kLifeAnnuity || p.product == kJointLifeAnnuity || p.product == kLastSurvivorAnnuity) return p.deferment;
  return p.term;
}
// The end of a policy's cover (years from now): its term, cut at age 120.
NUMPIPE_HD_INLINE double cover_end(const Policy& p) { return p.term < kMaxAge - p.x ? p.term : kMaxAge - p.x; }
// Whether a policy is a spouse pension with the default payments (no premium, unit
// benefit): the spec's arithmetic, bit for bit.
NUMPIPE_HD_INLINE bool plain_spouse_pension(const Policy& p) {
  return p.product == kSpousePension && p.premium == 0 && !p.equivalence && p.benefit == 1;
}

// Limits of the accepted input (exit 2 outside them, naming the value).
inline constexpr int kMaxStepsPerYear = 1000;
inline constexpr int kMaxCurvePoints = 1000;

// Throws a bad-input error (exit 2) naming the first policy or value out of range:
// x in [0, 119], g in [0, 120], r in [0, 120], steps in [1, 1000], a curve with
// increasing finite maturities >= 0 and finite rates in (-1, 1).
// Also checks the basis (and fills each table's forces): tables with whole
// consecutive ages, 0 <= q_x <= 1 (q_x < 1 below 120) or finite mu_x >= 0, covering
// the ages the integrals reach (the insured's from x, the spouse's from 1, up to 120);
// the marriage and spouse-age tables; each policy's product, laws and payments.
void validate(Problem& problem);
// Reads a curve table: two numbers a line (maturity rate), '#' comments, blank lines.
Curve parse_curve_text(const std::string& text, const std::string& label);

void validate_curve(const Curve& curve);
void validate_law(MortalityLaw& law);
void validate_spouse(const SpouseBasis& spouse);
void validate_policy_payments(const Problem& problem, std::size_t policy);
// RK4's stability limit on a step, |h| (r + mu) (model.hpp, stable_steps).
inline constexpr double kRk4StabilityLimit = 2.785;
// The faithful scheme takes the steps as asked: where a step is beyond RK4's stability
// limit for a law, the first such policy, level and age in words ("" where none).
// (The default scheme shortens such steps itself.)
std::string faithful_stability_warning(const Problem& problem);
// The rate in the form the kernels use (see RateView in model.hpp).
struct RateTable {
  std::vector<double> knots, alpha, beta;
  double constant = kDefaultRate;
  RateView view() const;
};
RateTable make_rate_table(const Problem& problem);

// A level's discretisation: stage points; step j uses points 2j (start), 2j+1
// (middle) and 2j+2 (end = next start) with size h[j].
struct Grid {
  std::vector<double> pts, h;
  std::vector<int> year;  // outer grids: whole year at each point, or -1
};
// The outer grid of a policy (whole years marked) and the middle grid for a
// given pension delay k (k matters only with align_breaks).
Grid outer_grid(const Policy& p, bool align);
Grid middle_grid(int h2, double k, bool align);
// The outer grid of a spouse pension under the problem's basis: with --align-breaks
// also at the premium term (a premium), at the insured's whole ages (a table's
// life) and at the marriage table's ages (its kinks) instead of tau = 15.
Grid outer_grid(const Problem& problem, const Policy& p);

// The basis in the form the kernels use: one view per law, the spouse assumptions
// (host pointers into the problem; the CUDA backend copies the arrays and points
// into its own).
struct BasisViews {
  std::vector<MortalityView> laws;
  SpouseView spouse;
};
BasisViews basis_views(const Problem& problem);
// A single-life policy as its chain integrates it (products.hpp).
ProductSpec product_spec(const Policy& p);
// ... with the problem's payment frequency and timing.
ProductSpec product_spec(const Problem& problem, const Policy& p);
// Every policy's (all single-life), by OpenMP's threads; steps: the RK4 steps of
// their chains (three chains with an equivalence premium).
std::vector<ProductSpec> product_specs(const Problem& problem, double& steps);
// The same into out[0..policies) (e.g. a pinned upload buffer: no copies).
void product_specs(const Problem& problem, ProductSpec* out, double& steps);

// The spouse pension's outer recurrence for one policy from its Middle values at
// the stage points t (steps h, whole years `year`): writes 121 years (NaN past
// 120 - x) and returns the premium. A plain policy (plain_spouse_pension) runs the
// spec's arithmetic; otherwise Thiele's equation with S = benefit x Middle and the
// premium while alive before the premium term (solved for with equivalence, as
// product_reserve does).
NUMPIPE_HD_INLINE double spouse_outer(const Policy& p, const RateView& rv, const MortalityView& insured, bool align,
                                      const double* t, const double* h, const int* year, std::int64_t npts,
                                      const double* middle, double* out) {
  // 0 after the term (the grid's years overwrite theirs), NaN past age 120.
  for (int y = 0; y < kYears; ++y) out[y] = y <= kMaxAge - p.x ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  // The insured's force and the rate at a stage point; aligned (the default), a
  // table's and a curve's one-sided values from the step's midpoint (its steps never
  // cross a whole age or a maturity).
  auto mu = [&](double tt, double tmid) {
    return align ? mortality_within(insured, p.x + tt, p.x + tmid) : mortality(insured, p.x + tt);
  };
  auto rate = [&](double tt, double tmid) { return align ? forward_rate_within(rv, tt, tmid) : forward_rate(rv, tt); };
  if (plain_spouse_pension(p)) {
    double V = 0;
    if (year[0] >= 0) out[year[0]] = V;
    for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
      double t0 = t[2 * j], tm = t[2 * j + 1], t1 = t[2 * j + 2], hj = h[j];
      double r0 = rate(t0, tm), rm = rate(tm, tm), r1 = rate(t1, tm);
      double m0 = mu(t0, tm), mm = mu(tm, tm), m1 = mu(t1, tm);
      double k1 = hj * outer_derivative(r0, m0, middle[2 * j], V);
      double k2 = hj * outer_derivative(rm, mm, middle[2 * j + 1], V + k1 / 2);
      double k3 = hj * outer_derivative(rm, mm, middle[2 * j + 1], V + k2 / 2);
      double k4 = hj * outer_derivative(r1, m1, middle[2 * j + 2], V + k3);
      V = V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
      if (year[2 * j + 2] >= 0) out[year[2 * j + 2]] = V;
    }
    return 0.0;
  }
  const double tp = premium_term_of(p), B = p.benefit;
  auto point = [&](double tt, double tmid, double M, double premium, bool benefits) {
    ThielePoint q;
    q.r = rate(tt, tmid);
    q.mu = mu(tt, tmid);
    q.S = benefits ? (B == 1.0 ? M : B * M) : 0.0;
    q.c = premium != 0.0 && (align ? tmid : tt) < tp ? premium : 0.0;
    return q;
  };
  auto chain = [&](double premium, bool benefits, bool write) {
    double V = 0;
    if (write && year[0] >= 0) out[year[0]] = V;
    for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
      double tm = t[2 * j + 1];
      V = thiele_step(V, h[j], point(t[2 * j], tm, middle[2 * j], premium, benefits),
                      point(tm, tm, middle[2 * j + 1], premium, benefits),
                      point(t[2 * j + 2], tm, middle[2 * j + 2], premium, benefits));
      if (write && year[2 * j + 2] >= 0) out[year[2 * j + 2]] = V;
    }
    return V;
  };
  double premium = p.premium;
  if (p.equivalence) premium = -chain(0.0, true, false) / chain(1.0, false, false);
  chain(premium, true, true);
  return premium;
}

struct Plan {
  std::size_t policies = 0;
  // Outer level, policies concatenated: stage points [outer_offset[p], outer_offset[p+1]),
  // steps from (outer_offset[p] - p) / 2.
  std::vector<std::int64_t> outer_offset;
  std::vector<double> outer_t, outer_h;
  std::vector<int> outer_year;
  // One Middle request per outer stage point: its tau = x + t and its column.
  std::vector<double> request_tau;
  std::vector<std::int32_t> request_column;
  // Columns: distinct (k, t if a curve, h2, h3) with their middle grid.
  std::vector<double> column_k, column_t;
  std::vector<std::int32_t> column_h3, column_grid, column_law;  // column_law: the spouse's law
  std::vector<std::int64_t> column_offset;  // into the inner values, size columns+1
  // Middle grids: points [grid_offset[g], grid_offset[g+1]), steps from (grid_offset[g] - g) / 2.
  std::vector<std::int64_t> grid_offset;
  std::vector<double> grid_eta, grid_h;
  RateTable rate;
  bool align = false;
  // Work counts (for rates in profiles and the bench).
  double inner_steps = 0;          // RK4 steps of Inner actually taken (shared columns once)
  double inner_steps_unshared = 0; // ... had every Middle call run its own Inner calls
  std::size_t columns() const { return column_k.size(); }
  std::size_t requests() const { return request_tau.size(); }
  std::size_t inner_values() const { return static_cast<std::size_t>(column_offset.back()); }
};

// Builds the plan of a whole problem, or of policies [first, last).
Plan make_plan(const Problem& problem, std::size_t first, std::size_t last);

// The distinct Middle calls of a plan. Middle(tau, t) of a request is a function of its
// column and its tau alone (its weights -gp(tau) h(eta, tau) on the column's grid times
// the column's Inner values), so requests with the same column and the same tau, bit
// for bit, have the same value: computed once, the same bits. A portfolio's policies
// share most of them (whole ages, the same outer grid within every year: 100000 mixed
// policies' 7 million requests are about 25000 calls). Numbered in request order (a
// sequential pass), so the numbering does not depend on the thread count.
struct MiddleCalls {
  std::vector<std::int32_t> column;      // per call
  std::vector<double> tau;               // per call
  std::vector<std::int32_t> of_request;  // per request: its call
  std::size_t size() const { return column.size(); }
};
MiddleCalls distinct_middle_calls(const Plan& plan);

}  // namespace numpipe::integrate
