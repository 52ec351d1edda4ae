// ns-step's CUDA sub-step kernels and their launches (cuda_run.cuh's header says how
// they work): included only by the units cuda_substep_*.cu, each of which instantiates
// the kernels of some variants (cuda_substep.hpp), so that they compile in parallel.
// The run (cuda_run.cuh) sees their declarations alone: with these definitions in view
// every launch_substep it calls was instantiated again in its own unit.
#pragma once
#include <cuda_pipeline.h>

#include "common/cuda_check.hpp"
#include "cuda_substep.hpp"
#include "cuda_write_ghosts.cuh"
#include "model.hpp"

namespace numpipe::ns::substep {


// Variants (--kernel): TJ rows of 32 columns per block, MINB blocks per SM for the
// register budget (__launch_bounds__), LDG: read Phi through the read-only data path
// (Phi is not written by the kernel: the new values go to the other buffer). 0: 32 x 8,
// 1: 32 x 8 LDG, 2: 32 x 16 LDG, 3: 32 x 8 LDG without a register cap, 5: 32 x 16 LDG
// with Q by cp.async (QASYNC), 6: the ring (below) with 32 x 16, 7: the ring with 32 x 8,
// two blocks per SM; 4: the default, 6 in fp64 and 5 in fp32.
template <bool LDG, class T>
__device__ __forceinline__ T load_in(const T* p) {
  if constexpr (LDG) return __ldg(p);
  else return *p;
}

// The update of one point from its stencils (shared by the sub-step kernels): Q and
// Phi written at c, and with `fuse` Phi's ghost copies too. With a free stream
// (SPONGE) the sponge's relaxation joins the right-hand side (the CPU's
// cpu::point_step, the same operations). Bodies cost the sub-step kernels nothing:
// they update solid nodes and IB points like any other (values nobody reads), and
// ib_kernel then writes those points' right values. (Skipping them here, or their
// ghost-value code inlined here, held registers that every point needs: the fp64 ring
// kernel spilled and ran up to 2.7 times slower.)
template <class T, int ORDER, bool FIRST, bool SPONGE>
__device__ __forceinline__ void update_point(const Geometry& g, const Coefs<T>& cf, T a, T b, T dt, T kj, const PointStencil<T>& p,
                                             const T* qv, int i, int j, int k, long long c, Ptrs<T> q, Ptrs<T> out, bool fuse,
                                             const DevTables<T>& tb) {
  T l[kVars];
  rhs<ORDER>(p, cf, kj, l);
  if constexpr (SPONGE) add_sponge(p, cf, T(tb.sigma[0][i] + tb.sigma[1][j] + tb.sigma[2][k]), l);
  const int idx[3] = {i, j, k};
  // within 3 points of a face (a ghost source); one test for the four variables
  fuse = fuse && (min(min(i, j), k) < 3 || i >= g.n[0] - 3 || j >= g.n[1] - 3 || k >= g.n[2] - 3);
#pragma unroll
  for (int v = 0; v < kVars; ++v) {
    T qn;
    if constexpr (FIRST) qn = dt * l[v];
    else qn = a * qv[v] + dt * l[v];
    T on = p.s[0][v][2] + b * qn;
    if (pinned_point(g, i, j, k, v)) qn = on = T(0);
    q.v[v][c] = qn;
    out.v[v][c] = on;
    if (fuse) write_ghosts(g, out.v[v], c, idx, v, on);
  }
}

template <class T, int ORDER, bool FIRST, int kTJ, int MINB, bool LDG, bool QASYNC = false, bool SPONGE = false>
__global__ void __launch_bounds__(kTK* kTJ, MINB)
    substep_kernel(Geometry g, Box box, Coefs<T> cf, T a, T b, T dt, const T* __restrict__ kol, Ptrs<T> in, Ptrs<T> out,
                   Ptrs<T> q, int chunk, bool fuse, DevTables<T> tb) {
  constexpr int SK = kTK + 4, SJ = kTJ + 4;
  // Two plane buffers used in turn: one barrier per plane (a buffer is rewritten two
  // iterations after it was read, with a barrier in between).
  __shared__ T sh[2][kVars][SJ][SK];
  // QASYNC: Q of the next plane copied into shared memory by cp.async while this
  // plane is computed (two buffers in turn, in dynamic shared memory), so that its
  // latency is hidden without holding registers; each thread reads only its own.
  extern __shared__ unsigned char dyn_smem[];
  T(*shq)[kVars][kTJ][kTK] = reinterpret_cast<T(*)[kVars][kTJ][kTK]>(dyn_smem);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int k0 = box.lo[2] + blockIdx.x * kTK, j0 = box.lo[1] + blockIdx.y * kTJ;
  const int i0 = box.lo[0] + blockIdx.z * chunk;
  const int i1 = min(i0 + chunk, box.hi[0]);
  const int j = j0 + ty, k = k0 + tx;
  const bool active = j < box.hi[1] && k < box.hi[2];
  // points a stencil of the box reads (the box's points and two beyond in j and k)
  const bool loadable = j < box.hi[1] + kGhost && k < box.hi[2] + kGhost;
  const long long si = g.si(), sj = g.sj();
  const long long col = (long long)(j + kGhost) * sj + (k + kGhost) + kGhost * si;  // at(0, j, k)

  // Halo duty: 4 rows of TK (j-halo) then TJ rows of 4 (k-halo).
  const int tid = ty * kTK + tx;
  int sr = 0, sc = 0;
  bool has_halo = false;
  if (tid < 4 * kTK) {
    const int r = tid / kTK;
    sr = r < 2 ? r : kTJ + r;
    sc = tid % kTK + 2;
    has_halo = true;
  } else if (tid < 4 * kTK + 4 * kTJ) {
    const int e = tid - 4 * kTK;
    sr = e / 4 + 2;
    const int cc = e % 4;
    sc = cc < 2 ? cc : kTK + cc;
    has_halo = true;
  }
  const int hj = j0 + sr - 2, hk = k0 + sc - 2;
  has_halo = has_halo && hj < box.hi[1] + kGhost && hk < box.hi[2] + kGhost;
  const long long hoff = (long long)(hj + kGhost) * sj + (hk + kGhost) + kGhost * si;

  T r[kVars][5], nxt[kVars], hal[kVars], qv[kVars];
#pragma unroll
  for (int v = 0; v < kVars; ++v) {
    nxt[v] = T(0);
    hal[v] = T(0);
    qv[v] = T(0);
#pragma unroll
    for (int o = 0; o < 5; ++o) r[v][o] = loadable && i0 < i1 ? load_in<LDG>(&in.v[v][col + (long long)(i0 + o - 2) * si]) : T(0);
    if (has_halo && i0 < i1) hal[v] = load_in<LDG>(&in.v[v][hoff + (long long)i0 * si]);
  }
  const T kj = active ? kol[j] : T(0);
  if constexpr (QASYNC && !FIRST) {
    if (active && i0 < i1)
#pragma unroll
      for (int v = 0; v < kVars; ++v) __pipeline_memcpy_async(&shq[0][v][ty][tx], &q.v[v][col + (long long)i0 * si], sizeof(T));
    __pipeline_commit();
  }

  for (int i = i0; i < i1; ++i) {
    const long long c = col + (long long)i * si;
    T(*s)[SJ][SK] = sh[(i - i0) & 1];
#pragma unroll
    for (int v = 0; v < kVars; ++v) {
      if (loadable) s[v][ty + 2][tx + 2] = r[v][2];
      if (has_halo) s[v][sr][sc] = hal[v];
    }
    const bool more = i + 1 < i1;
#pragma unroll
    for (int v = 0; v < kVars; ++v) {
      if (loadable && more) nxt[v] = load_in<LDG>(&in.v[v][c + 3 * si]);
      if (has_halo && more) hal[v] = load_in<LDG>(&in.v[v][hoff + (long long)(i + 1) * si]);
      if constexpr (!FIRST && !QASYNC)
        if (active) qv[v] = q.v[v][c];
    }
    if constexpr (QASYNC && !FIRST) {
      const int nb = (i - i0 + 1) & 1;
      if (active && more)
#pragma unroll
        for (int v = 0; v < kVars; ++v) __pipeline_memcpy_async(&shq[nb][v][ty][tx], &q.v[v][c + si], sizeof(T));
      __pipeline_commit();
      __pipeline_wait_prior(1);  // this plane's copies are done (the next plane's may be in flight)
      if (active)
#pragma unroll
        for (int v = 0; v < kVars; ++v) qv[v] = shq[nb ^ 1][v][ty][tx];
    }
    __syncthreads();
    if (active) {
      PointStencil<T> p;
#pragma unroll
      for (int v = 0; v < kVars; ++v)
#pragma unroll
        for (int o = 0; o < 5; ++o) {
          p.s[0][v][o] = r[v][o];
          p.s[1][v][o] = s[v][ty + o][tx + 2];
          p.s[2][v][o] = s[v][ty + 2][tx + o];
        }
      update_point<T, ORDER, FIRST, SPONGE>(g, cf, a, b, dt, kj, p, qv, i, j, k, c, q, out, fuse, tb);
    }
#pragma unroll
    for (int v = 0; v < kVars; ++v) {
#pragma unroll
      for (int o = 0; o < 4; ++o) r[v][o] = r[v][o + 1];
      r[v][4] = nxt[v];
    }
  }
}

// Variants 6, 7: every plane read through a ring of shared-memory planes filled by
// cp.async P planes ahead of use (the plane with its j/k halo, copied by all threads
// as one flat tile, and Q of the points), so that P planes of loads are in flight
// without holding registers; the x-stencil still lives in registers. One barrier per
// plane. Ring of R = P + 3 planes: plane p is copied in iteration p - 2 - P (after that
// iteration's barrier) into the slot plane p - R read in the iteration before, waited
// for in iteration p - 2 (its centre becomes the x-stencil's top) and used with its
// halo in iteration p. Q of plane p travels in the group of plane p + 2 (P + 1 slots,
// each thread reads back only its own copies).
template <class T, int kTJ, int P, bool FIRST>
constexpr int ring_smem_bytes() {
  return int(((P + 3) * kVars * (kTJ + 4) * (kTK + 4) + (FIRST ? 0 : (P + 1) * kVars * kTJ * kTK)) * sizeof(T));
}

// VEC: the tile copied in 16-byte pieces (cp.async.cg, not kept in L1) when rows and
// the box start are aligned to them (else in single values).
template <int BYTES>
__device__ __forceinline__ void copy_async(void* dst, const void* src) {
  if constexpr (BYTES == 16) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
  } else {
    __pipeline_memcpy_async(dst, src, BYTES);
  }
}

