// integrate: the actuarial basis (mortality laws and tables per life, the spouse
// assumptions), the products' payments, and their checks.
#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <sstream>
#include <thread>

#include <omp.h>

#include "common/error.hpp"
#include "common/profile.hpp"
#include "common/strings.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

namespace {
const char* const kProductNames[kProductCodes] = {"spouse pension",      "life annuity",
                                                  "term insurance",      "pure endowment",
                                                  "endowment insurance", "joint-life annuity",
                                                  "last-survivor annuity"};
}  // namespace

MortalityLaw gompertz_makeham(const std::string& name, double A, double B, double C) {
  MortalityLaw m;
  m.name = name;
  m.A = A;
  m.B = B;
  m.C = C;
  return m;
}

std::vector<MortalityLaw> default_laws() {
  // Danish women and men (spec "Functions"): B = 5.728 - 10 and 5.880 - 10.
  return {gompertz_makeham("insured", 0.0005, 5.728 - 10.0, 0.038),
          gompertz_makeham("spouse", 0.0005, 5.880 - 10.0, 0.038)};
}

MortalityView MortalityLaw::view() const {
  MortalityView v;
  v.select_years = select_years;
  v.select_factor = select_factor;
  if (!select_force.empty()) v.select_mu = select_force.data();
  if (!improve_q.empty()) {
    v.improve_q = improve_q.data();
    v.improve_ai = improvement.data();
    v.improve_base_year = improvement_base_year;
    if (improving_by_year()) {
      v.improve_cum = improve_cum.data();
      v.improve_span = static_cast<int>(improve_cum.size() / improve_q.size()) - 1;
    }
  }
  if (!table) {
    v.A = A;
    v.B = B;
    v.C = C;
    return v;
  }
  if (force.empty()) fail_internal("integrate: mortality table '" + name + "' used before validation");
  v.table = 1;
  v.age0 = static_cast<int>(ages.front());
  v.ages = static_cast<int>(force.size());
  v.mu = force.data();
  return v;
}

SpouseView SpouseBasis::view() const {
  SpouseView v;
  if (marriage_table) {
    v.marriage_table = 1;
    v.marriage_points = static_cast<int>(marriage_age.size());
    v.marriage_age = marriage_age.data();
    v.marriage_prob = marriage_prob.data();
  }
  if (age_table) {
    v.age_table = 1;
    v.age_points = static_cast<int>(age_diff.size());
    v.age_diff = age_diff.data();
    v.age_density = age_density.data();
  } else {
    v.mean = mean;
    // The spec's constants for the default spread (the same doubles as computed).
    v.norm = sd == 3 ? kInvSqrt2PiSigma : 1.0 / (std::sqrt(2 * M_PI) * sd);
    v.inv2s2 = sd == 3 ? kInvTwoSigma2 : 1.0 / (2 * sd * sd);
  }
  return v;
}

BasisViews basis_views(const Problem& pb) {
  BasisViews b;
  for (const MortalityLaw& m : pb.laws) b.laws.push_back(m.view());
  b.spouse = pb.spouse.view();
  return b;
}

// A select period: whole years in [1, 10]; a factor in (0, 10], or a select table's
// q_[x]+k in [0, 1), select_years of them for every row, made into forces.
void validate_select(MortalityLaw& m, const std::string& at) {
  m.select_force.clear();
  if (m.select_years == 0 && m.select_q.empty()) return;
  if (!(m.select_years >= 1 && m.select_years <= 10))
    fail_input(at + ": the select period must be whole years in [1, 10]: " + std::to_string(m.select_years));
  if (m.select_q.empty()) {
    if (!std::isfinite(m.select_factor) || !(m.select_factor > 0) || m.select_factor > 10)
      fail_input(at + ": the select factor must be in (0, 10]: " + exact_text(m.select_factor));
    return;
  }
  const std::size_t d = static_cast<std::size_t>(m.select_years);
  if (!m.table || m.select_q.size() != m.ages.size() * d)
    fail_input(at + ": a select table needs " + std::to_string(d) + " select rates for each of its " +
               std::to_string(m.ages.size()) + " ages");
  m.select_force.resize(m.force.size() * d);
  for (std::size_t i = 0; i < m.ages.size(); ++i)
    for (std::size_t k = 0; k < d; ++k) {
      const double q = m.select_q[i * d + k];
      if (!std::isfinite(q) || q < 0 || q >= 1)
        fail_input(at + " row " + std::to_string(i + 1) + " (age " + exact_text(m.ages[i]) + "): q_[x]+" + std::to_string(k) +
                   " must be in [0, 1): " + exact_text(q));
      if (i < m.force.size()) m.select_force[i * d + k] = -std::log1p(-q);
    }
}

