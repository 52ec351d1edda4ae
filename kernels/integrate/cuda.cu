// integrate: the CUDA backend. Two plans:
//
// The table plan (constant rate, faithful scheme; table.hpp), all policies of all
// devices in a few launches:
//   table_kernel:  one block per eta point of a middle grid: the RK4 trajectory of
//                  Inner(eta, 0) in one thread (coefficients computed by the block),
//                  then the tails of every indicator cut in parallel: the table
//                  G_eta(n) = Inner(eta, k) for every k in use
//   points_kernel: r(t), muF(x + t), tau and the year at every class stage point
//   table_middle_kernel: one block per class stage point: the middle weights
//                  -gp(tau) h(eta, tau) once in shared memory, then one warp per
//                  Middle value (family) of the point: lanes take runs of middle
//                  steps reading Inner at the family's depth of the table,
//                  warp-shuffle tree sum (fixed order)
//   table_outer_kernel / table_outer_warp_kernel: one thread per policy (many
//                  policies) or one warp per policy (up to 4096; 32 steps' inputs
//                  loaded at once): the outer RK4 recurrence
// With several devices (--devices, a device may repeat) the table rows, the Middle
// values (by whole classes) and the policies are split into contiguous ranges; each
// device computes its rows and Middle values once and copies them to the others
// (peer copies), so no shared value is computed twice and the bits do not depend
// on the split. The result comes back through pinned staging buffers.
//
// The column plan (a yield curve, --align-breaks, or k h3 > 600), a generalisation
// of the seed's OuterPar:
//   inner_kernel:  one thread per (column, eta stage point): Inner(eta, k, t), the
//                  inner RK4 loop (all columns of all policies in one launch)
//   middle_kernel: one warp per Middle call (outer stage point of a policy): lanes
//                  take the middle steps in turn, warp-shuffle tree sum (fixed order)
//   outer_kernel:  one thread per policy: the outer RK4 recurrence
// Policies are split into contiguous ranges over the devices given, each range
// planned and solved on its own device; a policy's bits do not depend on the split.
// fp64 throughout, no atomics: the same bits run to run.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"
#include "integrate.hpp"
#include "table.hpp"

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

// The name suffix of device slot i's phases: none for one device, "@cudaN" for
// several, "@cudaN#i" where a device is listed more than once.
std::string device_suffix(const std::vector<int>& devices, std::size_t i) {
  if (devices.size() == 1) return {};
  std::string s = "@cuda" + std::to_string(devices[i]);
  if (std::count(devices.begin(), devices.end(), devices[i]) > 1) s += "#" + std::to_string(i);
  return s;
}