template <class T, int ORDER, bool FIRST, int kTJ, int MINB, int P, bool VEC, bool SPONGE>
__global__ void __launch_bounds__(kTK* kTJ, MINB)
    substep_ring_kernel(Geometry g, Box box, Coefs<T> cf, T a, T b, T dt, const T* __restrict__ kol, Ptrs<T> in, Ptrs<T> out,
                        Ptrs<T> q, int chunk, bool fuse, DevTables<T> tb) {
  constexpr int W = VEC ? int(16 / sizeof(T)) : 1;  // values per copy
  constexpr int SK = kTK + 4, SJ = kTJ + 4, NE = SJ * SK, NT = kTK * kTJ, R = P + 3;
  static_assert(SK % W == 0, "tile rows must hold whole copies");
  constexpr int NEW = NE / W, NC = (NEW + NT - 1) / NT;
  extern __shared__ __align__(16) unsigned char dyn_smem[];
  T(*ring)[kVars][SJ][SK] = reinterpret_cast<T(*)[kVars][SJ][SK]>(dyn_smem);
  T(*qr)[kVars][kTJ][kTK] = reinterpret_cast<T(*)[kVars][kTJ][kTK]>(dyn_smem + sizeof(T) * R * kVars * NE);
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTK + tx;
  const int k0 = box.lo[2] + blockIdx.x * kTK, j0 = box.lo[1] + blockIdx.y * kTJ;
  const int i0 = box.lo[0] + blockIdx.z * chunk;
  const int i1 = min(i0 + chunk, box.hi[0]);
  const int j = j0 + ty, k = k0 + tx;
  const bool active = j < box.hi[1] && k < box.hi[2];
  const long long si = g.si(), sj = g.sj();
  const long long col = (long long)(j + kGhost) * sj + (k + kGhost) + kGhost * si;  // at(0, j, k)
  // this thread's share of the flat (SJ x SK) tile copy: padded offsets at interior plane 0
  long long coff[NC];
  bool cok[NC];
#pragma unroll
  for (int m = 0; m < NC; ++m) {
    // a copy that starts in reach stays in its padded row (rows and starts aligned to W)
    const int e = tid + m * NT, row = e / (SK / W), cc = e % (SK / W) * W;
    const int jj = j0 - 2 + row, kk = k0 - 2 + cc;  // a stencil of the box reads j, k < hi + 2
    cok[m] = e < NEW && jj < box.hi[1] + kGhost && kk < box.hi[2] + kGhost;
    coff[m] = (long long)(jj + kGhost) * sj + (kk + kGhost) + kGhost * si;
  }
  auto issue_phi = [&](int p, int slot) {
    const long long po = (long long)p * si;
#pragma unroll
    for (int m = 0; m < NC; ++m)
      if (cok[m])
#pragma unroll
        for (int v = 0; v < kVars; ++v)
          copy_async<W * sizeof(T)>(&ring[slot][v][0][0] + (tid + m * NT) * W, in.v[v] + coff[m] + po);
  };
  auto issue_q = [&](int p, int slot) {
    if (active)
#pragma unroll
      for (int v = 0; v < kVars; ++v)
        __pipeline_memcpy_async(&qr[slot][v][ty][tx], q.v[v] + col + (long long)p * si, sizeof(T));
  };

  T r[kVars][5], qv[kVars];
#pragma unroll
  for (int v = 0; v < kVars; ++v) {
    qv[v] = T(0);
#pragma unroll
    for (int o = 0; o < 5; ++o) r[v][o] = T(0);
    if (active && i0 < i1) {
      r[v][0] = __ldg(&in.v[v][col + (long long)(i0 - 2) * si]);
      r[v][1] = __ldg(&in.v[v][col + (long long)(i0 - 1) * si]);
    }
  }
  const T kj = active ? kol[j] : T(0);
  // prologue: planes i0 .. i0 + P + 1 (slots 0 .. P + 1), Q of planes i0 .. i0 + P - 1
#pragma unroll
  for (int m = 0; m < P + 2; ++m) {
    if (i0 + m <= i1 + 1 && i0 < i1) issue_phi(i0 + m, m);
    if constexpr (!FIRST)
      if (m >= 2 && i0 + m - 2 < i1) issue_q(i0 + m - 2, m - 2);
    __pipeline_commit();
  }
  int ps = 0, qs = 0;  // ring slot of plane i, Q slot of plane i
  for (int i = i0; i < i1; ++i) {
    __pipeline_wait_prior(P - 1);  // this thread's copies of planes up to i + 2 (and Q of plane i) are done
    __syncthreads();               // everyone's: plane i + 2 is complete; nobody reads plane i - 1's slot any more
    {
      const int p = i + 2 + P;
      if (p <= i1 + 1) issue_phi(p, ps == 0 ? R - 1 : ps - 1);
      if constexpr (!FIRST)
        if (i + P < i1) issue_q(i + P, qs == 0 ? P : qs - 1);
      __pipeline_commit();
    }
    const int s1 = ps + 1 == R ? 0 : ps + 1, s2 = s1 + 1 == R ? 0 : s1 + 1;
    if (active) {
      T(*s)[SJ][SK] = ring[ps];
      PointStencil<T> pt;
#pragma unroll
      for (int v = 0; v < kVars; ++v) {
        if (i == i0) {
          r[v][2] = s[v][ty + 2][tx + 2];
          r[v][3] = ring[s1][v][ty + 2][tx + 2];
        }
        r[v][4] = ring[s2][v][ty + 2][tx + 2];
        if constexpr (!FIRST) qv[v] = qr[qs][v][ty][tx];
#pragma unroll
        for (int o = 0; o < 5; ++o) {
          pt.s[0][v][o] = r[v][o];
          pt.s[1][v][o] = s[v][ty + o][tx + 2];
          pt.s[2][v][o] = s[v][ty + 2][tx + o];
        }
      }
      update_point<T, ORDER, FIRST, SPONGE>(g, cf, a, b, dt, kj, pt, qv, i, j, k, col + (long long)i * si, q, out, fuse, tb);
#pragma unroll
      for (int v = 0; v < kVars; ++v)
#pragma unroll
        for (int o = 0; o < 4; ++o) r[v][o] = r[v][o + 1];
    }
    ps = s1;
    qs = qs == P ? 0 : qs + 1;
  }
  __pipeline_wait_prior(0);
}

