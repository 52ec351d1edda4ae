// The OpenMP backend of fluid-step (spec/fluid.md).
//
// Everything but lin_solve works on the natural layout, one row per OpenMP
// iteration (every cell independent: the same bits for any thread count).
// lin_solve is where the time goes (5 solves of 20 red-black iterations a
// step): it splits the field into its red and black planes (so that each
// half-sweep is a unit-stride, vectorizable loop) and runs up to kTemporal
// iterations per pass over memory as a skewed wavefront over rows in a small
// rolling window of rows that stays in cache. Each thread owns a strip of rows
// and recomputes a halo of 2 rows per fused iteration from the pass's input,
// so strips never wait for each other. Red-black Gauss-Seidel is independent
// of the order of the cells within a colour, so every schedule that keeps the
// dependencies (red k after black k-1 of rows y-1..y+1, black k after red k of
// rows y-1..y+1, the edges after black) computes the same bits.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "fluid.hpp"

namespace numpipe::fluid {
namespace {

constexpr int kTemporal = 5;  // red-black iterations fused per pass over memory

template <class T>
class CpuSolver final : public Solver<T> {
 public:
  CpuSolver(const Params& p, const Fields<T>& init)
      : p_(p), n_(p.n), w_(p.n + 2), wp_((p.n + 3) / 2), f_(init) {
    const std::size_t plane = static_cast<std::size_t>(w_) * wp_;
    xa_.assign(2 * plane, T(0));
    xb_.assign(2 * plane, T(0));
    x0p_.assign(2 * plane, T(0));
    threads_ = std::max(1, omp_get_max_threads());
    nstrips_ = std::clamp(w_ / (4 * kTemporal), 1, threads_);
    windows_.resize(static_cast<std::size_t>(nstrips_));
    for (auto& win : windows_) win.assign(static_cast<std::size_t>(2 * kTemporal + 2) * 2 * wp_, T(0));
  }

  double advance(int steps) override {
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) step();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void fetch(Fields<T>& out) override { out = f_; }
  Counters counters() const override { return c_; }

 private:
  Params p_;
  int n_, w_, wp_;  // interior size, row width n+2, pairs per plane row
  Fields<T> f_;
  std::vector<T> xa_, xb_, x0p_;          // colour planes [2][w][wp]
  std::vector<std::vector<T>> windows_;  // rolling windows, one per strip
  int threads_ = 1, nstrips_ = 1;
  Counters c_;

  std::size_t plane() const { return static_cast<std::size_t>(w_) * wp_; }
  T at(const std::vector<T>& x, int i, int j) const { return x[ix(i, j, w_)]; }

  // ---- natural-layout kernels ------------------------------------------------------
  void set_bnd(int b, T* x) const {
    const int n = n_, w = w_;
    for (int i = 1; i <= n; ++i) {
      x[ix(0, i, w)] = b == kU ? -x[ix(1, i, w)] : x[ix(1, i, w)];
      x[ix(n + 1, i, w)] = b == kU ? -x[ix(n, i, w)] : x[ix(n, i, w)];
      x[ix(i, 0, w)] = b == kV ? -x[ix(i, 1, w)] : x[ix(i, 1, w)];
      x[ix(i, n + 1, w)] = b == kV ? -x[ix(i, n, w)] : x[ix(i, n, w)];
    }
    set_corners(x);
  }
  void set_corners(T* x) const {
    const int n = n_, w = w_;
    x[ix(0, 0, w)] = corner(x[ix(1, 0, w)], x[ix(0, 1, w)]);
    x[ix(n + 1, 0, w)] = corner(x[ix(n, 0, w)], x[ix(n + 1, 1, w)]);
    x[ix(0, n + 1, w)] = corner(x[ix(1, n + 1, w)], x[ix(0, n, w)]);
    x[ix(n + 1, n + 1, w)] = corner(x[ix(n, n + 1, w)], x[ix(n + 1, n, w)]);
  }

