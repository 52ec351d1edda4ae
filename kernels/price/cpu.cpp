// price: the CPU backend (OpenMP), the reference.
//
// One strike at a time per thread (when there are at least as many strikes as
// threads), or all threads on one strike (a team: the x phase split over columns
// j, the y phase over rows i, a barrier between them). Each value is computed by
// the same operations in the same order whatever the split, so the result has the
// same bits for any thread count.
//
// Layout R[i][j] (j fastest). The x systems (along i, one per column j) are solved
// for all columns in lockstep, so the inner loops run along j and vectorise; the
// y systems (along j, one per row i) share one matrix, factored once per step
// (YTables), and are solved eight rows at a time for instruction-level parallelism.
#include <omp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "common/error.hpp"
#include "common/progress.hpp"
#include "detail/backends.hpp"
#include "detail/grid.hpp"
#include "price.hpp"

namespace numpipe::price {
namespace {

template <class Real>
struct Tables {
  std::int64_t nx, ny, steps, ind_x, ind_y;
  std::vector<double> x, half_cell;
  std::vector<Real> px, dxx, dt_inv, qy;  // qy: [steps][ny] = py[j]*pt[g]
  YTables<Real> yt;
  // The x systems' pivots of every step, [steps][nx][ny] (they do not depend on the
  // strike), when they fit the table budget; else each strike recomputes them.
  std::vector<Real> xinv;
};

// Pivots of the x systems for step g, columns [j0, j1): the same operations as the
// strike loop's forward_cells and the CUDA backend's x_factor_kernel.
template <class Real>
void x_pivots(const Tables<Real>& t, std::int64_t g, std::int64_t j0, std::int64_t j1, Real* out) {
  const std::int64_t ny = t.ny;
  const Real dt = t.dt_inv[g];
  const Real* qy = t.qy.data() + g * ny;
  for (std::int64_t i = 0; i < t.nx; ++i) {
    const Real pxi = t.px[i], w0 = t.dxx[3 * i], w1 = t.dxx[3 * i + 1];
    const Real pxp = i > 0 ? t.px[i - 1] : Real(0), w2p = i > 0 ? t.dxx[3 * (i - 1) + 2] : Real(0);
    Real* inv = out + i * ny;
    const Real* ip = i > 0 ? out + (i - 1) * ny : nullptr;
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      const Real var = var_x(pxi, qy[j]);
      const Real h0 = half_half(var, w0), h1 = half_half(var, w1);
      const Real c_prev = -half_half(var_x(pxp, qy[j]), w2p);
      const Real beta = -h0 * (ip ? ip[j] : Real(0));
      inv[j] = thomas_inv(dt - h1, beta, c_prev);
    }
  }
}

template <class Real>
Tables<Real> make_tables(const Setup& s, std::uint64_t table_limit) {
  Tables<Real> t;
  t.nx = s.p.num_x;
  t.ny = s.p.num_y;
  t.steps = s.p.num_t - 1;
  t.ind_x = s.ind_x;
  t.ind_y = s.ind_y;
  t.x = s.x;
  t.half_cell = s.half_cell;
  t.px.assign(s.px.begin(), s.px.end());
  t.dxx.assign(s.dxx.begin(), s.dxx.end());
  t.dt_inv.assign(s.dt_inv.begin(), s.dt_inv.end());
  t.qy.resize(t.steps * t.ny);
  for (std::int64_t g = 0; g < t.steps; ++g)
    for (std::int64_t j = 0; j < t.ny; ++j) t.qy[g * t.ny + j] = Real(s.py[j]) * Real(s.pt[g]);
  t.yt = make_y_tables<Real>(s);
  const std::uint64_t table = static_cast<std::uint64_t>(t.steps) * t.nx * t.ny * sizeof(Real);
  if (table <= table_limit) {
    t.xinv.resize(t.steps * t.nx * t.ny);
    const std::int64_t blocks = (t.ny + 63) / 64;
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t g = 0; g < t.steps; ++g)
      for (std::int64_t b = 0; b < blocks; ++b)
        x_pivots(t, g, b * 64, std::min(t.ny, (b + 1) * 64), t.xinv.data() + g * t.nx * t.ny);
  }
  return t;
}

template <class Real>
struct Work {
  std::vector<Real> r, z, v, inv, zero, unext;  // inv: only without the pivot table
  Work(std::int64_t nx, std::int64_t ny, bool tabled)
      : r(nx * ny), z(nx * ny), v(nx * ny), inv(tabled ? 0 : nx * ny), zero(ny, Real(0)), unext(ny) {}
};

