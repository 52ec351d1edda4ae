// The scene path's OpenMP backend (scene.hpp, docs/fluid.md "Scenes"): Stam's
// step on NX x NY cells with per side boundaries, an obstacle mask, emitters,
// a temperature field, buoyancy and vorticity confinement: the solver of the
// scenes that do not fit the fused solver's temporally blocked passes (cpu.cpp:
// a square box with closed sides), and of any scene with
// NUMPIPE_FLUID_SCENE_TILES=0. The blocked passes compute its bits (tested).
//
// Every loop is over rows dealt to threads in chunks as they come free; each
// cell's value depends on the cells of the other colour (Gauss-Seidel's
// half-sweeps) or of other arrays only, and the maxima are exact, so the bits
// are the same for any thread count. A half-sweep computes every cell of its
// colour by Stam's formula, then the cells beside an obstacle again by the
// obstacle's (scene_model.hpp: gs_cell_solid; a per-row list), which reads only
// the other colour: the same bits as choosing the formula per cell.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "scene.hpp"
#include "tuning.hpp"

namespace numpipe::fluid {
namespace {

constexpr int kRowChunk = 16;

template <class T>
T max_of(T m, T s) {
  return s > m ? s : m;
}

template <class T>
class SceneCpuSolver final : public SceneSolver<T> {
 public:
  SceneCpuSolver(const Params& p, const Scene& s, const SceneFields<T>& init)
      : p_(p), s_(s), f_(init), nx_(s.nx), ny_(s.ny), w_(s.nx + 2) {
    inv_h_ = static_cast<T>(s.inv_h());
    dt_ = static_cast<T>(p.dt);
    dt0_ = dt_ * inv_h_;
    per_x_ = s.periodic_x();
    per_y_ = s.periodic_y();
    const std::size_t cells = f_.cells();
    if (!f_.solid.empty()) ob_ = obstacle_lists(s, f_.solid);
    vort_ = s.vorticity != 0;
    buoy_ = s.buoyancy_a != 0 || s.buoyancy_b != 0;
    if (vort_ || buoy_) {
      fu_.assign(cells, T(0));
      fv_.assign(cells, T(0));
    }
    if (vort_) wabs_.assign(cells, T(0));
    if (f_.temperature()) t0_.assign(cells, T(0));
    hw_ = (nx_ + 2) / 2 + 2;
    for (int c = 0; c < 2; ++c) {
      plane_[c].assign(static_cast<std::size_t>(ny_ + 2) * hw_, T(0));
      plane0_[c].assign(static_cast<std::size_t>(ny_ + 2) * hw_, T(0));
    }
  }

  double advance(int steps) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps; ++k) step();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void fetch(SceneFields<T>& out) override {
    out.nx = nx_;
    out.ny = ny_;
    out.d = f_.d;
    out.u = f_.u;
    out.v = f_.v;
    out.d0 = f_.d0;
    out.u0 = f_.u0;
    out.v0 = f_.v0;
    out.t = f_.t;
  }
  Counters counters() const override { return c_; }
  std::string kernels() const override {
    return std::string("scene path, rows (") + (sizeof(T) == 4 ? "fp32" : "fp64") + "), " +
           std::to_string(ob_.fix.size()) + " cells beside obstacles";
  }

 private:
  Params p_;
  Scene s_;
  SceneFields<T> f_;
  int nx_, ny_, w_;
  T inv_h_, dt_, dt0_;
  bool per_x_ = false, per_y_ = false, vort_ = false, buoy_ = false;
  std::vector<T> t0_, fu_, fv_, wabs_;
  Counters c_;
  ObstacleLists ob_;  // the obstacle (scene.hpp), empty without one

  bool has_solid() const { return !ob_.code.empty(); }
  bool solid_at(std::int64_t c) const { return has_solid() && (ob_.code[static_cast<std::size_t>(c)] & kSolidSelf); }

  // ---- boundaries ------------------------------------------------------------------------
  // set_bnd by the scene's side rules (scene.cpp).
  void set_bnd(int b, T* x, T scalar_inflow = T(0)) const { scene_set_bnd(s_, b, x, scalar_inflow); }
  // Solid cells to zero (and the ghosts beside them again, where they touch a side).
  void zero_solid(int b, T* x, T scalar_inflow = T(0)) const {
    if (!has_solid()) return;
    for (std::int64_t c : ob_.solid) x[c] = T(0);
    if (ob_.touches_side) set_bnd(b, x, scalar_inflow);
  }

