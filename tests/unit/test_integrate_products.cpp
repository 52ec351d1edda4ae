// integrate: the user's basis and the single-life products by Thiele's equation
// (CPU backend): closed forms under constant intensities, 4th-order convergence
// with --align-breaks, the equivalence premium, tables and their checks, and the
// default basis given explicitly reproducing the spec's arithmetic bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "integrate_test_util.hpp"
#include "kernels/integrate/integrate.hpp"

namespace ig = numpipe::integrate;
using integrate_test::same_bits;

namespace {

// A table law of constant force mu (given as mu_x) or of one-year q_x.
ig::MortalityLaw flat_table(const std::string& name, double value, bool q, int age0 = 0) {
  ig::MortalityLaw m;
  m.name = name;
  m.table = true;
  m.q = q;
  for (int a = age0; a <= 120; ++a) {
    m.ages.push_back(a);
    m.values.push_back(value);
  }
  return m;
}

ig::Policy product(int kind, double x, double term, double deferment, int h1) {
  ig::Policy p;
  p.product = kind;
  p.x = x;
  p.term = term;
  p.deferment = deferment;
  p.h1 = h1;
  return p;
}

// A problem of one law (index 0) for the insured, constant rate r.
ig::Problem with_law(const ig::MortalityLaw& law, double r, bool align) {
  ig::Problem pb;
  pb.laws = {law, ig::default_laws()[1]};
  pb.rate = r;
  pb.align_breaks = align;
  return pb;
}

double ann(double d, double span) { return span > 0 ? (1 - std::exp(-d * span)) / d : 0.0; }

}  // namespace

TEST_CASE("integrate products: constant intensities give the closed forms to 1e-10 (aligned steps)") {
  const double r = 0.03, mu = 0.02, d = r + mu;
  for (bool q : {false, true}) {
    // A constant force as mu_x, or as q_x = 1 - e^-mu (the same force).
    ig::Problem pb = with_law(flat_table("flat", q ? -std::expm1(-mu) : mu, q), r, true);
    const double x = 40, n = 30, m = 10.25, tp = 7.5, P = 0.125;
    pb.policies = {product(ig::kLifeAnnuity, x, n, 0, 20), product(ig::kLifeAnnuity, x, n, m, 20),
                   product(ig::kTermInsurance, x, n, 0, 20), product(ig::kPureEndowment, x, n, 0, 20),
                   product(ig::kEndowmentInsurance, x, n, 0, 20), product(ig::kLifeAnnuity, x, 200, 0, 20)};
    for (auto& p : pb.policies) p.premium_term = 0;
    pb.policies[4].premium = P;  // the endowment insurance with a level premium until tp
    pb.policies[4].premium_term = tp;
    ig::validate(pb);
    auto res = ig::solve_cpu(pb);
    double worst = 0;
    for (int y = 0; y <= 80; ++y) {
      const double t = y, left = n - t;
      const double* R = res.reserve.data();
      double want[6];
      want[0] = ann(d, left);                                                       // (1 - e^-(r+mu)(n-t)) / (r+mu)
      want[1] = t >= m ? ann(d, left) : std::exp(-d * (m - t)) * ann(d, n - m);       // deferred
      want[2] = mu * ann(d, left);                                                  // term insurance
      want[3] = std::exp(-d * left);                                                // pure endowment
      want[4] = mu * ann(d, left) + std::exp(-d * left) - P * ann(d, tp - t);        // endowment, premium
      want[5] = ann(d, 80 - t);                                                     // whole life to 120
      for (int k = 0; k < 6; ++k) {
        double w = y <= (k == 5 ? 80 : n) ? want[k] : 0.0;
        if (k == 4 && y <= n && t >= tp) w = mu * ann(d, left) + std::exp(-d * left);
        double got = R[k * ig::kYears + y];
        CAPTURE(k);
        CAPTURE(y);
        CHECK(std::fabs(got - w) < 1e-10);
        worst = std::max(worst, std::fabs(got - w));
      }
    }
    MESSAGE("largest difference from the closed forms (" << std::string(q ? "q_x" : "mu_x") << " table, 20 steps per year): " << worst);
    // Past 120 - x the reserve is NaN; the term's reserve is the sum due there.
    CHECK(std::isnan(res.reserve[0 * ig::kYears + 81]));
    CHECK(res.reserve[3 * ig::kYears + 30] == 1.0);
    CHECK(res.reserve[3 * ig::kYears + 31] == 0.0);
  }
}

