// mle-fit --model garch on CUDA: a warp per chunk of windows (the chunks of
// the CPU backend, kGarchChunk windows each, warm-started in order within a
// chunk), every lane running the same search (garch_model.hpp) on the same
// values. Each pass over a window is split between the lanes: lane l owns a
// contiguous run of points; the GARCH recursion, sequential in time, is a
// linear recurrence x_t = beta x_{t-1} + c_t, so each lane composes its run's
// affine map and a warp scan (Hillis and Steele 1986) gives every lane the
// state entering its run. Sums over points are lane partials in time order,
// then a butterfly over the lanes: the same bits in every lane (addition is
// commutative) and on every run (no atomics, a fixed order).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "garch_lanes.hpp"

namespace numpipe::mle {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr int kLanes = kGarchLanes;
constexpr int kWarpsPerBlock = 1;  // few warps (one per chunk of 64 windows): one per SM

__device__ __forceinline__ double warp_sum(double v) {
  for (int m = kLanes / 2; m > 0; m >>= 1) v += __shfl_xor_sync(kFullWarp, v, m);
  return v;
}

// Lane l's run is the affine map x -> A x + B[k] (for M recurrences sharing
// the coefficient A); returns in B the state entering the run (the composition
// of the runs of lanes 0 .. l-1). Lane 0's run holds t = 0, whose state is
// given (A = 0), so what lane 0 gets back is not used.
template <int M>
__device__ __forceinline__ void warp_state_before(double A, double (&B)[M], int lane) {
  for (int d = 1; d < kLanes; d <<= 1) {
    const double Ap = __shfl_up_sync(kFullWarp, A, d);
    double Bp[M];
    for (int k = 0; k < M; ++k) Bp[k] = __shfl_up_sync(kFullWarp, B[k], d);
    if (lane >= d) {
      for (int k = 0; k < M; ++k) B[k] = A * Bp[k] + B[k];
      A *= Ap;
    }
  }
  for (int k = 0; k < M; ++k) B[k] = __shfl_up_sync(kFullWarp, B[k], 1);
}

// A window as garch_model.hpp sees it, on the 32 lanes of a warp (all of
// which call every method together; garch_lanes.hpp's runs, scan and
// butterfly, which GarchLaneWindow emulates on the host). The host pass never
// calls it.
struct GarchWarpWindow {
  const double* r;
  std::int64_t n;
  int lane;
  std::int64_t t0, t1;  // this lane's points

  __device__ GarchWarpWindow(const double* r_, std::int64_t n_, int lane_) : r(r_), n(n_), lane(lane_) {
    garch_run_bounds(n, lane, &t0, &t1);
  }

  template <class F>
  NUMPIPE_HD double sum(F f) const {
#ifdef __CUDA_ARCH__
    double s = 0;
    for (std::int64_t t = t0; t < t1; ++t) s += f(r[t]);
    return warp_sum(s);
#else
    (void)f;
    return NAN;
#endif
  }

#ifdef __CUDA_ARCH__
  __device__ double variance_before(const double* par, double h0) const {
    double B[1];
    const double A = garch_run_variance_map(r, t0, t1, par, h0, &B[0]);
    warp_state_before(A, B, lane);
    return B[0];
  }
#endif

  // (out of line on the device: called from many places of the search)
  NUMPIPE_HD __noinline__ double loglik(const double* par, double* h_next) const {
#ifdef __CUDA_ARCH__
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, false);
    const StandardAepd z = standard_aepd(par[kSkew], par[kShape]);
    double h_end, e_end;
    const double ll =
        warp_sum(garch_run_loglik(r, t0, t1, par, ps.h0, variance_before(par, ps.h0), z, &h_end, &e_end));
    if (h_next) {  // from the lane that owns the last point
      const int last = garch_last_lane(n);
      const double h_last = __shfl_sync(kFullWarp, h_end, last), e_last = __shfl_sync(kFullWarp, e_end, last);
      *h_next = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], e_last, h_last);
    }
    return ll;
#else
    (void)par, (void)h_next;
    return NAN;
