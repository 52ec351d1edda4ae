// ns-step's model: 3-D weakly compressible Navier-Stokes on a collocated grid
// (seed 004, issue 6), written once for the CPU and CUDA backends.
//
//   d rho/dt = -div v
//   d v/dt   = -(v . grad) v - c^2 grad rho + (1/Re) lap v + f_ext
//
// Storage: each variable is one array of (nx+4)(ny+4)(nz+4) values, two ghost
// layers on each side, row-major with k fastest (the seed's
// P(i,j,k) = i(Ny+4)(Nz+4) + j(Nz+4) + k, here with interior indices shifted by 2).
// The kernels see one block (a subdomain with its ghost layers): the ghost layers
// of a face are filled either by a boundary rule (fill_ghost_value) or, under a
// domain decomposition, by a halo exchange; the step itself only reads memory.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "common/hd.hpp"

#if defined(__CUDA_ARCH__)
#define NS_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define NS_UNROLL
#else
#define NS_UNROLL _Pragma("GCC unroll 4")
#endif

namespace numpipe::ns {

inline constexpr int kGhost = 2;  // ghost layers per side (5-point stencils)
inline constexpr int kVars = 4;   // rho, vx, vy, vz
enum Var : int { kRho = 0, kVx = 1, kVy = 2, kVz = 3 };
inline const char* const kVarNames[kVars] = {"rho", "vx", "vy", "vz"};

// Boundary condition of a face pair (one axis).
enum class Bc : int { periodic = 0, noslip = 1, freeslip = 2, noflux = 3 };
inline const char* bc_name(Bc b) {
  switch (b) {
    case Bc::periodic: return "periodic";
    case Bc::noslip: return "noslip";
    case Bc::freeslip: return "freeslip";
    case Bc::noflux: return "noflux";
  }
  return "?";
}

// Parity of variable `var` about a wall normal to `axis` (+1 even, -1 odd).
// The wall lies on the boundary node (the seed's b = index 2 of the padded array,
// interior index 0, and likewise interior index N-1 on the far side), and ghosts
// are mirrored about it: ghost(-g) = parity * value(+g), g = 1, 2.
//   noslip:   every velocity component odd (the seed's "mirrored and inverted"), rho even
//   freeslip: the normal component odd, tangential components and rho even
//             (zero normal velocity, zero normal gradient of the tangential velocity)
//   noflux:   every variable even (zero normal gradient: with even ghosts the central
//             first-derivative stencils vanish at the wall node, as the seed shows)
NUMPIPE_HD_INLINE int wall_parity(Bc bc, int axis, int var) {
  if (var == kRho) return 1;
  switch (bc) {
    case Bc::noslip: return -1;
    case Bc::freeslip: return (var - kVx) == axis ? -1 : 1;
    default: return 1;
  }
}

// The padded layout of one block and what lies beyond each of its faces.
// Under a decomposition a face between two blocks is a halo face (filled by an
// exchange); here every face is either a wall of the global box or a periodic
// wrap onto the block itself.
enum class Face : int { wall = 0, periodic_self = 1, halo = 2 };

struct Geometry {
  int n[3] = {1, 1, 1};        // interior points of this block per axis
  long long global_n[3] = {1, 1, 1};
  long long offset[3] = {0, 0, 0};  // global index of this block's interior index 0
  Bc bc[3] = {Bc::periodic, Bc::periodic, Bc::periodic};
  Face lo[3] = {Face::periodic_self, Face::periodic_self, Face::periodic_self};
  Face hi[3] = {Face::periodic_self, Face::periodic_self, Face::periodic_self};
  double h[3] = {1, 1, 1};     // grid spacing per axis
  // Ghost layers along z: kGhost, or 0 for a 2-D problem (one periodic z point), whose
  // z stencils read the point itself (what periodic ghosts copies of it would give, so
  // the same bits) and whose rows then hold no ghost values (a 5x smaller array).
  int gk = kGhost;