// The explicit terms of cell (i, j) (model.hpp explicit_x, explicit_y) with the row's
// x weights h: v[j] = the y term, kept for the y phase's right side; returns the x
// term plus it. Left, Right: j is the first or last column (its missing neighbour 0).
template <class Real, bool Left, bool Right>
inline Real explicit_cell(Real dt, Real h0, Real h1, Real h2, const Real* gy, const Real* rm, const Real* rc,
                          const Real* rp, std::int64_t j, Real* v) {
  Real u = explicit_x(dt, h0, h1, h2, rm[j], rc[j], rp[j]);
  const Real vv = explicit_y(gy[3 * j], gy[3 * j + 1], gy[3 * j + 2], Left ? Real(0) : rc[j - 1], rc[j],
                             Right ? Real(0) : rc[j + 1]);
  v[j] = vv;
  u += vv;
  return u;
}

// Explicit x and y, then the forward elimination of the x systems, for row i and
// columns [j0, j1) with 0 < j0 <= j1 < ny (no edge in j) or the edges (Edge).
template <class Real, bool Left, bool Right>
inline void forward_cells(const Tables<Real>& t, std::int64_t g, std::int64_t i, std::int64_t j0, std::int64_t j1,
                          Work<Real>& w) {
  const std::int64_t ny = t.ny, nx = t.nx;
  const Real dt = t.dt_inv[g];
  const Real* qy = t.qy.data() + g * ny;
  const Real* gy = t.yt.gy.data();
  const Real* rm = i > 0 ? w.r.data() + (i - 1) * ny : w.zero.data();
  const Real* rc = w.r.data() + i * ny;
  const Real* rp = i < nx - 1 ? w.r.data() + (i + 1) * ny : w.zero.data();
  const Real* zp = i > 0 ? w.z.data() + (i - 1) * ny : w.zero.data();
  Real* z = w.z.data() + i * ny;
  Real* v = w.v.data() + i * ny;
  if (!t.xinv.empty()) {  // pivots from the table
    const Real* tab = t.xinv.data() + g * nx * ny;
    const Real* ip = i > 0 ? tab + (i - 1) * ny : w.zero.data();
    const Real pxi = t.px[i], w0 = t.dxx[3 * i], w1 = t.dxx[3 * i + 1], w2 = t.dxx[3 * i + 2];
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      const Real var = var_x(pxi, qy[j]);
      const Real h0 = half_half(var, w0), h1 = half_half(var, w1), h2 = half_half(var, w2);
      const Real u = explicit_cell<Real, Left, Right>(dt, h0, h1, h2, gy, rm, rc, rp, j, v);
      z[j] = thomas_forward(u, -h0 * ip[j], zp[j]);
    }
    return;
  }
  const Real* ip = i > 0 ? w.inv.data() + (i - 1) * ny : w.zero.data();
  Real* inv = w.inv.data() + i * ny;
  const Real pxi = t.px[i], w0 = t.dxx[3 * i], w1 = t.dxx[3 * i + 1], w2 = t.dxx[3 * i + 2];
  const Real pxp = i > 0 ? t.px[i - 1] : Real(0), w2p = i > 0 ? t.dxx[3 * (i - 1) + 2] : Real(0);
  // rows of distinct arrays: no aliasing; elementwise, so vectorising keeps the bits
#pragma omp simd
  for (std::int64_t j = j0; j < j1; ++j) {
    const Real var = var_x(pxi, qy[j]);
    const Real h0 = half_half(var, w0), h1 = half_half(var, w1), h2 = half_half(var, w2);
    const Real u = explicit_cell<Real, Left, Right>(dt, h0, h1, h2, gy, rm, rc, rp, j, v);
    const Real c_prev = -half_half(var_x(pxp, qy[j]), w2p);
    const Real beta = -h0 * ip[j];
    inv[j] = thomas_inv(dt - h1, beta, c_prev);
    z[j] = thomas_forward(u, beta, zp[j]);
  }
}

