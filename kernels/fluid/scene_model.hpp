// The scene path of fluid-step (the stam scheme on a user's scene: NX x NY cells,
// per side boundaries, obstacles, emitters, buoyancy, vorticity confinement):
// its per-cell formulas, once for both backends (NUMPIPE_HD, compiled without
// FMA contraction like model.hpp), so that the CPU and the GPU round alike.
//
// Sources: J. Stam, "Real-Time Fluid Dynamics for Games", GDC 2003 (the step);
// R. Fedkiw, J. Stam, H. W. Jensen, "Visual Simulation of Smoke", SIGGRAPH 2001
// (buoyancy; vorticity confinement). Where the scene has no
// feature (square, length 1, closed sides, nothing else), every formula here
// evaluates Stam's in the same order (1/h is then exactly N), so the scene path
// computes the bits of reference.hpp's stam step (a unit test holds it to them).
#pragma once
#include <cmath>
#include <cstdint>

#include "model.hpp"

namespace numpipe::fluid {

// Boundary kinds of the scene's set_bnd: Stam's three and the pressure (which
// differs at open sides: p = 0 there), and a plain zero-gradient copy.
enum SceneBnd : int { kSceneScalar = 0, kSceneU = 1, kSceneV = 2, kScenePressure = 3, kSceneCopy = 4 };

// What a side is: closed wall (Stam's: normal velocity mirrored, free-slip),
// open (zero-gradient outflow, pressure 0), periodic (paired with the opposite
// side), inflow (a given velocity into the box, clean fluid, zero-gradient pressure).
enum class SideKind : int { closed = 0, open = 1, periodic = 2, inflow = 3 };
enum SideIndex : int { kLeft = 0, kRight = 1, kBottom = 2, kTop = 3 };

// A ghost value from the adjacent interior value x: copy, negate, or a constant.
enum GhostMode : int { kGhostCopy = 0, kGhostNegate = 1, kGhostConst = 2 };
NUMPIPE_HD_INLINE int ghost_mode(int b, int side, int kind) {
  const bool normal = (b == kSceneU && side <= kRight) || (b == kSceneV && side >= kBottom);
  switch (kind) {
    case static_cast<int>(SideKind::closed):
      return (b == kSceneU || b == kSceneV) && normal ? kGhostNegate : kGhostCopy;
    case static_cast<int>(SideKind::open):
      return b == kScenePressure ? kGhostNegate : kGhostCopy;
    case static_cast<int>(SideKind::inflow):
      return b == kScenePressure || b == kSceneCopy ? kGhostCopy : kGhostConst;
    default:
      return kGhostCopy;  // periodic sides are copies of the opposite interior, handled apart
  }
}
// The constant of an inflow side: the speed into the box for the normal
// component (sign by side), zero for the tangential one and for scalars.
template <class T>
NUMPIPE_HD_INLINE T ghost_const(int b, int side, T speed) {
  if (b == kSceneU && side == kLeft) return speed;
  if (b == kSceneU && side == kRight) return -speed;
  if (b == kSceneV && side == kBottom) return speed;
  if (b == kSceneV && side == kTop) return -speed;
  return T(0);
}
template <class T>
NUMPIPE_HD_INLINE T ghost_value(int mode, T interior, T constant) {
  return mode == kGhostCopy ? interior : mode == kGhostNegate ? -interior : constant;
}

// Cell codes (a u1 per cell, where the scene has an obstacle): bits 0-3 say
// that the left, right, lower, upper neighbour is solid, bit 4 that the cell is.
inline constexpr std::uint8_t kSolidL = 1, kSolidR = 2, kSolidD = 4, kSolidU = 8, kSolidSelf = 16;
NUMPIPE_HD_INLINE int solid_neighbours(int code) {
  return (code & 1) + ((code >> 1) & 1) + ((code >> 2) & 1) + ((code >> 3) & 1);
}

// One Gauss-Seidel update of a fluid cell beside solid cells: a solid
// neighbour's value is sigma times the cell's own (sigma = +1: zero normal
// gradient, for pressure and scalars; -1: zero at the face, no-slip, for the
// velocity components), solved for the cell:
//   x = (x0 + a * (sum of fluid neighbours)) / (c - a * sigma * m),  m solid neighbours.
// Its two halves: the fluid neighbours' sum (for code 0 Stam's left + right +
// down + up, in his order), and the divisor.
template <class T>
NUMPIPE_HD_INLINE T fluid_neighbour_sum(T left, T right, T down, T up, int code) {
  const T l = code & kSolidL ? T(0) : left;
  const T r = code & kSolidR ? T(0) : right;
  const T d = code & kSolidD ? T(0) : down;
  const T u = code & kSolidU ? T(0) : up;
  return l + r + d + u;
}
template <class T>
NUMPIPE_HD_INLINE T solid_divisor(int code, T a, T c, T sigma) {
  return c - a * (sigma * static_cast<T>(solid_neighbours(code)));
}
template <class T>
NUMPIPE_HD_INLINE T gs_cell_solid(T x0, T left, T right, T down, T up, int code, T a, T c, T sigma) {
  return (x0 + a * fluid_neighbour_sum(left, right, down, up, code)) / solid_divisor(code, a, c, sigma);
}

// Stam's divergence and gradient with 1/h in place of N (the same bits where 1/h = N).
template <class T>
NUMPIPE_HD_INLINE T divergence_h(T ul, T ur, T vd, T vu, T inv_h) {
  return static_cast<T>(-0.5) * (ur - ul + vu - vd) / inv_h;
}
// A solid neighbour's normal velocity is minus the cell's: no flux through the face.
template <class T>
NUMPIPE_HD_INLINE T divergence_solid(T uc, T vc, T ul, T ur, T vd, T vu, int code, T inv_h) {
  return divergence_h(code & kSolidL ? -uc : ul, code & kSolidR ? -uc : ur, code & kSolidD ? -vc : vd,
                      code & kSolidU ? -vc : vu, inv_h);
}
template <class T>
NUMPIPE_HD_INLINE T gradient_sub_h(T u, T pm, T pp, T inv_h) {
  return u - static_cast<T>(0.5) * inv_h * (pp - pm);
}

// Semi-Lagrangian back-trace along one axis from cell index x by dt0*vel
// (dt0 = dt/h). A closed, open or inflow axis: Stam's position x - dt0*vel
// clamped to [0.5, n + 0.5]. A periodic axis: the offset -dt0*vel split into
// whole cells and a fraction that do not depend on x (so a shifted domain gives
// the same bits), the cell index wrapped into [1, n].
template <class T>
struct Trace {
  int i0, i1;
  T s0, s1;
};
template <class T>
NUMPIPE_HD_INLINE Trace<T> back_trace(int x, T vel, T dt0, int n, bool periodic) {
  Trace<T> t;
  if (!periodic) {
    T px = static_cast<T>(x) - dt0 * vel;
    const T lo = static_cast<T>(0.5), hi = static_cast<T>(n) + static_cast<T>(0.5);
    if (!(px >= lo)) px = lo;
    if (px > hi) px = hi;
    t.i0 = static_cast<int>(px);
    t.i1 = t.i0 + 1;
    t.s1 = px - static_cast<T>(t.i0);
  } else {
    T off = -(dt0 * vel);
    const T big = static_cast<T>(1 << 20);
    if (!(off >= -big)) off = -big;  // NaN too
    if (off > big) off = big;
    const T fl = std::floor(off);
    t.s1 = off - fl;
    int i = (x - 1 + static_cast<int>(fl)) % n;
    if (i < 0) i += n;
    t.i0 = i + 1;
    t.i1 = t.i0 == n ? 1 : t.i0 + 1;
  }
  t.s0 = static_cast<T>(1) - t.s1;
  return t;
}
// Bilinear interpolation of q (row width w) at the traced point: Stam's
// s0*(t0*q[i0,j0] + t1*q[i0,j1]) + s1*(t0*q[i1,j0] + t1*q[i1,j1]).
template <class T>
NUMPIPE_HD_INLINE T interpolate(const T* q, int w, const Trace<T>& tx, const Trace<T>& ty) {
  return tx.s0 * (ty.s0 * q[ix(tx.i0, ty.i0, w)] + ty.s1 * q[ix(tx.i0, ty.i1, w)]) +
         tx.s1 * (ty.s0 * q[ix(tx.i1, ty.i0, w)] + ty.s1 * q[ix(tx.i1, ty.i1, w)]);
}

// Vorticity (2-D, a scalar) by central differences: w = dv/dx - du/dy.
template <class T>
NUMPIPE_HD_INLINE T vorticity_cell(T u_down, T u_up, T v_left, T v_right, T inv_h) {
  return static_cast<T>(0.5) * inv_h * ((v_right - v_left) - (u_up - u_down));
}
// Vorticity confinement (Fedkiw, Stam and Jensen 2001): eta = grad |w|,
// N = eta/|eta|, f = eps h (N x w): in 2-D f = eps h (N_y w, -N_x w). Zero where
// |eta| = 0. `wl`..`wu` are |w| at the four neighbours.
template <class T>
NUMPIPE_HD_INLINE void confinement_force(T w, T wl, T wr, T wd, T wu, T inv_h, T eps_h, T& fx, T& fy) {
  const T ex = static_cast<T>(0.5) * inv_h * (wr - wl);
  const T ey = static_cast<T>(0.5) * inv_h * (wu - wd);
  const T len = std::sqrt(ex * ex + ey * ey);
  if (!(len > T(0))) {
    fx = fy = T(0);
    return;
  }
  fx = eps_h * ((ey / len) * w);
  fy = -(eps_h * ((ex / len) * w));
}
// Buoyancy (Fedkiw, Stam and Jensen 2001): f = -A d + B (T - T_amb), upward (+y).
template <class T>
NUMPIPE_HD_INLINE T buoyancy_force(T d, T temp, T a, T b, T ambient) {
  return -(a * d) + b * (temp - ambient);
}

// What react leaves in source buffer `field` at cell (x, y) of an nx x ny box:
// model.hpp's react_source with each axis's own size (the lattice below nx and
// ny, the centre at (nx/2, ny/2), u scaled by ny and v by nx); the same where nx = ny.
template <class T>
NUMPIPE_HD_INLINE T scene_react_source(int field, int x, int y, int nx, int ny, bool velocity, bool density, T force,
                                       T source) {
  if (field == kFieldD ? !density : !velocity) return T(0);
  const bool lattice = x % kReactLattice == 0 && y % kReactLattice == 0 && x >= kReactLattice && x < nx &&
                       y >= kReactLattice && y < ny;
  if (lattice) {
    if (field == kFieldD) return react_lattice_density(source);
    return field == kFieldU ? react_lattice_velocity(force, ny, y) : react_lattice_velocity(force, nx, x);
  }
  if (x == nx / 2 && y == ny / 2) return react_centre(field == kFieldD ? source : force);
  return T(0);
}

}  // namespace numpipe::fluid
