// integrate: model functions, step grids, the spec's checkpoint, exact sharing,
// determinism, convergence order and input validation (CPU backend).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <algorithm>

#include "common/error.hpp"
#include "integrate_test_util.hpp"
#include "kernels/integrate/integrate.hpp"

namespace ig = numpipe::integrate;

namespace {

ig::Problem one(double g, double r, double x, int h1, int h2, int h3, bool align = false) {
  ig::Problem pb;
  pb.policies.push_back(integrate_test::policy(g, r, x, h1, h2, h3));
  pb.align_breaks = align;
  return pb;
}

using integrate_test::same_bits;

double rel(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

// High-accuracy Inner for a constant rate: the value at age eta of a unit
// pension from age eta + k to 120, int_k^{a} exp(-int_0^s (r + muM(eta + u)) du) ds,
// with the inner integral in closed form (muM = 0.0005 + e^{A + B age}) and the
// outer one by composite Simpson on 20000 intervals.
double inner_exact(double eta, double k, double rate) {
  const double A = (5.880 - 10.0) * ig::kLn10, B = 0.038 * ig::kLn10;
  double a = ig::kMaxAge - eta;
  if (k >= a) return 0;
  auto decay = [&](double s) {
    double cum = (rate + 0.0005) * s + (std::exp(A + B * (eta + s)) - std::exp(A + B * eta)) / B;
    return std::exp(-cum);
  };
  double lo = std::max(k, 0.0);
  int n = 20000;
  double h = (a - lo) / n, sum = decay(lo) + decay(a);
  for (int i = 1; i < n; ++i) sum += decay(lo + i * h) * (i % 2 ? 4 : 2);
  return sum * h / 3;
}

}  // namespace

TEST_CASE("integrate: model functions") {
  CHECK(ig::married_probability(67.5) == doctest::Approx(0.9).epsilon(1e-15));
  CHECK(ig::married_probability(15.0) == 0.0);
  CHECK(ig::married_probability(10.0) == 0.0);
  CHECK(ig::married_probability(120.0) == 0.0);
  CHECK(ig::pension_delay(30, 10, 65) == 10);
  CHECK(ig::pension_delay(65, 10, 65) == 10);
  CHECK(ig::pension_delay(70, 10, 65) == 5);
  CHECK(ig::pension_delay(75, 10, 65) == 0);
  CHECK(ig::pension_delay(90, 10, 65) == 0);
  CHECK(ig::spouse_density(0.0, 30) == 0.0);
  CHECK(ig::spouse_density(120.0, 30) == 0.0);
  CHECK(ig::spouse_density(30.0, 30) == doctest::Approx(1.0 / (std::sqrt(2 * M_PI) * 3)).epsilon(1e-15));
  double sum = 0;  // the density integrates to 1 (well inside (0, 120))
  for (int i = 0; i < 12000; ++i) sum += ig::spouse_density(0.005 + i * 0.01, 60) * 0.01;
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(ig::mu_female(50) == doctest::Approx(0.0005 + std::pow(10.0, 5.728 - 10 + 0.038 * 50)).epsilon(1e-14));
  CHECK(ig::mu_male(80) == doctest::Approx(0.0005 + std::pow(10.0, 5.880 - 10 + 0.038 * 80)).epsilon(1e-14));
}

TEST_CASE("integrate: segments take a first partial step, then whole steps") {
  ig::Segment s = ig::make_segment(0.25, 0.0, 2);
  CHECK(s.full == 0);
  CHECK(s.partial);
  CHECK(s.hp == -0.25);
  s = ig::make_segment(119.75, 0.0, 2);
  CHECK(s.full == 239);
  CHECK(s.partial);
  CHECK(s.hp == -0.25);
  CHECK(s.start(0) == 119.5);
  CHECK(s.start(239) == 0.0);
  s = ig::make_segment(120.0, 1.0, 2);  // the middle level: whole
  CHECK(s.full == 238);
  CHECK_FALSE(s.partial);
  s = ig::make_segment(120.0 - 119.7, 0.0, 10);  // whole up to rounding
  CHECK(s.full == 3);
  CHECK_FALSE(s.partial);
}

TEST_CASE("integrate: outer grid marks whole years; a fractional age takes a partial step") {
  ig::Policy p;
  p.x = 35.5;
  p.h1 = 1;
  ig::Grid g = ig::outer_grid(p, false);
  REQUIRE(g.pts.size() == 2 * g.h.size() + 1);
  CHECK(g.pts.front() == 84.5);
  CHECK(g.h.front() == -0.5);
  CHECK(g.h[1] == -1.0);
  CHECK(g.year.front() == -1);
  CHECK(g.year[2] == 84);
  CHECK(g.year.back() == 0);
  int years = 0;
  for (int y : g.year) years += y >= 0;
  CHECK(years == 85);
}

TEST_CASE("integrate: the spec's checkpoint (2 steps per year at all levels)") {
  auto res = ig::solve_cpu(one(10, 65, 35, 2, 2, 2));
  CHECK(rel(res.reserve[0], 0.6232110341974992) < 1e-12);
  CHECK(rel(res.reserve[40], 2.2718034492774297) < 1e-12);
  CHECK(res.reserve[85] == 0.0);
  CHECK(std::isnan(res.reserve[86]));
  CHECK(std::isnan(res.reserve[120]));
}

TEST_CASE("integrate: sharing Inner is exact (planned == naive nested scheme, bit for bit)") {
  for (bool align : {false, true}) {
    ig::Problem pb = one(7.5, 64.7, 35.3, 1, 2, 1, align);
    auto res = ig::solve_cpu(pb);
    CHECK(same_bits(res.reserve, ig::reference_reserve(pb, pb.policies[0])));
    CHECK(res.inner_steps < res.inner_steps_unshared);
  }
  for (bool align : {false, true}) {
    ig::Problem pb = one(10, 65, 60, 1, 1, 2, align);
    pb.curve.maturity = {0, 10, 30};
    pb.curve.rate = {0.02, 0.03, 0.035};
    auto res = ig::solve_cpu(pb);
    CHECK(same_bits(res.reserve, ig::reference_reserve(pb, pb.policies[0])));
  }
}

TEST_CASE("integrate: a portfolio's result equals the per-policy results, for any thread count") {
  ig::Problem pb;
  double pol[4][3] = {{10, 65, 35}, {0, 60, 70}, {15, 67, 50}, {5, 62.5, 10.5}};
  for (auto& q : pol) {
    ig::Policy p;
    p.g = q[0];
    p.r = q[1];
    p.x = q[2];
    p.h1 = 1;
    p.h2 = 1;
    p.h3 = 1;
    pb.policies.push_back(p);
  }
  pb.policies[2].h1 = 2;  // mixed step settings in one batch
  auto all = ig::solve_cpu(pb, 2);
  auto all1 = ig::solve_cpu(pb, 1);
  CHECK(same_bits(all.reserve, all1.reserve));
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    ig::Problem single = pb;
    single.policies = {pb.policies[i]};
    auto r = ig::solve_cpu(single);
    std::vector<double> part(all.reserve.begin() + i * ig::kYears, all.reserve.begin() + (i + 1) * ig::kYears);
    CHECK(same_bits(part, r.reserve));
  }
}

