// The CPU backend's building blocks (templates, so that unit tests can drive a
// single ghost fill or sub-step): OpenMP over (i, j) lines, k innermost.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "ns.hpp"

namespace numpipe::ns {

namespace cpu {

// Fills every non-halo face's ghost layers of the four fields.
template <class T>
void fill_ghosts(const Geometry& g, T* const* f) {
  for (int axis = 0; axis < (g.flat_z() ? 2 : 3); ++axis) {
    const int b = axis == 0 ? 1 : 0, c = axis == 2 ? 1 : 2;
    const int nu = g.n[b], nw = g.n[c];
#pragma omp parallel for collapse(2) schedule(static)
    for (int side = 0; side < 2; ++side)
      for (int u = 0; u < nu; ++u)
        for (int layer = 1; layer <= kGhost; ++layer)
          for (int w = 0; w < nw; ++w) fill_ghost_point(g, f, axis, side, layer, u, w);
  }
}

// Gathers the 5-point stencils of the four variables around padded index c.
template <class T>
inline void gather(const Geometry& g, const T* const* f, long long c, PointStencil<T>& p) {
  const long long str[3] = {g.si(), g.sj(), g.flat_z() ? 0 : 1};
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < kVars; ++v)
      for (int o = 0; o < 5; ++o) p.s[a][v][o] = f[v][c + (o - 2) * str[a]];
}

// What the sub-step needs beyond the fields: the Kolmogorov table (per j), the
// sponge's rates (per index of each axis; unused unless Coefs::sponge) and the
// immersed-boundary tables (bodies.hpp; row_start null without bodies).
template <class T>
struct StepTables {
  const T* kol = nullptr;
  const T* sigma[3] = {nullptr, nullptr, nullptr};
  const int* row_start = nullptr;
  const IbEntry* entries = nullptr;
  const IbPoint<T>* points = nullptr;
};

// The new Q and Phi of one point from its stencils (IB ghosts applied when it is an IB
// point), the same operations on both backends (cuda.cu update_point). Out of line:
// a second inlined copy of rhs() in substep_impl made GCC call rhs() from the vector
// loop instead of inlining it there (25% slower steps).
template <int ORDER, bool FIRST, bool SPONGE, class T>
__attribute__((noinline)) void point_step(const Geometry& g, const T* const* in, long long c, const IbPoint<T>& ib,
                                          const Coefs<T>& cf, T a, T b, T dt, T kj, T sig, const T qold[kVars], T qn[kVars],
                                          T on[kVars]) {
  PointStencil<T> p;
  gather(g, in, c, p);
  apply_ib(p, ib);
  T l[kVars];
  rhs<ORDER>(p, cf, kj, l);
  if constexpr (SPONGE) add_sponge(p, cf, sig, l);
  for (int v = 0; v < kVars; ++v) {
    if constexpr (FIRST) qn[v] = dt * l[v];
    else qn[v] = a * qold[v] + dt * l[v];
    on[v] = p.s[0][v][2] + b * qn[v];
  }
}

// One Williamson stage: Q = a Q + dt L(in); out = in + b Q (stage 0: Q = dt L(in)).
// Reads `in` with its ghosts filled; writes the interior of `out` and `q`.
// The k loop is written for the vectoriser (the upwind choice is a select, and
// cpu.cpp is compiled with -fno-trapping-math so that it may be if-converted):
// every point still performs the same operations in the same order, so the bits do
// not depend on the vector width or the thread count. A row's solid nodes and IB
// points (its IB entries) are taken out of the vector loop: solid nodes keep their
// values, IB points are updated one by one with their ghost values.
template <int ORDER, bool FIRST, bool SPONGE, bool FLATZ, class T>
void substep_impl(const Geometry& g, const Box& box, const Coefs<T>& cf, T a, T b, T dt, const StepTables<T>& tb,
                  const T* const* in, T* const* out, T* const* q) {
  const long long si = g.si(), sj = g.sj();
  // the z stride a compile-time constant, so that the vectoriser sees contiguous rows
  // (a 2-D problem's z stencils read the point itself)
  constexpr long long sk = FLATZ ? 0 : 1;
  const long long str[3] = {si, sj, sk};
  const T* sgz = tb.sigma[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = box.lo[0]; i < box.hi[0]; ++i)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const T kj = tb.kol[j];
      const T sij = SPONGE ? tb.sigma[0][i] + tb.sigma[1][j] : T(0);
      const long long row = g.at(i, j, 0);
      const T* f0 = in[0] + row;
      const T* f1 = in[1] + row;
      const T* f2 = in[2] + row;
      const T* f3 = in[3] + row;
      T* q0 = q[0] + row;
      T* q1 = q[1] + row;
      T* q2 = q[2] + row;
      T* q3 = q[3] + row;
      T* o0 = out[0] + row;
      T* o1 = out[1] + row;
      T* o2 = out[2] + row;
      T* o3 = out[3] + row;
      // the row in segments: fluid points [ka, kb) by the vector loop, then the IB entry
      // that ends the segment (none for the last)
      const int k0 = box.lo[2], k1 = box.hi[2];
      const int r = i * g.n[1] + j;
      int e = tb.row_start ? tb.row_start[r] : 0;
      const int e1 = tb.row_start ? tb.row_start[r + 1] : 0;
      for (int ka = k0; ka < k1;) {
        while (e < e1 && tb.entries[e].k1 <= ka) ++e;  // entries before the segment (or the box)
        const int kb = e < e1 ? std::min(std::max(tb.entries[e].k0, ka), k1) : k1;
        for (int k = ka; k < kb; ++k) {
          PointStencil<T> p;
#pragma GCC unroll 3
          for (int ax = 0; ax < 3; ++ax)
#pragma GCC unroll 5
            for (int o = 0; o < 5; ++o) {
              const long long off = k + (o - 2) * str[ax];
              p.s[ax][0][o] = f0[off];
              p.s[ax][1][o] = f1[off];
              p.s[ax][2][o] = f2[off];
              p.s[ax][3][o] = f3[off];
            }
          T l[kVars];
          rhs<ORDER>(p, cf, kj, l);
          if constexpr (SPONGE) add_sponge(p, cf, T(sij + sgz[k]), l);
          T qn0, qn1, qn2, qn3;
          if constexpr (FIRST) {
            qn0 = dt * l[0], qn1 = dt * l[1], qn2 = dt * l[2], qn3 = dt * l[3];
          } else {
            qn0 = a * q0[k] + dt * l[0];
            qn1 = a * q1[k] + dt * l[1];
            qn2 = a * q2[k] + dt * l[2];
            qn3 = a * q3[k] + dt * l[3];
          }
          q0[k] = qn0, q1[k] = qn1, q2[k] = qn2, q3[k] = qn3;
          o0[k] = p.s[0][0][2] + b * qn0;
          o1[k] = p.s[0][1][2] + b * qn1;
          o2[k] = p.s[0][2][2] + b * qn2;
          o3[k] = p.s[0][3][2] + b * qn3;
        }
        if (kb >= k1) break;
        // the entry at kb: solid nodes keep their values, IB points get their ghost values
        const IbEntry x = tb.entries[e++];
        const int eb = std::min(x.k1, k1);
        for (int k = kb; k < eb; ++k) {
          const long long c = row + k;
          if (x.point < 0) {
            for (int v = 0; v < kVars; ++v) {
              q[v][c] = T(0);
              out[v][c] = in[v][c];
            }
            continue;
          }
          T qold[kVars], qn[kVars], on[kVars];
          for (int v = 0; v < kVars; ++v) qold[v] = FIRST ? T(0) : q[v][c];
          point_step<ORDER, FIRST, SPONGE>(g, in, c, tb.points[x.point], cf, a, b, dt, kj, T(sij + sgz[k]), qold, qn, on);
          for (int v = 0; v < kVars; ++v) {
            q[v][c] = qn[v];
            out[v][c] = on[v];
          }
        }
        ka = eb;
      }
      // values held at zero on walls where they are odd
      const int nz = g.n[2];
      for (int v = 0; v < kVars; ++v) {
        if (g.pinned(0, i, v) || g.pinned(1, j, v)) {
          for (int k = k0; k < k1; ++k) q[v][row + k] = out[v][row + k] = T(0);
        } else {
          if (k0 == 0 && g.pinned(2, 0, v)) q[v][row] = out[v][row] = T(0);
          if (k1 == nz && g.pinned(2, nz - 1, v)) q[v][row + nz - 1] = out[v][row + nz - 1] = T(0);
        }
      }
    }
}

