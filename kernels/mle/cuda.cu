// mle-fit, CUDA backend. Three kernels:
//   full_kernel     one block per (window, shape group, series): each thread owns
//                   candidates, sums their power terms over the window (one log
//                   per pair and group, the powers of a group from model.hpp's
//                   group_powers), then a block arg-min of S per shape.
//   rolling_kernel  one block per (chunk of `refresh` windows, shape group,
//                   series): thread t owns the candidate in ring slot t and keeps
//                   its sums in registers; a slide costs each thread two pairs
//                   (the leaving and the entering point) and one block barrier;
//                   a bounded single-precision approximation of S rules out the
//                   candidates that cannot win before S is computed exactly
//                   (see the comment above the kernel and prescreen.cuh).
//   finalize_kernel one thread per window: the best shape (model.hpp pick_shape)
//                   and X-, X+ of the chosen (theta, p).
// After the grid: estimate_kernel (--refine, --stderr: inference.hpp, a few
// lanes per window) and quantile_kernel (--quantiles: distribution.hpp, one
// thread per window and level).
// No floating-point atomics anywhere; every reduction has a fixed order.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "common/error.hpp"
#include "detail/backends.hpp"
#include "mle.hpp"
#include "model.hpp"
#include "prescreen.cuh"
#include "tuning.hpp"

namespace numpipe::mle {

namespace {

constexpr int kFullThreads = 256;

struct GridDev {
  const double* alpha;
  int A;
  bool uniform;
  double h;
};

// j1 beats j2 (relative indices into win; -1: no candidate).
__device__ __forceinline__ bool beats(double S1, int j1, double S2, int j2, const double* win) {
  if (j2 < 0) return j1 >= 0;
  if (j1 < 0) return false;
  return better_candidate(S1, win[j1], j1, S2, win[j2], j2);
}

// Block arg-min over candidates of cnt shapes; threads i < cnt of the block get
// the winner of shape i in (*outS, *outJ). Warp shuffles, then warps in order.
template <int G>
__device__ void block_argmin(double (&S)[G], int (&J)[G], int cnt, const double* win, double* sS, int* sJ,
                             double* outS, int* outJ) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int i = 0; i < G; ++i) {
    if (i >= cnt) break;
    double s = S[i];
    int j = J[i];
    for (int off = 16; off > 0; off >>= 1) {
      const double os = __shfl_down_sync(0xffffffffu, s, off);
      const int oj = __shfl_down_sync(0xffffffffu, j, off);
      if (beats(os, oj, s, j, win)) {
        s = os;
        j = oj;
      }
    }
    if (lane == 0) {
      sS[warp * G + i] = s;
      sJ[warp * G + i] = j;
    }
  }
  __syncthreads();
  if (threadIdx.x < cnt) {
    const int i = threadIdx.x;
    double s = sS[i];
    int j = sJ[i];
    for (int w = 1; w < nwarps; ++w)
      if (beats(sS[w * G + i], sJ[w * G + i], s, j, win)) {
        s = sS[w * G + i];
        j = sJ[w * G + i];
      }
    *outS = s;
    *outJ = j;
  }
  __syncthreads();
}


// One term |theta - x_k|^alpha of the group's shapes, added to the left sum
// (x_k < theta) or the right one; d == 0 gives log = -inf, so every power is 0.
__device__ __forceinline__ void add_term(double d, const GridDev& g, int g0, int cnt, double* am, double* ap,
                                         double* pw) {
  group_powers(log(fabs(d)), g.alpha, g0, cnt, g.uniform, g.h, pw);
  const bool left = d > 0;
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    am[i] += left ? pw[i] : 0.0;
    ap[i] += left ? 0.0 : pw[i];
  }
}
__global__ void __launch_bounds__(kFullThreads) full_kernel(const double* __restrict__ x, std::int64_t length, int n,
                                                            std::int64_t K, std::int64_t w_begin, std::int64_t nw,
                                                            GridDev g, double* bestS, int* bestJ) {
  __shared__ double sS[32 * kGroup];
  __shared__ int sJ[32 * kGroup];
  const std::int64_t wl = blockIdx.x, w = w_begin + wl;
  const int g0 = blockIdx.y * kGroup, cnt = min(kGroup, g.A - g0);
  const double* win = x + static_cast<std::int64_t>(blockIdx.z) * length + w * K;
  double myS[kGroup];
  int myJ[kGroup];
  double inv_p1[kGroup];
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    myS[i] = 0;
    myJ[i] = -1;
    inv_p1[i] = i < cnt ? 1.0 / (g.alpha[g0 + i] + 1.0) : 0.0;
  }
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const double th = win[j];
    double am[kGroup], ap[kGroup], pw[kGroup];
#pragma unroll
    for (int i = 0; i < kGroup; ++i) am[i] = ap[i] = 0;
    for (int k = 0; k < n; ++k) {
      add_term(th - __ldg(win + k), g, g0, cnt, am, ap, pw);
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      if (i < cnt) {
        const double S = scale_sum(am[i], ap[i], inv_p1[i]);
        if (beats(S, j, myS[i], myJ[i], win)) {
          myS[i] = S;
          myJ[i] = j;
        }
      }
    }
  }
  double oS = 0;
  int oJ = -1;
  block_argmin<kGroup>(myS, myJ, cnt, win, sS, sJ, &oS, &oJ);
  if (threadIdx.x < cnt) {
    const std::size_t o = (static_cast<std::size_t>(blockIdx.z) * nw + wl) * g.A + g0 + threadIdx.x;
    bestS[o] = oS;
    bestJ[o] = oJ;
  }
}

