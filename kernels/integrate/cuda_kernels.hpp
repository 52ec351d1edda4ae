// integrate's CUDA kernels as launch functions: what the host driver (cuda.cu, whose
// header says how the two plans work) and the kernels' units share. The kernels are
// compiled by family in units of their own, so that a parallel build spreads them:
//   cuda_columns.cu     the column plan: inner, middle and outer kernels
//   cuda_products.cu    the single-life products' reserves (most of the machine code)
//   cuda_cash_flows.cu  the single-life products' expected cash flows
//   cuda_table.cu       the table plan: the table, the class stage points, the Middle
//                       values, the outer chains and the rows' expansion
// The driver includes this header only, never a kernel's definition: a kernel in view
// would be compiled again in the driver's unit (docs/DEVELOPING.md). Each launch function
// queues its kernel on `stream` and checks the launch (NUMPIPE_CUDA_CHECK_LAUNCH).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "common/error.hpp"

namespace numpipe::integrate {
// Declared only: each unit includes the headers of what its kernels compute (the
// products' unit products.hpp alone: integrate.hpp's host interface takes about 10 s
// of CPU to parse in a CUDA unit).
struct RateView;
struct MortalityView;
struct SpouseView;
struct Policy;
struct ProductSpec;
struct TableRow;
struct TableClass;
struct TableType;
struct TableFamily;
struct TablePolicy;
}  // namespace numpipe::integrate

namespace numpipe::integrate::gpu {

// Blocks of `block` threads covering `threads` threads (at least one block).
inline unsigned blocks_for(std::int64_t threads, int block) {
  std::int64_t b = (threads + block - 1) / block;
  if (b > std::numeric_limits<int>::max()) fail_resource("integrate: problem too large for one launch: " + std::to_string(b) + " blocks");
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// ---- the column plan (cuda_columns.cu) --------------------------------------------

// The plan's columns and middle grids on a device (integrate.hpp's Plan, uploaded).
struct DevicePlan {
  const std::int64_t* column_offset;
  const double* column_k;
  const double* column_t;
  const std::int32_t* column_h3;
  const std::int32_t* column_grid;
  const std::int64_t* grid_offset;
  const double* grid_eta;
  const double* grid_h;
  const std::int32_t* column_law;
  std::int64_t columns;
  bool align;
};

// Inner(eta, k, t) for every (column, eta stage point): `items` values into inner.
void launch_inner(const DevicePlan& p, const RateView& rv, const MortalityView* laws, std::int64_t items, double* inner,
                  cudaStream_t stream);
// The Middle value of every request (a policy's outer stage point) from its column's Inner values.
void launch_middle(const DevicePlan& p, const SpouseView& sv, const double* request_tau,
                   const std::int32_t* request_column, std::int64_t requests, const double* inner, double* middle,
                   cudaStream_t stream);
// Each policy's outer recurrence: its row of reserve (kYears values) and its premium.
void launch_outer(const Policy* policies, std::int64_t npol, const RateView& rv, const MortalityView* laws, bool align,
                  const std::int64_t* offset, const double* t, const double* hs, const int* year, const double* middle,
                  double* reserve, double* premium, cudaStream_t stream);

// ---- the single-life products (cuda_products.cu, cuda_cash_flows.cu) --------------

// Each policy's Thiele chain(s) into its row of rows (kYears values), its premium into prem.
void launch_products(const ProductSpec* specs, std::int64_t n, const RateView& rv, const MortalityView* laws,
                     bool align, double* rows, double* prem, cudaStream_t stream);
// Each policy's expected cash flows by year (kYears * kCashFlowKinds values), its premium fixed.
void launch_cash_flows(const ProductSpec* specs, std::int64_t n, const RateView& rv, const MortalityView* laws,
                       double* flows, cudaStream_t stream);
// Loads products' kernel on the current device (outside the timed phases).
void load_product_kernels();

// ---- the table plan (cuda_table.cu) -----------------------------------------------

// One block per table row: the table's values G_eta(n); smem bytes of shared memory
// (2 kTableChunk + 1 + tail_points + tail_states doubles).
void launch_table(unsigned rows, std::size_t smem, const RateView& rv, const MortalityView& spouse,
                  const TableRow* table_rows, double* table, int tail_points, int tail_states, cudaStream_t stream);
// r(t), muF(x + t), tau = x + t and the whole year at every one of npoints class stage points.
void launch_points(const TableClass* classes, int nclass, std::int64_t npoints, const RateView& rv,
                   const MortalityView& insured, double* tau, double* rate, double* muf, int* year, cudaStream_t stream);
// The Middle values of classes [c0, c1): blocks [b0, b0 + blocks) of the middle blocks,
// `group` stage points each, smem bytes of middle weights.
void launch_table_middle(unsigned blocks, int smem, const TableClass* classes, int c0, int c1, int b0, int group,
                         const TableType* types, const TableRow* rows, const std::int32_t* row_full,
                         const double* table, const SpouseView& sv, const double* tau, const TableFamily* fams,
                         double* middle, cudaStream_t stream);
// The outer chains of profiles [q0, q0 + n) without payments into their rows of prow:
// one warp per profile (warp_per_profile: few profiles) or one thread per profile.
void launch_table_outer(bool warp_per_profile, const TablePolicy* profiles, const TableClass* classes,
                        const double* rate, const double* muf, const int* year, const double* middle, std::int64_t q0,
                        std::int64_t n, double* prow, cudaStream_t stream);
// Thiele's chain of profiles [q0, q0 + n) with payments into prow, their premiums into
// prem (0 for the others).
void launch_table_outer_general(const TablePolicy* profiles, const TableClass* classes, const double* rate,
                                const double* muf, const int* year, const double* middle, std::int64_t q0,
                                std::int64_t n, double* prow, double* prem, cudaStream_t stream);
// Policies [p0, p0 + n): their profile's row of prow into their row of reserve (row 0 = policy p0).
void launch_expand(const std::int32_t* profile_of, const double* prow, std::int64_t p0, std::int64_t n,
                   double* reserve, cudaStream_t stream);
// Loads the table plan's kernels on the current device (outside the timed phases).
void load_table_kernels();

}  // namespace numpipe::integrate::gpu
