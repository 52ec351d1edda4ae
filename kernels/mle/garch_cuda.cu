// mle-fit --model garch on CUDA: a block of 5 warps per chunk of windows (the
// chunks of the CPU backend, kGarchChunk windows each, warm-started in order
// within a chunk). A search (garch_model.hpp) runs on one warp, every lane on
// the same values, each pass over a window split between the warp's 32 lanes:
// lane l owns a contiguous run of points (8 for a 250-day window).
// The GARCH recursion, sequential in time, is a linear recurrence
// x_t = beta x_{t-1} + c_t, so each lane composes its run's affine map and a
// warp scan (Hillis and Steele 1986) gives every lane the state entering its
// run. Sums over points: lane partials in time order, then a butterfly over
// the lanes: the same bits in every lane and on every run (no atomics, a fixed
// order). A pass needs no barrier, only shuffles, so the block's warps run
// different searches of a window at once (side_by_side, results through shared
// memory): the warm search on warp 0 while the others wait at the barrier, then
// the re-search's five starts a warp each. Several blocks share an SM: a
// search's passes wait on their own latency (one warp), and the warps of other
// chunks' searches fill the SM's issue slots meanwhile.
// garch_lanes.hpp's GarchLaneWindow emulates this order on the host.
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
constexpr int kLanes = kGarchLanes;
constexpr int kWarps = kGarchSearchWarps;
constexpr int kThreads = kWarps * kLanes;

// What the block's warps exchange: the results of the pieces they run side
// by side (one slot a piece).
struct GarchBlockShared {
  static constexpr int kSlotBytes = 384;  // a GarchStart: two runs, each with its gradient (GarchGradientAt)
  alignas(16) unsigned char slots[kWarps * kSlotBytes];
};

// Parameters by value into a kernel.
struct GarchGradientPassPar {
  double v[kGarchParams];
};

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kLanes; }
__device__ __forceinline__ int warp_id() { return static_cast<int>(threadIdx.x) / kLanes; }

// The warp's sums of K values, the same bits in every lane: a butterfly.
template <int K>
__device__ __forceinline__ void warp_sums(double (&v)[K]) {
  for (int m = kLanes / 2; m > 0; m >>= 1)
    for (int k = 0; k < K; ++k) v[k] += __shfl_xor_sync(kFullWarp, v[k], m);
}

// Lane l's run is the affine map x -> A x + B[k] (for M recurrences sharing
// the coefficient A); returns in B the state entering the run (the runs of
// lanes 0 .. l-1 composed). Lane 0's run holds t = 0, whose state is given
// (A = 0), so what lane 0 gets back (0) is not used.
template <int M>
__device__ __forceinline__ void warp_state_before(double A, double (&B)[M]) {
  const int lane = lane_id();
  for (int d = 1; d < kLanes; d <<= 1) {  // inclusive
    const double Ap = __shfl_up_sync(kFullWarp, A, d);
    double Bp[M];
    for (int k = 0; k < M; ++k) Bp[k] = __shfl_up_sync(kFullWarp, B[k], d);
    if (lane >= d) {
      for (int k = 0; k < M; ++k) B[k] = A * Bp[k] + B[k];
      A *= Ap;
    }
  }
  for (int k = 0; k < M; ++k) {  // exclusive
    const double before = __shfl_up_sync(kFullWarp, B[k], 1);
    B[k] = lane == 0 ? 0.0 : before;
  }
}

// The shapes' moments that lane `from` computed, in every lane.
__device__ __forceinline__ AepdShapeMoments shuffle_moments(const AepdShapeMoments& m, int from) {
  static_assert(sizeof(AepdShapeMoments) == 4 * sizeof(double), "shuffle every field of AepdShapeMoments");
  return {__shfl_sync(kFullWarp, m.p, from), __shfl_sync(kFullWarp, m.m1, from), __shfl_sync(kFullWarp, m.m2, from),
          __shfl_sync(kFullWarp, m.g, from)};
}
// Lane from's standardised AEPD, every field (the static_assert: a field
// added to StandardAepd must be shuffled too, else the lanes read it as 0).
__device__ __forceinline__ StandardAepd shuffle_aepd(const StandardAepd& z, int from) {
  static_assert(sizeof(StandardAepd) == 8 * sizeof(double), "shuffle every field of StandardAepd");
  StandardAepd out;
  out.theta = __shfl_sync(kFullWarp, z.theta, from);
  out.s_l = __shfl_sync(kFullWarp, z.s_l, from);
  out.s_r = __shfl_sync(kFullWarp, z.s_r, from);
  out.log_norm = __shfl_sync(kFullWarp, z.log_norm, from);
  out.p1 = __shfl_sync(kFullWarp, z.p1, from);
  out.p2 = __shfl_sync(kFullWarp, z.p2, from);
  out.inv_s_l = __shfl_sync(kFullWarp, z.inv_s_l, from);
  out.inv_s_r = __shfl_sync(kFullWarp, z.inv_s_r, from);
  return out;
}