TEST_CASE("integrate products: Gompertz-Makeham with constant intensity (C = 0) is the closed form too") {
  const double r = 0.04;
  ig::Problem pb = with_law(ig::gompertz_makeham("gm", 0.001, -2.0, 0.0), r, true);
  const double mu = 0.001 + std::pow(10.0, -2.0), d = r + mu;
  pb.policies = {product(ig::kLifeAnnuity, 50, 25, 0, 20)};
  pb.policies[0].premium_term = 0;
  ig::validate(pb);
  auto res = ig::solve_cpu(pb);
  CHECK(std::fabs(res.reserve[0] - ann(d, 25)) < 1e-10);
  CHECK(std::fabs(res.reserve[10] - ann(d, 15)) < 1e-10);
}

TEST_CASE("integrate products: Gompertz-Makeham reserves converge at 4th order with --align-breaks") {
  // Fractional age, term, deferment and premium term: breaks off the whole years.
  auto year0 = [](int kind, int h1, bool align) {
    ig::Problem pb;
    pb.align_breaks = align;
    ig::Policy p = product(kind, 37.3, 33.6, kind == ig::kLifeAnnuity ? 12.7 : 0.0, h1);
    p.premium = 0.02;
    p.premium_term = 9.4;
    pb.policies = {p};
    ig::validate(pb);
    return ig::solve_cpu(pb).reserve[0];
  };
  for (int kind : {ig::kLifeAnnuity, ig::kTermInsurance, ig::kEndowmentInsurance}) {
    double v[4];
    for (int i = 0; i < 4; ++i) v[i] = year0(kind, 2 << i, true);
    const double r1 = (v[0] - v[1]) / (v[1] - v[2]), r2 = (v[1] - v[2]) / (v[2] - v[3]);
    CAPTURE(kind);
    MESSAGE("product " << kind << ": difference ratios " << r1 << ", " << r2 << " at 2, 4, 8, 16 steps per year (4th order: 16)");
    // The annuity's errors shrink faster still (its integrand is smoother between breaks).
    CHECK(r1 > 12);
    CHECK(r2 > 12);
    if (kind != ig::kLifeAnnuity) {
      CHECK(r1 < 20);
      CHECK(r2 < 20);
    }
    // The faithful scheme's indicators at the stage points: first order, and erratic
    // where breaks fall between the points.
    const double converged = year0(kind, 64, true);
    CHECK(std::fabs(year0(kind, 8, false) - converged) > 1000 * std::fabs(v[2] - converged));
  }
}

TEST_CASE("integrate products: a table's life converges at 4th order with --align-breaks (breaks at whole ages)") {
  ig::MortalityLaw t;
  t.name = "table";
  t.table = true;
  for (int a = 0; a <= 120; ++a) {
    t.ages.push_back(a);
    t.values.push_back(std::min(0.9, 0.0005 + std::pow(10.0, -4.272 + 0.038 * (a + 0.5))));
  }
  double v[4];
  for (int i = 0; i < 4; ++i) {
    ig::Problem pb = with_law(t, 0.05, true);
    pb.policies = {product(ig::kEndowmentInsurance, 41.6, 20, 0, 1 << i)};
    pb.policies[0].equivalence = true;
    ig::validate(pb);
    v[i] = ig::solve_cpu(pb).reserve[10];
  }
  const double r = (v[1] - v[2]) / (v[2] - v[3]);
  MESSAGE("table endowment, year 10: ratio " << r);
  CHECK(r > 12);
  CHECK(r < 20);
}

TEST_CASE("integrate products: the equivalence premium makes the reserve at inception zero") {
  ig::Problem pb;
  pb.policies = {product(ig::kTermInsurance, 30, 30, 0, 4), product(ig::kPureEndowment, 30, 30, 0, 4),
                 product(ig::kEndowmentInsurance, 45.5, 19.5, 0, 10), product(ig::kLifeAnnuity, 35, 85, 30, 2)};
  ig::Policy sp;  // the spouse pension, premiums until retirement
  sp.h1 = sp.h2 = sp.h3 = 2;
  pb.policies.push_back(sp);
  for (auto& p : pb.policies) p.equivalence = true;
  ig::validate(pb);
  for (bool align : {false, true}) {
    pb.align_breaks = align;
    auto res = ig::solve_cpu(pb);
    REQUIRE(res.premium.size() == pb.policies.size());
    for (std::size_t i = 0; i < pb.policies.size(); ++i) {
      CAPTURE(i);
      CAPTURE(align);
      CHECK(res.premium[i] > 0);
      CHECK(std::fabs(res.reserve[i * ig::kYears]) < 1e-13);
      // The solved premium given back as a level premium: one chain with it, V(0) = 0.
      ig::Problem given = pb;
      given.policies = {pb.policies[i]};
      given.policies[0].equivalence = false;
      given.policies[0].premium = res.premium[i];
      auto g = ig::solve_cpu(given);
      CHECK(std::fabs(g.reserve[0]) < 1e-12);
      CHECK(g.premium[0] == res.premium[i]);
    }
  }
}