  NUMPIPE_HD_INLINE bool flat_z() const { return gk == 0; }
  NUMPIPE_HD_INLINE long long sj() const { return n[2] + 2 * gk; }
  NUMPIPE_HD_INLINE long long si() const { return (long long)(n[1] + 2 * kGhost) * (n[2] + 2 * gk); }
  NUMPIPE_HD_INLINE long long padded() const { return (long long)(n[0] + 2 * kGhost) * si(); }
  NUMPIPE_HD_INLINE long long points() const { return (long long)n[0] * n[1] * n[2]; }
  // Index of interior point (i, j, k); ghosts are i = -2, -1 and n, n+1.
  NUMPIPE_HD_INLINE long long at(int i, int j, int k) const {
    return (long long)(i + kGhost) * si() + (long long)(j + kGhost) * sj() + (k + gk);
  }
  // Whether interior index `idx` along `axis` is a wall node where `var` is odd
  // (held at zero: no-slip velocity, free-slip normal velocity).
  NUMPIPE_HD_INLINE bool pinned(int axis, int idx, int var) const {
    if (bc[axis] == Bc::periodic || wall_parity(bc[axis], axis, var) > 0) return false;
    return (idx == 0 && lo[axis] == Face::wall) || (idx == n[axis] - 1 && hi[axis] == Face::wall);
  }
};

// The points [lo, hi) per axis (interior indices of a block) a sub-step updates:
// the whole block, or under MPI with overlap the inner part whose stencils read no
// halo ghost (computed while the halos travel) and then the shell around it. A
// point's update does not depend on the box, so any split gives the same bits.
struct Box {
  int lo[3], hi[3];
  NUMPIPE_HD_INLINE bool empty() const { return lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]; }
};

inline Box whole_box(const Geometry& g) { return Box{{0, 0, 0}, {g.n[0], g.n[1], g.n[2]}}; }

// The inner box (two points in from every halo face) and up to six shell slabs
// that cover the rest of the block without overlap: along x (whole j, k), then y
// (inner i, whole k), then z (inner i, j). Returns the number of shell boxes.
inline int overlap_boxes(const Geometry& g, Box& inner, Box shell[6]) {
  inner = whole_box(g);
  for (int a = 0; a < 3; ++a) {
    if (g.lo[a] == Face::halo) inner.lo[a] = g.n[a] < kGhost ? g.n[a] : kGhost;
    if (g.hi[a] == Face::halo) inner.hi[a] = g.n[a] - kGhost > inner.lo[a] ? g.n[a] - kGhost : inner.lo[a];
  }
  int count = 0;
  for (int a = 0; a < 3; ++a) {
    Box lo = whole_box(g), hi = whole_box(g);
    for (int e = 0; e < a; ++e) {
      lo.lo[e] = hi.lo[e] = inner.lo[e];
      lo.hi[e] = hi.hi[e] = inner.hi[e];
    }
    lo.hi[a] = inner.lo[a];
    hi.lo[a] = inner.hi[a];
    if (!lo.empty()) shell[count++] = lo;
    if (!hi.empty()) shell[count++] = hi;
  }
  return count;
}

// Halo faces under a decomposition. A face buffer holds [v][layer][u][w] (u, w: the
// other two axes in increasing order, over the block's interior extent): this many
// values for a face normal to `axis`.
NUMPIPE_HD_INLINE long long face_values(const Geometry& g, int axis) {
  return (long long)kVars * kGhost * g.n[axis == 0 ? 1 : 0] * g.n[axis == 2 ? 1 : 2];
}
// Element e of the face beyond `side` of `axis`: its variable (*var) and the padded
// index of its point, in the two interior layers next to the side (ghost = false:
// what is sent) or in the two ghost layers beyond it (ghost = true: what the
// neighbour's face fills).
NUMPIPE_HD_INLINE long long face_point(const Geometry& g, int axis, int side, bool ghost, long long e, int* var) {
  const int b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
  const int nw = g.n[c], nu = g.n[b];
  int idx[3];
  idx[c] = int(e % nw);
  idx[b] = int((e / nw) % nu);
  const int layer = int((e / ((long long)nw * nu)) % kGhost);
  *var = int(e / ((long long)nw * nu * kGhost));
  if (ghost) idx[axis] = side == 0 ? layer - kGhost : g.n[axis] + layer;
  else idx[axis] = side == 0 ? layer : g.n[axis] - kGhost + layer;
  return g.at(idx[0], idx[1], idx[2]);
}