// Improvement rates by age and calendar year: whole consecutive years, the first no later
// than the year after the base year (the first the rates improve), one rate in [0, 1) for
// each row and year; the rates of the last year serve the years after it (improvement).
void validate_improvement_by_year(MortalityLaw& m, const std::string& at) {
  const std::vector<double>& years = m.improvement_years;
  const double base = m.improvement_base_year;
  if (base != std::floor(base))
    fail_input(at + ": improvement rates by calendar year need a whole base year: " + exact_text(base));
  for (std::size_t j = 0; j < years.size(); ++j) {
    if (years[j] != std::floor(years[j]) || std::fabs(years[j]) > 1e5)
      fail_input(at + ": improvement rates' years must be whole calendar years: " + exact_text(years[j]));
    if (j > 0 && years[j] != years[j - 1] + 1)
      fail_input(at + ": improvement rates' years must increase by 1, got " + exact_text(years[j]) + " after " +
                 exact_text(years[j - 1]));
  }
  if (years.front() > base + 1)
    fail_input(at + ": improvement rates start in " + exact_text(years.front()) + "; the base year is " +
               exact_text(base) + ", so they must start in " + exact_text(base + 1) + " or before");
  const std::size_t n = years.size();
  if (m.improvement_by_year.size() != m.ages.size() * n)
    fail_input(at + ": improvement rates: " + std::to_string(m.improvement_by_year.size()) + " for " +
               std::to_string(m.ages.size()) + " ages x " + std::to_string(n) + " years");
  m.improvement.resize(m.ages.size());
  for (std::size_t i = 0; i < m.ages.size(); ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const double ai = m.improvement_by_year[i * n + j];
      if (!(ai >= 0 && ai < 1))
        fail_input(at + " row " + std::to_string(i + 1) + " (age " + exact_text(m.ages[i]) + ", year " +
                   exact_text(years[j]) + "): the improvement rate must be in [0, 1): " + exact_text(ai));
    }
    m.improvement[i] = m.improvement_by_year[i * n + n - 1];
  }
}

// improve_cum (select.hpp): per row used, prod_{j=1..k} (1 - AI(x, base + j)) for k = 0 ..
// span, span the years from the base year to the table's last (0 if none is later).
void cumulate_improvement(MortalityLaw& m) {
  const std::vector<double>& years = m.improvement_years;
  const std::size_t n = years.size(), rows = m.improve_q.size();
  const double first = years.front(), last = years.back(), base = m.improvement_base_year;
  const std::size_t span = last > base ? static_cast<std::size_t>(last - base) : 0;
  m.improve_cum.assign(rows * (span + 1), 1.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 1; k <= span; ++k) {
      const std::size_t col = static_cast<std::size_t>(std::min(base + static_cast<double>(k), last) - first);
      m.improve_cum[i * (span + 1) + k] = m.improve_cum[i * (span + 1) + k - 1] * (1.0 - m.improvement_by_year[i * n + col]);
    }
}

