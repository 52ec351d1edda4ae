// price: the CUDA backend. Everything stays on the device for the whole time loop.
// x_factor_kernel first tabulates the x systems' pivots for every step (they do
// not depend on the strike; table xinv[g][i][j]), so the per-strike sweeps have no
// divisions. Then per time step two kernels, parallel over strikes and grid lines,
// layout R[s][i][j] (j fastest, every access coalesced along j):
//
//   x phase (explicit x and y terms, the x solves along i, the y right sides
//   dtInv*U - 0.5*V written to W), one of:
//     x_chunk_kernel (default for numX <= 256): a thread per (strike, column j,
//       chunk of 8 rows); the chunk lives in registers; both Thomas recurrences are
//       solved per chunk from a zero entry value, the chunks' affine maps combined
//       in order through shared memory, then each chunk corrected. R read once, W
//       written once.
//     x_step_kernel ("sweep"): a thread per (strike, column), the plain sweeps down
//       and up i, loads of 8 rows issued together.
//   y_step_kernel: a warp per (strike, row i); the row staged in shared memory, the
//       two recurrences solved as warp scans of affine maps (the "scan formulation"
//       the spec allows), the row stored into R.
//
// Strikes are processed in groups (all of a device's strikes at once by default;
// --gpu-group N keeps N resident). No atomics, no reductions: every value is
// computed by the same operations whatever the grouping or the number of devices,
// so results have the same bits run to run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <string>
#include <type_traits>
#include <map>
#include <memory>
#include <mutex>

#include "common/cuda_check.hpp"
#include "common/cuda_graph.hpp"
#include "common/cuda_stream.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "common/error.hpp"
#include "common/profile.hpp"
#include "common/threads.hpp"
#include "cuda_lines.cuh"
#include "cuda_mcs.hpp"
#include "detail/backends.hpp"
#include "detail/grid.hpp"
#include "price.hpp"
#include "tuning.hpp"

namespace numpipe::price {
namespace {

using lines::kWarp;
using lines::ChunkLayout;
using lines::warp_recurrence;
constexpr int kUnroll = 8;  // rows of x_step whose loads are issued together

// strikes: the strikes of the group (null: FinPar's 0.001*o from first_strike)
template <class Real>
__global__ void payoff_kernel(Real* __restrict__ r, const double* __restrict__ x, std::int64_t first_strike, int nx,
                              int ny, const double* __restrict__ strikes, bool put, const double* __restrict__ half_cell) {
  const std::int64_t s = blockIdx.y;
  const double strike = strikes ? strikes[first_strike + s] : strike_of(first_strike + s);
  Real* rs = r + s * nx * ny;
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < std::int64_t(nx) * ny;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(k / ny);
    rs[k] = Real(payoff_cell(x[i], half_cell ? half_cell[i] : 0.0, strike, put));
  }
}

// Pivots of the x systems for every step g and column j (thread per (g, j)).
template <class Real>
__global__ void x_factor_kernel(Real* __restrict__ xinv, const Real* __restrict__ px, const Real* __restrict__ dxx,
                                const Real* __restrict__ qy_all, const Real* __restrict__ dt_inv, int nx, int ny,
                                int steps) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = blockIdx.y;
  if (j >= ny || g >= steps) return;
  const Real qy = qy_all[std::int64_t(g) * ny + j], dt = dt_inv[g];
  Real* out = xinv + std::int64_t(g) * nx * ny;
  Real inv_prev = 0, pxp = 0, w2p = 0;
  for (int i = 0; i < nx; ++i) {
    const Real var = var_x(px[i], qy);
    const Real h0 = half_half(var, dxx[3 * i]), h1 = half_half(var, dxx[3 * i + 1]);
    const Real c_prev = -half_half(var_x(pxp, qy), w2p);
    const Real beta = -h0 * inv_prev;
    const Real inv = thomas_inv(dt - h1, beta, c_prev);
    out[std::int64_t(i) * ny + j] = inv;
    inv_prev = inv;
    pxp = px[i];
    w2p = dxx[3 * i + 2];
  }
}

