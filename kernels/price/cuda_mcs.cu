// price: the CUDA adjoint pass with the mixed term (rho != 0), the transposed modified
// Craig-Sneyd step (model.hpp; docs/price.md "Correlation"):
//
//   a = S^-T w;  b = T^-T (dtInv a);  c = S^-T (0.5 C^T b);  d = T^-T (dtInv c)
//   w' = E^T (b + d) + G^T (b + d - 0.5 (a + c)) + C^T (0.5 b + d)
//
// Four phases a step, each a solve along whole lines (y, x, y, x), so every phase
// needs what the previous one wrote on every line of the grid. cuda.cu launches a
// kernel per phase: on a 256 x 256 grid each is a few microseconds of latency-bound
// work, and a 320-step pass was 1280 launches and their gaps. Here one kernel runs a
// batch of steps: each lane (a grid) is one thread block cluster (sm_90) of CS
// blocks, block k owning rows [k nx / CS, (k+1) nx / CS) in the y phases and the same
// share of columns in the x phases; the phases meet at cluster barriers
// (barrier.cluster, with a fence before it; the state crosses blocks through L2 and is
// read with ld.global.cg, never from a block's L1). The state stays in device memory
// (six grids a lane, L2-resident).
//
// y phases (a warp per row): the block stages its rows and their neighbours of the
// state in shared memory (coalesced), a thread per column forms the right side of its
// rows (the explicit part E^T y + G^T p + C^T r of the previous step, or 0.5 C^T b)
// into the rows' lines, then each warp solves its row as the warp scans of cuda.cu
// (warp_recurrence) and stores it. At a maturity's level the warp also sums the row
// (the order of cuda.cu's adjoint_sum_kernel).
// x phases (a warp per column): the block stages its columns' right sides and x
// pivots (coalesced along j), each warp solves its column, the block stores them.
// The x pivots of a batch of steps come from mcs_x_factor_kernel on a second stream,
// one batch ahead, into one of two buffers.
//
// The x operator's weights are formed as h_k(i, j) = hx[i][k] qy[j] with hx[i][k] =
// 0.25 px[i] Dxx[i][k] (model.hpp forms 0.5 (0.5 px qy) Dxx: the same number to
// rounding), and the mixed term as C^T v (k, l) = sum_di ex[k][di] sum_dj
// ey[l][dj] v[k+di][l+dj], ex = rho nu X^beta Dx and ey = sqrt(py pt) Dy (model.hpp's
// mixed_adjoint_at, regrouped): 9 + 3 multiply-adds a point instead of model.hpp's 39
// operations. The results equal cuda.cu's and the CPU's to rounding (tested against
// the CPU at 1e-10) and do not depend on CS or the block size: every value is formed
// by the same operations whichever block forms it.
#include "cuda_mcs.hpp"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "common/cuda_check.hpp"
#include "common/cuda_stream.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "common/error.hpp"
#include "common/profile.hpp"
#include "cuda_lines.cuh"
#include "detail/backends.hpp"
#include "detail/grid.hpp"

namespace numpipe::price::detail {
namespace {

namespace cg = cooperative_groups;
using lines::ChunkLayout;
using lines::ChunkWalk;
using lines::kWarp;
using lines::warp_recurrence;

constexpr int kMaxWarps = 16;   // warps a block (512 threads)
constexpr int kMinAutoWarps = 8;  // fewer (wide grids): the four-kernel pass unless required
constexpr int kBatchSteps = 32; // time steps a kernel, and x pivots a buffer

// Every lane's tables, lane-major (McsWorkspace: a few lines a lane uploaded by
// mcs_weights_cuda, the per-step ones formed by the prep kernels below).
template <class Real>
struct McsTables {
  const Real* hx;     // [L][nx][3]  0.25 px[i] Dxx[i][k]
  const Real* ex;     // [L][nx][3]  weight of row k+d-1 in C^T at row k (0 off rows 1..nx-2)
  const Real* gy;     // [L][ny][3]  0.5 VarY Dyy (YTables::gy)
  const Real* yc;     // [L][ny]     the y systems' upper diagonal (YTables::c)
  const Real* dy1;    // [L][ny][3]
  const double* py;   // [L][ny]
  const double* pt;   // [L][steps]
  const Real* dt;     // [steps]     dtInv (the lanes share the time grid)
  Real* qy;           // [L][steps][ny]     py[j] pt[g] in Real (formed on the device)
  Real* ey;           // [L][steps][ny][3]  weight of column l+d-1 in C^T at column l
  Real* ybeta;        // [L][steps][ny]     the y systems' Thomas factors (make_y_tables)
  Real* yinv;         // [L][steps][ny]
  int nx, ny, steps;
};

// The state and the outputs.
template <class Real>
struct McsState {
  Real* w0;               // [L][nx][ny] the start vectors
  Real *a, *y, *p, *r, *c;  // [L][nx][ny] each (docs/price.md's a, b + d, ..., c)
  const Real* xinv;       // [L][count][nx][ny] the x pivots of the kernel's steps
  std::int64_t xinv_lane;
  double* weights;        // [L][M][nx]
  std::int64_t weights_lane;
  const int* level_slot;  // [steps + 1] maturity m whose level is g, else -1
};

// Shared memory of a block, in Real values: kept for the whole kernel the x solves'
// coefficient lines (hx[i-1][2], hx[i+1][0]) and the step's y factors; then either the
// y phases' staged rows and lines or the x phases' column lines.
struct McsLayout {
  std::int64_t unit_x, unit_y;
  std::int64_t hx2p, hx0n, ytab;
  std::int64_t ys, rs, ps, lines;  // y phases
  std::int64_t cols, col_stride;   // x phases: per column z, pivots, the solution (odd stride: no bank conflicts)
  std::int64_t total;
  __host__ __device__ static McsLayout of(int nx, int ny, int warps) {
    McsLayout l;
    l.unit_x = ChunkLayout::of(nx).unit();
    l.unit_y = ChunkLayout::of(ny).unit();
    l.hx2p = 0;
    l.hx0n = l.unit_x;
    l.ytab = 2 * l.unit_x;
    const std::int64_t region = l.ytab + 3 * l.unit_y;
    l.ys = region;
    l.rs = l.ys + std::int64_t(warps + 2) * ny;
    l.ps = l.rs + std::int64_t(warps + 2) * ny;
    l.lines = l.ps + std::int64_t(warps) * ny;
    const std::int64_t row_end = l.lines + std::int64_t(warps) * l.unit_y;
    l.col_stride = 3 * l.unit_x + 1;
    l.cols = region;
    const std::int64_t col_end = l.cols + std::int64_t(warps) * l.col_stride;
    l.total = row_end > col_end ? row_end : col_end;
    return l;
  }
};

// Single roundings, never contracted into FMAs: the y factors come out as the host's
// make_y_tables makes them.
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }

// qy[g][j] = Real(py[j]) Real(pt[g]) (upload_lane_tables's qy) and the mixed term's
// column weights ey[g][j][d] = sq[j'] Dy[j'][2-d], j' = j + d - 1 in 1..ny-2, sq =
// sqrt(py pt) in double (make_mixed_tables's sq). Thread per (column, step, lane).
template <class Real>
__global__ void mcs_columns_kernel(McsTables<Real> t) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, lane_id = blockIdx.z;
  const int ny = t.ny, steps = t.steps;
  if (j >= ny) return;
  const double* py = t.py + std::int64_t(lane_id) * ny;
  const Real* dy1 = t.dy1 + 3 * std::int64_t(lane_id) * ny;
  for (int g = blockIdx.y; g < steps; g += gridDim.y) {
    const double pt = t.pt[std::int64_t(lane_id) * steps + g];
    const std::int64_t at = (std::int64_t(lane_id) * steps + g) * ny + j;
    t.qy[at] = Real(py[j]) * Real(pt);
    for (int d = 0; d < 3; ++d) {
      const int jj = j + d - 1;
      t.ey[3 * at + d] = jj >= 1 && jj <= ny - 2 ? Real(sqrt(py[jj] * pt)) * dy1[3 * jj + 2 - d] : Real(0);
    }
  }
}