// x phase on columns [j0, j1): explicit terms, the x solves, the y right sides (in z).
template <class Real>
void x_phase(const Tables<Real>& t, std::int64_t g, std::int64_t j0, std::int64_t j1, Work<Real>& w) {
  const std::int64_t nx = t.nx, ny = t.ny;
  if (j0 >= j1) return;
  const std::int64_t a = std::max<std::int64_t>(j0, 1), b = std::min<std::int64_t>(j1, ny - 1);
  for (std::int64_t i = 0; i < nx; ++i) {
    if (j0 == 0) forward_cells<Real, true, false>(t, g, i, 0, 1, w);
    if (a < b) forward_cells<Real, false, false>(t, g, i, a, b, w);
    if (j1 == ny) forward_cells<Real, false, true>(t, g, i, ny - 1, ny, w);
  }
  const Real dt = t.dt_inv[g];
  const Real* qy = t.qy.data() + g * ny;
  Real* un = w.unext.data();
  for (std::int64_t j = j0; j < j1; ++j) un[j] = Real(0);
  for (std::int64_t i = nx - 1; i >= 0; --i) {
    const Real pxi = t.px[i], w2 = t.dxx[3 * i + 2];
    Real* z = w.z.data() + i * ny;
    const Real* v = w.v.data() + i * ny;
    const Real* inv = t.xinv.empty() ? w.inv.data() + i * ny : t.xinv.data() + (g * nx + i) * ny;
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      const Real c = -half_half(var_x(pxi, qy[j]), w2);
      const Real u = thomas_back(z[j], c, un[j], inv[j]);
      un[j] = u;
      z[j] = rhs_y(dt, u, v[j]);
    }
  }
}

// The y systems' factors at step g, shared by every row: the forward sweep's
// multipliers, the pivots' inverses and the upper diagonal.
template <class Real>
struct YFactors {
  const Real* beta;
  const Real* inv;
  const Real* c;
};
template <class Real>
YFactors<Real> y_factors(const Tables<Real>& t, std::int64_t g) {
  return {t.yt.beta.data() + g * t.ny, t.yt.inv.data() + g * t.ny, t.yt.c.data()};
}

// y phase on rows [i0, i1): solves along j with the shared factors; result into r.
template <class Real>
void y_phase(const Tables<Real>& t, std::int64_t g, std::int64_t i0, std::int64_t i1, Work<Real>& w) {
  constexpr int B = 8;
  const std::int64_t ny = t.ny;
  const auto [beta, inv, c] = y_factors(t, g);
  for (std::int64_t i = i0; i < i1; i += B) {
    const int nb = static_cast<int>(std::min<std::int64_t>(B, i1 - i));
    Real* zr[B];
    Real* rr[B];
    for (int k = 0; k < nb; ++k) {
      zr[k] = w.z.data() + (i + k) * ny;
      rr[k] = w.r.data() + (i + k) * ny;
    }
    if (nb == B) {
      Real zp[B] = {}, un[B] = {};
      for (std::int64_t j = 0; j < ny; ++j)
        for (int k = 0; k < B; ++k) zp[k] = zr[k][j] = thomas_forward(zr[k][j], beta[j], zp[k]);
      for (std::int64_t j = ny - 1; j >= 0; --j)
        for (int k = 0; k < B; ++k) un[k] = rr[k][j] = thomas_back(zr[k][j], c[j], un[k], inv[j]);
    } else {
      for (int k = 0; k < nb; ++k) {
        Real zp = 0, un = 0;
        for (std::int64_t j = 0; j < ny; ++j) zp = zr[k][j] = thomas_forward(zr[k][j], beta[j], zp);
        for (std::int64_t j = ny - 1; j >= 0; --j) un = rr[k][j] = thomas_back(zr[k][j], c[j], un, inv[j]);
      }
    }
  }
}

template <class Real>
void payoff(const Tables<Real>& t, double strike, bool put, bool smooth, Work<Real>& w, std::int64_t i0,
            std::int64_t i1) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const Real v = Real(payoff_cell(t.x[i], smooth ? t.half_cell[i] : 0.0, strike, put));
    std::fill(w.r.begin() + i * t.ny, w.r.begin() + (i + 1) * t.ny, v);
  }
}

std::pair<std::int64_t, std::int64_t> split(std::int64_t n, int parts, int k, std::int64_t align) {
  std::int64_t blocks = (n + align - 1) / align;
  std::int64_t b0 = blocks * k / parts, b1 = blocks * (k + 1) / parts;
  return {std::min(n, b0 * align), std::min(n, b1 * align)};
}

// One payoff (strike, call or put) rolled back from time level `level` to 0, on one
// thread (team = 1) or by a team of threads inside a parallel region; the time-0
// grid is left in w.r.
template <class Real>
void run_strike(const Tables<Real>& t, double strike, bool put, bool smooth, std::int64_t level, Work<Real>& w,
                int team, int rank) {
  auto [r0, r1] = split(t.nx, team, rank, 1);
  auto [c0, c1] = split(t.ny, team, rank, 8);
  payoff(t, strike, put, smooth, w, r0, r1);
  if (team > 1) {
#pragma omp barrier
  }
  for (std::int64_t g = level - 1; g >= 0; --g) {
    x_phase(t, g, c0, c1, w);
    if (team > 1) {
#pragma omp barrier
    }
    y_phase(t, g, r0, r1, w);
    if (team > 1) {
#pragma omp barrier
    }
  }
}

