// mle-fit's inference (kernels/mle/inference.hpp, post.cpp): derivatives and
// standard errors against numerical differentiation of an independently
// written log-likelihood, interval coverage by simulation, the two-shape fit
// against brute force, goodness of fit, normal and Student-t fits, and the VaR
// backtest statistics against hand-computed values.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/random.hpp"
#include "kernels/mle/detail/backends.hpp"
#include "kernels/mle/inference.hpp"
#include "kernels/mle/mle.hpp"
#include "kernels/mle/statistics.hpp"

using namespace numpipe;
using namespace numpipe::mle;

namespace {

// Draws of the two-shape AEPD by inverse transform (as gen-input mle does).
std::vector<double> draw2(std::size_t n, double theta, double p1, double p2, double sl, double sr, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  const double gl = sl * std::tgamma(1 + 1 / p1), gr = sr * std::tgamma(1 + 1 / p2);
  const double wl = p1 == p2 ? sl / (sl + sr) : gl / (gl + gr);
  for (double& v : x) {
    const bool left = rng.uniform() < wl;
    const double q = left ? p1 : p2;
    const double g = std::pow(rng.gamma(1 / q), 1 / q);
    v = left ? theta - sl * g : theta + sr * g;
  }
  return x;
}

// The log-likelihood written directly from the density (std::pow, std::tgamma):
// v = (theta, p1, p2, s_l, s_r).
double direct_loglik(const std::vector<double>& x, const double* v) {
  const double D = v[3] * std::tgamma(1 + 1 / v[1]) + v[4] * std::tgamma(1 + 1 / v[2]);
  double ll = -static_cast<double>(x.size()) * std::log(D);
  for (double y : x) ll -= y <= v[0] ? std::pow((v[0] - y) / v[3], v[1]) : std::pow((y - v[0]) / v[4], v[2]);
  return ll;
}

// Inverse of a small symmetric matrix by Gauss-Jordan with partial pivoting.
std::vector<std::vector<double>> inverse(std::vector<std::vector<double>> M) {
  const std::size_t m = M.size();
  std::vector<std::vector<double>> I(m, std::vector<double>(m, 0));
  for (std::size_t i = 0; i < m; ++i) I[i][i] = 1;
  for (std::size_t c = 0; c < m; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < m; ++r)
      if (std::fabs(M[r][c]) > std::fabs(M[piv][c])) piv = r;
    std::swap(M[c], M[piv]);
    std::swap(I[c], I[piv]);
    const double d = M[c][c];
    for (std::size_t j = 0; j < m; ++j) {
      M[c][j] /= d;
      I[c][j] /= d;
    }
    for (std::size_t r = 0; r < m; ++r)
      if (r != c) {
        const double f = M[r][c];
        for (std::size_t j = 0; j < m; ++j) {
          M[r][j] -= f * M[c][j];
          I[r][j] -= f * I[c][j];
        }
      }
  }
  return I;
}

// Standard errors from a central-difference Hessian of direct_loglik in the
// parameters `use` (indices into (theta, p1, p2, s_l, s_r); tie: p2 follows p1).
// Steps: 1e-5 for theta (the log-likelihood's second derivative in theta sums
// |x - theta|^(p-2): a wider step averages it over nearby data points), h else.
// expected_theta: theta's row and column (use[0] == 0) replaced by their
// expectations under the fitted density, as estimate_window reports them,
// derived here independently: with d the distance to theta on a side and
// E sum d^(p-1) = n s^p / (p D), E sum d^(p-1) log d = that (log s - gamma/p),
// E sum d^(p-2) = n s^(p-1) Gamma(1 - 1/p) / (p D), minus the expected second
// derivatives of the log-likelihood are
//   theta,theta: n [p1 Gamma(2 - 1/p1)/s_l + p2 Gamma(2 - 1/p2)/s_r] / D
//   theta,p1: n (1 - gamma) / (p1 D)   theta,p2: -n (1 - gamma) / (p2 D)
//   theta,s_l: -n p1 / (s_l D)         theta,s_r: n p2 / (s_r D).
std::vector<double> numerical_se(const std::vector<double>& x, const double* est, const std::vector<int>& use, bool tie,
                                 double h, bool expected_theta = false) {
  const std::size_t m = use.size();
  auto L = [&](const double* d) {
    double v[5];
    std::copy(est, est + 5, v);
    for (std::size_t i = 0; i < m; ++i) {
      v[use[i]] += d[i];
      if (tie && use[i] == 1) v[2] += d[i];
    }
    return direct_loglik(x, v);
  };
  std::vector<std::vector<double>> negH(m, std::vector<double>(m));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double d[5] = {0, 0, 0, 0, 0}, f[4];
      const double hi = use[i] == 0 ? 1e-5 : h, hj = use[j] == 0 ? 1e-5 : h;
      const double sg[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
      for (int k = 0; k < 4; ++k) {
        std::fill(d, d + 5, 0.0);
        d[i] += sg[k][0] * hi;
        d[j] += sg[k][1] * hj;
        f[k] = L(d);
      }
      negH[i][j] = -(f[0] - f[1] - f[2] + f[3]) / (4 * hi * hj);
    }
  if (expected_theta && use[0] == 0) {
    const double n = static_cast<double>(x.size()), euler = 0.57721566490153286;
    const double p1 = est[1], p2 = est[2], sl = est[3], sr = est[4];
    const double D = sl * std::tgamma(1 + 1 / p1) + sr * std::tgamma(1 + 1 / p2);
    const double row[5] = {n * (p1 * std::tgamma(2 - 1 / p1) / sl + p2 * std::tgamma(2 - 1 / p2) / sr) / D,
                           n * (1 - euler) / (p1 * D), -n * (1 - euler) / (p2 * D), -n * p1 / (sl * D), n * p2 / (sr * D)};
    for (std::size_t j = 0; j < m; ++j) {
      double v = row[use[j]];
      if (tie && use[j] == 1) v += row[2];
      negH[0][j] = negH[j][0] = v;
    }
  }
  const auto C = inverse(negH);
  std::vector<double> se(m);
  for (std::size_t i = 0; i < m; ++i) se[i] = std::sqrt(C[i][i]);
  return se;
}

