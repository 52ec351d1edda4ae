// ns-step's CUDA kernel for the bodies (immersed boundary: solid nodes and IB points),
// run after each sub-step's kernels, and its launch. Included only by cuda_bodies_f32.cu
// and cuda_bodies_f64.cu, which instantiate launch_ib_step (cuda_substep.hpp) per
// precision: its four instances (order 2 or 4, first stage or not) are most of the
// run's device code, so they compile in units of their own, in parallel with the run
// (cuda_run.cuh), which sees the declaration alone.
#pragma once
#include "common/cuda_check.hpp"
#include "cuda_substep.hpp"
#include "cuda_write_ghosts.cuh"
#include "model.hpp"

namespace numpipe::ns::substep {

// The solid nodes and IB points of the block, after the sub-step kernels: a solid node
// keeps its values (Q = 0), an IB point's stencils get their ghost values (model.hpp
// apply_ib) before the update. `in` is not written by the sub-step (its output goes to
// the other buffer); the sub-step kernels overwrote Q at these points, so an IB point's
// Q lives in tb.qsite between sub-steps.
template <class T, int ORDER, bool FIRST>
__global__ void ib_kernel(Geometry g, Coefs<T> cf, T a, T b, T dt, const T* __restrict__ kol, Ptrs<T> in, Ptrs<T> out,
                          Ptrs<T> q, DevTables<T> tb, const IbSite* __restrict__ sites, long long count, bool fuse) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= count) return;
  const IbSite s = sites[x];
  const long long c = g.at(s.i, s.j, s.k);
  const int idx[3] = {s.i, s.j, s.k};
  if (s.point < 0) {
    for (int v = 0; v < kVars; ++v) {
      const T on = pinned_point(g, s.i, s.j, s.k, v) ? T(0) : in.v[v][c];
      q.v[v][c] = T(0);
      out.v[v][c] = on;
      if (fuse) write_ghosts(g, out.v[v], c, idx, v, on);
    }
    return;
  }
  const long long str[3] = {g.si(), g.sj(), g.flat_z() ? 0 : 1};
  PointStencil<T> p;
  for (int ax = 0; ax < 3; ++ax)
    for (int v = 0; v < kVars; ++v)
      for (int o = 0; o < 5; ++o) p.s[ax][v][o] = in.v[v][c + (o - 2) * str[ax]];
  apply_ib(p, tb.points[s.point]);
  T l[kVars];
  rhs<ORDER>(p, cf, kol[s.j], l);
  if (cf.sponge) add_sponge(p, cf, T(tb.sigma[0][s.i] + tb.sigma[1][s.j] + tb.sigma[2][s.k]), l);
  for (int v = 0; v < kVars; ++v) {
    T qn;
    if constexpr (FIRST) qn = dt * l[v];
    else qn = a * tb.qsite[x * kVars + v] + dt * l[v];
    T on = p.s[0][v][2] + b * qn;
    if (pinned_point(g, s.i, s.j, s.k, v)) qn = on = T(0);
    tb.qsite[x * kVars + v] = qn;
    q.v[v][c] = qn;
    out.v[v][c] = on;
    if (fuse) write_ghosts(g, out.v[v], c, idx, v, on);
  }
}

template <class T>
void launch_ib_step(const SubstepCall<T>& c, const IbSite* sites, long long count) {
  const T a = T(kRkA[c.stage]), b = T(kRkB[c.stage]);
  const int threads = 128;
  const unsigned blocks = (unsigned)((count + threads - 1) / threads);
  auto go = [&](auto kernel) {
    kernel<<<blocks, threads, 0, c.stream>>>(c.g, c.cf, a, b, c.dt, c.kol, c.in, c.out, c.q, c.tb, sites, count, c.fuse);
  };
  if (c.order == 4) c.stage == 0 ? go(ib_kernel<T, 4, true>) : go(ib_kernel<T, 4, false>);
  else c.stage == 0 ? go(ib_kernel<T, 2, true>) : go(ib_kernel<T, 2, false>);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

}  // namespace numpipe::ns::substep
