// integrate's CUDA kernels of the table plan (table.hpp; cuda.cu's header says how
// the plan works): the table, the class stage points, the Middle values, the outer
// chains and the rows' expansion, launched through cuda_kernels.hpp.
#include <math_constants.h>

#include "common/cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "table.hpp"

namespace numpipe::integrate {

namespace {

constexpr int kTableBlock = 256;        // table_kernel: tails spread over the block
constexpr int kPointsBlock = 256;
constexpr int kTableMiddleBlock = 256;  // 8 warps, one Middle value each
constexpr int kTableOuterBlock = 128;

// One block per table row (eta point). Thread 0 runs the trajectory of Inner(eta, 0)
// (every indicator 1), the block computing its coefficients chunk by chunk; the
// states U_q before the steps of the cut region [q_lo, steps] and that region's
// coefficients stay in shared memory; then every thread finishes cuts n (tails).
// The arithmetic is table_row_host's, operation for operation.
__global__ void table_kernel(RateView rv, MortalityView spouse, const TableRow* rows, double* table, int tail_points,
                             int tail_states) {
  extern __shared__ double sh[];
  double* cbuf = sh;                              // 2 kTableChunk + 1 coefficients
  double* ctail = cbuf + 2 * kTableChunk + 1;     // coefficients of points [2 q_lo, points)
  double* U = ctail + tail_points;                // U_q, q in [q_lo, steps]
  const TableRow r = rows[blockIdx.x];
  const int tid = threadIdx.x, nt = blockDim.x;
  if (r.points == 0) {
    if (tid == 0) table[r.base] = 0.0;
    return;
  }
  auto coef = [&](int l) { return inner_coefficient(rv, spouse, r.eta, 0.0, segment_point(r.seg, l)); };
  const int steps = segment_steps(r.seg);
  const int q_lo = table_tail_start(r.n_lo);
  double V = 0;
  for (int q0 = 0; q0 < q_lo; q0 += kTableChunk) {
    int q1 = min(q0 + kTableChunk, q_lo);
    for (int i = tid; i <= 2 * (q1 - q0); i += nt) cbuf[i] = coef(2 * q0 + i);
    __syncthreads();
    if (tid == 0)
      for (int q = q0; q < q1; ++q) {
        const double* c = cbuf + 2 * (q - q0);
        V = rk4_linear_step(V, segment_step_size(r.seg, q), c[0], 1.0, c[1], 1.0, c[2], 1.0);
      }
    __syncthreads();
  }
  const int tp = r.points - 2 * q_lo;
  for (int i = tid; i < tp; i += nt) ctail[i] = coef(2 * q_lo + i);
  __syncthreads();
  if (tid == 0) {
    for (int q = q_lo; q < steps; ++q) {
      U[q - q_lo] = V;
      const double* c = ctail + 2 * (q - q_lo);
      V = rk4_linear_step(V, segment_step_size(r.seg, q), c[0], 1.0, c[1], 1.0, c[2], 1.0);
    }
    U[steps - q_lo] = V;
  }
  __syncthreads();
  const int base = 2 * q_lo;
  for (int n = r.n_lo + tid; n <= r.points; n += nt)
    table[r.base + static_cast<std::int64_t>(r.points - n) * r.stride] =
        table_tail(r.seg, n, U[table_tail_start(n) - q_lo], [&](int l) { return ctail[l - base]; });
  (void)tail_states;
}

// r(t), muF(x + t), tau = x + t and the whole year at every class stage point.
__global__ void points_kernel(const TableClass* classes, int nclass, std::int64_t npoints, RateView rv,
                              MortalityView insured, double* tau, double* rate, double* muf, int* year) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= npoints) return;
  int lo = 0, hi = nclass;  // the last class with point <= i
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (classes[mid].point <= i) lo = mid;
    else hi = mid;
  }
  const TableClass& c = classes[lo];
  int j = static_cast<int>(i - c.point);
  double t = segment_point(c.seg, j);
  tau[i] = c.x + t;
  rate[i] = forward_rate(rv, t);
  muf[i] = mortality(insured, c.x + t);
  year[i] = segment_year(c.seg, c.h1, j);
}