  // ---- lin_solve on colour planes ------------------------------------------------------------
  // Plane c holds the cells with (i + j) % 2 == c, cell (i, j) at row j, index
  // i / 2, so that a half-sweep reads and writes unit-stride rows: for the
  // cells of row j in plane c (x = 2k + p, p = (c + j) % 2) the left and right
  // neighbours are k - 1 + p and k + p of the other plane's row j, the lower and
  // upper ones k of its rows j - 1 and j + 1. The order of the updates within a
  // colour does not matter (they read the other colour only), so the bits are
  // those of the natural layout's loops.
  int hw_ = 0;                  // plane row width
  std::vector<T> plane_[2], plane0_[2];
  T& at(int i, int j) { return plane_[(i + j) & 1][static_cast<std::size_t>(j) * hw_ + (i >> 1)]; }
  void split(const T* x, std::vector<T>* planes, bool interior) {
    const int nx = nx_, ny = ny_, w = w_, hw = hw_;
    const int j0 = interior ? 1 : 0, j1 = interior ? ny : ny + 1, i0 = interior ? 1 : 0, i1 = interior ? nx : nx + 1;
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = j0; j <= j1; ++j) {
      const T* row = x + ix(0, j, w);
      T* p0 = planes[0].data() + static_cast<std::size_t>(j) * hw;
      T* p1 = planes[1].data() + static_cast<std::size_t>(j) * hw;
      for (int i = i0; i <= i1; ++i) (((i + j) & 1) ? p1 : p0)[i >> 1] = row[i];
    }
  }
  void merge(T* x) {
    const int nx = nx_, ny = ny_, w = w_, hw = hw_;
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = 0; j <= ny + 1; ++j) {
      T* row = x + ix(0, j, w);
      const T* p0 = plane_[0].data() + static_cast<std::size_t>(j) * hw;
      const T* p1 = plane_[1].data() + static_cast<std::size_t>(j) * hw;
      for (int i = 0; i <= nx + 1; ++i) row[i] = (((i + j) & 1) ? p1 : p0)[i >> 1];
    }
  }
  // The periodic sides' ghost cells as copies of the opposite interior (after
  // every half-sweep: a cell beside a periodic side then reads its neighbour
  // across the side as it stands, like any other neighbour).
  void wrap_ghosts() {
    const int nx = nx_, ny = ny_;
    if (per_x_)
      for (int j = 1; j <= ny; ++j) {
        at(0, j) = at(nx, j);
        at(nx + 1, j) = at(1, j);
      }
    if (per_y_)
      for (int i = 1; i <= nx; ++i) {
        at(i, 0) = at(i, ny);
        at(i, ny + 1) = at(i, 1);
      }
  }
  static void sweep_row(T* __restrict out, const T* __restrict x0, const T* __restrict o, const T* __restrict od,
                        const T* __restrict ou, int p, int k0, int k1, T a, T c) {
    const T* __restrict ol = o + p - 1;
    const T* __restrict orr = o + p;
#pragma omp simd
    for (int k = k0; k <= k1; ++k) out[k] = gs_cell(x0[k], ol[k], orr[k], od[k], ou[k], a, c);
  }

  void lin_solve(int b, T* x, const T* x0, T a, T c, T scalar_inflow = T(0)) {
    const int nx = nx_, ny = ny_, hw = hw_;
    const T sigma = b == kSceneU || b == kSceneV ? T(-1) : T(1);
    const bool periodic = per_x_ || per_y_;
    split(x, plane_, false);
    split(x0, plane0_, true);
    if (periodic) wrap_ghosts();
    auto at_ref = [this](int i, int j) -> T& { return at(i, j); };
    for (int k = 0; k < p_.iters; ++k) {
      for (int colour = 0; colour < 2; ++colour) {
        T* out_plane = plane_[colour].data();
        const T* in_plane = plane_[1 - colour].data();
        const T* x0_plane = plane0_[colour].data();
#pragma omp parallel for schedule(dynamic, kRowChunk)
        for (int j = 1; j <= ny; ++j) {
          const int p = (colour + j) & 1;
          const std::size_t r = static_cast<std::size_t>(j) * hw;
          sweep_row(out_plane + r, x0_plane + r, in_plane + r, in_plane + r - hw, in_plane + r + hw, p, p ? 0 : 1,
                    (nx - p) >> 1, a, c);
          if (has_solid()) {
            const int e = ob_.row_begin[static_cast<std::size_t>(j) + 1];
            for (int q = ob_.row_begin[static_cast<std::size_t>(j)]; q < e; ++q) {
              const ObstacleLists::Fix& fx = ob_.fix[static_cast<std::size_t>(q)];
              if (((fx.i + j) & 1) != colour) continue;
              const int i = fx.i;
              out_plane[r + static_cast<std::size_t>(i >> 1)] =
                  gs_cell_solid(x0_plane[r + static_cast<std::size_t>(i >> 1)], at(i - 1, j), at(i + 1, j),
                                at(i, j - 1), at(i, j + 1), fx.code, a, c, sigma);
            }
          }
        }
        if (periodic) wrap_ghosts();
      }
      scene_set_bnd_at<T>(s_, b, at_ref, scalar_inflow);
    }
    merge(x);
    zero_solid(b, x, scalar_inflow);
  }
  void diffuse(int b, T* x, const T* x0, double k, T scalar_inflow = T(0)) {
    const T a = dt_ * static_cast<T>(k) * inv_h_ * inv_h_;  // Stam's dt*k*N*N with 1/h for N
    lin_solve(b, x, x0, a, T(1) + T(4) * a, scalar_inflow);
  }

  // f(c, i, j) for every interior cell c = (i, j), the rows dealt to the threads
  // (each cell independent of the others: the same bits for any number).
  template <class F>
  void for_interior(F&& f) const {
    const int nx = nx_, ny = ny_, w = w_;
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = 1; j <= ny; ++j)
      for (int i = 1; i <= nx; ++i) f(ix(i, j, w), i, j);
  }
  // The obstacle's code of cell c in row j (0: no obstacle near).
  int code_at(std::int64_t c, int j) const {
    return has_solid() && ob_.row_has[static_cast<std::size_t>(j)] ? ob_.code[static_cast<std::size_t>(c)] : 0;
  }

  // ---- projection ------------------------------------------------------------------------
  void project(T* u, T* v, T* pr, T* div) {
    const int w = w_;
    const T inv_h = inv_h_;
    for_interior([&](std::int64_t c, int, int j) {
      const int code = code_at(c, j);
      if (code == 0) div[c] = divergence_h(u[c - 1], u[c + 1], v[c - w], v[c + w], inv_h);
      else if (code & kSolidSelf) div[c] = T(0);
      else div[c] = divergence_solid(u[c], v[c], u[c - 1], u[c + 1], v[c - w], v[c + w], code, inv_h);
      pr[c] = T(0);
    });
    set_bnd(kSceneScalar, div);
    set_bnd(kScenePressure, pr);
    lin_solve(kScenePressure, pr, div, T(1), T(4));
    for_interior([&](std::int64_t c, int, int j) {
      const int code = code_at(c, j);
      if (code == 0) {
        u[c] = gradient_sub_h(u[c], pr[c - 1], pr[c + 1], inv_h);
        v[c] = gradient_sub_h(v[c], pr[c - w], pr[c + w], inv_h);
      } else if (code & kSolidSelf) {
        u[c] = v[c] = T(0);
      } else {  // a solid neighbour's pressure is the cell's own (zero normal gradient)
        const T pc = pr[c];
        u[c] = gradient_sub_h(u[c], code & kSolidL ? pc : pr[c - 1], code & kSolidR ? pc : pr[c + 1], inv_h);
        v[c] = gradient_sub_h(v[c], code & kSolidD ? pc : pr[c - w], code & kSolidU ? pc : pr[c + w], inv_h);
      }
    });
    set_bnd(kSceneU, u);
    set_bnd(kSceneV, v);
  }

  // ---- advection -------------------------------------------------------------------------
  // out[k] <- q[k] advected by (U, V), interior cells; solid cells get 0.
  void advect(const T* U, const T* V, std::initializer_list<std::pair<T*, const T*>> jobs) const {
    const int nx = nx_, ny = ny_, w = w_;
    const T dt0 = dt0_;
    std::pair<T*, const T*> job[2] = {};
    int count = 0;
    for (const auto& jb : jobs) job[count++] = jb;
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = 1; j <= ny; ++j)
      for (int i = 1; i <= nx; ++i) {
        const std::int64_t c = ix(i, j, w);
        if (solid_at(c)) {
          for (int k = 0; k < count; ++k) job[k].first[c] = T(0);
          continue;
        }
        const Trace<T> tx = back_trace(i, U[c], dt0, nx, per_x_);
        const Trace<T> ty = back_trace(j, V[c], dt0, ny, per_y_);
        for (int k = 0; k < count; ++k) job[k].first[c] = interpolate(job[k].second, w, tx, ty);
      }
  }
  // A scalar's solid cells beside fluid take the mean of their fluid neighbours
  // for the interpolation (so that the fluid beside an obstacle does not mix in
  // zeros), and go back to 0 after it.
  void fill_border(T* q) const {
    for (const ObstacleLists::Border& b : ob_.border) q[b.c] = border_mean(q, b);
  }
  void clear_border(T* q) const {
    for (const ObstacleLists::Border& b : ob_.border) q[b.c] = T(0);
  }
  void advect_scalar(T* out, T* q, int b, T scalar_inflow) {
    fill_border(q);
    advect(f_.u.data(), f_.v.data(), {{out, q}});
    clear_border(q);
    set_bnd(b, out, scalar_inflow);
  }

  // ---- sources and forces ------------------------------------------------------------------
  void react() {
    const std::int64_t cells = static_cast<std::int64_t>(f_.cells());
    T* d0 = f_.d0.data();
    T* u0 = f_.u0.data();
    T* v0 = f_.v0.data();
    const T lowest = -std::numeric_limits<T>::infinity();
    T mv = lowest, md = lowest;
#pragma omp parallel
    {
      T tv = lowest, td = lowest;
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < cells; ++i) {
        tv = max_of(tv, u0[i] * u0[i] + v0[i] * v0[i]);
        td = max_of(td, d0[i]);
      }
#pragma omp critical
      {
        mv = max_of(mv, tv);
        md = max_of(md, td);
      }
    }
    std::fill(f_.d0.begin(), f_.d0.end(), T(0));
    std::fill(f_.u0.begin(), f_.u0.end(), T(0));
    std::fill(f_.v0.begin(), f_.v0.end(), T(0));
    if (!t0_.empty()) std::fill(t0_.begin(), t0_.end(), T(0));
    if (p_.forcing != Forcing::react) return;
    const T force = static_cast<T>(p_.force), source = static_cast<T>(p_.source);
    const int w = w_, nx = nx_, ny = ny_;
    if (mv < T(kReactVelocityThreshold)) {
      ++c_.velocity_injections;
      u0[ix(nx / 2, ny / 2, w)] = react_centre(force);
      v0[ix(nx / 2, ny / 2, w)] = react_centre(force);
      for (int y = kReactLattice; y < ny; y += kReactLattice)
        for (int x = kReactLattice; x < nx; x += kReactLattice) {
          u0[ix(x, y, w)] = react_lattice_velocity(force, ny, y);
          v0[ix(x, y, w)] = react_lattice_velocity(force, nx, x);
        }
    }
    if (md < T(kReactDensityThreshold)) {
      ++c_.density_injections;
      d0[ix(nx / 2, ny / 2, w)] = react_centre(source);
      for (int y = kReactLattice; y < ny; y += kReactLattice)
        for (int x = kReactLattice; x < nx; x += kReactLattice) d0[ix(x, y, w)] = react_lattice_density(source);
    }
  }
  void add_source(T* x, const T* s) const {
    const std::int64_t cells = static_cast<std::int64_t>(f_.cells());
    const T dt = dt_;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < cells; ++i) x[i] += dt * s[i];
  }
  // x += dt*src, then x += dt*force, over the interior (each where given).
  void add_interior(T* x, const FieldVector<T>& src, const T* f) const {
    const T* s = src.empty() ? nullptr : src.data();
    if (!s && !f) return;
    const T dt = dt_;
    for_interior([&](std::int64_t c, int, int) {
      if (s) x[c] = x[c] + dt * s[c];
      if (f) x[c] = x[c] + dt * f[c];
    });
  }
  // Buoyancy and vorticity confinement from the state at the start of the step,
  // into fu_, fv_ (interior fluid cells; 0 in solid cells).
  void forces() {
    const int w = w_;
    const T inv_h = inv_h_;
    // the ghost cells by the sides' rules first (an input state's may be stale)
    set_bnd(kSceneU, f_.u.data());
    set_bnd(kSceneV, f_.v.data());
    const T* u = f_.u.data();
    const T* v = f_.v.data();
    T* fu = fu_.data();
    T* fv = fv_.data();
    if (vort_) {
      T* wa = wabs_.data();
      for_interior([&](std::int64_t c, int, int) {
        wa[c] = solid_at(c) ? T(0) : std::fabs(vorticity_cell(u[c - w], u[c + w], v[c - 1], v[c + 1], inv_h));
      });
      set_bnd(kSceneCopy, wa);
      const T eps_h = static_cast<T>(s_.vorticity) / inv_h;
      for_interior([&](std::int64_t c, int, int j) {
        const int code = code_at(c, j);
        if (code & kSolidSelf) {
          fu[c] = fv[c] = T(0);
          return;
        }
        const T wc = wa[c];
        confinement_force(vorticity_cell(u[c - w], u[c + w], v[c - 1], v[c + 1], inv_h), code & kSolidL ? wc : wa[c - 1],
                          code & kSolidR ? wc : wa[c + 1], code & kSolidD ? wc : wa[c - w],
                          code & kSolidU ? wc : wa[c + w], inv_h, eps_h, fu[c], fv[c]);
      });
    }
    if (buoy_) {
      const T a = static_cast<T>(s_.buoyancy_a), b = static_cast<T>(s_.buoyancy_b), amb = static_cast<T>(s_.ambient);
      const T* d = f_.d.data();
      const T* t = f_.t.empty() ? nullptr : f_.t.data();
      for_interior([&](std::int64_t c, int, int) {
        if (solid_at(c)) {
          fu[c] = fv[c] = T(0);
          return;
        }
        const T fb = buoyancy_force(d[c], t ? t[c] : amb, a, b, amb);
        fv[c] = vort_ ? fv[c] + fb : fb;
      });
    }
  }

  // ---- the step ----------------------------------------------------------------------------
  void step() {
    auto& F = f_;
    react();
    const bool forced = vort_ || buoy_;
    if (forced) forces();
    add_source(F.u.data(), F.u0.data());
    add_source(F.v.data(), F.v0.data());
    add_interior(F.u.data(), F.src_u, vort_ ? fu_.data() : nullptr);  // buoyancy has no x component
    add_interior(F.v.data(), F.src_v, forced ? fv_.data() : nullptr);
    diffuse(kSceneU, F.u0.data(), F.u.data(), p_.visc);
    diffuse(kSceneV, F.v0.data(), F.v.data(), p_.visc);
    project(F.u0.data(), F.v0.data(), F.u.data(), F.v.data());
    advect(F.u0.data(), F.v0.data(), {{F.u.data(), F.u0.data()}, {F.v.data(), F.v0.data()}});
    set_bnd(kSceneU, F.u.data());
    set_bnd(kSceneV, F.v.data());
    project(F.u.data(), F.v.data(), F.u0.data(), F.v0.data());
    add_source(F.d.data(), F.d0.data());
    add_interior(F.d.data(), F.src_d, nullptr);
    diffuse(kSceneScalar, F.d0.data(), F.d.data(), p_.diff);
    advect_scalar(F.d.data(), F.d0.data(), kSceneScalar, T(0));
    if (F.temperature()) {
      const T amb = static_cast<T>(s_.ambient);
      add_interior(F.t.data(), F.src_t, nullptr);
      diffuse(kSceneScalar, t0_.data(), F.t.data(), p_.diff, amb);
      advect_scalar(F.t.data(), t0_.data(), kSceneScalar, amb);
    }
    ++c_.steps;
  }
};

}  // namespace

bool scene_tiles_allowed() { return tuning_from_environment().scene_tiles; }

template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cpu_rows_solver(const Params& p, const Scene& s, const SceneFields<T>& init) {
  return std::make_unique<SceneCpuSolver<T>>(p, s, init);
}
template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cpu_solver(const Params& p, const Scene& s, const SceneFields<T>& init) {
  if (scene_tiles_allowed() && scene_fits_tiles(s, init)) return make_scene_cpu_blocked_solver<T>(p, s, init);
  return make_scene_cpu_rows_solver<T>(p, s, init);
}
template std::unique_ptr<SceneSolver<float>> make_scene_cpu_solver(const Params&, const Scene&,
                                                                   const SceneFields<float>&);
template std::unique_ptr<SceneSolver<double>> make_scene_cpu_solver(const Params&, const Scene&,
                                                                    const SceneFields<double>&);
template std::unique_ptr<SceneSolver<float>> make_scene_cpu_rows_solver(const Params&, const Scene&,
                                                                        const SceneFields<float>&);
template std::unique_ptr<SceneSolver<double>> make_scene_cpu_rows_solver(const Params&, const Scene&,
                                                                         const SceneFields<double>&);

}  // namespace numpipe::fluid