// Few windows (the seed's case: one): a warp per candidate, its lanes splitting
// the window's points, so that the whole GPU works on one window. Each block
// covers 8 candidates and writes its best per shape; merge_kernel picks the
// best over the blocks in their order.
__global__ void __launch_bounds__(256) split_kernel(const double* __restrict__ x, std::int64_t length, int n,
                                                    std::int64_t K, std::int64_t w_begin, std::int64_t nw, int ncb,
                                                    GridDev g, double* partS, int* partJ) {
  __shared__ double sS[32 * kGroup];
  __shared__ int sJ[32 * kGroup];
  const std::int64_t wl = blockIdx.x / ncb;
  const int cb = static_cast<int>(blockIdx.x % ncb);
  const int g0 = blockIdx.y * kGroup, cnt = min(kGroup, g.A - g0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const double* win = x + static_cast<std::int64_t>(blockIdx.z) * length + (w_begin + wl) * K;
  const int j = cb * 8 + warp;
  double myS[kGroup];
  int myJ[kGroup];
  double am[kGroup], ap[kGroup], pw[kGroup];
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    am[i] = ap[i] = 0;
    myS[i] = 0;
    myJ[i] = -1;
  }
  if (j < n) {
    const double th = win[j];
    for (int k = lane; k < n; k += 32) {
      add_term(th - __ldg(win + k), g, g0, cnt, am, ap, pw);
    }
  }
#pragma unroll
  for (int i = 0; i < kGroup; ++i)
    for (int off = 16; off > 0; off >>= 1) {
      am[i] += __shfl_down_sync(0xffffffffu, am[i], off);
      ap[i] += __shfl_down_sync(0xffffffffu, ap[i], off);
    }
  if (lane == 0 && j < n) {
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      if (i < cnt) {
        myS[i] = scale_sum(am[i], ap[i], 1.0 / (g.alpha[g0 + i] + 1.0));
        myJ[i] = j;
      }
    }
  }
  double oS = 0;
  int oJ = -1;
  block_argmin<kGroup>(myS, myJ, cnt, win, sS, sJ, &oS, &oJ);
  if (threadIdx.x < cnt) {
    const std::size_t o = ((static_cast<std::size_t>(blockIdx.z) * nw + wl) * ncb + cb) * g.A + g0 + threadIdx.x;
    partS[o] = oS;
    partJ[o] = oJ;
  }
}

__global__ void merge_kernel(const double* __restrict__ x, std::int64_t length, std::int64_t K, std::int64_t w_begin,
                             std::int64_t nw, int nseries, int ncb, int A, const double* partS, const int* partJ,
                             double* bestS, int* bestJ) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= nw * nseries * A) return;
  const std::int64_t item = idx / A, a = idx % A, si = item / nw, w = w_begin + item % nw;
  const double* win = x + si * length + w * K;
  double s = 0;
  int j = -1;
  for (int cb = 0; cb < ncb; ++cb) {
    const std::size_t o = (static_cast<std::size_t>(item) * ncb + cb) * A + a;
    if (beats(partS[o], partJ[o], s, j, win)) {
      s = partS[o];
      j = partJ[o];
    }
  }
  bestS[idx] = s;
  bestJ[idx] = j;
}

// ---- rolling fits -------------------------------------------------------------
// One block per (chunk of `refresh` windows, group of G shapes, series); thread t
// owns the candidate in ring slot t (time index j with j % n == t) and keeps its
// sums in registers (compensation terms in dynamic shared memory; the error of
// each addition from TwoSum, the same bits as model.hpp's Neumaier branch).
// No branch on a lane's side of a point (selects), one block barrier per slide:
//   A  every thread subtracts the leaving point's term and adds the entering
//      point's (one log for each, the G powers from group_powers); the entering
//      candidate's 2G sums are the block sum of the entering terms: a warp
//      reduce-scatter (each value's pairing is the same tree as a shuffle-down
//      reduction, so the bits are too), warp partials into red[], then barrier;
//   C  the owner's warp adds the partials in warp order and hands them to the
//      owner thread, which takes the entering point as its candidate;
//   B  after a window's last slide each warp finds its best candidate per shape:
//      an approximate S (prescreen.cuh) rules out every candidate that cannot
//      win, the survivors (about one per shape) are evaluated exactly, two lanes
//      per candidate (X- and X+), and the warp's best per shape goes to wb[];
//   M  after the next barrier one warp merges the warps' bests of the previous
//      window in warp order and writes them (wb[] is double-buffered by window).
// Every reduction has a fixed order and the argmin is over a total order, so the
// result is the same bits on every run and, since the prescreen only leaves out
// candidates that provably lose, the same as evaluating every S exactly
// (NUMPIPE_MLE_PRESCREEN=0 does that, for tests). An earlier variant computed
// the survivors' exact S during the next slide, interleaved with its pairs:
// 1.7% slower on the H100 (0.673 against 0.662 us per window), not kept.

// j1 beats j2 (model.hpp better_candidate), reading theta only on a tie of S.
__device__ __forceinline__ bool beats_lazy(double S1, int j1, double S2, int j2, const double* win) {
  if (j2 < 0) return j1 >= 0;
  if (j1 < 0) return false;
  if (S1 != S2) {
    if (S2 != S2) return S1 == S1;
    if (S1 != S1) return false;
    return S1 < S2;
  }
  const double t1 = win[j1], t2 = win[j2];
  if (t1 != t2) return t1 < t2;
  return j1 < j2;
}

// One halving step of the reduce-scatter: C values in, C/2 out; the lanes with
// bit `off` set keep the upper half. keep + partner's value: the same sum, bit
// for bit, as the shuffle-down tree's (addition commutes).
template <int C>
__device__ __forceinline__ void halve(double* v, int off, int lane) {
  const bool up = (lane & off) != 0;
#pragma unroll
  for (int k = 0; k < C / 2; ++k) {
    const double send = up ? v[k] : v[k + C / 2];
    const double keep = up ? v[k + C / 2] : v[k];
    v[k] = keep + __shfl_xor_sync(0xffffffffu, send, off);
  }
}

// The warps' bests of one window (wbS/wbJ: [warp][G]) merged in warp order; lanes
// i < cnt write shape i's winner. Lane = i + G*group: each lane scans warps
// group, group + 32/G, ...; then a shuffle merge over the groups.
template <int G>
__device__ __forceinline__ void merge_warps(const double* wbS, const int* wbJ, int nwarps, int cnt, int lane,
                                            const double* win, double* bestS, int* bestJ, std::size_t o) {
  const int i = lane & (G - 1);
  double s = 0;
  int j = -1;
  for (int v = lane / G; v < nwarps; v += 32 / G) {
    const double S2 = wbS[v * G + i];
    const int J2 = wbJ[v * G + i];
    if (beats_lazy(S2, J2, s, j, win)) {
      s = S2;
      j = J2;
    }
  }
#pragma unroll
  for (int off = G; off < 32; off <<= 1) {
    const double os = __shfl_xor_sync(0xffffffffu, s, off);
    const int oj = __shfl_xor_sync(0xffffffffu, j, off);
    if (beats_lazy(os, oj, s, j, win)) {
      s = os;
      j = oj;
    }
  }
  if (lane < cnt) {
    bestS[o + i] = s;
    bestJ[o + i] = j;
  }
}

