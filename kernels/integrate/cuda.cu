// integrate: the CUDA backend. A generalisation of the seed's OuterPar: every
// Middle value of every outer stage of every policy is computed in one pass,
// then the cheap outer recurrences.
//
//   inner_kernel:  one thread per (column, eta stage point): Inner(eta, k, t), the
//                  inner RK4 loop (all columns of all policies in one launch)
//   middle_kernel: one warp per Middle call (outer stage point of a policy): lanes
//                  take the middle steps in turn, warp-shuffle tree sum (fixed order)
//   outer_kernel:  one thread per policy: the outer RK4 recurrence
// fp64 throughout, no atomics: the same bits run to run. Policies are split into
// contiguous ranges over the devices given (--devices), each range planned and
// solved on its own device; a policy's bits do not depend on the split.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

namespace {

constexpr int kInnerBlock = 128;
constexpr int kMiddleBlock = 256;  // 8 warps, one Middle call each
constexpr int kOuterBlock = 128;

struct DevicePlan {
  const std::int64_t* column_offset;
  const double* column_k;
  const double* column_t;
  const std::int32_t* column_h3;
  const std::int32_t* column_grid;
  const std::int64_t* grid_offset;
  const double* grid_eta;
  const double* grid_h;
  std::int64_t columns;
  bool align;
};

__global__ void inner_kernel(DevicePlan p, RateView rv, std::int64_t items, double* inner) {
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
  inner[base + e] = inner_value(rv, eta, p.column_k[c], p.column_t[c], p.column_h3[c], p.align);
}

__global__ void middle_kernel(DevicePlan p, const double* request_tau, const std::int32_t* request_column,
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
    double f0 = middle_weight(eta[2 * j], tau) * in[2 * j];
    double fm = middle_weight(eta[2 * j + 1], tau) * in[2 * j + 1];
    double f1 = middle_weight(eta[2 * j + 2], tau) * in[2 * j + 2];
    sum += middle_increment(h[j], f0, fm, f1);
  }
  for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off);
  if (lane == 0) middle[q] = sum;
}

__global__ void outer_kernel(const Policy* policies, std::int64_t npol, RateView rv, const std::int64_t* offset,
                             const double* t, const double* hs, const int* year, const double* middle,
                             double* reserve) {
  std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= npol) return;
  double* out = reserve + p * kYears;
  for (int y = 0; y < kYears; ++y) out[y] = CUDART_NAN;
  std::int64_t o = offset[p], npts = offset[p + 1] - o;
  const double* tp = t + o;
  const double* h = hs + (o - p) / 2;
  const int* yr = year + o;
  const double* m = middle + o;
  double x = policies[p].x;
  double V = 0;
  if (yr[0] >= 0) out[yr[0]] = V;
  for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
    double t0 = tp[2 * j], tm = tp[2 * j + 1], t1 = tp[2 * j + 2], hj = h[j];
    double r0 = forward_rate(rv, t0), rm = forward_rate(rv, tm), r1 = forward_rate(rv, t1);
    double m0 = mu_female(x + t0), mm = mu_female(x + tm), m1 = mu_female(x + t1);
    double k1 = hj * outer_derivative(r0, m0, m[2 * j], V);
    double k2 = hj * outer_derivative(rm, mm, m[2 * j + 1], V + k1 / 2);
    double k3 = hj * outer_derivative(rm, mm, m[2 * j + 1], V + k2 / 2);
    double k4 = hj * outer_derivative(r1, m1, m[2 * j + 2], V + k3);
    V = V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
    if (yr[2 * j + 2] >= 0) out[yr[2 * j + 2]] = V;
  }
}

template <class T>
DeviceArray<T> upload(const std::vector<T>& v, cudaStream_t s) {
  DeviceArray<T> d(v.empty() ? 1 : v.size());
  if (!v.empty()) d.copy_from_host(v.data(), v.size(), s);
  return d;
}