WindowTask task_for(const std::vector<double>& x, const Params& p, const WindowFits& f, std::size_t u = 0) {
  Series s{x.data(), 1, static_cast<std::int64_t>(x.size())};
  return make_tasks(s, p, f, true, true, static_cast<std::int64_t>(u), static_cast<std::int64_t>(u) + 1)[0];
}

WindowFits grid_fit(const std::vector<double>& x, std::int64_t series, const Params& p) {
  Series s{x.data(), series, static_cast<std::int64_t>(x.size()) / series};
  WindowFits f;
  solve_cpu(s, p, f);
  return f;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

TEST_CASE("mle inference: digamma and trigamma against known values") {
  // psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 log 2, psi'(1) = pi^2/6, psi'(1/2) = pi^2/2 (DLMF 5.4.12-13, 5.15.2-3)
  const double euler = 0.57721566490153286;
  CHECK(std::fabs(digamma(1.0) + euler) < 1e-15);
  CHECK(std::fabs(digamma(0.5) + euler + 2 * std::log(2.0)) < 1e-14);
  CHECK(std::fabs(trigamma(1.0) - M_PI * M_PI / 6) < 1e-14);
  CHECK(std::fabs(trigamma(0.5) - M_PI * M_PI / 2) < 1e-13);
  // the recurrence across the switch to the series, and large arguments
  for (double xv : {0.03, 0.7, 3.3, 9.99, 10.0, 57.0}) {
    CHECK(std::fabs(digamma(xv + 1) - digamma(xv) - 1 / xv) < 1e-13 * std::max(1.0, 1 / xv));
    CHECK(std::fabs(trigamma(xv) - trigamma(xv + 1) - 1 / (xv * xv)) < 1e-13 * std::max(1.0, 1 / (xv * xv)));
  }
}

TEST_CASE("mle inference: gradient and Hessian equal central differences of the density's log-likelihood") {
  const std::vector<double> x = draw2(3000, 0.3, 1.6, 2.4, 0.8, 1.7, 5);
  const double v[5] = {0.31234, 1.55, 2.3, 0.83, 1.65};
  const WindowSums s = window_sums(x.data(), 3000, 1.0, v[0], v[1], v[2], true);
  double g[kParams], H[kParams][kParams];
  loglik_derivatives(s, v[1], v[2], v[3], v[4], 3000, g, H);
  CHECK(rel(loglik_from_sums(s, v[1], v[2], v[3], v[4], 3000), direct_loglik(x, v)) < 1e-13);
  for (int i = 0; i < kParams; ++i) {
    double a[5], b[5];
    std::copy(v, v + 5, a);
    std::copy(v, v + 5, b);
    const double h = 1e-6;
    a[i] += h;
    b[i] -= h;
    const double num = (direct_loglik(x, a) - direct_loglik(x, b)) / (2 * h);
    CAPTURE(i);
    CHECK(std::fabs(g[i] - num) < 2e-5 * std::max(1.0, std::fabs(num)));
    for (int j = 0; j < kParams; ++j) {
      if (i == 0 && j == 0) continue;  // theta-theta: below, the second difference crosses data points
      const double hh = 1e-4;
      double c[4][5];
      for (auto& r : c) std::copy(v, v + 5, r);
      c[0][i] += hh, c[0][j] += hh, c[1][i] += hh, c[1][j] -= hh, c[2][i] -= hh, c[2][j] += hh, c[3][i] -= hh, c[3][j] -= hh;
      const double nh =
          (direct_loglik(x, c[0]) - direct_loglik(x, c[1]) - direct_loglik(x, c[2]) + direct_loglik(x, c[3])) / (4 * hh * hh);
      CAPTURE(j);
      CHECK(std::fabs(H[i][j] - nh) < 1e-4 * std::max(1.0, std::fabs(nh)));
    }
  }
  // theta-theta from the analytic first derivative (smooth between data points):
  // d/dtheta of g[theta] by central differences of the sums' gradient
  const double ht = 1e-7;
  double ga[kParams], gb[kParams], Hd[kParams][kParams];
  loglik_derivatives(window_sums(x.data(), 3000, 1.0, v[0] + ht, v[1], v[2], true), v[1], v[2], v[3], v[4], 3000, ga, Hd);
  loglik_derivatives(window_sums(x.data(), 3000, 1.0, v[0] - ht, v[1], v[2], true), v[1], v[2], v[3], v[4], 3000, gb, Hd);
  CHECK(rel(H[0][0], (ga[0] - gb[0]) / (2 * ht)) < 1e-5);
}

TEST_CASE("mle inference: the two-shape profile equals a numerical maximisation over the scales") {
  const std::vector<double> x = draw2(400, 0.0, 1.3, 2.2, 1.0, 1.4, 8);
  const double theta = x[11];
  for (double p2 : {2.2, 1.3}) {
    const double p1 = 1.3;
    double xm = 0, xp = 0;
    for (double y : x) (y <= theta ? xm : xp) += y <= theta ? std::pow(theta - y, p1) : std::pow(y - theta, p2);
    const Fit2 f = profile2(xm, xp, shape_const(p1), shape_const(p2), 400);
    // coordinate golden sections over log s_l and log s_r of the density's log-likelihood
    double ul = 0, ur = 0;
    auto ll = [&](double a, double b) {
      const double v[5] = {theta, p1, p2, std::exp(a), std::exp(b)};
      return direct_loglik(x, v);
    };
    auto golden = [](auto fn, double a, double b) {
      const double g = 0.5 * (std::sqrt(5.0) - 1.0);
      double c = b - g * (b - a), d = a + g * (b - a), fc = fn(c), fd = fn(d);
      for (int i = 0; i < 120; ++i) {
        if (fc >= fd) { b = d; d = c; fd = fc; c = b - g * (b - a); fc = fn(c); }
        else { a = c; c = d; fc = fd; d = a + g * (b - a); fd = fn(d); }
      }
      return 0.5 * (a + b);
    };
    for (int round = 0; round < 200; ++round) {
      ul = golden([&](double a) { return ll(a, ur); }, -5, 5);
      ur = golden([&](double b) { return ll(ul, b); }, -5, 5);
    }
    CAPTURE(p2);
    CHECK(rel(std::exp(ul), f.s_l) < 1e-6);
    CHECK(rel(std::exp(ur), f.s_r) < 1e-6);
    const double v[5] = {theta, p1, p2, f.s_l, f.s_r};
    CHECK(rel(f.loglik, direct_loglik(x, v)) < 1e-12);
  }
}

TEST_CASE("mle inference: standard errors equal those of a numerical Hessian at the refined optimum") {
  SUBCASE("one shape") {
    const std::vector<double> x = draw2(2000, 0.5, 1.8, 1.8, 1.0, 2.0, 21);
    Params p;
    p.window = 2000;
    p.exact = true;
    p.grid = parse_grid("1:3:11");
    const WindowFits f = grid_fit(x, 1, p);
    const WindowEstimate e = estimate_window(x.data(), 2000, task_for(x, p, f));
    REQUIRE(e.smooth == 1);
    const double est[5] = {e.theta, e.p1, e.p1, e.s_l, e.s_r};
    // the optimum: no parameter's numerical derivative is more than a
    // thousandth of its standard error's worth of log-likelihood
    const std::vector<double> se = numerical_se(x, est, {0, 1, 3, 4}, true, 1e-4, true);
    const double mine[4] = {e.se[0], e.se[1], e.se[2], e.se[3]};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i);
      MESSAGE("parameter " << i << ": se " << mine[i] << ", numerical " << se[i]);
      CHECK(rel(mine[i], se[i]) < 1e-3);
    }
    const int idx[4] = {0, 1, 3, 4};
    for (int i = 0; i < 4; ++i) {
      double a[5], b[5];
      std::copy(est, est + 5, a);
      std::copy(est, est + 5, b);
      const double h = 1e-3 * mine[i];
      a[idx[i]] += h;
      b[idx[i]] -= h;
      if (idx[i] == 1) a[2] += h, b[2] -= h;
      CHECK(std::fabs((direct_loglik(x, a) - direct_loglik(x, b)) / (2 * h)) * mine[i] < 1e-3);
    }
    // the refined log-likelihood is the density's at the estimate, and beats the grid's
    CHECK(rel(e.loglik, direct_loglik(x, est)) < 1e-12);
    CHECK(e.loglik >= f.loglik[0]);
  }
  SUBCASE("two shapes") {
    const std::vector<double> x = draw2(3000, 0.0, 1.7, 2.6, 1.0, 1.5, 22);
    Params p;
    p.window = 3000;
    p.exact = true;
    p.shapes = 2;
    p.grid = parse_grid("1.2:3.2:11");
    const WindowFits f = grid_fit(x, 1, p);
    const WindowEstimate e = estimate_window(x.data(), 3000, task_for(x, p, f));
    REQUIRE(e.smooth == 1);
    const double est[5] = {e.theta, e.p1, e.p2, e.s_l, e.s_r};
    const std::vector<double> se = numerical_se(x, est, {0, 1, 2, 3, 4}, false, 1e-4, true);
    for (int i = 0; i < 5; ++i) {
      MESSAGE("parameter " << i << ": se " << e.se[i] << ", numerical " << se[i]);
      CHECK(rel(e.se[i], se[i]) < 1e-3);
    }
    CHECK(rel(e.loglik, direct_loglik(x, est)) < 1e-12);
  }
  SUBCASE("p <= 1: theta's row does not exist") {
    const std::vector<double> x = draw2(2000, 0.5, 0.8, 0.8, 1.0, 2.0, 23);
    Params p;
    p.window = 2000;
    p.exact = true;
    p.grid = parse_grid("0.5:1.1:13");
    const WindowFits f = grid_fit(x, 1, p);
    const WindowEstimate e = estimate_window(x.data(), 2000, task_for(x, p, f));
    CHECK(e.smooth == 0);
    CHECK(std::isnan(e.se[0]));
    // the maximum at a data point: the grid's, or a higher one at the refined shape
    CHECK(std::find(x.begin(), x.end(), e.theta) != x.end());
    CHECK(e.loglik >= profile_loglik_at(x.data(), 2000, x[static_cast<std::size_t>(f.index[0])], e.p1) - 1e-9 * std::fabs(e.loglik));
    // the others: the numerical Hessian of (p, s_l, s_r) at the estimated theta
    const double est[5] = {e.theta, e.p1, e.p1, e.s_l, e.s_r};
    const std::vector<double> se = numerical_se(x, est, {1, 3, 4}, true, 1e-4);
    for (int i = 0; i < 3; ++i) CHECK(rel(e.se[i + 1], se[i]) < 1e-3);
    // the profile-likelihood interval: around theta, and its ends are where
    // the profile has fallen by 3.84/2
    REQUIRE(e.ci_lo < e.theta);
    REQUIRE(e.ci_hi > e.theta);
    for (double end : {e.ci_lo, e.ci_hi}) {
      double xm = 0, xp = 0;
      for (double y : x) (y <= end ? xm : xp) += std::pow(std::fabs(y - end), e.p1);
      const double prof = profile_loglik(scale_sum(xm, xp, 1 / (e.p1 + 1)), e.p1, 2000);
      CHECK(std::fabs(prof - (e.loglik - 0.5 * kChi2One95)) < 1e-6);
    }
  }
}

