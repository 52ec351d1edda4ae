// mle-fit's refined optimum, standard errors and theta's interval do not depend
// on how exp, log, pow and lgamma round. The CUDA backend runs the same
// inference.hpp as the CPU but with CUDA's math library (results differing from
// the host's libm in the last bit or two) and contracted a*b + c; before the
// searches stopped at the gradient's root, that moved the optimum by ~1e-7 of
// the scale and theta's standard error by up to 4x (tests/cli/mle-gpu.sh).
// Here the same code is compiled a second time with every exp, log, pow and
// lgamma result moved by up to 4 ulps (mle_perturbed.cpp, a stand-in for
// another math library) and compared with the unperturbed result, window by
// window, within the tolerances that tests/cli/mle-gpu.sh and
// tests/unit/test_mle_cuda.cu state for CPU against CUDA (the reasons are there).
// And a window whose profile in theta has two maxima inside one search bracket
// (the one of tests/cli/mle-gpu.sh where the CPU and an H100 ended on different
// maxima): the same optimum from either start and under perturbation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/random.hpp"
#include "kernels/mle/detail/backends.hpp"
#include "kernels/mle/inference.hpp"
#include "kernels/mle/mle.hpp"
#include "kernels/mle/statistics.hpp"
#include "mle_perturbed.hpp"

using namespace numpipe;
using namespace numpipe::mle;
using numpipe::mle_test::PlainEstimate;
using numpipe::mle_test::PlainTask;

namespace {

// The tolerances (relative; theta and its interval relative to the scale
// s_l + s_r, since theta itself may be ~0). Kept equal to test_mle_cuda.cu's.
constexpr double kEstimateTol = 1e-9;  // theta, p, s_l, s_r, the interval's ends
constexpr double kStderrTol = 1e-6;    // standard errors
constexpr double kLoglikTol = 1e-11;   // the log-likelihood (flat at the optimum)

// Draws of the one-shape AEPD by inverse transform.
std::vector<double> draw(std::size_t n, double p, double sl, double sr, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (double& v : x) {
    const bool left = rng.uniform() < sl / (sl + sr);  // the left branch's mass (one shape)
    v = (left ? -sl : sr) * std::pow(rng.gamma(1.0 / p), 1.0 / p);  // |x/s|^p ~ Gamma(1/p)
  }
  return x;
}

PlainTask plain(const WindowTask& t) {
  return {t.theta0, t.p1, t.p1_lo, t.p1_hi, t.p2, t.p2_lo, t.p2_hi, t.p_min, t.p_max, t.two_shapes, t.refine, t.inform};
}

double rel(double a, double b, double unit) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0.0 : INFINITY;
  return std::fabs(a - b) / unit;
}

struct Worst {
  double est = 0, se = 0, ll = 0;
  int smooth_flips = 0;
};

// gen-input mle's draws (--theta 0): the same series as `gen-input mle --length
// n --p p --sl sl --sr sr --seed seed` (tools/gen-input/mle.cpp).
std::vector<double> gen_input_mle(std::size_t n, double p, double sl, double sr, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (double& v : x) {
    const bool left = rng.uniform() < sl / (sl + sr);
    const double g = std::pow(rng.gamma(1.0 / p), 1.0 / p);
    v = left ? 0.0 - sl * g : 0.0 + sr * g;
  }
  return x;
}

using Copy = PlainEstimate (*)(const double*, std::int64_t, const PlainTask&, int, std::uint64_t);