// Loads for U rows are issued together before the U dependent steps of the
// recurrence use them, so that U rows' memory latency overlaps.
template <class Real, int U>
__global__ void __launch_bounds__(128) x_step_kernel(const Real* __restrict__ r, Real* __restrict__ w,
                                                     const Real* __restrict__ xinv, const Real* __restrict__ px,
                                                     const Real* __restrict__ dxx, const Real* __restrict__ qy_g,
                                                     const Real* __restrict__ gy, Real dt, int nx, int ny) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= ny) return;
  const std::int64_t s = blockIdx.y;
  const Real* rs = r + s * nx * ny;
  Real* ws = w + s * nx * ny;
  const Real qy = qy_g[j], g0 = gy[3 * j], g1 = gy[3 * j + 1], g2 = gy[3 * j + 2];
  const bool left = j > 0, right = j < ny - 1;
  Real rm = 0, rc = rs[j], rp = rs[ny + j];
  Real z_prev = 0, inv_prev = 0;
  for (int i0 = 0; i0 < nx; i0 += U) {
    Real rn[U], rl[U], rr[U], xi[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i0 + u;
      const std::int64_t k = std::int64_t(i) * ny + j;
      rn[u] = i + 2 < nx ? rs[k + 2 * std::int64_t(ny)] : Real(0);
      rl[u] = left && i < nx ? rs[k - 1] : Real(0);
      rr[u] = right && i < nx ? rs[k + 1] : Real(0);
      xi[u] = i < nx ? xinv[k] : Real(0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i0 + u;
      if (i >= nx) break;
      const Real var = var_x(px[i], qy);
      const Real h0 = half_half(var, dxx[3 * i]), h1 = half_half(var, dxx[3 * i + 1]),
                 h2 = half_half(var, dxx[3 * i + 2]);
      Real uu = explicit_x(dt, h0, h1, h2, rm, rc, rp);
      uu += explicit_y(g0, g1, g2, rl[u], rc, rr[u]);
      const Real beta = -h0 * inv_prev;
      const Real z = thomas_forward(uu, beta, z_prev);
      ws[std::int64_t(i) * ny + j] = z;
      z_prev = z;
      inv_prev = xi[u];
      rm = rc;
      rc = rp;
      rp = rn[u];
    }
  }
  Real u_next = 0;
  for (int i1 = nx - 1; i1 >= 0; i1 -= U) {
    Real zz[U], xi[U], rl[U], rc0[U], rr[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i1 - u;
      const std::int64_t k = std::int64_t(i) * ny + j;
      const bool in = i >= 0;
      zz[u] = in ? ws[k] : Real(0);
      xi[u] = in ? xinv[k] : Real(0);
      rl[u] = in && left ? rs[k - 1] : Real(0);
      rc0[u] = in ? rs[k] : Real(0);
      rr[u] = in && right ? rs[k + 1] : Real(0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i1 - u;
      if (i < 0) break;
      const Real c = -half_half(var_x(px[i], qy), dxx[3 * i + 2]);
      const Real v = explicit_y(g0, g1, g2, rl[u], rc0[u], rr[u]);
      const Real uu = thomas_back(zz[u], c, u_next, xi[u]);
      ws[std::int64_t(i) * ny + j] = rhs_y(dt, uu, v);
      u_next = uu;
    }
  }
}

// The x systems split into chunks of C rows: more threads than columns when the
// strikes resident are few (groups sized for L2). Block: 16 columns x (2*warps)
// chunks; thread (column j, chunk q) holds rows [q*C, q*C + C) in registers.
// Both Thomas recurrences are solved per chunk with a zero entry value, the
// chunks' affine maps (z_out = A z_in + B) are combined through shared memory in
// order, and each chunk is corrected: z = z_local + (prod of -beta) * z_in.
constexpr int kChunkCols = 16;
constexpr int kChunkRows = 8;  // C: rows per thread; nx <= 32*C (512 threads a block)
template <class Real, int C>
__global__ void __launch_bounds__(512) x_chunk_kernel(const Real* __restrict__ r, Real* __restrict__ w,
                                                      const Real* __restrict__ xinv, const Real* __restrict__ px,
                                                      const Real* __restrict__ dxx, const Real* __restrict__ qy_g,
                                                      const Real* __restrict__ gy, Real dt, int nx, int ny,
                                                      int chunks) {
  extern __shared__ unsigned char smem_raw[];
  Real* fa = reinterpret_cast<Real*>(smem_raw);  // [chunks][16] forward maps A, B; backward maps A, B
  Real* fb = fa + chunks * kChunkCols;
  Real* ba = fb + chunks * kChunkCols;
  Real* bb = ba + chunks * kChunkCols;
  const int col = threadIdx.x % kChunkCols;
  const int q = threadIdx.x / kChunkCols;  // chunk
  const int j = blockIdx.x * kChunkCols + col;
  const bool active = j < ny && q < chunks;
  const std::int64_t s = blockIdx.y;
  const Real* rs = r + s * nx * ny;
  Real* ws = w + s * nx * ny;
  const int i0 = q * C;
  Real zl[C], v[C], inv[C], beta[C];
  Real qy = 0;
  if (active) {
    qy = qy_g[j];
    const Real g0 = gy[3 * j], g1 = gy[3 * j + 1], g2 = gy[3 * j + 2];
    const bool left = j > 0, right = j < ny - 1;
    Real rr_[C + 2], rl[C], rr[C];
#pragma unroll
    for (int m = 0; m < C + 2; ++m) {
      const int i = i0 - 1 + m;
      rr_[m] = i >= 0 && i < nx ? rs[std::int64_t(i) * ny + j] : Real(0);
    }
#pragma unroll
    for (int m = 0; m < C; ++m) {
      const int i = i0 + m;
      const std::int64_t k = std::int64_t(i) * ny + j;
      rl[m] = left && i < nx ? rs[k - 1] : Real(0);
      rr[m] = right && i < nx ? rs[k + 1] : Real(0);
      inv[m] = i < nx ? xinv[k] : Real(1);
    }
    Real inv_prev = i0 > 0 ? xinv[std::int64_t(i0 - 1) * ny + j] : Real(0);
    Real a = 1, b = 0;
#pragma unroll
    for (int m = 0; m < C; ++m) {
      const int i = i0 + m;
      if (i < nx) {
        const Real var = var_x(px[i], qy);
        const Real h0 = half_half(var, dxx[3 * i]), h1 = half_half(var, dxx[3 * i + 1]),
                   h2 = half_half(var, dxx[3 * i + 2]);
        Real uu = explicit_x(dt, h0, h1, h2, rr_[m], rr_[m + 1], rr_[m + 2]);
        v[m] = explicit_y(g0, g1, g2, rl[m], rr_[m + 1], rr[m]);
        uu += v[m];
        beta[m] = -h0 * inv_prev;
        b = thomas_forward(uu, beta[m], b);
        a = -beta[m] * a;
        zl[m] = b;
        inv_prev = inv[m];
      } else {
        beta[m] = 0;
        zl[m] = 0;
        v[m] = 0;
      }
    }
    fa[q * kChunkCols + col] = a;
    fb[q * kChunkCols + col] = b;
  }
  __syncthreads();
  Real a2 = 1, b2 = 0;
  if (active) {
    Real z_in = 0;
    for (int p = 0; p < q; ++p) z_in = fa[p * kChunkCols + col] * z_in + fb[p * kChunkCols + col];
    Real prod = 1;
#pragma unroll
    for (int m = 0; m < C; ++m) {
      prod = -beta[m] * prod;
      zl[m] = zl[m] + prod * z_in;  // z of row i0 + m
    }
    // back substitution within the chunk, entry value 0: u_m = (z_m - c_m u_{m+1}) inv_m
#pragma unroll
    for (int m = C - 1; m >= 0; --m) {
      const int i = i0 + m;
      if (i < nx) {
        const Real c = -half_half(var_x(px[i], qy), dxx[3 * i + 2]);
        b2 = thomas_back(zl[m], c, b2, inv[m]);
        a2 = -c * inv[m] * a2;
        zl[m] = b2;        // u local
        beta[m] = a2;      // product of (-c inv) from row m to the chunk's end
      } else {
        beta[m] = 1;
      }
    }
    ba[q * kChunkCols + col] = a2;
    bb[q * kChunkCols + col] = b2;
  }
  __syncthreads();
  if (active) {
    Real u_in = 0;
    for (int p = chunks - 1; p > q; --p) u_in = ba[p * kChunkCols + col] * u_in + bb[p * kChunkCols + col];
#pragma unroll
    for (int m = 0; m < C; ++m) {
      const int i = i0 + m;
      if (i < nx) {
        const Real uu = zl[m] + beta[m] * u_in;
        ws[std::int64_t(i) * ny + j] = rhs_y(dt, uu, v[m]);
      }
    }
  }
}

// One warp per row (strike s, point i): solves along j. Shared memory: the step's
// y tables (beta, inv, c; staged once per block when `stage` is set, else read
// from global memory), then per warp the row; each as 32 chunks of `stride`
// (>= chunk, odd) values, lane l owning chunk l.
template <class Real>
__global__ void y_step_kernel(const Real* __restrict__ w, Real* __restrict__ r, const Real* __restrict__ beta_g,
                              const Real* __restrict__ inv_g, const Real* __restrict__ c_g, std::int64_t rows, int ny,
                              int chunk, int stride, bool stage) {
  extern __shared__ unsigned char smem_raw[];
  Real* base = reinterpret_cast<Real*>(smem_raw);
  const int unit = kWarp * stride;
  const int tables = stage ? 3 : 0;
  if (stage) {
    for (int j = threadIdx.x; j < ny; j += blockDim.x) {
      const int at = (j / chunk) * stride + j % chunk;
      base[at] = beta_g[j];
      base[unit + at] = inv_g[j];
      base[2 * unit + at] = c_g[j];
    }
    __syncthreads();
  }
  Real* sm = base + (tables + threadIdx.x / kWarp) * unit;
  const int lane = threadIdx.x % kWarp;
  const std::int64_t row = std::int64_t(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  if (row >= rows) return;  // uniform over the warp; no block barrier follows
  const Real* in = w + row * ny;
#pragma unroll 8
  for (int j = lane; j < ny; j += kWarp) sm[(j / chunk) * stride + j % chunk] = in[j];
  __syncwarp();
  const int j0 = lane * chunk, j1 = min(j0 + chunk, ny);
  Real* mine = sm + lane * stride - j0;  // mine[j] for j in [j0, j1)
  const Real* beta = stage ? base + lane * stride - j0 : beta_g;
  const Real* inv = stage ? base + unit + lane * stride - j0 : inv_g;
  const Real* c = stage ? base + 2 * unit + lane * stride - j0 : c_g;
  auto keep = [&](int j, Real v) { mine[j] = v; };
  // forward: z_j = r_j - beta_j z_{j-1}
  warp_recurrence<true, Real>(
      j0, j1, lane, [&](int j, Real p) { return thomas_forward(mine[j], beta[j], p); },
      [&](int j) { return -beta[j]; }, keep);
  // back: u_j = (z_j - c_j u_{j+1}) inv_j
  warp_recurrence<false, Real>(
      j0, j1, lane, [&](int j, Real p) { return thomas_back(mine[j], c[j], p, inv[j]); },
      [&](int j) { return -c[j] * inv[j]; }, keep);
  __syncwarp();
  Real* out = r + row * ny;
#pragma unroll 8
  for (int j = lane; j < ny; j += kWarp) out[j] = sm[(j / chunk) * stride + j % chunk];
}

template <class Real>
__global__ void gather_kernel(const Real* __restrict__ r, double* __restrict__ out, int nx, int ny, int ind_x, int ind_y,
                              int count) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < count) out[s] = static_cast<double>(r[std::int64_t(s) * nx * ny + std::int64_t(ind_x) * ny + ind_y]);
}