template <class Real>
double run_strike(const Tables<Real>& t, std::int64_t o, Work<Real>& w, int team, int rank) {
  run_strike(t, strike_of(o), false, false, t.steps, w, team, rank);
  return static_cast<double>(w.r[t.ind_x * t.ny + t.ind_y]);
}

// A functional of the time-0 grid, summed in double in the order given.
template <class Real>
double read_functional(const std::vector<Real>& r, std::int64_t ny, const Functional& f) {
  double sum = 0;
  for (std::size_t k = 0; k < f.coef.size(); ++k) sum += f.coef[k] * static_cast<double>(r[f.i[k] * ny + f.j[k]]);
  return sum;
}

template <class Real>
std::vector<double> solve(const Setup& s, StrikeRange range, std::uint64_t table_limit) {
  const std::int64_t first = range.first, count = range.last - range.first;
  std::vector<double> out(count);
  if (count == 0) return out;
  const Tables<Real> t = make_tables<Real>(s, table_limit);
  const int threads = omp_get_max_threads();
  if (count >= threads || threads == 1) {
#pragma omp parallel
    {
      Work<Real> w(t.nx, t.ny, !t.xinv.empty());
#pragma omp for schedule(static)
      for (std::int64_t k = 0; k < count; ++k) {
        out[k] = run_strike(t, first + k, w, 1, 0);
        if (auto* progress = active_progress()) progress->advance(1);
      }
    }
  } else {
    Work<Real> w(t.nx, t.ny, !t.xinv.empty());
    for (std::int64_t k = 0; k < count; ++k) {
#pragma omp parallel
      {
        const double v = run_strike(t, first + k, w, omp_get_num_threads(), omp_get_thread_num());
#pragma omp single
        out[k] = v;
      }
      if (auto* progress = active_progress()) progress->advance(1);
    }
  }
  return out;
}

// Contracts (rho = 0): the same per-strike rollback from each contract's maturity
// level; out[f][c].
template <class Real>
std::vector<double> solve_contracts(const Setup& s, const std::vector<Contract>& cs, const std::vector<Functional>& fs,
                                    const std::function<void(std::int64_t)>& progress) {
  const std::int64_t count = static_cast<std::int64_t>(cs.size()), nf = static_cast<std::int64_t>(fs.size());
  std::vector<double> out(nf * count);
  if (count == 0) return out;
  const Tables<Real> t = make_tables<Real>(s, kCpuTableLimit);
  const int threads = omp_get_max_threads();
  std::int64_t done = 0;
  auto finish = [&](std::int64_t k, const Work<Real>& w) {
    for (std::int64_t f = 0; f < nf; ++f) out[f * count + k] = read_functional(w.r, t.ny, fs[f]);
  };
  if (count >= threads || threads == 1) {
#pragma omp parallel
    {
      Work<Real> w(t.nx, t.ny, !t.xinv.empty());
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t k = 0; k < count; ++k) {
        run_strike(t, cs[k].strike, cs[k].put, cs[k].smooth, s.levels[cs[k].maturity], w, 1, 0);
        finish(k, w);
        if (progress) {
#pragma omp critical(price_progress)
          progress(++done);
        }
      }
    }
  } else {
    Work<Real> w(t.nx, t.ny, !t.xinv.empty());
    for (std::int64_t k = 0; k < count; ++k) {
#pragma omp parallel
      run_strike(t, cs[k].strike, cs[k].put, cs[k].smooth, s.levels[cs[k].maturity], w, omp_get_num_threads(),
                 omp_get_thread_num());
      finish(k, w);
      if (progress) progress(k + 1);
    }
  }
  return out;
}

// ---- the adjoint method (model.hpp, "the adjoint of one rollback step") -------------

// z = S^-T w on rows [i0, i1): the y systems' transposed solve, ascending then
// descending j, eight rows in lockstep (independent recurrences, for instruction-level
// parallelism; each row's values are computed by the same operations either way).
template <class Real>
void y_adjoint_rows(const Tables<Real>& t, std::int64_t g, std::int64_t i0, std::int64_t i1, const Real* w, Real* z) {
  constexpr int B = 8;
  const std::int64_t ny = t.ny;
  const auto [beta, inv, c] = y_factors(t, g);
  for (std::int64_t i = i0; i < i1; i += B) {
    const int nb = static_cast<int>(std::min<std::int64_t>(B, i1 - i));
    const Real* wr = w + i * ny;
    Real* zr = z + i * ny;
    Real prev[B] = {}, next[B] = {};
    for (std::int64_t j = 0; j < ny; ++j) {
      const Real cj = j > 0 ? c[j - 1] : Real(0), invj = inv[j];
      for (int k = 0; k < nb; ++k) prev[k] = zr[k * ny + j] = thomas_back(wr[k * ny + j], cj, prev[k], invj);
    }
    for (std::int64_t j = ny - 1; j >= 0; --j) {
      const Real bj = j + 1 < ny ? beta[j + 1] : Real(0);
      for (int k = 0; k < nb; ++k) next[k] = zr[k * ny + j] = thomas_forward(zr[k * ny + j], bj, next[k]);
    }
  }
}