// 240 series of 400 points from known parameters (p = 2): each 95% interval
// (estimate +- 1.96 se for theta, p, s_l, s_r; theta's profile interval)
// should cover the truth 95% of the time. With 240 independent series the
// count of covering intervals is binomial: sd = sqrt(0.95 * 0.05 / 240) = 1.4%,
// so [0.90, 0.99] is 0.95 -3.6/+2.8 sd (a test that fails for standard errors
// 20% too small, 0.89, or too large, 0.99). bench/mle-coverage runs 2000 series
// per case through the tools (measured there: 93-97%).
TEST_CASE("mle inference: 95% intervals cover the truth (simulation, p = 2)") {
  const std::int64_t n = 400, S = 240;
  const double truth[4] = {0.5, 2.0, 1.0, 2.0};
  const std::vector<double> x = draw2(static_cast<std::size_t>(n * S), truth[0], truth[1], truth[1], truth[2], truth[3], 77);
  Params p;
  p.window = n;
  p.step = n;
  p.exact = true;
  p.grid = parse_grid("1:3.5:11");
  Series s{x.data(), 1, n * S};
  WindowFits f;
  solve_cpu(s, p, f);
  FinishOptions o;
  o.inform = true;
  const Estimates e = finish(s, p, f, o, 0, S);
  int cover[5] = {0, 0, 0, 0, 0};
  for (std::int64_t w = 0; w < S; ++w) {
    const std::size_t u = static_cast<std::size_t>(w);
    const double est[4] = {e.theta[u], e.p[u], e.s_l[u], e.s_r[u]};
    for (int i = 0; i < 4; ++i)
      if (std::fabs(est[i] - truth[i]) <= kZ95 * e.stderr_[u * 4 + static_cast<std::size_t>(i)]) ++cover[i];
    if (e.theta_ci[2 * u] <= truth[0] && truth[0] <= e.theta_ci[2 * u + 1]) ++cover[4];
  }
  const char* names[5] = {"theta", "p", "s_l", "s_r", "theta (profile)"};
  for (int i = 0; i < 5; ++i) {
    const double c = cover[i] / static_cast<double>(S);
    MESSAGE(names[i] << ": coverage " << c);
    CHECK(c >= 0.90);
    CHECK(c <= 0.99);
  }
}

