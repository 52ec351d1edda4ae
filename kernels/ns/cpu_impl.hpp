// The CPU backend's building blocks (templates, so that unit tests can drive a
// single ghost fill or sub-step): OpenMP over (i, j) lines, k innermost.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ns.hpp"

namespace numpipe::ns {

namespace cpu {

// Fills every non-halo face's ghost layers of the four fields.
template <class T>
void fill_ghosts(const Geometry& g, T* const* f) {
  for (int axis = 0; axis < 3; ++axis) {
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
  const long long str[3] = {g.si(), g.sj(), 1};
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < kVars; ++v)
      for (int o = 0; o < 5; ++o) p.s[a][v][o] = f[v][c + (o - 2) * str[a]];
}

// One Williamson stage: Q = a Q + dt L(in); out = in + b Q (stage 0: Q = dt L(in)).
// Reads `in` with its ghosts filled; writes the interior of `out` and `q`.
template <int ORDER, bool FIRST, class T>
void substep_impl(const Geometry& g, const Coefs<T>& cf, T a, T b, T dt, const T* kol, const T* const* in, T* const* out,
                  T* const* q) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < g.n[0]; ++i)
    for (int j = 0; j < g.n[1]; ++j) {
      const T kj = kol[j];
      const long long row = g.at(i, j, 0);
      for (int k = 0; k < g.n[2]; ++k) {
        const long long c = row + k;
        PointStencil<T> p;
        gather(g, in, c, p);
        T l[kVars];
        rhs<ORDER>(p, cf, kj, l);
        for (int v = 0; v < kVars; ++v) {
          T qn;
          if constexpr (FIRST) qn = dt * l[v];
          else qn = a * q[v][c] + dt * l[v];
          T on = p.s[0][v][2] + b * qn;
          if (pinned_point(g, i, j, k, v)) qn = on = T(0);
          q[v][c] = qn;
          out[v][c] = on;
        }
      }
    }
}

template <class T>
void substep(const Geometry& g, const Coefs<T>& cf, int order, int stage, T dt, const T* kol, const T* const* in,
             T* const* out, T* const* q) {
  const T a = T(kRkA[stage]), b = T(kRkB[stage]);
  if (order == 4) {
    if (stage == 0) substep_impl<4, true>(g, cf, a, b, dt, kol, in, out, q);
    else substep_impl<4, false>(g, cf, a, b, dt, kol, in, out, q);
  } else {
    if (stage == 0) substep_impl<2, true>(g, cf, a, b, dt, kol, in, out, q);
    else substep_impl<2, false>(g, cf, a, b, dt, kol, in, out, q);
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

// The diagnostics row of the current state (ghosts filled); max |v| through *speed.
template <class T>
DiagRow diagnostics(const Geometry& g, const Params& p, int order, const T* const* f, long long step, double t, double* speed) {
  const std::size_t lines = static_cast<std::size_t>(g.n[0]) * g.n[1];
  std::vector<double> sums(lines * kDiagSums), mdiv(lines), msp(lines);
  double d1s[3];
  for (int a = 0; a < 3; ++a) d1s[a] = order == 4 ? 1.0 / (12.0 * g.h[a]) : 1.0 / (2.0 * g.h[a]);
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < g.n[0]; ++i)
    for (int j = 0; j < g.n[1]; ++j) {
      const std::size_t l = static_cast<std::size_t>(i) * g.n[1] + j;
      if (order == 4) diag_line<4>(g, f, i, j, d1s, &sums[l * kDiagSums], mdiv[l], msp[l]);
      else diag_line<2>(g, f, i, j, d1s, &sums[l * kDiagSums], mdiv[l], msp[l]);
    }
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