unsigned blocks_for(std::int64_t threads, int block) {
  std::int64_t b = (threads + block - 1) / block;
  if (b > std::numeric_limits<int>::max()) fail_resource("integrate: problem too large for one launch: " + std::to_string(b) + " blocks");
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

// Solves policies [first, last) on one device; writes their rows of `reserve`.
void solve_range(const Problem& pb, std::size_t first, std::size_t last, int device, const std::string& dev,
                 double* reserve, PhaseLog& log, Result& counts) {
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  HostTimer plan_timer;
  Plan plan = make_plan(pb, first, last);
  log.add("plan", plan_timer.seconds());
  counts.inner_steps += plan.inner_steps;
  counts.inner_steps_unshared += plan.inner_steps_unshared;
  counts.columns += plan.columns();
  counts.requests += plan.requests();

  cudaStream_t s = nullptr;
  NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{s};
  CudaEventTimer t_up, t_inner, t_middle, t_outer, t_down;

  std::vector<Policy> pols(pb.policies.begin() + first, pb.policies.begin() + last);
  t_up.start(s);
  auto d_col_off = upload(plan.column_offset, s);
  auto d_col_k = upload(plan.column_k, s);
  auto d_col_t = upload(plan.column_t, s);
  auto d_col_h3 = upload(plan.column_h3, s);
  auto d_col_grid = upload(plan.column_grid, s);
  auto d_grid_off = upload(plan.grid_offset, s);
  auto d_grid_eta = upload(plan.grid_eta, s);
  auto d_grid_h = upload(plan.grid_h, s);
  auto d_req_tau = upload(plan.request_tau, s);
  auto d_req_col = upload(plan.request_column, s);
  auto d_out_off = upload(plan.outer_offset, s);
  auto d_out_t = upload(plan.outer_t, s);
  auto d_out_h = upload(plan.outer_h, s);
  auto d_out_year = upload(plan.outer_year, s);
  auto d_pol = upload(pols, s);
  auto d_knots = upload(plan.rate.knots, s);
  auto d_alpha = upload(plan.rate.alpha, s);
  auto d_beta = upload(plan.rate.beta, s);
  t_up.stop(s);
  RateView rv = plan.rate.view();
  rv.knots = d_knots.data();
  rv.alpha = d_alpha.data();
  rv.beta = d_beta.data();

  DevicePlan dp{d_col_off.data(), d_col_k.data(),  d_col_t.data(),    d_col_h3.data(),
                d_col_grid.data(), d_grid_off.data(), d_grid_eta.data(), d_grid_h.data(),
                static_cast<std::int64_t>(plan.columns()), plan.align};
  std::int64_t items = static_cast<std::int64_t>(plan.inner_values());
  std::int64_t requests = static_cast<std::int64_t>(plan.requests());
  std::int64_t npol = static_cast<std::int64_t>(plan.policies);
  DeviceArray<double> d_inner(items > 0 ? items : 1), d_middle(requests > 0 ? requests : 1),
      d_reserve(npol * kYears > 0 ? npol * kYears : 1);

  t_inner.start(s);
  if (items > 0) {
    inner_kernel<<<blocks_for(items, kInnerBlock), kInnerBlock, 0, s>>>(dp, rv, items, d_inner.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  t_inner.stop(s);
  t_middle.start(s);
  if (requests > 0) {
    middle_kernel<<<blocks_for(requests * 32, kMiddleBlock), kMiddleBlock, 0, s>>>(
        dp, d_req_tau.data(), d_req_col.data(), requests, d_inner.data(), d_middle.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  t_middle.stop(s);
  t_outer.start(s);
  if (npol > 0) {
    outer_kernel<<<blocks_for(npol, kOuterBlock), kOuterBlock, 0, s>>>(d_pol.data(), npol, rv, d_out_off.data(),
                                                                        d_out_t.data(), d_out_h.data(),
                                                                        d_out_year.data(), d_middle.data(),
                                                                        d_reserve.data());
    NUMPIPE_CUDA_CHECK_LAUNCH();
  }
  t_outer.stop(s);
  t_down.start(s);
  if (npol > 0) d_reserve.copy_to_host(reserve, static_cast<std::size_t>(npol) * kYears, s);
  t_down.stop(s);
  NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(s));

  double up_bytes = 0;
  up_bytes += 8.0 * (plan.column_offset.size() + plan.column_k.size() + plan.column_t.size() + plan.grid_offset.size() +
                     plan.grid_eta.size() + plan.grid_h.size() + plan.request_tau.size() + plan.outer_offset.size() +
                     plan.outer_t.size() + plan.outer_h.size());
  up_bytes += 4.0 * (plan.column_h3.size() + plan.column_grid.size() + plan.request_column.size() + plan.outer_year.size());
  log.add("upload" + dev, t_up.seconds(), up_bytes);
  log.add("inner" + dev, t_inner.seconds(), 8.0 * items, plan.inner_steps * kFlopsPerInnerStep);
  log.add("middle" + dev, t_middle.seconds(), 8.0 * (3 * items + 2 * requests));
  log.add("outer" + dev, t_outer.seconds(), 8.0 * (3 * requests + npol * kYears));
  log.add("download" + dev, t_down.seconds(), 8.0 * npol * kYears);
}

}  // namespace

Result solve_cuda(const Problem& pb, const std::vector<int>& devices) {
  if (devices.empty()) fail_input("integrate: no CUDA device given");
  Result res;
  std::size_t n = pb.policies.size();
  res.reserve.assign(n * kYears, std::numeric_limits<double>::quiet_NaN());
  std::size_t nd = devices.size() < n ? devices.size() : (n > 0 ? n : 1);
  std::vector<PhaseLog> logs(nd);
  std::vector<Result> counts(nd);
  std::vector<std::exception_ptr> errors(nd);
  auto work = [&](std::size_t i) {
    try {
      std::size_t first = n * i / nd, last = n * (i + 1) / nd;
      solve_range(pb, first, last, devices[i], nd > 1 ? "@cuda" + std::to_string(devices[i]) : std::string(),
                  res.reserve.data() + first * kYears, logs[i], counts[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  if (nd == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < nd; ++i) threads.emplace_back(work, i);
    for (auto& t : threads) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (std::size_t i = 0; i < nd; ++i) {
    for (const auto& ph : logs[i].phases()) res.log.add(ph.name, ph.seconds, ph.bytes, ph.flops);
    res.inner_steps += counts[i].inner_steps;
    res.inner_steps_unshared += counts[i].inner_steps_unshared;
    res.columns += counts[i].columns;
    res.requests += counts[i].requests;
  }
  return res;
}

}  // namespace numpipe::integrate
