// mle-fit --model garch: a window's passes split into 256 runs of consecutive
// points, one per thread of a CUDA block of 8 warps (garch_cuda.cu), and the
// same split emulated on the host (GarchLaneWindow, for tests: the GPU's order
// of operations with the CPU's math library).
//
// The GARCH recursion is sequential in time, but it is a linear recurrence
// x_t = beta x_{t-1} + c_t (sigma_t^2 and, once sigma^2 is known at every
// point, its derivatives): each run's points compose to an affine map
// x -> A x + B; an inclusive scan of the runs' maps within each warp
// (Hillis and Steele 1986: log2(32) steps), then the warps' totals composed in
// warp order, gives every run the state entering it. Sums over points: each
// run's in time order, then a butterfly within each warp (lane l adds lane
// l ^ m's value for m = 16, 8, .., 1), then the same over the warps' sums
// (m = 32, 64, 128 in thread numbers): a fixed tree, the same bits in every
// thread (addition is commutative).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "garch_model.hpp"

namespace numpipe::mle {

constexpr int kGarchWarpLanes = 32;
constexpr int kGarchWarps = 8;  // one block per chunk: few blocks, so as many threads a pass as fit
constexpr int kGarchLanes = kGarchWarps * kGarchWarpLanes;

// Thread l's points [t0, t1): runs of ceil(n / 256) points.
NUMPIPE_HD_INLINE void garch_run_bounds(std::int64_t n, int lane, std::int64_t* t0, std::int64_t* t1) {
  const std::int64_t run = (n + kGarchLanes - 1) / kGarchLanes;
  *t0 = std::min<std::int64_t>(n, lane * run);
  *t1 = std::min<std::int64_t>(n, *t0 + run);
}
// The thread that owns point n - 1.
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

// The run's log-likelihood terms, given sigma^2 entering it; *h_end, *e_end:
// sigma^2 and the residual at its last point.
NUMPIPE_HD_INLINE double garch_run_loglik(const double* r, std::int64_t t0, std::int64_t t1, const double* par, double h0,
                                          double h_before, const StandardAepd& z, double* h_end, double* e_end) {
  double ll = 0, h = h_before, e_prev = t0 > 0 ? r[t0 - 1] - par[kMu] : 0.0;
  GarchLogSum log_h;
  for (std::int64_t t = t0; t < t1; ++t) {
    h = t == 0 ? h0 : garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], e_prev, h);
    const double e = r[t] - par[kMu];
    ll += garch_point_density(e, 1.0 / sqrt(h), z);
    log_h.add(h);
    e_prev = e;
  }
  *h_end = h;
  *e_end = e_prev;
  return ll - 0.5 * log_h.log_value();
}

// The run's gradient terms, given sigma^2 and its derivatives entering it.
NUMPIPE_HD_INLINE GarchGradientSums garch_run_gradient(const double* r, std::int64_t t0, std::int64_t t1,
                                                       const double* par, double h0, const double* dh0, double h_before,
                                                       const double* dh_before, const StandardAepd& z) {
  GarchGradientSums s;
  GarchLogSum log_h;
  double h = h_before, dh[4], e_prev = t0 > 0 ? r[t0 - 1] - par[kMu] : 0.0;
  for (int k = 0; k < 4; ++k) dh[k] = dh_before[k];
  for (std::int64_t t = t0; t < t1; ++t) {
    if (t == 0) {
      h = h0;
      for (int k = 0; k < 4; ++k) dh[k] = dh0[k];
    } else {
      garch_variance_step(par[kOmega], par[kAlpha], par[kBeta], e_prev, h, dh);
    }
    const double e = r[t] - par[kMu];
    garch_gradient_point(e, h, dh, z, s, log_h);
    e_prev = e;
  }
  s.ll -= 0.5 * log_h.log_value();
  return s;
}

