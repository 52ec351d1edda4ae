// mle-fit --model garch: a window's passes split into 32 runs of consecutive
// points, one per lane of a CUDA warp (garch_cuda.cu), and the same split
// emulated on the host (GarchLaneWindow, for tests: the GPU's order of
// operations with the CPU's math library).
//
// The GARCH recursion is sequential in time, but it is a linear recurrence
// x_t = beta x_{t-1} + c_t (sigma_t^2 and, once sigma^2 is known at every
// point, its derivatives): each run's points compose to an affine map
// x -> A x + B; an inclusive scan of the runs' maps over the warp's lanes
// (Hillis and Steele 1986: log2(32) steps), shifted by one lane, gives every
// run the state entering it. Sums over points: each run's in time order, then
// a butterfly over the lanes (lane l adds lane l ^ m's value for m = 16, 8,
// .., 1): a fixed tree, the same bits in every lane (addition is commutative).
// A pass is one warp's work, exchanged by shuffles alone (no barriers), so
// that the block's warps can run different searches of one window at once:
// the re-search's starts (garch_model.hpp, side_by_side).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "garch_model.hpp"

namespace numpipe::mle {

constexpr int kGarchLanes = 32;  // a warp: one search's pass
// The warps of a chunk's block: the re-search's five starts side by side
// (the warm search before them on warp 0).
constexpr int kGarchSearchWarps = 5;

// Lane l's points [t0, t1): runs of ceil(n / 32) points.
NUMPIPE_HD_INLINE void garch_run_bounds(std::int64_t n, int lane, std::int64_t* t0, std::int64_t* t1) {
  const std::int64_t run = (n + kGarchLanes - 1) / kGarchLanes;
  *t0 = std::min<std::int64_t>(n, lane * run);
  *t1 = std::min<std::int64_t>(n, *t0 + run);
}
// The lane that owns point n - 1.
NUMPIPE_HD_INLINE int garch_last_lane(std::int64_t n) {
  return static_cast<int>((n - 1) / ((n + kGarchLanes - 1) / kGarchLanes));
}

// The run's map of sigma^2: returns A, sets *B (sigma_0^2 = h0 at t = 0, whose
// run's map is constant: A = 0).
NUMPIPE_HD_INLINE double garch_run_variance_map(const double* r, std::int64_t t0, std::int64_t t1, const double* par,
                                                double h0, double* B) {
  double A = 1, b = 0;
  for (std::int64_t t = t0; t < t1; ++t) {
    if (t == 0) {
      A = 0;
      b = h0;
    } else {
      b = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], r[t - 1] - par[kMu], b);
      A *= par[kBeta];
    }
  }
  *B = b;
  return A;
}

// The run's map of the derivatives of sigma^2 (all four recursions have the
// coefficient beta), given sigma^2 entering the run: returns A, sets dB[4].
NUMPIPE_HD_INLINE double garch_run_derivative_map(const double* r, std::int64_t t0, std::int64_t t1, const double* par,
                                                  double h0, const double* dh0, double h_before, double* dB) {
  double A = 1, h = h_before;
  for (int k = 0; k < 4; ++k) dB[k] = 0;
  for (std::int64_t t = t0; t < t1; ++t) {
    if (t == 0) {
      A = 0;
      h = h0;
      for (int k = 0; k < 4; ++k) dB[k] = dh0[k];
    } else {
      garch_variance_step(par[kOmega], par[kAlpha], par[kBeta], r[t - 1] - par[kMu], h, dB);
      A *= par[kBeta];
    }
  }
  return A;
}

// The shapes' moments split between lanes on the GPU (three lgamma chains of
// aepd_shape_moments, garch.hpp, at once): its formula from lgamma(1/p),
// lgamma(2/p) and lgamma(3/p) computed apart (the same bits: unit_mle_garch_lanes),
// and the shape at garch_shape_stencil's point k (garch_model.hpp).
NUMPIPE_HD_INLINE AepdShapeMoments aepd_shape_moments_from(double p, double lg1, double lg2, double lg3) {
  return {p, exp(lg2 - lg1), exp(lg3 - lg1), exp(lg1 - log(p))};
}
NUMPIPE_HD_INLINE double garch_shape_stencil_p(double p, int k) {
  const double hp = garch_step_p(p);
  return k == 1 ? p + hp : k == 2 ? p - hp : p;
}

// The host's emulation of the warp: the same runs, scan and butterfly, and
// the re-search's starts each searched ahead as the GPU's warps do (host code
// only: not compiled by nvcc, where the search's device side would be
// instantiated for it too).
#ifndef __CUDACC__
struct GarchLaneWindow {
  const double* r;
  std::int64_t n;
  GarchLaneWindow(const double* r_, std::int64_t n_) : r(r_), n(n_) {}
  static constexpr bool kSearchAhead = true;
  template <class Result, int N, class Body>
  void side_by_side(Result (&out)[N], const Body& body) const {
    for (int j = 0; j < N; ++j) out[j] = body(j);
  }

