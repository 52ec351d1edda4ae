// mle-fit --model garch on CUDA: a block of 256 threads per chunk of windows
// (the chunks of the CPU backend, kGarchChunk windows each, warm-started in
// order within a chunk), every thread running the same search
// (garch_model.hpp) on the same values. Each pass over a window is split
// between the threads: thread l owns a contiguous run of points (one or two
// for a 250-day window). The GARCH recursion, sequential in time, is a linear
// recurrence x_t = beta x_{t-1} + c_t, so each thread composes its run's
// affine map, and a warp scan (Hillis and Steele 1986) plus the warps' totals
// composed in warp order give every thread the state entering its run. Sums
// over points: thread partials in time order, a butterfly within each warp,
// then a fixed tree over the warps' sums: the same bits in every thread and on
// every run (no atomics, a fixed order). garch_lanes.hpp's GarchLaneWindow
// emulates this order on the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "detail/backends.hpp"
#include "garch_lanes.hpp"

namespace numpipe::mle {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr int kThreads = kGarchLanes;
constexpr int kWarpLanes = kGarchWarpLanes;
constexpr int kWarps = kGarchWarps;
constexpr int kBlockSums = 10;  // the gradient pass's sums (GarchGradientSums' fields)

// What the block's threads exchange in a pass.
struct GarchBlockShared {
  double warp_A[kWarps], warp_B[kWarps][4];  // the warps' composed maps
  double warp_sums[kWarps][kBlockSums];      // the warps' partial sums
  double moments[2 * kGarchShapeStencil][4];  // the shapes' moments at the gradient's stencil (p1's, p2's)
  double last[2];                            // sigma^2 and the residual at the window's last point
};

// The block's sums of K values, the same bits in every thread: a butterfly
// within each warp, then the warps' sums by a fixed pairwise tree (the
// butterfly over the warps, m = 1, 2, 4 in warp numbers). Every thread must
// call it (barriers inside).
template <int K>
__device__ __forceinline__ void block_sums(double (&v)[K], GarchBlockShared& sh) {
  const int lane = threadIdx.x % kWarpLanes, warp = threadIdx.x / kWarpLanes;
  for (int k = 0; k < K; ++k)
    for (int m = kWarpLanes / 2; m > 0; m >>= 1) v[k] += __shfl_xor_sync(kFullWarp, v[k], m);
  __syncthreads();  // the previous exchange's readers are done
  if (lane == 0)
    for (int k = 0; k < K; ++k) sh.warp_sums[warp][k] = v[k];
  __syncthreads();
  for (int k = 0; k < K; ++k) {
    double w[kWarps];
    for (int i = 0; i < kWarps; ++i) w[i] = sh.warp_sums[i][k];
    for (int m = 1; m < kWarps; m <<= 1)
      for (int i = 0; i < kWarps; i += 2 * m) w[i] = w[i] + w[i + m];
    v[k] = w[0];
  }
}

__device__ __forceinline__ double block_sum(double v, GarchBlockShared& sh) {
  double a[1] = {v};
  block_sums(a, sh);
  return a[0];
}

// Thread l's run is the affine map x -> A x + B[k] (for M recurrences sharing
// the coefficient A); returns in B the state entering the run (the runs of
// threads 0 .. l-1 composed). Thread 0's run holds t = 0, whose state is given
// (A = 0), so what thread 0 gets back is not used.
template <int M>
__device__ __forceinline__ void block_state_before(double A, double (&B)[M], GarchBlockShared& sh) {
  const int lane = threadIdx.x % kWarpLanes, warp = threadIdx.x / kWarpLanes;
  for (int d = 1; d < kWarpLanes; d <<= 1) {  // inclusive within the warp
    const double Ap = __shfl_up_sync(kFullWarp, A, d);
    double Bp[M];
    for (int k = 0; k < M; ++k) Bp[k] = __shfl_up_sync(kFullWarp, B[k], d);
    if (lane >= d) {
      for (int k = 0; k < M; ++k) B[k] = A * Bp[k] + B[k];
      A *= Ap;
    }
  }
  double A_ex = __shfl_up_sync(kFullWarp, A, 1), B_ex[M];  // exclusive within the warp
  for (int k = 0; k < M; ++k) B_ex[k] = __shfl_up_sync(kFullWarp, B[k], 1);
  if (lane == 0) {
    A_ex = 1;
    for (int k = 0; k < M; ++k) B_ex[k] = 0;
  }
  __syncthreads();  // the previous exchange's readers are done
  if (lane == kWarpLanes - 1) {
    sh.warp_A[warp] = A;
    for (int k = 0; k < M; ++k) sh.warp_B[warp][k] = B[k];
  }
  __syncthreads();
  for (int k = 0; k < M; ++k) {
    double state = 0;  // entering warp 0; thread 0's map ignores it (A = 0)
    for (int i = 0; i < warp; ++i) state = sh.warp_A[i] * state + sh.warp_B[i][k];
    B[k] = A_ex * state + B_ex[k];
  }
}

// A window as garch_model.hpp sees it, on the threads of a block (all of
// which call every method together; garch_lanes.hpp's runs, scan and sums).
// The host pass never calls it.
struct GarchBlockWindow {
  const double* r;
  std::int64_t n;
  GarchBlockShared* sh;
  std::int64_t t0, t1;  // this thread's points

