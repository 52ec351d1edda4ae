// mle-fit after the grid: the refined optimum, the observed information and
// its standard errors, and a profile-likelihood interval for theta where the
// likelihood is not smooth in theta. One window per call, the same source for
// the CPU (one OpenMP iteration per window) and CUDA (one thread per window).
// This header: the task, the result and estimate_window; the arithmetic in
// detail/window_math.hpp, the searches and the body in detail/window_search.hpp.
//
// The general model has two shapes, p1 left of theta and p2 right of it
// (Zhu and Zinde-Walsh 2009, J. Econometrics 148, 86-99, in the scale form of
// model.hpp):
//   f(x) = exp(-((theta - x)/s_l)^p1) / D   x <= theta
//          exp(-((x - theta)/s_r)^p2) / D   x >  theta
//   D = s_l g1 + s_r g2,  g_i = Gamma(1 + 1/p_i)
// (continuous at theta; the left branch holds mass s_l g1 / D). With p1 = p2 = p,
// D = (s_l + s_r) Gamma(1/p) / p: model.hpp's density. Log-likelihood of a window
// of n points, with X- = sum over x <= theta of (theta - x)^p1 and X+ the same on
// the right with p2:
//   loglik = -n log D - X- / s_l^p1 - X+ / s_r^p2.
// Maximising over the scales: d/ds_l = 0 and d/ds_r = 0 give, with lambda = n / D,
//   s_l^(p1+1) = p1 X- / (g1 lambda),  s_r^(p2+1) = p2 X+ / (g2 lambda),
// and D = n / lambda becomes one equation in u = log lambda,
//   c1 exp(e1 u) + c2 exp(e2 u) = n,  e_i = p_i/(p_i+1),
//   c1 = g1^e1 (p1 X-)^(1/(p1+1)),  c2 = g2^e2 (p2 X+)^(1/(p2+1)),
// increasing and convex in u: Newton from the right converges monotonically.
// Then loglik = n u - n log n - c1 exp(e1 u)/p1 - c2 exp(e2 u)/p2. With p1 = p2
// the root is closed-form and this is the spec's profile formula.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/hd.hpp"
#include "detail/window_math.hpp"
#include "model.hpp"

namespace numpipe::mle {

// ---- one window ------------------------------------------------------------------
// What the caller asks for and where the search may go.
struct WindowTask {
  double theta0;                 // the grid's location (a data point)
  double p1, p1_lo, p1_hi;       // the grid's left (or common) shape and its grid neighbours
  double p2, p2_lo, p2_hi;       // right shape (= p1 and its box with one shape)
  double p_min, p_max;           // the grid's range
  bool two_shapes;
  bool refine;                   // search for the continuous optimum
  bool inform;                   // observed information, standard errors, theta interval
};
// The result, in the data's units. se: standard errors in the order of the
// `stderr` record's columns: (theta, p, s_l, s_r), or (theta, p1, p2, s_l, s_r)
// with two shapes; NaN where not defined. smooth: theta's row of the
// information exists (p > 1 on both sides); otherwise se[0] is NaN. [ci_lo, ci_hi]: theta's 95% profile-likelihood
// interval.
struct WindowEstimate {
  double theta, p1, p2, s_l, s_r, loglik;
  double se[kParams];
  double ci_lo, ci_hi;
  int smooth;
  int iterations;  // profile evaluations (passes over the window) of the searches
};

// The 95% point of chi-square with one degree of freedom (1.959963984540054^2).
inline constexpr double kChi2One95 = 3.841458820694124;
inline constexpr double kZ95 = 1.959963984540054;

// The refined optimum, the observed information and the interval for theta of
// one window x[0..n). The window is scaled by a power of two (exact) so that
// the largest distance from theta0 is near 1: d^p neither overflows nor
// underflows where it matters; results are scaled back.
//
// refine: with p > 1 (both shapes) the profile is smooth in theta between data
// points: theta starts halfway to the neighbouring data point on the side the
// profile rises and moves to the nearest maximum (within the window's range: as
// the shape moves off the grid, the best theta can pass the data points next
// to theta0); the shapes move between their grid neighbours (kept >= 1 here). With p <= 1 the
// maximum over theta is at a data point (spec): theta stays at theta0 and only
// the shapes move; where they end above 1, the smooth search follows. Both by
// newton_maximise on the profile (scales closed-form).
//
// inform: the observed information -H at the estimate, H the Hessian of the full
// log-likelihood in (theta, p, s_l, s_r) (two shapes: (theta, p1, p2, s_l, s_r)),
// except theta's row and column, which are their expectations under the
// fitted distribution (expect_theta_sums: the observed ones sum powers of
// |x - theta| dominated by the point nearest theta-hat); inverted by
// Cholesky; standard errors are the square roots of its diagonal.
// Where theta's row does not exist (p <= 1 on either side: the maximum over
// theta lies at a data point, and the expected information is infinite),
// theta's standard error is NaN and the others come from the information of the
// remaining parameters at the estimated theta (theta held fixed).
// [ci_lo, ci_hi] is the profile-likelihood interval
// {theta : 2 (loglik-hat - profile(theta)) <= 3.84}, the scales maximised and
// the shape held at its estimate (two shapes: both maximised in the grid's
// range), in every case (docs/mle.md compares the two intervals' coverage).
NUMPIPE_HD_INLINE WindowEstimate estimate_window(const double* x, std::int64_t n, const WindowTask& task);

}  // namespace numpipe::mle

// the searches and estimate_window's body, compiled by g++ and nvcc alike
#include "detail/window_search.hpp"
