// The units of price's and gen-input price's records (common/units.hpp), in
// UDUNITS-2 syntax. Prices, strikes and the spot are in the currency of the
// quotes, which the stream does not name; CF has no currency unit, so money is
// "1" (docs/export.md says so). Maturities are in years, rates per year; an
// implied volatility is an annualised fraction ("1"); delta, gamma and vega are
// money per money ("1"). The model's parameters (the problem record's fields,
// the calibrated ones and the calibration log's columns): alpha and nu are
// annualised volatilities ("1", as implied_vol), beta and rho pure numbers, s0
// money, t (the maturity) years, the grid's sizes counts.
#pragma once
#include <nlohmann/json.hpp>

namespace numpipe::price {

inline nlohmann::json units() {
  nlohmann::json u = {{"maturity", "year"}, {"t", "year"}, {"rate", "year-1"}};
  for (const char* name : {"price", "strike", "quote", "weight", "type", "implied_vol", "price_error", "implied_vol_error",
                           "residual", "delta", "gamma", "vega", "iteration", "evaluations", "rms", "calibrated", "alpha",
                           "nu", "beta", "rho", "s0", "outer", "num_x", "num_y", "num_t"})
    u[name] = "1";
  return u;
}

}  // namespace numpipe::price