void validate_law(MortalityLaw& m) {
  const std::string at = "mortality " + std::string(m.table ? "table" : "law") + " '" + m.name + "'";
  if (!m.table) {
    validate_select(m, at);
    if (!std::isfinite(m.A) || !std::isfinite(m.B) || !std::isfinite(m.C))
      fail_input(at + ": Gompertz-Makeham constants must be finite: " + exact_text(m.A) + "," + exact_text(m.B) + "," + exact_text(m.C));
    // mu(a) = A + 10^(B + C a) is monotone in a: its extremes are at the ends of [0, 120].
    for (double age : {0.0, kMaxAge}) {
      double mu = mortality(m.view(), age);
      if (!std::isfinite(mu) || mu < 0 || mu > 1e6)
        fail_input(at + ": the force of mortality at age " + exact_text(age) + " must be finite, >= 0 and <= 1e6: " + exact_text(mu));
    }
    return;
  }
  if (m.ages.size() != m.values.size()) fail_input(at + ": ages and values differ in number");
  if (m.ages.empty()) fail_input(at + ": no rows");
  const char* what = m.q ? "q_x" : "mu_x";
  m.force.assign(m.ages.size(), 0.0);
  for (std::size_t i = 0; i < m.ages.size(); ++i) {
    const double age = m.ages[i], v = m.values[i];
    const std::string row = at + " row " + std::to_string(i + 1) + " (age " + exact_text(age) + ")";
    if (!std::isfinite(age) || age != std::floor(age) || age < 0 || age > 200)
      fail_input(row + ": ages must be whole numbers in [0, 200]");
    if (i > 0 && age != m.ages[i - 1] + 1)
      fail_input(row + ": ages must increase by 1 from row to row, after age " + exact_text(m.ages[i - 1]));
    if (m.q) {
      if (!std::isfinite(v) || v < 0 || v > 1) fail_input(row + ": q_x must be in [0, 1]: " + exact_text(v));
      // q_x = 1 makes the force infinite; RK4 cannot step through it.
      if (v == 1 && age < kMaxAge)
        fail_input(row + ": q_x = 1 below age 120 (an infinite force of mortality; every life ends at 120 here)");
      m.force[i] = -std::log1p(-v);  // constant force within the year: 1 - q = exp(-mu)
    } else {
      if (!std::isfinite(v) || v < 0) fail_input(row + ": mu_x must be finite and >= 0: " + exact_text(v));
      m.force[i] = v;
    }
    if (age < kMaxAge && m.force[i] > 1e6) fail_input(row + ": " + what + " gives a force of mortality above 1e6: " + exact_text(v));
  }
  // Rows from age 120 on are not used (every life ends there; age 120 itself takes
  // the force of the year before it).
  std::size_t used = 0;
  while (used < m.ages.size() && m.ages[used] < kMaxAge) ++used;
  m.force.resize(used);
  // The last row's force holds through age 120.
  if (m.ages.back() < kMaxAge - 1 || m.force.empty())
    fail_input(at + ": ends at age " + exact_text(m.ages.back()) +
               "; the integrals reach age 120 (the last row must be for age 119 or later)");
  validate_select(m, at);
  m.improve_q.clear();
  m.improve_cum.clear();
  if (m.improving()) {
    if (!m.q || m.select())
      fail_input(at + ": mortality improvement applies to a table of q_x without a select period");
    if (m.improving_by_year()) validate_improvement_by_year(m, at);
    if (m.improvement.size() != m.ages.size())
      fail_input(at + ": improvement factors: " + std::to_string(m.improvement.size()) + " for " +
                 std::to_string(m.ages.size()) + " ages");
    if (!std::isfinite(m.improvement_base_year) || std::fabs(m.improvement_base_year) > 1e5)
      fail_input(at + ": the improvement's base year must be finite: " + exact_text(m.improvement_base_year));
    for (std::size_t i = 0; i < m.improvement.size(); ++i)
      if (!(m.improvement[i] >= 0 && m.improvement[i] < 1))
        fail_input(at + " row " + std::to_string(i + 1) + " (age " + exact_text(m.ages[i]) +
                   "): the improvement factor AI_x must be in [0, 1): " + exact_text(m.improvement[i]));
    m.improve_q.assign(m.values.begin(), m.values.begin() + static_cast<std::ptrdiff_t>(m.force.size()));
    if (m.improving_by_year()) cumulate_improvement(m);
  }
}

