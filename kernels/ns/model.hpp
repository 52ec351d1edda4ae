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

  NUMPIPE_HD_INLINE long long sj() const { return n[2] + 2 * kGhost; }
  NUMPIPE_HD_INLINE long long si() const { return (long long)(n[1] + 2 * kGhost) * (n[2] + 2 * kGhost); }
  NUMPIPE_HD_INLINE long long padded() const { return (long long)(n[0] + 2 * kGhost) * si(); }
  NUMPIPE_HD_INLINE long long points() const { return (long long)n[0] * n[1] * n[2]; }
  // Index of interior point (i, j, k); ghosts are i = -2, -1 and n, n+1.
  NUMPIPE_HD_INLINE long long at(int i, int j, int k) const {
    return (long long)(i + kGhost) * si() + (long long)(j + kGhost) * sj() + (k + kGhost);
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
        for (int o = 0; o < 5; ++o) s[o] = double(v[c + (o - 2) * str[a]]);
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