  void react() {
    const std::int64_t cells = static_cast<std::int64_t>(f_.cells());
    T* d0 = f_.d0.data();
    T* u0 = f_.u0.data();
    T* v0 = f_.v0.data();
    T mv = u0[0] * u0[0] + v0[0] * v0[0], md = d0[0];
#pragma omp parallel for schedule(static) reduction(max : mv, md)
    for (std::int64_t i = 0; i < cells; ++i) {
      T s = u0[i] * u0[i] + v0[i] * v0[i];
      mv = s > mv ? s : mv;
      md = d0[i] > md ? d0[i] : md;
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < cells; ++i) d0[i] = u0[i] = v0[i] = T(0);
    if (p_.forcing != Forcing::react) return;
    const int n = n_, w = w_;
    const T force = T(p_.force), source = T(p_.source);
    if (mv < T(kReactVelocityThreshold)) {
      ++c_.velocity_injections;
      u0[ix(n / 2, n / 2, w)] = react_centre(force);
      v0[ix(n / 2, n / 2, w)] = react_centre(force);
      for (int y = kReactLattice; y < n; y += kReactLattice)
        for (int x = kReactLattice; x < n; x += kReactLattice) {
          u0[ix(x, y, w)] = react_lattice_velocity(force, n, y);
          v0[ix(x, y, w)] = react_lattice_velocity(force, n, x);
        }
    }
    if (md < T(kReactDensityThreshold)) {
      ++c_.density_injections;
      d0[ix(n / 2, n / 2, w)] = react_centre(source);
      for (int y = kReactLattice; y < n; y += kReactLattice)
        for (int x = kReactLattice; x < n; x += kReactLattice) d0[ix(x, y, w)] = react_lattice_density(source);
    }
  }

  void add_source(T* x, const T* s) const {
    const std::int64_t cells = static_cast<std::int64_t>(f_.cells());
    const T dt = T(p_.dt);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < cells; ++i) x[i] += dt * s[i];
  }

  void diffuse(int b, T* x, const T* x0, double k) {
    const T a = diffuse_a(T(p_.dt), T(k), n_);
    lin_solve(b, x, x0, a, T(1) + T(4) * a);
  }