TEST_CASE("mle inference: the two-shape grid equals brute force over (theta, p1, p2)") {
  for (int variant = 0; variant < 2; ++variant) {
    std::vector<double> x = draw2(71, -0.2, 1.1, 2.3, 1.0, 0.7, 40 + variant);
    if (variant == 1)
      for (double& v : x) v = std::round(v * 10) / 10;  // ties
    Params p;
    p.window = 71;
    p.exact = true;
    p.shapes = 2;
    p.grid = parse_grid("0.8:2.8:9");
    const WindowFits f = grid_fit(x, 1, p);
    double best = -INFINITY, bt = 0, b1 = 0, b2 = 0;
    for (double theta : x)
      for (double a1 : p.grid.alpha)
        for (double a2 : p.grid.alpha) {
          double xm = 0, xp = 0;
          for (double v : x) {
            if (v <= theta) xm += std::pow(theta - v, a1);
            else xp += std::pow(v - theta, a2);
          }
          const Fit2 q = profile2(xm, xp, shape_const(a1), shape_const(a2), 71);
          const double v5[5] = {theta, a1, a2, q.s_l, q.s_r};
          const double l = direct_loglik(x, v5);
          if (best == -INFINITY || l > best + 1e-9 * std::fabs(best)) {
            best = l;
            bt = theta;
            b1 = a1;
            b2 = a2;
          }
        }
    CAPTURE(variant);
    CHECK(x[static_cast<std::size_t>(f.index[0])] == bt);
    CHECK(p.grid.alpha[static_cast<std::size_t>(f.shape[0])] == b1);
    CHECK(p.grid.alpha[static_cast<std::size_t>(f.shape2[0])] == b2);
    CHECK(rel(f.loglik[0], best) < 1e-11);
  }
}