void validate_spouse(const SpouseBasis& s) {
  if (s.marriage_table) {
    const auto& a = s.marriage_age;
    const auto& p = s.marriage_prob;
    if (a.size() != p.size() || a.empty()) fail_input("marriage table: no rows, or ages and probabilities differ in number");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string row = "marriage table row " + std::to_string(i + 1) + " (age " + exact_text(a[i]) + ")";
      if (!std::isfinite(a[i])) fail_input(row + ": the age must be finite");
      if (i > 0 && !(a[i] > a[i - 1])) fail_input(row + ": ages must increase, after " + exact_text(a[i - 1]));
      if (!std::isfinite(p[i]) || p[i] < 0 || p[i] > 1) fail_input(row + ": the probability must be in [0, 1]: " + exact_text(p[i]));
    }
  }
  if (s.age_table) {
    const auto& d = s.age_diff;
    const auto& f = s.age_density;
    if (d.size() != f.size() || d.size() < 2)
      fail_input("spouse-age table: at least two rows (difference, density) are needed");
    double area = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      const std::string row = "spouse-age table row " + std::to_string(i + 1) + " (difference " + exact_text(d[i]) + ")";
      if (!std::isfinite(d[i]) || std::fabs(d[i]) >= kMaxAge) fail_input(row + ": the difference must be in (-120, 120)");
      if (i > 0 && !(d[i] > d[i - 1])) fail_input(row + ": differences must increase, after " + exact_text(d[i - 1]));
      if (!std::isfinite(f[i]) || f[i] < 0) fail_input(row + ": the density must be finite and >= 0: " + exact_text(f[i]));
      if (i > 0) area += 0.5 * (f[i] + f[i - 1]) * (d[i] - d[i - 1]);
    }
    // A density integrates to 1 (linearly interpolated: the trapezoids' area).
    if (!(std::fabs(area - 1) <= 0.01))
      fail_input("spouse-age table: the density integrates to " + exact_text(area) + ", not 1 (within 1%)");
  } else {
    if (!std::isfinite(s.mean) || std::fabs(s.mean) >= kMaxAge)
      fail_input("spouse age: the mean difference must be in (-120, 120): " + exact_text(s.mean));
    if (!std::isfinite(s.sd) || !(s.sd >= 0.01) || s.sd > kMaxAge)
      fail_input("spouse age: the spread (standard deviation) must be in [0.01, 120]: " + exact_text(s.sd));
  }
}