// model.hpp's comp_add, with the rounding error of s + v from Knuth's TwoSum
// (six additions) instead of Neumaier's comparison and branch: both give that
// error exactly, so the sums are the same bits, with fewer instructions.
__device__ __forceinline__ void comp_add_2sum(double& s, double& c, double v) {
  const double t = s + v;
  const double bp = t - s;
  c += (s - (t - bp)) + (v - bp);
  s = t;
}

// Adds pw[i] (Neg: -pw[i]) to a candidate's left sums (left) or right sums
// (!left), compensated; nothing when !any; Zero and zero: the side becomes
// exactly 0 (its last point left). Selects rather than branches, so that a
// warp whose lanes fall on both sides does the additions once.
template <int G, bool Neg, bool Zero>
__device__ __forceinline__ void side_add(bool left, bool any, bool zero, double* sm, double* sp, double* cm, double* cp,
                                         int bd, int tid, const double* pw) {
#pragma unroll
  for (int i = 0; i < G; ++i) {
    double* cptr = (left ? cm : cp) + i * bd + tid;
    double v = left ? sm[i] : sp[i];
    double c = *cptr;
    comp_add_2sum(v, c, Neg ? -pw[i] : pw[i]);
    if (any) {
      *cptr = c;
      sm[i] = left ? v : sm[i];
      sp[i] = left ? sp[i] : v;
    }
  }
  if (Zero && zero) {  // rare
#pragma unroll
    for (int i = 0; i < G; ++i) {
      (left ? cm : cp)[i * bd + tid] = 0;
      sm[i] = left ? 0.0 : sm[i];
      sp[i] = left ? sp[i] : 0.0;
    }
  }
}

