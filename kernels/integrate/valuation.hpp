// integrate: what a run reports beside the reserves (included by integrate.hpp after
// its types): Richardson's error estimate, each policy's expected cash flows, and each
// reserve's sensitivity to a parallel shift of the rate (valuation.cpp, backend.cpp).
#pragma once
#include <vector>

namespace numpipe::integrate {

// Richardson's error estimate (docs/integrate.md, "Accuracy"): the problem at half
// the steps per year (each level's h -> ceil(h / 2)), and from the two results the
// error of the finer one, |V_h - V_half| / (q^p - 1) with q = h1 / ceil(h1 / 2) and
// p the scheme's order (4 aligned, 1 faithful), |V_h - V_half| where q = 1.
Problem halved_steps(const Problem& problem);
// Every level at `steps` a year.
Problem with_steps(const Problem& problem, int steps);
struct ErrorEstimate {
  double absolute = 0;  // the largest estimated error of any reserve
  double relative = 0;  // the largest estimated error relative to its policy's largest |reserve|
};
ErrorEstimate richardson_estimate(const Problem& problem, const Result& fine, const Result& half);

// Expected cash flows (products.hpp, product_cash_flows) of every policy with its
// premium as solved: [policies][kYears][2], benefits and premiums by year. A spouse
// pension's premiums are its insured's; its benefits (the spouse's pension, which
// depends on the spouse's life too) are not computed: NaN.
inline constexpr int kCashFlowKinds = 2;
std::vector<double> cash_flows(const Problem& problem, const std::vector<double>& premium, const Engine& engine);

// Each reserve's sensitivity to a parallel shift of the rate (the constant force of
// interest, or every zero rate of a curve), the premiums held at their values:
// dV/dr by a central difference of two solves at r + h and r - h on the same steps,
// and the effective duration -(1/V) dV/dr (NaN where the reserve is zero to rounding).
inline constexpr double kRateShift = 1e-5;
struct RateSensitivity {
  std::vector<double> derivative;  // [policies][kYears]: dV/dr (NaN past 120 - x)
  std::vector<double> duration;    // [policies][kYears]: -(1/V) dV/dr
};
Problem shifted_rate(const Problem& problem, const std::vector<double>& premium, double shift);
RateSensitivity rate_sensitivity(const Problem& problem, const Result& result, const Engine& engine);

}  // namespace numpipe::integrate
