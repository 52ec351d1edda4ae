// mle-fit: the model against independent computations (kernels/mle).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <omp.h>

#include "common/error.hpp"
#include "common/random.hpp"
#include "kernels/mle/detail/backends.hpp"
#include "kernels/mle/mle.hpp"
#include "kernels/mle/statistics.hpp"
#include "kernels/mle/model.hpp"

using namespace numpipe;
using namespace numpipe::mle;

namespace {

// AEPD draws by inverse transform, as gen-input mle does.
std::vector<double> draw(std::size_t n, double theta, double p, double sl, double sr, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  const double wl = sl / (sl + sr);
  for (double& v : x) {
    const bool left = rng.uniform() < wl;
    const double g = std::pow(rng.gamma(1.0 / p), 1.0 / p);
    v = left ? theta - sl * g : theta + sr * g;
  }
  return x;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(a), std::fabs(b)); }

template <class F>
double golden(F f, double a, double b) {  // maximiser of f on [a, b]
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double c = b - g * (b - a), d = a + g * (b - a), fc = f(c), fd = f(d);
  for (int i = 0; i < 120; ++i) {
    if (fc >= fd) { b = d; d = c; fd = fc; c = b - g * (b - a); fc = f(c); }
    else { a = c; c = d; fc = fd; d = a + g * (b - a); fd = f(d); }
  }
  return 0.5 * (a + b);
}

WindowFits fit(const std::vector<double>& x, std::int64_t series, const Params& p) {
  Series s{x.data(), series, static_cast<std::int64_t>(x.size()) / series};
  WindowFits f;
  solve_cpu(s, p, f);
  return f;
}

}  // namespace

TEST_CASE("mle: closed-form scales equal a numerical maximisation of the likelihood") {
  const std::vector<double> x = draw(200, 0.3, 1.7, 0.8, 1.9, 11);
  const double theta = x[17], p = 1.7, n = 200;
  double xm = 0, xp = 0;
  for (double v : x) (v <= theta ? xm : xp) += std::pow(std::fabs(v - theta), p);
  const Scales sc = closed_form_scales(xm, xp, p, n);
  // The full likelihood (sum of log densities) maximised over log s_l, log s_r
  // by coordinate golden-section searches, independent of the closed form.
  double ul = 0, ur = 0;
  auto ll = [&](double a, double b) { return full_loglik(x.data(), 200, theta, p, std::exp(a), std::exp(b)); };
  for (int round = 0; round < 300; ++round) {
    ul = golden([&](double a) { return ll(a, ur); }, -6, 6);
    ur = golden([&](double b) { return ll(ul, b); }, -6, 6);
  }
  CHECK(rel(std::exp(ul), sc.s_l) < 1e-6);
  CHECK(rel(std::exp(ur), sc.s_r) < 1e-6);
  const double at_closed = full_loglik(x.data(), 200, theta, p, sc.s_l, sc.s_r);
  CHECK(ll(ul, ur) <= at_closed + 1e-9);
  // The spec's profile formula is the full likelihood at the closed-form scales.
  CHECK(rel(profile_loglik(scale_sum(xm, xp, 1 / (p + 1)), p, n), at_closed) < 1e-13);
}

TEST_CASE("mle: the grid argmax equals a brute-force double loop") {
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<double> x = draw(61, -0.2, 1.3, 1.0, 0.6, 5 + variant);
    if (variant == 2)
      for (double& v : x) v = std::round(v * 10) / 10;  // ties: repeated values
    Params p;
    p.window = 61;
    p.grid = parse_grid(variant == 1 ? "0.7,1.1,2.5,0.9" : "0.6:3:13");
    p.exact = true;
    const WindowFits f = fit(x, 1, p);
    // brute force: every data point, every shape, std::pow, full likelihood
    double best = -INFINITY, bt = 0, bp = 0;
    for (double theta : x)
      for (double a : p.grid.alpha) {
        double xm = 0, xp = 0;
        for (double v : x) (v <= theta ? xm : xp) += std::pow(std::fabs(v - theta), a);
        const Scales sc = closed_form_scales(xm, xp, a, 61);
        const double l = full_loglik(x.data(), 61, theta, a, sc.s_l, sc.s_r);
        if (l > best * (1 + 1e-13 * (best < 0 ? 1 : -1))) {  // strictly better beyond rounding
          best = l;
          bt = theta;
          bp = a;
        }
      }
    CAPTURE(variant);
    CHECK(x[static_cast<std::size_t>(f.index[0])] == bt);
    CHECK(p.grid.alpha[static_cast<std::size_t>(f.shape[0])] == bp);
    CHECK(rel(f.loglik[0], best) < 1e-12);
  }
}