  __device__ GarchBlockWindow(const double* r_, std::int64_t n_, GarchBlockShared* sh_) : r(r_), n(n_), sh(sh_) {
    garch_run_bounds(n, static_cast<int>(threadIdx.x), &t0, &t1);
  }

  template <class F>
  NUMPIPE_HD double sum(F f) const {
#ifdef __CUDA_ARCH__
    double s = 0;
    for (std::int64_t t = t0; t < t1; ++t) s += f(r[t]);
    return block_sum(s, *sh);
#else
    (void)f;
    return NAN;
#endif
  }

  template <class F, class G>
  NUMPIPE_HD void sum_pair(F f, G g, double* sf, double* sg) const {
#ifdef __CUDA_ARCH__
    double s[2] = {0, 0};
    for (std::int64_t t = t0; t < t1; ++t) {
      s[0] += f(r[t]);
      s[1] += g(r[t]);
    }
    block_sums(s, *sh);
    *sf = s[0];
    *sg = s[1];
#else
    (void)f, (void)g;
    *sf = *sg = NAN;
#endif
  }

#ifdef __CUDA_ARCH__
  __device__ double variance_before(const double* par, double h0) const {
    double B[1];
    const double A = garch_run_variance_map(r, t0, t1, par, h0, &B[0]);
    block_state_before(A, B, *sh);
    return B[0];
  }
#endif

  // (out of line on the device: called from many places of the search)
  NUMPIPE_HD __noinline__ double loglik(const double* par, double* h_next) const {
#ifdef __CUDA_ARCH__
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, false);
    const StandardAepd z = standard_aepd(par[kSkew], par[kShape], par[kShape2]);
    double h_end, e_end;
    const double run = garch_run_loglik(r, t0, t1, par, ps.h0, variance_before(par, ps.h0), z, &h_end, &e_end);
    if (static_cast<int>(threadIdx.x) == garch_last_lane(n)) {  // read after block_sum's barriers
      sh->last[0] = h_end;
      sh->last[1] = e_end;
    }
    const double ll = block_sum(run, *sh);
    if (h_next) *h_next = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], sh->last[1], sh->last[0]);
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
    const double h_before = variance_before(par, ps.h0);  // ends on a barrier: sh->moments is free
    // the shapes' moments at the gradient's stencil: thread k < 6 computes p1's
    // (k < 3) or p2's point k % 3 (six lgamma chains side by side); every thread
    // then combines them into the stencil's 7 standardised AEPDs
    if (threadIdx.x < 2 * kGarchShapeStencil) {
      const int k = static_cast<int>(threadIdx.x);
      const AepdShapeMoments mine =
          garch_shape_stencil(k < kGarchShapeStencil ? par[kShape] : par[kShape2], k % kGarchShapeStencil);
      double* out = sh->moments[k];
      out[0] = mine.p;
      out[1] = mine.m1;
      out[2] = mine.m2;
      out[3] = mine.g;
    }
    double dh_before[4];
    const double A = garch_run_derivative_map(r, t0, t1, par, ps.h0, ps.dh0, h_before, dh_before);
    block_state_before(A, dh_before, *sh);  // its barriers publish sh->moments too
    AepdShapeMoments moments[2 * kGarchShapeStencil];
    for (int k = 0; k < 2 * kGarchShapeStencil; ++k)
      moments[k] = {sh->moments[k][0], sh->moments[k][1], sh->moments[k][2], sh->moments[k][3]};
    StandardAepd stencil[kGarchStencil];
    for (int k = 0; k < kGarchStencil; ++k)
      stencil[k] = garch_aepd_stencil(par[kSkew], moments, moments + kGarchShapeStencil, k);
    GarchGradientSums s = garch_run_gradient(r, t0, t1, par, ps.h0, ps.dh0, h_before, dh_before, stencil[0]);
    double v[kBlockSums] = {s.ll, s.g[0], s.g[1], s.g[2], s.g[3], s.g_theta, s.g_sl, s.g_sr, s.g_p1, s.g_p2};
    block_sums(v, *sh);
    s.ll = v[0];
    for (int k = 0; k < 4; ++k) s.g[k] = v[1 + k];
    s.g_theta = v[5];
    s.g_sl = v[6];
    s.g_sr = v[7];
    s.g_p1 = v[8];
    s.g_p2 = v[9];
    return garch_gradient_finish(s, par, ps.nn, stencil, grad);
#else
    (void)par, (void)grad;
    return NAN;
#endif
  }
};

// Block (series si, chunk c) fits the chunk's windows in order.
__global__ void __launch_bounds__(kThreads, 1)
    garch_chunks_kernel(const double* x, std::int64_t series, std::int64_t length, std::int64_t window,
                        std::int64_t step, std::int64_t windows, std::int64_t chunks, GarchOptions o,
                        GarchFit* fits) {
  __shared__ GarchBlockShared sh;
  const std::int64_t block = blockIdx.x;
  if (block >= series * chunks) return;  // the whole block
  const std::int64_t si = block / chunks, c = block % chunks;
  const double* xs = x + si * length;
  auto make_window = [&](std::int64_t w) { return GarchBlockWindow(xs + w * step, window, &sh); };
  garch_fit_chunk(make_window, c * kGarchChunk, std::min(windows, (c + 1) * kGarchChunk), o, fits + si * windows,
                  threadIdx.x == 0);
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
  const auto blocks = static_cast<unsigned>(series * chunks);
  const int threads = kThreads;
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
