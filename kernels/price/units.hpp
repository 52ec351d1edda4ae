// The units of price's and gen-input price's records (common/units.hpp), in
// UDUNITS-2 syntax. Prices, strikes and the spot are in the currency of the
// quotes, which the stream does not name; CF has no currency unit, so money is
// "1" (docs/export.md says so). Maturities are in years, rates per year; an
// implied volatility is an annualised fraction ("1"); delta, gamma and vega are
// money per money ("1").
#pragma once
#include <nlohmann/json.hpp>

namespace numpipe::price {

inline nlohmann::json units() {
  nlohmann::json u = {{"maturity", "year"}, {"rate", "year-1"}};
  for (const char* name : {"price", "strike", "quote", "weight", "type", "implied_vol", "price_error", "implied_vol_error",
                           "residual", "delta", "gamma", "vega", "iteration", "evaluations", "rms"})
    u[name] = "1";
  return u;
}

}  // namespace numpipe::price