// Spacing: a periodic axis of length L holds N points at x = i L/N; a walled axis
// holds N points at x = i L/(N-1), nodes 0 and N-1 on the walls.
inline double spacing(Bc bc, long long n, double length) {
  return bc == Bc::periodic ? length / double(n) : length / double(n - 1);
}

// Williamson (1980) low-storage RK3, "Low-storage Runge-Kutta schemes",
// J. Comput. Phys. 35, 48-56, the 3-stage scheme of his table 1 as the issue gives it:
//   Q = a_k Q + dt L(Phi);  Phi = Phi + b_k Q,  k = 1..3.
inline constexpr double kRkA[3] = {0.0, -5.0 / 9.0, -153.0 / 128.0};
inline constexpr double kRkB[3] = {1.0 / 3.0, 15.0 / 16.0, 8.0 / 15.0};

// Per-run constants of the right-hand side, precomputed in the working precision.
template <class T>
struct Coefs {
  T d1[3];    // order 4: 1/(12 h); order 2: 1/(2 h)
  T d2[3];    // order 4: 1/(12 h^2); order 2: 1/h^2
  T up[3];    // order 4: 1/(6 h);  order 2: 1/h
  T c2;       // c^2
  T nu;       // 1/Re
  T force[3]; // constant body force
  T kol_amp;  // Kolmogorov forcing f_x += kol_amp * sin(2 pi kol_k y / ly), tabulated per j
  // Sponge (fringe) toward the free stream: d Phi/dt += sigma(x) (target - Phi), sigma
  // tabulated per axis (SpongeTables); off when `sponge` is false.
  bool sponge;
  T target[kVars];
};

template <class T>
inline Coefs<T> make_coefs(const Geometry& g, int order, double c, double re, const double force[3], double kol_amp) {
  Coefs<T> cf{};
  for (int a = 0; a < 3; ++a) {
    double h = g.h[a];
    cf.d1[a] = T(order == 4 ? 1.0 / (12.0 * h) : 1.0 / (2.0 * h));
    cf.d2[a] = T(order == 4 ? 1.0 / (12.0 * h * h) : 1.0 / (h * h));
    cf.up[a] = T(order == 4 ? 1.0 / (6.0 * h) : 1.0 / h);
    cf.force[a] = T(force[a]);
  }
  cf.c2 = T(c * c);
  cf.nu = T(1.0 / re);
  cf.kol_amp = T(kol_amp);
  cf.sponge = false;
  for (int v = 0; v < kVars; ++v) cf.target[v] = T(v == kRho ? 1 : 0);
  return cf;
}

// ---- one-dimensional stencils on five values f[0..4] = f(i-2) .. f(i+2) ----------
// Fourth order (issue 6; Fornberg 1988 weights): f' = (f[i-2] - 8 f[i-1] + 8 f[i+1] - f[i+2]) / (12 h),
// f'' = (-f[i-2] + 16 f[i-1] - 30 f[i] + 16 f[i+1] - f[i+2]) / (12 h^2) (the seed's Laplacian).
// Second order: (f[i+1] - f[i-1]) / (2 h) and (f[i-1] - 2 f[i] + f[i+1]) / h^2.
template <int ORDER, class T>
NUMPIPE_HD_INLINE T d1(const T* f, T s) {
  if constexpr (ORDER == 4) return ((f[0] - f[4]) + T(8) * (f[3] - f[1])) * s;
  else return (f[3] - f[1]) * s;
}
template <int ORDER, class T>
NUMPIPE_HD_INLINE T d2(const T* f, T s) {
  if constexpr (ORDER == 4) return (T(16) * (f[1] + f[3]) - (f[0] + f[4]) - T(30) * f[2]) * s;
  else return ((f[1] + f[3]) - T(2) * f[2]) * s;
}
// u * df/dx by upwinding on the sign of the advecting velocity u.
// Order 4 uses the upwind-biased 4-point third-order stencil (Taylor expansion; the
// biased family of Kawamura & Kuwahara 1984 without their 4th-difference term):
//   u > 0: (f[i-2] - 6 f[i-1] + 3 f[i] + 2 f[i+1]) / (6 h)
//   u < 0: (-2 f[i-1] - 3 f[i] + 6 f[i+1] - f[i+2]) / (6 h)
// Order 2 uses first-order upwinding: (f[i] - f[i-1]) / h or (f[i+1] - f[i]) / h.
template <int ORDER, class T>
NUMPIPE_HD_INLINE T upwind(T u, const T* f, T s) {
#ifdef __CUDA_ARCH__
  // device: evaluate only the chosen side (the form measured in bench/results-ns.md)
  T d;
  if constexpr (ORDER == 4) {
    d = u > T(0) ? (f[0] - T(6) * f[1] + T(3) * f[2] + T(2) * f[3])
                 : (T(6) * f[3] - T(2) * f[1] - T(3) * f[2] - f[4]);
  } else {
    d = u > T(0) ? (f[2] - f[1]) : (f[3] - f[2]);
  }
  return u * (d * s);
#else
  // host: both one-sided differences, then a select (branch-free); the same
  // operations on the chosen side, so the same value
  T dp, dm;
  if constexpr (ORDER == 4) {
    dp = f[0] - T(6) * f[1] + T(3) * f[2] + T(2) * f[3];
    dm = T(6) * f[3] - T(2) * f[1] - T(3) * f[2] - f[4];
  } else {
    dp = f[2] - f[1];
    dm = f[3] - f[2];
  }
  const T d = u > T(0) ? dp : dm;
  return u * (d * s);
#endif
}