// y = T^-T (dtInv z) on columns [j0, j1) (all columns in lockstep along i), with the
// step's x pivots in inv; also p = y - 0.5 z for the G^T term.
template <class Real>
void x_adjoint_columns(const Tables<Real>& t, std::int64_t g, std::int64_t j0, std::int64_t j1, const Real* z,
                       const Real* inv, Real* y, Real* p) {
  const std::int64_t nx = t.nx, ny = t.ny;
  const Real dt = t.dt_inv[g];
  const Real* qy = t.qy.data() + g * ny;
  for (std::int64_t i = 0; i < nx; ++i) {
    const Real* zi = z + i * ny;
    const Real* invi = inv + i * ny;
    const Real* yp = i > 0 ? y + (i - 1) * ny : nullptr;
    Real* yi = y + i * ny;
    const Real pxp = i > 0 ? t.px[i - 1] : Real(0), w2p = i > 0 ? t.dxx[3 * (i - 1) + 2] : Real(0);
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      const Real c_prev = i > 0 ? -half_half(var_x(pxp, qy[j]), w2p) : Real(0);
      yi[j] = thomas_back(dt * zi[j], c_prev, yp ? yp[j] : Real(0), invi[j]);
    }
  }
  for (std::int64_t i = nx - 1; i >= 0; --i) {
    const Real* zi = z + i * ny;
    const Real* invi = inv + i * ny;
    const Real* yn = i + 1 < nx ? y + (i + 1) * ny : nullptr;
    Real* yi = y + i * ny;
    Real* pi = p + i * ny;
    const Real pxn = i + 1 < nx ? t.px[i + 1] : Real(0), w0n = i + 1 < nx ? t.dxx[3 * (i + 1)] : Real(0);
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      const Real beta_next = yn ? -half_half(var_x(pxn, qy[j]), w0n) * invi[j] : Real(0);
      const Real x = thomas_forward(yi[j], beta_next, yn ? yn[j] : Real(0));
      yi[j] = x;
      pi[j] = adjoint_p(x, zi[j]);
    }
  }
}

// w = E^T y + G^T p on row i.
template <class Real>
void explicit_adjoint_row(const Tables<Real>& t, std::int64_t g, std::int64_t i, const Real* y, const Real* p,
                          Real* w) {
  const std::int64_t nx = t.nx, ny = t.ny;
  const Real dt = t.dt_inv[g];
  const Real* qy = t.qy.data() + g * ny;
  const Real* gy = t.yt.gy.data();
  const Real* yc = y + i * ny;
  const Real* ym = i > 0 ? y + (i - 1) * ny : nullptr;
  const Real* yn = i + 1 < nx ? y + (i + 1) * ny : nullptr;
  const Real* pc = p + i * ny;
  const Real pxi = t.px[i], w1 = t.dxx[3 * i + 1];
  const Real pxp = i > 0 ? t.px[i - 1] : Real(0), w2p = i > 0 ? t.dxx[3 * (i - 1) + 2] : Real(0);
  const Real pxn = yn ? t.px[i + 1] : Real(0), w0n = yn ? t.dxx[3 * (i + 1)] : Real(0);
  Real* wi = w + i * ny;
#pragma omp simd
  for (std::int64_t j = 0; j < ny; ++j) {
    const Real h1 = half_half(var_x(pxi, qy[j]), w1);
    const Real h0n = yn ? half_half(var_x(pxn, qy[j]), w0n) : Real(0);
    const Real h2p = ym ? half_half(var_x(pxp, qy[j]), w2p) : Real(0);
    const Real wx = explicit_x_adjoint(dt, h1, h0n, h2p, ym ? ym[j] : Real(0), yc[j], yn ? yn[j] : Real(0));
    const Real g0n = j + 1 < ny ? gy[3 * (j + 1)] : Real(0), g2p = j > 0 ? gy[3 * (j - 1) + 2] : Real(0);
    const Real wy = explicit_y_adjoint(gy[3 * j + 1], g0n, g2p, j > 0 ? pc[j - 1] : Real(0), pc[j],
                                       j + 1 < ny ? pc[j + 1] : Real(0));
    wi[j] = wx + wy;
  }
}