// Variant 8: one thread per point of the box (k fastest), every stencil value read
// through the caches. For 2-D problems (one z point, no z ghosts), whose rows the
// tiled kernels would cover with one lane in 32; the ghost kernel runs before it.
template <class T, int ORDER, bool FIRST, bool SPONGE>
__global__ void __launch_bounds__(256) substep_flat_kernel(Geometry g, Box box, Coefs<T> cf, T a, T b, T dt,
                                                           const T* __restrict__ kol, Ptrs<T> in, Ptrs<T> out, Ptrs<T> q,
                                                           DevTables<T> tb) {
  const int e0 = box.hi[0] - box.lo[0], e1 = box.hi[1] - box.lo[1], e2 = box.hi[2] - box.lo[2];
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (long long)e0 * e1 * e2) return;
  const int k = box.lo[2] + int(e % e2), j = box.lo[1] + int((e / e2) % e1), i = box.lo[0] + int(e / ((long long)e2 * e1));
  const long long c = g.at(i, j, k);
  const long long str[3] = {g.si(), g.sj(), g.flat_z() ? 0 : 1};
  PointStencil<T> p;
#pragma unroll
  for (int ax = 0; ax < 3; ++ax)
#pragma unroll
    for (int v = 0; v < kVars; ++v)
#pragma unroll
      for (int o = 0; o < 5; ++o) p.s[ax][v][o] = __ldg(&in.v[v][c + (o - 2) * str[ax]]);
  T qv[kVars];
