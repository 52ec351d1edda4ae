// price: the user's contracts, Greeks, implied volatilities, the mixed term and
// calibration against independent references: Black's formula (the beta = 1,
// nu -> 0 limit), put-call parity, central differences of re-priced options, a
// Monte Carlo simulation of correlated SABR, Hagan's expansion at short expiry, and
// parameters recovered from quotes (kernels/price).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "common/random.hpp"
#include "kernels/price/black.hpp"
#include "kernels/price/calibrate.hpp"
#include "kernels/price/detail/backends.hpp"
#include "kernels/price/io.hpp"
#include "kernels/price/price.hpp"

using namespace numpipe;
using namespace numpipe::price;

namespace {

Params model(std::int64_t nx, std::int64_t ny, std::int64_t nt, double t, double alpha, double nu, double beta,
             double rho) {
  Params p;
  p.outer = 1;
  p.num_x = nx;
  p.num_y = ny;
  p.num_t = nt;
  p.s0 = 1;
  p.t = t;
  p.alpha = alpha;
  p.nu = nu;
  p.beta = beta;
  p.rho = rho;
  return p;
}

// Every functional's weights at every maturity (the adjoint pass), and a contract's value.
struct Priced {
  Setup s;
  std::vector<Functional> fs;
  std::vector<double> w;
  // the user's contracts' pricing: the payoff cell-averaged (smooth), or point values
  double value(std::size_t f, std::int64_t m, double strike, bool put, bool smooth = true) const {
    const std::size_t per = s.levels.size() * static_cast<std::size_t>(s.p.num_x);
    return contract_value(s, Precision::fp64, w.data() + f * per + m * s.p.num_x, strike, put, smooth);
  }
};
Priced priced(const Params& p, bool greeks, const std::vector<double>& maturities = {}) {
  Priced r{make_setup(p, maturities), {}, {}};
  r.fs = functionals_of(r.s, greeks);
  r.w = adjoint_weights_cpu(r.s, Precision::fp64, r.fs);
  return r;
}

double norm_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
double norm_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

TEST_CASE("time_grid: one maturity is FinPar's grid; several are levels of it") {
  Params p = model(21, 13, 9, 5.0, 0.2, 0.6, 0.5, 0);
  std::vector<std::int64_t> levels;
  const std::vector<double> one = time_grid(p, {}, &levels);
  REQUIRE(levels == std::vector<std::int64_t>{8});
  for (std::int64_t g = 0; g < 9; ++g) CHECK(one[g] == time_point(5.0, 9, g));
  p.num_t = 33;
  const std::vector<double> ms = {0.5, 1, 2, 5};
  const std::vector<double> t = time_grid(p, ms, &levels);
  REQUIRE(levels.size() == 4);
  CHECK(levels.back() == 32);
  for (std::size_t m = 0; m < ms.size(); ++m) CHECK(t[levels[m]] == ms[m]);  // exactly on the grid
  for (std::size_t g = 1; g < t.size(); ++g) CHECK(t[g] > t[g - 1]);
  // 28 spare steps dealt by length (0.5, 0.5, 1, 3 of 5): 2.8, 2.8, 5.6, 16.8 -> 1 + (3, 3, 5, 16)
  CHECK(levels == std::vector<std::int64_t>{4, 8, 14, 32});
  p.num_t = 4;
  CHECK_THROWS_AS(time_grid(p, ms, &levels), Error);          // 3 steps for 4 maturities
  p.num_t = 33;
  CHECK_THROWS_AS(time_grid(p, {0.5, 0.4, 5}, &levels), Error);  // not ascending
  CHECK_THROWS_AS(time_grid(p, {0.5, 4}, &levels), Error);       // the last is not t
}

TEST_CASE("Black: parity, the implied volatility round trip, the bounds") {
  for (double k : {0.5, 0.9, 1.0, 1.1, 2.0})
    for (double t : {0.05, 1.0, 10.0})
      for (double v : {0.01, 0.2, 0.8, 2.0}) {
        const double c = black_price(1.0, k, t, v, false), p = black_price(1.0, k, t, v, true);
        CHECK(c - p == doctest::Approx(1.0 - k).epsilon(1e-12).scale(1));
        // a round trip wherever the price carries the volatility (not lost below the
        // intrinsic value's rounding)
        for (bool put : {false, true}) {
          const double price = put ? p : c;
          const double intrinsic = put ? std::max(k - 1.0, 0.0) : std::max(1.0 - k, 0.0);
          if (!(price - intrinsic > 1e-9 * price) || price < 1e-250) continue;  // no time value left to invert
          const double iv = implied_vol(price, 1.0, k, t, put);
          CHECK(iv == doctest::Approx(v).epsilon(1e-9));
        }
      }
  CHECK(std::isnan(implied_vol(-1e-3, 1.0, 1.1, 1.0, false)));  // negative
  CHECK(std::isnan(implied_vol(0.05, 1.0, 0.9, 1.0, false)));   // below the intrinsic 0.1
  CHECK(std::isnan(implied_vol(1.0, 1.0, 0.9, 1.0, false)));    // a call at the spot itself
  CHECK(std::isnan(implied_vol(1.2, 1.0, 1.2, 1.0, true)));     // a put at its strike
  CHECK(implied_vol(0.25, 1.0, 0.75, 1.0, false) == 0.0);       // exactly intrinsic
  // a deep out-of-the-money price of 1e-30 still inverts
  const double tiny = black_price(1.0, 2.0, 0.25, 0.1, false);
  CHECK(tiny < 1e-20);
  CHECK(implied_vol(tiny, 1.0, 2.0, 0.25, false) == doctest::Approx(0.1).epsilon(1e-8));
}

TEST_CASE("Black-Scholes limit: beta = 1, nu = 1e-4 prices calls and puts by Black's formula, second order") {
  // strikes 0.7 .. 1.3 s0, volatility alpha = 0.2, one year; grids doubled in x and t
  double previous = 0;
  for (int level = 0; level < 3; ++level) {
    const Params p = model(64 << level, 16, 1 + (25 << level), 1.0, 0.2, 1e-4, 1.0, 0);
    const Priced r = priced(p, true);
    double err = 0, parity = 0, delta = 0, gamma = 0, vega = 0;
    for (int k = 0; k <= 6; ++k) {
      const double strike = 0.7 + 0.1 * k;
      const double c = r.value(0, 0, strike, false), q = r.value(0, 0, strike, true);
      err = std::max({err, std::fabs(c - black_price(1, strike, 1, 0.2, false)),
                      std::fabs(q - black_price(1, strike, 1, 0.2, true))});
      parity = std::max(parity, std::fabs(c - q - (1 - strike)));
      const double d1 = (std::log(1 / strike) + 0.02) / 0.2;
      delta = std::max(delta, std::fabs(r.value(1, 0, strike, false) - norm_cdf(d1)));
      gamma = std::max(gamma, std::fabs(r.value(2, 0, strike, false) - norm_pdf(d1) / 0.2));
      vega = std::max(vega, std::fabs(r.value(3, 0, strike, false) - norm_pdf(d1)));
    }
    MESSAGE("numX " << p.num_x << " numT " << p.num_t << ": price error " << err << ", delta " << delta << ", gamma "
                    << gamma << ", vega " << vega);
    CHECK(parity < 1e-13);  // call - put = s0 - K: a linear payoff is kept exactly
    if (level > 0) CHECK(err < previous / 3.5);  // second order: the error falls 4x per doubling
    previous = err;
    if (level == 2) {
      CHECK(err < 1e-4);
      CHECK(delta < 5e-4);  // Greeks against Black's: delta N(d1), gamma phi(d1)/(sigma sqrt T), vega phi(d1)
      CHECK(gamma < 3e-3);
      CHECK(vega < 1e-3);
    }
  }
}

TEST_CASE("put-call parity with the mixed term and several maturities") {
  const Params p = model(48, 24, 25, 2.0, 0.3, 0.6, 0.6, -0.7);
  const Priced r = priced(p, true, {0.5, 1.0, 2.0});
  for (std::int64_t m = 0; m < 3; ++m)
    for (double k : {0.6, 0.95, 1.3}) {
      CHECK(r.value(0, m, k, false) - r.value(0, m, k, true) == doctest::Approx(1 - k).epsilon(1e-12).scale(1));
      CHECK(r.value(1, m, k, false) - r.value(1, m, k, true) == doctest::Approx(1).epsilon(1e-11));  // delta
      CHECK(std::fabs(r.value(2, m, k, false) - r.value(2, m, k, true)) < 1e-10);                   // gamma
      CHECK(std::fabs(r.value(3, m, k, false) - r.value(3, m, k, true)) < 1e-11);                   // vega
    }
}

TEST_CASE("the adjoint pass equals the forward method, with the mixed term, for every maturity and Greek") {
  for (double rho : {0.0, -0.6, 0.8}) {
    const Params p = model(33, 17, 30, 2.0, 0.25, 0.5, 0.7, rho);
    const Setup s = make_setup(p, {0.25, 1.0, 2.0});
    const std::vector<Functional> fs = functionals_of(s, true);
    const std::vector<double> w = adjoint_weights_cpu(s, Precision::fp64, fs);
    std::vector<Contract> cs;
    for (std::int64_t m = 0; m < 3; ++m)
      for (double k : {0.8, 1.0, 1.3})
        for (bool put : {false, true}) cs.push_back({m, k, put, k != 1.0});
    const std::vector<double> fwd = solve_cpu_contracts(s, Precision::fp64, cs, fs);
    const std::size_t per = 3 * 33;
    for (std::size_t f = 0; f < fs.size(); ++f)
      for (std::size_t c = 0; c < cs.size(); ++c) {
        const double a = contract_value(s, Precision::fp64, w.data() + f * per + cs[c].maturity * 33, cs[c].strike,
                                        cs[c].put, cs[c].smooth);
        CHECK(a == doctest::Approx(fwd[f * cs.size() + c]).epsilon(1e-12).scale(1e-3));
      }
  }
}

TEST_CASE("rho -> 0: the mixed term and its corrector vanish continuously") {
  const Priced zero = priced(model(40, 20, 21, 1.0, 0.3, 0.5, 0.7, 0), false);
  const Priced tiny = priced(model(40, 20, 21, 1.0, 0.3, 0.5, 0.7, 1e-12), false);
  const Priced some = priced(model(40, 20, 21, 1.0, 0.3, 0.5, 0.7, -0.3), false);
  for (double k : {0.8, 1.0, 1.2}) {
    CHECK(tiny.value(0, 0, k, k < 1) == doctest::Approx(zero.value(0, 0, k, k < 1)).epsilon(1e-10));
    CHECK(std::fabs(some.value(0, 0, k, k < 1) - zero.value(0, 0, k, k < 1)) > 1e-4);
  }
}

TEST_CASE("stability: strong correlation and long steps stay bounded") {
  for (double rho : {-0.95, 0.95}) {
    const Priced r = priced(model(64, 32, 5, 5.0, 0.4, 1.0, 0.8, rho), false);  // 4 steps of 1.25 years
    for (double k : {0.5, 1.0, 2.0}) {
      const double c = r.value(0, 0, k, false);
      CHECK(std::isfinite(c));
      CHECK(c >= std::max(1 - k, 0.0) - 1e-3);
      CHECK(c <= 1.0 + 1e-3);
    }
  }
}

TEST_CASE("Greeks against central differences of re-priced options (the grid moving with s0 and alpha)") {
  // bumps of 1% of s0 and of alpha, the cell-averaged payoff; measured agreement 0.1%
  // (delta, vega) and 0.6% (gamma). With point values of the payoff a strike's price
  // is piecewise linear in its offset from the nodes and such bumps would be useless
  // (gamma off by tens of %): the last check
  for (double rho : {0.0, -0.5}) {
    const Params p = model(256, 64, 65, 1.0, 0.25, 0.5, 0.7, rho);
    const Priced r = priced(p, true);
    auto price = [&](double s0, double alpha, double k, bool smooth) {
      Params q = p;
      q.s0 = s0;
      q.alpha = alpha;
      return priced(q, false).value(0, 0, k, k < 1, smooth);
    };
    for (double k : {0.9, 1.15}) {
      const double h = 0.01, ha = 0.01 * p.alpha;
      const double up = price(1 + h, p.alpha, k, true), mid = r.value(0, 0, k, k < 1), down = price(1 - h, p.alpha, k, true);
      const double vega_fd = (price(1, p.alpha + ha, k, true) - price(1, p.alpha - ha, k, true)) / (2 * ha);
      CHECK(r.value(1, 0, k, k < 1) == doctest::Approx((up - down) / (2 * h)).epsilon(0.003));
      CHECK(r.value(2, 0, k, k < 1) == doctest::Approx((up - 2 * mid + down) / (h * h)).epsilon(0.01));
      CHECK(r.value(3, 0, k, k < 1) == doctest::Approx(vega_fd).epsilon(0.003));
      if (k == 0.9) {
        const double upp = price(1 + h, p.alpha, k, false), midp = r.value(0, 0, k, true, false);
        const double downp = price(1 - h, p.alpha, k, false);
        CHECK(std::fabs((upp - 2 * midp + downp) / (h * h) / r.value(2, 0, k, true, false) - 1) > 0.1);
      }
    }
  }
}

TEST_CASE("rho != 0 against a Monte Carlo simulation of correlated SABR (beta = 1)") {
  // The simulation draws the volatility path exactly (sigma = alpha exp(nu W - nu^2 t/2)),
  // and given it the spot is lognormal: ln F_T ~ N(rho (sigma_T - alpha)/nu - rho^2 I/2
  // - (1 - rho^2) I/2, (1 - rho^2) I), I = int sigma^2 dt (trapezoid, 200 steps), so each
  // path contributes Black's price with that forward and variance (Willard 1997's
  // conditional Monte Carlo); antithetic pairs. Tolerance: 4 standard errors plus the
  // grid's error, estimated as the change from a grid half as fine.
  const double alpha = 0.25, nu = 0.5, t = 1.0;
  const std::vector<double> strikes = {0.7, 0.85, 1.0, 1.15, 1.3};
  for (double rho : {-0.5, 0.5}) {
    const Priced fine = priced(model(256, 128, 129, t, alpha, nu, 1.0, rho), false);
    const Priced coarse = priced(model(128, 64, 65, t, alpha, nu, 1.0, rho), false);
    const Priced uncorrelated = priced(model(128, 64, 65, t, alpha, nu, 1.0, 0), false);
    Rng rng(rho < 0 ? 11 : 12);
    const int paths = 20000, steps = 200;
    const double dt = t / steps;
    std::vector<double> sum(strikes.size()), sum2(strikes.size()), z(steps);
    for (int n = 0; n < paths; ++n) {
      for (double& v : z) v = rng.normal();
      std::vector<double> pair(strikes.size(), 0.0);
      for (int sign : {1, -1}) {
        double w = 0, sig = alpha, integral = 0;
        for (int k = 0; k < steps; ++k) {
          w += sign * std::sqrt(dt) * z[k];
          const double next = alpha * std::exp(nu * w - 0.5 * nu * nu * (k + 1) * dt);
          integral += 0.5 * (sig * sig + next * next) * dt;
          sig = next;
        }
        const double fwd = std::exp(rho * (sig - alpha) / nu - 0.5 * rho * rho * integral);
        const double vol = std::sqrt((1 - rho * rho) * integral / t);
        for (std::size_t q = 0; q < strikes.size(); ++q)
          pair[q] += 0.5 * black_price(fwd, strikes[q], t, vol, strikes[q] < 1);
      }
      for (std::size_t q = 0; q < strikes.size(); ++q) {
        sum[q] += pair[q];
        sum2[q] += pair[q] * pair[q];
      }
    }
    double far = 0;
    for (std::size_t q = 0; q < strikes.size(); ++q) {
      const double mc = sum[q] / paths, se = std::sqrt((sum2[q] / paths - mc * mc) / paths);
      const double pde = fine.value(0, 0, strikes[q], strikes[q] < 1);
      const double grid = std::fabs(pde - coarse.value(0, 0, strikes[q], strikes[q] < 1));
      MESSAGE("rho " << rho << " K " << strikes[q] << ": PDE " << pde << ", Monte Carlo " << mc << " +- " << se
                     << " (grid error ~" << grid << ")");
      CHECK(std::fabs(pde - mc) <= 4 * se + grid);
      far = std::max(far, std::fabs(pde - uncorrelated.value(0, 0, strikes[q], strikes[q] < 1)));
    }
    CHECK(far > 5e-3);  // the correlation moves the wings far more than the tolerance
  }
}

TEST_CASE("Hagan's formula: its at-the-money form, its limits, no step at the money") {
  // at the money eq. (2.17a) reduces to Hagan et al.'s eq. (2.18):
  // alpha / f^(1-beta) (1 + [(1-beta)^2/24 alpha^2/f^(2-2beta) + rho beta nu alpha/(4 f^(1-beta)) + (2-3rho^2)/24 nu^2] T)
  const double f = 1.3, a = 0.3, b = 0.6, r = -0.35, n = 0.7, t = 2.5;
  const double fb = std::pow(f, 1 - b);
  const double atm = a / fb * (1 + ((1 - b) * (1 - b) / 24 * a * a / (fb * fb) + r * b * n * a / (4 * fb) +
                                    (2 - 3 * r * r) / 24 * n * n) * t);
  CHECK(hagan_implied_vol(f, f, t, a, b, r, n) == doctest::Approx(atm).epsilon(1e-15));
  // either side of the money (the expansion of z / x(z) there and the formula beyond it) meet
  for (double d : {1e-7, 2e-6, -2e-6}) {
    const double side = hagan_implied_vol(f, f * (1 + d), t, a, b, r, n);
    CHECK(std::fabs(side - atm) < 2 * std::fabs(d));
  }
  // lognormal without volatility of volatility: Black's volatility alpha
  CHECK(hagan_implied_vol(1, 0.8, 1, 0.25, 1, 0.3, 1e-9) == doctest::Approx(0.25).epsilon(1e-8));
  // the skew: negative rho lowers the volatility above the money, raises it below
  CHECK(hagan_implied_vol(1, 1.2, 1, 0.25, 1, -0.5, 0.5) < hagan_implied_vol(1, 1.2, 1, 0.25, 1, 0.5, 0.5));
  CHECK(hagan_implied_vol(1, 0.8, 1, 0.25, 1, -0.5, 0.5) > hagan_implied_vol(1, 0.8, 1, 0.25, 1, 0.5, 0.5));
  CHECK(std::isnan(hagan_implied_vol(1, 1, 1, 0.25, 1, 1.0, 0.5)));
  CHECK(std::isnan(hagan_implied_vol(1, 1, 1, -0.25, 1, 0.0, 0.5)));
}

TEST_CASE("rho != 0 against Hagan's formula at short expiry") {
  // T = 0.1: Hagan's expansion is accurate to O(T^2) there; measured agreement of the
  // implied volatilities 6.4e-5 (numX 512), growing away from the money as Hagan's error does
  for (double beta : {1.0, 0.5}) {
    const double rho = beta == 1.0 ? -0.4 : 0.3;
    const Priced r = priced(model(512, 96, 81, 0.1, 0.3, 0.4, beta, rho), false);
    for (double k : {0.9, 0.95, 1.0, 1.05, 1.1}) {
      const double iv = implied_vol(r.value(0, 0, k, k < 1), 1, k, 0.1, k < 1);
      CHECK(std::fabs(iv - hagan_implied_vol(1, k, 0.1, 0.3, beta, rho, 0.4)) < 1e-4);
    }
  }
}

// A quote table made by the model at p on its own grid: `strikes` strikes evenly from lo
// to hi at every maturity (puts below s0 = 1), as prices or Black implied volatilities.
Problem model_quotes(const Params& p, const std::vector<double>& maturities, int strikes, double lo, double hi,
                     QuoteKind kind) {
  Problem pr;
  pr.p = p;
  pr.maturities = maturities;
  for (double t : maturities)
    for (int k = 0; k < strikes; ++k) {
      const double strike = lo + (hi - lo) * k / (strikes - 1);
      pr.quotes.push_back({strike, t, strike < 1, 0, 1});
    }
  pr.p.outer = static_cast<std::int64_t>(pr.quotes.size());
  const Setup s = make_setup(pr.p, pr.maturities);
  const std::vector<double> prices = evaluate(s, pr.contracts(), functionals_of(s, false), Engine{});
  pr.quote_kind = kind;
  for (std::size_t q = 0; q < prices.size(); ++q)
    pr.quotes[q].quote = kind == QuoteKind::price ? prices[q]
                                                  : implied_vol(prices[q], 1, pr.quotes[q].strike, pr.quotes[q].maturity,
                                                                pr.quotes[q].put);
  return pr;
}

TEST_CASE("calibration recovers the parameters; with noise, within its standard errors") {
  if (!calibration_available()) return;
  const Problem pr = model_quotes(model(64, 32, 65, 2.0, 0.25, 0.6, 0.7, -0.5), {0.25, 0.5, 1.0, 1.5, 2.0}, 10, 0.75, 1.25,
                                  QuoteKind::implied_vol);
  Problem start = pr;
  start.p.alpha = 0.35;
  start.p.nu = 0.3;
  start.p.rho = 0.2;
  const CalibrationResult exact = calibrate(start, CalibrationOptions{}, Engine{});
  CHECK(exact.converged);
  CHECK(exact.values[0] == doctest::Approx(0.25).epsilon(1e-7));
  CHECK(exact.values[1] == doctest::Approx(0.6).epsilon(1e-7));
  CHECK(exact.values[2] == doctest::Approx(-0.5).epsilon(1e-7));
  CHECK(exact.rms < 1e-9);
  // the start: Hagan's fit (two years: biased, but near) is taken over the given one,
  // and it saves pricing passes; from the given start the same parameters come back
  CHECK(exact.started_from == "hagan");
  REQUIRE(exact.hagan_values.size() == 3);
  CHECK(std::fabs(exact.hagan_values[0] - 0.25) < 0.02);
  CHECK(std::fabs(exact.hagan_values[2] + 0.5) < 0.1);
  CalibrationOptions given;
  given.hagan_start = false;
  const CalibrationResult slow = calibrate(start, given, Engine{});
  CHECK(slow.converged);
  CHECK(slow.started_from == "given");
  CHECK(slow.hagan_values.empty());
  MESSAGE("pricing passes from Hagan's start " << exact.evaluations << ", from the given start " << slow.evaluations);
  CHECK(exact.evaluations < slow.evaluations);
  for (int k = 0; k < 3; ++k) CHECK(slow.values[k] == doctest::Approx(exact.values[k]).epsilon(1e-7));
  // a given start that already fits (the truth) is kept: the formula's point fits worse
  Problem at_truth = pr;
  const CalibrationResult kept = calibrate(at_truth, CalibrationOptions{}, Engine{});
  CHECK(kept.started_from == "given");
  CHECK(kept.hagan_values.size() == 3);
  CHECK(kept.values[0] == doctest::Approx(0.25).epsilon(1e-7));
  CHECK(kept.values[1] == doctest::Approx(0.6).epsilon(1e-7));
  CHECK(kept.values[2] == doctest::Approx(-0.5).epsilon(1e-7));
  // 10 bp of noise on every implied volatility: the fit's error within 4 standard errors
  Rng rng(5);
  Problem noisy = start;
  for (Quote& q : noisy.quotes) q.quote += 0.001 * rng.normal();
  check_contracts(noisy, [](std::size_t k) { return "row " + std::to_string(k) + ": "; });  // still arbitrage-free
  const CalibrationResult fit = calibrate(noisy, CalibrationOptions{}, Engine{});
  CHECK(fit.converged);
  CHECK(fit.rms == doctest::Approx(0.001).epsilon(0.3));  // the residuals are the noise
  const double truth[3] = {0.25, 0.6, -0.5};
  for (int k = 0; k < 3; ++k) {
    MESSAGE(fit.names[k] << ": " << fit.values[k] << " +- " << fit.standard_error[k] << " (true " << truth[k] << ")");
    CHECK(fit.standard_error[k] > 0);
    CHECK(std::fabs(fit.values[k] - truth[k]) < 4 * fit.standard_error[k]);
  }
}

TEST_CASE("calibration in two levels: the given grid's fit, in a few of its passes, and its discretisation error") {
  if (!calibration_available()) return;
  // quotes made by the model on a sinh grid of 128 x 64 x 97 (the user's contracts'):
  // the given grid's exact fit is the truth
  Params sinh = model(128, 64, 97, 2.0, 0.25, 0.5, 0.7, -0.4);
  sinh.grid = GridKind::sinh;
  const Problem pr = model_quotes(sinh, {0.25, 1.0, 2.0}, 8, 0.8, 1.25, QuoteKind::price);
  Problem start = pr;
  start.p.alpha = 0.3;
  start.p.nu = 0.3;
  start.p.rho = 0;
  const CalibrationResult two = calibrate(start, CalibrationOptions{}, Engine{});
  CalibrationOptions alone;
  alone.two_levels = false;
  const CalibrationResult one = calibrate(start, alone, Engine{});
  REQUIRE(two.coarse_grid.size() == 3);
  CHECK(two.coarse_grid[0] < pr.p.num_x);
  CHECK(one.coarse_grid.empty());
  CHECK(one.discretisation_error.empty());
  CHECK(two.converged);
  CHECK(one.converged);
  CHECK(two.fitted.num_x == pr.p.num_x);  // the reported prices are the given grid's
  const int fine_passes = two.evaluations - two.coarse_evaluations;
  MESSAGE("two levels: " << two.coarse_evaluations << " coarse passes and " << fine_passes
                         << " of the given grid; the given grid alone: " << one.evaluations);
  CHECK(fine_passes <= 5);
  CHECK(fine_passes < one.evaluations);
  const double truth[3] = {0.25, 0.5, -0.4};
  REQUIRE(two.discretisation_error.size() == 3);
  for (int k = 0; k < 3; ++k) {
    MESSAGE(two.names[k] << ": two levels " << two.values[k] << " (coarse " << two.coarse_values[k] << ", discretisation "
                         << two.discretisation_error[k] << "), alone " << one.values[k]);
    CHECK(one.values[k] == doctest::Approx(truth[k]).epsilon(1e-6));
    // the coarse fit is off by the coarse grid's error; the corrected one within the
    // given grid's share of it (the next step was smaller than that when it stopped)
    CHECK(std::fabs(two.coarse_values[k] - truth[k]) > std::fabs(two.values[k] - truth[k]));
    CHECK(std::fabs(two.values[k] - truth[k]) <= two.discretisation_error[k] + 1e-7);
    CHECK(two.discretisation_error[k] > 0);
  }
}