// The stencils of all four variables at one point: st[axis][var][0..4].
template <class T>
struct PointStencil {
  T s[3][kVars][5];
};

// L(Phi) at one point (issue 6's equations). kol: the tabulated Kolmogorov term at
// this point's j (0 when unused). out[var] = d var / dt.
template <int ORDER, class T>
NUMPIPE_HD_INLINE void rhs(const PointStencil<T>& p, const Coefs<T>& cf, T kol, T out[kVars]) {
  const T u[3] = {p.s[0][kVx][2], p.s[0][kVy][2], p.s[0][kVz][2]};
  T div = T(0);
NS_UNROLL
  for (int a = 0; a < 3; ++a) div += d1<ORDER>(p.s[a][kVx + a], cf.d1[a]);
  out[kRho] = -div;
NS_UNROLL
  for (int c = 0; c < 3; ++c) {
    const int v = kVx + c;
    T adv = T(0), lap = T(0);
NS_UNROLL
    for (int a = 0; a < 3; ++a) {
      adv += upwind<ORDER>(u[a], p.s[a][v], cf.up[a]);
      lap += d2<ORDER>(p.s[a][v], cf.d2[a]);
    }
    T grad_rho = d1<ORDER>(p.s[c][kRho], cf.d1[c]);
    out[v] = -adv - cf.c2 * grad_rho + cf.nu * lap + cf.force[c];
  }
  out[kVx] += kol;
}

// The sponge's relaxation toward the free stream (Coefs::target) at rate sigma.
template <class T>
NUMPIPE_HD_INLINE void add_sponge(const PointStencil<T>& p, const Coefs<T>& cf, T sigma, T out[kVars]) {
NS_UNROLL
  for (int v = 0; v < kVars; ++v) out[v] += sigma * (cf.target[v] - p.s[0][v][2]);
}

// Value to store in a ghost point of `var` beyond a wall, from its mirror image.
template <class T>
NUMPIPE_HD_INLINE T ghost_from_mirror(Bc bc, int axis, int var, T mirror) {
  return wall_parity(bc, axis, var) > 0 ? mirror : -mirror;
}

// Whether `var` is held at zero at interior point (i, j, k) (a wall node where it is odd).
NUMPIPE_HD_INLINE bool pinned_point(const Geometry& g, int i, int j, int k, int var) {
  return g.pinned(0, i, var) || g.pinned(1, j, var) || g.pinned(2, k, var);
}

