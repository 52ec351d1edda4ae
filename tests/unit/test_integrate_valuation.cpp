// integrate: what a valuation needs out (valuation.cpp, products.hpp
// product_cash_flows): the integrated force of mortality, the expected cash flows
// against closed forms under a constant force, and with annual payments on a life
// table the discounted flows against the reserve of Thiele's chain (two independent
// computations: survival probabilities forward, the reserve backward).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/integrate/integrate.hpp"

namespace ig = numpipe::integrate;

namespace {

// A table law of one-year q_x by whole age 0..120, forces made by validate_law.
ig::MortalityLaw q_table(const std::string& name, double (*q)(int)) {
  ig::MortalityLaw m;
  m.name = name;
  m.table = true;
  m.q = true;
  for (int a = 0; a <= 120; ++a) {
    m.ages.push_back(a);
    m.values.push_back(q(a));
  }
  ig::validate_law(m);
  return m;
}
double rising_q(int a) { return std::fmin(0.0005 + 0.00003 * std::exp(0.085 * a), 0.9); }
double flat_q(int) { return 1.0 - std::exp(-0.02); }  // a constant force of 0.02

ig::Problem one_policy(const ig::MortalityLaw& law, const ig::Policy& p, double rate, int frequency) {
  ig::Problem pb;
  pb.laws = {law, ig::default_laws()[1]};
  pb.rate = rate;
  pb.align_breaks = true;
  pb.frequency = frequency;
  pb.policies = {p};
  return pb;
}

}  // namespace

TEST_CASE("integrate valuation: the integrated force of a table row by row, of Gompertz-Makeham in closed form") {
  const ig::MortalityLaw table = q_table("insured", rising_q);
  const ig::MortalityView m = table.view();
  // 45.25 .. 47.5: a quarter of 45's year, all of 46's, half of 47's.
  const double want = 0.75 * -std::log1p(-rising_q(45)) + -std::log1p(-rising_q(46)) + 0.5 * -std::log1p(-rising_q(47));
  CHECK(ig::cumulative_force(m, 45.25, 47.5) == doctest::Approx(want).epsilon(1e-14));
  CHECK(ig::cumulative_force(m, 30.0, 30.0) == 0.0);
  ig::MortalityView gm;  // A + 10^(B + C a): Simpson's rule on a fine grid as the reference
  gm.A = 0.00022;
  gm.B = std::log10(2.7e-6);
  gm.C = std::log10(1.124);
  const int n = 20000;
  double simpson = 0;
  for (int i = 0; i < n; ++i) {
    const double a = 40.0 + 30.0 * i / n, h = 30.0 / n;
    simpson += h / 6 * (ig::mortality(gm, a) + 4 * ig::mortality(gm, a + h / 2) + ig::mortality(gm, a + h));
  }
  CHECK(ig::cumulative_force(gm, 40.0, 70.0) == doctest::Approx(simpson).epsilon(1e-12));
  gm.C = 0;  // a constant force A + 10^B
  CHECK(ig::cumulative_force(gm, 10.0, 12.5) == doctest::Approx(2.5 * (gm.A + std::pow(10.0, gm.B))).epsilon(1e-15));
}

TEST_CASE("integrate valuation: a constant force's expected flows are the closed forms") {
  const double mu = 0.02;
  ig::Policy p;
  p.product = ig::kLifeAnnuity;  // a whole-life annuity of 1 a year at 50, continuous, premium 0.4 a year for 10 years
  p.x = 50;
  p.premium = 0.4;
  p.premium_term = 10;
  const ig::Problem pb = one_policy(q_table("insured", flat_q), p, 0.03, 0);
  const std::vector<double> flows = ig::cash_flows_cpu(pb, ig::cash_flow_specs(pb, {0.4}), 1);
  for (int y = 0; y < ig::kYears; ++y) {
    const double in_year = y < 70 ? (std::exp(-mu * y) - std::exp(-mu * (y + 1))) / mu : 0.0;  // int_y^(y+1) e^-mu t dt
    CHECK(flows[2 * y] == doctest::Approx(in_year).epsilon(1e-12));
    CHECK(flows[2 * y + 1] == doctest::Approx(y < 10 ? 0.4 * in_year : 0.0).epsilon(1e-12));
  }
}

TEST_CASE("integrate valuation: annual flows on a life table discount to the reserve at inception") {
  const ig::MortalityLaw table = q_table("insured", rising_q);
  for (int kind : {ig::kTermInsurance, ig::kEndowmentInsurance, ig::kPureEndowment, ig::kLifeAnnuity}) {
    ig::Policy p;
    p.product = kind;
    p.x = 37;
    p.term = kind == ig::kLifeAnnuity ? ig::kMaxAge : 23;
    p.deferment = kind == ig::kLifeAnnuity ? 28 : 0;
    p.benefit = 1000;
    p.premium = 21.5;
    const double delta = 0.04;
    const ig::Problem pb = one_policy(table, p, delta, 1);
    std::vector<double> row(ig::kYears);
    const ig::RateTable rt = ig::make_rate_table(pb);
    ig::product_reserve(ig::product_spec(pb, p), rt.view(), table.view(), true, row.data());
    const std::vector<double> flows = ig::cash_flows_cpu(pb, ig::cash_flow_specs(pb, {p.premium}), 1);
    double pv = 0, scale = 0;
    for (int y = 0; y < ig::kYears; ++y) {
      pv += std::exp(-delta * y) * (flows[2 * y] - flows[2 * y + 1]);
      scale += std::exp(-delta * y) * flows[2 * y];
    }
    INFO("product " << kind << ": reserve " << row[0] << ", discounted flows " << pv);
    CHECK(std::fabs(pv - row[0]) <= 1e-9 * scale);
  }
}

TEST_CASE("integrate valuation: the same flows for any thread count; a spouse pension's benefits NaN") {
  ig::Problem pb;
  pb.align_breaks = true;
  for (int i = 0; i < 200; ++i) {
    ig::Policy p;
    p.product = i % ig::kProductKinds;
    p.x = 20 + i % 50;
    p.term = 5 + i % 30;
    p.premium = 0.01 * (1 + i % 7);
    pb.policies.push_back(p);
  }
  const std::vector<ig::ProductSpec> specs = ig::cash_flow_specs(pb, {});
  const std::vector<double> one = ig::cash_flows_cpu(pb, specs, 1), two = ig::cash_flows_cpu(pb, specs, 2);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)) == 0);
  const std::vector<double> flows = ig::cash_flows(pb, {}, ig::Engine{});
  CHECK(std::isnan(flows[0]));                                 // policy 0: a spouse pension's benefits
  CHECK(one[1] > 0);
  CHECK(flows[1] == one[1]);  // ... its premiums as computed
  CHECK(!std::isnan(flows[ig::kYears * ig::kCashFlowKinds]));  // policy 1: an annuity
}