TEST_CASE("mle inference: two-shape rolling equals --exact; the same bits for any thread count") {
  const std::vector<double> x = draw2(3000, 0.0, 1.2, 2.0, 1.0, 1.5, 50);
  Params p;
  p.window = 120;
  p.shapes = 2;
  p.refresh = 300;
  p.grid = parse_grid("0.8:2.6:7");
  Params e = p;
  e.exact = true;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const WindowFits r1 = grid_fit(x, 1, p);
  omp_set_num_threads(3);
  const WindowFits r3 = grid_fit(x, 1, p), q = grid_fit(x, 1, e);
  omp_set_num_threads(saved);
  CHECK(r1.loglik == r3.loglik);
  CHECK(r1.shape2 == r3.shape2);
  std::size_t diff = 0;
  double worst = 0;
  for (std::size_t i = 0; i < r3.loglik.size(); ++i) {
    if (x[static_cast<std::size_t>(r3.index[i])] != x[static_cast<std::size_t>(q.index[i])] || r3.shape[i] != q.shape[i] ||
        r3.shape2[i] != q.shape2[i])
      ++diff;
    worst = std::max(worst, rel(r3.loglik[i], q.loglik[i]));
  }
  CHECK(diff == 0);
  CHECK(worst < 1e-12);
}

TEST_CASE("mle inference: the two-shape fit recovers p1 != p2 from a large sample") {
  const double truth[5] = {0.0, 1.2, 2.5, 1.0, 1.5};
  const std::int64_t n = 6000;
  const std::vector<double> x = draw2(static_cast<std::size_t>(n), truth[0], truth[1], truth[2], truth[3], truth[4], 99);
  Params p;
  p.window = n;
  p.exact = true;
  p.shapes = 2;
  p.grid = parse_grid("0.8:3.2:13");
  Series s{x.data(), 1, n};
  WindowFits f;
  solve_cpu(s, p, f);
  FinishOptions o;
  o.inform = true;
  o.levels = {0.01, 0.99};
  const Estimates e = finish(s, p, f, o, 0, 1);
  const double est[5] = {e.theta[0], e.p[0], e.p2[0], e.s_l[0], e.s_r[0]};
  const char* names[5] = {"theta", "p1", "p2", "s_l", "s_r"};
  for (int i = 0; i < 5; ++i) {
    const double se = e.stderr_[static_cast<std::size_t>(i)];
    MESSAGE(names[i] << ": " << est[i] << " (truth " << truth[i] << ", se " << se << ")");
    CHECK(se < 0.15);
    // theta: its profile interval (with p1 = 1.2 theta's observed information is
    // dominated by the data point nearest theta-hat; inference.hpp)
    if (i > 0) CHECK(std::fabs(est[i] - truth[i]) < 4 * se);
  }
  MESSAGE("theta's profile interval [" << e.theta_ci[0] << ", " << e.theta_ci[1] << "]");
  CHECK(e.theta_ci[0] < truth[0]);
  CHECK(truth[0] < e.theta_ci[1]);
  // the shapes are told apart: p2 - p1 is many standard errors
  CHECK(est[2] - est[1] > 6 * std::hypot(e.stderr_[1], e.stderr_[2]));
  // quantiles follow the two-shape distribution: F(q) = level
  for (int k = 0; k < 2; ++k)
    CHECK(std::fabs(aepd_cdf(e.quantiles[static_cast<std::size_t>(k)], est[0], est[1], est[2], est[3], est[4]) - o.levels[static_cast<std::size_t>(k)]) < 1e-12);
  // and the one-shape fit of the same data is worse by more than the 1 extra parameter pays for (AIC)
  Params one = p;
  one.shapes = 1;
  WindowFits f1;
  solve_cpu(s, one, f1);
  FinishOptions o1;
  o1.refine = true;
  const Estimates e1 = finish(s, one, f1, o1, 0, 1);
  CHECK(2 * 5 - 2 * e.loglik[0] < 2 * 4 - 2 * e1.loglik[0] - 10);
}