// Fills ghost point `layer` (1 or 2) beyond side `side` (0 low, 1 high) of `axis`
// at interior position (u, w) of the other two axes (in increasing axis order), for
// all variables. Periodic: the wrapped interior value; wall: the mirror image about
// the wall node times the variable's parity. Halo faces are left to the exchange.
// Only face ghosts are filled: the stencils are axis-aligned and never read edges
// or corners of the ghost region. Each ghost point reads interior points only, so
// the points may be filled in any order or in parallel.
template <class T>
NUMPIPE_HD_INLINE void fill_ghost_point(const Geometry& g, T* const* f, int axis, int side, int layer, int u, int w) {
  const Face face = side == 0 ? g.lo[axis] : g.hi[axis];
  if (face == Face::halo) return;
  const int b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
  const int nn = g.n[axis];
  const int gi = side == 0 ? -layer : nn - 1 + layer;
  int src;
  if (face == Face::periodic_self) src = ((gi % nn) + nn) % nn;
  else src = side == 0 ? layer : nn - 1 - layer;
  int di[3], si[3];
  di[b] = si[b] = u;
  di[c] = si[c] = w;
  di[axis] = gi;
  si[axis] = src;
  const long long d = g.at(di[0], di[1], di[2]), s = g.at(si[0], si[1], si[2]);
  for (int v = 0; v < kVars; ++v)
    f[v][d] = face == Face::periodic_self ? f[v][s] : ghost_from_mirror(g.bc[axis], axis, v, f[v][s]);
}

// ---- immersed bodies (bodies.hpp builds the tables from the body description) -------
// Nodes inside a body or on its surface are solid: they hold their values (zero
// velocity, the bodies being at rest; the density they had) and no fluid stencil reads
// them. A fluid point whose 5-point stencil reaches a solid node along an axis is an
// immersed-boundary (IB) point: along that grid line, the values its stencil reads at
// the solid nodes are replaced by ghost values built from the same line's fluid values
// and the position where the line cuts the surface - a ghost-cell method applied one
// grid direction at a time (the "local directional ghost cell" approach of Berthelsen
// and Faltinsen, J. Comput. Phys. 227 (2008) 4354-4397):
//   velocity: the odd reflection about the surface point: ghost(-s) = -u(+s), u(+s)
//     interpolated linearly between the line's known values (zero on the surface, the
//     fluid nodes). No-slip holds on the surface and a ghost value errs by O(h^2).
//   density: linear extrapolation of the line's two fluid values nearest the surface,
//     also O(h^2). The density gets no condition of its own: with the velocity imposed,
//     the wall pressure follows from the acoustic wave arriving at the wall.
// With the surface on a node this is the box walls' rule for the velocity (odd ghosts
// about the wall node). Ghost values depend only on the stencil itself, so an IB point
// needs no other data than its stencil (and the block halos suffice under MPI).

// One entry of an (i, j) row's list (sorted by k0): a run of solid nodes [k0, k1)
// (point < 0) or the IB point k0 (k1 = k0 + 1), `point` its index in the point table.
struct IbEntry {
  int k0, k1, point;
};

// An IB point: the distance, in units of h along the axis, from the point to the
// surface toward -axis (side 0) and +axis (side 1) when a solid node lies within kGhost
// nodes that way, else 0.
template <class T>
struct IbPoint {
  T dist[3][2];
};

// What point (i, j, k) of a block is: kIbFluid, kIbSolid, or an IB point's index.
inline constexpr int kIbFluid = -2, kIbSolid = -1;
NUMPIPE_HD_INLINE int ib_lookup(const int* row_start, const IbEntry* entries, int row, int k) {
  const int e1 = row_start[row + 1];
  for (int e = row_start[row]; e < e1; ++e) {
    const IbEntry x = entries[e];
    if (x.k0 > k) break;
    if (k < x.k1) return x.point < 0 ? kIbSolid : x.point;
  }
  return kIbFluid;
}

