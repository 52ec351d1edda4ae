// price: Black's formula (zero rates) and the implied volatility (black.hpp).
#include "black.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace numpipe::price {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

double norm_cdf(double x) { return 0.5 * std::erfc(-x * kInvSqrt2); }

// The out-of-the-money option's price for s = sigma sqrt(T): a call when K >= F,
// a put when K < F.
double otm_price(double f, double k, double s) {
  if (s <= 0) return 0;
  const double x = std::log(f / k);
  const double d1 = x / s + 0.5 * s, d2 = d1 - s;
  if (k >= f) return f * norm_cdf(d1) - k * norm_cdf(d2);
  return k * norm_cdf(-d2) - f * norm_cdf(-d1);
}

// d(otm_price)/ds = F phi(d1).
double otm_slope(double f, double k, double s) {
  const double x = std::log(f / k);
  const double d1 = x / s + 0.5 * s;
  return f * kInvSqrt2Pi * std::exp(-0.5 * d1 * d1);
}

}  // namespace

double black_price(double forward, double strike, double maturity, double sigma, bool put) {
  const double s = sigma * std::sqrt(maturity);
  const double otm = otm_price(forward, strike, s);
  // parity with zero rates: call - put = F - K
  const bool otm_is_put = strike < forward;
  if (put == otm_is_put) return otm;
  return put ? otm + (strike - forward) : otm + (forward - strike);
}

double black_vega(double forward, double strike, double maturity, double sigma) {
  const double s = sigma * std::sqrt(maturity);
  if (s <= 0) return 0;
  return otm_slope(forward, strike, s) * std::sqrt(maturity);
}

bool inside_bounds(double price, double forward, double strike, bool put) {
  const double intrinsic = put ? std::max(strike - forward, 0.0) : std::max(forward - strike, 0.0);
  const double upper = put ? strike : forward;
  return std::isfinite(price) && price >= intrinsic && price < upper;
}

double implied_vol(double price, double forward, double strike, double maturity, bool put) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!(forward > 0 && strike > 0 && maturity > 0) || !inside_bounds(price, forward, strike, put)) return nan;
  const bool otm_is_put = strike < forward;
  // the out-of-the-money price by parity (exact when the option is already OTM)
  const double p = put == otm_is_put ? price : put ? price - (strike - forward) : price - (forward - strike);
  if (p <= 0) return 0;
  const double top = std::min(forward, strike);
  if (p >= top) return nan;
  double lo = 0, hi = 1;
  while (otm_price(forward, strike, hi) <= p) {
    lo = hi;
    hi *= 2;
    if (hi > 1e3) return nan;  // indistinguishable from the upper bound in double
  }
  const double inflection = std::sqrt(2.0 * std::fabs(std::log(forward / strike)));
  const double p_inflection = otm_price(forward, strike, inflection);
  const bool log_form = p < p_inflection;  // the convex branch: Newton on ln b
  auto residual = [&](double s) {
    const double b = otm_price(forward, strike, s);
    return log_form ? (b > 0 ? std::log(b) - std::log(p) : -std::numeric_limits<double>::infinity()) : b - p;
  };
  double s = std::clamp(inflection, lo, hi);
  if (!(s > lo && s < hi)) s = 0.5 * (lo + hi);
  double r = residual(s);
  for (int it = 0; it < 200 && r != 0; ++it) {
    if (r < 0) lo = s;
    else hi = s;
    if (hi - lo <= 4 * std::numeric_limits<double>::epsilon() * hi) break;
    double next = std::numeric_limits<double>::quiet_NaN();
    const double slope = otm_slope(forward, strike, s);
    if (slope > 0 && std::isfinite(r)) {
      const double b = otm_price(forward, strike, s);
      next = s - (log_form ? r * b / slope : r / slope);
    }
    double r_next = 0;
    if (next > lo && next < hi) {
      r_next = residual(next);
      if (std::fabs(r_next) > 0.5 * std::fabs(r) && std::isfinite(r)) next = std::numeric_limits<double>::quiet_NaN();
    }
    if (!(next > lo && next < hi)) {
      next = 0.5 * (lo + hi);
      r_next = residual(next);
    }
    s = next;
    r = r_next;
  }
  return s / std::sqrt(maturity);
}

double hagan_implied_vol(double forward, double strike, double maturity, double alpha, double beta, double rho,
                         double nu) {
  if (!(alpha > 0) || !(nu > 0) || !(std::fabs(rho) < 1) || !(forward > 0) || !(strike > 0))
    return std::numeric_limits<double>::quiet_NaN();
  const double omb = 1 - beta, omb2 = omb * omb;
  const double fk = std::pow(forward * strike, 0.5 * omb);  // (f K)^((1 - beta) / 2)
  const double l = std::log(forward / strike), l2 = l * l;
  const double den = fk * (1 + omb2 / 24 * l2 + omb2 * omb2 / 1920 * l2 * l2);
  const double z = nu / alpha * fk * l;
  const double z_over_x = std::fabs(z) < 1e-6
                              ? 1 - 0.5 * rho * z
                              : z / std::log((std::sqrt(1 - 2 * rho * z + z * z) + z - rho) / (1 - rho));
  const double correction =
      omb2 / 24 * alpha * alpha / (fk * fk) + rho * beta * nu * alpha / (4 * fk) + (2 - 3 * rho * rho) / 24 * nu * nu;
  return alpha / den * z_over_x * (1 + correction * maturity);
}

}  // namespace numpipe::price