// Every window of x: the library's estimate (the unperturbed copy) against
// `other` (by default the perturbed copy) with `ulps` of perturbation.
Worst compare_all(const std::vector<double>& x, const Params& p, int ulps, std::uint64_t salt, bool check_library,
                  Copy other = mle_test::estimate_window_perturbed) {
  Series s{x.data(), 1, static_cast<std::int64_t>(x.size())};
  WindowFits f;
  solve_cpu(s, p, f);
  const std::int64_t W = window_count(s, p);
  const std::vector<WindowTask> tasks = make_tasks(s, p, f, true, true, 0, W);
  Worst w;
  for (std::int64_t i = 0; i < W; ++i) {
    const double* xi = x.data() + i * p.step;
    const PlainEstimate a = mle_test::estimate_window_perturbed(xi, p.window, plain(tasks[i]), 0, 0);
    if (check_library) {  // the copy is the library's code: the same bits unperturbed
      const WindowEstimate l = estimate_window(xi, p.window, tasks[i]);
      REQUIRE(std::memcmp(&a.theta, &l.theta, sizeof(double)) == 0);
      REQUIRE(std::memcmp(a.se, l.se, sizeof a.se) == 0);
      REQUIRE(std::memcmp(&a.ci_lo, &l.ci_lo, sizeof(double)) == 0);
    }
    const PlainEstimate b = other(xi, p.window, plain(tasks[i]), ulps, salt);
    const double scale = a.s_l + a.s_r;
    double est = std::max({rel(a.theta, b.theta, scale), rel(a.p1, b.p1, a.p1), rel(a.p2, b.p2, a.p2),
                           rel(a.s_l, b.s_l, a.s_l), rel(a.s_r, b.s_r, a.s_r), rel(a.ci_lo, b.ci_lo, scale),
                           rel(a.ci_hi, b.ci_hi, scale)});
    double se = 0;
    for (int k = 0; k < 5; ++k)
      if (!(std::isnan(a.se[k]) && std::isnan(b.se[k]))) se = std::max(se, rel(a.se[k], b.se[k], std::fabs(a.se[k])));
    const double ll = rel(a.loglik, b.loglik, std::max(1.0, std::fabs(a.loglik)));
    if (a.smooth != b.smooth) ++w.smooth_flips;
    if (est > kEstimateTol || se > kStderrTol || ll > kLoglikTol)
      std::printf("window %lld: theta %.17g %.17g p %.17g %.17g se0 %.17g %.17g ci %.17g %.17g\n",
                  static_cast<long long>(i), a.theta, b.theta, a.p1, b.p1, a.se[0], b.se[0], a.ci_lo, b.ci_lo);
    w.est = std::max(w.est, est);
    w.se = std::max(w.se, se);
    w.ll = std::max(w.ll, ll);
  }
  return w;
}

// The series of the rounding tests: p = 1.4: theta moves between data points and
// its curvature sums |x - theta|^(p-2) (the old failure); p = 0.8: theta on a data
// point, the profile walk; p = 2.5: smooth; two shapes.
struct RoundingCase {
  const char* name;
  double p, sl, sr;
  int shapes;
  const char* grid;
  std::vector<double> series() const { return draw(1400, p, sl, sr, 21); }
  Params params() const {
    Params q;
    q.window = 400;
    q.step = shapes == 2 ? 50 : 10;
    q.shapes = shapes;
    q.grid = parse_grid(grid);
    return q;
  }
};
const RoundingCase kRoundingCases[] = {{"p 1.4", 1.4, 1.0, 2.0, 1, "0.5:3:26"},
                                       {"p 0.8", 0.8, 1.5, 1.0, 1, "0.5:3:26"},
                                       {"p 2.5", 2.5, 1.0, 1.0, 1, "0.5:3:26"},
                                       {"two shapes", 1.6, 1.0, 2.0, 2, "0.8:2.8:9"}};

}  // namespace

TEST_CASE("mle inference: a few ulps of exp/log/pow/lgamma rounding move no result beyond the CPU-CUDA tolerance") {
  for (const RoundingCase& c : kRoundingCases) {
    const std::vector<double> x = c.series();
    const Params p = c.params();
    for (std::uint64_t salt : {1u, 2u}) {
      const Worst w = compare_all(x, p, 4, salt, salt == 1);
      CAPTURE(c.name);
      CAPTURE(salt);
      MESSAGE(c.name << " salt " << salt << ": worst estimate " << w.est << ", stderr " << w.se << ", loglik " << w.ll);
      CHECK(w.smooth_flips == 0);
      CHECK(w.est <= kEstimateTol);
      CHECK(w.se <= kStderrTol);
      CHECK(w.ll <= kLoglikTol);
      CHECK(w.est > 0);  // the perturbation reaches the results: the test can see a difference
    }
  }
}

