// price: Black's formula with zero rates (the forward is the spot s0) and its
// inverse, the implied volatility, and Hagan's SABR approximation of it; host code,
// used by the tool's --implied-vol, calibration's weights and start, and the tests.
#pragma once

namespace numpipe::price {

// Black (1976) with zero rates: call = F N(d1) - K N(d2), put = K N(-d2) - F N(-d1),
// d1,2 = (ln(F/K) +- sigma^2 T / 2) / (sigma sqrt T); N by erfc (accurate in the
// tails). sigma = 0 gives the intrinsic value.
double black_price(double forward, double strike, double maturity, double sigma, bool put);
// dPrice/dsigma = F phi(d1) sqrt(T) (calls and puts alike).
double black_vega(double forward, double strike, double maturity, double sigma);

// The volatility whose Black price is `price`; NaN where none exists (a price below
// the intrinsic value or at or above the upper bound, F for a call, K for a put),
// 0 at exactly the intrinsic value.
//
// Root finder: the out-of-the-money option's price (put-call parity for the other) as
// a function of s = sigma sqrt(T) rises strictly from 0 towards min(F, K); its root
// is kept inside a bracket [lo, hi] (lo = 0; hi doubled from 1 until it prices above
// the target). Newton steps from the inflection point s = sqrt(2 |ln(F/K)|) are taken
// on ln(b(s)) - ln(p) below the inflection point's price (where b is convex and
// spans many orders of magnitude) and on b(s) - p above it; a step that leaves the
// bracket, or fails to halve the residual, is replaced by bisection. Converges for
// every price inside the bounds; stops when the bracket's width is below 4 ulp of s
// or the residual is zero (at most 200 iterations).
double implied_vol(double price, double forward, double strike, double maturity, bool put);

// True when a price lies inside Black's no-arbitrage bounds: intrinsic <= price <
// upper (F for a call, K for a put).
bool inside_bounds(double price, double forward, double strike, bool put);

// SABR's Black implied volatility to first order in the expiry: Hagan, Kumar,
// Lesniewski and Woodward, "Managing smile risk", Wilmott (2002), eq. (2.17a), with
// z / x(z) = 1 - rho z / 2 (its expansion) where |z| < 1e-6. Accurate at short
// expiries (error O(T^2)); NaN where the formula has no value (|rho| >= 1, alpha or
// nu not positive).
double hagan_implied_vol(double forward, double strike, double maturity, double alpha, double beta, double rho,
                         double nu);

}  // namespace numpipe::price
