// The units of mle-fit's and gen-input mle's records (common/units.hpp). The
// location theta, the scales s_l and s_r and the quantiles are in the units of
// the series x (`x_units`: gen-input's draws are pure numbers, "1"; a CSV's
// column carries its own); the shape, the log-likelihood, AIC and BIC, the
// skew, indices and counts, and the GARCH fit's parameters (of the
// standardised series) are pure numbers.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace numpipe::mle {

inline nlohmann::json units(const std::string& x_units = "1") {
  nlohmann::json u = nlohmann::json::object();
  for (const char* name : {"x", "theta", "s_l", "s_r", "quantiles"}) u[name] = x_units.empty() ? "1" : x_units;
  for (const char* name : {"p", "loglik", "aic", "bic", "skew", "start", "no_maximum", "exceedances", "level", "n",
                           "kupiec_lr", "kupiec_p", "christoffersen_ind_lr", "christoffersen_ind_p", "cc_lr", "cc_p",
                           "no_forecast", "mu", "omega", "garch_alpha", "garch_beta", "series", "point", "window"})
    u[name] = "1";
  return u;
}

}  // namespace numpipe::mle