// A window as garch_model.hpp sees it, on the lanes of a warp (all of which
// call every method together; garch_lanes.hpp's runs, scan and sums), and the
// block's warps for side_by_side. The host pass never calls it.
struct GarchWarpWindow {
  const double* r;
  std::int64_t n;
  GarchBlockShared* sh;
  std::int64_t t0, t1;  // this lane's points
  static constexpr bool kSearchAhead = true;

  __device__ GarchWarpWindow(const double* r_, std::int64_t n_, GarchBlockShared* sh_) : r(r_), n(n_), sh(sh_) {
    garch_run_bounds(n, lane_id(), &t0, &t1);
  }

  // out[j] = body(j): warp j % kWarps runs piece j; every thread of the block
  // calls it together (barriers inside) and gets every result.
  template <class Result, int N, class Body>
  NUMPIPE_HD void side_by_side(Result (&out)[N], const Body& body) const {
#ifdef __CUDA_ARCH__
    static_assert(sizeof(Result) <= GarchBlockShared::kSlotBytes, "a piece's result must fit its slot");
    auto* slots = reinterpret_cast<Result*>(sh->slots);
    for (int first = 0; first < N; first += kWarps) {
      __syncthreads();  // the previous exchange's readers are done
      const int j = first + warp_id();
      if (j < N) {
        const Result mine = body(j);
        if (lane_id() == 0) slots[j - first] = mine;
      }
      __syncthreads();
      for (int i = first; i < N && i < first + kWarps; ++i) out[i] = slots[i - first];
    }
#else
    (void)out, (void)body;
#endif
  }

  template <class F>
  NUMPIPE_HD double sum(F f) const {
#ifdef __CUDA_ARCH__
    double s[1] = {0};
    for (std::int64_t t = t0; t < t1; ++t) s[0] += f(r[t]);
    warp_sums(s);
    return s[0];
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
    warp_sums(s);
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
    warp_state_before(A, B);
    return B[0];
  }
#endif