#pragma unroll
  for (int v = 0; v < kVars; ++v) qv[v] = FIRST ? T(0) : q.v[v][c];
  update_point<T, ORDER, FIRST, SPONGE>(g, cf, a, b, dt, kol[j], p, qv, i, j, k, c, q, out, false, tb);
}

template <class T, int ORDER, bool FIRST, int TJ, int MINB, bool LDG, bool QASYNC, int RING, bool VEC = false, int SPONGE = -1>
void launch_one(const dim3& grid, const dim3& block, const SubstepCall<T>& c, T a, T b) {
  if constexpr (SPONGE < 0) {
    // the sponge's term compiled in only for runs with a free stream
    if (c.cf.sponge) return launch_one<T, ORDER, FIRST, TJ, MINB, LDG, QASYNC, RING, VEC, 1>(grid, block, c, a, b);
    return launch_one<T, ORDER, FIRST, TJ, MINB, LDG, QASYNC, RING, VEC, 0>(grid, block, c, a, b);
  }
  if constexpr (RING > 0 && !VEC && SPONGE >= 0) {
    // 16-byte copies of the tile need rows and the box's first column aligned to them
    constexpr int w = int(16 / sizeof(T));
    if (c.g.sj() % w == 0 && c.box.lo[2] % w == 0)
      return launch_one<T, ORDER, FIRST, TJ, MINB, LDG, QASYNC, RING, true, SPONGE>(grid, block, c, a, b);
  }
  if constexpr (RING > 0) {
    auto kernel = substep_ring_kernel<T, ORDER, FIRST, TJ, MINB, RING, VEC, SPONGE == 1>;
    constexpr int smem = ring_smem_bytes<T, TJ, RING, FIRST>();
    static_assert(smem <= 227 * 1024, "the ring does not fit in shared memory");
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernel<<<grid, block, smem, c.stream>>>(c.g, c.box, c.cf, a, b, c.dt, c.kol, c.in, c.out, c.q, c.chunk, c.fuse, c.tb);
  } else {
    auto kernel = substep_kernel<T, ORDER, FIRST, TJ, MINB, LDG, QASYNC, SPONGE == 1>;
    const int smem = QASYNC && !FIRST ? int(2 * kVars * TJ * kTK * sizeof(T)) : 0;
    if (smem > 0) NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernel<<<grid, block, smem, c.stream>>>(c.g, c.box, c.cf, a, b, c.dt, c.kol, c.in, c.out, c.q, c.chunk, c.fuse, c.tb);
  }
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

template <class T, int TJ, int MINB, bool LDG, bool QASYNC, int RING>
void launch_substep(const SubstepCall<T>& c) {
  const Box& box = c.box;
  const dim3 block(kTK, TJ);
  const int ext[3] = {box.hi[0] - box.lo[0], box.hi[1] - box.lo[1], box.hi[2] - box.lo[2]};
  const dim3 grid((ext[2] + kTK - 1) / kTK, (ext[1] + TJ - 1) / TJ, (ext[0] + c.chunk - 1) / c.chunk);
  const T a = T(kRkA[c.stage]), b = T(kRkB[c.stage]);
  if (c.order == 4) {
    if (c.stage == 0) launch_one<T, 4, true, TJ, MINB, LDG, QASYNC, RING>(grid, block, c, a, b);
    else launch_one<T, 4, false, TJ, MINB, LDG, QASYNC, RING>(grid, block, c, a, b);
  } else {
    if (c.stage == 0) launch_one<T, 2, true, TJ, MINB, LDG, QASYNC, RING>(grid, block, c, a, b);
    else launch_one<T, 2, false, TJ, MINB, LDG, QASYNC, RING>(grid, block, c, a, b);
  }
}

template <class T, int ORDER, bool FIRST>
void launch_flat_one(const SubstepCall<T>& c, T a, T b) {
  const Box& box = c.box;
  const long long count = (long long)(box.hi[0] - box.lo[0]) * (box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
  const int threads = 256;
  const unsigned blocks = (unsigned)((count + threads - 1) / threads);
  if (c.cf.sponge)
    substep_flat_kernel<T, ORDER, FIRST, true><<<blocks, threads, 0, c.stream>>>(c.g, box, c.cf, a, b, c.dt, c.kol, c.in, c.out, c.q, c.tb);
  else
    substep_flat_kernel<T, ORDER, FIRST, false><<<blocks, threads, 0, c.stream>>>(c.g, box, c.cf, a, b, c.dt, c.kol, c.in, c.out, c.q, c.tb);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_substep_flat(const SubstepCall<T>& c) {
  const T a = T(kRkA[c.stage]), b = T(kRkB[c.stage]);
  if (c.order == 4) {
    if (c.stage == 0) launch_flat_one<T, 4, true>(c, a, b);
    else launch_flat_one<T, 4, false>(c, a, b);
  } else {
    if (c.stage == 0) launch_flat_one<T, 2, true>(c, a, b);
    else launch_flat_one<T, 2, false>(c, a, b);
  }
}

}  // namespace numpipe::ns::substep