// The y systems' Thomas factors of every step and lane (thread per (step, lane)),
// make_y_tables's operations in order.
template <class Real>
__global__ void mcs_y_factor_kernel(McsTables<Real> t, int lanes) {
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= std::int64_t(t.steps) * lanes) return;
  const int g = static_cast<int>(k % t.steps), lane_id = static_cast<int>(k / t.steps), ny = t.ny;
  const Real* gy = t.gy + 3 * std::int64_t(lane_id) * ny;
  const Real* c = t.yc + std::int64_t(lane_id) * ny;
  Real* beta = t.ybeta + (std::int64_t(lane_id) * t.steps + g) * ny;
  Real* inv = t.yinv + (std::int64_t(lane_id) * t.steps + g) * ny;
  const Real dt_inv = t.dt[g];
  Real inv_prev = 0;
  for (int j = 0; j < ny; ++j) {
    const Real a = -mul_rn(Real(0.5), gy[3 * j]);
    const Real b = sub_rn(dt_inv, mul_rn(Real(0.5), gy[3 * j + 1]));
    const Real bj = j == 0 ? Real(0) : mul_rn(a, inv_prev);
    const Real cj = j == 0 ? Real(0) : c[j - 1];
    inv_prev = div_rn(Real(1), sub_rn(b, mul_rn(bj, cj)));
    beta[j] = bj;
    inv[j] = inv_prev;
  }
}

// The start vectors: w0 (zeroed before) += each functional's coefficients, in order.
template <class Real>
__global__ void mcs_start_kernel(Real* __restrict__ w0, const std::int64_t* __restrict__ at,
                                 const Real* __restrict__ coef, int count) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int k = 0; k < count; ++k) w0[at[k]] += coef[k];
}