  void project(T* u, T* v, T* pr, T* div) {
    const int n = n_, w = w_;
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= n; ++j) {
      const T* uj = u + ix(0, j, w);
      const T* vd = v + ix(0, j - 1, w);
      const T* vu = v + ix(0, j + 1, w);
      T* dj = div + ix(0, j, w);
      T* pj = pr + ix(0, j, w);
      for (int i = 1; i <= n; ++i) {
        dj[i] = divergence_cell(uj[i - 1], uj[i + 1], vd[i], vu[i], n);
        pj[i] = T(0);
      }
    }
    set_bnd(kScalar, div);
    set_bnd(kScalar, pr);
    lin_solve(kScalar, pr, div, T(1), T(4));
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= n; ++j) {
      const T* pj = pr + ix(0, j, w);
      const T* pd = pr + ix(0, j - 1, w);
      const T* pu = pr + ix(0, j + 1, w);
      T* uj = u + ix(0, j, w);
      T* vj = v + ix(0, j, w);
      for (int i = 1; i <= n; ++i) {
        uj[i] = gradient_sub(uj[i], pj[i - 1], pj[i + 1], n);
        vj[i] = gradient_sub(vj[i], pd[i], pu[i], n);
      }
    }
    set_bnd(kU, u);
    set_bnd(kV, v);
  }

  // out <- q advected by (U, V), interior only; up to three fields by one velocity.
  void advect(const T* U, const T* V, std::initializer_list<std::pair<T*, const T*>> jobs) const {
    const int n = n_, w = w_;
    const T dt0 = T(p_.dt) * T(n);
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i) {
        const T uu = U[ix(i, j, w)], vv = V[ix(i, j, w)];
        for (const auto& job : jobs) job.first[ix(i, j, w)] = advect_cell(job.second, w, n, i, j, uu, vv, dt0);
      }
  }

  // ---- lin_solve on colour planes ------------------------------------------------------
  // Plane c holds the cells with (x + y) % 2 == c; cell (x, y) is at [c][y][x / 2].
  void to_planes(const T* x, T* P) const {
    const int w = w_, wp = wp_;
    const std::size_t pl = plane();
#pragma omp parallel for schedule(static)
    for (int y = 0; y < w; ++y) {
      T* even = P + static_cast<std::size_t>(y & 1) * pl + static_cast<std::size_t>(y) * wp;  // x even
      T* odd = P + static_cast<std::size_t>((y + 1) & 1) * pl + static_cast<std::size_t>(y) * wp;
      const T* row = x + ix(0, y, w);
      for (int i = 0; i < w / 2; ++i) {
        even[i] = row[2 * i];
        odd[i] = row[2 * i + 1];
      }
      if (w & 1) even[w / 2] = row[w - 1];
    }
  }
  void from_planes(const T* P, T* x) const {
    const int w = w_, wp = wp_;
    const std::size_t pl = plane();
#pragma omp parallel for schedule(static)
    for (int y = 0; y < w; ++y) {
      const T* even = P + static_cast<std::size_t>(y & 1) * pl + static_cast<std::size_t>(y) * wp;
      const T* odd = P + static_cast<std::size_t>((y + 1) & 1) * pl + static_cast<std::size_t>(y) * wp;
      T* row = x + ix(0, y, w);
      for (int i = 0; i < w / 2; ++i) {
        row[2 * i] = even[i];
        row[2 * i + 1] = odd[i];
      }
      if (w & 1) row[w - 1] = even[w / 2];
    }
  }

  struct PassArgs {
    const T* src;
    T* dst;
    const T* x0;
    T a, c;
    int b, k;
  };

  // One strip [r0, r1) of one pass of k fused iterations (see the file comment).
  void pass_strip(const PassArgs& A, int r0, int r1, T* win) const {
    const int n = n_, wp = wp_, k = A.k, ns = 2 * kTemporal + 2;
    const std::size_t pl = plane();
    const int lo = std::max(0, r0 - 2 * k), hi = std::min(w_, r1 + 2 * k);
    const int upd_lo = std::max(1, lo + 1), upd_hi = std::min(n, hi - 2);
    auto row = [&](int c, int y) { return win + (static_cast<std::size_t>(y % ns) * 2 + c) * wp; };
    auto prow = [&](const T* P, int c, int y) { return P + c * pl + static_cast<std::size_t>(y) * wp; };
    const T a = A.a, cc = A.c;
    const bool neg_u = A.b == kU, neg_v = A.b == kV;

    auto load = [&](int y) {
      for (int c = 0; c < 2; ++c) std::memcpy(row(c, y), prow(A.src, c, y), sizeof(T) * wp);
    };
    auto sweep = [&](int c, int y) {
      const int par = (c + y) & 1;  // x parity of this colour's cells in row y
      T* __restrict out = row(c, y);
      const T* __restrict mid = row(1 - c, y);
      const T* __restrict L = mid + par - 1;
      const T* __restrict R = mid + par;
      const T* __restrict D = row(1 - c, y - 1);
      const T* __restrict U = row(1 - c, y + 1);
      const T* __restrict X0 = prow(A.x0, c, y);
      const int i_lo = par ? 0 : 1, i_hi = (n - par) / 2;
#pragma omp simd
      for (int i = i_lo; i <= i_hi; ++i) out[i] = gs_cell(X0[i], L[i], R[i], D[i], U[i], a, cc);
    };
    auto edges = [&](int y) {  // set_bnd's x[0,y], x[n+1,y] from the row's interior
      T in0 = row((1 + y) & 1, y)[0];
      T inN = row((n + y) & 1, y)[n >> 1];
      row(y & 1, y)[0] = neg_u ? -in0 : in0;
      row((n + 1 + y) & 1, y)[(n + 1) >> 1] = neg_u ? -inN : inN;
    };
    auto copy_row = [&](int to, int from) {  // set_bnd's rows 0 and n+1, interior x only
      for (int c = 0; c < 2; ++c) {
        T* dst = row(c, to);
        const T* s = row(1 - c, from);
        const int q = (c + to) & 1;  // x parity of colour c in row `to`
        const int i_lo = q ? 0 : 1, i_hi = (n - q) / 2;
        for (int i = i_lo; i <= i_hi; ++i) dst[i] = neg_v ? -s[i] : s[i];
      }
    };

    load(lo);
    for (int t = lo; t <= hi - 1 + 2 * k; ++t) {
      if (t + 1 < hi) load(t + 1);
      for (int kk = 0; kk < k; ++kk) {
        const int yr = t - 2 * kk;
        if (yr >= upd_lo && yr <= upd_hi) sweep(0, yr);
        const int yb = yr - 1;
        if (yb >= upd_lo && yb <= upd_hi) {
          sweep(1, yb);
          edges(yb);
          if (yb == 1) copy_row(0, 1);
          if (yb == n) copy_row(n + 1, n);
        }
      }
      const int ys = t - 2 * k;
      if (ys >= r0 && ys < r1 && ys >= lo)
        for (int c = 0; c < 2; ++c) std::memcpy(A.dst + c * pl + static_cast<std::size_t>(ys) * wp, row(c, ys), sizeof(T) * wp);
    }
  }

  void lin_solve(int b, T* x, const T* x0, T a, T c) {
    to_planes(x, xa_.data());
    to_planes(x0, x0p_.data());
    T* src = xa_.data();
    T* dst = xb_.data();
    for (int rem = p_.iters; rem > 0;) {
      const int k = std::min(kTemporal, rem);
      const PassArgs A{src, dst, x0p_.data(), a, c, b, k};
      const int ns = nstrips_, w = w_;
#pragma omp parallel for schedule(static, 1)
      for (int s = 0; s < ns; ++s)
        pass_strip(A, static_cast<int>(static_cast<std::int64_t>(w) * s / ns),
                   static_cast<int>(static_cast<std::int64_t>(w) * (s + 1) / ns), windows_[static_cast<std::size_t>(s)].data());
      std::swap(src, dst);
      rem -= k;
    }
    from_planes(src, x);
    set_corners(x);
  }

  // ---- the step ----------------------------------------------------------------------------
  void step() {
    T *d = f_.d.data(), *u = f_.u.data(), *v = f_.v.data();
    T *d0 = f_.d0.data(), *u0 = f_.u0.data(), *v0 = f_.v0.data();
    react();
    if (p_.scheme == Scheme::seed) {
      add_source(d, d0);
      add_source(u, u0);
      add_source(v, v0);
      diffuse(kScalar, d0, d, p_.diff);
      diffuse(kU, u0, u, p_.visc);
      diffuse(kV, v0, v, p_.visc);
      project(u0, v0, u, v);
      advect(u0, v0, {{d, d0}, {u, u0}, {v, v0}});
      set_bnd(kU, u);
      set_bnd(kV, v);
      project(u, v, u0, v0);
    } else {
      add_source(u, u0);
      add_source(v, v0);
      diffuse(kU, u0, u, p_.visc);
      diffuse(kV, v0, v, p_.visc);
      project(u0, v0, u, v);
      advect(u0, v0, {{u, u0}, {v, v0}});
      set_bnd(kU, u);
      set_bnd(kV, v);
      project(u, v, u0, v0);
      add_source(d, d0);
      diffuse(kScalar, d0, d, p_.diff);
      advect(u, v, {{d, d0}});
      set_bnd(kScalar, d);
    }
    ++c_.steps;
  }
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_cpu_solver(const Params& p, const Fields<T>& initial) {
  return std::make_unique<CpuSolver<T>>(p, initial);
}
template std::unique_ptr<Solver<float>> make_cpu_solver(const Params&, const Fields<float>&);
template std::unique_ptr<Solver<double>> make_cpu_solver(const Params&, const Fields<double>&);