// The adjoint pass of one functional (see price.hpp, adjoint_weights_cpu): W[m][i] at
// every maturity level. rho = 0: per step z = S^-T w, y = T^-T (dtInv z),
// w' = E^T y + G^T (y - 0.5 z). rho != 0: the transposed modified Craig-Sneyd step
// (docs/price.md):
//   a = S^-T w;  b = T^-T (dtInv a);  c = S^-T (0.5 C^T b);  d = T^-T (dtInv c);
//   w' = E^T (b + d) + G^T (b + d - 0.5 (a + c)) + C^T (0.5 b + d).
template <class Real>
void adjoint_pass(const Setup& s, const Tables<Real>& t, const MixedTables<Real>* mixed, const Functional& f,
                  double* weights, const std::function<void(std::int64_t)>& progress) {
  const std::int64_t nx = t.nx, ny = t.ny, grid = nx * ny;
  std::vector<Real> w(grid, Real(0)), z(grid), y(grid), p(grid), inv(grid);
  std::vector<Real> q, c, d, pd, r;
  if (mixed) {
    q.resize(grid);
    c.resize(grid);
    d.resize(grid);
    pd.resize(grid);
    r.resize(grid);
  }
  for (std::size_t k = 0; k < f.coef.size(); ++k) w[f.i[k] * ny + f.j[k]] += Real(f.coef[k]);
  // columns in blocks of 16 (two AVX-512 vectors of doubles): enough blocks for every
  // thread on a 256-column grid
  constexpr std::int64_t kCols = 16;
  const std::int64_t blocks = (ny + kCols - 1) / kCols;
  std::size_t next = 0;  // the next maturity level to record
#pragma omp parallel
  for (std::int64_t g = 0; g < t.steps; ++g) {
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < (nx + 7) / 8; ++b)
      y_adjoint_rows(t, g, b * 8, std::min(nx, b * 8 + 8), w.data(), z.data());
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t j0 = b * kCols, j1 = std::min(ny, j0 + kCols);
      x_pivots(t, g, j0, j1, inv.data());
      x_adjoint_columns(t, g, j0, j1, z.data(), inv.data(), y.data(), p.data());
    }
    if (mixed) {
      const MixedStep<Real> ms = mixed->step(g);
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < nx; ++i)
        for (std::int64_t l = 0; l < ny; ++l) q[i * ny + l] = Real(0.5) * mixed_adjoint_at(ms, y.data(), i, l);
#pragma omp for schedule(static)
      for (std::int64_t b = 0; b < (nx + 7) / 8; ++b)
        y_adjoint_rows(t, g, b * 8, std::min(nx, b * 8 + 8), q.data(), c.data());
#pragma omp for schedule(static)
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t j0 = b * kCols, j1 = std::min(ny, j0 + kCols);
        x_adjoint_columns(t, g, j0, j1, c.data(), inv.data(), d.data(), pd.data());
      }
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < nx; ++i)
        for (std::int64_t l = 0; l < ny; ++l) {
          const std::int64_t k = i * ny + l;
          r[k] = Real(0.5) * y[k] + d[k];
          y[k] = y[k] + d[k];
          p[k] = p[k] + pd[k];
        }
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < nx; ++i) {
        explicit_adjoint_row(t, g, i, y.data(), p.data(), w.data());
        for (std::int64_t l = 0; l < ny; ++l) w[i * ny + l] += mixed_adjoint_at(ms, r.data(), i, l);
      }
    } else {
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < nx; ++i) explicit_adjoint_row(t, g, i, y.data(), p.data(), w.data());
    }
    if (next < s.levels.size() && g + 1 == s.levels[next]) {
      double* out = weights + next * nx;
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < nx; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < ny; ++j) sum += static_cast<double>(w[i * ny + j]);
        out[i] = sum;
      }
#pragma omp single
      ++next;  // the implied barrier publishes it
    }
    if (progress) {
#pragma omp master
      progress(g + 1);
    }
  }
}