TEST_CASE("mle inference: distribution function, Kolmogorov-Smirnov and Anderson-Darling") {
  // the CDF against a numerical integral of the density (two shapes)
  const double th = 0.2, p1 = 1.3, p2 = 2.7, sl = 0.9, sr = 1.6;
  const double D = sl * std::tgamma(1 + 1 / p1) + sr * std::tgamma(1 + 1 / p2);
  auto dens = [&](double y) {
    return (y <= th ? std::exp(-std::pow((th - y) / sl, p1)) : std::exp(-std::pow((y - th) / sr, p2))) / D;
  };
  double acc = 0, y = -40;
  const double h = 1e-4;
  for (double target : {-2.0, -0.3, 0.2, 0.9, 3.0}) {
    while (y + h <= target) {  // Simpson on [y, y + h]
      acc += h / 6 * (dens(y) + 4 * dens(y + h / 2) + dens(y + h));
      y += h;
    }
    const double part = (target - y) / 6 * (dens(y) + 4 * dens(0.5 * (y + target)) + dens(target));
    CAPTURE(target);
    CHECK(std::fabs(aepd_cdf(target, th, p1, p2, sl, sr) - (acc + part)) < 1e-9);
  }
  // KS and AD from their definitions, evaluated by brute force
  const std::vector<double> x = draw2(300, th, p1, p2, sl, sr, 12);
  double ks = 0, ad = 0;
  gof_statistics(x.data(), 300, th, p1, p2, sl, sr, &ks, &ad);
  double d = 0;
  for (double v : x) {  // sup over the sample of |F_n - F| on both sides of each jump
    double below = 0, atmost = 0;
    for (double w : x) {
      below += w < v;
      atmost += w <= v;
    }
    const double F = aepd_cdf(v, th, p1, p2, sl, sr);
    d = std::max({d, std::fabs(atmost / 300 - F), std::fabs(F - below / 300)});
  }
  CHECK(std::fabs(ks - d) < 1e-15);
  std::vector<double> v = x;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (int i = 1; i <= 300; ++i)
    sum += (2.0 * i - 1) * (std::log(aepd_cdf(v[static_cast<std::size_t>(i - 1)], th, p1, p2, sl, sr)) +
                            std::log(1 - aepd_cdf(v[static_cast<std::size_t>(300 - i)], th, p1, p2, sl, sr)));
  CHECK(std::fabs(ad - (-300 - sum / 300)) < 1e-10);
  // a sample from the distribution itself: KS of the size of 1/sqrt(n), AD below its 1% point 3.9
  CHECK(ks < 1.63 / std::sqrt(300.0));
  CHECK(ad < 3.9);
  // the wrong distribution is caught
  double ks2 = 0, ad2 = 0;
  gof_statistics(x.data(), 300, th + 0.8, p1, p2, sl, sr, &ks2, &ad2);
  CHECK(ks2 > 2 / std::sqrt(300.0));
  CHECK(ad2 > 10);
}

TEST_CASE("mle inference: normal and Student-t fits") {
  const std::vector<double> x = draw2(2000, 1.0, 1.0, 1.0, 1.0, 1.0, 3);  // Laplace: heavier tails than a normal
  double nf[3], tf[4];
  fit_normal(x.data(), 2000, nf);
  double mean = 0, ss = 0;
  for (double v : x) mean += v;
  mean /= 2000;
  for (double v : x) ss += (v - mean) * (v - mean);
  CHECK(std::fabs(nf[0] - mean) < 1e-14);
  CHECK(rel(nf[1], std::sqrt(ss / 2000)) < 1e-14);
  double lln = 0;
  for (double v : x) lln += -0.5 * std::log(2 * M_PI * nf[1] * nf[1]) - 0.5 * std::pow((v - nf[0]) / nf[1], 2);
  CHECK(rel(nf[2], lln) < 1e-13);
  fit_student_t(x.data(), 2000, tf);
  // the t log-likelihood written directly; the fit is a stationary point of it
  auto tll = [&](double mu, double sig, double nu) {
    double l = 0;
    for (double v : x) {
      const double z = (v - mu) / sig;
      l += std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * M_PI) - std::log(sig) -
           (nu + 1) / 2 * std::log(1 + z * z / nu);
    }
    return l;
  };
  CHECK(rel(tf[3], tll(tf[0], tf[1], tf[2])) < 1e-12);
  const double hs[3] = {1e-5, 1e-5, 1e-4};
  for (int i = 0; i < 3; ++i) {
    double a[3] = {tf[0], tf[1], tf[2]}, b[3] = {tf[0], tf[1], tf[2]};
    a[i] += hs[i];
    b[i] -= hs[i];
    const double g = (tll(a[0], a[1], a[2]) - tll(b[0], b[1], b[2])) / (2 * hs[i]);
    CAPTURE(i);
    CHECK(std::fabs(g) < (i == 2 ? 1e-2 : 1e-3));
  }
  CHECK(tf[2] > 1.5);
  CHECK(tf[2] < 10);        // Laplace data: a t with few degrees of freedom
  CHECK(tf[3] > nf[2] + 10);  // which fits far better than the normal
}