// Dynamic shared memory: 2*G corrections per thread.
template <int G, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads, (G == 4 && MaxThreads == 512) ? 2 : 1)
    rolling_kernel(const double* __restrict__ x, std::int64_t length, int n, std::int64_t K, std::int64_t R,
                   std::int64_t W, std::int64_t c_begin, std::int64_t w_begin, std::int64_t nw, GridDev g,
                   bool prescreen, double* bestS, int* bestJ) {
  static_assert(G == 4 || G == 8, "shape groups of 4 or 8");
  constexpr int MaxW = MaxThreads / 32;
  constexpr int kPer = 16;  // exact evaluations per round of B: two lanes each
  extern __shared__ double corr[];  // [2*G][blockDim.x]
  __shared__ double red[2][MaxW * 2 * G];
  __shared__ int cntL[2][MaxW], cntH[2][MaxW];
  __shared__ double wbS[2][MaxW * G];
  __shared__ int wbJ[2][MaxW * G];
  __shared__ double2 stX[MaxW][kPer];
  __shared__ double stS[MaxW][kPer];
  __shared__ int stJ[MaxW][kPer];
  __shared__ double sInv[G];
  __shared__ RootConst sRC[G];
  const int tid = threadIdx.x, bd = blockDim.x, lane = tid & 31, warp = tid >> 5, nwarps = (bd + 31) >> 5;
  const bool active = tid < n;
  const std::int64_t c = c_begin + blockIdx.x;
  const std::int64_t w0 = c * R, w1 = min(W, w0 + R);
  const int g0 = blockIdx.y * G, cnt = min(G, g.A - g0);
  const double* xs = x + static_cast<std::int64_t>(blockIdx.z) * length;
  const std::size_t obase = static_cast<std::size_t>(blockIdx.z) * nw;
  // !prescreen: an infinite slack keeps every candidate (every S exact)
  const float slack = prescreen ? kSlack : __int_as_float(0x7f800000);
  if (tid < G) {
    const double inv = tid < cnt ? 1.0 / (g.alpha[g0 + tid] + 1.0) : 0.0;  // model.hpp's q, same bits
    sInv[tid] = inv;
    sRC[tid] = root_const(tid < cnt ? inv : 1.0);
  }
  double* cm = corr;           // corrections of X-: cm[i*bd + tid]
  double* cp = corr + G * bd;  // corrections of X+
  double sm[G], sp[G];
  int nleft = 0, nright = 0;
  // the candidate of slot tid in the first window: time index j with j % n == tid
  const std::int64_t t0 = w0 * K;
  std::int64_t myj = t0 + ((tid - t0 % n) % n + n) % n;
#pragma unroll
  for (int i = 0; i < G; ++i) {
    sm[i] = sp[i] = 0;
    cm[i * bd + tid] = 0;
    cp[i * bd + tid] = 0;
  }
  if (active) {  // full, compensated sums over the first window
    double pw[G];
    const double th = xs[myj];
    for (std::int64_t k = t0; k < t0 + n; ++k) {
      const double d = th - __ldg(xs + k);
      if (d == 0) continue;
      group_powers<G>(log(fabs(d)), g.alpha, g0, cnt, g.uniform, g.h, pw);
      nleft += d > 0;
      nright += d < 0;
      side_add<G, false, false>(d > 0, true, false, sm, sp, cm, cp, bd, tid, pw);
    }
  }
  __syncthreads();  // sInv, sRC
  int sb = 0;       // red[] buffer of this slide
  for (std::int64_t w = w0; w < w1; ++w) {
    for (std::int64_t tl = (w - 1) * K; w > w0 && tl < w * K; ++tl) {
      // ---- A: the slide tl -> te = tl + n
      const std::int64_t te = tl + n;
      const int owner = static_cast<int>(tl % n);
      const double xe = xs[te];
      bool lower = false, higher = false;
      double pe[G];
#pragma unroll
      for (int i = 0; i < G; ++i) pe[i] = 0;
      if (active && tid != owner) {
        const double xj = xs[myj];
        const double dl = xj - xs[tl], de = xj - xe;
        // both pairs' powers unconditionally (d = 0: log -inf, powers 0, unused), so
        // that a warp whose lanes fall on both sides computes them once
        double pl[G];
        group_powers<G>(log(fabs(dl)), g.alpha, g0, cnt, g.uniform, g.h, pl);
        group_powers<G>(log(fabs(de)), g.alpha, g0, cnt, g.uniform, g.h, pe);
        // the leaving point: its term off the side it was on; a side whose last
        // point leaves is set to exactly 0
        nleft -= dl > 0;
        nright -= dl < 0;
        side_add<G, true, true>(dl > 0, dl != 0, (dl > 0 && nleft == 0) || (dl < 0 && nright == 0), sm, sp, cm, cp, bd,
                                tid, pl);
        // the entering point lies left of candidate j (de > 0): j lies right of it
        higher = de > 0;
        lower = de < 0;
        nleft += higher;
        nright += lower;
        side_add<G, false, false>(de > 0, de != 0, false, sm, sp, cm, cp, bd, tid, pe);
      }
      {  // reduce-scatter of the 2G entering sums: [0, G) X-, [G, 2G) X+
        double v[G];
        const bool up = (lane & 16) != 0;
#pragma unroll
        for (int k = 0; k < G; ++k) {
          const double keep = (up ? higher : lower) ? pe[k] : 0.0;
          const double send = (up ? lower : higher) ? pe[k] : 0.0;
          v[k] = keep + __shfl_xor_sync(0xffffffffu, send, 16);
        }
        if constexpr (G == 8) {
          halve<8>(v, 8, lane);
          halve<4>(v, 4, lane);
          halve<2>(v, 2, lane);
          v[0] += __shfl_xor_sync(0xffffffffu, v[0], 1);
          if ((lane & 1) == 0) red[sb][warp * 2 * G + (lane >> 1)] = v[0];
        } else {
          halve<4>(v, 8, lane);
          halve<2>(v, 4, lane);
          v[0] += __shfl_xor_sync(0xffffffffu, v[0], 2);
          v[0] += __shfl_xor_sync(0xffffffffu, v[0], 1);
          if ((lane & 3) == 0) red[sb][warp * 2 * G + (lane >> 2)] = v[0];
        }
        const unsigned bl = __ballot_sync(0xffffffffu, lower), bh = __ballot_sync(0xffffffffu, higher);
        if (lane == 0) {
          cntL[sb][warp] = __popc(bl);
          cntH[sb][warp] = __popc(bh);
        }
      }
      __syncthreads();
      const int ow = owner >> 5;
      // ---- M: the previous window's merge, by a warp other than the owner's
      if (tl == (w - 1) * K && warp == (ow + nwarps / 2) % nwarps) {
        const int pb = static_cast<int>((w - 1 - w0) & 1);
        merge_warps<G>(wbS[pb], wbJ[pb], nwarps, cnt, lane, xs + (w - 1) * K, bestS, bestJ,
                       (obase + (w - 1 - w_begin)) * g.A + g0);
      }
      // ---- C: the entering candidate's sums, in warp order, to the owner
      if (warp == ow) {
        double s = 0;
        if (lane < 2 * G)
          for (int v = 0; v < nwarps; ++v) s += red[sb][v * 2 * G + lane];
        const unsigned l = __reduce_add_sync(0xffffffffu, lane < nwarps ? static_cast<unsigned>(cntL[sb][lane]) : 0u);
        const unsigned h = __reduce_add_sync(0xffffffffu, lane < nwarps ? static_cast<unsigned>(cntH[sb][lane]) : 0u);
        const bool me = lane == (owner & 31);
#pragma unroll
        for (int i = 0; i < G; ++i) {
          const double a = __shfl_sync(0xffffffffu, s, i), b = __shfl_sync(0xffffffffu, s, G + i);
          if (me) {
            sm[i] = a;
            sp[i] = b;
            cm[i * bd + tid] = 0;
            cp[i * bd + tid] = 0;
          }
        }
        if (me) {
          nleft = static_cast<int>(l);
          nright = static_cast<int>(h);
          myj = te;
        }
      }
      sb ^= 1;
    }
    // ---- B: this warp's best candidate per shape in window w
    const std::int64_t tw = w * K;
    const double* win = xs + tw;
    const int jrel = active ? static_cast<int>(myj - tw) : -1;
    unsigned mask[G];
#pragma unroll
    for (int i = 0; i < G; ++i) {
      bool surv = false;
      if (i < cnt) {
        // every lane (a lane without a candidate has sums 0), no branch
        const RootConst rc = sRC[i];
        float a, b;
        const bool ok = approx_root(sm[i] + cm[i * bd + tid], rc, &a) & approx_root(sp[i] + cp[i * bd + tid], rc, &b);
        const float sf = a + b;
        const unsigned key = active && ok ? __float_as_uint(sf) : 0xffffffffu;
        // the warp's smallest approximate S times the slack (NaN: none; +inf: no prescreen)
        const float thr = __fmul_ru(__uint_as_float(__reduce_min_sync(0xffffffffu, key)), slack);
        surv = active && !(ok && sf > thr);
      }
      mask[i] = __ballot_sync(0xffffffffu, surv);
    }
    int off[G + 1];
    off[0] = 0;
#pragma unroll
    for (int i = 0; i < G; ++i) off[i + 1] = off[i] + __popc(mask[i]);
    const int total = off[G];
    const unsigned below = (1u << lane) - 1u;
    int mine_lo = 0, mine_hi = 0;  // lane i < G: shape i's entries
#pragma unroll
    for (int i = 0; i < G; ++i)
      if (lane == i) {
        mine_lo = off[i];
        mine_hi = off[i + 1];
      }
    double bS = 0;
    int bJ = -1;
    for (int base = 0; base < total; base += kPer) {
      // the survivors, shape by shape, lane by lane; entries [base, base + kPer)
#pragma unroll
      for (int i = 0; i < G; ++i) {
        if ((mask[i] >> lane) & 1u) {
          const int pos = off[i] + __popc(mask[i] & below) - base;
          if (pos >= 0 && pos < kPer) {
            stX[warp][pos] = make_double2(sm[i] + cm[i * bd + tid], sp[i] + cp[i * bd + tid]);
            stJ[warp][pos] = jrel;
          }
        }
      }
      __syncwarp();
      const int e = base + (lane >> 1);
      double r = 0;
      if (e < total) {
        int sh = 0;
#pragma unroll
        for (int i = 1; i < G; ++i)
          if (e >= off[i]) sh = i;
        const double2 X = stX[warp][lane >> 1];
        r = root_p1((lane & 1) ? X.y : X.x, sInv[sh]);
      }
      const double r2 = __shfl_xor_sync(0xffffffffu, r, 1);
      if (e < total && (lane & 1) == 0) stS[warp][lane >> 1] = r + r2;  // scale_sum: A + B
      __syncwarp();
      const int lo = max(mine_lo, base), hi = min(mine_hi, base + kPer);
      for (int k = lo; k < hi; ++k) {
        const double S = stS[warp][k - base];
        const int j = stJ[warp][k - base];
        if (beats_lazy(S, j, bS, bJ, win)) {
          bS = S;
          bJ = j;
        }
      }
      __syncwarp();
    }
    if (lane < G) {
      const int wbuf = static_cast<int>((w - w0) & 1);
      wbS[wbuf][warp * G + lane] = bS;
      wbJ[wbuf][warp * G + lane] = bJ;
    }
  }
  // the last window's merge
  __syncthreads();
  if (warp == 0)
    merge_warps<G>(wbS[(w1 - 1 - w0) & 1], wbJ[(w1 - 1 - w0) & 1], nwarps, cnt, lane, xs + (w1 - 1) * K, bestS, bestJ,
                   (obase + (w1 - 1 - w_begin)) * g.A + g0);
}

