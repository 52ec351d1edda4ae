// mle-fit, CUDA (label gpu): the error bound the rolling kernel's prescreen
// relies on (kernels/mle/prescreen.cuh), measured on the device: the SFU's
// lg2.approx over every float in [1, 2), ex2.approx over every float in [-2, 2],
// and approx_root against model.hpp's root_p1 over X from 2^-1100 to 2^1100;
// and the inference kernel against the CPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_array.hpp"
#include "kernels/mle/detail/backends.hpp"
#include "kernels/mle/mle.hpp"
#include "kernels/mle/model.hpp"
#include "kernels/mle/prescreen.cuh"

using namespace numpipe;
using namespace numpipe::mle;

namespace {

// Non-negative doubles order like their bit patterns, so an integer atomicMax
// keeps the largest error (and the result does not depend on the order).
__device__ void max_into(unsigned long long* slot, double v) {
  if (!(v >= 0)) v = 1e300;  // a NaN error counts as huge
  atomicMax(slot, static_cast<unsigned long long>(__double_as_longlong(v)));
}

__global__ void lg2_error(unsigned long long* worst) {
  double e = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < (1u << 23); i += gridDim.x * blockDim.x) {
    const float m = __int_as_float(0x3f800000 | static_cast<int>(i));
    e = fmax(e, fabs(static_cast<double>(lg2_approx(m)) - log2(static_cast<double>(m))));
  }
  max_into(worst, e);
}

// Every float in [-2, 2]: bit patterns 0 .. bits(2) with either sign.
__global__ void ex2_error(unsigned long long* worst) {
  const unsigned top = 0x40000000u;  // 2.0f
  double e = 0;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i <= 2ull * top + 1;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const unsigned b = static_cast<unsigned>(i >> 1) | ((i & 1) ? 0x80000000u : 0u);
    const float y = __uint_as_float(b);
    const double ref = exp2(static_cast<double>(y));
    e = fmax(e, fabs(static_cast<double>(ex2_approx(y)) / ref - 1.0));
  }
  max_into(worst, e);
}

// approx_root against root_p1: X = 2^u (1 + f) for u in [-1100, 1100], 64
// mantissas each, for every q; worst relative error where covered, and the
// count of normal values whose power lies in [2^-98, 2^98] but were refused.
__global__ void root_error(const double* q, int nq, unsigned long long* worst, unsigned long long* refused) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int u = idx / 64 - 1100, f = idx % 64;
  if (u > 1100) return;
  const double X = ldexp(1.0 + (f + 0.3710478) / 64.0, u);
  double e = 0;
  unsigned long long bad = 0;
  for (int a = 0; a < nq; ++a) {
    const RootConst c = root_const(q[a]);
    float r = 0;
    const bool ok = approx_root(X, c, &r);
    const double ref = root_p1(X, q[a]);
    if (ok && ref > 0) e = fmax(e, fabs(static_cast<double>(r) / ref - 1.0));
    else if (!ok && X >= 2.3e-308 && fabs(log2(ref)) < 98) ++bad;
  }
  max_into(worst, e);
  if (bad) atomicAdd(refused, bad);
}

// Special values: flags and the value where covered.
__global__ void root_special(const double* X, int m, double q, float* out, int* ok) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  float r = -1;
  ok[i] = approx_root(X[i], root_const(q), &r) ? 1 : 0;
  out[i] = r;
}