TEST_CASE("integrate: the default basis given explicitly gives the spec's bits; other bases change them") {
  ig::Problem pb;
  pb.policies = {integrate_test::policy(10, 65, 35, 1, 2, 1), integrate_test::policy(5, 62.5, 10.25, 1, 1, 2)};
  auto base = ig::solve_cpu(pb);
  // insured=gm:0.0005,-4.272,0.038 spouse=gm:0.0005,-4.12,0.038 (the decimal constants)
  ig::Problem same = pb;
  same.laws = {ig::gompertz_makeham("a", 0.0005, -4.272, 0.038), ig::gompertz_makeham("b", 0.0005, -4.12, 0.038)};
  same.spouse.mean = 0;
  same.spouse.sd = 3;
  ig::validate(same);
  CHECK(same_bits(ig::solve_cpu(same).reserve, base.reserve));
  CHECK(same_bits(ig::reference_reserve(same, same.policies[0]), std::vector<double>(base.reserve.begin(), base.reserve.begin() + ig::kYears)));
  for (bool align : {false, true}) {
    pb.align_breaks = same.align_breaks = align;
    CHECK(same_bits(ig::solve_cpu(same).reserve, ig::solve_cpu(pb).reserve));
  }
  pb.align_breaks = same.align_breaks = false;
  // A younger spouse (mean -2), a wider spread, other laws: other reserves.
  ig::Problem other = same;
  other.spouse.mean = -2;
  auto r1 = ig::solve_cpu(other);
  other = same;
  other.spouse.sd = 4;
  auto r2 = ig::solve_cpu(other);
  other = same;
  other.laws[1].B = -4.0;
  auto r3 = ig::solve_cpu(other);
  for (auto* r : {&r1, &r2, &r3}) CHECK(std::fabs(r->reserve[0] - base.reserve[0]) > 1e-4);
  // A younger spouse lives longer: a dearer pension.
  CHECK(r1.reserve[0] > base.reserve[0]);
}

TEST_CASE("integrate: spouse pensions with tables, a premium and a benefit; the planned solve equals the naive one") {
  ig::Problem pb;
  ig::MortalityLaw f = flat_table("f", 0.0, true), m = flat_table("m", 0.0, true);
  for (int a = 0; a <= 120; ++a) {
    f.values[a] = std::min(0.95, 0.0004 + std::pow(10.0, -4.3 + 0.039 * a));
    m.values[a] = std::min(0.95, 0.0006 + std::pow(10.0, -4.1 + 0.039 * a));
  }
  pb.laws = {f, m};
  pb.spouse.marriage_table = true;
  pb.spouse.marriage_age = {20, 40, 70, 100};
  pb.spouse.marriage_prob = {0.3, 0.7, 0.6, 0.2};
  pb.spouse.age_table = true;
  for (int i = -10; i <= 10; ++i) {
    pb.spouse.age_diff.push_back(i);
    pb.spouse.age_density.push_back((11 - std::abs(i)) / 121.0);
  }
  pb.policies = {integrate_test::policy(10, 65, 55, 1, 1, 1), integrate_test::policy(5, 62.5, 60.25, 1, 2, 1)};
  pb.policies[1].premium = 0.01;
  pb.policies[1].benefit = 2.5;
  pb.policies[0].equivalence = true;
  ig::validate(pb);
  for (bool align : {false, true}) {
    pb.align_breaks = align;
    auto res = ig::solve_cpu(pb);
    for (std::size_t i = 0; i < 2; ++i) {
      auto ref = ig::reference_reserve(pb, pb.policies[i]);
      CHECK(same_bits(std::vector<double>(res.reserve.begin() + i * ig::kYears, res.reserve.begin() + (i + 1) * ig::kYears), ref));
    }
    CHECK(std::fabs(res.reserve[0]) < 1e-13);
  }
  // The benefit scales the pension: without a premium, reserves in proportion.
  pb.align_breaks = false;
  pb.policies = {integrate_test::policy(10, 65, 35, 2, 2, 2)};
  auto one = ig::solve_cpu(pb);
  pb.policies[0].benefit = 3;
  auto three = ig::solve_cpu(pb);
  for (int y = 0; y < 85; ++y) CHECK(three.reserve[y] == doctest::Approx(3 * one.reserve[y]).epsilon(1e-13));
}