__global__ void finalize_kernel(const double* __restrict__ x, std::int64_t length, int n, std::int64_t K,
                                std::int64_t w_begin, std::int64_t nw, int nseries, GridDev g,
                                const double* bestS, const int* bestJ, int* o_shape, std::int64_t* o_index,
                                double* o_xm, double* o_xp, double* o_S, double* o_ll) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= nw * nseries) return;
  const std::int64_t si = idx / nw, w = w_begin + idx % nw;
  const double* S = bestS + idx * g.A;
  double ll = 0;
  const int a = pick_shape(S, g.alpha, g.A, static_cast<double>(n), &ll);
  const int jrel = bestJ[idx * g.A + a];
  const double* win = x + si * length + w * K;
  const double th = win[jrel], p = g.alpha[a];
  double xm = 0, cxm = 0, xp = 0, cxp = 0;
  for (int k = 0; k < n; ++k) {
    const double d = th - win[k];
    if (d > 0) comp_add(xm, cxm, exp(p * log(d)));
    else if (d < 0) comp_add(xp, cxp, exp(p * log(-d)));
  }
  o_shape[idx] = a;
  o_index[idx] = w * K + jrel;
  o_xm[idx] = xm + cxm;
  o_xp[idx] = xp + cxp;
  o_S[idx] = S[a];
  o_ll[idx] = ll;
}

// What the estimate kernel makes each window's WindowTask from (post.cpp
// make_task on the host, the same values): the grid's candidate (a time index
// in its series) and shapes, and the grid.
struct TaskSource {
  const std::int64_t* index;
  const int *shape, *shape2;  // shape2: nullptr with one shape
  const double* alpha;
  int A;
  double p_min, p_max;
  bool refine, inform;
};
__device__ WindowTask make_task_device(const TaskSource& src, const double* series, std::int64_t i) {
  auto box = [&](int a, double& v, double& lo, double& hi) {
    v = src.alpha[a];
    lo = src.alpha[a - 1 > 0 ? a - 1 : 0];
    hi = src.alpha[a + 1 < src.A - 1 ? a + 1 : src.A - 1];
  };
  WindowTask t;
  t.theta0 = series[src.index[i]];
  box(src.shape[i], t.p1, t.p1_lo, t.p1_hi);
  t.p_min = src.p_min;
  t.p_max = src.p_max;
  t.two_shapes = src.shape2 != nullptr;
  if (t.two_shapes) {
    box(src.shape2[i], t.p2, t.p2_lo, t.p2_hi);
  } else {
    t.p2 = t.p1;
    t.p2_lo = t.p1_lo;
    t.p2_hi = t.p1_hi;
  }
  t.refine = src.refine || src.inform;
  t.inform = src.inform;
  return t;
}

// `lanes` consecutive threads per window (g_estimate_lanes, a power of two up
// to 32): inference.hpp's estimate_window (refine, observed information,
// theta's interval), the code the CPU runs. The lanes split each pass over
// the window's points and combine their sums by a butterfly of shuffles
// (window_sums), so all of them hold the same values and take the same path
// through the searches; lane 0 writes the result. With one lane per window the
// threads of a warp take 32 windows, whose searches branch apart (the estimate
// of one window of 500 points makes about 45 passes, and their sequence
// differs from window to window); with more, a warp's lanes follow fewer
// windows, each pass is shorter, and the searches' scalar work is repeated
// by every lane.
__global__ void estimate_kernel(const double* __restrict__ x, std::int64_t length, std::int64_t n, std::int64_t K,
                                std::int64_t W, std::int64_t first, std::int64_t count, int lanes, TaskSource src,
                                WindowEstimate* out) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t i = t / lanes;  // a window's lanes leave together
  if (i >= count) return;
  const std::int64_t g = first + i, si = g / W, w = g % W;
  const double* series = x + si * length;
  const WindowEstimate e = estimate_window(series + w * K, n, make_task_device(src, series, i));
  if ((threadIdx.x & (lanes - 1)) == 0) out[i] = e;
}

// The estimates of window i for the quantiles: theta, p1, p2, s_l, s_r.
struct EstimateColumns {  // est[k * count + i]
  const double* est;
  std::int64_t count;
  __device__ void get(std::int64_t i, double* v) const {
    for (int k = 0; k < 5; ++k) v[k] = est[k * count + i];
  }
};
struct EstimateRecords {  // estimate_kernel's output
  const WindowEstimate* est;
  __device__ void get(std::int64_t i, double* v) const {
    const WindowEstimate& e = est[i];
    v[0] = e.theta;
    v[1] = e.p1;
    v[2] = e.p2;
    v[3] = e.s_l;
    v[4] = e.s_r;
  }
};

// One thread per (window, level): the AEPD's quantile (distribution.hpp).
template <class Source>
__global__ void quantile_kernel(Source src, std::int64_t count, const double* __restrict__ levels, int L, double* out) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= count * L) return;
  const std::int64_t i = t / L;
  const int q = static_cast<int>(t % L);
  double v[5];
  src.get(i, v);
  out[t] = aepd_quantile2(levels[q], v[0], v[1], v[2], v[3], v[4]);
}

// Independent exp() chains, so that throughput, not latency, is measured.
__global__ void exp_rate_kernel(double* out, int iters) {
  double a = 1e-3 * (threadIdx.x + 1), b = a * 0.5, c = a * 0.25, d = a * 0.125, acc = 0;
  for (int i = 0; i < iters; ++i) {
    a = exp(a) * 1e-3;
    b = exp(b) * 1e-3;
    c = exp(c) * 1e-3;
    d = exp(d) * 1e-3;
    acc += a + b + c + d;
  }
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = acc;
}

struct Part {
  std::int64_t s_begin, s_count, c_begin, c_count;
};


bool cuda_rolling(const Params& p) { return !p.exact && 2 * p.step < p.window && p.window <= 1024; }