  // lane l adds lane l ^ m's value, m = 16 .. 1
  static double butterfly(double* v) {
    for (int m = kGarchLanes / 2; m > 0; m >>= 1) {
      double next[kGarchLanes];
      for (int l = 0; l < kGarchLanes; ++l) next[l] = v[l] + v[l ^ m];
      std::copy(next, next + kGarchLanes, v);
    }
    return v[0];
  }
  // the state entering each run from the maps (A[l], B[l][k]), as the warp
  // computes it: an inclusive Hillis-Steele scan, then each lane takes the
  // previous lane's composed B (state 0 entering lane 0, whose run holds t = 0)
  template <int M>
  static void state_before(double* A, double (*B)[M]) {
    for (int d = 1; d < kGarchLanes; d <<= 1) {
      double nA[kGarchLanes], nB[kGarchLanes][M];
      for (int l = 0; l < kGarchLanes; ++l) {
        nA[l] = A[l];
        for (int k = 0; k < M; ++k) nB[l][k] = B[l][k];
        if (l >= d) {
          for (int k = 0; k < M; ++k) nB[l][k] = A[l] * B[l - d][k] + B[l][k];
          nA[l] = A[l] * A[l - d];
        }
      }
      std::copy(nA, nA + kGarchLanes, A);
      for (int l = 0; l < kGarchLanes; ++l)
        for (int k = 0; k < M; ++k) B[l][k] = nB[l][k];
    }
    for (int l = kGarchLanes - 1; l >= 0; --l)
      for (int k = 0; k < M; ++k) B[l][k] = l == 0 ? 0.0 : B[l - 1][k];
  }
  template <class F>
  double sum(F f) const {
    double v[kGarchLanes];
    for (int l = 0; l < kGarchLanes; ++l) {
      std::int64_t t0, t1;
      garch_run_bounds(n, l, &t0, &t1);
      v[l] = 0;
      for (std::int64_t t = t0; t < t1; ++t) v[l] += f(r[t]);
    }
    return butterfly(v);
  }
  template <class F, class G>
  void sum_pair(F f, G g, double* sf, double* sg) const {
    *sf = sum(f);
    *sg = sum(g);
  }
  double variance_before(const double* par, double h0, double* h_before) const {
    double A[kGarchLanes], B[kGarchLanes][1];
    for (int l = 0; l < kGarchLanes; ++l) {
      std::int64_t t0, t1;
      garch_run_bounds(n, l, &t0, &t1);
      A[l] = garch_run_variance_map(r, t0, t1, par, h0, &B[l][0]);
    }
    state_before<1>(A, B);
    for (int l = 0; l < kGarchLanes; ++l) h_before[l] = B[l][0];
    return 0;
  }
  double loglik(const double* par, double* h_next) const {
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, false);
    const StandardAepd z = standard_aepd(par[kSkew], par[kShape], par[kShape2]);
    double h_before[kGarchLanes], ll[kGarchLanes], h_end[kGarchLanes], e_end[kGarchLanes];
    variance_before(par, ps.h0, h_before);
    for (int l = 0; l < kGarchLanes; ++l) {
      std::int64_t t0, t1;
      garch_run_bounds(n, l, &t0, &t1);
      ll[l] = garch_run_loglik(r, t0, t1, par, ps.h0, h_before[l], z, &h_end[l], &e_end[l]);
    }
    const int last = garch_last_lane(n);
    if (h_next) *h_next = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], e_end[last], h_end[last]);
    return butterfly(ll);
  }
  double loglik_gradient(const double* par, double* grad) const {
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, true);
    StandardAepd stencil[kGarchStencil];  // on the GPU, lanes 0..5 compute the shapes' moments (the same bits)
    garch_aepd_stencil(par, stencil);
    double h_before[kGarchLanes], A[kGarchLanes], dB[kGarchLanes][4];
    variance_before(par, ps.h0, h_before);
    for (int l = 0; l < kGarchLanes; ++l) {
      std::int64_t t0, t1;
      garch_run_bounds(n, l, &t0, &t1);
      A[l] = garch_run_derivative_map(r, t0, t1, par, ps.h0, ps.dh0, h_before[l], dB[l]);
    }
    state_before<4>(A, dB);
    GarchGradientSums lanes[kGarchLanes];
    for (int l = 0; l < kGarchLanes; ++l) {
      std::int64_t t0, t1;
      garch_run_bounds(n, l, &t0, &t1);
      lanes[l] = garch_run_gradient(r, t0, t1, par, ps.h0, ps.dh0, h_before[l], dB[l], stencil[0]);
    }
    GarchGradientSums s;
    double v[kGarchLanes];
    auto reduce = [&](auto field) {
      for (int l = 0; l < kGarchLanes; ++l) v[l] = field(lanes[l]);
      return butterfly(v);
    };
    s.ll = reduce([](const GarchGradientSums& x) { return x.ll; });
    for (int k = 0; k < 4; ++k) s.g[k] = reduce([k](const GarchGradientSums& x) { return x.g[k]; });
    s.g_theta = reduce([](const GarchGradientSums& x) { return x.g_theta; });
    s.g_sl = reduce([](const GarchGradientSums& x) { return x.g_sl; });
    s.g_sr = reduce([](const GarchGradientSums& x) { return x.g_sr; });
    s.g_p1 = reduce([](const GarchGradientSums& x) { return x.g_p1; });
    s.g_p2 = reduce([](const GarchGradientSums& x) { return x.g_p2; });
    return garch_gradient_finish(s, par, ps.nn, stencil, grad);
  }
};

// Every window's fit with the lanes' order of operations on the host (tests).
inline std::vector<GarchFit> fit_garch_lanes(const double* x, std::int64_t series, std::int64_t length,
                                             const GarchOptions& o) {
  const std::int64_t n = o.window > 0 ? o.window : length;
  const std::int64_t W = (length - n) / o.step + 1, chunks = (W + kGarchChunk - 1) / kGarchChunk;
  std::vector<GarchFit> fits(static_cast<std::size_t>(series * W));
  for (std::int64_t si = 0; si < series; ++si)
    for (std::int64_t c = 0; c < chunks; ++c) {
      auto window = [&](std::int64_t w) { return GarchLaneWindow(x + si * length + w * o.step, n); };
      garch_fit_chunk(window, c * kGarchChunk, std::min(W, (c + 1) * kGarchChunk), o, fits.data() + si * W);
    }
  return fits;
}

#endif  // __CUDACC__

}  // namespace numpipe::mle