TEST_CASE("mle: incremental rolling equals --exact over a 100000-point series") {
  const std::vector<double> x = draw(100000, 0.0, 1.4, 1.0, 2.0, 2024);
  Params p;
  p.window = 40;
  p.step = 1;
  p.grid = parse_grid("0.5:3:8");
  Params e = p;
  e.exact = true;
  const WindowFits r = fit(x, 1, p), q = fit(x, 1, e);
  REQUIRE(r.loglik.size() == 99961);
  double worst = 0;
  std::size_t argmax_diff = 0;
  for (std::size_t i = 0; i < r.loglik.size(); ++i) {
    worst = std::max(worst, rel(r.loglik[i], q.loglik[i]));
    if (x[static_cast<std::size_t>(r.index[i])] != x[static_cast<std::size_t>(q.index[i])] || r.shape[i] != q.shape[i]) ++argmax_diff;
  }
  MESSAGE("rolling vs exact, 99961 windows of 40: largest loglik relative deviation " << worst);
  CHECK(argmax_diff == 0);
  CHECK(worst < 1e-12);

  // step 3, a short refresh, and repeated values
  std::vector<double> y = draw(20000, 0.0, 0.9, 1.5, 1.0, 99);
  for (double& v : y) v = std::round(v * 100) / 100;
  p.step = 3;
  p.refresh = 37;
  p.window = 50;
  e = p;
  e.exact = true;
  const WindowFits r2 = fit(y, 2, p), q2 = fit(y, 2, e);
  double worst2 = 0;
  std::size_t diff2 = 0;
  for (std::size_t i = 0; i < r2.loglik.size(); ++i) {
    worst2 = std::max(worst2, rel(r2.loglik[i], q2.loglik[i]));
    const std::size_t si = i / (r2.loglik.size() / 2);
    if (y[si * 10000 + static_cast<std::size_t>(r2.index[i])] != y[si * 10000 + static_cast<std::size_t>(q2.index[i])] ||
        r2.shape[i] != q2.shape[i])
      ++diff2;
  }
  MESSAGE("step 3, refresh 37, ties: largest loglik relative deviation " << worst2);
  CHECK(diff2 == 0);
  CHECK(worst2 < 1e-12);
}

TEST_CASE("mle: the same bits for any thread count") {
  const std::vector<double> x = draw(6000, 0.0, 1.2, 1.0, 1.5, 3);
  Params p;
  p.window = 100;
  p.grid = parse_grid("0.5:2.5:11");
  p.refresh = 50;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const WindowFits a = fit(x, 2, p);
  omp_set_num_threads(3);
  const WindowFits b = fit(x, 2, p);
  Params one = p;
  one.window = 3000;  // one window: the candidates are spread instead
  const WindowFits c = fit(x, 2, one);
  omp_set_num_threads(1);
  const WindowFits d = fit(x, 2, one);
  omp_set_num_threads(saved);
  CHECK(a.loglik == b.loglik);
  CHECK(a.xm == b.xm);
  CHECK(a.index == b.index);
  CHECK(c.loglik == d.loglik);
  CHECK(c.xp == d.xp);
}

TEST_CASE("mle: estimates within 3 standard errors on 20000 samples") {
  // Truth: theta 0.5, p 2, s_l 1, s_r 2. Standard errors from the observed
  // information: the inverse of minus the Hessian of the full log-likelihood
  // in (theta, p, s_l, s_r) at the estimate, by central differences.
  const double truth[4] = {0.5, 2.0, 1.0, 2.0};
  const std::int64_t n = 20000;
  const std::vector<double> x = draw(n, truth[0], truth[1], truth[2], truth[3], 20000);
  Params p;
  p.window = n;
  p.grid = parse_grid("1:3:8");
  Series s{x.data(), 1, n};
  WindowFits f;
  solve_cpu(s, p, f);
  const Estimates e = finish(s, p, f, true, {});
  REQUIRE(e.refined[0] == 1);
  const double est[4] = {e.theta[0], e.p[0], e.s_l[0], e.s_r[0]};
  auto L = [&](const double* v) { return full_loglik(x.data(), n, v[0], v[1], v[2], v[3]); };
  // the refined estimate is a stationary point: no coordinate improves it
  CHECK(e.loglik[0] >= f.loglik[0]);
  double H[4][4], h[4] = {2e-3, 2e-3, 2e-3, 2e-3};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double v[4];
      auto at = [&](double si, double sj) {
        std::copy(est, est + 4, v);
        v[i] += si * h[i];
        v[j] += sj * h[j];
        return L(v);
      };
      H[i][j] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * h[i] * h[j]);
    }
  // invert -H (Gauss-Jordan with partial pivoting)
  double M[4][8];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) M[i][j] = j < 4 ? -H[i][j] : (j - 4 == i);
  for (int c = 0; c < 4; ++c) {
    int piv = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(M[r][c]) > std::fabs(M[piv][c])) piv = r;
    for (int j = 0; j < 8; ++j) std::swap(M[c][j], M[piv][j]);
    const double d = M[c][c];
    REQUIRE(d != 0);
    for (int j = 0; j < 8; ++j) M[c][j] /= d;
    for (int r = 0; r < 4; ++r)
      if (r != c) {
        const double m = M[r][c];
        for (int j = 0; j < 8; ++j) M[r][j] -= m * M[c][j];
      }
  }
  const std::string names[4] = {"theta", "p", "s_l", "s_r"};
  for (int i = 0; i < 4; ++i) {
    REQUIRE(M[i][4 + i] > 0);
    const double se = std::sqrt(M[i][4 + i]);
    MESSAGE(names[i] << ": estimate " << est[i] << ", truth " << truth[i] << ", SE " << se << ", z "
                     << (est[i] - truth[i]) / se);
    CHECK(std::fabs(est[i] - truth[i]) <= 3 * se);
    CHECK(se < 0.1);  // the information is real: 20000 points pin each parameter down
  }
}