// Ghost values on the low side of one grid line's stencil s[v][0..4] (positions -2..2
// in units of h, the point at 0), the surface at -d0 (0 < d0 <= 2) and, when d1 > 0,
// another at +d1. Reads fluid values only and writes the solid nodes' entries of `out`
// (a copy of s), so both sides can be done from the same s.
template <class T>
NUMPIPE_HD_INLINE void ib_low_side(const T (&s)[kVars][5], T d0, T d1, T (&out)[kVars][5]) {
  // known points of the line, in increasing position: the low surface, nodes -2..2
  // where fluid, the high surface
  T pos[7];
  bool ok[7];
  pos[0] = -d0;
  ok[0] = true;
NS_UNROLL
  for (int n = -2; n <= 2; ++n) {
    pos[n + 3] = T(n);
    ok[n + 3] = T(n) > -d0 && (d1 <= T(0) || T(n) < d1);
  }
  pos[6] = d1;
  ok[6] = d1 > T(0);
  // the first fluid node above the surface (-1 when d0 > 1, else 0) and the next one
  const bool far = d0 > T(1);
  const bool next_ok = far ? ok[3] : ok[4];
NS_UNROLL
  for (int o = 0; o < 2; ++o) {
    const int n = o - 2;
    if (T(-n) < d0) continue;  // node n is fluid
    // velocity: minus the value at the mirror image m = -2 d0 - n, interpolated between
    // the known points that bracket it (the surface values are zero)
    const T m = T(-2) * d0 - T(n);
    int lo = 0, hi = -1;
    T plo = pos[0], phi = T(0);
NS_UNROLL
    for (int c = 1; c < 7; ++c) {
      if (ok[c] && pos[c] <= m) lo = c, plo = pos[c];
      if (ok[c] && pos[c] >= m && hi < 0) hi = c, phi = pos[c];
    }
    T wlo = T(1), whi = T(0);
    if (hi >= 0 && phi > plo) {
      whi = (m - plo) / (phi - plo);
      wlo = T(1) - whi;
    }
NS_UNROLL
    for (int v = kVx; v < kVars; ++v) {
      T vlo = T(0), vhi = T(0);
NS_UNROLL
      for (int c = 1; c < 6; ++c) {
        if (c == lo) vlo = s[v][c - 1];
        if (c == hi) vhi = s[v][c - 1];
      }
      out[v][o] = -(wlo * vlo + whi * vhi);
    }
    // density: linear extrapolation from the first two fluid nodes above the surface
    const T r0 = far ? s[kRho][1] : s[kRho][2];
    const T r1 = far ? s[kRho][2] : s[kRho][3];
    const T f0 = far ? T(-1) : T(0);
    out[kRho][o] = next_ok ? r0 + (r0 - r1) * (f0 - T(n)) : r0;
  }
}

// Replaces the solid nodes' values in the stencils of IB point `ib` (all three axes).
template <class T>
NUMPIPE_HD_INLINE void apply_ib(PointStencil<T>& p, const IbPoint<T>& ib) {
NS_UNROLL
  for (int a = 0; a < 3; ++a) {
    const T d0 = ib.dist[a][0], d1 = ib.dist[a][1];
    if (d0 <= T(0) && d1 <= T(0)) continue;
    T out[kVars][5], rev[kVars][5], rout[kVars][5];
NS_UNROLL
    for (int v = 0; v < kVars; ++v)
NS_UNROLL
      for (int o = 0; o < 5; ++o) {
        out[v][o] = p.s[a][v][o];
        rev[v][o] = p.s[a][v][4 - o];
        rout[v][o] = rev[v][o];
      }
    if (d0 > T(0)) ib_low_side(p.s[a], d0, d1, out);
    if (d1 > T(0)) ib_low_side(rev, d1, d0, rout);
NS_UNROLL
    for (int v = 0; v < kVars; ++v)
NS_UNROLL
      for (int o = 0; o < 5; ++o) p.s[a][v][o] = o < 2 ? out[v][o] : o > 2 ? rout[v][4 - o] : p.s[a][v][o];
  }
}

// ---- forces on the bodies ------------------------------------------------------------
// F = integral over the surface of (-p n + nu (grad v) n) dA, p = c^2 (rho - 1) (the
// model's pressure over the reference density 1, whose constant part integrates to
// zero; nu grad v is the stress whose divergence is the model's nu lap v; no flux
// term, the surface being at rest). The integral of g n_a over a closed surface is the
// sum over the grid lines along a of g times the line's sign at each surface crossing,
// times the area h_b h_c per line; so every crossing of a grid line contributes
// -p sigma dA to F_a and nu dv/dd dA to F (dv/dd the derivative along the line into
// the fluid, where the line meets the surface): second order, from the same lines'
// values the ghost rule uses.
struct Crossing {
  long long at;      // padded index of the fluid node F0 next to the surface (in its block)
  long long key;     // global order: (global flat index of F0) * 6 + 2 * axis + side
  int axis, side;    // the surface lies toward side (0: -axis, 1: +axis) of F0
  int body;          // the body the surface belongs to
  int fluid_beyond;  // how many of the next two nodes away from the surface are fluid (0..2)
  double e0;         // distance F0 -> surface in units of h
  double area;       // h_b h_c
};