template <class Real>
std::vector<double> adjoint_weights(const Setup& s, const std::vector<Functional>& fs,
                                    const std::function<void(std::int64_t)>& progress) {
  const Tables<Real> t = make_tables<Real>(s, 0);  // no pivot table: one grid, pivots per step
  std::unique_ptr<MixedTables<Real>> mixed;
  if (s.p.rho != 0) mixed = std::make_unique<MixedTables<Real>>(make_mixed_tables<Real>(s));
  const std::int64_t per = static_cast<std::int64_t>(s.levels.size()) * t.nx;
  std::vector<double> out(fs.size() * per);
  for (std::size_t f = 0; f < fs.size(); ++f) {
    std::function<void(std::int64_t)> each;
    if (progress) each = [&, f](std::int64_t g) { progress(static_cast<std::int64_t>(f) * t.steps + g); };
    adjoint_pass(s, t, mixed.get(), fs[f], out.data() + f * per, each);
  }
  return out;
}

// ---- the forward method with the mixed term (rho != 0): plain loops, the reference --

// The x systems of step g solved in place for column j (Thomas, pivots on the way).
template <class Real>
void x_solve_column(const Tables<Real>& t, std::int64_t g, std::int64_t j, Real* u, Real* invs) {
  const std::int64_t nx = t.nx, ny = t.ny;
  const Real dt = t.dt_inv[g], qy = t.qy[g * ny + j];
  Real z_prev = 0, inv_prev = 0;
  for (std::int64_t i = 0; i < nx; ++i) {
    const Real var = var_x(t.px[i], qy);
    const Real h0 = half_half(var, t.dxx[3 * i]), h1 = half_half(var, t.dxx[3 * i + 1]);
    const Real c_prev = i > 0 ? -half_half(var_x(t.px[i - 1], qy), t.dxx[3 * (i - 1) + 2]) : Real(0);
    const Real beta = -h0 * inv_prev;
    invs[i] = thomas_inv(dt - h1, beta, c_prev);
    z_prev = u[i * ny + j] = thomas_forward(u[i * ny + j], beta, z_prev);
    inv_prev = invs[i];
  }
  Real un = 0;
  for (std::int64_t i = nx - 1; i >= 0; --i) {
    const Real cc = -half_half(var_x(t.px[i], qy), t.dxx[3 * i + 2]);
    un = u[i * ny + j] = thomas_back(u[i * ny + j], cc, un, invs[i]);
  }
}

// The y systems of step g solved in place for row i.
template <class Real>
void y_solve_row(const Tables<Real>& t, std::int64_t g, std::int64_t i, Real* u) {
  const std::int64_t ny = t.ny;
  const Real* beta = t.yt.beta.data() + g * ny;
  const Real* inv = t.yt.inv.data() + g * ny;
  Real* row = u + i * ny;
  Real zp = 0, un = 0;
  for (std::int64_t j = 0; j < ny; ++j) zp = row[j] = thomas_forward(row[j], beta[j], zp);
  for (std::int64_t j = ny - 1; j >= 0; --j) un = row[j] = thomas_back(row[j], t.yt.c[j], un, inv[j]);
}

// One modified Craig-Sneyd step (model.hpp, "correlated SABR") on R, in place.
template <class Real>
void mcs_step(const Tables<Real>& t, const MixedTables<Real>& mixed, std::int64_t g, std::vector<Real>& r,
              std::vector<Real>& v, std::vector<Real>& u, std::vector<Real>& y, std::vector<Real>& dif,
              std::vector<Real>& invs) {
  const std::int64_t nx = t.nx, ny = t.ny;
  const Real dt = t.dt_inv[g];
  const Real* qy = t.qy.data() + g * ny;
  const Real* gy = t.yt.gy.data();
  const MixedStep<Real> ms = mixed.step(g);
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j) {
      const std::int64_t k = i * ny + j;
      const Real var = var_x(t.px[i], qy[j]);
      const Real h0 = half_half(var, t.dxx[3 * i]), h1 = half_half(var, t.dxx[3 * i + 1]),
                 h2 = half_half(var, t.dxx[3 * i + 2]);
      Real uu = explicit_x(dt, h0, h1, h2, i > 0 ? r[k - ny] : Real(0), r[k], i + 1 < nx ? r[k + ny] : Real(0));
      v[k] = explicit_y(gy[3 * j], gy[3 * j + 1], gy[3 * j + 2], j > 0 ? r[k - 1] : Real(0), r[k],
                        j + 1 < ny ? r[k + 1] : Real(0));
      uu += v[k];
      uu += mixed_at(ms, r.data(), i, j);
      u[k] = y[k] = uu;
    }
  for (std::int64_t j = 0; j < ny; ++j) x_solve_column(t, g, j, y.data(), invs.data());
  for (std::int64_t k = 0; k < nx * ny; ++k) y[k] = rhs_y(dt, y[k], v[k]);
  for (std::int64_t i = 0; i < nx; ++i) y_solve_row(t, g, i, y.data());
  for (std::int64_t k = 0; k < nx * ny; ++k) dif[k] = y[k] - r[k];
  for (std::int64_t i = 0; i < nx; ++i)
    for (std::int64_t j = 0; j < ny; ++j) u[i * ny + j] += Real(0.5) * mixed_at(ms, dif.data(), i, j);
  for (std::int64_t j = 0; j < ny; ++j) x_solve_column(t, g, j, u.data(), invs.data());
  for (std::int64_t k = 0; k < nx * ny; ++k) r[k] = rhs_y(dt, u[k], v[k]);
  for (std::int64_t i = 0; i < nx; ++i) y_solve_row(t, g, i, r.data());
}

