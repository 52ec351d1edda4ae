// The fitted distribution's functions beside the fit: the regularised
// incomplete gamma function and its inverse, the AEPD's distribution function
// and quantiles. Shared __host__ __device__ code: the CPU's finish and the CUDA
// backend's quantile kernel run the same source (unqualified exp, log, lgamma:
// the C library's on the host, CUDA's on the device).
#pragma once
#include <cmath>

#include "common/hd.hpp"

namespace numpipe::mle {

// ---- incomplete gamma ---------------------------------------------------------
// P(a, x) by its power series for x < a + 1 (DLMF 8.11.4 with 8.7.1:
// gamma(a, x) = x^a e^-x sum_k x^k / (a (a+1) ... (a+k))), else Q(a, x) by the
// continued fraction of DLMF 8.9.2 evaluated with the modified Lentz method
// (Lentz 1976; Thompson and Barnett 1986).
namespace detail {
NUMPIPE_HD_INLINE double gamma_series_p(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (fabs(term) < fabs(sum) * 1e-17) break;
  }
  return sum * exp(-x + a * log(x) - lgamma(a));
}
NUMPIPE_HD_INLINE double gamma_fraction_q(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (fabs(delta - 1.0) < 1e-16) break;
  }
  return exp(-x + a * log(x) - lgamma(a)) * h;
}
}  // namespace detail

// Regularised lower incomplete gamma P(a, x) and its complement Q(a, x).
NUMPIPE_HD_INLINE double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  if (x == INFINITY) return 1;
  return x < a + 1.0 ? detail::gamma_series_p(a, x) : 1.0 - detail::gamma_fraction_q(a, x);
}
NUMPIPE_HD_INLINE double gamma_q(double a, double x) {
  if (x <= 0) return 1;
  if (x == INFINITY) return 0;
  return x < a + 1.0 ? 1.0 - detail::gamma_series_p(a, x) : detail::gamma_fraction_q(a, x);
}

namespace detail {
// Solves F(x) = prob for a monotone F on (0, inf) (increasing when up):
// bracket by doubling, then Newton steps in x kept inside the bracket,
// bisection when a step leaves it.
template <class F, class D>
NUMPIPE_HD_INLINE double solve_monotone(F f, D density, double prob, bool up) {
  double lo = 0, hi = 1;
  auto below = [&](double x) { return up ? f(x) < prob : f(x) > prob; };  // root lies above x
  for (int i = 0; i < 2100 && below(hi); ++i) {
    lo = hi;
    hi *= 2;
  }
  double x = 0.5 * (lo + hi);
  for (int it = 0; it < 300; ++it) {
    const double fx = f(x) - prob;
    if (fx == 0) return x;
    if ((fx < 0) == up) lo = x;
    else hi = x;
    const double dens = density(x);
    double nx = dens > 0 ? x - (up ? fx : -fx) / dens : -1;
    if (!(nx > lo && nx < hi)) nx = 0.5 * (lo + hi);
    if (fabs(nx - x) <= 1e-15 * fabs(x) || hi - lo <= 1e-15 * hi) return nx;
    x = nx;
  }
  return x;
}
}  // namespace detail

// x with P(a, x) = prob, and x with Q(a, x) = prob.
NUMPIPE_HD_INLINE double gamma_p_inverse(double a, double prob) {
  if (prob <= 0) return 0;
  if (prob >= 1) return INFINITY;
  auto dens = [a](double x) { return exp(-x + (a - 1) * log(x) - lgamma(a)); };
  return detail::solve_monotone([a](double x) { return gamma_p(a, x); }, dens, prob, true);
}
NUMPIPE_HD_INLINE double gamma_q_inverse(double a, double prob) {
  if (prob >= 1) return 0;
  if (prob <= 0) return INFINITY;
  auto dens = [a](double x) { return exp(-x + (a - 1) * log(x) - lgamma(a)); };
  return detail::solve_monotone([a](double x) { return gamma_q(a, x); }, dens, prob, false);
}

// The AEPD's quantile (left-tail probability q): the left branch
// theta - s_l G^(1/p) holds mass w = s_l / (s_l + s_r), with G ~ Gamma(1/p, 1)
// (spec, "Generating data"), so for q <= w: q = w Q(1/p, ((theta - x)/s_l)^p);
// else q = w + (1-w) P(1/p, ((x - theta)/s_r)^p).
NUMPIPE_HD_INLINE double aepd_quantile(double q, double theta, double p, double s_l, double s_r) {
  if (!(s_l + s_r > 0)) return theta;
  const double w = s_l / (s_l + s_r), a = 1.0 / p;
  if (q <= w) return theta - s_l * pow(gamma_q_inverse(a, q / w), 1.0 / p);
  return theta + s_r * pow(gamma_p_inverse(a, (q - w) / (1.0 - w)), 1.0 / p);
}

// Two shapes: the left branch theta - s_l G1^(1/p1), G1 ~ Gamma(1/p1, 1), holds
// mass w = s_l g1 / (s_l g1 + s_r g2), g_i = Gamma(1 + 1/p_i) (inference.hpp).
// p1 == p2: aepd_quantile.
NUMPIPE_HD_INLINE double aepd_quantile2(double q, double theta, double p1, double p2, double s_l, double s_r) {
  if (p1 == p2) return aepd_quantile(q, theta, p1, s_l, s_r);
  const double g1 = s_l * exp(lgamma(1.0 + 1.0 / p1)), g2 = s_r * exp(lgamma(1.0 + 1.0 / p2));
  if (!(g1 + g2 > 0)) return theta;
  const double w = g1 / (g1 + g2);
  if (q <= w) return theta - s_l * pow(gamma_q_inverse(1.0 / p1, q / w), 1.0 / p1);
  return theta + s_r * pow(gamma_p_inverse(1.0 / p2, (q - w) / (1.0 - w)), 1.0 / p2);
}

// The AEPD's distribution function (two shapes; p1 = p2 for one).
NUMPIPE_HD_INLINE double aepd_cdf(double x, double theta, double p1, double p2, double s_l, double s_r) {
  const double g1 = s_l * exp(lgamma(1.0 + 1.0 / p1)), g2 = s_r * exp(lgamma(1.0 + 1.0 / p2));
  const double w = p1 == p2 ? s_l / (s_l + s_r) : g1 / (g1 + g2);
  if (x <= theta) return w * gamma_q(1.0 / p1, pow((theta - x) / s_l, p1));
  return w + (1.0 - w) * gamma_p(1.0 / p2, pow((x - theta) / s_r, p2));
}

}  // namespace numpipe::mle