// The values at `points` grid offsets (i*ny + j) of each strike's grid: out[s][p].
template <class Real>
__global__ void gather_points_kernel(const Real* __restrict__ r, double* __restrict__ out, int nx, int ny,
                                     const std::int64_t* __restrict__ offsets, int points, int count) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count * points) return;
  const int s = k / points, q = k % points;
  out[k] = static_cast<double>(r[std::int64_t(s) * nx * ny + offsets[q]]);
}

// ---- the adjoint method (model.hpp, "the adjoint of one rollback step") -------------
// Several lanes run at once (a grid dimension): each lane has its own tables (its
// model parameters) and start vector, all share the grid sizes and the time grid.
// State per lane on the device, each [numX][numY]: z (after a transposed y solve), y
// and p = y - 0.5 z (after the transposed x solve), and with the mixed term (rho != 0)
// c (the second y solve's result) and r = 0.5 b + d (model.hpp; docs/price.md). Per
// step g: rho = 0 two kernels (y, x); with the mixed term four (y, x, y, x), where
// cuda_mcs.cu's one kernel a batch of steps does not run (no clusters, wide grids). The
// explicit part w = E^T y + G^T p (+ C^T r) of step g-1 is formed where the next y
// kernel reads w.

// The step's coefficients the adjoint kernels read (one lane).
template <class Real>
struct AdjointStep {
  const Real* px;    // [nx]
  const Real* dxx;   // [nx][3]
  const Real* gy;    // [ny][3]
  const Real* qy;    // [ny]   py[j]*pt[g]
  Real dt;
  int nx, ny;
};

// Every lane's tables, lane-major (lane L's rows at L times the per-lane size).
template <class Real>
struct LaneTables {
  const Real* px;      // [L][nx]
  const Real* dxx;     // [L][nx][3]
  const Real* gy;      // [L][ny][3]
  const Real* qy;      // [L][steps][ny]
  const Real* ybeta;   // [L][steps][ny]
  const Real* yinv;    // [L][steps][ny]
  const Real* yc;      // [L][ny]
  const Real* sx;      // [L][nx]        (mixed term)
  const Real* sq;      // [L][steps][ny]
  const Real* dx1;     // [L][nx][3]
  const Real* dy1;     // [L][ny][3]
  const Real* rho_nu;  // [L]
  const Real* dt;      // [steps]
  int nx, ny, steps;
  __device__ AdjointStep<Real> step(int lane, int g) const {
    return {px + std::int64_t(lane) * nx, dxx + 3 * std::int64_t(lane) * nx, gy + 3 * std::int64_t(lane) * ny,
            qy + (std::int64_t(lane) * steps + g) * ny, dt[g], nx, ny};
  }
  __device__ MixedStep<Real> mixed(int lane, int g) const {
    return {sx + std::int64_t(lane) * nx, sq + (std::int64_t(lane) * steps + g) * ny, dx1 + 3 * std::int64_t(lane) * nx,
            dy1 + 3 * std::int64_t(lane) * ny, rho_nu[lane], nx, ny};
  }
};

// w[i][j] = E^T y + G^T p of one step, from y and p in global memory.
template <class Real>
__device__ Real explicit_adjoint_at(const AdjointStep<Real>& c, const Real* __restrict__ y,
                                    const Real* __restrict__ p, int i, int j) {
  const int nx = c.nx, ny = c.ny;
  const std::int64_t k = std::int64_t(i) * ny + j;
  const Real qy = c.qy[j];
  const Real h1 = half_half(var_x(c.px[i], qy), c.dxx[3 * i + 1]);
  const Real h0n = i + 1 < nx ? half_half(var_x(c.px[i + 1], qy), c.dxx[3 * (i + 1)]) : Real(0);
  const Real h2p = i > 0 ? half_half(var_x(c.px[i - 1], qy), c.dxx[3 * (i - 1) + 2]) : Real(0);
  const Real wx = explicit_x_adjoint(c.dt, h1, h0n, h2p, i > 0 ? y[k - ny] : Real(0), y[k],
                                     i + 1 < nx ? y[k + ny] : Real(0));
  const Real g0n = j + 1 < ny ? c.gy[3 * (j + 1)] : Real(0), g2p = j > 0 ? c.gy[3 * (j - 1) + 2] : Real(0);
  const Real wy = explicit_y_adjoint(c.gy[3 * j + 1], g0n, g2p, j > 0 ? p[k - 1] : Real(0), p[k],
                                     j + 1 < ny ? p[k + 1] : Real(0));
  return wx + wy;
}

// What the y kernel solves for: the start vector (step 0), the previous step's
// explicit part E^T y + G^T p (+ C^T r with the mixed term), or 0.5 C^T b of this
// step (the corrector's y solve).
enum AdjointInput { kFromStart, kFromExplicit, kFromHalfMixed };

// A warp per (lane, row i): the right side w, then z = S^-T w with step g's y
// factors. Shared memory: the factors as the transposed solve reads them (c_{j-1},
// inv_j, beta_{j+1}), staged once per block, then a line per warp.
template <class Real, int Input>
__global__ void adjoint_y_kernel(LaneTables<Real> t, int g, bool mixed, const Real* __restrict__ w0,
                                 const Real* __restrict__ y, const Real* __restrict__ p, const Real* __restrict__ r,
                                 Real* __restrict__ z) {
  extern __shared__ unsigned char smem_raw[];
  const int nx = t.nx, ny = t.ny, lane_id = blockIdx.y;
  const std::int64_t grid = std::int64_t(nx) * ny, off = lane_id * grid;
  const ChunkLayout lay = ChunkLayout::of(ny);
  const Real* beta = t.ybeta + (std::int64_t(lane_id) * t.steps + g) * ny;
  const Real* inv = t.yinv + (std::int64_t(lane_id) * t.steps + g) * ny;
  const Real* c = t.yc + std::int64_t(lane_id) * ny;
  Real* tables = reinterpret_cast<Real*>(smem_raw);
  for (int j = threadIdx.x; j < ny; j += blockDim.x) {
    tables[lay.at(j)] = j > 0 ? c[j - 1] : Real(0);
    tables[lay.unit() + lay.at(j)] = inv[j];
    tables[2 * lay.unit() + lay.at(j)] = j + 1 < ny ? beta[j + 1] : Real(0);
  }
  __syncthreads();
  const int lane = threadIdx.x % kWarp;
  const int i = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  if (i >= nx) return;  // uniform over the warp; no block barrier follows
  Real* sm = tables + (3 + threadIdx.x / kWarp) * lay.unit();
  if (Input == kFromStart) {
#pragma unroll 4
    for (int j = lane; j < ny; j += kWarp) sm[lay.at(j)] = w0[off + std::int64_t(i) * ny + j];
  } else if (Input == kFromExplicit) {
    const AdjointStep<Real> prev = t.step(lane_id, g - 1);
    if (mixed) {
      const MixedStep<Real> mp = t.mixed(lane_id, g - 1);
#pragma unroll 4
      for (int j = lane; j < ny; j += kWarp)
        sm[lay.at(j)] = explicit_adjoint_at(prev, y + off, p + off, i, j) + mixed_adjoint_at(mp, r + off, i, j);
    } else {
#pragma unroll 4
      for (int j = lane; j < ny; j += kWarp) sm[lay.at(j)] = explicit_adjoint_at(prev, y + off, p + off, i, j);
    }
  } else {
    const MixedStep<Real> ms = t.mixed(lane_id, g);
#pragma unroll 4
    for (int j = lane; j < ny; j += kWarp) sm[lay.at(j)] = Real(0.5) * mixed_adjoint_at(ms, y + off, i, j);
  }
  __syncwarp();
  const int j0 = lane * lay.chunk, j1 = min(j0 + lay.chunk, ny);
  const int shift = lane * lay.stride - j0;  // line[shift + j] for j in [j0, j1)
  Real* mine = sm + shift;
  const Real* c_prev = tables + shift;
  const Real* inv_j = c_prev + lay.unit();
  const Real* beta_next = inv_j + lay.unit();
  // U^T: v_j = (w_j - c_{j-1} v_{j-1}) inv_j; L^T: z_j = v_j - beta_{j+1} z_{j+1}
  lines::warp_transposed_thomas(j0, j1, lane, [&](int j) { return mine[j]; }, c_prev, inv_j, beta_next, mine);
  __syncwarp();
  Real* out = z + off + std::int64_t(i) * ny;
  for (int j = lane; j < ny; j += kWarp) out[j] = sm[lay.at(j)];
}