template <class T>
NUMPIPE_HD_INLINE void crossing_force(const Geometry& g, const T* const* f, const Crossing& x, double c2, double nu,
                                      double out[3]) {
  const long long str[3] = {g.si(), g.sj(), 1};
  const long long step = x.side == 0 ? str[x.axis] : -str[x.axis];  // away from the surface
  const double sigma = x.side == 0 ? 1.0 : -1.0;                   // n_a of the body's outward normal
  const double e0 = x.e0, h = g.h[x.axis];
  // density on the surface: linear extrapolation from F0 and F1
  const double r0 = double(f[kRho][x.at]);
  const double rs = x.fluid_beyond >= 1 ? r0 + (r0 - double(f[kRho][x.at + step])) * e0 : r0;
  const double p = c2 * (rs - 1.0);
  // dv/dd on the surface from the quadratic through (0, 0) and two fluid nodes: F0 and
  // F1, or F1 and F2 when F0 lies closer than h/2 to the surface (better conditioned)
  const bool skip = e0 < 0.5 && x.fluid_beyond >= 2;
  const int m1 = skip ? 1 : 0;
  const double d1 = e0 + m1, d2 = d1 + 1;
  for (int c = 0; c < 3; ++c) {
    const double a = double(f[kVx + c][x.at + m1 * step]);
    double slope;
    if (skip || x.fluid_beyond >= 1) {
      const double b = double(f[kVx + c][x.at + (m1 + 1) * step]);
      slope = (a * d2 * d2 - b * d1 * d1) / (d1 * d2 * (d2 - d1));
    } else {
      slope = a / d1;
    }
    out[c] = nu * slope / h * x.area;
  }
  out[x.axis] -= p * sigma * x.area;
}

// ---- derived fields for snapshots -----------------------------------------------------
enum Derived : int {
  kVorticityX = 0, kVorticityY, kVorticityZ, kVorticityMagnitude, kQCriterion, kDerivedCount
};
inline const char* const kDerivedNames[kDerivedCount] = {"vorticity_x", "vorticity_y", "vorticity_z",
                                                         "vorticity_magnitude", "q_criterion"};

// Vorticity and Q = (|Omega|^2 - |S|^2) / 2 = -(1/2) sum g_ab g_ba (g the velocity
// gradient) at a point, from its stencils (IB ghost values applied), central differences
// of the run's order.
template <int ORDER, class T>
NUMPIPE_HD_INLINE void derived_point(const PointStencil<T>& p, const double d1s[3], double out[kDerivedCount]) {
  double gr[3][3];  // gr[a][c] = d v_c / d x_a
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      double s[5];
      for (int o = 0; o < 5; ++o) s[o] = double(p.s[a][kVx + c][o]);
      gr[a][c] = d1<ORDER>(s, d1s[a]);
    }
  const double wx = gr[1][2] - gr[2][1], wy = gr[2][0] - gr[0][2], wz = gr[0][1] - gr[1][0];
  double q = 0;
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) q += gr[a][c] * gr[c][a];
  out[kVorticityX] = wx;
  out[kVorticityY] = wy;
  out[kVorticityZ] = wz;
  out[kVorticityMagnitude] = std::sqrt(wx * wx + wy * wy + wz * wz);
  out[kQCriterion] = -0.5 * q;
}

// ---- diagnostics: per-point terms (summed per (i, j) line, then in a fixed order) ---
enum Diag : int { kDiagKe = 0, kDiagEns = 1, kDiagMass = 2, kDiagSums = 3 };

// Quadrature weight of interior index idx along an axis: 1, or 1/2 on a wall node
// (trapezoidal rule, so that the discrete mass is conserved exactly with
// odd-normal-velocity walls).
NUMPIPE_HD_INLINE double quad_weight(const Geometry& g, int axis, int idx) {
  if (g.bc[axis] == Bc::periodic) return 1.0;
  if ((idx == 0 && g.lo[axis] == Face::wall) || (idx == g.n[axis] - 1 && g.hi[axis] == Face::wall)) return 0.5;
  return 1.0;
}