Result solve_columns(const Problem& pb, const std::vector<int>& devices) {
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
      solve_range(pb, first, last, devices[i], device_suffix(std::vector<int>(devices.begin(), devices.begin() + nd), i),
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

// ---- the table plan ---------------------------------------------------------------

constexpr int kTableBlock = 256;        // table_kernel: tails spread over the block
constexpr int kPointsBlock = 256;
constexpr int kTableMiddleBlock = 256;  // 8 warps, one Middle value each
constexpr int kTableOuterBlock = 128;

// One block per table row (eta point). Thread 0 runs the trajectory of Inner(eta, 0)
// (every indicator 1), the block computing its coefficients chunk by chunk; the
// states U_q before the steps of the cut region [q_lo, steps] and that region's
// coefficients stay in shared memory; then every thread finishes cuts n (tails).
// The arithmetic is table_row_host's, operation for operation.
__global__ void table_kernel(RateView rv, const TableRow* rows, double* table, int tail_points, int tail_states) {
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
  auto coef = [&](int l) { return inner_coefficient(rv, r.eta, 0.0, segment_point(r.seg, l)); };
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
__global__ void points_kernel(const TableClass* classes, int nclass, std::int64_t npoints, RateView rv, double* tau,
                              double* rate, double* muf, int* year) {
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
  muf[i] = mu_female(c.x + t);
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
                                    const double* tau, const TableFamily* fams, double* middle) {
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
    W[i] = middle_weight(trow[e].eta, tau[point0 + pt]);
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

// One thread per policy in [p0, p0 + n): the outer recurrence into its reserve row
// (many policies: the latency of one chain hidden by the others).
__global__ void table_outer_kernel(const std::int32_t* profile_of, const TablePolicy* profiles,
                                   const TableClass* classes, const double* rate, const double* muf, const int* year,
                                   const double* middle, std::int64_t p0, std::int64_t n, double* reserve) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const TablePolicy pr = profiles[profile_of[p0 + i]];
  const TableClass& c = classes[pr.cls];
  table_outer(c.seg, pr, rate + c.point, muf + c.point, year + c.point, middle, reserve + i * kYears);
}

// One warp per policy (few policies): the lanes load 32 steps' inputs at once, then
// every lane runs the same chain (outer_step, as table_outer) on them by shuffles,
// so that one chain waits for memory once per 32 steps.
__global__ void table_outer_warp_kernel(const std::int32_t* profile_of, const TablePolicy* profiles,
                                        const TableClass* classes, const double* rate, const double* muf,
                                        const int* year, const double* middle, std::int64_t p0, std::int64_t n,
                                        double* reserve) {
  std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (i >= n) return;  // whole warps leave together
  const TablePolicy pr = profiles[profile_of[p0 + i]];
  const TableClass& c = classes[pr.cls];
  const double* rt = rate + c.point;
  const double* mf = muf + c.point;
  const int* yr = year + c.point;
  double* out = reserve + i * kYears;
  for (int y = lane; y < kYears; y += 32) out[y] = CUDART_NAN;
  __syncwarp();
  double V = 0;
  if (lane == 0 && yr[0] >= 0) out[yr[0]] = V;
  const int steps = segment_steps(c.seg);
  double r0 = rt[0], m0 = mf[0], M0 = middle[table_middle_index(pr, 0)];
  for (int q0 = 0; q0 < steps; q0 += 32) {
    const OuterIn mine = q0 + lane < steps ? outer_in(pr, rt, mf, yr, middle, q0 + lane) : OuterIn{};
    const int nq = min(32, steps - q0);
    for (int t = 0; t < nq; ++t) {
      double rm = __shfl_sync(0xffffffffu, mine.rm, t), mm = __shfl_sync(0xffffffffu, mine.mm, t);
      double Mm = __shfl_sync(0xffffffffu, mine.Mm, t), r1 = __shfl_sync(0xffffffffu, mine.r1, t);
      double m1 = __shfl_sync(0xffffffffu, mine.m1, t), M1 = __shfl_sync(0xffffffffu, mine.M1, t);
      int y1 = __shfl_sync(0xffffffffu, mine.y1, t);
      V = outer_step(V, segment_step_size(c.seg, q0 + t), r0, m0, M0, rm, mm, Mm, r1, m1, M1);
      if (lane == 0 && y1 >= 0) out[y1] = V;
      r0 = r1;
      m0 = m1;
      M0 = M1;
    }
  }
}

// Host blobs: arrays packed at 256-byte offsets, uploaded in one copy.
class Blob {
 public:
  template <class T>
  std::size_t add(const std::vector<T>& v) {
    std::size_t off = (bytes_.size() + 255) / 256 * 256;
    bytes_.resize(off + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bytes_.data() + off, v.data(), v.size() * sizeof(T));
    return off;
  }
  std::size_t reserve(std::size_t bytes) {  // space on the device only (not uploaded)
    std::size_t off = (std::max(bytes_.size(), device_) + 255) / 256 * 256;
    device_ = off + bytes;
    return off;
  }
  std::size_t upload_bytes() const { return bytes_.size(); }
  std::size_t device_bytes() const { return std::max(bytes_.size(), device_) + 256; }
  const char* data() const { return bytes_.data(); }

 private:
  std::vector<char> bytes_;
  std::size_t device_ = 0;
};

// Device memory from the device's stream-ordered pool; the pool keeps it for the
// next solve (--repeat, several groups) instead of returning it to the driver.
// Without memory pools on the device: plain cudaMalloc and cudaFree.
bool keep_pool_memory(int device) {
  static std::mutex m;
  static std::vector<std::pair<int, bool>> done;
  std::lock_guard<std::mutex> lock(m);
  for (const auto& d : done)
    if (d.first == device) return d.second;
  int pools = 0;
  NUMPIPE_CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device));
  if (pools) {
    cudaMemPool_t pool;
    NUMPIPE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = ~0ull;
    NUMPIPE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  done.emplace_back(device, pools != 0);
  return pools != 0;
}

class PoolMemory {
 public:
  PoolMemory() = default;
  PoolMemory(const PoolMemory&) = delete;
  PoolMemory& operator=(const PoolMemory&) = delete;
  ~PoolMemory() {
    if (!p_) return;
    if (pooled_) cudaFreeAsync(p_, s_);
    else cudaFree(p_);
  }
  void allocate(std::size_t bytes, cudaStream_t s, int device) {
    s_ = s;
    pooled_ = keep_pool_memory(device);
    if (pooled_) {
      NUMPIPE_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&p_), bytes, s));
    } else {
      p_ = static_cast<char*>(detail::allocate_device(bytes));
    }
  }
  char* get() const { return p_; }

 private:
  char* p_ = nullptr;
  cudaStream_t s_ = nullptr;
  bool pooled_ = false;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct Range {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};