// Shared-memory lines per warp of adjoint_x_kernel: z, the pivots, c_{i-1}, beta_{i+1}, y.
constexpr int kAdjointXLines = 5;

// A warp per (lane, column j): v = T^-T (dt z) with step g's x pivots (xinv[i][j] of
// the lane), then, Second = false: y = v, p = v - 0.5 z; Second = true (the
// corrector's solve, z = c, v = d, y and p holding b and b - 0.5 a):
// r = 0.5 b + d, y = b + d, p = (b - 0.5 a) + (d - 0.5 c). The block stages its
// columns of z and the pivots with the coefficients the transposed solve reads
// (coalesced along j), so that the recurrences read shared memory only.
template <class Real, bool Second>
__global__ void adjoint_x_kernel(LaneTables<Real> t, int g, const Real* __restrict__ z, const Real* __restrict__ xinv,
                                 std::int64_t xinv_lane_stride, Real* __restrict__ y, Real* __restrict__ p,
                                 Real* __restrict__ r) {
  extern __shared__ unsigned char smem_raw[];
  const int nx = t.nx, ny = t.ny, lane_id = blockIdx.y;
  const std::int64_t off = lane_id * (std::int64_t(nx) * ny);
  const AdjointStep<Real> step = t.step(lane_id, g);
  xinv += lane_id * xinv_lane_stride;
  const ChunkLayout lay = ChunkLayout::of(nx);
  const int warps = blockDim.x / kWarp, lane = threadIdx.x % kWarp, wid = threadIdx.x / kWarp;
  const int j_first = blockIdx.x * warps;
  Real* base = reinterpret_cast<Real*>(smem_raw);
  const Real* px = step.px;
  const Real* dxx = step.dxx;
  // consecutive threads take consecutive columns of a row; each thread issues the
  // loads of kStage rows before it uses them (the staging is latency-bound)
  constexpr int kStage = 8;
  const int total = nx * warps;
  for (int q0 = threadIdx.x; q0 < total; q0 += kStage * blockDim.x) {
    Real zv[kStage], iv[kStage];
#pragma unroll
    for (int u = 0; u < kStage; ++u) {
      const int q = q0 + u * blockDim.x, i = q / warps, j = j_first + q % warps;
      const bool in = q < total && j < ny;
      const std::int64_t k = std::int64_t(i) * ny + j;
      zv[u] = in ? z[off + k] : Real(0);
      iv[u] = in ? xinv[k] : Real(0);
    }
#pragma unroll
    for (int u = 0; u < kStage; ++u) {
      const int q = q0 + u * blockDim.x, i = q / warps, col = q % warps, j = j_first + col;
      if (q >= total || j >= ny) continue;
      const Real qy = step.qy[j], inv = iv[u];
      Real* line = base + kAdjointXLines * col * lay.unit() + lay.at(i);
      line[0] = zv[u];
      line[lay.unit()] = inv;
      line[2 * lay.unit()] = i > 0 ? -half_half(var_x(px[i - 1], qy), dxx[3 * (i - 1) + 2]) : Real(0);
      line[3 * lay.unit()] = i + 1 < nx ? -half_half(var_x(px[i + 1], qy), dxx[3 * (i + 1)]) * inv : Real(0);
    }
  }
  __syncthreads();
  const int j = j_first + wid;
  if (j >= ny) return;  // uniform over the warp; no block barrier follows
  const int i0 = lane * lay.chunk, i1 = min(i0 + lay.chunk, nx);
  const Real* zs = base + kAdjointXLines * wid * lay.unit() + lane * lay.stride - i0;  // zs[i], i in [i0, i1)
  const Real* inv = zs + lay.unit();
  const Real* c_prev = inv + lay.unit();
  const Real* beta_next = c_prev + lay.unit();
  Real* ys = const_cast<Real*>(beta_next) + lay.unit();
  const Real dt = step.dt;
  // U^T: v_i = (dt z_i - c_{i-1} v_{i-1}) inv_i; L^T: y_i = v_i - beta_{i+1} y_{i+1}
  lines::warp_transposed_thomas(i0, i1, lane, [&](int i) { return dt * zs[i]; }, c_prev, inv, beta_next, ys);
  __syncwarp();
  const Real* line = base + kAdjointXLines * wid * lay.unit();
  for (int i = lane; i < nx; i += kWarp) {
    const std::int64_t k = off + std::int64_t(i) * ny + j;
    const Real v = line[4 * lay.unit() + lay.at(i)];
    if (Second) {
      const Real b = y[k], pb = p[k], pd = adjoint_p(v, line[lay.at(i)]);
      r[k] = Real(0.5) * b + v;
      y[k] = b + v;
      p[k] = pb + pd;
    } else {
      y[k] = v;
      p[k] = adjoint_p(v, line[lay.at(i)]);
    }
  }
}

// W[m][i] = sum_j w[i][j] of step g's w (E^T y + G^T p, + C^T r), in double: a warp per
// (lane, row), lane l summing j = l, l + 32, ... in order, then a fixed shuffle tree
// (the same order every run).
template <class Real>
__global__ void adjoint_sum_kernel(LaneTables<Real> t, int g, bool mixed, const Real* __restrict__ y,
                                   const Real* __restrict__ p, const Real* __restrict__ r, double* __restrict__ weights,
                                   std::int64_t weights_lane_stride) {
  const int lane = threadIdx.x % kWarp, lane_id = blockIdx.y;
  const int i = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  if (i >= t.nx) return;
  const std::int64_t off = lane_id * (std::int64_t(t.nx) * t.ny);
  const AdjointStep<Real> last = t.step(lane_id, g);
  double sum = 0;
  if (mixed) {
    const MixedStep<Real> ml = t.mixed(lane_id, g);
    for (int j = lane; j < t.ny; j += kWarp)
      sum += static_cast<double>(explicit_adjoint_at(last, y + off, p + off, i, j) + mixed_adjoint_at(ml, r + off, i, j));
  } else {
    for (int j = lane; j < t.ny; j += kWarp) sum += static_cast<double>(explicit_adjoint_at(last, y + off, p + off, i, j));
  }
  for (int o = kWarp / 2; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0) weights[lane_id * weights_lane_stride + i] = sum;
}

// Pivots of the x systems for `count` steps from step g0 of every lane (thread per
// (column, step, lane)), the same operations as x_factor_kernel: out[lane][g][i][j].
template <class Real>
__global__ void x_factor_lanes_kernel(Real* __restrict__ xinv, std::int64_t lane_stride, LaneTables<Real> t, int g0,
                                      int count) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int gg = blockIdx.y, lane_id = blockIdx.z;
  const int nx = t.nx, ny = t.ny;
  if (j >= ny || gg >= count) return;
  const AdjointStep<Real> st = t.step(lane_id, g0 + gg);
  const Real qy = st.qy[j], dt = st.dt;
  Real* out = xinv + lane_id * lane_stride + std::int64_t(gg) * nx * ny;
  Real inv_prev = 0, pxp = 0, w2p = 0;
  for (int i = 0; i < nx; ++i) {
    const Real var = var_x(st.px[i], qy);
    const Real h0 = half_half(var, st.dxx[3 * i]), h1 = half_half(var, st.dxx[3 * i + 1]);
    const Real c_prev = -half_half(var_x(pxp, qy), w2p);
    const Real beta = -h0 * inv_prev;
    const Real inv = thomas_inv(dt - h1, beta, c_prev);
    out[std::int64_t(i) * ny + j] = inv;
    inv_prev = inv;
    pxp = st.px[i];
    w2p = st.dxx[3 * i + 2];
  }
}