// One block per run of up to `group` stage points of a class (blocks [b0, b0 +
// gridDim.x) of classes [c0, c1)): the middle weights -gp(tau) h(eta_e, tau) of its
// points once into shared memory, then one warp per (family, point) pair active
// there, the warps of a family side by side (a G or Z family reads one depth of
// the table at every point: the rows stay in L1): lanes take runs of middle steps
// with Inner read at the family's cut, shuffle tree (fixed order).
__global__ void table_middle_kernel(const TableClass* classes, int c0, int c1, int b0, int group, const TableType* types,
                                    const TableRow* rows, const std::int32_t* row_full, const double* table,
                                    SpouseView sv, const double* tau, const TableFamily* fams, double* middle) {
  extern __shared__ double W[];
  const MiddleBlock mb = table_middle_block(classes, c0, c1, b0 + static_cast<int>(blockIdx.x), group);
  const TableClass& c = classes[mb.cls];
  const int j0 = mb.j0, np = mb.np, fam0 = c.fam0, nfam = c.nfam;
  const std::int64_t point0 = c.point + j0;
  const TableType ty = types[c.type];
  const int R = ty.rows;
  const TableRow* trow = rows + ty.row0;
  const std::int32_t* tfull = row_full + ty.row0;
  for (int i = threadIdx.x; i < np * R; i += blockDim.x) {
    int pt = i / R, e = i - pt * R;
    W[i] = middle_weight(sv, trow[e].eta, tau[point0 + pt]);
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, warps = blockDim.x / 32;
  for (int pi = warp; pi < nfam * group; pi += warps) {
    const int pt = pi % group, j = j0 + pt;
    if (pt >= np) continue;
    const TableFamily f = fams[fam0 + pi / group];
    if (j < f.j0 || j >= f.j0 + f.count) continue;  // the same for the whole warp
    const double tu = tau[point0 + pt];
    const double k = family_k(f, tu);
    const TableCut cut = table_cut(ty, k);
    auto inner = [&](int e) { return table_inner_at(ty, trow, tfull, table, cut, e, k); };
    double sum = table_middle_lane(ty.mseg, W + pt * R, inner, lane, kMiddleLanes);
    for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if (lane == 0) middle[f.base + (j - f.j0)] = sum;
  }
}

// One thread per profile in [q0, q0 + n): the outer recurrence into the profile's
// row of prow (many profiles: the latency of one chain hidden by the others).
// Policies with the same profile have the same row; it is copied to each of them
// afterwards (expand_kernel or expand_rows), bit for bit.
__global__ void table_outer_kernel(const TablePolicy* profiles, const TableClass* classes, const double* rate,
                                   const double* muf, const int* year, const double* middle, std::int64_t q0,
                                   std::int64_t n, double* prow) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const TablePolicy pr = profiles[q0 + i];
  if (pr.general) return;  // table_outer_general_kernel
  const TableClass& c = classes[pr.cls];
  table_outer(c.seg, pr, rate + c.point, muf + c.point, year + c.point, middle, prow + (q0 + i) * kYears);
}

// One thread per profile with payments (premium, benefit) in [q0, q0 + n): Thiele's
// chain (table_outer_general) into its row, its premium into prem.
__global__ void table_outer_general_kernel(const TablePolicy* profiles, const TableClass* classes, const double* rate,
                                           const double* muf, const int* year, const double* middle, std::int64_t q0,
                                           std::int64_t n, double* prow, double* prem) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const TablePolicy pr = profiles[q0 + i];
  if (!pr.general) {
    prem[q0 + i] = 0.0;
    return;
  }
  const TableClass& c = classes[pr.cls];
  prem[q0 + i] =
      table_outer_general(c.seg, pr, rate + c.point, muf + c.point, year + c.point, middle, prow + (q0 + i) * kYears);
}

// One warp per profile (few profiles): the lanes load 32 steps' inputs at once, then
// every lane runs the same chain (outer_step, as table_outer) on them by shuffles,
// so that one chain waits for memory once per 32 steps.
__global__ void table_outer_warp_kernel(const TablePolicy* profiles, const TableClass* classes, const double* rate,
                                        const double* muf, const int* year, const double* middle, std::int64_t q0,
                                        std::int64_t n, double* prow) {
  std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (i >= n) return;  // whole warps leave together
  const TablePolicy pr = profiles[q0 + i];
  if (pr.general) return;  // the whole warp: table_outer_general_kernel
  const TableClass& c = classes[pr.cls];
  const double* rt = rate + c.point;
  const double* mf = muf + c.point;
  const int* yr = year + c.point;
  double* out = prow + (q0 + i) * kYears;
  for (int y = lane; y < kYears; y += 32) out[y] = CUDART_NAN;
  __syncwarp();
  double V = 0;
  if (lane == 0 && yr[0] >= 0) out[yr[0]] = V;
  const int steps = segment_steps(c.seg);
  double r0 = rt[0], m0 = mf[0], M0 = middle[table_middle_index(pr, 0)];
  for (int q0s = 0; q0s < steps; q0s += 32) {
    const OuterIn mine = q0s + lane < steps ? outer_in(pr, rt, mf, yr, middle, q0s + lane) : OuterIn{};
    const int nq = min(32, steps - q0s);
    for (int t = 0; t < nq; ++t) {
      double rm = __shfl_sync(0xffffffffu, mine.rm, t), mm = __shfl_sync(0xffffffffu, mine.mm, t);
      double Mm = __shfl_sync(0xffffffffu, mine.Mm, t), r1 = __shfl_sync(0xffffffffu, mine.r1, t);
      double m1 = __shfl_sync(0xffffffffu, mine.m1, t), M1 = __shfl_sync(0xffffffffu, mine.M1, t);
      int y1 = __shfl_sync(0xffffffffu, mine.y1, t);
      V = outer_step(V, segment_step_size(c.seg, q0s + t), r0, m0, M0, rm, mm, Mm, r1, m1, M1);
      if (lane == 0 && y1 >= 0) out[y1] = V;
      r0 = r1;
      m0 = m1;
      M0 = M1;
    }
  }
}