Range split(std::int64_t n, std::size_t parts, std::size_t i) {
  return {n * static_cast<std::int64_t>(i) / static_cast<std::int64_t>(parts),
          n * static_cast<std::int64_t>(i + 1) / static_cast<std::int64_t>(parts)};
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() {
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// Per device slot: streams, memory, events and its ranges. Members are destroyed
// in reverse order: timers and events, then the memory (freed on its stream),
// then the streams; with the slot's device current (SlotList).
struct Slot {
  int device = 0;
  std::string suffix;
  Stream s, copy;
  PoolMemory mem1, mem2;  // rows and table; the rest
  char* d1 = nullptr;
  char* d2 = nullptr;
  Range rows, entries, policies;
  int c0 = 0, c1 = 0;  // its classes (Middle values)
  CudaEventTimer t_up1, t_up2, t_inner, t_middle, t_outer;
  Event table_done, middle_done, up2_done, outer_done, staged[2];
};

// Pinned staging buffers for the downloads, two per device slot, kept for the
// process (a pageable copy runs at a fraction of the bus and blocks the host).
constexpr std::size_t kStageBytes = std::size_t{8} << 20;
char* staging(std::size_t slot, int buffer) {
  static std::mutex m;
  static std::vector<std::array<char*, 2>> bufs;
  std::lock_guard<std::mutex> lock(m);
  while (bufs.size() <= slot) bufs.push_back({nullptr, nullptr});
  char*& b = bufs[slot][buffer];
  if (!b) NUMPIPE_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&b), kStageBytes, cudaHostAllocPortable));
  return b;
}

// The slots; on the way out (normally or by an exception) every stream is drained
// before any slot's memory is freed.
struct SlotList {
  std::vector<std::unique_ptr<Slot>> v;
  ~SlotList() {
    for (auto& sl : v) {
      cudaSetDevice(sl->device);
      cudaStreamSynchronize(sl->s.s);
      cudaStreamSynchronize(sl->copy.s);
    }
    for (auto& sl : v) {
      cudaSetDevice(sl->device);
      sl.reset();
    }
  }
};