template <class Real>
std::vector<Real> cast(const std::vector<double>& v) {
  return std::vector<Real>(v.begin(), v.end());
}

template <class Real>
DeviceArray<Real> upload(const std::vector<Real>& v) {
  DeviceArray<Real> d(std::max<std::size_t>(v.size(), 1));
  d.copy_from_host(v.data(), v.size());
  return d;
}

// The strike-independent tables on the device, built on the host in Real exactly as
// the CPU backend builds them: px, dxx, dt_inv, qy[g][j] = py[j]*pt[g], and the y
// systems' weights and factors.
template <class Real>
struct DeviceTables {
  DeviceArray<Real> px, dxx, dt, qy, gy, yc, ybeta, yinv;
};
template <class Real>
DeviceTables<Real> upload_tables(const Setup& s) {
  const std::size_t steps = static_cast<std::size_t>(s.p.num_t - 1), ny = static_cast<std::size_t>(s.p.num_y);
  std::vector<Real> qy(steps * ny);
  for (std::size_t g = 0; g < steps; ++g)
    for (std::size_t j = 0; j < ny; ++j) qy[g * ny + j] = Real(s.py[j]) * Real(s.pt[g]);
  const YTables<Real> yt = make_y_tables<Real>(s);
  return {upload(cast<Real>(s.px)), upload(cast<Real>(s.dxx)), upload(cast<Real>(s.dt_inv)), upload(qy),
          upload(yt.gy),           upload(yt.c),             upload(yt.beta),              upload(yt.inv)};
}

struct DeviceResult {
  double seconds = 0, upload_seconds = 0;
  std::int64_t group = 0;
  std::uint64_t bytes = 0;
  std::string kernel;
};

// What a forward solve prices: FinPar's strikes from the last level (the default),
// or the user's strikes (call or put) from a maturity's level; with points, the
// values at those grid offsets of each strike's time-0 grid (out[s][p]), else the
// value at (indX, indY).
struct ForwardJob {
  const std::vector<double>* strikes = nullptr;
  bool put = false;
  bool smooth = false;  // the payoff cell-averaged (Setup::half_cell)
  int level = -1;  // -1: numT - 1
  const std::vector<std::int64_t>* points = nullptr;
};

// Strikes [first, first + count) on device `dev`.
template <class Real>
DeviceResult solve_on_device(const Setup& s, int dev, std::int64_t first, std::int64_t count, std::int64_t group,
                             const std::string& kernel, double* out, const ForwardJob& job = ForwardJob{}) {
  NUMPIPE_CUDA_CHECK(cudaSetDevice(dev));
  const int nx = static_cast<int>(s.p.num_x), ny = static_cast<int>(s.p.num_y);
  const int steps = static_cast<int>(s.p.num_t - 1);
  const std::uint64_t grid = std::uint64_t(nx) * ny;
  const std::uint64_t table_bytes = std::uint64_t(steps) * grid * sizeof(Real);
  const std::uint64_t strike_bytes = 2 * grid * sizeof(Real);
  const std::uint64_t small_bytes = (4 * std::uint64_t(nx) + 3 * std::uint64_t(steps + 2) * ny + 4 * ny) * 8 + 4096;

  std::size_t free_bytes = 0, total_bytes = 0;
  NUMPIPE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t usable = static_cast<std::uint64_t>(static_cast<double>(free_bytes) * 0.9);
  if (table_bytes + strike_bytes + small_bytes > usable)
    fail_resource("the CUDA backend needs " + std::to_string(table_bytes + strike_bytes + small_bytes) +
                  " bytes of device memory for numX*numY = " + std::to_string(grid) + ", numT = " +
                  std::to_string(steps + 1) + " (pivot tables " + std::to_string(table_bytes) + " + " +
                  std::to_string(strike_bytes) + " per strike); device " + std::to_string(dev) + " has " +
                  std::to_string(free_bytes) + " free (use --backend cpu)");
  // shared memory of y_step: units of 32 chunks of an odd stride; one unit per warp
  // (its row), and three for the step's y tables when they fit beside them
  const int chunk = (ny + kWarp - 1) / kWarp;
  const int stride = chunk % 2 ? chunk : chunk + 1;
  const std::size_t unit = std::size_t(kWarp) * stride * sizeof(Real);
  int smem_optin = 0;
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (unit > static_cast<std::size_t>(smem_optin))
    fail_resource("numY = " + std::to_string(ny) + " needs " + std::to_string(unit) +
                  " bytes of shared memory per row in the CUDA backend; device " + std::to_string(dev) + " has " +
                  std::to_string(smem_optin) + " (use --backend cpu)");
  const std::size_t soft = 48 * 1024;
  const bool stage = 4 * unit <= static_cast<std::size_t>(smem_optin);
  const std::size_t tables_smem = stage ? 3 * unit : 0;
  const int warps_per_block = static_cast<int>(std::max<std::size_t>(
      1, std::min<std::size_t>(8, soft > tables_smem + unit ? (soft - tables_smem) / unit : 1)));
  const std::size_t y_smem = tables_smem + warps_per_block * unit;
  if (y_smem > soft)
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(y_step_kernel<Real>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(y_smem)));

  std::int64_t g_size = group > 0 ? group : count;
  g_size = std::min<std::int64_t>(g_size, count);
  g_size = std::min<std::int64_t>(g_size, static_cast<std::int64_t>((usable - table_bytes - small_bytes) / strike_bytes));
  g_size = std::min<std::int64_t>(g_size, 65535);  // gridDim.y
  g_size = std::max<std::int64_t>(g_size, 1);

  const int chunks = (nx + kChunkRows - 1) / kChunkRows;
  const bool chunked = kernel == "chunk" || (kernel == "auto" && chunks * kChunkCols <= 512);
  if (chunked && chunks * kChunkCols > 512)
    fail_input("--gpu-kernel chunk handles numX <= " + std::to_string(32 * kChunkRows) + ", got " + std::to_string(nx));
  const std::size_t chunk_smem = 4 * std::size_t(chunks) * kChunkCols * sizeof(Real);

  HostTimer up;
  const DeviceTables<Real> tab = upload_tables<Real>(s);
  const DeviceArray<Real>&d_px = tab.px, &d_dxx = tab.dxx, &d_dt = tab.dt, &d_qy = tab.qy, &d_gy = tab.gy,
                        &d_yc = tab.yc, &d_ybeta = tab.ybeta, &d_yinv = tab.yinv;
  DeviceArray<double> d_x(nx);
  d_x.copy_from_host(s.x.data(), nx);
  DeviceArray<Real> d_xinv(static_cast<std::size_t>(std::uint64_t(steps) * grid));
  DeviceArray<Real> d_r(static_cast<std::size_t>(g_size * grid)), d_w(static_cast<std::size_t>(g_size * grid));
  const int points = job.points ? static_cast<int>(job.points->size()) : 1;
  DeviceArray<double> d_out(static_cast<std::size_t>(count * points));
  DeviceArray<double> d_strikes(job.strikes ? job.strikes->size() : 1);
  if (job.strikes) d_strikes.copy_from_host(job.strikes->data(), job.strikes->size());
  DeviceArray<double> d_cells(static_cast<std::size_t>(nx));
  if (job.smooth) d_cells.copy_from_host(s.half_cell.data(), s.half_cell.size());
  DeviceArray<std::int64_t> d_points(static_cast<std::size_t>(points));
  if (job.points) d_points.copy_from_host(job.points->data(), job.points->size());
  const int level = job.level < 0 ? steps : job.level;
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  DeviceResult res;
  res.upload_seconds = up.seconds();
  res.group = g_size;
  res.kernel = chunked ? "chunk" : "sweep";
  res.bytes = table_bytes + g_size * strike_bytes + small_bytes;

  CudaEventTimer timer;
  timer.start();
  const int xb = std::min(128, ((ny + kWarp - 1) / kWarp) * kWarp);
  {
    dim3 grid_f((ny + xb - 1) / xb, steps);
    x_factor_kernel<Real><<<grid_f, xb>>>(d_xinv.data(), d_px.data(), d_dxx.data(), d_qy.data(), d_dt.data(), nx, ny,
                                          steps);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  for (std::int64_t g0 = 0; g0 < count; g0 += g_size) {
    const int gs = static_cast<int>(std::min<std::int64_t>(g_size, count - g0));
    const std::int64_t rows = std::int64_t(gs) * nx;
    payoff_kernel<Real><<<dim3(static_cast<unsigned>(std::min<std::uint64_t>((grid + 255) / 256, 1024)), gs), 256>>>(
        d_r.data(), d_x.data(), first + g0, nx, ny, job.strikes ? d_strikes.data() : nullptr, job.put,
        job.smooth ? d_cells.data() : nullptr);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    for (int g = level - 1; g >= 0; --g) {
      if (chunked) {
        x_chunk_kernel<Real, kChunkRows><<<dim3((ny + kChunkCols - 1) / kChunkCols, gs), chunks * kChunkCols, chunk_smem>>>(
            d_r.data(), d_w.data(), d_xinv.data() + std::size_t(g) * grid, d_px.data(), d_dxx.data(),
            d_qy.data() + std::size_t(g) * ny, d_gy.data(), Real(s.dt_inv[g]), nx, ny, chunks);
      } else {
        x_step_kernel<Real, kUnroll><<<dim3((ny + xb - 1) / xb, gs), xb>>>(
            d_r.data(), d_w.data(), d_xinv.data() + std::size_t(g) * grid, d_px.data(), d_dxx.data(),
            d_qy.data() + std::size_t(g) * ny, d_gy.data(), Real(s.dt_inv[g]), nx, ny);
      }
      NUMPIPE_CUDA_CHECK_LAUNCH();
      const unsigned blocks = static_cast<unsigned>((rows + warps_per_block - 1) / warps_per_block);
      y_step_kernel<Real><<<blocks, warps_per_block * kWarp, y_smem>>>(
          d_w.data(), d_r.data(), d_ybeta.data() + std::size_t(g) * ny, d_yinv.data() + std::size_t(g) * ny,
          d_yc.data(), rows, ny, chunk, stride, stage);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    if (job.points)
      gather_points_kernel<Real><<<(gs * points + 127) / 128, 128>>>(d_r.data(), d_out.data() + g0 * points, nx, ny,
                                                                      d_points.data(), points, gs);
    else
      gather_kernel<Real><<<(gs + 127) / 128, 128>>>(d_r.data(), d_out.data() + g0, nx, ny, static_cast<int>(s.ind_x),
                                                     static_cast<int>(s.ind_y), gs);
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  timer.stop();
  res.seconds = timer.seconds();
  d_out.copy_to_host(out, static_cast<std::size_t>(count * points));
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  return res;
}

template <class Real>
std::vector<double> solve(const Setup& s, StrikeRange range, const std::vector<int>& devices, std::int64_t group,
                          const std::string& kernel, CudaRun* run) {
  const std::int64_t outer = range.last - range.first;
  std::vector<double> out(outer);
  if (run) *run = CudaRun{};
  if (outer == 0) return out;
  const int n = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(devices.size()), outer));
  if (n < 1) fail_resource("no CUDA device to run on");
  std::vector<DeviceResult> results(n);
  run_parts_on_threads(static_cast<std::size_t>(n), [&](std::size_t part) {
    const int k = static_cast<int>(part);
    const std::int64_t first = outer * k / n, last = outer * (k + 1) / n;
    results[k] =
        solve_on_device<Real>(s, devices[k], range.first + first, last - first, group, kernel, out.data() + first);
  });
  if (run) {
    for (const auto& r : results) {
      run->seconds = std::max(run->seconds, r.seconds);
      run->upload_seconds = std::max(run->upload_seconds, r.upload_seconds);
      run->group = std::max(run->group, r.group);
      run->device_bytes = std::max(run->device_bytes, r.bytes);
      run->kernel = r.kernel;
    }
  }
  return out;
}