TEST_CASE("integrate: sharing Middle calls between policies is exact (batch == each policy's naive scheme)") {
  // Whole ages and a few (g, r) pairs, so that policies meet the same (column, tau);
  // two spouse laws, so that calls alike in k and tau but not in law must stay apart;
  // table laws (breaks at whole ages), terms, equivalence premiums.
  auto table = [](const std::string& name, double scale, double shift) {
    ig::MortalityLaw m;
    m.name = name;
    m.table = true;
    for (int a = 0; a <= 120; ++a) {
      m.ages.push_back(a);
      m.values.push_back(std::min(0.9, scale * (0.0005 + std::pow(10.0, shift + 0.038 * (a + 0.5)))));
    }
    return m;
  };
  ig::Problem pb;
  pb.laws = {table("insured", 1.0, -4.272), table("spouse", 1.0, -4.12), table("heavy", 1.5, -4.12)};
  pb.align_breaks = true;
  int i = 0;
  for (double x : {58.0, 61.0})
    for (double g : {5.0, 10.0})
      for (int spouse : {1, 2}) {
        ig::Policy p = integrate_test::policy(g, 64, x, 1, 1, 1);
        p.spouse = spouse;
        if (i % 3 == 1) p.term = 20;
        if (i % 2 == 0) p.equivalence = true;
        pb.policies.push_back(p);
        ++i;
      }
  ig::validate(pb);
  auto all = ig::solve_cpu(pb, 2);
  auto all1 = ig::solve_cpu(pb, 1);
  CHECK(same_bits(all.reserve, all1.reserve));
  CHECK(same_bits(all.premium, all1.premium));
  CHECK(all.middle_values * 2 < all.requests);  // shared: each call serves several stage points
  for (std::size_t q = 0; q < pb.policies.size(); ++q) {
    std::vector<double> part(all.reserve.begin() + q * ig::kYears, all.reserve.begin() + (q + 1) * ig::kYears);
    CHECK(same_bits(part, ig::reference_reserve(pb, pb.policies[q])));
    ig::Problem single = pb;
    single.policies = {pb.policies[q]};
    CHECK(ig::solve_cpu(single).premium[0] == all.premium[q]);
  }
}

