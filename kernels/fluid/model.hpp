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
#include <cmath>
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

// Fields by number, for the sources react writes: 0 d0, 1 u0, 2 v0.
enum Field : int { kFieldD = 0, kFieldU = 1, kFieldV = 2 };

// What react leaves in source buffer `field` at cell (x, y): zero, or the
// injected value where react injects (the lattice overwrites the centre, as the
// seed sets the centre first). The backends never store these sparse sources:
// a solve's first pass takes them as its initial guess and add_source's
// x + dt*s is formed as the solve reads x (both in this order, so the bits are
// those of the stored version).
template <class T>
NUMPIPE_HD_INLINE T react_source(int field, int x, int y, int n, bool velocity, bool density, T force, T source) {
  if (field == kFieldD ? !density : !velocity) return T(0);
  const bool lattice = x % kReactLattice == 0 && y % kReactLattice == 0 && x >= kReactLattice && x < n &&
                       y >= kReactLattice && y < n;
  if (lattice) {
    if (field == kFieldD) return react_lattice_density(source);
    return react_lattice_velocity(force, n, field == kFieldU ? y : x);
  }
  if (x == n / 2 && y == n / 2) return react_centre(field == kFieldD ? source : force);
  return T(0);
}

// lin_solve's division by c, three ways that round alike: c a power of two
// (the projection's 4, or 1 without diffusion): a multiplication by 1/c, which
// is exact; float and 1 <= c <= 2^24: the correctly rounded reciprocal r and
// two Newton corrections by fused multiply-adds (Markstein's theorem: the
// result is the correctly rounded quotient while |num| is in [2^-87, 2^94), no
// underflow or overflow in the remainder; zero is signed by copysign; other
// values divide); otherwise the division itself.
enum class DivMode : int { divide = 0, multiply = 1, reciprocal = 2 };
template <class T>
struct Divisor {
  T c = T(1), r = T(1);
  DivMode mode = DivMode::divide;
};
template <class T>
inline Divisor<T> make_divisor(T c, bool fma_available) {
  Divisor<T> d;
  d.c = c;
  d.r = T(1) / c;
  int e = 0;
  const T m = static_cast<T>(std::frexp(static_cast<double>(c), &e));
  if (c > T(0) && m == T(0.5) && d.r * c == T(1)) d.mode = DivMode::multiply;
  else if (sizeof(T) == 4 && fma_available && c >= T(1) && c <= T(16777216)) d.mode = DivMode::reciprocal;
  return d;
}
// |num|'s exponent field range in which the reciprocal route is exact (zero aside).
inline constexpr unsigned kRecipExpLo = 40u << 23, kRecipExpSpan = 180u << 23;

}  // namespace numpipe::fluid