// Device buffers of the adjoint pass, kept from one pass to the next in a process
// (calibration runs dozens of passes; allocating and freeing hundreds of MB each time
// cost more than the pass): grown when a pass needs more, never shrunk; one set per
// device and precision, deliberately never freed (the process's end releases them).
template <class Real>
struct AdjointWorkspace {
  DeviceArray<Real> px, dxx, gy, qy, ybeta, yinv, yc, sx, sq, dx1, dy1, rho_nu, dt;
  DeviceArray<Real> w0, xinv, z, y, p, c, r;
  DeviceArray<double> weights;
  template <class T>
  static void fit(DeviceArray<T>& a, std::size_t n) {
    if (a.size() < std::max<std::size_t>(n, 1)) a = DeviceArray<T>(std::max<std::size_t>(n, 1));
  }
  template <class T>
  static void put(DeviceArray<T>& a, const std::vector<T>& v) {
    fit(a, v.size());
    if (!v.empty()) a.copy_from_host(v.data(), v.size());
  }
  LaneTables<Real> view(int nx, int ny, int steps) const {
    return {px.data(), dxx.data(), gy.data(), qy.data(), ybeta.data(), yinv.data(), yc.data(), sx.data(),
            sq.data(), dx1.data(), dy1.data(), rho_nu.data(), dt.data(), nx, ny, steps};
  }
};

// The lanes' tables (lane-major), built on the host in Real exactly as the CPU backend
// builds them (one host thread per lane), into the workspace.
template <class Real>
void upload_lane_tables(AdjointWorkspace<Real>& ws, const std::vector<Lane>& lanes, bool mixed) {
  const std::size_t n = lanes.size();
  struct Host {
    std::vector<Real> px, dxx, gy, qy, ybeta, yinv, yc, sx, sq, dx1, dy1;
    Real rho_nu = 0;
  };
  std::vector<Host> host(n);
  auto build = [&](std::size_t l) {
    const Setup& s = *lanes[l].setup;
    const std::size_t steps = static_cast<std::size_t>(s.p.num_t - 1), ny = static_cast<std::size_t>(s.p.num_y);
    Host& h = host[l];
    h.px = cast<Real>(s.px);
    h.dxx = cast<Real>(s.dxx);
    h.qy.resize(steps * ny);
    for (std::size_t g = 0; g < steps; ++g)
      for (std::size_t j = 0; j < ny; ++j) h.qy[g * ny + j] = Real(s.py[j]) * Real(s.pt[g]);
    YTables<Real> yt = make_y_tables<Real>(s);
    h.gy = std::move(yt.gy);
    h.yc = std::move(yt.c);
    h.ybeta = std::move(yt.beta);
    h.yinv = std::move(yt.inv);
    if (mixed) {
      MixedTables<Real> m = make_mixed_tables<Real>(s);
      h.sx = std::move(m.sx);
      h.sq = std::move(m.sq);
      h.dx1 = std::move(m.dx1);
      h.dy1 = std::move(m.dy1);
      h.rho_nu = m.rho_nu;
    }
  };
  run_parts_on_threads(n, build);
  auto gather = [&](std::vector<Real> Host::*field) {
    std::vector<Real> all;
    for (const Host& h : host) all.insert(all.end(), (h.*field).begin(), (h.*field).end());
    return all;
  };
  using W = AdjointWorkspace<Real>;
  W::put(ws.px, gather(&Host::px));
  W::put(ws.dxx, gather(&Host::dxx));
  W::put(ws.gy, gather(&Host::gy));
  W::put(ws.qy, gather(&Host::qy));
  W::put(ws.ybeta, gather(&Host::ybeta));
  W::put(ws.yinv, gather(&Host::yinv));
  W::put(ws.yc, gather(&Host::yc));
  if (mixed) {
    W::put(ws.sx, gather(&Host::sx));
    W::put(ws.sq, gather(&Host::sq));
    W::put(ws.dx1, gather(&Host::dx1));
    W::put(ws.dy1, gather(&Host::dy1));
    std::vector<Real> rho_nu;
    for (const Host& h : host) rho_nu.push_back(h.rho_nu);
    W::put(ws.rho_nu, rho_nu);
  } else {
    for (DeviceArray<Real>* a : {&ws.sx, &ws.sq, &ws.dx1, &ws.dy1, &ws.rho_nu}) W::fit(*a, 1);
  }
  W::put(ws.dt, cast<Real>(lanes[0].setup->dt_inv));
}

