// mle-fit --model garch: the innovations' AEPD standardised to mean 0 and
// variance 1 (kernels/mle/garch.hpp), one shape and two (Zhu and Zinde-Walsh
// 2009). The density the likelihood sums (garch_point_density at sigma_t = 1) integrated
// numerically: mass 1, mean 0, variance 1, and the left branch's mass the skew;
// its quantiles (garch_quantile) against the integrated distribution function;
// with p1 = p2 the one-shape density written here from its definition
// (Komunjer 2007's scale form, docs/mle.md); the gradient of the window's
// log-likelihood in all seven parameters against central differences.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "common/random.hpp"
#include "kernels/mle/garch_model.hpp"

using namespace numpipe;
using namespace numpipe::mle;

namespace {
struct Moments {
  double mass, mean, second, left_mass;
};
// The density f(z) = exp(garch_point_density(z, 1, z)) integrated on each side of
// theta over d = |z - theta| / s on a log grid (t = log d, the trapezoid rule,
// which converges geometrically for an integrand decaying at both ends), out to
// d^p = 700.
Moments integrate(const StandardAepd& z) {
  Moments m{0, 0, 0, 0};
  for (int side = 0; side < 2; ++side) {
    const double s = side == 0 ? z.s_l : z.s_r, p = side == 0 ? z.p1 : z.p2, sign = side == 0 ? -1.0 : 1.0;
    const double t_lo = -40, t_hi = std::log(700.0) / p, dt = 2e-3;
    double mass = 0, mean = 0, second = 0;
    for (double t = t_lo; t <= t_hi; t += dt) {
      const double d = std::exp(t), x = z.theta + sign * s * d;
      const double w = std::exp(garch_point_density(x, 1.0, z)) * s * d * dt;
      mass += w;
      mean += w * x;
      second += w * x * x;
    }
    m.mass += mass;
    m.mean += mean;
    m.second += second;
    if (side == 0) m.left_mass = mass;
  }
  return m;
}
// P(Z <= x) by the same rule.
double cdf(const StandardAepd& z, double x) {
  const bool left = x <= z.theta;
  const double s = left ? z.s_l : z.s_r;
  const double d_x = std::fabs(x - z.theta) / s;
  double inner = 0;  // between theta and x: the trapezoid rule on [-40, log d_x]
  if (d_x > 0) {
    const double t_lo = -40, t_hi = std::log(d_x);
    const int steps = static_cast<int>(std::ceil((t_hi - t_lo) / 1e-3));
    const double dt = (t_hi - t_lo) / steps;
    for (int i = 0; i <= steps; ++i) {
      const double d = std::exp(t_lo + i * dt), end = i == 0 || i == steps ? 0.5 : 1.0;
      inner += end * std::exp(garch_point_density(z.theta + (left ? -1 : 1) * s * d, 1.0, z)) * s * d * dt;
    }
  }
  const double left_mass = integrate(z).left_mass;
  return left ? left_mass - inner : left_mass + inner;
}
}  // namespace

TEST_CASE("garch aepd: standardised to mass 1, mean 0, variance 1, left mass the skew") {
  const double cases[][3] = {{0.5, 2, 2},    {0.3, 1.2, 2.5}, {0.7, 0.6, 1.5}, {0.45, 3, 0.8},
                             {0.55, 0.4, 8}, {0.5, 1.3, 1.3}, {0.62, 1.8, 1.1}};
  for (const auto& c : cases) {
    CAPTURE(c[0]);
    CAPTURE(c[1]);
    CAPTURE(c[2]);
    const StandardAepd z = standard_aepd(c[0], c[1], c[2]);
    const Moments m = integrate(z);
    CHECK(std::fabs(m.mass - 1) < 1e-9);
    CHECK(std::fabs(m.mean) < 1e-9);
    CHECK(std::fabs(m.second - 1) < 1e-9);
    CHECK(std::fabs(m.left_mass - c[0]) < 1e-9);
  }
}

