// integrate: what a valuation needs beside the reserves: each policy's expected cash
// flows by year (the CPU side; products.hpp, product_cash_flows, the model both
// backends run) and each reserve's sensitivity to a parallel shift of the rate.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "integrate.hpp"

namespace numpipe::integrate {

std::vector<ProductSpec> cash_flow_specs(const Problem& problem, const std::vector<double>& premium) {
  std::vector<ProductSpec> specs(problem.policies.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Policy& p = problem.policies[i];
    ProductSpec s;
    if (p.product == kSpousePension) {  // its premiums alone (the benefits: NaN, below)
      s.x = p.x;
      s.end = cover_end(p);
      s.premium_end = std::min(premium_term_of(p), s.end);
      s.h1 = p.h1;
      s.insured = p.insured;
    } else {
      s = product_spec(problem, p);
    }
    s.premium = premium.empty() ? p.premium : premium[i];
    s.equivalence = 0;
    specs[i] = s;
  }
  return specs;
}

std::vector<double> cash_flows_cpu(const Problem& problem, const std::vector<ProductSpec>& specs, int threads) {
  if (threads > 0) omp_set_num_threads(threads);
  const RateTable rate = make_rate_table(problem);
  const RateView rv = rate.view();
  const BasisViews bv = basis_views(problem);
  const std::int64_t n = static_cast<std::int64_t>(specs.size());
  std::vector<double> flows(specs.size() * kYears * kCashFlowKinds);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t i = 0; i < n; ++i) {
    const ProductSpec& s = specs[static_cast<std::size_t>(i)];
    product_cash_flows(s, rv, bv.laws.data(), s.premium, flows.data() + i * kYears * kCashFlowKinds);
  }
  return flows;
}

Problem shifted_rate(const Problem& problem, const std::vector<double>& premium, double shift) {
  Problem p = problem;
  p.rate += shift;
  for (double& r : p.curve.rate) r += shift;  // zero rates shifted: every forward rate shifts by as much
  for (RateBasis& b : p.rate_bases) {        // and the policies' own, alike
    b.rate += shift;
    for (double& r : b.curve.rate) r += shift;
  }
  for (std::size_t i = 0; i < p.policies.size(); ++i) {
    Policy& pol = p.policies[i];
    if (!premium.empty()) pol.premium = premium[i];  // a premium solved for stays as solved
    pol.equivalence = false;
  }
  return p;
}

// A central difference of two solves on the same steps, not the derivative of Thiele's
// equation integrated alongside: it differentiates exactly what every product and both
// backends compute (the spouse pension's three levels, curves, discrete payments) with
// no second model to keep in step, for twice the solve. Its error: the truncation
// h^2 V''' / 6, relative (h D)^2 / 6 = 1.5e-8 at h = 1e-5 and a duration D of 30, and the
// reserves' rounding (about 1e-14 relative) over 2h, 5e-10; a shifted rate changes the
// steps only where the steps for a steep law (steep_steps) change within 1e-5.
RateSensitivity rate_sensitivity(const Problem& problem, const Result& result, const Engine& engine) {
  const Result up = solve(shifted_rate(problem, result.premium, kRateShift), engine);
  const Result down = solve(shifted_rate(problem, result.premium, -kRateShift), engine);
  const std::size_t n = problem.policies.size();
  RateSensitivity out;
  out.derivative.resize(n * kYears);
  out.duration.resize(n * kYears);
  for (std::size_t i = 0; i < n; ++i) {
    const double* v = result.reserve.data() + i * kYears;
    double largest = 0;
    for (int y = 0; y < kYears; ++y)
      if (std::isfinite(v[y])) largest = std::max(largest, std::fabs(v[y]));
    for (int y = 0; y < kYears; ++y) {
      const std::size_t k = i * kYears + static_cast<std::size_t>(y);
      const double d = (up.reserve[k] - down.reserve[k]) / (2 * kRateShift);
      out.derivative[k] = d;
      out.duration[k] = std::fabs(v[y]) > 1e-12 * largest ? -d / v[y] : std::numeric_limits<double>::quiet_NaN();
    }
  }
  return out;
}

}  // namespace numpipe::integrate