void validate_policy_payments(const Problem& pb, std::size_t i) {
  const Policy& p = pb.policies[i];
  const std::string at = "policy " + std::to_string(i) + ": ";
  if (p.product < 0 || p.product >= kProductCodes) {
    std::string known;
    for (int k = 0; k < kProductCodes; ++k) known += (k ? ", " : "") + std::to_string(k) + " " + kProductNames[k];
    fail_input(at + "unknown product " + std::to_string(p.product) + " (" + known + ")");
  }
  const int nlaws = static_cast<int>(pb.laws.size());
  if (p.insured < 0 || p.insured >= nlaws || p.spouse < 0 || p.spouse >= nlaws)
    fail_input(at + "mortality law index out of range (" + std::to_string(nlaws) + " laws): insured " +
               std::to_string(p.insured) + ", spouse " + std::to_string(p.spouse));
  if (!std::isfinite(p.benefit) || std::fabs(p.benefit) > 1e12) fail_input(at + "benefit must be finite: " + exact_text(p.benefit));
  if (!std::isfinite(p.premium) || std::fabs(p.premium) > 1e12) fail_input(at + "premium must be finite: " + exact_text(p.premium));
  if (!(p.premium_term >= 0 || p.premium_term == -1) || !std::isfinite(p.premium_term))
    fail_input(at + "premium term must be >= 0 years: " + exact_text(p.premium_term));
  const bool two_lives = p.product == kJointLifeAnnuity || p.product == kLastSurvivorAnnuity;
  if (two_lives && !(p.y >= 0 && p.y <= 119))
    fail_input(at + "the " + kProductNames[p.product] + " needs the second life's age now, in [0, 119]: " + exact_text(p.y));
  // The end of the status: 120 for the life, for two lives the older's (joint life) or the younger's.
  const double horizon = kMaxAge - (p.product == kJointLifeAnnuity ? std::max(p.x, p.y)
                                    : p.product == kLastSurvivorAnnuity ? std::min(p.x, p.y) : p.x);
  if (!(p.term > 0) || !std::isfinite(p.term)) fail_input(at + "term must be > 0 years: " + exact_text(p.term));
  if (p.product != kSpousePension) {
    if (!(p.deferment >= 0) || !std::isfinite(p.deferment))
      fail_input(at + "deferment must be >= 0 years: " + exact_text(p.deferment));
    if ((p.product == kLifeAnnuity || two_lives) && !(p.deferment < std::min(p.term, horizon)))
      fail_input(at + "the annuity's deferment " + exact_text(p.deferment) + " reaches its end " +
                 exact_text(std::min(p.term, horizon)) + " (term, or age 120): it would never pay");
  }
  if (p.equivalence) {
    // A last-survivor annuity's premiums are paid while both lives are.
    const double end = std::min(p.term, p.product == kLastSurvivorAnnuity ? kMaxAge - std::max(p.x, p.y) : horizon);
    if (!(std::min(premium_term_of(p), end) > 0))
      fail_input(at + "the equivalence premium needs premiums to solve for, but the premium term is " +
                 exact_text(premium_term_of(p)) + " years");
  }
  // The tables cover the ages the integrals reach: the insured's from x, the
  // spouse's (spouse pensions) from 1, the middle level's lowest age.
  const MortalityLaw& ins = pb.laws[static_cast<std::size_t>(p.insured)];
  if (ins.table && ins.ages.front() > std::floor(p.x))
    fail_input(at + "mortality table '" + ins.name + "' starts at age " + exact_text(ins.ages.front()) +
               "; the insured is aged " + exact_text(p.x));
  const MortalityLaw& second = pb.laws[static_cast<std::size_t>(p.spouse)];
  if (two_lives && second.table && second.ages.front() > std::floor(p.y))
    fail_input(at + "mortality table '" + second.name + "' starts at age " + exact_text(second.ages.front()) +
               "; the second life is aged " + exact_text(p.y));
  // A select table's rows are by whole age at selection (the age now).
  auto select_entry = [&](const MortalityLaw& m, double age, const char* life) {
    if (m.select_q.empty()) return;
    if (age != std::floor(age))
      fail_input(at + "select table '" + m.name + "' is by whole age at selection; the " + life + " is aged " + exact_text(age));
  };
  select_entry(ins, p.x, "insured");
  if (two_lives) select_entry(second, p.y, "second life");
  if (p.product == kSpousePension && (ins.improving() || second.improving()))
    fail_input(at + "mortality improvement ('" + (ins.improving() ? ins.name : second.name) +
               "') is for the single-life products and annuities on two lives, not the spouse pension, whose model "
               "(the spouse's pension integrated over the spouse's age at the insured's death) takes both lives' "
               "forces by attained age alone");
  if (!std::isfinite(p.year) || std::fabs(p.year) > 1e5) fail_input(at + "the valuation year must be finite: " + exact_text(p.year));
  for (const MortalityLaw* m : {&ins, two_lives ? &second : &ins}) {
    if (m->improving() && !(p.year >= m->improvement_base_year))
      fail_input(at + "the valuation year " + exact_text(p.year) + " is before the base year " +
                 exact_text(m->improvement_base_year) + " of the improving table '" + m->name + "'");
    if (m->improving_by_year() && p.year != std::floor(p.year))
      fail_input(at + "the valuation year must be a whole year with the improvement rates by calendar year of '" +
                 m->name + "': " + exact_text(p.year));
  }
  if (p.product == kSpousePension && (ins.select() || second.select()))
    fail_input(at + "select mortality ('" + (ins.select() ? ins.name : second.name) +
               "') is for the single-life products and annuities on two lives, not the spouse pension, whose model "
               "(the spouse's pension integrated over the spouse's age at the insured's death) takes both lives' "
               "forces by attained age alone");
  if (p.rate_basis < -1 || p.rate_basis >= static_cast<int>(pb.rate_bases.size()))
    fail_input(at + "interest basis index out of range (" + std::to_string(pb.rate_bases.size()) +
               " given): " + std::to_string(p.rate_basis));
  if (p.product == kSpousePension) {
    const MortalityLaw& sp = second;
    if (sp.table && sp.ages.front() > kMiddleLow)
      fail_input(at + "mortality table '" + sp.name + "' of the spouse starts at age " + exact_text(sp.ages.front()) +
                 "; the spouse's integrals reach age 1");
  }
}