  // (out of line on the device: called from many places of the search)
  NUMPIPE_HD __noinline__ double loglik(const double* par, double* h_next) const {
#ifdef __CUDA_ARCH__
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, false);
    // the shapes' moments: lane 3 i + j < 6 computes lgamma((j + 1) / p_i) (p_0 = p1,
    // p_1 = p2), lanes 0 and 1 p1's and p2's moments from them
    const int lane = lane_id(), i = std::min(lane / 3, 1), mine_i = std::min(lane, 1);
    const double lg = lgamma((lane % 3 + 1.0) / (i == 0 ? par[kShape] : par[kShape2]));
    const double lg1 = __shfl_sync(kFullWarp, lg, 3 * mine_i), lg2 = __shfl_sync(kFullWarp, lg, 3 * mine_i + 1),
                 lg3 = __shfl_sync(kFullWarp, lg, 3 * mine_i + 2);
    const AepdShapeMoments mine = aepd_shape_moments_from(mine_i == 0 ? par[kShape] : par[kShape2], lg1, lg2, lg3);
    const StandardAepd z = standard_aepd(par[kSkew], shuffle_moments(mine, 0), shuffle_moments(mine, 1));
    double h_end, e_end;
    const double run = garch_run_loglik(r, t0, t1, par, ps.h0, variance_before(par, ps.h0), z, &h_end, &e_end);
    const int last = garch_last_lane(n);
    h_end = __shfl_sync(kFullWarp, h_end, last);
    e_end = __shfl_sync(kFullWarp, e_end, last);
    double ll[1] = {run};
    warp_sums(ll);
    if (h_next) *h_next = garch_next_variance(par[kOmega], par[kAlpha], par[kBeta], e_end, h_end);
    return ll[0];
#else
    (void)par, (void)h_next;
    return NAN;
#endif
  }

  NUMPIPE_HD __noinline__ double loglik_gradient(const double* par, double* grad) const {
#ifdef __CUDA_ARCH__
    if (!garch_inside(par)) return NAN;
    const GarchPassStart ps = garch_pass_start(*this, par, true);
    // the shapes' moments at the gradient's stencil (garch_shape_stencil): lane
    // 3 k + j < 18 computes lgamma((j + 1) / p_k), p_k the shape at point k (k < 3:
    // p1's point k, else p2's point k - 3), lane k < 6 point k's moments from
    // them; lane k < 7 the stencil's standardised AEPD k from those; every lane
    // gets them all
    const int lane = lane_id(), k_lg = std::min(lane / 3, 2 * kGarchShapeStencil - 1);
    const int k_mine = std::min(lane, 2 * kGarchShapeStencil - 1);
    auto stencil_p = [par](int k) {
      return garch_shape_stencil_p(k < kGarchShapeStencil ? par[kShape] : par[kShape2], k % kGarchShapeStencil);
    };
    const double lg = lgamma((lane % 3 + 1.0) / stencil_p(k_lg));
    const double lg1 = __shfl_sync(kFullWarp, lg, 3 * k_mine), lg2 = __shfl_sync(kFullWarp, lg, 3 * k_mine + 1),
                 lg3 = __shfl_sync(kFullWarp, lg, 3 * k_mine + 2);
    const AepdShapeMoments mine = aepd_shape_moments_from(stencil_p(k_mine), lg1, lg2, lg3);
    const double h_before = variance_before(par, ps.h0);
    double dh_before[4];
    const double A = garch_run_derivative_map(r, t0, t1, par, ps.h0, ps.dh0, h_before, dh_before);
    warp_state_before(A, dh_before);
    AepdShapeMoments moments[2 * kGarchShapeStencil];
    for (int k = 0; k < 2 * kGarchShapeStencil; ++k) moments[k] = shuffle_moments(mine, k);
    const StandardAepd my_point =
        garch_aepd_stencil(par[kSkew], moments, moments + kGarchShapeStencil, std::min(lane, kGarchStencil - 1));
    StandardAepd stencil[kGarchStencil];
    for (int k = 0; k < kGarchStencil; ++k) stencil[k] = shuffle_aepd(my_point, k);
    GarchGradientSums s = garch_run_gradient(r, t0, t1, par, ps.h0, ps.dh0, h_before, dh_before, stencil[0]);
    double v[10] = {s.ll, s.g[0], s.g[1], s.g[2], s.g[3], s.g_theta, s.g_sl, s.g_sr, s.g_p1, s.g_p2};
    warp_sums(v);
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
  auto make_window = [&](std::int64_t w) { return GarchWarpWindow(xs + w * step, window, &sh); };
  garch_fit_chunk(make_window, c * kGarchChunk, std::min(windows, (c + 1) * kGarchChunk), o, fits + si * windows,
                  threadIdx.x == 0);
}

// One warp: `passes` passes one after another (gradient: the gradient's),
// each at parameters moved by the previous pass's result (a dependent chain,
// as in a search); *out: what they sum to (kept, so that none is dropped).
__global__ void __launch_bounds__(kLanes, 1)
    garch_pass_kernel(const double* r, std::int64_t n, GarchGradientPassPar par, int passes, bool gradient, double* out) {
  __shared__ GarchBlockShared sh;
  const GarchWarpWindow w(r, n, &sh);
  double q[kGarchParams], total = 0;
  for (int k = 0; k < kGarchParams; ++k) q[k] = par.v[k];
  for (int i = 0; i < passes; ++i) {
    double g[kGarchParams];
    const double ll = gradient ? w.loglik_gradient(q, g) : w.loglik(q, nullptr);
    total += ll;
    q[kMu] += 1e-30 * ll;
  }
  if (threadIdx.x == 0) *out = total;
}

}  // namespace

void garch_pass_seconds_cuda(const double* r, std::int64_t n, const double* par, int passes, int device,
                             double* loglik_seconds, double* gradient_seconds) {
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  DeviceArray<double> d_r(static_cast<std::size_t>(n)), d_out(1);
  d_r.copy_from_host(r, static_cast<std::size_t>(n));
  GarchGradientPassPar p{};
  for (int k = 0; k < kGarchParams; ++k) p.v[k] = par[k];
  for (int gradient = 0; gradient < 2; ++gradient) {
    garch_pass_kernel<<<1, kLanes>>>(d_r.data(), n, p, 1, gradient != 0, d_out.data());  // warm-up
    NUMPIPE_CUDA_CHECK_LAUNCH();
    CudaEventTimer timer;
    timer.start();
    garch_pass_kernel<<<1, kLanes>>>(d_r.data(), n, p, passes, gradient != 0, d_out.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
    timer.stop();
    NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
    (gradient ? *gradient_seconds : *loglik_seconds) = timer.seconds() / passes;
  }
}

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