TEST_CASE("integrate: mixed portfolios: each row as if alone, same bits for any thread count") {
  ig::Problem pb;
  pb.laws.push_back(flat_table("t", 0.01, true));
  int kinds[] = {ig::kSpousePension, ig::kLifeAnnuity, ig::kTermInsurance, ig::kPureEndowment, ig::kEndowmentInsurance};
  for (int i = 0; i < 15; ++i) {
    ig::Policy p = product(kinds[i % 5], 30 + i, 25 + i % 4, i % 3, 2);
    p.h2 = p.h3 = 2;
    p.insured = i % 2 ? 2 : 0;
    p.equivalence = i % 5 != 1;
    p.premium_term = -1;
    pb.policies.push_back(p);
  }
  ig::validate(pb);
  auto all = ig::solve_cpu(pb, 2);
  CHECK(all.products == 12);
  CHECK(same_bits(ig::solve_cpu(pb, 1).reserve, all.reserve));
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    ig::Problem single = pb;
    single.policies = {pb.policies[i]};
    auto r = ig::solve_cpu(single);
    CHECK(same_bits(r.reserve, std::vector<double>(all.reserve.begin() + i * ig::kYears, all.reserve.begin() + (i + 1) * ig::kYears)));
    CHECK(r.premium[0] == all.premium[i]);
  }
}

TEST_CASE("integrate: solve_split in two steps: both parts started, the pages faulted, then both finished") {
  // Parts that write each of their policies' rows (value: the whole problem's index)
  // and premiums when finished, and note what happens when; with touch_pages the
  // result's pages are faulted between the starts and the finishes (a fault
  // written after a row would show in the row).
  ig::Problem pb;
  for (int i = 0; i < 5000; ++i) pb.policies.push_back(product(i % 3 ? ig::kTermInsurance : ig::kSpousePension, 40, 20, 0, 1));
  std::vector<std::string> events;
  auto part = [&](const char* name) {
    return ig::PartStarter([&events, name](const ig::Problem& sub, const ig::RowSink* sink) -> ig::PartFinish {
      events.push_back(std::string("start ") + name);
      REQUIRE(sink);
      CHECK(sink->touched);
      return [&events, name, &sub, sink] {
        events.push_back(std::string("finish ") + name);
        for (std::size_t i = 0; i < sub.policies.size(); ++i) {
          const auto at = sink->index[i];
          for (int y = 0; y < ig::kYears; ++y) sink->row(static_cast<std::int64_t>(i))[y] = static_cast<double>(at) + y * 1e-3;
          sink->premium[at] = -static_cast<double>(at);
        }
        ig::Result r;
        r.log.add(name, 0.0);
        return r;
      };
    });
  };
  ig::Result res = ig::solve_split(pb, part("spouse"), part("products"), false, true);
  CHECK(events == std::vector<std::string>{"start products", "start spouse", "finish products", "finish spouse"});
  CHECK(res.products == 3333);
  int wrong = 0;
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    for (int y = 0; y < ig::kYears; ++y) wrong += res.reserve[i * ig::kYears + y] != static_cast<double>(i) + y * 1e-3;
    wrong += res.premium[i] != -static_cast<double>(i);
  }
  CHECK(wrong == 0);
  std::vector<std::string> phases;
  for (const auto& ph : res.log.phases()) phases.push_back(ph.name);
  CHECK(phases == std::vector<std::string>{"result pages", "spouse", "products"});
}