ProductSpec product_spec(const Policy& p) {
  ProductSpec s;
  double horizon = kMaxAge - p.x;
  s.x = p.x;
  if (p.product == kJointLifeAnnuity || p.product == kLastSurvivorAnnuity) {
    s.lives = p.product;
    s.second = p.spouse;
    s.y = p.y;
    horizon = kMaxAge - (p.product == kJointLifeAnnuity ? std::max(p.x, p.y) : std::min(p.x, p.y));
  }
  s.end = std::min(p.term, horizon);
  const bool reaches = p.term < horizon;  // a sum at the term; none at the horizon 120
  switch (p.product) {
    case kLifeAnnuity:
    case kJointLifeAnnuity:
    case kLastSurvivorAnnuity:
      s.annuity = p.benefit;
      s.from = p.deferment;
      break;
    case kTermInsurance:
      s.death = p.benefit;
      break;
    case kPureEndowment:
      s.end_value = reaches ? p.benefit : 0.0;
      break;
    case kEndowmentInsurance:
      s.death = p.benefit;
      s.end_value = reaches ? p.benefit : 0.0;
      break;
    default:
      fail_internal("integrate: product_spec of a spouse pension");
  }
  s.premium_end = std::min(premium_term_of(p), s.end);
  s.premium = p.premium;
  s.h1 = p.h1;
  s.insured = p.insured;
  s.equivalence = p.equivalence ? 1 : 0;
  s.year = p.year;
  return s;
}

ProductSpec product_spec(const Problem& pb, const Policy& p) {
  ProductSpec s = product_spec(p);
  s.frequency = pb.frequency;
  s.advance = pb.advance ? 1 : 0;
  return s;
}

Problem halved_steps(const Problem& pb) {
  Problem half = pb;
  for (Policy& p : half.policies) {
    p.h1 = (p.h1 + 1) / 2;
    p.h2 = (p.h2 + 1) / 2;
    p.h3 = (p.h3 + 1) / 2;
  }
  return half;
}

Problem with_steps(const Problem& pb, int steps) {
  Problem out = pb;
  for (Policy& p : out.policies) p.h1 = p.h2 = p.h3 = steps;
  return out;
}

ErrorEstimate richardson_estimate(const Problem& pb, const Result& fine, const Result& half) {
  ErrorEstimate e;
  const int order = pb.align_breaks ? 4 : 1;
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    const Policy& p = pb.policies[i];
    const double q = static_cast<double>(p.h1) / static_cast<double>((p.h1 + 1) / 2);
    const double factor = q > 1 ? 1.0 / (std::pow(q, order) - 1.0) : 1.0;
    double worst = 0, largest = 0;
    for (int y = 0; y < kYears; ++y) {
      const double a = fine.reserve[i * kYears + y], b = half.reserve[i * kYears + y];
      if (std::isnan(a) || std::isnan(b)) continue;  // past age 120
      worst = std::max(worst, std::fabs(a - b) * factor);
      largest = std::max(largest, std::fabs(a));
    }
    e.absolute = std::max(e.absolute, worst);
    if (largest > 0) e.relative = std::max(e.relative, worst / largest);
  }
  return e;
}

std::string faithful_stability_warning(const Problem& pb) {
  const RateTable rate = make_rate_table(pb);
  const RateView rv = rate.view();
  const double r = max_rate(rv, 0.0, kMaxAge);
  const BasisViews bv = basis_views(pb);
  // The first whole age in [from, 120) whose year of age is beyond the limit at `steps` a year, or -1.
  auto first_age = [&](const MortalityView& m, double from, int steps) {
    for (double a = std::floor(from); a < kMaxAge; a += 1)
      if ((r + max_force(m, std::max(a, from), a + 1)) / steps > kRk4StabilityLimit) return a;
    return -1.0;
  };
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    const Policy& p = pb.policies[i];
    auto say = [&](const char* life, double age, int steps, const char* option) {
      std::ostringstream o;
      o << "policy " << i << ": " << steps << (steps == 1 ? " step" : " steps") << " a year (" << option
        << ") is beyond RK4's stability limit for the " << life << "'s force of mortality from age " << age
        << " (h (r + mu) > " << kRk4StabilityLimit
        << "): the faithful scheme's reserves there may oscillate; the default scheme shortens such steps";
      return o.str();
    };
    const MortalityView& ins = bv.laws[static_cast<std::size_t>(p.insured)];
    if ((r + max_force(ins, p.x, p.x + cover_end(p))) / p.h1 > kRk4StabilityLimit) {
      const double a = first_age(ins, p.x, p.h1);
      if (a >= 0 && a < p.x + cover_end(p)) return say("insured", a, p.h1, "h1");
    }
    if (p.product == kSpousePension) {
      const MortalityView& sp = bv.laws[static_cast<std::size_t>(p.spouse)];
      const double a = first_age(sp, kMiddleLow, p.h3);
      if (a >= 0) return say("spouse", a, p.h3, "h3");
    }
  }
  return "";
}

