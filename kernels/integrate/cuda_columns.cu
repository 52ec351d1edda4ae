// integrate's CUDA kernels of the column plan (cuda.cu's header says how the plan
// works): inner, middle and outer, launched through cuda_kernels.hpp.
#include "common/cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

namespace {

using gpu::DevicePlan;

constexpr int kInnerBlock = 128;
constexpr int kMiddleBlock = 256;  // 8 warps, one Middle call each
constexpr int kOuterBlock = 128;

__global__ void inner_kernel(DevicePlan p, RateView rv, const MortalityView* laws, std::int64_t items, double* inner) {
  std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= items) return;
  // The column holding this item: the last c with column_offset[c] <= item.
  std::int64_t lo = 0, hi = p.columns;
  while (hi - lo > 1) {
    std::int64_t mid = (lo + hi) / 2;
    if (p.column_offset[mid] <= item) lo = mid;
    else hi = mid;
  }
  std::int64_t c = lo;
  std::int64_t base = p.column_offset[c], n = p.column_offset[c + 1] - base;
  // Longest integrations (small eta, last in the grid) first, for balance.
  std::int64_t e = n - 1 - (item - base);
  double eta = p.grid_eta[p.grid_offset[p.column_grid[c]] + e];
  inner[base + e] = inner_value(rv, laws[p.column_law[c]], eta, p.column_k[c], p.column_t[c], p.column_h3[c], p.align);
}

__global__ void middle_kernel(DevicePlan p, SpouseView sv, const double* request_tau, const std::int32_t* request_column,
                              std::int64_t requests, const double* inner, double* middle) {
  std::int64_t q = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (q >= requests) return;  // whole warps leave together
  std::int32_t c = request_column[q];
  std::int32_t g = p.column_grid[c];
  std::int64_t g0 = p.grid_offset[g];
  std::int64_t npts = p.grid_offset[g + 1] - g0;
  std::int64_t nsteps = (npts - 1) / 2;
  const double* eta = p.grid_eta + g0;
  const double* h = p.grid_h + (g0 - g) / 2;
  const double* in = inner + p.column_offset[c];
  double tau = request_tau[q];
  double sum = 0;
  for (std::int64_t j = lane; j < nsteps; j += 32) {
    double f0 = middle_weight(sv, eta[2 * j], tau) * in[2 * j];
    double fm = middle_weight(sv, eta[2 * j + 1], tau) * in[2 * j + 1];
    double f1 = middle_weight(sv, eta[2 * j + 2], tau) * in[2 * j + 2];
    sum += middle_increment(h[j], f0, fm, f1);
  }
  for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off);
  if (lane == 0) middle[q] = sum;
}

__global__ void outer_kernel(const Policy* policies, std::int64_t npol, RateView rv, const MortalityView* laws,
                             bool align, const std::int64_t* offset, const double* t, const double* hs, const int* year,
                             const double* middle, double* reserve, double* premium) {
  std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= npol) return;
  std::int64_t o = offset[p], npts = offset[p + 1] - o;
  const Policy& pol = policies[p];
  premium[p] = spouse_outer(pol, rv, laws[pol.insured], align, t + o, hs + (o - p) / 2, year + o, npts, middle + o,
                            reserve + p * kYears);
}

}  // namespace

namespace gpu {

void launch_inner(const DevicePlan& p, const RateView& rv, const MortalityView* laws, std::int64_t items, double* inner,
                  cudaStream_t stream) {
  inner_kernel<<<blocks_for(items, kInnerBlock), kInnerBlock, 0, stream>>>(p, rv, laws, items, inner);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_middle(const DevicePlan& p, const SpouseView& sv, const double* request_tau,
                   const std::int32_t* request_column, std::int64_t requests, const double* inner, double* middle,
                   cudaStream_t stream) {
  middle_kernel<<<blocks_for(requests * 32, kMiddleBlock), kMiddleBlock, 0, stream>>>(p, sv, request_tau, request_column,
                                                                                      requests, inner, middle);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void launch_outer(const Policy* policies, std::int64_t npol, const RateView& rv, const MortalityView* laws, bool align,
                  const std::int64_t* offset, const double* t, const double* hs, const int* year, const double* middle,
                  double* reserve, double* premium, cudaStream_t stream) {
  outer_kernel<<<blocks_for(npol, kOuterBlock), kOuterBlock, 0, stream>>>(policies, npol, rv, laws, align, offset, t, hs,
                                                                          year, middle, reserve, premium);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

}  // namespace gpu
}  // namespace numpipe::integrate