// Sums and maxima over one line (i, j, k = 0..nz-1) of the padded fields (ghosts
// filled): sums[kDiagKe] = sum w |v|^2/2, sums[kDiagEns] = sum w |omega|^2/2,
// sums[kDiagMass] = sum w rho; max_div = max |div v|, max_speed = max |v|.
template <int ORDER, class T>
NUMPIPE_HD_INLINE void diag_line(const Geometry& g, const T* const* f, int i, int j, const double* d1s, double sums[kDiagSums],
                                 double& max_div, double& max_speed) {
  const double wij = quad_weight(g, 0, i) * quad_weight(g, 1, j);
  const long long str[3] = {g.si(), g.sj(), 1};
  double ke = 0, ens = 0, mass = 0, mdiv = 0, msp = 0;
  for (int k = 0; k < g.n[2]; ++k) {
    const long long c = g.at(i, j, k);
    // grad[a][comp] = d v_comp / d x_a
    double grad[3][3];
    for (int a = 0; a < 3; ++a)
      for (int comp = 0; comp < 3; ++comp) {
        const T* v = f[kVx + comp];
        double s[5];
        for (int o = 0; o < 5; ++o) s[o] = double(v[a == 2 && g.flat_z() ? c : c + (o - 2) * str[a]]);
        grad[a][comp] = d1<ORDER>(s, d1s[a]);
      }
    const double vx = double(f[kVx][c]), vy = double(f[kVy][c]), vz = double(f[kVz][c]);
    const double w = wij * quad_weight(g, 2, k);
    const double v2 = vx * vx + vy * vy + vz * vz;
    const double wx = grad[1][2] - grad[2][1], wy = grad[2][0] - grad[0][2], wz = grad[0][1] - grad[1][0];
    ke += w * 0.5 * v2;
    ens += w * 0.5 * (wx * wx + wy * wy + wz * wz);
    mass += w * double(f[kRho][c]);
    const double div = std::fabs(grad[0][0] + grad[1][1] + grad[2][2]);
    if (div > mdiv || div != div) mdiv = div;
    const double sp = std::sqrt(v2);
    if (sp > msp || sp != sp) msp = sp;
  }
  sums[kDiagKe] = ke;
  sums[kDiagEns] = ens;
  sums[kDiagMass] = mass;
  max_div = mdiv;
  max_speed = msp;
}

// Explicit stability estimate of RK3 for this scheme: the imaginary-axis limit of
// Williamson's RK3 (sqrt 3) over the largest acoustic/advective eigenvalue, and its
// real-axis limit (about 2.51) over the largest viscous one. kappa1 = max |k h| of the
// first-derivative stencil (1.372 for order 4, 1 for order 2); kappa2 = max (k h)^2 of
// the second-derivative stencil (16/3 for order 4, 4 for order 2).
inline double stable_dt(const Geometry& g, int order, double max_speed, double c, double re) {
  const double kappa1 = order == 4 ? 1.3722 : 1.0, kappa2 = order == 4 ? 16.0 / 3.0 : 4.0;
  double inv_h2 = 0;
  for (int a = 0; a < 3; ++a)
    if (g.global_n[a] > 1) inv_h2 += 1.0 / (g.h[a] * g.h[a]);
  if (inv_h2 == 0) inv_h2 = 1.0 / (g.h[0] * g.h[0]);
  const double wave = kappa1 * (max_speed + c) * std::sqrt(inv_h2);
  const double visc = kappa2 * inv_h2 / re;
  const double dt_wave = wave > 0 ? std::sqrt(3.0) / wave : INFINITY;
  const double dt_visc = visc > 0 ? 2.51 / visc : INFINITY;
  return dt_wave < dt_visc ? dt_wave : dt_visc;
}

// The time step from --cfl: cfl * min(h) / (max|v| + c), capped by the viscous limit
// 0.15 h_min^2 Re (a 3-D bound for the order-4 Laplacian with RK3).
inline double cfl_dt(const Geometry& g, double cfl, double max_speed, double c, double re) {
  double hmin = INFINITY;
  for (int a = 0; a < 3; ++a)
    if (g.global_n[a] > 1 && g.h[a] < hmin) hmin = g.h[a];
  if (!(hmin < INFINITY)) hmin = g.h[0];
  double dt = cfl * hmin / (max_speed + c);
  double dv = 0.15 * hmin * hmin * re;
  return dt < dv ? dt : dv;
}

}  // namespace numpipe::ns