template <class Real>
std::vector<double> solve_contracts_mixed(const Setup& s, const std::vector<Contract>& cs,
                                          const std::vector<Functional>& fs,
                                          const std::function<void(std::int64_t)>& progress) {
  const std::int64_t count = static_cast<std::int64_t>(cs.size()), nf = static_cast<std::int64_t>(fs.size());
  std::vector<double> out(nf * count);
  const Tables<Real> t = make_tables<Real>(s, 0);
  const MixedTables<Real> mixed = make_mixed_tables<Real>(s);
  const std::int64_t grid = t.nx * t.ny;
  std::int64_t done = 0;
#pragma omp parallel
  {
    std::vector<Real> r(grid), v(grid), u(grid), y(grid), dif(grid), invs(t.nx);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < count; ++k) {
      for (std::int64_t i = 0; i < t.nx; ++i)
        std::fill(r.begin() + i * t.ny, r.begin() + (i + 1) * t.ny,
                  Real(payoff_cell(t.x[i], cs[k].smooth ? t.half_cell[i] : 0.0, cs[k].strike, cs[k].put)));
      for (std::int64_t g = s.levels[cs[k].maturity] - 1; g >= 0; --g) mcs_step(t, mixed, g, r, v, u, y, dif, invs);
      for (std::int64_t f = 0; f < nf; ++f) out[f * count + k] = read_functional(r, t.ny, fs[f]);
      if (progress) {
#pragma omp critical(price_progress)
        progress(++done);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<double> solve_cpu(const Setup& s, Precision precision, StrikeRange range, std::uint64_t table_limit) {
  check_range(s, range);
  if (table_limit == 0) table_limit = kCpuTableLimit;
  return precision == Precision::fp64 ? solve<double>(s, range, table_limit) : solve<float>(s, range, table_limit);
}

std::vector<double> solve_cpu(const Setup& s, Precision precision, std::uint64_t table_limit) {
  return solve_cpu(s, precision, StrikeRange{0, s.p.outer}, table_limit);
}

}  // namespace numpipe::price

namespace numpipe::price {

std::vector<double> adjoint_weights_cpu(const Setup& s, Precision precision) {
  const std::vector<Functional> price = functionals_of(s, false);
  std::vector<double> w = adjoint_weights_cpu(s, precision, price);
  w.resize(s.p.num_x);  // the last maturity's weights: FinPar's problems have one
  if (s.levels.size() > 1) fail_internal("adjoint_weights_cpu: several maturities; pass the functionals");
  return w;
}

std::vector<double> adjoint_weights_cpu(const Setup& s, Precision precision, const std::vector<Functional>& fs,
                                        const std::function<void(std::int64_t)>& progress) {
  return precision == Precision::fp64 ? adjoint_weights<double>(s, fs, progress)
                                      : adjoint_weights<float>(s, fs, progress);
}

std::vector<double> solve_cpu_contracts(const Setup& s, Precision precision, const std::vector<Contract>& contracts,
                                        const std::vector<Functional>& fs,
                                        const std::function<void(std::int64_t)>& progress) {
  for (const Contract& c : contracts)
    if (c.maturity < 0 || c.maturity >= static_cast<std::int64_t>(s.levels.size()))
      fail_internal("contract maturity index " + std::to_string(c.maturity) + " out of range");
  if (s.p.rho != 0)
    return precision == Precision::fp64 ? solve_contracts_mixed<double>(s, contracts, fs, progress)
                                        : solve_contracts_mixed<float>(s, contracts, fs, progress);
  return precision == Precision::fp64 ? solve_contracts<double>(s, contracts, fs, progress)
                                      : solve_contracts<float>(s, contracts, fs, progress);
}

std::vector<double> solve_cpu_adjoint(const Setup& s, Precision precision, StrikeRange range) {
  check_range(s, range);
  return prices_from_weights(s, precision, adjoint_weights_cpu(s, precision), range);
}

}  // namespace numpipe::price