// One warp per policy in [p0, p0 + n): its profile's row into its row of reserve
// (row 0 = policy p0).
__global__ void expand_kernel(const std::int32_t* profile_of, const double* prow, std::int64_t p0, std::int64_t n,
                              double* reserve) {
  std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (i >= n) return;
  const double* src = prow + static_cast<std::int64_t>(profile_of[p0 + i]) * kYears;
  double* dst = reserve + i * kYears;
  for (int y = lane; y < kYears; y += 32) dst[y] = src[y];
}

}  // namespace

namespace gpu {

void launch_table(unsigned rows, std::size_t smem, const RateView& rv, const MortalityView& spouse,
                  const TableRow* table_rows, double* table, int tail_points, int tail_states, cudaStream_t stream) {
  table_kernel<<<rows, kTableBlock, smem, stream>>>(rv, spouse, table_rows, table, tail_points, tail_states);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_points(const TableClass* classes, int nclass, std::int64_t npoints, const RateView& rv,
                   const MortalityView& insured, double* tau, double* rate, double* muf, int* year, cudaStream_t stream) {
  points_kernel<<<blocks_for(npoints, kPointsBlock), kPointsBlock, 0, stream>>>(classes, nclass, npoints, rv, insured, tau,
                                                                                rate, muf, year);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_table_middle(unsigned blocks, int smem, const TableClass* classes, int c0, int c1, int b0, int group,
                         const TableType* types, const TableRow* rows, const std::int32_t* row_full,
                         const double* table, const SpouseView& sv, const double* tau, const TableFamily* fams,
                         double* middle, cudaStream_t stream) {
  table_middle_kernel<<<blocks, kTableMiddleBlock, smem, stream>>>(classes, c0, c1, b0, group, types, rows, row_full,
                                                                   table, sv, tau, fams, middle);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_table_outer(bool warp_per_profile, const TablePolicy* profiles, const TableClass* classes,
                        const double* rate, const double* muf, const int* year, const double* middle, std::int64_t q0,
                        std::int64_t n, double* prow, cudaStream_t stream) {
  if (warp_per_profile)
    table_outer_warp_kernel<<<blocks_for(n * 32, kTableOuterBlock), kTableOuterBlock, 0, stream>>>(
        profiles, classes, rate, muf, year, middle, q0, n, prow);
  else
    table_outer_kernel<<<blocks_for(n, kTableOuterBlock), kTableOuterBlock, 0, stream>>>(profiles, classes, rate, muf,
                                                                                         year, middle, q0, n, prow);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_table_outer_general(const TablePolicy* profiles, const TableClass* classes, const double* rate,
                                const double* muf, const int* year, const double* middle, std::int64_t q0,
                                std::int64_t n, double* prow, double* prem, cudaStream_t stream) {
  table_outer_general_kernel<<<blocks_for(n, kTableOuterBlock), kTableOuterBlock, 0, stream>>>(
      profiles, classes, rate, muf, year, middle, q0, n, prow, prem);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_expand(const std::int32_t* profile_of, const double* prow, std::int64_t p0, std::int64_t n,
                   double* reserve, cudaStream_t stream) {
  expand_kernel<<<blocks_for(n * 32, kTableOuterBlock), kTableOuterBlock, 0, stream>>>(profile_of, prow, p0, n, reserve);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void load_table_kernels() {
  cudaFuncAttributes a;
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, table_kernel));
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, points_kernel));
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, table_middle_kernel));
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, table_outer_kernel));
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, table_outer_warp_kernel));
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, table_outer_general_kernel));
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, expand_kernel));
}

}  // namespace gpu
}  // namespace numpipe::integrate