namespace {
// One estimate against another within the CPU-CUDA tolerances.
void check_close(const PlainEstimate& a, const PlainEstimate& b, const char* what) {
  CAPTURE(what);
  const double scale = a.s_l + a.s_r;
  CHECK(rel(a.theta, b.theta, scale) <= kEstimateTol);
  CHECK(rel(a.p1, b.p1, a.p1) <= kEstimateTol);
  CHECK(rel(a.s_l, b.s_l, a.s_l) <= kEstimateTol);
  CHECK(rel(a.s_r, b.s_r, a.s_r) <= kEstimateTol);
  CHECK(rel(a.ci_lo, b.ci_lo, scale) <= kEstimateTol);
  CHECK(rel(a.ci_hi, b.ci_hi, scale) <= kEstimateTol);
  CHECK(rel(a.loglik, b.loglik, std::fabs(a.loglik)) <= kLoglikTol);
  for (int k = 1; k < 4; ++k) CHECK(rel(a.se[k], b.se[k], std::fabs(a.se[k])) <= kStderrTol);
}
}  // namespace

// tests/cli/mle-gpu.sh's inf-cusp case (gen-input mle --length 3000 --p 0.8 --sl
// 1.5 --sr 1 --seed 22; --window 400 --step 2 --alpha-grid 0.5:3:26), window
// 885: the grid's optimum is the data point A = 0.04106 at p = 1 (the next one
// up, B = 0.04877, is 2.5e-4 lower there). With p free the refine reaches
// p ~ 1.017, where the profile in theta has a maximum 4e-6 above A, a dip, and
// a maximum at B 1.1e-3 higher; both lie in the search's first bracket [A, B],
// and which one the shrinking bracket reached depended on the rounding of the
// slopes it compared (the CPU ended next to A, an H100 at B). Now both are
// found and the higher one taken: the same optimum starting from A or from B,
// with any rounding, and at least as likely as the profile at either point.
TEST_CASE("mle inference: two maxima in one bracket give one optimum, from either data point, under perturbation") {
  const std::vector<double> x = gen_input_mle(3000, 0.8, 1.5, 1.0, 22);
  Params p;
  p.window = 400;
  p.step = 2;
  p.grid = parse_grid("0.5:3:26");
  Series s{x.data(), 1, static_cast<std::int64_t>(x.size())};
  WindowFits f;
  solve_cpu(s, p, f);
  const std::int64_t W = window_count(s, p), w = 885;
  const std::vector<WindowTask> tasks = make_tasks(s, p, f, true, true, 0, W);
  const double* win = x.data() + w * p.step;
  // the series and the grid's optimum of the CLI test (else the draws differ)
  REQUIRE(tasks[w].theta0 == 0x1.5067435fc716fp-5);
  REQUIRE(tasks[w].p1 == 1.0);
  double B = INFINITY;  // the next data point above A
  for (std::int64_t k = 0; k < p.window; ++k)
    if (win[k] > tasks[w].theta0) B = std::min(B, win[k]);
  PlainTask from_a = plain(tasks[w]), from_b = from_a;
  from_b.theta0 = B;
  const PlainEstimate ref = mle_test::estimate_window_perturbed(win, p.window, from_a, 0, 0);
  MESSAGE("window 885: theta " << ref.theta << " p " << ref.p1 << " loglik " << ref.loglik << " (B = " << B << ")");
  // at least as likely as the profile at A and at B with the estimate's shape
  // (to the log-likelihood's tolerance: B's maximum lies within 1e-14 of B)
  const double slack = kLoglikTol * std::fabs(ref.loglik);
  CHECK(ref.loglik >= profile_loglik_at(win, p.window, tasks[w].theta0, ref.p1) - slack);
  CHECK(ref.loglik >= profile_loglik_at(win, p.window, B, ref.p1) - slack);
  check_close(ref, mle_test::estimate_window_perturbed(win, p.window, from_b, 0, 0), "from B");
  for (std::uint64_t salt = 1; salt <= 8; ++salt) {
    CAPTURE(salt);
    check_close(ref, mle_test::estimate_window_perturbed(win, p.window, from_a, 4, salt), "from A, 4 ulps");
    check_close(ref, mle_test::estimate_window_perturbed(win, p.window, from_b, 4, salt), "from B, 4 ulps");
  }
  // the windows around it (872 and 892 hold such brackets too) under perturbation
  Params sub = p;
  const std::vector<double> part(x.begin() + 860 * p.step, x.begin() + 900 * p.step + p.window);
  for (std::uint64_t salt : {3u, 4u}) {
    const Worst wst = compare_all(part, sub, 4, salt, false);
    CAPTURE(salt);
    CHECK(wst.smooth_flips == 0);
    CHECK(wst.est <= kEstimateTol);
    CHECK(wst.se <= kStderrTol);
    CHECK(wst.ll <= kLoglikTol);
  }
}

