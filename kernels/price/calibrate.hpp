// price: calibration of the model's parameters to a quote table by Levenberg-Marquardt
// (Eigen's LevenbergMarquardt, the MINPACK algorithm; optional: built when Eigen 3
// is found, see kernels/price/CMakeLists.txt).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io.hpp"
#include "price.hpp"

namespace numpipe::price {

// False when this build has no calibration (Eigen was not found).
bool calibration_available();

// The free parameters: any of alpha, nu, rho, beta (each at most once). Bad input
// otherwise, naming the value.
std::vector<std::string> parse_fit(const std::string& text);

struct CalibrationOptions {
  std::vector<std::string> fit = {"alpha", "nu", "rho"};
  int max_evaluations = 200;  // pricing passes (each point of a Jacobian counts one)
  double xtol = 1e-8;         // relative change of the (transformed) parameters
  double ftol = 1e-10;        // relative reduction of the sum of squares
  // Start from Hagan's formula fitted to the quotes where the model fits them better
  // there than at the given parameters (calibrate below).
  bool hagan_start = true;
  // Fit on a coarser grid first and correct on the given one (calibrate below).
  bool two_levels = true;
};

struct CalibrationIteration {
  int iteration = 0;          // 0: the start
  int evaluations = 0;        // pricing passes so far
  double rms = 0;             // root mean square of the weighted residuals (volatility units)
  std::vector<double> values; // the free parameters
};

struct CalibrationResult {
  Params fitted;                       // the start with the free parameters replaced
  std::vector<std::string> names;      // the free parameters
  std::vector<double> start, values;   // their given start and fitted values
  std::vector<double> hagan_values;    // the free parameters of Hagan's fit (empty: none made)
  std::string started_from;            // "hagan" or "given": where the fit started
  std::vector<double> standard_error;  // from the Jacobian at the fit (NaN when it is singular)
  bool converged = false;
  std::string status;                  // the optimiser's reason for stopping
  int evaluations = 0;
  std::vector<CalibrationIteration> log;
  // per quote, at the fit: the model's price, its implied volatility, and the
  // residual model - quote in the quote's units (price or implied volatility)
  std::vector<double> model_price, model_vol, residual;
  double rms = 0;                      // of the weighted residuals, volatility units
  // The two-level fit (empty when the fit was made on the given grid alone): the coarse
  // grid's sizes (numX, numY, numT), its passes and fitted values, and each parameter's
  // discretisation error on the given grid, |fitted - coarse| / (r - 1) with r the
  // ratio of the two grids' price errors, (numX / coarse numX)^2.
  std::vector<std::int64_t> coarse_grid;
  int coarse_evaluations = 0;
  std::vector<double> coarse_values, discretisation_error;
  double device_seconds = 0;  // CUDA: the pricing passes' device time (CUDA events); 0 on the CPU
};

// Fits the problem's free parameters to its quotes. The start: with hagan_start,
// Hagan's formula (black.hpp) is fitted to the quotes' implied volatilities from the
// problem's parameters, and the fit starts there when the model's residuals are
// smaller there than at the problem's parameters (both priced in one pass; at long
// expiries the formula is biased, but its point is usually much nearer the answer);
// otherwise the problem's parameters are the start. Residual of quote q: weight_q * (model price - quote price) / vega_q, where
// the quote price is the quote or Black's price of the quoted implied volatility and
// vega_q Black's vega at the quote's implied volatility (floored at 1e-3 s0 sqrt(T)):
// to first order the implied-volatility error. Parameters are moved in unbounded
// coordinates (log alpha, log nu, atanh rho, beta); the Jacobian is a forward
// difference of the pricer (step 1e-4 in those coordinates), every point of it in
// one batched pass on CUDA. A trial point whose grid is invalid (s0 off the grid, a
// strike beyond it) counts as a large residual. progress(evaluations) after each pass.
CalibrationResult calibrate(const Problem& pr, const CalibrationOptions& options, const Engine& engine,
                            const std::function<void(int)>& progress = {});

}  // namespace numpipe::price