// The adjoint pass of every lane (price.hpp, adjoint_weights_cuda): W[lane][m][i].
template <class Real>
std::vector<double> adjoint_on_device(const std::vector<Lane>& lanes, int dev, CudaRun* run) {
  const Tuning tuning = tuning_from_environment();
  NUMPIPE_CUDA_CHECK(cudaSetDevice(dev));
  if (lanes.empty()) fail_internal("adjoint_weights_cuda: no lanes");
  const Setup& s = *lanes[0].setup;
  const int nx = static_cast<int>(s.p.num_x), ny = static_cast<int>(s.p.num_y);
  const int steps = static_cast<int>(s.p.num_t - 1);
  const int n_lanes = static_cast<int>(lanes.size());
  bool mixed = false;
  for (const Lane& lane : lanes) {
    const Setup& o = *lane.setup;
    if (o.p.num_x != s.p.num_x || o.p.num_y != s.p.num_y || o.time != s.time || o.levels != s.levels)
      fail_internal("adjoint_weights_cuda: lanes with different grids or time grids");
    mixed = mixed || o.p.rho != 0;
  }
  if (n_lanes > 65535) fail_internal("adjoint_weights_cuda: more than 65535 lanes");
  // with the mixed term: one kernel a batch of steps where the device and the grid
  // allow (cuda_mcs.cu), else the four kernels a step below
  if (mixed) {
    std::vector<double> weights;
    if (detail::mcs_weights_cuda<Real>(lanes, dev, tuning, run, weights)) return weights;
  }
  const std::uint64_t grid = std::uint64_t(nx) * ny;
  const int m_count = static_cast<int>(s.levels.size());
  int smem_optin = 0;
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  // shared memory: adjoint_y three lines of numY for the factors and one per warp;
  // adjoint_x kAdjointXLines lines of numX per warp. Warps per block: as few as keep
  // the lines' blocks at least one per SM (more blocks in flight: the kernels are
  // latency-bound), at most 8.
  const std::size_t y_unit = std::size_t(ChunkLayout::of(ny).unit()) * sizeof(Real);
  const std::size_t x_unit = kAdjointXLines * std::size_t(ChunkLayout::of(nx).unit()) * sizeof(Real);
  if (4 * y_unit > static_cast<std::size_t>(smem_optin) || x_unit > static_cast<std::size_t>(smem_optin))
    fail_resource("numX = " + std::to_string(nx) + ", numY = " + std::to_string(ny) + " need " +
                  std::to_string(std::max(x_unit, 4 * y_unit)) + " bytes of shared memory per block in the CUDA "
                  "adjoint; device " + std::to_string(dev) + " has " + std::to_string(smem_optin) +
                  " (use --method forward or --backend cpu)");
  int sms = 0;
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  auto warps_for = [&](int lines, std::size_t fixed, std::size_t per_warp) {
    int w = 8;
    while (w > 1 && (lines * n_lanes / w < sms || fixed + w * per_warp > static_cast<std::size_t>(smem_optin))) w /= 2;
    return w;
  };
  const int y_warps = warps_for(nx, 3 * y_unit, y_unit), x_warps = warps_for(ny, 0, x_unit);
  const std::size_t y_smem = (3 + y_warps) * y_unit, x_smem = x_warps * x_unit;
  auto allow = [&](const void* kernel, std::size_t bytes) {
    NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  };
  allow(reinterpret_cast<const void*>(adjoint_y_kernel<Real, kFromStart>), y_smem);
  allow(reinterpret_cast<const void*>(adjoint_y_kernel<Real, kFromExplicit>), y_smem);
  allow(reinterpret_cast<const void*>(adjoint_y_kernel<Real, kFromHalfMixed>), y_smem);
  allow(reinterpret_cast<const void*>(adjoint_x_kernel<Real, false>), x_smem);
  allow(reinterpret_cast<const void*>(adjoint_x_kernel<Real, true>), x_smem);
  // the x pivots are tabulated for a batch of steps at a time (parallel over steps,
  // columns and lanes), the batch as large as a quarter of the free memory allows
  std::size_t free_bytes = 0, total_bytes = 0;
  NUMPIPE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t lane_grid = grid * sizeof(Real) * std::uint64_t(n_lanes);
  const std::uint64_t state_bytes = (mixed ? 6 : 4) * lane_grid +
                                    (3 * std::uint64_t(steps) * ny + 6 * std::uint64_t(nx + ny)) * sizeof(Real) * n_lanes;
  if (state_bytes + lane_grid > static_cast<std::uint64_t>(free_bytes * 0.9))
    fail_resource("the CUDA adjoint needs " + std::to_string(state_bytes + lane_grid) +
                  " bytes of device memory for numX*numY = " + std::to_string(grid) + " and " + std::to_string(n_lanes) +
                  " lanes; device " + std::to_string(dev) + " has " + std::to_string(free_bytes) +
                  " free (use --backend cpu)");
  // at most 64 steps a batch: the table then costs no more than the state, and the
  // pivots of a batch come from one launch
  const int batch = static_cast<int>(std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(std::min(steps, 64),
                                 (free_bytes / 4 > state_bytes ? free_bytes / 4 - state_bytes : 0) / lane_grid)));

  HostTimer up;
  AdjointWorkspace<Real>& ws = lines::per_device<AdjointWorkspace<Real>>(dev);
  upload_lane_tables<Real>(ws, lanes, mixed);
  const LaneTables<Real> t = ws.view(nx, ny, steps);
  std::vector<Real> start(static_cast<std::size_t>(grid) * n_lanes, Real(0));
  for (int l = 0; l < n_lanes; ++l) {
    const Functional& f = *lanes[l].functional;
    for (std::size_t k = 0; k < f.coef.size(); ++k)
      start[l * grid + static_cast<std::uint64_t>(f.i[k]) * ny + f.j[k]] += Real(f.coef[k]);
  }
  using W = AdjointWorkspace<Real>;
  W::put(ws.w0, start);
  const std::uint64_t xinv_lane = std::uint64_t(batch) * grid;
  const std::size_t state = static_cast<std::size_t>(grid) * n_lanes;
  W::fit(ws.xinv, static_cast<std::size_t>(xinv_lane * n_lanes));
  for (DeviceArray<Real>* a : {&ws.z, &ws.y, &ws.p}) W::fit(*a, state);
  W::fit(ws.c, mixed ? state : 1);
  W::fit(ws.r, mixed ? state : 1);
  const std::uint64_t w_lane = std::uint64_t(m_count) * nx;
  W::fit(ws.weights, static_cast<std::size_t>(w_lane * n_lanes));
  DeviceArray<Real>&d_w0 = ws.w0, &d_xinv = ws.xinv, &d_z = ws.z, &d_y = ws.y, &d_p = ws.p, &d_c = ws.c, &d_r = ws.r;
  DeviceArray<double>& d_weights = ws.weights;
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  if (run) {
    *run = CudaRun{};
    run->upload_seconds = up.seconds();
    run->group = n_lanes;
    run->kernel = mixed ? "adjoint, mixed term" : "adjoint";
    run->device_bytes = state_bytes + xinv_lane * n_lanes * sizeof(Real);
  }
  // The kernels are launched one by one. NUMPIPE_PRICE_GRAPH=1 captures the pass into
  // a CUDA graph and launches that (tuning; the same kernels, the same bits): measured
  // on the H100 no faster (22.5 against 22.1 ms for 320 steps of the mixed term), and
  // the graph's instantiation costs about 15 ms a pass.
  const bool use_graph = tuning.graph;
  CudaStream stream;
  const int fb = std::min(128, ((ny + kWarp - 1) / kWarp) * kWarp);
  const dim3 y_grid((nx + y_warps - 1) / y_warps, n_lanes), x_grid((ny + x_warps - 1) / x_warps, n_lanes);
  auto launch_pass = [&](cudaStream_t st) {
    int next = 0;  // the next maturity level to record
    for (int g = 0; g < steps; ++g) {
      const int slot = g % batch;
      if (slot == 0) {
        const int count = std::min(batch, steps - g);
        x_factor_lanes_kernel<Real><<<dim3((ny + fb - 1) / fb, count, n_lanes), fb, 0, st>>>(d_xinv.data(), xinv_lane,
                                                                                            t, g, count);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      }
      const Real* xinv = d_xinv.data() + std::size_t(slot) * grid;
      // the y sweep reading `input` (AdjointInput) into out, and the x sweep from it
      auto y_sweep = [&](auto input, Real* out) {
        adjoint_y_kernel<Real, decltype(input)::value><<<y_grid, y_warps * kWarp, y_smem, st>>>(
            t, g, mixed, d_w0.data(), d_y.data(), d_p.data(), d_r.data(), out);
        NUMPIPE_CUDA_CHECK_LAUNCH();
      };
      auto x_sweep = [&](auto second, const Real* in) {
        adjoint_x_kernel<Real, decltype(second)::value><<<x_grid, x_warps * kWarp, x_smem, st>>>(
            t, g, in, xinv, xinv_lane, d_y.data(), d_p.data(), d_r.data());
        NUMPIPE_CUDA_CHECK_LAUNCH();
      };
      if (g == 0)
        y_sweep(std::integral_constant<int, kFromStart>{}, d_z.data());
      else
        y_sweep(std::integral_constant<int, kFromExplicit>{}, d_z.data());
      x_sweep(std::false_type{}, d_z.data());
      if (mixed) {
        y_sweep(std::integral_constant<int, kFromHalfMixed>{}, d_c.data());
        x_sweep(std::true_type{}, d_c.data());
      }
      if (next < m_count && g + 1 == s.levels[next]) {
        adjoint_sum_kernel<Real><<<dim3((nx + 3) / 4, n_lanes), 4 * kWarp, 0, st>>>(
            t, g, mixed, d_y.data(), d_p.data(), d_r.data(), d_weights.data() + std::size_t(next) * nx, w_lane);
        NUMPIPE_CUDA_CHECK_LAUNCH();
        ++next;
      }
    }
  };
  StepReplay pass(use_graph);
  const double seconds = pass.run(stream.get(), 1, launch_pass);  // waits for the pass
  if (run) run->seconds = seconds;
  std::vector<double> weights(static_cast<std::size_t>(w_lane * n_lanes));
  d_weights.copy_to_host(weights.data(), weights.size());
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  return weights;
}

}  // namespace

