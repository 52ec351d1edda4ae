// price, CUDA: what the kernels of cuda.cu and cuda_mcs.cu share: a line of values in
// shared memory laid out for a warp (ChunkLayout), the warp's affine recurrence over
// it (the Thomas sweeps as scans), the transposed Thomas solve of the adjoint sweeps,
// and the per-device workspaces.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>

#include "common/cuda_check.hpp"
#include "model.hpp"

namespace numpipe::price::lines {

// One W per device, made at its first use and kept for the process (its device
// buffers grow as passes need them and are never given back between passes).
template <class W>
W& per_device(int device) {
  static std::mutex lock;
  static auto* spaces = new std::map<int, std::unique_ptr<W>>();  // never freed: used until exit
  std::lock_guard<std::mutex> guard(lock);
  auto& w = (*spaces)[device];
  if (!w) w = std::make_unique<W>();
  return *w;
}

constexpr int kWarp = 32;

// A first-order affine recurrence over one line held by a warp, solved in place:
// v_k = step(k, v_{k-1}) ascending (v_{-1} = 0), or v_k = step(k, v_{k+1})
// descending (v_n = 0), where step(k, p) = slope(k) * p + (its value at p = 0). Lane
// l owns the chunk [k0, k1) (lanes in order cover the line). Each chunk's map is
// found by running step from 0 (the offset) and multiplying the slopes; the maps
// are composed by a warp scan (the "scan formulation" the spec allows), then each
// chunk reruns step from its entry value, passing every v_k to store(k, v_k).
template <bool Ascending, class Real, class Step, class Slope, class Store>
__device__ __forceinline__ void warp_recurrence(int k0, int k1, int lane, Step step, Slope slope, Store store) {
  Real a = 1, b = 0;
  if (Ascending) {
    for (int k = k0; k < k1; ++k) {
      b = step(k, b);
      a = slope(k) * a;
    }
  } else {
    for (int k = k1 - 1; k >= k0; --k) {
      b = step(k, b);
      a = slope(k) * a;
    }
  }
  for (int off = 1; off < kWarp; off <<= 1) {
    const Real ao = Ascending ? __shfl_up_sync(0xffffffffu, a, off) : __shfl_down_sync(0xffffffffu, a, off);
    const Real bo = Ascending ? __shfl_up_sync(0xffffffffu, b, off) : __shfl_down_sync(0xffffffffu, b, off);
    if (Ascending ? lane >= off : lane + off < kWarp) {
      b = a * bo + b;
      a = a * ao;
    }
  }
  Real v = Ascending ? __shfl_up_sync(0xffffffffu, b, 1) : __shfl_down_sync(0xffffffffu, b, 1);
  if (lane == (Ascending ? 0 : kWarp - 1)) v = 0;
  if (Ascending) {
    for (int k = k0; k < k1; ++k) store(k, v = step(k, v));
  } else {
    for (int k = k1 - 1; k >= k0; --k) store(k, v = step(k, v));
  }
}

// The transposed tridiagonal solve of the adjoint sweeps, T^T x = w with T = L U
// (model.hpp, "the transposed system"), over one line held by a warp (lane l owns
// [k0, k1)): U^T, v_k = (w_k - c_{k-1} v_{k-1}) inv_k ascending, then L^T,
// x_k = v_k - beta_{k+1} x_{k+1} descending, each a warp_recurrence. rhs(k) is w_k
// (it may read x: the solve runs in place); c_prev[k] = c_{k-1}, inv[k] = inv_k and
// beta_next[k] = beta_{k+1} are indexed like x.
template <class Real, class Rhs>
__device__ __forceinline__ void warp_transposed_thomas(int k0, int k1, int lane, Rhs rhs, const Real* c_prev,
                                                       const Real* inv, const Real* beta_next, Real* x) {
  auto keep = [&](int k, Real v) { x[k] = v; };
  warp_recurrence<true, Real>(
      k0, k1, lane, [&](int k, Real q) { return thomas_back(rhs(k), c_prev[k], q, inv[k]); },
      [&](int k) { return -c_prev[k] * inv[k]; }, keep);
  warp_recurrence<false, Real>(
      k0, k1, lane, [&](int k, Real q) { return thomas_forward(x[k], beta_next[k], q); },
      [&](int k) { return -beta_next[k]; }, keep);
}

// A line of n values in shared memory as 32 chunks of `chunk` values, each chunk
// `stride` (odd, >= chunk) apart so that lanes walking their chunks hit distinct banks.
struct ChunkLayout {
  int chunk, stride;
  __host__ __device__ static ChunkLayout of(int n) {
    const int c = (n + kWarp - 1) / kWarp;
    return {c, c % 2 ? c : c + 1};
  }
  __host__ __device__ int unit() const { return kWarp * stride; }  // values per line
  __device__ int at(int k) const { return (k / chunk) * stride + k % chunk; }
};

// The positions of k, k + step, k + 2 step, ... in a ChunkLayout without a division
// each (at() divides by the runtime chunk: tens of instructions).
struct ChunkWalk {
  int c, o, dc, dod, chunk, stride;
  __device__ ChunkWalk(const ChunkLayout& l, int k, int step)
      : c(k / l.chunk), o(k % l.chunk), dc(step / l.chunk), dod(step % l.chunk), chunk(l.chunk), stride(l.stride) {}
  __device__ int at() const { return c * stride + o; }
  __device__ void next() {
    c += dc;
    o += dod;
    if (o >= chunk) {
      o -= chunk;
      ++c;
    }
  }
};

}  // namespace numpipe::price::lines
