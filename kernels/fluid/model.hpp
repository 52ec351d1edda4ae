// The stable-fluids model of seed 003 (spec/fluid.md), once for both backends:
// parameters, the grid indexing, and the per-cell formulas as NUMPIPE_HD
// functions, so that g++ (cpu.cpp) and nvcc (cuda.cu) compile the same
// arithmetic in the same order. Both backends are built without FMA
// contraction, so that the CPU and the GPU round every operation alike.
//
// Formulas: J. Stam, "Real-Time Fluid Dynamics for Games", GDC 2003 (set_bnd,
// lin_solve, diffuse, project, advect), with the seed's `react` forcing and
// its buffer discipline as ../shared/spec/fluid.md states them.
#pragma once
#include <cstdint>

#include "common/hd.hpp"

namespace numpipe::fluid {

enum class Scheme { seed, stam };
enum class Forcing { react, none };  // none: react's zeroing of the sources, never an injection

// Boundary kinds of set_bnd: the sign flips for the velocity component normal to a wall.
enum Bnd : int { kScalar = 0, kU = 1, kV = 2 };

struct Params {
  int n = 0;              // interior cells per side; arrays are (n+2) x (n+2)
  double dt = 0.1;
  double diff = 0.0;      // density diffusion
  double visc = 0.0;      // viscosity
  double force = 5.0;     // react: velocity injection scale
  double source = 100.0;  // react: density injection scale
  int iters = 20;         // red-black Gauss-Seidel iterations per lin_solve
  Scheme scheme = Scheme::seed;
  Forcing forcing = Forcing::react;
};

// react's thresholds (the seed's constants).
inline constexpr double kReactVelocityThreshold = 0.0000005;  // max of u0^2 + v0^2
inline constexpr double kReactDensityThreshold = 1.0;         // max of d0
inline constexpr int kReactLattice = 64;                       // lattice pitch of the injections

// Flat index of cell (x, y): C order [y][x], x the column (spec "Grid and fields").
NUMPIPE_HD_INLINE std::int64_t ix(int x, int y, int w) { return static_cast<std::int64_t>(y) * w + x; }

// One Gauss-Seidel cell update (Stam's lin_solve), neighbours summed in the
// order x-1, x+1, y-1, y+1.
template <class T>
NUMPIPE_HD_INLINE T gs_cell(T x0, T left, T right, T down, T up, T a, T c) {
  return (x0 + a * (left + right + down + up)) / c;
}

// diffuse's coefficient a = dt*k*N*N, evaluated left to right in T as the seed does.
template <class T>
NUMPIPE_HD_INLINE T diffuse_a(T dt, T k, int n) {
  return dt * k * static_cast<T>(n) * static_cast<T>(n);
}

// project: div = -0.5*(u[+1,0] - u[-1,0] + v[0,+1] - v[0,-1])/N.
template <class T>
NUMPIPE_HD_INLINE T divergence_cell(T ul, T ur, T vd, T vu, int n) {
  return static_cast<T>(-0.5) * (ur - ul + vu - vd) / static_cast<T>(n);
}
// project: u -= 0.5*N*(p[+1,0] - p[-1,0]) (likewise v with p[0,+1] - p[0,-1]).
template <class T>
NUMPIPE_HD_INLINE T gradient_sub(T u, T pm, T pp, int n) {
  return u - static_cast<T>(0.5) * static_cast<T>(n) * (pp - pm);
}

// advect: semi-Lagrangian back-trace from cell (x, y) by dt0*(uu, vv), dt0 = dt*N,
// clamped to [0.5, N+0.5], bilinear interpolation (Stam's advect). A NaN
// position is clamped to 0.5 so that a corrupt field never reads out of bounds.
// The weights depend on the velocity only: several fields advected by one
// velocity share them (advect_weights once, advect_apply per field).
template <class T>
struct AdvectWeights {
  std::int64_t i00, i01, i10, i11;  // flat indices of (i0,j0), (i0,j1), (i1,j0), (i1,j1)
  T s0, s1, t0, t1;
};
template <class T>
NUMPIPE_HD_INLINE AdvectWeights<T> advect_weights(int w, int n, int x, int y, T uu, T vv, T dt0) {
  T px = static_cast<T>(x) - dt0 * uu;
  T py = static_cast<T>(y) - dt0 * vv;
  const T lo = static_cast<T>(0.5);
  const T hi = static_cast<T>(n) + static_cast<T>(0.5);
  if (!(px >= lo)) px = lo;
  if (px > hi) px = hi;
  if (!(py >= lo)) py = lo;
  if (py > hi) py = hi;
  const int i0 = static_cast<int>(px), j0 = static_cast<int>(py);  // floor: px, py >= 0.5
  AdvectWeights<T> q;
  q.i00 = ix(i0, j0, w);
  q.i01 = ix(i0, j0 + 1, w);
  q.i10 = ix(i0 + 1, j0, w);
  q.i11 = ix(i0 + 1, j0 + 1, w);
  q.s1 = px - static_cast<T>(i0);
  q.s0 = static_cast<T>(1) - q.s1;
  q.t1 = py - static_cast<T>(j0);
  q.t0 = static_cast<T>(1) - q.t1;
  return q;
}
template <class T>
NUMPIPE_HD_INLINE T advect_apply(const T* q, const AdvectWeights<T>& a) {
  return a.s0 * (a.t0 * q[a.i00] + a.t1 * q[a.i01]) + a.s1 * (a.t0 * q[a.i10] + a.t1 * q[a.i11]);
}
template <class T>
NUMPIPE_HD_INLINE T advect_cell(const T* q, int w, int n, int x, int y, T uu, T vv, T dt0) {
  return advect_apply(q, advect_weights(w, n, x, y, uu, vv, dt0));
}

// set_bnd's corner: the mean of its two edge neighbours (+1/2 at all four corners;
// the seed's GPU code has -1/2 at (N+1, N+1), a bug the spec corrects).
template <class T>
NUMPIPE_HD_INLINE T corner(T a, T b) {
  return static_cast<T>(0.5) * (a + b);
}

// react's injected values: the velocity at a lattice point (x, y),
// force*1000*(N/2 - y)/(N/2) for u and force*1000*(N/2 - x)/(N/2) for v
// (integer N/2 as in the seed), and the centre values.
template <class T>
NUMPIPE_HD_INLINE T react_lattice_velocity(T force, int n, int coord) {
  return force * static_cast<T>(1000) * static_cast<T>(n / 2 - coord) / static_cast<T>(n / 2);
}
template <class T>
NUMPIPE_HD_INLINE T react_centre(T scale) {
  return scale * static_cast<T>(10);
}
template <class T>
NUMPIPE_HD_INLINE T react_lattice_density(T source) {
  return source * static_cast<T>(1000);
}

}  // namespace numpipe::fluid
