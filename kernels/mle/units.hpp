// The units of mle-fit's and gen-input mle's records (common/units.hpp), U
// being the units of the series x (`x_units`: gen-input's draws and log returns
// are pure numbers, "1"; a CSV's column carries its own).
//
// iid fits (units): the location theta, the scales s_l and s_r, the quantiles,
// theta's interval theta_ci and the compared normal's and Student-t's mu and
// sigma are in U; the shapes (p, p1, p2, the t's nu), the skew, log-likelihoods,
// AIC and BIC, the goodness-of-fit statistics ks and ad, the backtest's counts
// and p-values, indices and counts are pure numbers. Standard errors (the
// stderr record's columns) have their estimate's units.
//
// GARCH(1,1) fits (garch_units; kernels/mle/garch.hpp): r_t = mu + sigma_t z_t,
// so mu (also written as theta) and sigma are in U and omega, a variance
// constant, in U^2; alpha, beta and the standardised innovation's p (p1, p2), skew,
// s_l and s_r are pure numbers.
#pragma once
#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

namespace numpipe::mle {

namespace units_detail {
inline std::string or_number(const std::string& x_units) { return x_units.empty() ? "1" : x_units; }

// The square of a UDUNITS unit: "1" stays "1", "K" gives "K2", "m s-1" "(m s-1)2".
inline std::string squared(const std::string& u) {
  if (u == "1") return u;
  for (char c : u)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return "(" + u + ")2";
  return u + "2";
}

inline nlohmann::json pure_numbers() {
  nlohmann::json u = nlohmann::json::object();
  for (const char* name : {"p", "p1", "p2", "nu", "loglik", "aic", "bic", "loglik_normal", "aic_normal", "bic_normal",
                           "loglik_t", "aic_t", "bic_t", "ks", "ad", "skew", "start", "no_maximum", "exceedances", "level",
                           "n", "kupiec_lr", "kupiec_p", "christoffersen_ind_lr", "christoffersen_ind_p", "cc_lr", "cc_p",
                           "no_forecast", "garch_alpha", "garch_beta", "series", "point", "window"})
    u[name] = "1";
  return u;
}
}  // namespace units_detail

inline nlohmann::json units(const std::string& x_units = "1") {
  nlohmann::json u = units_detail::pure_numbers();
  for (const char* name : {"x", "theta", "s_l", "s_r", "quantiles", "theta_ci", "mu", "sigma"})
    u[name] = units_detail::or_number(x_units);
  return u;
}

inline nlohmann::json garch_units(const std::string& x_units = "1") {
  const std::string x = units_detail::or_number(x_units);
  nlohmann::json u = units_detail::pure_numbers();
  for (const char* name : {"s_l", "s_r"}) u[name] = "1";  // of the standardised innovation
  for (const char* name : {"x", "theta", "mu", "sigma", "quantiles"}) u[name] = x;
  u["omega"] = units_detail::squared(x);
  return u;
}

}  // namespace numpipe::mle