// The points of `box` (default: the whole block).
template <class T>
void substep(const Geometry& g, const Coefs<T>& cf, int order, int stage, T dt, const StepTables<T>& tb, const T* const* in,
             T* const* out, T* const* q, const Box* box = nullptr) {
  const T a = T(kRkA[stage]), b = T(kRkB[stage]);
  const Box bx = box ? *box : whole_box(g);
  if (bx.empty()) return;
  auto go = [&](auto order_tag, auto first_tag, auto sponge_tag) {
    constexpr int O = decltype(order_tag)::value;
    constexpr bool F = decltype(first_tag)::value, S = decltype(sponge_tag)::value;
    if (g.flat_z()) substep_impl<O, F, S, true>(g, bx, cf, a, b, dt, tb, in, out, q);
    else substep_impl<O, F, S, false>(g, bx, cf, a, b, dt, tb, in, out, q);
  };
  using O4 = std::integral_constant<int, 4>;
  using O2 = std::integral_constant<int, 2>;
  using Y = std::true_type;
  using N = std::false_type;
  if (cf.sponge) {
    if (order == 4) stage == 0 ? go(O4{}, Y{}, Y{}) : go(O4{}, N{}, Y{});
    else stage == 0 ? go(O2{}, Y{}, Y{}) : go(O2{}, N{}, Y{});
  } else {
    if (order == 4) stage == 0 ? go(O4{}, Y{}, N{}) : go(O4{}, N{}, N{});
    else stage == 0 ? go(O2{}, Y{}, N{}) : go(O2{}, N{}, N{});
  }
}