TEST_CASE("mle: incomplete gamma and quantiles against closed forms") {
  for (double xv : {0.01, 0.3, 1.0, 2.5, 7.0, 30.0}) {
    CHECK(std::fabs(gamma_p(1.0, xv) - (1 - std::exp(-xv))) < 1e-14);
    CHECK(std::fabs(gamma_p(0.5, xv) - std::erf(std::sqrt(xv))) < 1e-14);
    CHECK(std::fabs(gamma_q(0.5, xv) - std::erfc(std::sqrt(xv))) < 1e-13 * std::max(1.0, std::erfc(std::sqrt(xv)) * 1e13 * 1e-13));
  }
  for (double a : {0.25, 0.5, 1.0, 2.0})
    for (double q : {1e-6, 0.01, 0.3, 0.7, 0.99}) {
      CHECK(std::fabs(gamma_p(a, gamma_p_inverse(a, q)) - q) < 1e-12 * std::max(q, 1e-3));
      CHECK(std::fabs(gamma_q(a, gamma_q_inverse(a, q)) - q) < 1e-12 * std::max(q, 1e-3));
    }
  // p = 2, equal scales s: a normal with sd s/sqrt(2); z(0.05) = -1.6448536269514722
  CHECK(std::fabs(aepd_quantile(0.05, 1.0, 2.0, 3.0, 3.0) - (1.0 - 3.0 / std::sqrt(2.0) * 1.6448536269514722)) < 1e-11);
  // p = 1, equal scales: Laplace; left tail q = 0.5 exp((x - theta)/s)
  CHECK(std::fabs(aepd_quantile(0.01, 0.0, 1.0, 2.0, 2.0) - 2.0 * std::log(0.02)) < 1e-12);
  // p = 1, s_l = 1, s_r = 3: right tail 1 - q = 0.75 exp(-(x - theta)/3)
  CHECK(std::fabs(aepd_quantile(0.9, 0.0, 1.0, 1.0, 3.0) - (-3.0 * std::log(0.1 / 0.75))) < 1e-12);
}

TEST_CASE("mle: grids and bad parameters are refused with the value") {
  const Grid g = parse_grid("0.5:4.45:80");
  CHECK(g.alpha.size() == 80);
  CHECK(g.uniform);
  CHECK(g.alpha.front() == 0.5);
  CHECK(g.alpha.back() == 4.45);
  CHECK(std::fabs(g.h - 0.05) < 1e-15);
  CHECK(parse_grid("1.5").alpha.size() == 1);
  CHECK_FALSE(parse_grid("1,2,3").uniform);
  for (const char* bad : {"", "0:1:5", "1:0.5:3", "1:2:0", "1:2", "-1,2", "1,,2", "1,nan", "a:b:c", "1:2:3:4", "1,100"})
    CHECK_THROWS_AS(parse_grid(bad), Error);
  std::vector<double> x(50, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<double>(i));
  Series s{x.data(), 1, 50};
  Params p;
  p.grid = parse_grid("1,2");
  p.window = 2;
  CHECK_THROWS_WITH(validate(s, p), doctest::Contains("--window must be >= 3, got 2"));
  p.window = 51;
  CHECK_THROWS_WITH(validate(s, p), doctest::Contains("longer than the series: length 50"));
  p.window = 10;
  p.step = 0;
  CHECK_THROWS_WITH(validate(s, p), doctest::Contains("--step must be >= 1"));
  p.step = 1;
  x[7] = NAN;
  CHECK_THROWS_WITH(validate(s, p), doctest::Contains("non-finite value at series 0, index 7"));
}

TEST_CASE("mle: a window of equal values has no finite maximum") {
  std::vector<double> x(20, 3.25);
  Params p;
  p.window = 20;
  p.grid = parse_grid("1,2");
  p.exact = true;
  const WindowFits f = fit(x, 1, p);
  CHECK(std::isinf(f.loglik[0]));
  CHECK(f.loglik[0] > 0);
  Series s{x.data(), 1, 20};
  const Estimates e = finish(s, p, f, false, {0.05});
  CHECK(e.theta[0] == 3.25);
  CHECK(e.s_l[0] == 0);
  CHECK(e.s_r[0] == 0);
  CHECK(e.quantiles[0] == 3.25);
}