// given: the parts to solve (a task range's), part k on devices[k % devices], one
// after another; out holds windows from `base` on. Else: series or chunks split
// over the devices, concurrently, out holds every window.
void solve_parts(const Series& s, const Params& p, const std::vector<int>& devices, const std::vector<Part>* given,
                 std::int64_t base, WindowFits& out, CudaTiming* timing) {
  validate(s, p);
  const std::int64_t W = window_count(s, p), n = p.window, K = p.step, A = static_cast<std::int64_t>(p.grid.alpha.size());
  if (!given) out.resize(static_cast<std::size_t>(s.series * W));
  const bool rolling = cuda_rolling(p);
  const std::int64_t R = rolling ? p.refresh : 1, chunks = (W + R - 1) / R;
  const std::int64_t groups = (A + kGroup - 1) / kGroup;
  // Shapes per rolling block: 8 (the default), or 4 (fewer registers, twice the blocks);
  // NUMPIPE_MLE_GROUP=4|8 chooses (tuning.hpp; a tuning knob for bench/mle).
  // NUMPIPE_MLE_PRESCREEN=0: every candidate's S exactly (for checking that the
  // prescreen changes no bit; slower).
  const Tuning tuning = tuning_from_environment();
  const int rgroup = tuning.group;
  const bool prescreen = tuning.prescreen;
  if (W >= (std::int64_t{1} << 31)) fail_input("too many windows for the CUDA backend: " + std::to_string(W));
  if (groups > 65535) fail_input("--alpha-grid: too many shapes for the CUDA backend: " + std::to_string(A));
  // Split series over devices when there are enough, else chunks of windows.
  const std::int64_t nd = static_cast<std::int64_t>(devices.size());
  if (nd < 1) fail_resource("no CUDA device to run on");
  std::vector<Part> parts;
  if (given) {
    parts = *given;
  } else if (s.series >= nd) {
    for (std::int64_t d = 0; d < nd; ++d) {
      const std::int64_t b = s.series * d / nd, e = s.series * (d + 1) / nd;
      parts.push_back({b, e - b, 0, chunks});
    }
  } else {
    for (std::int64_t d = 0; d < nd; ++d) {
      const std::int64_t b = chunks * d / nd, e = chunks * (d + 1) / nd;
      parts.push_back({0, s.series, b, e - b});
    }
  }
  std::vector<double> kernel_s(parts.size(), 0.0);
  std::vector<std::exception_ptr> errors(parts.size());
  // one host thread per device
  auto run_part = [&](std::size_t pi) {
    try {
      const Part part = parts[pi];
      if (part.s_count == 0 || part.c_count == 0) return;
      const int dev = devices[pi % devices.size()];
      NUMPIPE_CUDA_CHECK(cudaSetDevice(dev));
      const std::int64_t wb = part.c_begin * R, we = std::min(W, (part.c_begin + part.c_count) * R), nw = we - wb;
      DeviceArray<double> d_alpha(static_cast<std::size_t>(A));
      d_alpha.copy_from_host(p.grid.alpha.data(), static_cast<std::size_t>(A));
      GridDev g{d_alpha.data(), static_cast<int>(A), p.grid.uniform, p.grid.h};
      int sms = 0;
      NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      // series per batch: the per-shape results take 12 bytes per window and shape
      const std::int64_t per_series = nw * A * 12;
      const std::int64_t sb = std::max<std::int64_t>(1, std::min<std::int64_t>({part.s_count, 65535, (std::int64_t{3} << 30) / per_series}));
      DeviceArray<double> d_x(static_cast<std::size_t>(sb * s.length));
      DeviceArray<double> d_bestS(static_cast<std::size_t>(sb * nw * A));
      DeviceArray<int> d_bestJ(static_cast<std::size_t>(sb * nw * A));
      const std::size_t ow = static_cast<std::size_t>(sb * nw);
      DeviceArray<int> d_shape(ow);
      DeviceArray<std::int64_t> d_index(ow);
      DeviceArray<double> d_xm(ow), d_xp(ow), d_S(ow), d_ll(ow);
      std::vector<int> h_shape(ow);
      int threads = 0;
      std::size_t smem = 0;
      const std::int64_t rgroups = (A + rgroup - 1) / rgroup;
      if (rolling) {
        threads = static_cast<int>((n + 31) / 32 * 32);
        smem = static_cast<std::size_t>(2 * rgroup * threads) * sizeof(double);
        const int sm = static_cast<int>(smem);
        if (rgroup == 4 && threads <= 512)
          NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(rolling_kernel<4, 512>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
        else if (rgroup == 4)
          NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(rolling_kernel<4, 1024>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
        else if (threads <= 512)
          NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(rolling_kernel<8, 512>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
        else
          NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(rolling_kernel<8, 1024>, cudaFuncAttributeMaxDynamicSharedMemorySize, sm));
      }
      // Few windows: split each window's candidates over blocks (split_kernel).
      const int ncb = static_cast<int>((n + 7) / 8);
      const bool split = !rolling && sb * nw * groups < 4 * sms && nw * ncb < (std::int64_t{1} << 31);
      DeviceArray<double> d_partS(split ? static_cast<std::size_t>(sb * nw * ncb * A) : 0);
      DeviceArray<int> d_partJ(split ? static_cast<std::size_t>(sb * nw * ncb * A) : 0);
      CudaEventTimer timer;
      for (std::int64_t s0 = part.s_begin; s0 < part.s_begin + part.s_count; s0 += sb) {
        const std::int64_t sc = std::min(sb, part.s_begin + part.s_count - s0);
        d_x.copy_from_host(s.x + s0 * s.length, static_cast<std::size_t>(sc * s.length));
        timer.start();
        if (rolling) {
          const dim3 grid(static_cast<unsigned>(part.c_count), static_cast<unsigned>(rgroups), static_cast<unsigned>(sc));
          const int ni = static_cast<int>(n);
          if (rgroup == 4 && threads <= 512)
            rolling_kernel<4, 512><<<grid, threads, smem>>>(d_x.data(), s.length, ni, K, R, W, part.c_begin, wb, nw, g, prescreen,
                                                            d_bestS.data(), d_bestJ.data());
          else if (rgroup == 4)
            rolling_kernel<4, 1024><<<grid, threads, smem>>>(d_x.data(), s.length, ni, K, R, W, part.c_begin, wb, nw, g, prescreen,
                                                             d_bestS.data(), d_bestJ.data());
          else if (threads <= 512)
            rolling_kernel<8, 512><<<grid, threads, smem>>>(d_x.data(), s.length, ni, K, R, W, part.c_begin, wb, nw, g, prescreen,
                                                            d_bestS.data(), d_bestJ.data());
          else
            rolling_kernel<8, 1024><<<grid, threads, smem>>>(d_x.data(), s.length, ni, K, R, W, part.c_begin, wb, nw, g, prescreen,
                                                             d_bestS.data(), d_bestJ.data());
          NUMPIPE_CUDA_CHECK_LAUNCH();
        } else if (split) {
          const dim3 grid(static_cast<unsigned>(nw * ncb), static_cast<unsigned>(groups), static_cast<unsigned>(sc));
          split_kernel<<<grid, 256>>>(d_x.data(), s.length, static_cast<int>(n), K, wb, nw, ncb, g, d_partS.data(),
                                      d_partJ.data());
          NUMPIPE_CUDA_CHECK_LAUNCH();
          const std::int64_t m = sc * nw * A;
          merge_kernel<<<static_cast<unsigned>((m + 127) / 128), 128>>>(d_x.data(), s.length, K, wb, nw, static_cast<int>(sc),
                                                                        ncb, static_cast<int>(A), d_partS.data(),
                                                                        d_partJ.data(), d_bestS.data(), d_bestJ.data());
          NUMPIPE_CUDA_CHECK_LAUNCH();
        } else {
          const dim3 grid(static_cast<unsigned>(nw), static_cast<unsigned>(groups), static_cast<unsigned>(sc));
          full_kernel<<<grid, kFullThreads>>>(d_x.data(), s.length, static_cast<int>(n), K, wb, nw, g, d_bestS.data(),
                                              d_bestJ.data());
          NUMPIPE_CUDA_CHECK_LAUNCH();
        }
        const std::int64_t items = sc * nw;
        finalize_kernel<<<static_cast<unsigned>((items + 127) / 128), 128>>>(
            d_x.data(), s.length, static_cast<int>(n), K, wb, nw, static_cast<int>(sc), g, d_bestS.data(), d_bestJ.data(),
            d_shape.data(), d_index.data(), d_xm.data(), d_xp.data(), d_S.data(), d_ll.data());
        NUMPIPE_CUDA_CHECK_LAUNCH();
        timer.stop();
        kernel_s[pi] += timer.seconds();
        // scatter rows [s0, s0+sc) x windows [wb, we) into the host arrays
        const std::size_t m = static_cast<std::size_t>(items);
        std::vector<std::int64_t> h_index(m);
        std::vector<double> h_xm(m), h_xp(m), h_S(m), h_ll(m);
        d_shape.copy_to_host(h_shape.data(), m);
        d_index.copy_to_host(h_index.data(), m);
        d_xm.copy_to_host(h_xm.data(), m);
        d_xp.copy_to_host(h_xp.data(), m);
        d_S.copy_to_host(h_S.data(), m);
        d_ll.copy_to_host(h_ll.data(), m);
        NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
        for (std::int64_t r = 0; r < sc; ++r)
          for (std::int64_t w = 0; w < nw; ++w) {
            const std::size_t src = static_cast<std::size_t>(r * nw + w);
            const std::size_t dst = static_cast<std::size_t>((s0 + r) * W + wb + w - base);
            out.shape[dst] = h_shape[src];
            out.index[dst] = h_index[src];
            out.xm[dst] = h_xm[src];
            out.xp[dst] = h_xp[src];
            out.S[dst] = h_S[src];
            out.loglik[dst] = h_ll[src];
          }
      }
    } catch (...) {
      errors[pi] = std::current_exception();
    }
  };
  if (given) {
    for (std::size_t pi = 0; pi < parts.size(); ++pi) run_part(pi);
  } else {
    std::vector<std::thread> workers;
    for (std::size_t pi = 1; pi < parts.size(); ++pi) workers.emplace_back(run_part, pi);
    run_part(0);
    for (auto& t : workers) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  if (timing) {
    timing->kernel_seconds = 0;
    if (given)
      for (double k : kernel_s) timing->kernel_seconds += k;
    else if (!kernel_s.empty())
      timing->kernel_seconds = *std::max_element(kernel_s.begin(), kernel_s.end());
  }
}

}  // namespace

void solve_cuda(const Series& s, const Params& p, const std::vector<int>& devices, WindowFits& out, CudaTiming* timing) {
  solve_parts(s, p, devices, nullptr, 0, out, timing);
}

TaskPlan cuda_plan(const Series& s, const Params& p) {
  validate(s, p);
  TaskPlan plan;
  plan.series = s.series;
  plan.windows = window_count(s, p);
  plan.chunk = cuda_rolling(p) ? p.refresh : 1;
  plan.chunks = (plan.windows + plan.chunk - 1) / plan.chunk;
  return plan;
}

void solve_cuda(const Series& s, const Params& p, const std::vector<int>& devices, std::int64_t first_task,
                std::int64_t last_task, WindowFits& out, CudaTiming* timing) {
  const TaskPlan plan = cuda_plan(s, p);
  if (first_task < 0 || first_task > last_task || last_task > plan.tasks())
    fail_internal("mle solve_cuda: task range [" + std::to_string(first_task) + ", " + std::to_string(last_task) +
                  ") outside [0, " + std::to_string(plan.tasks()) + ")");
  const std::int64_t base = plan.first_window(first_task);
  out.resize(static_cast<std::size_t>(plan.first_window(last_task) - base));
  if (timing) *timing = CudaTiming{};
  if (first_task == last_task) return;
  // The range as rectangles of (series, chunks): a partial first series, whole
  // series, a partial last series.
  const std::int64_t C = plan.chunks;
  std::vector<Part> parts;
  std::int64_t t = first_task;
  if (t % C != 0) {
    const std::int64_t end = std::min(last_task, (t / C + 1) * C);
    parts.push_back({t / C, 1, t % C, end - t});
    t = end;
  }
  if (last_task - t >= C) {
    const std::int64_t whole = (last_task - t) / C;
    parts.push_back({t / C, whole, 0, C});
    t += whole * C;
  }
  if (t < last_task) parts.push_back({t / C, 1, 0, last_task - t});
  solve_parts(s, p, devices, &parts, base, out, timing);
}

namespace {
int estimate_lanes(std::int64_t window) {
  // NUMPIPE_MLE_ESTIMATE_LANES=1|2|4|8|16|32 (a tuning knob for bench/mle-inference-cost);
  // by default about 32 points a lane or more, at most 16 lanes.
  if (const int forced = tuning_from_environment().estimate_lanes) return forced;
  int lanes = 1;
  while (lanes < 16 && 32 * 2 * lanes <= window) lanes *= 2;
  return lanes;
}
}  // namespace

namespace {
// count * per threads in blocks of 128: the grid's size.
unsigned blocks_for(std::int64_t count, std::int64_t per, int threads) {
  const std::int64_t b = (count * per + threads - 1) / threads;
  if (b >= (std::int64_t{1} << 31)) fail_input("too many windows for the CUDA backend: " + std::to_string(count));
  return static_cast<unsigned>(b);
}

// quantile_kernel over `count` windows of src into out ([windows][levels], on the host).
template <class Source>
double run_quantiles(Source src, std::int64_t count, const std::vector<double>& levels, double* out) {
  const int L = static_cast<int>(levels.size());
  DeviceArray<double> d_levels(levels.size()), d_q(static_cast<std::size_t>(count) * levels.size());
  d_levels.copy_from_host(levels.data(), levels.size());
  CudaEventTimer timer;
  timer.start();
  quantile_kernel<<<blocks_for(count, L, 128), 128>>>(src, count, d_levels.data(), L, d_q.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  timer.stop();
  const double sec = timer.seconds();
  d_q.copy_to_host(out, d_q.size());
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  return sec;
}
}  // namespace

std::vector<WindowEstimate> estimate_cuda(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                                          bool inform, std::int64_t begin, std::int64_t end, int device,
                                          double* kernel_seconds, const std::vector<double>& levels,
                                          std::vector<double>* quantiles) {
  const std::int64_t W = window_count(s, p), count = end - begin;
  std::vector<WindowEstimate> out(static_cast<std::size_t>(count));
  if (kernel_seconds) *kernel_seconds = 0;
  if (quantiles) quantiles->assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)) * levels.size(), 0.0);
  if (count <= 0) return out;
  if (fits.index.size() != static_cast<std::size_t>(count) || fits.shape.size() != static_cast<std::size_t>(count))
    fail_internal("mle estimate_cuda: the fits do not hold the windows [begin, end)");
  const bool two = p.shapes == 2;
  if (two && fits.shape2.size() != static_cast<std::size_t>(count)) fail_internal("mle estimate_cuda: no second shapes");
  const int lanes = estimate_lanes(p.window);
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  // the series rows these windows lie in, and what the kernel makes the tasks from
  const std::int64_t s0 = begin / W, s1 = (end - 1) / W + 1;
  DeviceArray<double> d_x(static_cast<std::size_t>((s1 - s0) * s.length));
  d_x.copy_from_host(s.x + s0 * s.length, static_cast<std::size_t>((s1 - s0) * s.length));
  DeviceArray<std::int64_t> d_index(fits.index.size());
  d_index.copy_from_host(fits.index.data(), fits.index.size());
  DeviceArray<int> d_shape(fits.shape.size()), d_shape2(two ? fits.shape2.size() : 0);
  d_shape.copy_from_host(fits.shape.data(), fits.shape.size());
  if (two) d_shape2.copy_from_host(fits.shape2.data(), fits.shape2.size());
  const auto& alpha = p.grid.alpha;
  DeviceArray<double> d_alpha(alpha.size());
  d_alpha.copy_from_host(alpha.data(), alpha.size());
  const TaskSource src{d_index.data(), d_shape.data(), two ? d_shape2.data() : nullptr, d_alpha.data(),
                       static_cast<int>(alpha.size()), *std::min_element(alpha.begin(), alpha.end()),
                       *std::max_element(alpha.begin(), alpha.end()), refine, inform};
  DeviceArray<WindowEstimate> d_out(out.size());
  NUMPIPE_CUDA_CHECK(cudaMemcpyToSymbol(g_estimate_lanes, &lanes, sizeof lanes));
  CudaEventTimer timer;
  timer.start();
  estimate_kernel<<<blocks_for(count, lanes, 128), 128>>>(d_x.data(), s.length, p.window, p.step, W, begin - s0 * W,
                                                          count, lanes, src, d_out.data());
  NUMPIPE_CUDA_CHECK_LAUNCH();
  timer.stop();
  double sec = timer.seconds();
  // the quantiles of the estimates, from the device's copy
  if (quantiles && !levels.empty()) sec += run_quantiles(EstimateRecords{d_out.data()}, count, levels, quantiles->data());
  if (kernel_seconds) *kernel_seconds = sec;
  d_out.copy_to_host(out.data(), out.size());
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  return out;
}