// max |v| over the interior (a maximum: exact, in any order).
template <class T>
double max_speed(const Geometry& g, const T* const* f) {
  double m = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(max : m)
  for (int i = 0; i < g.n[0]; ++i)
    for (int j = 0; j < g.n[1]; ++j)
      for (int k = 0; k < g.n[2]; ++k) {
        const long long c = g.at(i, j, k);
        const double vx = double(f[kVx][c]), vy = double(f[kVy][c]), vz = double(f[kVz][c]);
        m = std::max(m, std::sqrt(vx * vx + vy * vy + vz * vz));
      }
  return m;
}

// The per-line terms of the diagnostics of block g (ghosts filled), lines i major.
template <class T>
void line_terms(const Geometry& g, int order, const T* const* f, std::vector<double>& sums, std::vector<double>& mdiv,
                std::vector<double>& msp) {
  const std::size_t lines = static_cast<std::size_t>(g.n[0]) * g.n[1];
  sums.assign(lines * kDiagSums, 0.0);
  mdiv.assign(lines, 0.0);
  msp.assign(lines, 0.0);
  double d1s[3];
  for (int a = 0; a < 3; ++a) d1s[a] = order == 4 ? 1.0 / (12.0 * g.h[a]) : 1.0 / (2.0 * g.h[a]);
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < g.n[0]; ++i)
    for (int j = 0; j < g.n[1]; ++j) {
      const std::size_t l = static_cast<std::size_t>(i) * g.n[1] + j;
      if (order == 4) diag_line<4>(g, f, i, j, d1s, &sums[l * kDiagSums], mdiv[l], msp[l]);
      else diag_line<2>(g, f, i, j, d1s, &sums[l * kDiagSums], mdiv[l], msp[l]);
    }
}

// The diagnostics row of the current state (ghosts filled); max |v| through *speed.
template <class T>
DiagRow diagnostics(const Geometry& g, const Params& p, int order, const T* const* f, long long step, double t, double* speed) {
  std::vector<double> sums, mdiv, msp;
  line_terms(g, order, f, sums, mdiv, msp);
  DiagRow r = finish_diagnostics(g, p, step, t, sums, mdiv, msp);
  if (speed) {
    double m = 0;
    for (double x : msp) m = std::max(m, x);
    *speed = m;
  }
  return r;
}

}  // namespace cpu
}  // namespace numpipe::ns
