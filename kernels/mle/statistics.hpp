// mle: the statistics beside the fit (post.cpp): goodness of fit, the normal and
// Student-t fits of the same windows, the windows without a maximum, the VaR
// backtest, and the log-likelihoods the tests check the fits with.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/mle/mle.hpp"

namespace numpipe::mle {

// ---- beside the fit -------------------------------------------------------------
// (the distribution function and quantiles: distribution.hpp)
// Kolmogorov-Smirnov sup |F_n - F| and Anderson-Darling A^2 of x[0..n) against
// the fitted distribution (F clipped to [1e-300, 1 - 2^-53] inside the logs).
void gof_statistics(const double* x, std::int64_t n, double theta, double p1, double p2, double s_l, double s_r,
                    double* ks, double* ad);
// Normal fit (closed form): mu, sigma, loglik.
void fit_normal(const double* x, std::int64_t n, double* out);
// Location-scale Student-t fit: mu, sigma, nu, loglik (see post.cpp).
void fit_student_t(const double* x, std::int64_t n, double* out);

// ---- windows without a maximum ----------------------------------------------------
// Where the likelihood has no maximum the fit is no answer: a window whose points
// are all equal (S = 0: log-likelihood +inf, scales 0), or one whose location is
// a value the window holds at least twice while the shape sits at the grid's
// smallest (either shape with two): with m points at theta the profile grows like
// n log(n / (n - m)) / p as p -> 0, so the ties, not the data's spread, set the
// shape and the grid's edge is no maximum (231 equal returns in a window of 250
// gave a 1% VaR of -0.035% against an empirical -0.49%).
enum class Degenerate : std::uint8_t { none = 0, constant = 1, ties = 2 };
// Marks windows [series][windows] of `e` (as finish() returns them, in the data's
// units) and sets their estimates, standard errors, intervals, goodness of fit and
// quantiles to NaN. One code per window.
std::vector<Degenerate> mark_degenerate(const Series& s, const Params& p, std::size_t levels, Estimates& e);

// ---- VaR backtest ------------------------------------------------------------------
// Each out-of-sample point t (window <= t < length) against the quantile of the
// latest window that ends before it, w = (t - window) / step: a hit (1) when
// x[t] < q for a level <= 0.5 (the loss exceeds the VaR), x[t] > q for a level
// above 0.5. hits: [series][length - window][levels]; kNoForecast where the
// quantile is NaN (a window without a maximum: mark_degenerate).
inline constexpr std::uint8_t kNoForecast = 2;
std::vector<std::uint8_t> exceedances(const Series& s, const Params& p, const std::vector<double>& levels,
                                      const std::vector<double>& quantiles);
// Kupiec's proportion-of-failures test (Kupiec 1995) and Christoffersen's
// independence and conditional-coverage tests (Christoffersen 1998) of one hit
// series against the expected rate (level, or 1 - level above 0.5). Columns of
// the `backtest` record, in this order. Points without a forecast (kNoForecast)
// are counted apart (no_forecast) and left out: n counts the others, and
// Christoffersen's transitions join consecutive points that both have one.
struct BacktestRow {
  double level, n, exceedances, kupiec_lr, kupiec_p, christoffersen_ind_lr, christoffersen_ind_p, cc_lr, cc_p,
      no_forecast;
};
inline constexpr int kBacktestColumns = 10;
BacktestRow backtest_statistics(double level, const std::uint8_t* hits, std::int64_t count, std::int64_t stride);
// Survival functions of chi-square with 1 and 2 degrees of freedom.
double chi2_sf1(double x);
double chi2_sf2(double x);

// The full log-likelihood of window points x[0..n) at (theta, p, s_l, s_r).
double full_loglik(const double* x, std::int64_t n, double theta, double p, double s_l, double s_r);
// Profile log-likelihood at location theta, shape p (closed-form scales), O(n).
double profile_loglik_at(const double* x, std::int64_t n, double theta, double p);

}  // namespace numpipe::mle