std::vector<double> quantiles_cuda(const Estimates& e, const std::vector<double>& levels, int device,
                                   double* kernel_seconds) {
  const std::int64_t count = static_cast<std::int64_t>(e.theta.size());
  std::vector<double> out(static_cast<std::size_t>(count) * levels.size());
  if (kernel_seconds) *kernel_seconds = 0;
  if (count == 0 || levels.empty()) return out;
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  // theta, p1, p2, s_l, s_r, one after another
  std::vector<double> est(static_cast<std::size_t>(5 * count));
  const std::vector<double>* cols[5] = {&e.theta, &e.p, &e.p2, &e.s_l, &e.s_r};
  for (int k = 0; k < 5; ++k) {
    if (cols[k]->size() != static_cast<std::size_t>(count)) fail_internal("mle quantiles_cuda: estimates of unequal sizes");
    std::copy(cols[k]->begin(), cols[k]->end(), est.begin() + k * count);
  }
  DeviceArray<double> d_est(est.size());
  d_est.copy_from_host(est.data(), est.size());
  const double sec = run_quantiles(EstimateColumns{d_est.data(), count}, count, levels, out.data());
  if (kernel_seconds) *kernel_seconds = sec;
  return out;
}

double measure_exp_rate(int device) {
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  NUMPIPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const int blocks = prop.multiProcessorCount * 8, threads = 256, iters = 4096;
  DeviceArray<double> d(static_cast<std::size_t>(blocks) * threads);
  exp_rate_kernel<<<blocks, threads>>>(d.data(), 64);  // warm-up
  NUMPIPE_CUDA_CHECK_LAUNCH();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    CudaEventTimer timer;
    timer.start();
    exp_rate_kernel<<<blocks, threads>>>(d.data(), iters);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    timer.stop();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return 4.0 * iters * blocks * threads / t[t.size() / 2];
}

}  // namespace numpipe::mle