double bytes_per_cell_step(const Params& p, int element_size, bool cuda) {
  // Element reads + writes per interior cell and step, as the kernels move them
  // (docs/fluid.md). Both backends: two projections' divergence (2+2) and
  // gradient (3+2), advection (2 + 3 gathered + 3 written).
  const double sz = element_size;
  const double common = 2 * (4 + 5) + 8;
  if (cuda) {
    // react: CUB maxima (3) and the fused injection + add_source (3+3). Each
    // solve: an even number of passes of up to 5 fused iterations, each reading
    // x and x0 over the extended tile (128 x 80 for 108 x 60 outputs in fp32,
    // 128 x 48 for 108 x 28 in fp64) and writing x once.
    int passes = (p.iters + 4) / 5;
    if (passes % 2) ++passes;
    const double halo = element_size == 4 ? (128.0 * 80) / (108.0 * 60) : (128.0 * 48) / (108.0 * 28);
    return sz * (common + 9 + 5 * passes * (2 * halo + 1));
  }
  // react (3 read, 3 zeroed), add_source (3 x 3); each solve: passes of up to
  // kTemporal iterations (x and x0 read, x written; the halo rows stay in cache)
  // and the conversions to and from colour planes (x and x0 in: 2+2, x out: 1+1).
  const double passes = std::ceil(static_cast<double>(p.iters) / kTemporal);
  return sz * (common + 6 + 9 + 5 * (passes * 3 + 6));
}

template <class T>
Diagnostics diagnose(const Fields<T>& f) {
  Diagnostics g;
  const int n = f.n, w = n + 2;
  for (int j = 1; j <= n; ++j) {
    double row = 0;  // fixed order: row sums, then the rows in turn
    for (int i = 1; i <= n; ++i) {
      const double d = f.d[ix(i, j, w)], u = f.u[ix(i, j, w)], v = f.v[ix(i, j, w)];
      row += d;
      g.max_speed = std::max(g.max_speed, std::sqrt(u * u + v * v));
      const double div = 0.5 * n *
                         (static_cast<double>(f.u[ix(i + 1, j, w)]) - f.u[ix(i - 1, j, w)] +
                          static_cast<double>(f.v[ix(i, j + 1, w)]) - f.v[ix(i, j - 1, w)]);
      g.max_divergence = std::max(g.max_divergence, std::fabs(div));
    }
    g.total_density += row;
  }
  for (const auto* a : {&f.d, &f.u, &f.v})
    for (T x : *a)
      if (!std::isfinite(static_cast<double>(x))) g.finite = false;
  return g;
}
template Diagnostics diagnose(const Fields<float>&);
template Diagnostics diagnose(const Fields<double>&);

}  // namespace numpipe::fluid