// The x pivots of steps [g0, g0 + count) of every lane (thread per (column, step,
// lane)) with the weights h_k = hx[i][k] qy[j] of the pass: out[lane][g - g0][i][j].
template <class Real>
__global__ void mcs_x_factor_kernel(Real* __restrict__ xinv, std::int64_t lane_stride, McsTables<Real> t, int g0,
                                    int count) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, gg = blockIdx.y, lane_id = blockIdx.z;
  const int nx = t.nx, ny = t.ny;
  if (j >= ny || gg >= count) return;
  const int g = g0 + gg;
  const Real qv = t.qy[(std::int64_t(lane_id) * t.steps + g) * ny + j], dt = t.dt[g];
  const Real* hx = t.hx + 3 * std::int64_t(lane_id) * nx;
  Real* out = xinv + lane_id * lane_stride + std::int64_t(gg) * nx * ny;
  Real inv_prev = 0, c_prev = 0;
  for (int i = 0; i < nx; ++i) {
    const Real h0 = hx[3 * i] * qv, h1 = hx[3 * i + 1] * qv;
    const Real beta = -h0 * inv_prev;
    const Real inv = thomas_inv(dt - h1, beta, c_prev);
    out[std::int64_t(i) * ny + j] = inv;
    inv_prev = inv;
    c_prev = -(hx[3 * i + 2] * qv);
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NUMPIPE_PRICE_CLUSTERS 1
#endif

#ifdef NUMPIPE_PRICE_CLUSTERS
constexpr int kStage = 16;  // loads in flight per thread while staging

// What a y phase solves for: the start vector (step 0), the previous step's explicit
// part (then w = E^T y + G^T p + C^T r), 0.5 C^T b of this step, or (after the last
// step) the explicit part only, summed and not solved.
enum McsInput { kStart, kExplicit, kHalfMixed, kFinal };

// One range of a lane's grid, [first, first + count) (first may be negative), into
// shared memory; zero outside [0, limit).
template <class Real>
struct StageRange {
  Real* dst;
  const Real* src;
  std::int64_t first;
  int count;
};

// Up to three ranges into shared memory, kStage loads in flight per thread, read
// through L2 (other blocks wrote them in this kernel).
template <class Real>
__device__ __forceinline__ void stage_ranges(StageRange<Real> r0, StageRange<Real> r1, StageRange<Real> r2,
                                             std::int64_t limit) {
  const int c0 = r0.count, c01 = r0.count + r1.count, total = c01 + r2.count;
  for (int base = threadIdx.x; base < total; base += kStage * blockDim.x) {
    Real v[kStage];
#pragma unroll
    for (int u = 0; u < kStage; ++u) {
      const int s = base + u * blockDim.x;
      v[u] = Real(0);
      if (s < total) {
        const std::int64_t e = s < c0 ? r0.first + s : s < c01 ? r1.first + (s - c0) : r2.first + (s - c01);
        const Real* src = s < c0 ? r0.src : s < c01 ? r1.src : r2.src;
        if (e >= 0 && e < limit) v[u] = __ldcg(src + e);
      }
    }
#pragma unroll
    for (int u = 0; u < kStage; ++u) {
      const int s = base + u * blockDim.x;
      if (s < total) {
        if (s < c0)
          r0.dst[s] = v[u];
        else if (s < c01)
          r1.dst[s - c0] = v[u];
        else
          r2.dst[s - c01] = v[u];
      }
    }
  }
}

// Between phases: every block's writes of the state visible to the cluster (the fence,
// then barrier.cluster's release and acquire); the block barrier after it makes the
// shared-memory hand-over explicit (the cluster barrier orders it too).
__device__ __forceinline__ void cluster_barrier() {
  __threadfence();
  cg::this_cluster().sync();
  __syncthreads();
}

// A y phase of step g on the block's rows [i0, i1) (see the file's comment).
template <class Real>
__device__ void mcs_y_phase(int input, int g, const McsTables<Real>& t, const McsState<Real>& st, Real* sm,
                            const McsLayout& L, int lane_id, int i0, int i1) {
  const int nx = t.nx, ny = t.ny, steps = t.steps;
  const int tid = threadIdx.x, nthreads = blockDim.x, warps = nthreads / kWarp;
  const int wid = tid / kWarp, lane = tid % kWarp;
  const std::int64_t grid = std::int64_t(nx) * ny, off = lane_id * grid;
  const ChunkLayout ly = ChunkLayout::of(ny);
  // the step whose coefficients the right side takes
  const int gc = input == kHalfMixed ? g : g - 1;
  if (input != kFinal) {  // step g's y factors, as the transposed solve reads them
    const Real* beta = t.ybeta + (std::int64_t(lane_id) * steps + g) * ny;
    const Real* inv = t.yinv + (std::int64_t(lane_id) * steps + g) * ny;
    const Real* c = t.yc + std::int64_t(lane_id) * ny;
    for (int j = tid; j < ny; j += nthreads) {
      sm[L.ytab + ly.at(j)] = j > 0 ? c[j - 1] : Real(0);
      sm[L.ytab + L.unit_y + ly.at(j)] = inv[j];
      sm[L.ytab + 2 * L.unit_y + ly.at(j)] = j + 1 < ny ? beta[j + 1] : Real(0);
    }
  }
  const int slot = input == kExplicit || input == kFinal ? st.level_slot[g] : -1;
  const Real* hx = t.hx + 3 * std::int64_t(lane_id) * nx;
  const Real* ex = t.ex + 3 * std::int64_t(lane_id) * nx;
  const Real* gy = t.gy + 3 * std::int64_t(lane_id) * ny;
  Real* rowlines = sm + L.lines;
  for (int rb = i0; rb < i1; rb += warps) {
    const int re = min(rb + warps, i1), nr = re - rb;
    // stage rows rb-1 .. re of y and r (or of b), rows rb .. re-1 of p
    const std::int64_t first = std::int64_t(rb - 1) * ny;
    const StageRange<Real> none{nullptr, nullptr, 0, 0};
    if (input == kExplicit || input == kFinal)
      stage_ranges<Real>({sm + L.ys, st.y + off, first, (nr + 2) * ny}, {sm + L.rs, st.r + off, first, (nr + 2) * ny},
                         {sm + L.ps, st.p + off, first + ny, nr * ny}, grid);
    else if (input == kHalfMixed)
      stage_ranges<Real>({sm + L.ys, st.y + off, first, (nr + 2) * ny}, none, none, grid);
    __syncthreads();
    // the right sides of rows rb .. re-1 into their lines: a thread per column and
    // segment of rows
    if (input == kStart) {
      for (int k = tid; k < nr * ny; k += nthreads) {
        const int i = rb + k / ny, j = k % ny;
        rowlines[std::int64_t(i - rb) * L.unit_y + ly.at(j)] = st.w0[off + std::int64_t(i) * ny + j];
      }
    } else {
      const int segs = ny >= nthreads ? 1 : max(1, min(nthreads / ny, nr));
      const int rows_per = (nr + segs - 1) / segs;
      const Real* ys = sm + L.ys;
      const Real* rs = sm + (input == kHalfMixed ? L.ys : L.rs);
      const Real* ps = sm + L.ps;
      const Real* qyg = t.qy + (std::int64_t(lane_id) * steps + gc) * ny;
      const Real* eyg = t.ey + 3 * (std::int64_t(lane_id) * steps + gc) * ny;
      const Real dtc = t.dt[gc];
      for (int item = tid; item < ny * segs; item += nthreads) {
        const int seg = item / ny, j = item % ny;
        const int ra = rb + seg * rows_per, rz = min(ra + rows_per, re);
        if (ra >= rz) continue;
        const int jat = ly.at(j);
        const Real e0 = eyg[3 * j], e1 = eyg[3 * j + 1], e2 = eyg[3 * j + 2];
        // staged row i of an array (rows rb-1 .. re)
        auto row = [&](const Real* base, int i) { return base + std::int64_t(i - rb + 1) * ny + j; };
        // sum over the column's neighbours of the mixed term: ey . v[i][j-1..j+1]
        auto tmix = [&](int i) {
          const Real* v = row(rs, i);
          return explicit_y(e0, e1, e2, j > 0 ? v[-1] : Real(0), v[0], j + 1 < ny ? v[1] : Real(0));
        };
        Real tm = tmix(ra - 1), tc = tmix(ra);
        if (input == kHalfMixed) {
          for (int i = ra; i < rz; ++i) {
            const Real tp = tmix(i + 1);
            const Real* e = ex + 3 * i;
            rowlines[std::int64_t(i - rb) * L.unit_y + jat] = Real(0.5) * explicit_y(e[0], e[1], e[2], tm, tc, tp);
            tm = tc;
            tc = tp;
          }
        } else {
          const Real qv = qyg[j];
          const Real g1 = gy[3 * j + 1], g0n = j + 1 < ny ? gy[3 * (j + 1)] : Real(0),
                     g2p = j > 0 ? gy[3 * (j - 1) + 2] : Real(0);
          Real ym = *row(ys, ra - 1), yc = *row(ys, ra);
          for (int i = ra; i < rz; ++i) {
            const Real yp = *row(ys, i + 1), tp = tmix(i + 1);
            const Real h1 = hx[3 * i + 1] * qv;
            const Real h0n = i + 1 < nx ? hx[3 * (i + 1)] * qv : Real(0);
            const Real h2p = i > 0 ? hx[3 * (i - 1) + 2] * qv : Real(0);
            const Real* pr = ps + std::int64_t(i - rb) * ny + j;
            Real w = explicit_x_adjoint(dtc, h1, h0n, h2p, ym, yc, yp) +
                     explicit_y_adjoint(g1, g0n, g2p, j > 0 ? pr[-1] : Real(0), pr[0], j + 1 < ny ? pr[1] : Real(0));
            const Real* e = ex + 3 * i;
            w += explicit_y(e[0], e[1], e[2], tm, tc, tp);
            rowlines[std::int64_t(i - rb) * L.unit_y + jat] = w;
            tm = tc;
            tc = tp;
            ym = yc;
            yc = yp;
          }
        }
      }
    }
    __syncthreads();
    // a warp per row: the level's sum, the transposed y solve, the row out
    if (wid < nr) {
      const int i = rb + wid;
      Real* line = rowlines + std::int64_t(wid) * L.unit_y;
      if (slot >= 0) {  // cuda.cu adjoint_sum_kernel's order
        double sum = 0;
        ChunkWalk at(ly, lane, kWarp);
        for (int j = lane; j < ny; j += kWarp, at.next()) sum += static_cast<double>(line[at.at()]);
        for (int o = kWarp / 2; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (lane == 0) st.weights[lane_id * st.weights_lane + std::int64_t(slot) * nx + i] = sum;
      }
      if (input != kFinal) {
        const int j0 = lane * ly.chunk, j1 = min(j0 + ly.chunk, ny);
        const int shift = lane * ly.stride - j0;
        Real* mine = line + shift;
        const Real* c_prev = sm + L.ytab + shift;
        const Real* inv_j = c_prev + L.unit_y;
        const Real* beta_next = inv_j + L.unit_y;
        __syncwarp();
        // U^T: v_j = (w_j - c_{j-1} v_{j-1}) inv_j;  L^T: z_j = v_j - beta_{j+1} z_{j+1}
        lines::warp_transposed_thomas(j0, j1, lane, [&](int j) { return mine[j]; }, c_prev, inv_j, beta_next, mine);
        __syncwarp();
        Real* out = (input == kHalfMixed ? st.c : st.a) + off + std::int64_t(i) * ny;
        ChunkWalk at(ly, lane, kWarp);
        for (int j = lane; j < ny; j += kWarp, at.next()) out[j] = line[at.at()];
      }
    }
    __syncthreads();  // the lines and staged rows are reused
  }
}

// An x phase of step g on the block's columns [j0, j1): Second = false solves
// b = T^-T (dtInv a), storing y = b and p = b - 0.5 a; Second = true solves
// d = T^-T (dtInv c), storing r = 0.5 b + d, y = b + d, p = (b - 0.5 a) + (d - 0.5 c).
template <class Real, bool Second>
__device__ void mcs_x_phase(int g, int g0, const McsTables<Real>& t, const McsState<Real>& st, Real* sm,
                            const McsLayout& L, int lane_id, int j0, int j1) {
  const int nx = t.nx, ny = t.ny;
  const int tid = threadIdx.x, nthreads = blockDim.x, warps = nthreads / kWarp;
  const int wid = tid / kWarp, lane = tid % kWarp;
  const std::int64_t grid = std::int64_t(nx) * ny, off = lane_id * grid;
  const ChunkLayout lx = ChunkLayout::of(nx);
  const Real* xinv = st.xinv + lane_id * st.xinv_lane + std::int64_t(g - g0) * grid;
  const Real* src = (Second ? st.c : st.a) + off;
  const Real* qyg = t.qy + (std::int64_t(lane_id) * t.steps + g) * ny;
  const Real dtg = t.dt[g];
  for (int jb = j0; jb < j1; jb += warps) {
    // the block's threads over the tile of rows 0..nx-1 and columns jb..jb+wc-1: thread
    // (column col, first row r0) takes rows r0, r0 + rstep, ...; consecutive threads
    // take consecutive columns of a row (coalesced)
    const int wc = min(warps, j1 - jb), rstep = nthreads / wc;
    const int col = tid % wc, r0 = tid / wc;
    const bool mover = tid < rstep * wc;
    Real* mycol = sm + L.cols + col * L.col_stride;
    const std::int64_t gcol = off + jb + col;  // element (i, jb + col) at gcol + i ny
    // stage z and the pivots of the tile
    if (mover) {
      ChunkWalk at(lx, r0 < nx ? r0 : 0, rstep);
      for (int ib = r0; ib < nx; ib += kStage * rstep) {
        Real zv[kStage], iv[kStage];
#pragma unroll
        for (int u = 0; u < kStage; ++u) {
          const int i = ib + u * rstep;
          zv[u] = iv[u] = Real(0);
          if (i < nx) {
            const std::int64_t k = std::int64_t(i) * ny + jb + col;
            zv[u] = __ldcg(src + k);
            iv[u] = __ldg(xinv + k);
          }
        }
#pragma unroll
        for (int u = 0; u < kStage; ++u) {
          if (ib + u * rstep < nx) {
            mycol[at.at()] = zv[u];
            mycol[L.unit_x + at.at()] = iv[u];
            at.next();
          }
        }
      }
    }
    __syncthreads();
    if (wid < wc) {
      const Real qv = qyg[jb + wid];
      Real* cb = sm + L.cols + wid * L.col_stride;
      const int ia = lane * lx.chunk, iz = min(ia + lx.chunk, nx);
      const int shift = lane * lx.stride - ia;
      const Real* zs = cb + shift;
      const Real* inv = cb + L.unit_x + shift;
      Real* ys = cb + 2 * L.unit_x + shift;
      const Real* h2 = sm + L.hx2p + shift;  // hx[i-1][2]
      const Real* h0 = sm + L.hx0n + shift;  // hx[i+1][0]
      auto keep = [&](int i, Real v) { ys[i] = v; };
      // U^T: v_i = (dt z_i - c_{i-1} v_{i-1}) inv_i, c_{i-1} = -h2(i-1)
      warp_recurrence<true, Real>(
          ia, iz, lane, [&](int i, Real q) { return thomas_back(dtg * zs[i], -(h2[i] * qv), q, inv[i]); },
          [&](int i) { return (h2[i] * qv) * inv[i]; }, keep);
      // L^T: y_i = v_i - beta_{i+1} y_{i+1}, beta_{i+1} = -h0(i+1) inv_i
      warp_recurrence<false, Real>(
          ia, iz, lane, [&](int i, Real q) { return thomas_forward(ys[i], -(h0[i] * qv) * inv[i], q); },
          [&](int i) { return (h0[i] * qv) * inv[i]; }, keep);
    }
    __syncthreads();
    // the tile out, coalesced along j
    if (mover) {
      ChunkWalk at(lx, r0 < nx ? r0 : 0, rstep);
      for (int ib = r0; ib < nx; ib += kStage * rstep) {
        // the second sweep adds to the first's y and p: read them first
        Real bv[kStage], pv[kStage];
#pragma unroll
        for (int u = 0; u < kStage; ++u) {
          const int i = ib + u * rstep;
          bv[u] = pv[u] = Real(0);
          if (Second && i < nx) {
            bv[u] = __ldcg(st.y + gcol + std::int64_t(i) * ny);
            pv[u] = __ldcg(st.p + gcol + std::int64_t(i) * ny);
          }
        }
#pragma unroll
        for (int u = 0; u < kStage; ++u) {
          const int i = ib + u * rstep;
          if (i < nx) {
            const std::int64_t k = gcol + std::int64_t(i) * ny;
            const Real v = mycol[2 * L.unit_x + at.at()], z = mycol[at.at()];
            if constexpr (Second) {
              st.r[k] = Real(0.5) * bv[u] + v;
              st.y[k] = bv[u] + v;
              st.p[k] = pv[u] + adjoint_p(v, z);
            } else {
              st.y[k] = v;
              st.p[k] = adjoint_p(v, z);
            }
            at.next();
          }
        }
      }
    }
    __syncthreads();  // the column lines are reused
  }
}
#endif  // NUMPIPE_PRICE_CLUSTERS

// Steps [g0, g1) of every lane (blockIdx.y; a cluster of gridDim.x blocks each), then
// with `finish` the last step's explicit part (its maturity's weights).
template <class Real>
__global__ void __launch_bounds__(kMaxWarps* kWarp, 1)
    mcs_pass_kernel(McsTables<Real> t, McsState<Real> st, int g0, int g1, int finish) {
#ifdef NUMPIPE_PRICE_CLUSTERS
  extern __shared__ unsigned char smem_raw[];
  Real* sm = reinterpret_cast<Real*>(smem_raw);
  const int nx = t.nx, ny = t.ny;
  const int cs = gridDim.x, rank = blockIdx.x, lane_id = blockIdx.y;
  const McsLayout L = McsLayout::of(nx, ny, blockDim.x / kWarp);
  const int i0 = static_cast<int>(std::int64_t(nx) * rank / cs), i1 = static_cast<int>(std::int64_t(nx) * (rank + 1) / cs);
  const int j0 = static_cast<int>(std::int64_t(ny) * rank / cs), j1 = static_cast<int>(std::int64_t(ny) * (rank + 1) / cs);
  const ChunkLayout lx = ChunkLayout::of(nx);
  const Real* hx = t.hx + 3 * std::int64_t(lane_id) * nx;
  for (int i = threadIdx.x; i < nx; i += blockDim.x) {  // read after the first phase's barrier
    const int at = lx.at(i);
    sm[L.hx2p + at] = i > 0 ? hx[3 * (i - 1) + 2] : Real(0);
    sm[L.hx0n + at] = i + 1 < nx ? hx[3 * (i + 1)] : Real(0);
  }
  for (int g = g0; g < g1; ++g) {
    {  // this step's pivots of the block's columns towards L2 (read in both x phases)
      const Real* xinv = st.xinv + lane_id * st.xinv_lane + std::int64_t(g - g0) * nx * ny;
      constexpr int per_line = 128 / sizeof(Real);
      const int lines_per_row = (j1 - j0 + per_line - 1) / per_line;
      for (int k = threadIdx.x; k < nx * lines_per_row; k += blockDim.x) {
        const Real* at = xinv + std::int64_t(k / lines_per_row) * ny + j0 + (k % lines_per_row) * per_line;
        asm volatile("prefetch.L2 [%0];" ::"l"(at));
      }
    }
    mcs_y_phase<Real>(g == 0 ? kStart : kExplicit, g, t, st, sm, L, lane_id, i0, i1);
    cluster_barrier();
    mcs_x_phase<Real, false>(g, g0, t, st, sm, L, lane_id, j0, j1);
    cluster_barrier();
    mcs_y_phase<Real>(kHalfMixed, g, t, st, sm, L, lane_id, i0, i1);
    cluster_barrier();
    mcs_x_phase<Real, true>(g, g0, t, st, sm, L, lane_id, j0, j1);
    cluster_barrier();
  }
  if (finish) mcs_y_phase<Real>(kFinal, t.steps, t, st, sm, L, lane_id, i0, i1);
#else
  // built without sm_90 code: the host never launches this (mcs_weights_cuda checks the
  // function's PTX version)
  __trap();
#endif
}

// ---- host ------------------------------------------------------------------------------

// Device buffers kept from one pass to the next (calibration runs dozens), grown when
// a pass needs more, never shrunk; one set per device and precision, never freed
// (the process's end releases them), as cuda.cu's AdjointWorkspace.
template <class Real>
struct McsWorkspace {
  DeviceArray<Real> hx, ex, gy, yc, dy1, dt, qy, ey, ybeta, yinv, w0, a, y, p, r, c, coef;
  DeviceArray<Real> xinv[2];
  DeviceArray<double> py, pt, weights;
  DeviceArray<int> level_slot;
  DeviceArray<std::int64_t> at;
};
template <class T>
std::uint64_t growth(const DeviceArray<T>& a, std::size_t n) {
  return a.size() < std::max<std::size_t>(n, 1) ? std::max<std::size_t>(n, 1) * sizeof(T) : 0;
}
template <class T>
void fit(DeviceArray<T>& a, std::size_t n) {
  if (a.size() < std::max<std::size_t>(n, 1)) a = DeviceArray<T>(std::max<std::size_t>(n, 1));
}
template <class T>
void put(DeviceArray<T>& a, const std::vector<T>& v, cudaStream_t s) {
  fit(a, v.size());
  if (!v.empty()) a.copy_from_host(v.data(), v.size(), s);
}

// The launch shape of a pass: blocks per lane (the cluster), warps per block, bytes of
// shared memory; cs = 0 with `why` where none fits.
struct Shape {
  int cs = 0, warps = 0;
  std::size_t smem = 0;
  std::string why;
};
template <class Real>
Shape shape_of(int dev, int nx, int ny, int lanes, int forced) {
  static std::mutex lock;
  static std::map<std::tuple<int, int, int, int, int>, Shape> known;
  const auto key = std::make_tuple(dev, nx, ny, lanes, forced);
  {
    std::lock_guard<std::mutex> guard(lock);
    const auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  Shape s;
  int major = 0, clusters = 0, smem_optin = 0;
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, dev));
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  cudaFuncAttributes fa{};
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&fa, mcs_pass_kernel<Real>));
  if (major < 9 || !clusters || fa.ptxVersion < 90) {
    s.why = "device " + std::to_string(dev) + " has no thread block clusters in this build (compute capability " +
            std::to_string(major) + ", kernel PTX " + std::to_string(fa.ptxVersion) + ")";
  } else {
    int warps = kMaxWarps;
    while (warps > 1 && std::uint64_t(McsLayout::of(nx, ny, warps).total) * sizeof(Real) > std::uint64_t(smem_optin))
      warps /= 2;
    const std::uint64_t bytes = std::uint64_t(McsLayout::of(nx, ny, warps).total) * sizeof(Real);
    if (bytes > std::uint64_t(smem_optin)) {
      s.why = "numX = " + std::to_string(nx) + ", numY = " + std::to_string(ny) + " need " + std::to_string(bytes) +
              " bytes of shared memory per block; device " + std::to_string(dev) + " has " + std::to_string(smem_optin);
    } else {
      const auto kernel = mcs_pass_kernel<Real>;
      NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
      NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
      // the largest cluster of which every lane's fits at once, else the largest that fits
      int best = 0, fallback = 0;
      for (int cs = 16; cs >= 1; cs /= 2) {
        if (forced && cs != forced) continue;
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cs;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(cs, lanes);
        cfg.blockDim = dim3(warps * kWarp);
        cfg.dynamicSmemBytes = bytes;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        int active = 0;
        if (cudaOccupancyMaxActiveClusters(&active, kernel, &cfg) != cudaSuccess) {
          cudaGetLastError();  // a size this device does not take: try the next
          active = 0;
        }
        if (active >= 1 && !fallback) fallback = cs;
        if (active >= lanes && !best) best = cs;
      }
      s.cs = best ? best : fallback;
      s.warps = warps;
      s.smem = bytes;
      if (!s.cs)
        s.why = "no cluster of " + (forced ? std::to_string(forced) : std::string("1-16")) + " blocks of " +
                std::to_string(warps * kWarp) + " threads and " + std::to_string(bytes) +
                " bytes of shared memory fits device " + std::to_string(dev);
    }
  }
  std::lock_guard<std::mutex> guard(lock);
  known[key] = s;
  return s;
}

}  // namespace