#endif
  }

  NUMPIPE_HD __noinline__ double loglik_gradient(const double* par, double* grad) const {
#ifdef __CUDA_ARCH__
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, true);
    // the AEPD's constants at the gradient's stencil: lane k computes point k
    // (five lgamma chains side by side instead of one after another)
    const StandardAepd mine = garch_aepd_stencil(par[kSkew], par[kShape], lane < kGarchStencil ? lane : 0);
    StandardAepd stencil[kGarchStencil];
    for (int k = 0; k < kGarchStencil; ++k) {
      stencil[k].theta = __shfl_sync(kFullWarp, mine.theta, k);
      stencil[k].s_l = __shfl_sync(kFullWarp, mine.s_l, k);
      stencil[k].s_r = __shfl_sync(kFullWarp, mine.s_r, k);
      stencil[k].log_norm = __shfl_sync(kFullWarp, mine.log_norm, k);
    }
    const double h_before = variance_before(par, ps.h0);
    double dh_before[4];
    const double A = garch_run_derivative_map(r, t0, t1, par, ps.h0, ps.dh0, h_before, dh_before);
    warp_state_before(A, dh_before, lane);
    GarchGradientSums s = garch_run_gradient(r, t0, t1, par, ps.h0, ps.dh0, h_before, dh_before, stencil[0]);
    s.ll = warp_sum(s.ll);
    for (int k = 0; k < 4; ++k) s.g[k] = warp_sum(s.g[k]);
    s.g_theta = warp_sum(s.g_theta);
    s.g_sl = warp_sum(s.g_sl);
    s.g_sr = warp_sum(s.g_sr);
    s.g_p = warp_sum(s.g_p);
    return garch_gradient_finish(s, par[kSkew], par[kShape], ps.nn, stencil, grad);
#else
    (void)par, (void)grad;
    return NAN;
#endif
  }
};

// Warp (series si, chunk c) fits the chunk's windows in order.
__global__ void garch_chunks_kernel(const double* x, std::int64_t series, std::int64_t length, std::int64_t window,
                                    std::int64_t step, std::int64_t windows, std::int64_t chunks, GarchOptions o,
                                    GarchFit* fits) {
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kLanes;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  if (warp >= series * chunks) return;  // the whole warp
  const std::int64_t si = warp / chunks, c = warp % chunks;
  const double* xs = x + si * length;
  auto make_window = [&](std::int64_t w) { return GarchWarpWindow(xs + w * step, window, lane); };
  garch_fit_chunk(make_window, c * kGarchChunk, std::min(windows, (c + 1) * kGarchChunk), o, fits + si * windows,
                  lane == 0);
}

}  // namespace

std::vector<GarchFit> fit_garch_cuda(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o,
                                     int device, double* kernel_seconds) {
  const std::int64_t n = o.window > 0 ? o.window : length;
  const std::int64_t W = (length - n) / o.step + 1;
  const std::int64_t chunks = (W + kGarchChunk - 1) / kGarchChunk;
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t points = static_cast<std::size_t>(series * length), count = static_cast<std::size_t>(series * W);
  DeviceArray<double> d_x(points);
  DeviceArray<GarchFit> d_fits(count);
  d_x.copy_from_host(x, points);
  // the fits' padding bytes too (compute-sanitizer's initcheck on the copy back)
  NUMPIPE_CUDA_CHECK(cudaMemsetAsync(d_fits.data(), 0, d_fits.bytes()));
  const std::int64_t warps = series * chunks;
  const int threads = kWarpsPerBlock * kLanes;
  const auto blocks = static_cast<unsigned>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock);
  CudaEventTimer timer;
  timer.start();
  garch_chunks_kernel<<<blocks, threads>>>(d_x.data(), series, length, n, o.step, W, chunks, o, d_fits.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  timer.stop();
  std::vector<GarchFit> fits(count);
  d_fits.copy_to_host(fits.data(), count);
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  if (kernel_seconds) *kernel_seconds = timer.seconds();
  return fits;
}

}  // namespace numpipe::mle