// Series drawn with p = 1.1 (refined p near 1.02 to 1.04, where such brackets
// are common): before both maxima were compared, 4 ulps of perturbation moved
// the optimum to the other maximum in windows 192, 488 and 587 of this series
// (window 400, step 4; 5 of 1302 windows in two such series). Now none moves.
TEST_CASE("mle inference: p near 1: perturbed rounding does not move the optimum to another maximum") {
  const std::vector<double> x = gen_input_mle(3000, 1.1, 1.5, 1.0, 2);
  Params p;
  p.window = 400;
  p.step = 4;
  p.grid = parse_grid("0.5:3:26");
  for (std::int64_t w0 : {185, 482, 582}) {
    const std::vector<double> part(x.begin() + w0 * p.step, x.begin() + (w0 + 10) * p.step + p.window);
    for (std::uint64_t salt : {1u, 2u}) {
      const Worst wst = compare_all(part, p, 4, salt, false);
      CAPTURE(w0);
      CAPTURE(salt);
      CHECK(wst.smooth_flips == 0);
      CHECK(wst.est <= kEstimateTol);
      CHECK(wst.se <= kStderrTol);
      CHECK(wst.ll <= kLoglikTol);
    }
  }
}

// The CUDA estimate kernel sums each window over 8 lanes (every 8th point) and
// a butterfly of their partial sums, with one division a point
// (inference.hpp window_sums): the same searches in that order, run on the
// host, with and without perturbed exp/log/pow/lgamma, within the CPU-CUDA
// tolerances of the point-order results, window by window.
TEST_CASE("mle inference: the CUDA kernel's order of the window sums moves no result beyond the CPU-CUDA tolerance") {
  for (const RoundingCase& c : kRoundingCases) {
    const std::vector<double> x = c.series();
    const Params p = c.params();
    for (int ulps : {0, 4}) {
      const Worst w = compare_all(x, p, ulps, 5, false, mle_test::estimate_window_lanes);
      CAPTURE(c.name);
      CAPTURE(ulps);
      MESSAGE(c.name << " lanes, " << ulps << " ulps: worst estimate " << w.est << ", stderr " << w.se << ", loglik "
                     << w.ll);
      CHECK(w.smooth_flips == 0);
      CHECK(w.est <= kEstimateTol);
      CHECK(w.se <= kStderrTol);
      CHECK(w.ll <= kLoglikTol);
      CHECK(w.est > 0);  // the order reaches the results
    }
  }
  // tests/cli/mle-gpu.sh's inf-cusp windows 860 to 900 (two maxima in one bracket at 872, 885, 892)
  const std::vector<double> x = gen_input_mle(3000, 0.8, 1.5, 1.0, 22);
  Params p;
  p.window = 400;
  p.step = 2;
  p.grid = parse_grid("0.5:3:26");
  const std::vector<double> part(x.begin() + 860 * p.step, x.begin() + 900 * p.step + p.window);
  const Worst w = compare_all(part, p, 4, 6, false, mle_test::estimate_window_lanes);
  CHECK(w.smooth_flips == 0);
  CHECK(w.est <= kEstimateTol);
  CHECK(w.se <= kStderrTol);
  CHECK(w.ll <= kLoglikTol);
}