TEST_CASE("integrate: Inner converges at 4th order with the break aligned, 1st without") {
  ig::RateView rv;
  double eta = 60.3, k = 7.3;
  double exact = inner_exact(eta, k, 0.05);
  double e_al[3], e_fa[3];
  for (int i = 0; i < 3; ++i) {
    int steps = 4 << i;  // from 4 a year: no stretch too steep for the steps (kStableStep)
    e_al[i] = std::fabs(ig::inner_value(rv, eta, k, 0, steps, true) - exact);
    e_fa[i] = std::fabs(ig::inner_value(rv, eta, k, 0, steps, false) - exact);
  }
  CHECK(e_al[2] / exact < 1e-8);
  double q1 = e_al[0] / e_al[1], q2 = e_al[1] / e_al[2];
  CHECK(q1 > 12);
  CHECK(q1 < 20);
  CHECK(q2 > 12);
  CHECK(q2 < 20);
  CHECK(e_fa[2] / exact > 1e-4);  // the jump at s = k off the grid costs accuracy
}

TEST_CASE("integrate: a flat one-point curve gives the constant-rate bits; the forward rate") {
  ig::Problem pb = one(10, 65, 90, 1, 1, 1);
  auto flat = ig::solve_cpu(pb);
  pb.curve.maturity = {5};
  pb.curve.rate = {0.05};
  auto curve = ig::solve_cpu(pb);
  CHECK(same_bits(flat.reserve, curve.reserve));
  pb.curve.maturity = {0, 10, 20};
  pb.curve.rate = {0.01, 0.03, 0.03};
  ig::RateTable t = ig::make_rate_table(pb);
  ig::RateView v = t.view();
  // R(T) = 0.01 + 0.002 T on [0, 10): f = R + T R' = 0.01 + 0.004 T.
  CHECK(ig::forward_rate(v, 5) == doctest::Approx(0.03).epsilon(1e-14));
  CHECK(ig::forward_rate(v, 15) == doctest::Approx(0.03).epsilon(1e-14));
  CHECK(ig::forward_rate(v, 50) == doctest::Approx(0.03).epsilon(1e-14));
  CHECK(ig::forward_rate(v, -1) == doctest::Approx(0.01).epsilon(1e-14));
}

TEST_CASE("integrate: validation names the bad value (exit 2)") {
  auto code_of = [](ig::Problem pb) {
    try {
      ig::validate(pb);
    } catch (const numpipe::Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  CHECK(code_of(one(10, 65, 35, 1, 1, 1)) == 0);
  CHECK(code_of(one(10, 65, 120, 1, 1, 1)) == 2);
  CHECK(code_of(one(10, 65, -1, 1, 1, 1)) == 2);
  CHECK(code_of(one(-1, 65, 35, 1, 1, 1)) == 2);
  CHECK(code_of(one(10, 121, 35, 1, 1, 1)) == 2);
  CHECK(code_of(one(10, 65, 35, 0, 1, 1)) == 2);
  CHECK(code_of(one(10, std::numeric_limits<double>::quiet_NaN(), 35, 1, 1, 1)) == 2);
  ig::Problem pb = one(10, 65, 35, 1, 1, 1);
  pb.curve.maturity = {1, 1};
  pb.curve.rate = {0.01, 0.02};
  CHECK(code_of(pb) == 2);
  CHECK_THROWS_WITH_AS(ig::parse_curve_text("1 0.02\n2 x\n", "c.txt"), doctest::Contains("c.txt:2: not a number"),
                       numpipe::Error);
  CHECK_THROWS_WITH_AS(ig::parse_curve_text("1 0.02 3\n", "c.txt"), doctest::Contains("want two numbers"),
                       numpipe::Error);
  CHECK_THROWS_WITH_AS(ig::parse_curve_text("# nothing\n", "c.txt"), doctest::Contains("no curve points"),
                       numpipe::Error);
}