TEST_CASE("integrate: bad tables and unknown products exit 2 naming the row, age or value") {
  auto message = [](ig::Problem pb) -> std::string {
    try {
      ig::validate(pb);
    } catch (const numpipe::Error& e) {
      return std::to_string(static_cast<int>(e.code())) + " " + e.what();
    }
    return "ok";
  };
  ig::Problem pb;
  pb.policies = {product(ig::kLifeAnnuity, 40, 20, 0, 1)};
  CHECK(message(pb) == "ok");
  ig::Problem b = pb;
  b.policies[0].product = 7;
  CHECK(message(b).find("2 policy 0: unknown product 7") == 0);
  b = pb;
  b.policies[0].deferment = 25;
  CHECK(message(b).find("never pay") != std::string::npos);
  b = pb;
  b.policies[0].equivalence = true;
  b.policies[0].premium_term = 0;
  CHECK(message(b).find("equivalence premium needs premiums") != std::string::npos);
  b = pb;
  b.laws[0] = flat_table("uk.csv", 0.01, true);
  b.laws[0].values[57] = 1.5;
  CHECK(message(b).find("2 mortality table 'uk.csv' row 58 (age 57): q_x must be in [0, 1]: 1.5") == 0);
  b.laws[0].values[57] = 1.0;
  CHECK(message(b).find("row 58 (age 57): q_x = 1 below age 120") != std::string::npos);
  b.laws[0] = flat_table("uk.csv", 0.01, true);
  b.laws[0].ages[3] = 4;
  CHECK(message(b).find("row 4 (age 4): ages must increase by 1") != std::string::npos);
  b.laws[0] = flat_table("uk.csv", 0.01, true);
  b.laws[0].ages.resize(111);
  b.laws[0].values.resize(111);
  CHECK(message(b).find("ends at age 110") != std::string::npos);
  b.laws[0] = flat_table("uk.csv", 0.01, true, 45);
  CHECK(message(b).find("starts at age 45; the insured is aged 40") != std::string::npos);
  b.laws[0] = flat_table("mu.txt", -0.01, false);
  CHECK(message(b).find("mu_x must be finite and >= 0: -0.01") != std::string::npos);
  b = pb;
  b.laws[0] = ig::gompertz_makeham("g", 0.0005, 4, 0.038);
  CHECK(message(b).find("the force of mortality at age 120") != std::string::npos);
  b = pb;
  b.spouse.age_table = true;
  b.spouse.age_diff = {-1, 0, 1};
  b.spouse.age_density = {0, 50, 0};
  CHECK(message(b).find("integrates to 50") != std::string::npos);
  b = pb;
  b.spouse.marriage_table = true;
  b.spouse.marriage_age = {20, 30};
  b.spouse.marriage_prob = {0.5, 90};
  CHECK(message(b).find("marriage table row 2 (age 30): the probability must be in [0, 1]: 90") != std::string::npos);
  b = pb;
  b.spouse.sd = 0;
  CHECK(message(b).find("spread") != std::string::npos);
}

