// integrate's internals, included by integrate.hpp after its public types: the split
// solve, page faulting, the backends' entry points, flop counts.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace numpipe::integrate {

// Where a part of a problem writes its rows and premiums: policy i of the part is
// policy index[i] of the whole.
struct RowSink {
  double* rows = nullptr;            // the whole problem's reserve, kYears per policy
  double* premium = nullptr;         // the whole problem's premiums
  const std::int64_t* index = nullptr;
  bool touched = false;              // the whole result's pages are faulted in already (solve_split)
  double* row(std::int64_t i) const { return rows + index[i] * kYears; }
};
// Solves a problem by two solvers: `spouse` for its spouse pensions, `products` for
// its single-life products. A problem of one kind goes to its solver whole (sink
// null: the solver returns the rows in Result::reserve); otherwise each solver gets
// a problem of its policies alone and a sink into the whole result, and the phase
// logs are joined.
// A solver in two steps (PartStarter): starting plans its part and sets its device
// work going, writing nothing into the result; the PartFinish it returns waits for
// that work and writes the rows. One after the other (the default), the products
// are started, then the spouse pensions, so that the products' kernel runs while
// the host plans the spouse pensions; with touch_pages the whole result's pages are
// then faulted in (the devices working), and each part finished.
// concurrent: the two parts solved at once (two host threads: the CUDA backend,
// whose parts wait for their devices).
using PartSolver = std::function<Result(const Problem&, const RowSink*)>;
using PartFinish = std::function<Result()>;
using PartStarter = std::function<PartFinish(const Problem&, const RowSink*)>;
Result solve_split(const Problem& problem, const PartStarter& spouse, const PartStarter& products,
                   bool concurrent = false, bool touch_pages = false);
// Solvers in one step (the CPU backend): all their work when finished.
Result solve_split(const Problem& problem, const PartSolver& spouse, const PartSolver& products);
// Asks Linux for huge pages on the 2 MiB-aligned interior of [p, p + bytes) (where
// transparent huge pages are "madvise"): one fault per 2 MiB instead of 512.
void advise_huge_pages(void* p, std::size_t bytes);
// A fresh result's page faults taken early, beside the host's other work: `helpers`
// threads of its own start at once on p[0, n) (huge pages asked for first), 2 MiB
// at a time; help() has the calling thread's OpenMP team take what is left and
// returns once every page is written (its first value, 0). Nothing else may write
// p[0, n) before help() returns. The destructor waits for the helpers.
class PageFaulter {
 public:
  PageFaulter(double* p, std::size_t n, int helpers);
  ~PageFaulter();
  PageFaulter(const PageFaulter&) = delete;
  PageFaulter& operator=(const PageFaulter&) = delete;
  void help();

 private:
  void take();
  void join();
  char* begin_ = nullptr;
  char* end_ = nullptr;
  std::uintptr_t first_chunk_ = 0;
  std::size_t chunks_ = 0;
  std::atomic<std::size_t> next_{0};
  std::vector<std::thread> helpers_;
};
// The helper threads for the result's pages while the host plans (NUMPIPE_INTEGRATE_PAGES):
// early (the default): a quarter of OpenMP's threads (none below 4), whose share the
// plan's OpenMP team gives up meanwhile (TeamShare); late: none, every page faulted
// after the plan while the devices work. Another value is a bad-input error.
int early_page_helpers(int threads);
// Sets the calling thread's OpenMP team size for a while; restores it when done.
class TeamShare {
 public:
  TeamShare() = default;
  ~TeamShare() { restore(); }
  TeamShare(const TeamShare&) = delete;
  TeamShare& operator=(const TeamShare&) = delete;
  void set(int threads);
  void restore();

 private:
  int saved_ = 0;
};
// A PageFaulter on p[0, n) with early_page_helpers(the calling thread's OpenMP
// threads) helpers, whose share the calling thread's team gives up (team) until
// team.restore().
std::unique_ptr<PageFaulter> fault_pages_early(double* p, std::size_t n, TeamShare& team);

// Flops of one Inner RK4 step as counted for the rate reports (docs/integrate.md):
// the fp64 instructions of the step loop in inner_kernel's SASS (sm_90, nvcc 13):
// 45 DFMA (2 flops each) + 12 DADD + 6 DMUL, two exp evaluations included.
inline constexpr double kFlopsPerInnerStep = 45 * 2 + 12 + 6;

// The CPU backend (OpenMP; threads 0 = OpenMP's default). Same bits for any thread count.
Result solve_cpu(const Problem& problem, int threads = 0, const ProgressFn& progress = {});
// The naive nested scheme for one policy (no sharing, no plan): the reference the
// tests hold the planned backends to, bit for bit.
std::vector<double> reference_reserve(const Problem& problem, const Policy& policy);

// Flops counted for the rate reports (docs/integrate.md, "Flop count"): fp64
// arithmetic of the integrand evaluations and of the RK4 updates as written in
// model.hpp, a fused multiply-add 2, an add or multiply 1; exp at its instruction
// cost, the 14 DFMA + 1 DADD of CUDA's exp(double) on its normal path (the PTX of
// nvcc 13 for sm_90); grid, index and table-lookup arithmetic not counted.
inline constexpr double kFlopsExp = 14 * 2 + 1;
// r + muF or r + muM at an age: a + s, FMA, multiply by ln 10, exp, + 0.0005, + r.
inline constexpr double kFlopsCoefficient = 1 + 2 + 1 + kFlopsExp + 1 + 1;
// rk4_linear_step: k1 3, k2 5, k3 5, k4 4, the weighted sum 6.
inline constexpr double kFlopsLinearStep = 23;
// The middle weight -gp(tau) h(eta, tau): tau - eta, squared, scaled, exp, the
// density's factor, times -gp (gp once per stage point, not counted); then the
// integrand is one product, weight times Inner.
inline constexpr double kFlopsMiddleWeight = 1 + 1 + 1 + kFlopsExp + 1 + 1;
inline constexpr double kFlopsMiddleProduct = 1;
// middle_increment (3 multiplies, an FMA, an add, the 1/6) and the running sum.
inline constexpr double kFlopsMiddleStep = 8;
// muF(x + t) at an outer stage point (x + t, FMA, ln 10, exp, + 0.0005).
inline constexpr double kFlopsOuterPoint = 1 + 2 + 1 + kFlopsExp + 1;
// One outer RK4 step from precomputed r, muF and Middle: 4 derivatives (4 each),
// 4 multiplications by h, the two half-step FMAs, V + k3, the weighted sum.
inline constexpr double kFlopsOuterStep = 31;

// The CUDA backend (cuda.cu, in CUDA builds only; called through solve below) on the given devices (a device may be listed more than once).
// Constant rate and the faithful scheme (table_plan_applies): the table plan, its
// inner rows, Middle values and policies split over the devices, each shared value
// computed on one device and copied to the others. Otherwise (a yield curve,
// --align-breaks, k h3 > 600): the column plan, policies split into contiguous
// ranges, each planned on its own device.
Result solve_cuda(const Problem& problem, const std::vector<int>& devices);

// The policies as their cash flows are computed: each one's premium fixed at `premium`.
std::vector<ProductSpec> cash_flow_specs(const Problem& problem, const std::vector<double>& premium);
std::vector<double> cash_flows_cpu(const Problem& problem, const std::vector<ProductSpec>& specs, int threads);
std::vector<double> cash_flows_cuda(const Problem& problem, const std::vector<ProductSpec>& specs, int device);
}  // namespace numpipe::integrate