// What a pass starts from: sigma_0^2 (the window's mean square residual) and
// its derivatives in (mu, omega, alpha, beta).
struct GarchPassStart {
  double nn, h0, dh0[4];
};
template <class Window>
NUMPIPE_HD_INLINE GarchPassStart garch_pass_start(const Window& w, const double* par, bool derivatives) {
  const double mu = par[kMu];
  GarchPassStart s;
  s.nn = static_cast<double>(w.n);
  double e2, e1;  // both in one exchange on the GPU (the same bits as two sums)
  w.sum_pair([mu](double x) { return (x - mu) * (x - mu); }, [mu](double x) { return x - mu; }, &e2, &e1);
  s.h0 = e2 / s.nn;
  s.dh0[0] = -2 * (derivatives ? e1 : 0.0) / s.nn;
  s.dh0[1] = s.dh0[2] = s.dh0[3] = 0;
  return s;
}

// The host's emulation of the warp: the same runs, scan and butterfly (host
// code only: not compiled by nvcc, where the search's device side would be
// instantiated for it too).
#ifndef __CUDACC__
struct GarchLaneWindow {
  const double* r;
  std::int64_t n;

  // within each warp (m = 16 .. 1), then over the warps (m = 32 .. 128)
  static double butterfly(double* v) {
    auto step = [v](int m) {
      double next[kGarchLanes];
      for (int l = 0; l < kGarchLanes; ++l) next[l] = v[l] + v[l ^ m];
      std::copy(next, next + kGarchLanes, v);
    };
    for (int m = kGarchWarpLanes / 2; m > 0; m >>= 1) step(m);
    for (int m = kGarchWarpLanes; m < kGarchLanes; m <<= 1) step(m);
    return v[0];
  }
  // the state entering each run from the maps (A[l], B[l][k]), as the block
  // computes it: an inclusive Hillis-Steele scan within each warp, the warps'
  // totals composed in warp order from state 0, then each thread's exclusive
  // prefix within its warp applied to the state entering its warp
  template <int M>
  static void state_before(double* A, double (*B)[M]) {
    for (int d = 1; d < kGarchWarpLanes; d <<= 1) {
      double nA[kGarchLanes], nB[kGarchLanes][M];
      for (int l = 0; l < kGarchLanes; ++l) {
        nA[l] = A[l];
        for (int k = 0; k < M; ++k) nB[l][k] = B[l][k];
        if (l % kGarchWarpLanes >= d) {
          for (int k = 0; k < M; ++k) nB[l][k] = A[l] * B[l - d][k] + B[l][k];
          nA[l] = A[l] * A[l - d];
        }
      }
      std::copy(nA, nA + kGarchLanes, A);
      for (int l = 0; l < kGarchLanes; ++l)
        for (int k = 0; k < M; ++k) B[l][k] = nB[l][k];
    }
    double warp_state[kGarchWarps][M];
    for (int k = 0; k < M; ++k) warp_state[0][k] = 0;
    for (int w = 1; w < kGarchWarps; ++w)
      for (int k = 0; k < M; ++k) {
        const int end = w * kGarchWarpLanes - 1;  // the previous warp's last lane
        warp_state[w][k] = A[end] * warp_state[w - 1][k] + B[end][k];
      }
    for (int l = kGarchLanes - 1; l >= 0; --l) {
      const int w = l / kGarchWarpLanes;
      const bool first = l % kGarchWarpLanes == 0;
      const double a = first ? 1.0 : A[l - 1];
      for (int k = 0; k < M; ++k) B[l][k] = a * warp_state[w][k] + (first ? 0.0 : B[l - 1][k]);
    }
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
    StandardAepd stencil[kGarchStencil];  // on the GPU, lanes 0..5 compute the shapes' moments
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
      auto window = [&](std::int64_t w) { return GarchLaneWindow{x + si * length + w * o.step, n}; };
      garch_fit_chunk(window, c * kGarchChunk, std::min(W, (c + 1) * kGarchChunk), o, fits.data() + si * W);
    }
  return fits;
}

#endif  // __CUDACC__

}  // namespace numpipe::mle