namespace earlier {
// The arithmetic of the version before the basis and products, copied as it was
// (its literal Danish laws mu_female and mu_male, gp and h of spec/integrate.md):
// the default basis must reproduce it bit for bit on any machine.
double coefficient_then(const ig::RateView& rv, double eta, double t, double s) {
  return ig::forward_rate(rv, t + s) + ig::mu_male(eta + s);
}
double segment_then(const ig::RateView& rv, const ig::Segment& seg, double V, double eta, double t, double k,
                     int pension) {
  auto ind = [&](double s) { return pension < 0 ? (s >= k ? 1.0 : 0.0) : static_cast<double>(pension); };
  double s0 = seg.start(0);
  double c0 = coefficient_then(rv, eta, t, s0), p0 = ind(s0);
  if (seg.partial) {
    double sa = seg.a, sm = seg.a + seg.hp / 2;
    V = ig::rk4_linear_step(V, seg.hp, coefficient_then(rv, eta, t, sa), ind(sa), coefficient_then(rv, eta, t, sm),
                            ind(sm), c0, p0);
  }
  for (int i = 0; i < seg.full; ++i) {
    double sm = s0 + seg.h / 2, s1 = seg.start(i + 1);
    double cm = coefficient_then(rv, eta, t, sm), c1 = coefficient_then(rv, eta, t, s1);
    double pm = ind(sm), p1 = ind(s1);
    V = ig::rk4_linear_step(V, seg.h, c0, p0, cm, pm, c1, p1);
    s0 = s1;
    c0 = c1;
    p0 = p1;
  }
  return V;
}
double inner_then(const ig::RateView& rv, double eta, double k, double t, int steps, bool align) {
  double a = ig::kMaxAge - eta;
  if (a <= 0.0) return 0.0;
  if (!align) return segment_then(rv, ig::make_segment(a, 0.0, steps), 0.0, eta, t, k, -1);
  if (k >= a) return 0.0;
  if (k <= 0.0) return segment_then(rv, ig::make_segment(a, 0.0, steps), 0.0, eta, t, k, 1);
  double V = segment_then(rv, ig::make_segment(a, k, steps), 0.0, eta, t, k, 1);
  return segment_then(rv, ig::make_segment(k, 0.0, steps), V, eta, t, k, 0);
}
std::vector<double> reserve(const ig::Problem& pb, const ig::Policy& p) {
  ig::RateTable rate = ig::make_rate_table(pb);
  ig::RateView rv = rate.view();
  const bool align = pb.align_breaks;
  ig::Grid og = ig::outer_grid(p, align);
  std::vector<double> middle(og.pts.size());
  for (std::size_t i = 0; i < og.pts.size(); ++i) {
    double t = og.pts[i], tau = p.x + t, k = ig::pension_delay(tau, p.g, p.r);
    ig::Grid mg = ig::middle_grid(p.h2, k, align);
    auto F = [&](std::size_t e) { return ig::middle_weight(mg.pts[e], tau) * inner_then(rv, mg.pts[e], k, t, p.h3, align); };
    double V = 0;
    for (std::size_t j = 0; j < mg.h.size(); ++j) V = V + ig::middle_increment(mg.h[j], F(2 * j), F(2 * j + 1), F(2 * j + 2));
    middle[i] = V;
  }
  std::vector<double> out(ig::kYears, std::numeric_limits<double>::quiet_NaN());
  double V = 0;
  if (og.year[0] >= 0) out[og.year[0]] = V;
  for (std::size_t j = 0; 2 * j + 2 < og.pts.size(); ++j) {
    double t0 = og.pts[2 * j], tm = og.pts[2 * j + 1], t1 = og.pts[2 * j + 2], hj = og.h[j];
    double r0 = ig::forward_rate(rv, t0), rm = ig::forward_rate(rv, tm), r1 = ig::forward_rate(rv, t1);
    double m0 = ig::mu_female(p.x + t0), mm = ig::mu_female(p.x + tm), m1 = ig::mu_female(p.x + t1);
    double k1 = hj * ig::outer_derivative(r0, m0, middle[2 * j], V);
    double k2 = hj * ig::outer_derivative(rm, mm, middle[2 * j + 1], V + k1 / 2);
    double k3 = hj * ig::outer_derivative(rm, mm, middle[2 * j + 1], V + k2 / 2);
    double k4 = hj * ig::outer_derivative(r1, m1, middle[2 * j + 2], V + k3);
    V = V + (k1 + 2 * (k2 + k3) + k4) * ig::kSixth;
    if (og.year[2 * j + 2] >= 0) out[og.year[2 * j + 2]] = V;
  }
  return out;
}
}  // namespace earlier

TEST_CASE("integrate: the default basis reproduces the earlier version's arithmetic bit for bit") {
  ig::Problem pb;
  // The naive nested scheme (Inner afresh for every Middle point): few, short policies.
  pb.policies = {integrate_test::policy(10, 65, 55, 1, 1, 1), integrate_test::policy(5, 62.5, 60.25, 1, 1, 2),
                 integrate_test::policy(0, 60, 70, 2, 1, 1), integrate_test::policy(7.5, 64.7, 75.3, 1, 2, 1)};
  for (int variant = 0; variant < 3; ++variant) {
    pb.align_breaks = variant == 1;
    if (variant == 1)  // steps short enough for the laws at 120 (the aligned scheme's stable_steps takes no more)
      for (ig::Policy& p : pb.policies) {
        p.h1 *= 2;
        p.h3 *= 3;
      }
    if (variant == 2) {
      pb.curve.maturity = {0, 10, 30};
      pb.curve.rate = {0.02, 0.03, 0.035};
    }
    auto res = ig::solve_cpu(pb);
    for (std::size_t i = 0; i < pb.policies.size(); ++i) {
      CAPTURE(variant);
      CAPTURE(i);
      auto want = earlier::reserve(pb, pb.policies[i]);
      CHECK(same_bits(std::vector<double>(res.reserve.begin() + i * ig::kYears, res.reserve.begin() + (i + 1) * ig::kYears),
                      want));
    }
  }
  // The check can fail: another spread of the spouse's age changes the bits.
  pb.spouse.sd = 3.0000001;
  auto other = ig::solve_cpu(pb);
  CHECK_FALSE(same_bits(std::vector<double>(other.reserve.begin(), other.reserve.begin() + ig::kYears),
                        earlier::reserve(pb, pb.policies[0])));
}