template <class Real>
bool mcs_weights_cuda(const std::vector<Lane>& lanes, int dev, const Tuning& tuning, CudaRun* run,
                      std::vector<double>& weights) {
  if (tuning.fused == Tuning::Fused::off) return false;
  const int forced = tuning.cluster;
  NUMPIPE_CUDA_CHECK(cudaSetDevice(dev));
  const Setup& s0 = *lanes[0].setup;
  const int nx = static_cast<int>(s0.p.num_x), ny = static_cast<int>(s0.p.num_y);
  const int steps = static_cast<int>(s0.p.num_t - 1), n_lanes = static_cast<int>(lanes.size());
  const int m_count = static_cast<int>(s0.levels.size());
  const Shape shape = shape_of<Real>(dev, nx, ny, n_lanes, forced);
  if (!shape.cs) {
    if (tuning.fused == Tuning::Fused::required) fail_resource("the fused CUDA pass cannot run (NUMPIPE_PRICE_FUSED=1): " + shape.why);
    return false;
  }
  // a block with few warps works through many rounds of lines: the four kernels a step
  // spread a wide grid over the whole device instead
  if (tuning.fused == Tuning::Fused::automatic && shape.warps < kMinAutoWarps) return false;
  const std::uint64_t grid = std::uint64_t(nx) * ny, lane_grid = grid * n_lanes;
  const std::uint64_t table = std::uint64_t(steps) * ny * n_lanes;
  McsWorkspace<Real>& ws = lines::per_device<McsWorkspace<Real>>(dev);
  // device memory: six grids a lane, the per-step tables, two buffers of x pivots
  int batch = std::min(steps, kBatchSteps);
  auto needed = [&](int b) {
    std::uint64_t n = 0;
    for (DeviceArray<Real>* a : {&ws.w0, &ws.a, &ws.y, &ws.p, &ws.r, &ws.c}) n += growth(*a, lane_grid);
    for (DeviceArray<Real>* a : {&ws.qy, &ws.ybeta, &ws.yinv}) n += growth(*a, table);
    n += growth(ws.ey, 3 * table);
    for (DeviceArray<Real>& a : ws.xinv) n += growth(a, std::uint64_t(b) * lane_grid);
    return n;
  };
  std::size_t free_bytes = 0, total_bytes = 0;
  NUMPIPE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t usable = static_cast<std::uint64_t>(static_cast<double>(free_bytes) * 0.9);
  while (batch > 1 && needed(batch) > usable) batch /= 2;
  if (needed(batch) > usable)
    fail_resource("the CUDA adjoint with the mixed term needs " + std::to_string(needed(batch)) +
                  " more bytes of device memory for numX*numY = " + std::to_string(grid) + ", numT = " +
                  std::to_string(steps + 1) + " and " + std::to_string(n_lanes) + " lanes; device " +
                  std::to_string(dev) + " has " + std::to_string(free_bytes) + " free (use --backend cpu)");

  // the lanes' tables (a few lines each), built on the host from the setups
  HostTimer up;
  CudaStream main_stream, side_stream;
  const cudaStream_t ms = main_stream.get(), ss = side_stream.get();
  std::vector<Real> hx, ex, gy, yc, dy1, coef;
  std::vector<double> py, pt;
  std::vector<std::int64_t> at;
  for (int l = 0; l < n_lanes; ++l) {
    const Setup& s = *lanes[l].setup;
    const double rho_nu = s.p.rho * s.p.nu;
    for (int i = 0; i < nx; ++i)
      for (int k = 0; k < 3; ++k) {
        hx.push_back(Real(0.25 * s.px[i] * s.dxx[3 * i + k]));
        const int ii = i + k - 1;
        ex.push_back(ii >= 1 && ii <= nx - 2 ? Real(rho_nu * s.sx[ii] * s.dx1[3 * ii + 2 - k]) : Real(0));
      }
    const YTables<Real> yt = make_y_tables<Real>(s, false);
    gy.insert(gy.end(), yt.gy.begin(), yt.gy.end());
    yc.insert(yc.end(), yt.c.begin(), yt.c.end());
    for (double v : s.dy1) dy1.push_back(Real(v));
    py.insert(py.end(), s.py.begin(), s.py.begin() + ny);
    pt.insert(pt.end(), s.pt.begin(), s.pt.begin() + steps);
    const Functional& f = *lanes[l].functional;
    for (std::size_t k = 0; k < f.coef.size(); ++k) {
      at.push_back(std::int64_t(l) * std::int64_t(grid) + f.i[k] * ny + f.j[k]);
      coef.push_back(Real(f.coef[k]));
    }
  }
  std::vector<Real> dt(s0.dt_inv.begin(), s0.dt_inv.end());
  std::vector<int> slot(steps + 1, -1);
  for (int m = 0; m < m_count; ++m) slot[s0.levels[m]] = m;
  put(ws.hx, hx, ms);
  put(ws.ex, ex, ms);
  put(ws.gy, gy, ms);
  put(ws.yc, yc, ms);
  put(ws.dy1, dy1, ms);
  put(ws.py, py, ms);
  put(ws.pt, pt, ms);
  put(ws.dt, dt, ms);
  put(ws.level_slot, slot, ms);
  put(ws.at, at, ms);
  put(ws.coef, coef, ms);
  for (DeviceArray<Real>* a : {&ws.w0, &ws.a, &ws.y, &ws.p, &ws.r, &ws.c}) fit(*a, lane_grid);
  for (DeviceArray<Real>* a : {&ws.qy, &ws.ybeta, &ws.yinv}) fit(*a, table);
  fit(ws.ey, 3 * table);
  for (DeviceArray<Real>& a : ws.xinv) fit(a, std::uint64_t(batch) * lane_grid);
  const std::uint64_t w_lane = std::uint64_t(m_count) * nx;
  fit(ws.weights, w_lane * n_lanes);
  NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(ms));
  if (run) {
    *run = CudaRun{};
    run->upload_seconds = up.seconds();
    run->group = n_lanes;
    run->kernel = "adjoint, mixed term: one kernel a batch of steps, clusters of " + std::to_string(shape.cs);
    run->device_bytes = (6 * lane_grid + 6 * table + 2 * std::uint64_t(batch) * lane_grid) * sizeof(Real);
  }

  const McsTables<Real> t{ws.hx.data(),    ws.ex.data(),    ws.gy.data(), ws.yc.data(), ws.dy1.data(),
                          ws.py.data(),    ws.pt.data(),    ws.dt.data(), ws.qy.data(), ws.ey.data(),
                          ws.ybeta.data(), ws.yinv.data(), nx,           ny,           steps};
  CudaEvent prep, ready[2], used[2];
  CudaEventTimer timer;
  timer.start(ms);
  NUMPIPE_CUDA_CHECK(cudaMemsetAsync(ws.w0.data(), 0, lane_grid * sizeof(Real), ms));
  mcs_start_kernel<Real><<<1, 1, 0, ms>>>(ws.w0.data(), ws.at.data(), ws.coef.data(), static_cast<int>(at.size()));
  NUMPIPE_CUDA_CHECK_LAUNCH();
  mcs_columns_kernel<Real><<<dim3((ny + 127) / 128, std::min(steps, 65535), n_lanes), 128, 0, ms>>>(t);
  NUMPIPE_CUDA_CHECK_LAUNCH();
  mcs_y_factor_kernel<Real><<<static_cast<unsigned>((std::int64_t(steps) * n_lanes + 127) / 128), 128, 0, ms>>>(t, n_lanes);
  NUMPIPE_CUDA_CHECK_LAUNCH();
  NUMPIPE_CUDA_CHECK(cudaEventRecord(prep.get(), ms));
  NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(ss, prep.get(), 0));

  const auto kernel = mcs_pass_kernel<Real>;
  // set for every pass: another grid's pass may have set other values since
  NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shape.smem)));
  NUMPIPE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = shape.cs;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3(shape.cs, n_lanes);
  cfg.blockDim = dim3(shape.warps * kWarp);
  cfg.dynamicSmemBytes = shape.smem;
  cfg.stream = ms;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const std::int64_t xinv_lane = std::int64_t(batch) * std::int64_t(grid);
  const int fb = std::min(128, ((ny + kWarp - 1) / kWarp) * kWarp);
  for (int b = 0, g0 = 0; g0 < steps; ++b, g0 += batch) {
    const int count = std::min(batch, steps - g0), buf = b % 2;
    // the pivots one batch ahead on the side stream, into the buffer the batch before
    // last has finished with
    if (b >= 2) NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(ss, used[buf].get(), 0));
    mcs_x_factor_kernel<Real><<<dim3((ny + fb - 1) / fb, count, n_lanes), fb, 0, ss>>>(ws.xinv[buf].data(), xinv_lane,
                                                                                      t, g0, count);
    NUMPIPE_CUDA_CHECK_LAUNCH();
    NUMPIPE_CUDA_CHECK(cudaEventRecord(ready[buf].get(), ss));
    NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(ms, ready[buf].get(), 0));
    const McsState<Real> st{ws.w0.data(), ws.a.data(), ws.y.data(),       ws.p.data(),
                            ws.r.data(),  ws.c.data(), ws.xinv[buf].data(), xinv_lane,
                            ws.weights.data(), static_cast<std::int64_t>(w_lane), ws.level_slot.data()};
    NUMPIPE_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, t, st, g0, g0 + count, g0 + count == steps ? 1 : 0));
    NUMPIPE_CUDA_CHECK(cudaEventRecord(used[buf].get(), ms));
  }
  timer.stop(ms);
  if (run) run->seconds = timer.seconds();  // waits for the pass
  weights.assign(static_cast<std::size_t>(w_lane * n_lanes), 0.0);
  ws.weights.copy_to_host(weights.data(), weights.size(), ms);
  NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(ms));
  return true;
}

template bool mcs_weights_cuda<double>(const std::vector<Lane>&, int, const Tuning&, CudaRun*, std::vector<double>&);
template bool mcs_weights_cuda<float>(const std::vector<Lane>&, int, const Tuning&, CudaRun*, std::vector<double>&);

}  // namespace numpipe::price::detail