std::vector<ProductSpec> product_specs(const Problem& pb, double& steps) {
  std::vector<ProductSpec> specs(pb.policies.size());
  product_specs(pb, specs.data(), steps);
  return specs;
}

void product_specs(const Problem& pb, ProductSpec* specs, double& steps) {
  const std::int64_t n = static_cast<std::int64_t>(pb.policies.size());
  double total = 0;  // whole numbers: the same sum in any order
  const RateTable rate = make_rate_table(pb);
  const RateView rv = rate.view();
  const BasisViews bv = basis_views(pb);
#pragma omp parallel for schedule(static) reduction(+ : total) if (n > 20000)
  for (std::int64_t i = 0; i < n; ++i) {
    specs[i] = product_spec(pb, pb.policies[i]);
    total += product_steps(specs[i], rv, bv.laws.data(), pb.align_breaks) * (specs[i].equivalence ? 3.0 : 1.0);
  }
  steps = total;
}

}  // namespace numpipe::integrate

namespace numpipe::integrate {

Result solve_split(const Problem& pb, const PartSolver& spouse, const PartSolver& products) {
  auto later = [](const PartSolver& solve) {
    return PartStarter([&solve](const Problem& part, const RowSink* sink) {
      return PartFinish([&solve, &part, sink] { return solve(part, sink); });
    });
  };
  return solve_split(pb, later(spouse), later(products));
}

Result solve_split(const Problem& pb, const PartStarter& spouse, const PartStarter& products, bool concurrent,
                   bool touch_pages) {
  const std::size_t n = pb.policies.size();
  const std::int64_t ns = static_cast<std::int64_t>(n);
  // Counted first, by OpenMP's threads: a batch of one kind (the spec's portfolio)
  // goes to its solver without a pass that builds index lists.
  std::int64_t singles = 0;
#pragma omp parallel for schedule(static) reduction(+ : singles) if (ns > 20000)
  for (std::int64_t i = 0; i < ns; ++i) singles += pb.policies[static_cast<std::size_t>(i)].product != kSpousePension;
  if (singles == 0) return spouse(pb, nullptr)();
  const std::int64_t counts[2] = {ns - singles, singles};
  if (counts[0] == 0) {
    Result r = products(pb, nullptr)();
    r.products = n;
    return r;
  }
  Result res;
  HostTimer pages;
  // Not touched here: the parts' parallel writes take the page faults, or (with
  // touch_pages, the parts in turn) helper threads from here on, beside the parts'
  // plans, and the caller's OpenMP team while the devices work.
  const bool touch = touch_pages && !concurrent;
  res.reserve.resize(n * kYears);
  advise_huge_pages(res.reserve.data(), res.reserve.size() * sizeof(double));
  TeamShare team;
  std::unique_ptr<PageFaulter> faulter;
  if (touch) faulter = fault_pages_early(res.reserve.data(), res.reserve.size(), team);
  res.premium.assign(n, 0.0);
  double pages_seconds = pages.seconds();
  // Each part's policy indices and its policies, in policy order, built by OpenMP's
  // threads over fixed blocks (a block's place in a part is the count of the blocks
  // before it), so the lists do not depend on the thread count.
  constexpr std::int64_t kBlock = 4096;
  const std::int64_t nblocks = (ns + kBlock - 1) / kBlock;
  std::vector<std::int64_t> block_start[2];
  for (auto& b : block_start) b.assign(static_cast<std::size_t>(nblocks) + 1, 0);
#pragma omp parallel for schedule(static) if (ns > 20000)
  for (std::int64_t b = 0; b < nblocks; ++b) {
    std::int64_t spouses = 0;
    const std::int64_t end = std::min(ns, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < end; ++i) spouses += pb.policies[static_cast<std::size_t>(i)].product == kSpousePension;
    block_start[0][static_cast<std::size_t>(b) + 1] = spouses;
    block_start[1][static_cast<std::size_t>(b) + 1] = end - b * kBlock - spouses;
  }
  for (auto& bs : block_start)
    for (std::size_t b = 0; b < static_cast<std::size_t>(nblocks); ++b) bs[b + 1] += bs[b];
  std::vector<std::int64_t> which[2];  // policy indices: spouse pensions, products
  Problem sub[2];
  RowSink sink[2];
  for (int part = 0; part < 2; ++part) {
    sub[part].rate = pb.rate;
    sub[part].curve = pb.curve;
    sub[part].align_breaks = pb.align_breaks;
    sub[part].laws = pb.laws;
    sub[part].spouse = pb.spouse;
    which[part].resize(static_cast<std::size_t>(counts[part]));
    sub[part].policies.resize(static_cast<std::size_t>(counts[part]));
  }
#pragma omp parallel for schedule(static) if (ns > 20000)
  for (std::int64_t b = 0; b < nblocks; ++b) {
    std::int64_t at[2] = {block_start[0][static_cast<std::size_t>(b)], block_start[1][static_cast<std::size_t>(b)]};
    const std::int64_t end = std::min(ns, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < end; ++i) {
      const Policy& p = pb.policies[static_cast<std::size_t>(i)];
      const int part = p.product == kSpousePension ? 0 : 1;
      which[part][static_cast<std::size_t>(at[part])] = i;
      sub[part].policies[static_cast<std::size_t>(at[part])] = p;
      ++at[part];
    }
  }
  for (int part = 0; part < 2; ++part)
    sink[part] = RowSink{res.reserve.data(), res.premium.data(), which[part].data(), touch};
  Result r[2];
  if (concurrent) {
    // Run at once, each part's OpenMP regions get a share of the threads: two full
    // teams on the same cores would oversubscribe them (each team's barriers wait
    // for threads the other team has descheduled). The bits do not depend on it.
    std::exception_ptr error[2];
    const int threads = omp_get_max_threads();
    const int share[2] = {std::max(1, threads - threads / 2), std::max(1, threads / 2)};
    auto run = [&](int part) {
      omp_set_num_threads(share[part]);  // this host thread's own setting
      try {
        r[part] = (part == 0 ? spouse : products)(sub[part], &sink[part])();
      } catch (...) {
        error[part] = std::current_exception();
      }
    };
    std::thread other(run, 1);
    run(0);
    other.join();
    omp_set_num_threads(threads);  // the caller's setting back
    for (auto& e : error)
      if (e) std::rethrow_exception(e);
  } else {
    // The products first: their device work is the longer, and it runs while the
    // host plans the spouse pensions. A part started and not finished (the other
    // threw) drains its work when its PartFinish is destroyed.
    PartFinish finish1 = products(sub[1], &sink[1]);
    PartFinish finish0 = spouse(sub[0], &sink[0]);
    if (touch) {
      HostTimer touch_timer;
      faulter->help();
      team.restore();
      pages_seconds += touch_timer.seconds();
    }
    r[1] = finish1();
    r[0] = finish0();
  }
  res.log.add("result pages", pages_seconds);
  for (int part = 0; part < 2; ++part)
    for (const auto& ph : r[part].log.phases()) res.log.add(ph.name, ph.seconds, ph.bytes, ph.flops);
  res.inner_steps = r[0].inner_steps;
  res.inner_steps_unshared = r[0].inner_steps_unshared;
  res.columns = r[0].columns;
  res.requests = r[0].requests;
  res.table = r[0].table;
  res.middle_values = r[0].middle_values;
  res.product_steps = r[1].product_steps;
  res.products = which[1].size();
  return res;
}

}  // namespace numpipe::integrate