TEST_CASE("garch aepd: with p1 = p2 the one-shape density") {
  for (double a : {0.25, 0.5, 0.66})
    for (double p : {0.5, 1.0, 1.37, 2.0, 6.0}) {
      CAPTURE(a);
      CAPTURE(p);
      // one shape (Komunjer 2007; docs/mle.md): f(x) = p / ((s_l + s_r) Gamma(1/p))
      // exp(-(|x - theta| / s)^p), s = s_l left of theta, s_r right, left mass
      // s_l / (s_l + s_r) = a; mean 0 and variance 1 from m_k = Gamma((k+1)/p) / Gamma(1/p)
      const double b = 1 - a;
      const double m1 = std::tgamma(2 / p) / std::tgamma(1 / p), m2 = std::tgamma(3 / p) / std::tgamma(1 / p);
      const double c = 1 / std::sqrt((a * a * a + b * b * b) * m2 - (b - a) * (b - a) * m1 * m1);
      const double s_l = a * c, s_r = b * c, theta = -(b - a) * c * m1;
      const StandardAepd z = standard_aepd(a, p, p);
      CHECK(std::fabs(z.s_l - s_l) < 1e-13 * s_l);
      CHECK(std::fabs(z.s_r - s_r) < 1e-13 * s_r);
      CHECK(std::fabs(z.theta - theta) < 1e-13);
      const double log_norm = std::log(p / ((s_l + s_r) * std::tgamma(1 / p)));
      CHECK(std::fabs(garch_point_density(z.theta, 1.0, z) - log_norm) < 1e-12);  // at the mode
      for (double x : {-4.0, -1.5, -0.3, 0.2, 1.1, 3.7}) {
        const double s = x <= theta ? s_l : s_r;
        const double want = log_norm - std::pow(std::fabs(x - theta) / s, p);
        CAPTURE(x);
        CHECK(std::fabs(garch_point_density(x, 1.0, z) - want) < 1e-12 * std::max(1.0, std::fabs(want)));
      }
    }
}

TEST_CASE("garch aepd: the quantiles invert the distribution function") {
  const double sigma2 = 2.5e-4, mu = 3e-4;
  const double shape_pairs[][2] = {{1.2, 2.5}, {2.4, 0.9}};
  for (const auto& shapes : shape_pairs) {
    const double par[kGarchParams] = {mu, 1e-6, 0.1, 0.8, 0.46, shapes[0], shapes[1]};
    const StandardAepd z = standard_aepd(par[kSkew], par[kShape], par[kShape2]);
    for (double q : {0.01, 0.05, 0.3, 0.5, 0.9, 0.99}) {
      CAPTURE(q);
      const double x = garch_quantile(q, par, sigma2);
      CHECK(std::fabs(cdf(z, (x - mu) / std::sqrt(sigma2)) - q) < 1e-7);
    }
  }
}

TEST_CASE("garch aepd: the window's gradient in all seven parameters against central differences") {
  Rng rng(17);
  std::vector<double> r(400);
  for (double& v : r) v = 1e-2 * rng.normal() * (1 + 0.5 * rng.uniform());
  const GarchSerialWindow w{r.data(), static_cast<std::int64_t>(r.size())};
  for (double p2 : {1.6, 2.7}) {
    CAPTURE(p2);
    const double par[kGarchParams] = {1e-3, 2e-5, 0.08, 0.85, 0.43, 1.6, p2};
    double g[kGarchParams];
    const double ll = w.loglik_gradient(par, g);
    CHECK(ll == w.loglik(par, nullptr));  // the two passes sum the same terms the same way
    const double step[kGarchParams] = {1e-6, 1e-9, 1e-6, 1e-6, 1e-6, 1e-5, 1e-5};
    for (int k = 0; k < kGarchParams; ++k) {
      CAPTURE(k);
      double up[kGarchParams], dn[kGarchParams];
      for (int i = 0; i < kGarchParams; ++i) up[i] = dn[i] = par[i];
      up[k] += step[k];
      dn[k] -= step[k];
      const double fd = (w.loglik(up, nullptr) - w.loglik(dn, nullptr)) / (2 * step[k]);
      CHECK(std::fabs(g[k] - fd) < 1e-5 * std::max(1.0, std::fabs(fd)));
    }
  }
}

TEST_CASE("garch aepd: the sum of logs as the log of a rescaled product") {
  Rng rng(5);
  for (double spread : {1.0, 30.0, 600.0}) {  // factors 10^(+-spread/2): products far outside double's range
    CAPTURE(spread);
    GarchLogSum product;
    long double exact = 0;
    double largest = 0;
    for (int t = 0; t < 500; ++t) {
      const double x = std::pow(10.0, spread * (rng.uniform() - 0.5)) * (1 + rng.uniform());
      product.add(x);
      exact += std::log(static_cast<long double>(x));
      largest = std::max(largest, std::fabs(std::log(x)));
    }
    CHECK(std::fabs(product.log_value() - static_cast<double>(exact)) < 1e-15 * 500 * std::max(1.0, largest));
  }
  GarchLogSum one;
  one.add(0x1p-1070);  // a subnormal factor: rescaled before the product
  one.add(0x1p1000);
  CHECK(one.log_value() == doctest::Approx(-70 * std::log(2.0)).epsilon(1e-15));
}