// rows x width bytes at off (pitch bytes apart; one row when rows == 1) of src's
// buffer into dst's, on dst's stream (a plain device copy when both slots are one device).
void copy_2d(Slot& dst, const Slot& src, std::size_t off, char* dbuf, const char* sbuf, std::size_t pitch,
             std::size_t width, std::size_t rows) {
  if (rows == 1) {
    if (dst.device == src.device)
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dbuf + off, sbuf + off, width, cudaMemcpyDeviceToDevice, dst.s.s));
    else
      NUMPIPE_CUDA_CHECK(cudaMemcpyPeerAsync(dbuf + off, dst.device, sbuf + off, src.device, width, dst.s.s));
    return;
  }
  if (dst.device == src.device) {
    NUMPIPE_CUDA_CHECK(cudaMemcpy2DAsync(dbuf + off, pitch, sbuf + off, pitch, width, rows, cudaMemcpyDeviceToDevice, dst.s.s));
  } else {
    cudaMemcpy3DPeerParms p = {};
    p.srcPtr = make_cudaPitchedPtr(const_cast<char*>(sbuf + off), pitch, width, rows);
    p.srcDevice = src.device;
    p.dstPtr = make_cudaPitchedPtr(dbuf + off, pitch, width, rows);
    p.dstDevice = dst.device;
    p.extent = make_cudaExtent(width, rows, 1);
    NUMPIPE_CUDA_CHECK(cudaMemcpy3DPeerAsync(&p, dst.s.s));
  }
}

// Few policies: one warp per policy (table_outer_warp_kernel); decided on the whole
// batch so that every split of it runs the same kernel.
constexpr std::int64_t kOuterWarpMaxPolicies = 4096;

