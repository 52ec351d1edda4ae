// The OpenMP backend of fluid-step (spec/fluid.md).
//
// Everything but lin_solve works on the natural layout, one row per OpenMP
// iteration (every cell independent: the same bits for any thread count).
// lin_solve is where the time goes (5 solves of 20 red-black iterations a
// step): each pass over memory reads x and x0 row by row into a small rolling
// window of rows that stays in cache, split into red and black planes (so that
// each half-sweep is a unit-stride, vectorizable loop), runs up to all the
// solve's iterations there as a skewed wavefront over rows, and writes x back. Each thread owns a strip of rows
// and recomputes a halo of 2 rows per fused iteration from the pass's input,
// so strips never wait for each other. Red-black Gauss-Seidel is independent
// of the order of the cells within a colour, so every schedule that keeps the
// dependencies (red k after black k-1 of rows y-1..y+1, black k after red k of
// rows y-1..y+1, the edges after black) computes the same bits.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "fluid.hpp"

namespace numpipe::fluid {
namespace {

constexpr int kMaxTemporal = 32;  // red-black iterations fused per pass over memory, at most
constexpr std::size_t kWindowBytes = 384 * 1024;  // a thread's rolling window, to stay in L2

// One half-sweep of one row of colour planes: out[i] = gs_cell(X0[i], L[i], R[i], D[i], U[i]).
// Compiled for AVX-512, AVX2 and the baseline, chosen at run time; every version
// rounds alike (IEEE division, no contraction).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NUMPIPE_FLUID_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NUMPIPE_FLUID_CLONES
#endif
template <class T>
inline void sweep_row_impl(T* __restrict out, const T* __restrict L, const T* __restrict R, const T* __restrict D,
                           const T* __restrict U, const T* __restrict X0, int i_lo, int i_hi, T a, T c) {
#pragma omp simd
  for (int i = i_lo; i <= i_hi; ++i) out[i] = gs_cell(X0[i], L[i], R[i], D[i], U[i], a, c);
}
NUMPIPE_FLUID_CLONES void sweep_row(float* out, const float* L, const float* R, const float* D, const float* U,
                                    const float* X0, int i_lo, int i_hi, float a, float c) {
  sweep_row_impl(out, L, R, D, U, X0, i_lo, i_hi, a, c);
}
NUMPIPE_FLUID_CLONES void sweep_row(double* out, const double* L, const double* R, const double* D, const double* U,
                                    const double* X0, int i_lo, int i_hi, double a, double c) {
  sweep_row_impl(out, L, R, D, U, X0, i_lo, i_hi, a, c);
}

template <class T>
class CpuSolver final : public Solver<T> {
 public:
  CpuSolver(const Params& p, const Fields<T>& init)
      : p_(p), n_(p.n), w_(p.n + 2), wp_((p.n + 3) / 2), f_(init) {
    scratch_.assign(f_.cells(), T(0));
    threads_ = std::max(1, omp_get_max_threads());
    // Blocks of rows x columns, one window each at a time: columns so that a
    // window (2k+2 rows of x and x0, both colours) stays within kWindowBytes (in
    // L2) with k = the solve's iterations; row strips so that every thread has
    // a block; then k as large as keeps the halo (2 cells per iteration on each
    // side) within a sixth of the block.
    const int k0 = std::min(p.iters, kMaxTemporal);
    std::size_t window_bytes = kWindowBytes;
    if (const char* e = std::getenv("NUMPIPE_FLUID_CPU_WINDOW")) window_bytes = std::strtoull(e, nullptr, 10);  // tests
    const int per_row = static_cast<int>(std::min<std::size_t>(
        window_bytes / (static_cast<std::size_t>(2 * k0 + 2) * 4 * sizeof(T)), 1u << 28));
    const int cb = std::max(64, 2 * per_row - 4 * k0);  // columns per block
    ncols_ = std::max(1, (w_ + cb - 1) / cb);
    nstrips_ = std::clamp((threads_ + ncols_ - 1) / ncols_, 1, std::max(1, w_ / 32));
    const int block_w = (w_ + ncols_ - 1) / ncols_, block_h = w_ / nstrips_;
    kmax_ = std::clamp(std::min(block_w, block_h) / 12, 1, k0);
    wpw_ = (block_w + 1) / 2 + 2 * kmax_ + 2;
    windows_.resize(static_cast<std::size_t>(threads_));
    for (auto& win : windows_) win.assign(static_cast<std::size_t>(2 * kmax_ + 2) * 4 * wpw_, T(0));
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
  std::vector<T> scratch_;               // the other buffer of a solve's passes
  std::vector<std::vector<T>> windows_;  // rolling windows, one per strip
  int threads_ = 1, nstrips_ = 1, ncols_ = 1, kmax_ = 1, wpw_ = 1;  // blocks, fused iterations, window pairs
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

  void diffuse(int b, std::vector<T>& x, const T* x0, double k) {
    const T a = diffuse_a(T(p_.dt), T(k), n_);
    lin_solve(b, x, x0, a, T(1) + T(4) * a);
  }

  void project(std::vector<T>& uvec, std::vector<T>& vvec, std::vector<T>& pvec, std::vector<T>& dvec) {
    const int n = n_, w = w_;
    T* u = uvec.data();
    T* v = vvec.data();
    T* pr = pvec.data();
    T* div = dvec.data();
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
    lin_solve(kScalar, pvec, div, T(1), T(4));
    pr = pvec.data();
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

  // out <- q advected by (U, V), interior only; up to three fields by one velocity,
  // the interpolation weights computed once per cell.
  void advect(const T* U, const T* V, std::initializer_list<std::pair<T*, const T*>> jobs) const {
    const int n = n_, w = w_;
    const T dt0 = T(p_.dt) * T(n);
    std::pair<T*, const T*> job[3] = {};
    int count = 0;
    for (const auto& j : jobs) job[count++] = j;
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i) {
        const std::int64_t c = ix(i, j, w);
        const AdvectWeights<T> q = advect_weights(w, n, i, j, U[c], V[c], dt0);
        job[0].first[c] = advect_apply(job[0].second, q);
        if (count > 1) job[1].first[c] = advect_apply(job[1].second, q);
        if (count > 2) job[2].first[c] = advect_apply(job[2].second, q);
      }
  }

  // ---- lin_solve: temporally blocked passes over colour planes -----------------------
  // Plane c of a window row holds the row's cells with (x + y) % 2 == c at x / 2.
  struct PassArgs {
    const T* src;  // x before the pass (natural layout)
    T* dst;        // x after the pass (natural layout)
    const T* x0;   // natural layout
    T a, c;
    int b, k;
  };

  // One block (rows [r0, r1), columns [c0, c1), c0 even) of one pass of k fused
  // iterations (see the file comment). The window covers the block and its halo
  // of 2k cells on each side; per row slot it holds x's two colour planes and
  // x0's, pair j of a plane being column lo_x + 2j or lo_x + 2j + 1.
  void pass_block(const PassArgs& A, int r0, int r1, int c0, int c1, T* win) const {
    const int n = n_, w = w_, k = A.k, ns = 2 * kmax_ + 2, wpw = wpw_;
    const int lo = std::max(0, r0 - 2 * k), hi = std::min(w, r1 + 2 * k);
    const int lo_x = std::max(0, c0 - 2 * k), hi_x = std::min(w, c1 + 2 * k);  // lo_x even
    const int base = lo_x / 2, cols = hi_x - lo_x;
    const int upd_lo = std::max(1, lo + 1), upd_hi = std::min(n, hi - 2);
    const int x_lo = std::max(1, lo_x + 1), x_hi = std::min(n, hi_x - 2);  // columns the sweeps update
    auto row = [&](int c, int y) { return win + (static_cast<std::size_t>(y % ns) * 4 + c) * wpw; };
    auto x0row = [&](int c, int y) { return win + (static_cast<std::size_t>(y % ns) * 4 + 2 + c) * wpw; };
    const T a = A.a, cc = A.c;
    const bool neg_u = A.b == kU, neg_v = A.b == kV;

    auto split = [&](const T* in, T* even, T* odd) {  // columns lo_x.. of a natural row
      for (int j = 0; j < cols / 2; ++j) {
        even[j] = in[2 * j];
        odd[j] = in[2 * j + 1];
      }
      if (cols & 1) even[cols / 2] = in[cols - 1];
    };
    auto load = [&](int y) {
      const int ce = y & 1, co = (y + 1) & 1;  // colours of even and odd x in row y
      split(A.src + ix(lo_x, y, w), row(ce, y), row(co, y));
      split(A.x0 + ix(lo_x, y, w), x0row(ce, y), x0row(co, y));
    };
    auto store = [&](int y) {
      const T* even = row(y & 1, y);
      const T* odd = row((y + 1) & 1, y);
      T* out = A.dst + ix(lo_x, y, w);
      const int j0 = (c0 - lo_x) / 2, j1 = (c1 - lo_x) / 2;  // whole pairs of [c0, c1)
      for (int j = j0; j < j1; ++j) {
        out[2 * j] = even[j];
        out[2 * j + 1] = odd[j];
      }
      if ((c1 - lo_x) & 1) out[c1 - 1 - lo_x] = even[j1];
    };
    auto sweep = [&](int c, int y) {
      const int par = (c + y) & 1;  // x parity of this colour's cells in row y
      const int i_lo = (x_lo - par + 1) / 2, i_hi = (x_hi - par) / 2;  // global pairs, x = 2i + par
      if (i_hi < i_lo) return;
      const T* mid = row(1 - c, y) - base;
      sweep_row(row(c, y) - base, mid + par - 1, mid + par, row(1 - c, y - 1) - base, row(1 - c, y + 1) - base,
                x0row(c, y) - base, i_lo, i_hi, a, cc);
    };
    auto cell = [&](int x, int y) -> T& { return row((x + y) & 1, y)[(x - lo_x) / 2]; };
    auto edges = [&](int y) {  // set_bnd's x[0,y], x[n+1,y] from the row's interior
      if (lo_x == 0) cell(0, y) = neg_u ? -cell(1, y) : cell(1, y);
      if (hi_x == w) cell(n + 1, y) = neg_u ? -cell(n, y) : cell(n, y);
    };
    auto copy_row = [&](int to, int from) {  // set_bnd's rows 0 and n+1
      for (int x = std::max(1, lo_x); x <= std::min(n, hi_x - 1); ++x) cell(x, to) = neg_v ? -cell(x, from) : cell(x, from);
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
      if (ys >= r0 && ys < r1 && ys >= lo) store(ys);
    }
  }

  // lin_solve(b, x, x0, a, c): the result lands in x (the vector may trade its
  // storage with the scratch buffer: callers take data() after the call).
  void lin_solve(int b, std::vector<T>& x, const T* x0, T a, T c) {
    const T* src = x.data();
    T* dst = scratch_.data();
    T* other = x.data();
    const int passes = (p_.iters + kmax_ - 1) / kmax_;
    for (int q = 0; q < passes; ++q) {
      const int k = p_.iters / passes + (q < p_.iters % passes ? 1 : 0);
      const PassArgs A{src, dst, x0, a, c, b, k};
      const int ns = nstrips_, nc = ncols_, w = w_;
#pragma omp parallel for schedule(static, 1)
      for (int item = 0; item < ns * nc; ++item) {
        const int s = item / nc, cb = item % nc;
        const int c0 = 2 * static_cast<int>(static_cast<std::int64_t>((w + 1) / 2) * cb / nc);
        const int c1 = std::min(w, 2 * static_cast<int>(static_cast<std::int64_t>((w + 1) / 2) * (cb + 1) / nc));
        pass_block(A, static_cast<int>(static_cast<std::int64_t>(w) * s / ns),
                   static_cast<int>(static_cast<std::int64_t>(w) * (s + 1) / ns), c0, c1,
                   windows_[static_cast<std::size_t>(omp_get_thread_num())].data());
      }
      src = dst;
      std::swap(dst, other);
    }
    if (src != x.data()) x.swap(scratch_);
    set_corners(x.data());
  }

  // ---- the step ----------------------------------------------------------------------------
  void step() {
    react();
    // Buffers by role; a solve may trade a vector's storage with the scratch, so
    // pointers are taken at each use.
    auto& F = f_;
    if (p_.scheme == Scheme::seed) {
      add_source(F.d.data(), F.d0.data());
      add_source(F.u.data(), F.u0.data());
      add_source(F.v.data(), F.v0.data());
      diffuse(kScalar, F.d0, F.d.data(), p_.diff);
      diffuse(kU, F.u0, F.u.data(), p_.visc);
      diffuse(kV, F.v0, F.v.data(), p_.visc);
      project(F.u0, F.v0, F.u, F.v);
      advect(F.u0.data(), F.v0.data(), {{F.d.data(), F.d0.data()}, {F.u.data(), F.u0.data()}, {F.v.data(), F.v0.data()}});
      set_bnd(kU, F.u.data());
      set_bnd(kV, F.v.data());
      project(F.u, F.v, F.u0, F.v0);
    } else {
      add_source(F.u.data(), F.u0.data());
      add_source(F.v.data(), F.v0.data());
      diffuse(kU, F.u0, F.u.data(), p_.visc);
      diffuse(kV, F.v0, F.v.data(), p_.visc);
      project(F.u0, F.v0, F.u, F.v);
      advect(F.u0.data(), F.v0.data(), {{F.u.data(), F.u0.data()}, {F.v.data(), F.v0.data()}});
      set_bnd(kU, F.u.data());
      set_bnd(kV, F.v.data());
      project(F.u, F.v, F.u0, F.v0);
      add_source(F.d.data(), F.d0.data());
      diffuse(kScalar, F.d0, F.d.data(), p_.diff);
      advect(F.u.data(), F.v.data(), {{F.d.data(), F.d0.data()}});
      set_bnd(kScalar, F.d.data());
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
    // solve: an even number of passes of up to K fused iterations (cuda.cu's
    // tile_config), each reading x and x0 over the extended tile (the output
    // tile and its halo of 2K cells) and writing x once.
#ifdef NUMPIPE_FLUID_CUDA
    return sz * (common + 9 + 5 * cuda_pass_bytes_per_cell(p.iters, element_size));
#endif
  }
  // react (3 read, 3 zeroed), add_source (3 x 3); each solve: one pass per up to
  // 32 iterations (fewer on many threads and small grids: see kmax_), reading x
  // and x0 and writing x (the halo rows of the strips are read twice; not counted).
  const double passes = std::ceil(static_cast<double>(p.iters) / kMaxTemporal);
  return sz * (common + 6 + 9 + 5 * passes * 3);
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
