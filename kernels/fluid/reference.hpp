// A literal, single-threaded transcription of spec/fluid.md (Stam's routines in
// natural layout, one red and one black half-sweep at a time). It is slow on
// purpose: the unit tests hold the fast backends to it bit for bit.
#pragma once
#include <algorithm>
#include <vector>

#include "fluid.hpp"

namespace numpipe::fluid::reference {

template <class T>
struct Ref {
  const Params& p;
  int n, w;
  Counters counters;
  explicit Ref(const Params& params) : p(params), n(params.n), w(params.n + 2) {}

  T& at(FieldVector<T>& x, int i, int j) { return x[ix(i, j, w)]; }

  void set_bnd(int b, FieldVector<T>& x) {
    for (int i = 1; i <= n; ++i) {
      at(x, 0, i) = b == kU ? -at(x, 1, i) : at(x, 1, i);
      at(x, n + 1, i) = b == kU ? -at(x, n, i) : at(x, n, i);
      at(x, i, 0) = b == kV ? -at(x, i, 1) : at(x, i, 1);
      at(x, i, n + 1) = b == kV ? -at(x, i, n) : at(x, i, n);
    }
    at(x, 0, 0) = corner(at(x, 1, 0), at(x, 0, 1));
    at(x, n + 1, 0) = corner(at(x, n, 0), at(x, n + 1, 1));
    at(x, 0, n + 1) = corner(at(x, 1, n + 1), at(x, 0, n));
    at(x, n + 1, n + 1) = corner(at(x, n, n + 1), at(x, n + 1, n));
  }

  void lin_solve(int b, FieldVector<T>& x, FieldVector<T>& x0, T a, T c) {
    for (int k = 0; k < p.iters; ++k) {
      for (int color = 0; color < 2; ++color)
        for (int j = 1; j <= n; ++j)
          for (int i = 1; i <= n; ++i)
            if (((i + j) & 1) == color)
              at(x, i, j) = gs_cell(at(x0, i, j), at(x, i - 1, j), at(x, i + 1, j), at(x, i, j - 1), at(x, i, j + 1), a, c);
      set_bnd(b, x);
    }
  }

  void diffuse(int b, FieldVector<T>& x, FieldVector<T>& x0, double k) {
    T a = diffuse_a(T(p.dt), T(k), n);
    lin_solve(b, x, x0, a, T(1) + T(4) * a);
  }

  void project(FieldVector<T>& u, FieldVector<T>& v, FieldVector<T>& pr, FieldVector<T>& div) {
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i) {
        at(div, i, j) = divergence_cell(at(u, i - 1, j), at(u, i + 1, j), at(v, i, j - 1), at(v, i, j + 1), n);
        at(pr, i, j) = 0;
      }
    set_bnd(kScalar, div);
    set_bnd(kScalar, pr);
    lin_solve(kScalar, pr, div, T(1), T(4));
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i) {
        at(u, i, j) = gradient_sub(at(u, i, j), at(pr, i - 1, j), at(pr, i + 1, j), n);
        at(v, i, j) = gradient_sub(at(v, i, j), at(pr, i, j - 1), at(pr, i, j + 1), n);
      }
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  void advect(FieldVector<T>& out, const FieldVector<T>& q, const FieldVector<T>& U, const FieldVector<T>& V) {
    T dt0 = T(p.dt) * T(n);
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i)
        out[ix(i, j, w)] = advect_cell(q.data(), w, n, i, j, U[ix(i, j, w)], V[ix(i, j, w)], dt0);
  }

  void react(Fields<T>& f) {
    T mv = 0, md = 0;
    bool first = true;
    for (std::size_t i = 0; i < f.cells(); ++i) {
      T s = f.u0[i] * f.u0[i] + f.v0[i] * f.v0[i];
      if (first || s > mv) mv = s;
      if (first || f.d0[i] > md) md = f.d0[i];
      first = false;
    }
    std::fill(f.d0.begin(), f.d0.end(), T(0));
    std::fill(f.u0.begin(), f.u0.end(), T(0));
    std::fill(f.v0.begin(), f.v0.end(), T(0));
    if (p.forcing != Forcing::react) return;
    const T force = T(p.force), source = T(p.source);
    if (mv < T(kReactVelocityThreshold)) {
      ++counters.velocity_injections;
      at(f.u0, n / 2, n / 2) = react_centre(force);
      at(f.v0, n / 2, n / 2) = react_centre(force);
      for (int y = kReactLattice; y < n; y += kReactLattice)
        for (int x = kReactLattice; x < n; x += kReactLattice) {
          at(f.u0, x, y) = react_lattice_velocity(force, n, y);
          at(f.v0, x, y) = react_lattice_velocity(force, n, x);
        }
    }
    if (md < T(kReactDensityThreshold)) {
      ++counters.density_injections;
      at(f.d0, n / 2, n / 2) = react_centre(source);
      for (int y = kReactLattice; y < n; y += kReactLattice)
        for (int x = kReactLattice; x < n; x += kReactLattice) at(f.d0, x, y) = react_lattice_density(source);
    }
  }

  void add_source(FieldVector<T>& x, const FieldVector<T>& s) {
    const T dt = T(p.dt);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += dt * s[i];
  }

  void step(Fields<T>& f) {
    react(f);
    if (p.scheme == Scheme::seed) {
      add_source(f.d, f.d0);
      add_source(f.u, f.u0);
      add_source(f.v, f.v0);
      diffuse(kScalar, f.d0, f.d, p.diff);
      diffuse(kU, f.u0, f.u, p.visc);
      diffuse(kV, f.v0, f.v, p.visc);
      project(f.u0, f.v0, f.u, f.v);
      advect(f.d, f.d0, f.u0, f.v0);
      advect(f.u, f.u0, f.u0, f.v0);
      advect(f.v, f.v0, f.u0, f.v0);
      set_bnd(kU, f.u);
      set_bnd(kV, f.v);
      project(f.u, f.v, f.u0, f.v0);
    } else {
      // Stam's vel_step then dens_step, its pointer swaps resolved to buffers.
      add_source(f.u, f.u0);
      add_source(f.v, f.v0);
      diffuse(kU, f.u0, f.u, p.visc);
      diffuse(kV, f.v0, f.v, p.visc);
      project(f.u0, f.v0, f.u, f.v);
      advect(f.u, f.u0, f.u0, f.v0);
      set_bnd(kU, f.u);
      advect(f.v, f.v0, f.u0, f.v0);
      set_bnd(kV, f.v);
      project(f.u, f.v, f.u0, f.v0);
      add_source(f.d, f.d0);
      diffuse(kScalar, f.d0, f.d, p.diff);
      advect(f.d, f.d0, f.u, f.v);
      set_bnd(kScalar, f.d);
    }
    ++counters.steps;
  }
};

}  // namespace numpipe::fluid::reference