std::vector<double> solve_cuda(const Setup& s, Precision precision, StrikeRange range,
                               const std::vector<int>& devices, std::int64_t group, CudaRun* run,
                               const std::string& kernel) {
  if (kernel != "auto" && kernel != "sweep" && kernel != "chunk")
    fail_input("--gpu-kernel must be auto, sweep or chunk, got '" + kernel + "'");
  check_range(s, range);
  return precision == Precision::fp64 ? solve<double>(s, range, devices, group, kernel, run)
                                      : solve<float>(s, range, devices, group, kernel, run);
}

std::vector<double> solve_cuda(const Setup& s, Precision precision, const std::vector<int>& devices,
                               std::int64_t group, CudaRun* run, const std::string& kernel) {
  return solve_cuda(s, precision, StrikeRange{0, s.p.outer}, devices, group, run, kernel);
}

}  // namespace numpipe::price

namespace numpipe::price {

std::vector<double> adjoint_weights_cuda(const std::vector<Lane>& lanes, Precision precision, int device, CudaRun* run) {
  return precision == Precision::fp64 ? adjoint_on_device<double>(lanes, device, run)
                                      : adjoint_on_device<float>(lanes, device, run);
}

std::vector<double> adjoint_weights_cuda(const Setup& s, Precision precision, int device, CudaRun* run) {
  if (s.levels.size() > 1) fail_internal("adjoint_weights_cuda: several maturities; pass the lanes");
  const std::vector<Functional> price = functionals_of(s, false);
  return adjoint_weights_cuda(std::vector<Lane>{{&s, &price[0]}}, precision, device, run);
}

std::vector<double> solve_cuda_contracts(const Setup& s, Precision precision, const std::vector<Contract>& contracts,
                                         const std::vector<Functional>& fs, int device, CudaRun* run) {
  if (s.p.rho != 0) fail_input("--method forward on the CUDA backend has no mixed term: use the adjoint method");
  // the grid points the functionals read, once each
  std::vector<std::int64_t> points;
  for (const Functional& f : fs)
    for (std::size_t k = 0; k < f.coef.size(); ++k) {
      const std::int64_t at = f.i[k] * s.p.num_y + f.j[k];
      if (std::find(points.begin(), points.end(), at) == points.end()) points.push_back(at);
    }
  const std::size_t count = contracts.size(), np = points.size();
  std::vector<double> out(fs.size() * count);
  if (run) *run = CudaRun{};
  // contracts grouped by (maturity, put): one forward solve per group
  std::vector<bool> done(count, false);
  for (std::size_t c0 = 0; c0 < count; ++c0) {
    if (done[c0]) continue;
    std::vector<std::size_t> members;
    std::vector<double> strikes;
    for (std::size_t c = c0; c < count; ++c)
      if (!done[c] && contracts[c].maturity == contracts[c0].maturity && contracts[c].put == contracts[c0].put &&
          contracts[c].smooth == contracts[c0].smooth) {
        members.push_back(c);
        strikes.push_back(contracts[c].strike);
        done[c] = true;
      }
    ForwardJob job;
    job.strikes = &strikes;
    job.put = contracts[c0].put;
    job.smooth = contracts[c0].smooth;
    job.level = static_cast<int>(s.levels[contracts[c0].maturity]);
    job.points = &points;
    std::vector<double> values(strikes.size() * np);
    const std::int64_t n = static_cast<std::int64_t>(strikes.size());
    const DeviceResult r = precision == Precision::fp64
                               ? solve_on_device<double>(s, device, 0, n, 0, "auto", values.data(), job)
                               : solve_on_device<float>(s, device, 0, n, 0, "auto", values.data(), job);
    if (run) {
      run->seconds += r.seconds;
      run->upload_seconds += r.upload_seconds;
      run->kernel = r.kernel;
      run->device_bytes = std::max(run->device_bytes, r.bytes);
    }
    for (std::size_t k = 0; k < members.size(); ++k)
      for (std::size_t f = 0; f < fs.size(); ++f) {
        double sum = 0;  // read_functional's order (cpu.cpp)
        for (std::size_t q = 0; q < fs[f].coef.size(); ++q) {
          const std::int64_t at = fs[f].i[q] * s.p.num_y + fs[f].j[q];
          const std::size_t idx = static_cast<std::size_t>(std::find(points.begin(), points.end(), at) - points.begin());
          sum += fs[f].coef[q] * values[k * np + idx];
        }
        out[f * count + members[k]] = sum;
      }
  }
  return out;
}

}  // namespace numpipe::price