TEST_CASE("mle inference: backtest statistics against hand-computed values") {
  // 20 days, level 0.05: hits on days 3, 7, 8, 15 (1-based)
  const std::uint8_t hits[20] = {0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
  const BacktestRow b = backtest_statistics(0.05, hits, 20, 1);
  CHECK(b.level == 0.05);
  CHECK(b.n == 20);
  CHECK(b.exceedances == 4);
  // Kupiec: x = 4 of T = 20, pi = 0.05, pi-hat = 0.2
  const double pof = -2 * (16 * std::log(0.95) + 4 * std::log(0.05)) + 2 * (16 * std::log(0.8) + 4 * std::log(0.2));
  CHECK(std::fabs(b.kupiec_lr - pof) < 1e-12);
  CHECK(std::fabs(b.kupiec_p - std::erfc(std::sqrt(pof / 2))) < 1e-15);
  // transitions over the 19 pairs: 0->0: 12, 0->1: 3 (days 2-3, 6-7, 14-15), 1->0: 3 (3-4, 8-9, 15-16), 1->1: 1 (7-8)
  const double p01 = 3.0 / 15, p11 = 1.0 / 4, p2 = 4.0 / 19;
  const double ind = -2 * (15 * std::log(1 - p2) + 4 * std::log(p2)) +
                     2 * (12 * std::log(1 - p01) + 3 * std::log(p01) + 3 * std::log(1 - p11) + 1 * std::log(p11));
  CHECK(std::fabs(b.christoffersen_ind_lr - ind) < 1e-12);
  CHECK(std::fabs(b.cc_lr - (pof + ind)) < 1e-12);
  CHECK(std::fabs(b.cc_p - std::exp(-(pof + ind) / 2)) < 1e-15);
  // chi-square quantiles: 3.841458820694124 (1 df) and 5.991464547107979 (2 df) at 5%
  CHECK(std::fabs(chi2_sf1(3.841458820694124) - 0.05) < 1e-14);
  CHECK(std::fabs(chi2_sf2(5.991464547107979) - 0.05) < 1e-14);
  // no exceedance at all: pi-hat = 0, LR_pof = -2 T log(1 - pi); no 1 -> anything transitions
  const std::uint8_t none[10] = {};
  const BacktestRow z = backtest_statistics(0.01, none, 10, 1);
  CHECK(std::fabs(z.kupiec_lr + 2 * 10 * std::log(0.99)) < 1e-12);
  CHECK(z.christoffersen_ind_lr == 0);
  // a level above 0.5 tests the right tail at rate 1 - level; strided series
  const std::uint8_t two[4] = {1, 0, 0, 0};  // levels interleaved: (0.95: 1, 0), (0.95: 0, 0)
  const BacktestRow r = backtest_statistics(0.95, two, 2, 2);
  CHECK(r.exceedances == 1);
  CHECK(std::fabs(r.kupiec_lr - (-2 * (std::log(0.95) + std::log(0.05)) + 2 * (std::log(0.5) + std::log(0.5)))) < 1e-12);
}

TEST_CASE("mle inference: points without a forecast are counted apart") {
  // the 20 days above with a gap of 3 days without a forecast after day 8: the
  // statistics are those of the 20 days with known hits, but the transitions
  // across the gap (8 -> 9 was 1 -> 0) are not counted
  std::uint8_t hits[23] = {0, 0, 1, 0, 0, 0, 1, 1, kNoForecast, kNoForecast, kNoForecast, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
  const BacktestRow b = backtest_statistics(0.05, hits, 23, 1);
  CHECK(b.n == 20);
  CHECK(b.no_forecast == 3);
  CHECK(b.exceedances == 4);
  const double pof = -2 * (16 * std::log(0.95) + 4 * std::log(0.05)) + 2 * (16 * std::log(0.8) + 4 * std::log(0.2));
  CHECK(std::fabs(b.kupiec_lr - pof) < 1e-12);
  // 18 transitions: 0->0: 12, 0->1: 3, 1->0: 2, 1->1: 1
  const double p01 = 3.0 / 15, p11 = 1.0 / 3, p2 = 4.0 / 18;
  const double ind = -2 * (14 * std::log(1 - p2) + 4 * std::log(p2)) +
                     2 * (12 * std::log(1 - p01) + 3 * std::log(p01) + 2 * std::log(1 - p11) + 1 * std::log(p11));
  CHECK(std::fabs(b.christoffersen_ind_lr - ind) < 1e-12);
  // nothing but gaps: no test
  const std::uint8_t gaps[3] = {kNoForecast, kNoForecast, kNoForecast};
  const BacktestRow g = backtest_statistics(0.01, gaps, 3, 1);
  CHECK(g.n == 0);
  CHECK(g.no_forecast == 3);
  CHECK(std::isnan(g.kupiec_p));
}

TEST_CASE("mle inference: windows without a maximum have NaN fits and quantiles") {
  // window 0: all equal; window 1: 3 points at theta with the shape at the grid's
  // smallest; window 2: the same ties but an interior shape (a maximum)
  const std::vector<double> x = {1, 1, 1, 1, 1, 2, 2, 2, 0.5, 3, 2, 2, 2, 0.5, 3};
  Series s;
  s.x = x.data();
  s.series = 1;
  s.length = 15;
  Params p;
  p.window = 5;
  p.step = 5;
  p.grid = parse_grid("0.5:2:4");
  Estimates e;
  e.theta = {1, 2, 2};
  e.p = {0.5, 0.5, 1.0};
  e.p2 = e.p;
  e.s_l = e.s_r = e.loglik = e.skew = {1, 1, 1};
  e.quantiles = {-1, -2, -1, -2, -1, -2};
  const std::vector<Degenerate> code = mark_degenerate(s, p, 2, e);
  REQUIRE(code.size() == 3);
  CHECK(code[0] == Degenerate::constant);
  CHECK(code[1] == Degenerate::ties);
  CHECK(code[2] == Degenerate::none);
  for (int w = 0; w < 2; ++w) {
    CHECK(std::isnan(e.theta[w]));
    CHECK(std::isnan(e.loglik[w]));
    CHECK(std::isnan(e.quantiles[2 * w]));
    CHECK(std::isnan(e.quantiles[2 * w + 1]));
  }
  CHECK(e.quantiles[4] == -1);
  CHECK(e.loglik[2] == 1);
  // the backtest marks the points after a window without a maximum (points
  // 5..14 follow windows 0 and 1), and only those
  const std::vector<std::uint8_t> hits = exceedances(s, p, {0.01, 0.05}, e.quantiles);
  REQUIRE(hits.size() == 20);
  for (int k = 0; k < 20; ++k) CHECK(hits[k] == kNoForecast);
  e.quantiles[2] = e.quantiles[3] = -10;  // window 1 with a forecast: x[10..14] = 2, 2, 2, 0.5, 3 above it
  const std::vector<std::uint8_t> after = exceedances(s, p, {0.01, 0.05}, e.quantiles);
  for (int k = 10; k < 20; ++k) CHECK(after[k] == 0);
}

TEST_CASE("mle inference: exceedances pair each point with the latest window before it") {
  // length 10, window 4, step 3: windows start at 0, 3, 6 and end at 3, 6, 9;
  // point t (4..9) belongs to window (t - 4) / 3: 0, 0, 0, 1, 1, 1
  std::vector<double> x = {0, 0, 0, 0, -5, 1, -1, -5, 1, -1};
  Series s{x.data(), 1, 10};
  Params p;
  p.window = 4;
  p.step = 3;
  const std::vector<double> levels = {0.05, 0.95};
  const std::vector<double> q = {-2, 2, -0.5, 0.5, -9, 9};  // [windows][levels]
  const std::vector<std::uint8_t> h = exceedances(s, p, levels, q);
  REQUIRE(h.size() == 12);
  // left tail (x < q): t=4: -5 < -2 yes; 5: no; 6: -1 < -2 no; 7: -5 < -0.5 yes; 8: no; 9: -1 < -0.5 yes
  const std::uint8_t left[6] = {1, 0, 0, 1, 0, 1};
  // right tail (x > q): t=4: no; 5: 1 > 2 no; 6: no; 7: no; 8: 1 > 0.5 yes; 9: no
  const std::uint8_t right[6] = {0, 0, 0, 0, 1, 0};
  for (int t = 0; t < 6; ++t) {
    CAPTURE(t);
    CHECK(h[static_cast<std::size_t>(2 * t)] == left[t]);
    CHECK(h[static_cast<std::size_t>(2 * t + 1)] == right[t]);
  }
}

TEST_CASE("mle inference: the same bits for any thread count; a window of one repeated value") {
  const std::vector<double> x = draw2(1500, 0.0, 1.4, 1.4, 1.0, 1.5, 31);
  Params p;
  p.window = 200;
  p.step = 7;
  p.grid = parse_grid("0.6:3:9");
  Series s{x.data(), 1, 1500};
  WindowFits f;
  solve_cpu(s, p, f);
  const std::int64_t W = window_count(s, p);
  FinishOptions o;
  o.inform = true;
  o.gof = true;
  o.student = true;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Estimates a = finish(s, p, f, o, 0, W);
  omp_set_num_threads(3);
  const Estimates b = finish(s, p, f, o, 0, W);
  omp_set_num_threads(saved);
  CHECK(a.theta == b.theta);
  CHECK(a.stderr_ == b.stderr_);
  CHECK(a.theta_ci == b.theta_ci);
  CHECK(a.ks == b.ks);
  CHECK(a.student == b.student);
  // a window of one repeated value: no finite maximum, no standard errors, no crash
  std::vector<double> c(30, 2.5);
  Params q;
  q.window = 30;
  q.grid = parse_grid("1,2");
  q.exact = true;
  Series sc{c.data(), 1, 30};
  WindowFits fc;
  solve_cpu(sc, q, fc);
  const Estimates ec = finish(sc, q, fc, o, 0, 1);
  CHECK(std::isinf(ec.loglik[0]));
  CHECK(ec.theta[0] == 2.5);
  CHECK(std::isnan(ec.stderr_[1]));
}