Result solve_table(const Problem& pb, const std::vector<int>& devices) {
  Result res;
  const std::size_t nd = devices.size();
  const std::int64_t npol = static_cast<std::int64_t>(pb.policies.size());
  const std::size_t total = static_cast<std::size_t>(npol) * kYears;
  HostTimer plan_timer;
  TablePlan tp;
  plan_table_rows(pb, tp);
  double plan_seconds = plan_timer.seconds();
  RateTable rate_table = make_rate_table(pb);
  RateView rv = rate_table.view();  // constant rate: no device arrays

  // A large result: its pages touched by half the host's threads while this one
  // plans and the devices work (a fresh result would take its page faults in the
  // copy), then pinned in place (cudaHostRegister) so that each device copies its
  // rows straight into it at the bus's speed; where pinning fails, the rows come
  // through pinned staging buffers.
  res.reserve.resize(total);
  std::thread toucher;
  bool pinned = false;
  const std::size_t result_bytes = total * sizeof(double);
  if (total >= (std::size_t{1} << 20)) {
    int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
    const int dev0 = devices.front();
    toucher = std::thread([&res, &pinned, total, result_bytes, threads, dev0] {
      first_touch(res.reserve.data(), total, threads);
      if (cudaSetDevice(dev0) != cudaSuccess) {
        cudaGetLastError();
        return;
      }
      pinned = cudaHostRegister(res.reserve.data(), result_bytes, cudaHostRegisterPortable) == cudaSuccess;
      if (!pinned) cudaGetLastError();  // not sticky: cleared, and the staging buffers serve
    });
  }
  struct Unpin {
    bool& pinned;
    void* p;
    ~Unpin() {
      if (pinned) cudaHostUnregister(p);
    }
  } unpin{pinned, res.reserve.data()};
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{toucher};

  // 1. Table rows on every device, the table kernel on each device's share, and
  //    the copies of every share to the other devices.
  Blob b1;
  const std::size_t o_rows = b1.add(tp.rows);
  const std::size_t o_full = b1.add(tp.row_full);
  const std::size_t o_table = b1.reserve(static_cast<std::size_t>(tp.table_size) * sizeof(double));
  const std::int64_t nrows = static_cast<std::int64_t>(tp.rows.size());
  const int tail_points = std::max(tp.max_tail_points, 1), tail_states = std::max(tp.max_tail_states, 1);
  const std::size_t table_smem = sizeof(double) * (2 * kTableChunk + 1 + tail_points + tail_states);
  if (table_smem > 48 * 1024) fail_internal("integrate: table rows too long for shared memory");

  SlotList slot_list;
  auto& slots = slot_list.v;
  for (std::size_t i = 0; i < nd; ++i) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(devices[i]));
    slots.push_back(std::make_unique<Slot>());
    Slot& sl = *slots.back();
    sl.device = devices[i];
    sl.suffix = device_suffix(devices, i);
    sl.rows = split(nrows, nd, i);
    sl.t_up1.start(sl.s.s);
    sl.mem1.allocate(b1.device_bytes(), sl.s.s, sl.device);
    sl.d1 = sl.mem1.get();
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(sl.d1, b1.data(), b1.upload_bytes(), cudaMemcpyHostToDevice, sl.s.s));
    sl.t_up1.stop(sl.s.s);
    sl.t_inner.start(sl.s.s);
    if (sl.rows.size() > 0) {
      table_kernel<<<static_cast<unsigned>(sl.rows.size()), kTableBlock, table_smem, sl.s.s>>>(
          rv, reinterpret_cast<const TableRow*>(sl.d1 + o_rows) + sl.rows.begin,
          reinterpret_cast<double*>(sl.d1 + o_table), tail_points, tail_states);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.table_done.e, sl.s.s));
  }
  // A share of rows is a set of columns of the depth-major table: its columns at
  // every depth of each type.
  for (std::size_t dst = 0; dst < nd && nd > 1; ++dst) {
    Slot& d = *slots[dst];
    NUMPIPE_CUDA_CHECK(cudaSetDevice(d.device));
    for (std::size_t src = 0; src < nd; ++src) {
      const Slot& sr = *slots[src];
      if (src == dst || sr.rows.size() == 0) continue;
      NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(d.s.s, sr.table_done.e, 0));
      for (const TableType& ty : tp.types) {
        std::int64_t r0 = std::max(sr.rows.begin, ty.row0), r1 = std::min(sr.rows.end, ty.row0 + ty.rows);
        if (r1 <= r0) continue;
        std::size_t off = o_table + static_cast<std::size_t>(ty.table + (r0 - ty.row0)) * sizeof(double);
        copy_2d(d, sr, off, d.d1, sr.d1, static_cast<std::size_t>(ty.rows) * sizeof(double),
                static_cast<std::size_t>(r1 - r0) * sizeof(double), static_cast<std::size_t>(ty.depths));
      }
    }
  }
  for (auto& sl : slots) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(sl->device));
    sl->t_inner.stop(sl->s.s);
  }

  // 2. The rest of the plan on the host while the tables run.
  HostTimer plan2_timer;
  plan_table_families(pb, tp);
  plan_seconds += plan2_timer.seconds();
  res.log.add("plan", plan_seconds);

  // Stage points per middle block: as many as 8 whose weights fit in 48 KiB.
  const int group = static_cast<int>(std::min<std::size_t>(8, (48 * 1024) / (sizeof(double) * std::max(tp.max_rows, 1))));
  if (group < 1) fail_internal("integrate: middle grid too fine for the middle kernel's shared memory");
  const int weights_smem = static_cast<int>(sizeof(double)) * std::max(tp.max_rows, 1) * group;
  const int nclass = static_cast<int>(tp.classes.size());
  const std::int64_t blocks = assign_middle_blocks(tp, group);
  Blob b2;
  const std::size_t o_types = b2.add(tp.types);
  const std::size_t o_classes = b2.add(tp.classes);
  const std::size_t o_fams = b2.add(tp.families);
  const std::size_t o_profiles = b2.add(tp.profiles);
  const std::size_t o_profile_of = b2.add(tp.profile_of);
  const std::size_t cp = static_cast<std::size_t>(tp.class_points);
  const std::size_t o_tau = b2.reserve(cp * sizeof(double));
  const std::size_t o_rate = b2.reserve(cp * sizeof(double));
  const std::size_t o_muf = b2.reserve(cp * sizeof(double));
  const std::size_t o_year = b2.reserve(cp * sizeof(int));
  const std::size_t o_middle = b2.reserve(static_cast<std::size_t>(tp.entries) * sizeof(double));
  std::int64_t max_pol = 0;
  for (std::size_t i = 0; i < nd; ++i) max_pol = std::max(max_pol, split(npol, nd, i).size());
  const std::size_t o_reserve = b2.reserve(static_cast<std::size_t>(max_pol) * kYears * sizeof(double));
  const bool warp_outer = npol <= kOuterWarpMaxPolicies;
  auto class_block = [&](int c) { return c < nclass ? tp.classes[c].block0 : static_cast<int>(blocks); };

  for (std::size_t i = 0; i < nd; ++i) {
    Slot& sl = *slots[i];
    NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
    table_class_split(tp, nd, i, sl.c0, sl.c1);
    sl.entries = {tp.class_entry[sl.c0], tp.class_entry[sl.c1]};
    sl.policies = split(npol, nd, i);
    // Uploaded on the copy stream (a pageable copy may wait for its stream).
    sl.t_up2.start(sl.copy.s);
    sl.mem2.allocate(b2.device_bytes(), sl.copy.s, sl.device);
    sl.d2 = sl.mem2.get();
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(sl.d2, b2.data(), b2.upload_bytes(), cudaMemcpyHostToDevice, sl.copy.s));
    sl.t_up2.stop(sl.copy.s);
    NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.up2_done.e, sl.copy.s));
    NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(sl.s.s, sl.up2_done.e, 0));
    auto* classes = reinterpret_cast<const TableClass*>(sl.d2 + o_classes);
    auto* tau = reinterpret_cast<double*>(sl.d2 + o_tau);
    sl.t_middle.start(sl.s.s);
    if (cp > 0) {
      points_kernel<<<blocks_for(static_cast<std::int64_t>(cp), kPointsBlock), kPointsBlock, 0, sl.s.s>>>(
          classes, nclass, static_cast<std::int64_t>(cp), rv, tau, reinterpret_cast<double*>(sl.d2 + o_rate),
          reinterpret_cast<double*>(sl.d2 + o_muf), reinterpret_cast<int*>(sl.d2 + o_year));
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    const int blk0 = class_block(sl.c0), blk1 = class_block(sl.c1);
    if (blk1 > blk0) {
      table_middle_kernel<<<static_cast<unsigned>(blk1 - blk0), kTableMiddleBlock, weights_smem, sl.s.s>>>(
          classes, sl.c0, sl.c1, blk0, group, reinterpret_cast<const TableType*>(sl.d2 + o_types),
          reinterpret_cast<const TableRow*>(sl.d1 + o_rows), reinterpret_cast<const std::int32_t*>(sl.d1 + o_full),
          reinterpret_cast<const double*>(sl.d1 + o_table), tau, reinterpret_cast<const TableFamily*>(sl.d2 + o_fams),
          reinterpret_cast<double*>(sl.d2 + o_middle));
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.middle_done.e, sl.s.s));
  }
  for (std::size_t dst = 0; dst < nd && nd > 1; ++dst) {
    Slot& d = *slots[dst];
    NUMPIPE_CUDA_CHECK(cudaSetDevice(d.device));
    for (std::size_t src = 0; src < nd; ++src) {
      const Slot& sr = *slots[src];
      if (src == dst || sr.entries.size() == 0) continue;
      std::size_t off = o_middle + static_cast<std::size_t>(sr.entries.begin) * sizeof(double);
      NUMPIPE_CUDA_CHECK(cudaStreamWaitEvent(d.s.s, sr.middle_done.e, 0));
      copy_2d(d, sr, off, d.d2, sr.d2, 0, static_cast<std::size_t>(sr.entries.size()) * sizeof(double), 1);
    }
  }
  for (auto& slp : slots) {
    Slot& sl = *slp;
    NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
    sl.t_middle.stop(sl.s.s);
    sl.t_outer.start(sl.s.s);
    if (sl.policies.size() > 0) {
      auto* profile_of = reinterpret_cast<const std::int32_t*>(sl.d2 + o_profile_of);
      auto* profiles = reinterpret_cast<const TablePolicy*>(sl.d2 + o_profiles);
      auto* classes = reinterpret_cast<const TableClass*>(sl.d2 + o_classes);
      auto* rate = reinterpret_cast<const double*>(sl.d2 + o_rate);
      auto* muf = reinterpret_cast<const double*>(sl.d2 + o_muf);
      auto* year = reinterpret_cast<const int*>(sl.d2 + o_year);
      auto* middle = reinterpret_cast<const double*>(sl.d2 + o_middle);
      auto* reserve = reinterpret_cast<double*>(sl.d2 + o_reserve);
      if (warp_outer)
        table_outer_warp_kernel<<<blocks_for(sl.policies.size() * 32, kTableOuterBlock), kTableOuterBlock, 0, sl.s.s>>>(
            profile_of, profiles, classes, rate, muf, year, middle, sl.policies.begin, sl.policies.size(), reserve);
      else
        table_outer_kernel<<<blocks_for(sl.policies.size(), kTableOuterBlock), kTableOuterBlock, 0, sl.s.s>>>(
            profile_of, profiles, classes, rate, muf, year, middle, sl.policies.begin, sl.policies.size(), reserve);
      NUMPIPE_CUDA_CHECK_LAUNCH();
    }
    sl.t_outer.stop(sl.s.s);
    NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.outer_done.e, sl.s.s));
  }

  // 3. The download, timed from the end of the last outer kernel: straight into the
  //    pinned result, or every slot's rows in chunks through its two pinned
  //    buffers, the bus copy of one chunk overlapping the host copy of the previous.
  HostTimer wait_timer;  // how long the result's pages still took after the devices' launches
  if (toucher.joinable()) toucher.join();
  const double wait_seconds = wait_timer.seconds();
  for (auto& slp : slots) NUMPIPE_CUDA_CHECK(cudaEventSynchronize(slp->outer_done.e));
  HostTimer down_timer;
  if (pinned) {
    for (auto& slp : slots) {
      Slot& sl = *slp;
      if (sl.policies.size() == 0) continue;
      NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(res.reserve.data() + sl.policies.begin * kYears, sl.d2 + o_reserve,
                                         static_cast<std::size_t>(sl.policies.size()) * kYears * sizeof(double),
                                         cudaMemcpyDeviceToHost, sl.s.s));
    }
  }
  std::size_t max_chunks = 0;
  auto chunks_of = [&](const Slot& sl) {
    std::size_t bytes = static_cast<std::size_t>(sl.policies.size()) * kYears * sizeof(double);
    return (bytes + kStageBytes - 1) / kStageBytes;
  };
  if (!pinned)
    for (auto& slp : slots) max_chunks = std::max(max_chunks, chunks_of(*slp));
  auto chunk = [&](const Slot& sl, std::size_t c, std::size_t& off) {
    std::size_t bytes = static_cast<std::size_t>(sl.policies.size()) * kYears * sizeof(double);
    off = c * kStageBytes;
    return std::min(kStageBytes, bytes - off);
  };
  for (std::size_t c = 0; c <= max_chunks && !pinned; ++c) {
    for (std::size_t i = 0; i < nd && c < max_chunks; ++i) {
      Slot& sl = *slots[i];
      if (c >= chunks_of(sl)) continue;
      std::size_t off;
      std::size_t n = chunk(sl, c, off);
      NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(staging(i, c & 1), sl.d2 + o_reserve + off, n, cudaMemcpyDeviceToHost, sl.s.s));
      NUMPIPE_CUDA_CHECK(cudaEventRecord(sl.staged[c & 1].e, sl.s.s));
    }
    if (c == 0) continue;
    for (std::size_t i = 0; i < nd; ++i) {
      Slot& sl = *slots[i];
      if (c - 1 >= chunks_of(sl)) continue;
      std::size_t off;
      std::size_t n = chunk(sl, c - 1, off);
      NUMPIPE_CUDA_CHECK(cudaEventSynchronize(sl.staged[(c - 1) & 1].e));
      parallel_copy(reinterpret_cast<char*>(res.reserve.data() + sl.policies.begin * kYears) + off, staging(i, (c - 1) & 1), n);
    }
  }
  for (auto& slp : slots) {
    NUMPIPE_CUDA_CHECK(cudaSetDevice(slp->device));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(slp->s.s));
  }
  const double down_seconds = down_timer.seconds();
  HostTimer unpin_timer;
  if (pinned) NUMPIPE_CUDA_CHECK(cudaHostUnregister(res.reserve.data()));
  const bool was_pinned = pinned;
  pinned = false;
  const double unpin_seconds = unpin_timer.seconds();

  // Phases per device (CUDA events; the download on the host clock, all slots at
  // once); flops as counted in integrate.hpp, each item on the device that computed it.
  for (std::size_t i = 0; i < nd; ++i) {
    Slot& sl = *slots[i];
    NUMPIPE_CUDA_CHECK(cudaSetDevice(sl.device));
    TableWork w;
    for (std::int64_t r = sl.rows.begin; r < sl.rows.end; ++r) w.add(tp.rows[r]);
    double weights = 0, products = 0, msteps = 0;
    for (int c = sl.c0; c < sl.c1; ++c) {
      const TableClass& cl = tp.classes[c];
      const TableType& ty = tp.types[cl.type];
      double values = static_cast<double>(tp.class_entry[c + 1] - tp.class_entry[c]);
      weights += static_cast<double>(cl.points) * ty.rows;
      products += values * table_middle_products(segment_steps(ty.mseg));
      msteps += values * segment_steps(ty.mseg);
    }
    double share_p = npol > 0 ? static_cast<double>(sl.policies.size()) / static_cast<double>(npol) : 0;
    double up = static_cast<double>(b1.upload_bytes() + b2.upload_bytes());
    res.log.add("upload" + sl.suffix, sl.t_up1.seconds() + sl.t_up2.seconds(), up);
    res.log.add("inner" + sl.suffix, sl.t_inner.seconds(), 8.0 * static_cast<double>(tp.table_size),
                w.coefficients * kFlopsCoefficient + (w.trajectory + w.tail) * kFlopsLinearStep);
    res.log.add("middle" + sl.suffix, sl.t_middle.seconds(), 8.0 * static_cast<double>(sl.entries.size()),
                static_cast<double>(tp.class_points) * kFlopsOuterPoint + weights * kFlopsMiddleWeight +
                    products * kFlopsMiddleProduct + msteps * kFlopsMiddleStep);
    res.log.add("outer" + sl.suffix, sl.t_outer.seconds(), 8.0 * share_p * static_cast<double>(total),
                share_p * tp.outer_steps * kFlopsOuterStep);
    res.log.add("download" + sl.suffix, down_seconds, 8.0 * share_p * static_cast<double>(total));
  }
  res.log.add("result pages", wait_seconds);
  if (was_pinned) res.log.add("result unpin", unpin_seconds);
  res.inner_steps = tp.trajectory_steps + tp.tail_steps;
  res.inner_steps_unshared = 0;
  res.columns = tp.rows.size();
  res.requests = static_cast<std::size_t>(tp.requests);
  res.table = true;
  res.middle_values = static_cast<std::size_t>(tp.entries);
  return res;
}

}  // namespace

Result solve_cuda(const Problem& pb, const std::vector<int>& devices) {
  if (devices.empty()) fail_input("integrate: no CUDA device given");
  if (table_plan_applies(pb)) return solve_table(pb, devices);
  return solve_columns(pb, devices);
}
}  // namespace numpipe::integrate