double to_double(unsigned long long bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

TEST_CASE("mle prescreen: the SFU's lg2 and ex2 within the bounds prescreen.cuh assumes") {
  DeviceArray<unsigned long long> w(2);
  NUMPIPE_CUDA_CHECK(cudaMemset(w.data(), 0, 2 * sizeof(unsigned long long)));
  lg2_error<<<264, 256>>>(w.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  ex2_error<<<1056, 256>>>(w.data() + 1);
  NUMPIPE_CUDA_CHECK_LAUNCH();
  unsigned long long h[2];
  w.copy_to_host(h, 2);
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  const double lg2_abs = to_double(h[0]), ex2_rel = to_double(h[1]);
  std::printf("lg2.approx on [1,2): max abs error %.3g (2^%.2f); ex2.approx on [-2,2]: max rel error %.3g (2^%.2f)\n",
              lg2_abs, std::log2(lg2_abs), ex2_rel, std::log2(ex2_rel));
  CHECK(lg2_abs <= std::ldexp(1.0, -22));
  CHECK(ex2_rel <= std::ldexp(1.0, -21));
}

TEST_CASE("mle prescreen: approx_root within half of kApproxEps, and the slack covers the bound") {
  // kSlack >= (1 + eps)/(1 - eps): a candidate left out provably loses
  const double eps = kApproxEps;
  CHECK(static_cast<double>(kSlack) >= (1 + eps) / (1 - eps));
  std::vector<double> q;
  for (int i = 0; i < 80; ++i) q.push_back(1.0 / ((0.5 + (4.45 - 0.5) * i / 79.0) + 1.0));
  for (double p : {0.01, 0.1, 0.3, 1.0, 7.0, 20.0, 64.0}) q.push_back(1.0 / (p + 1.0));
  DeviceArray<double> dq(q.size());
  dq.copy_from_host(q.data(), q.size());
  DeviceArray<unsigned long long> w(2);
  NUMPIPE_CUDA_CHECK(cudaMemset(w.data(), 0, 2 * sizeof(unsigned long long)));
  const int items = 2201 * 64;
  root_error<<<(items + 255) / 256, 256>>>(dq.data(), static_cast<int>(q.size()), w.data(), w.data() + 1);
  NUMPIPE_CUDA_CHECK_LAUNCH();
  unsigned long long h[2];
  w.copy_to_host(h, 2);
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  const double worst = to_double(h[0]);
  std::printf("approx_root: max rel error %.3g (2^%.2f) over %zu shapes; refused in range: %llu\n", worst,
              std::log2(worst), q.size(), h[1]);
  CHECK(worst > 0);  // the approximation is not the exact value: the test sees its error
  CHECK(worst <= eps / 2);
  CHECK(h[1] == 0);
}

TEST_CASE("mle prescreen: zeros, negatives and values outside the range") {
  const double inf = INFINITY, nan = NAN;
  const std::vector<double> X{0.0, -0.0, -1.5, -nan, 4.9e-324, 1e-310, inf, nan, 1.0, 0x1p-400, 0x1p+400, 0x1p-200};
  // q = 1/3: 2^-400 -> 2^-133 (out), 2^400 -> 2^133 (out), 2^-200 -> 2^-66.7 (in)
  const std::vector<int> want_ok{1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1};
  DeviceArray<double> dx(X.size());
  dx.copy_from_host(X.data(), X.size());
  DeviceArray<float> dout(X.size());
  DeviceArray<int> dok(X.size());
  root_special<<<1, 32>>>(dx.data(), static_cast<int>(X.size()), 1.0 / 3.0, dout.data(), dok.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  std::vector<float> out(X.size());
  std::vector<int> ok(X.size());
  dout.copy_to_host(out.data(), X.size());
  dok.copy_to_host(ok.data(), X.size());
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  for (std::size_t i = 0; i < X.size(); ++i) {
    INFO("X = " << X[i]);
    CHECK(ok[i] == want_ok[i]);
  }
  for (int i = 0; i < 4; ++i) CHECK(out[i] == 0.0f);  // as root_p1: 0 for anything not > 0
  CHECK(std::fabs(out[8] - 1.0f) <= 1e-6f);
  CHECK(std::fabs(out[11] / std::exp2(-200.0 / 3.0) - 1.0) <= kApproxEps);
}

namespace {
// The fits of windows [begin, end) alone, as one MPI rank holds them
// (make_tasks pairs fits[u] with window begin + u).
WindowFits fits_range(const WindowFits& f, std::size_t begin, std::size_t end) {
  auto cut = [&](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    return v.empty() ? V{} : V(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
  };
  WindowFits r;
  r.shape = cut(f.shape);
  r.shape2 = cut(f.shape2);
  r.index = cut(f.index);
  r.xm = cut(f.xm);
  r.xp = cut(f.xp);
  r.S = cut(f.S);
  r.loglik = cut(f.loglik);
  return r;
}

// The same bits in every field of two estimates, field by field (not memcmp of
// the struct: a field added later, or padding, would be compared unnamed).
bool same_bits(const WindowEstimate& a, const WindowEstimate& b) {
  static_assert(sizeof(WindowEstimate) == (8 + kParams) * sizeof(double) + 2 * sizeof(int),
                "a new field of WindowEstimate must be compared here too");
  auto eq = [](double u, double v) { return std::memcmp(&u, &v, sizeof u) == 0; };
  bool ok = eq(a.theta, b.theta) && eq(a.p1, b.p1) && eq(a.p2, b.p2) && eq(a.s_l, b.s_l) && eq(a.s_r, b.s_r) &&
            eq(a.loglik, b.loglik) && eq(a.ci_lo, b.ci_lo) && eq(a.ci_hi, b.ci_hi) && a.smooth == b.smooth &&
            a.iterations == b.iterations;
  for (int k = 0; k < kParams; ++k) ok = ok && eq(a.se[k], b.se[k]);
  return ok;
}
}  // namespace

// The inference kernel (estimate_kernel: inference.hpp's estimate_window, one
// thread per window) against the same code on the CPU: series with p > 1
// (theta moves), p < 1 (theta stays on a data point, the profile walk), ties,
// a constant stretch (no finite maximum), and two shapes.
//
// Tolerances (the same as tests/unit/test_mle_rounding.cpp, which checks them
// on the CPU with exp/log/pow/lgamma moved by 4 ulps, and tests/cli/mle-gpu.sh):
// CUDA's math library rounds differently and CUDA contracts a*b + c, so the
// log-likelihoods differ by ~1e-16 n; the searches stop at the gradient's root
// (to its rounding), so the optimum moves by ~1e-13 of the scale (measured
// with the perturbed copy): 1e-9 for theta, p, s_l, s_r and the interval's ends,
// theta and the ends relative to the scale s_l + s_r (theta may be ~0). The
// standard errors are smooth in the estimates (theta's row of the information
// is its expectation): 1e-6 relative (the estimates' error times the
// information's condition number). The log-likelihood, flat at the optimum:
// 1e-11. Whether theta's row exists (smooth, p > 1) must agree exactly.
TEST_CASE("mle inference: estimate_cuda agrees with estimate_cpu") {
  std::vector<double> x(3000);
  std::uint64_t state = 12345;
  auto uniform = [&] {  // a small LCG: the test needs values, not a quality generator
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state >> 11) + 0.5) * 0x1.0p-53;
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = uniform(), g = -std::log(uniform());
    const double p = i < 1000 ? 1.6 : (i < 2000 ? 0.8 : 2.5);
    double v = u < 0.4 ? -std::pow(g, 1 / p) : 1.5 * std::pow(g, 1 / p);
    if (i >= 1500 && i < 1700) v = std::round(v * 4) / 4;  // ties
    if (i >= 2600 && i < 2760) v = 0.25;                    // a constant stretch
    x[i] = v;
  }
  Series s{x.data(), 1, 3000};
  for (int shapes : {1, 2}) {
    Params p;
    p.window = 150;
    p.step = 7;
    p.shapes = shapes;
    p.grid = parse_grid("0.5:3:11");
    WindowFits f;
    solve_cpu(s, p, f);
    const std::int64_t W = window_count(s, p);
    const std::vector<WindowEstimate> c = estimate_cpu(s, p, f, true, true, 0, W);
    const std::vector<WindowEstimate> g = estimate_cuda(s, p, f, true, true, 0, W, 0);
    // a range, as one MPI rank's: its own fits only
    const std::vector<WindowEstimate> g2 =
        estimate_cuda(s, p, fits_range(f, 5, static_cast<std::size_t>(W - 3)), true, true, 5, W - 3, 0);
    REQUIRE(g.size() == c.size());
    REQUIRE(g2.size() == c.size() - 8);
    auto close = [](double a, double b, double tol, double unit) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
      if (std::isinf(a) || std::isinf(b)) return a == b;
      return std::fabs(a - b) <= tol * unit;
    };
    auto rel = [&](double a, double b, double tol) {
      return close(a, b, tol, std::max({std::fabs(a), std::fabs(b), 1e-300}));
    };
    int bad = 0, smooth = 0, range_bad = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const WindowEstimate &a = c[i], &b = g[i];
      smooth += a.smooth;
      const double unit = std::isfinite(a.s_l + a.s_r) && a.s_l + a.s_r > 0 ? a.s_l + a.s_r : 1.0;
      bool ok = a.smooth == b.smooth && close(a.theta, b.theta, 1e-9, unit) && rel(a.p1, b.p1, 1e-9) &&
                rel(a.p2, b.p2, 1e-9) && rel(a.s_l, b.s_l, 1e-9) && rel(a.s_r, b.s_r, 1e-9) &&
                rel(a.loglik, b.loglik, 1e-11) && close(a.ci_lo, b.ci_lo, 1e-9, unit) &&
                close(a.ci_hi, b.ci_hi, 1e-9, unit);
      for (int k = 0; k < kParams; ++k) ok = ok && rel(a.se[k], b.se[k], 1e-6);
      if (i >= 5 && i < c.size() - 3 && !same_bits(g2[i - 5], b)) ++range_bad;  // the same bits for a range
      if (!ok && bad++ < 5)
        std::printf("window %zu (shapes %d): cpu theta %.17g p %.17g %.17g se0 %.17g ci %.17g | gpu %.17g %.17g %.17g %.17g %.17g\n", i,
                    shapes, a.theta, a.p1, a.p2, a.se[0], a.ci_lo, b.theta, b.p1, b.p2, b.se[0], b.ci_lo);
    }
    CAPTURE(shapes);
    CHECK(bad == 0);
    CHECK(range_bad == 0);
    CHECK(smooth > 0);
    CHECK(smooth < static_cast<int>(c.size()));
  }
}
