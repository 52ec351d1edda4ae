// The units of integrate's and gen-input integrate's records (common/units.hpp),
// in UDUNITS-2 syntax. Reserves, benefits and premiums are in currency units
// (per unit of yearly pension); CF has no currency unit, so money is "1"
// (docs/export.md says so). Ages, terms and the reserve's years are in years;
// rates, intensities and steps per year are per year.
#pragma once
#include <nlohmann/json.hpp>

namespace numpipe::integrate {

// valuation: also the records of --cash-flows and --duration (a default run's attrs
// name only the records it writes).
inline nlohmann::json units(bool valuation = false) {
  nlohmann::json u = nlohmann::json::object();
  for (const char* name : {"reserve", "reserve0", "premium", "benefit", "equivalence", "product", "probability", "q", "B"})
    u[name] = "1";
  for (const char* name : {"year", "g", "r", "x", "age", "term", "deferment", "premium_term", "maturity", "difference",
                           "mean", "sd"})
    u[name] = "year";
  for (const char* name : {"h1", "h2", "h3", "rate", "mu", "A", "C", "density"}) u[name] = "year-1";
  if (valuation) {
    u["cash_flow"] = "1";                // currency units a year
    u["reserve_rate_derivative"] = "1";  // currency units per unit of rate
    u["duration"] = "year";
  }
  return u;
}

}  // namespace numpipe::integrate
