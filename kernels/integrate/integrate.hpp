// integrate: the interface of the GF820 reserve kernels (model in model.hpp).
//
// Both backends run the same three phases over a Plan built once on the host:
//   1. inner:  Inner(eta, k, t) for every distinct column (k, [t], steps) and every
//              eta stage point of the middle level  (the heavy part)
//   2. middle: Middle(x + t, t) for every stage point t of every policy's outer
//              level, a weighted sum over its column
//   3. outer:  the outer RK4 recurrence per policy, the reserve at whole years.
// Sharing is exact: Inner depends on (eta, k, t) only, and with a constant rate
// on (eta, k) alone, so a column is computed once per distinct (k, steps) -- per
// distinct (k, t, steps) with a yield curve -- and the result is bit-identical to
// calling Inner afresh for every Middle stage (tests check this).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/profile.hpp"
#include "model.hpp"

namespace numpipe::integrate {

struct Policy {
  double g = 10, r = 65, x = 35;  // guarantee years, retirement age, age now
  int h1 = 10, h2 = 2, h3 = 10;   // steps per year: outer, middle, inner
};

// Yield curve points (maturity in years, zero rate as a fraction); empty: constant rate.
struct Curve {
  std::vector<double> maturity, rate;
  bool empty() const { return maturity.empty(); }
};

struct Problem {
  std::vector<Policy> policies;
  double rate = kDefaultRate;  // the constant rate when there is no curve
  Curve curve;
  bool align_breaks = false;   // step boundaries at every break of the integrands
};

// Limits of the accepted input (exit 2 outside them, naming the value).
inline constexpr int kMaxStepsPerYear = 1000;
inline constexpr int kMaxCurvePoints = 1000;

// Throws a bad-input error (exit 2) naming the first policy or value out of range:
// x in [0, 119], g in [0, 120], r in [0, 120], steps in [1, 1000], a curve with
// increasing finite maturities >= 0 and finite rates in (-1, 1).
void validate(const Problem& problem);
void validate_curve(const Curve& curve);
// Reads a curve table: two numbers a line (maturity rate), '#' comments, blank lines.
Curve parse_curve_text(const std::string& text, const std::string& label);

// The rate in the form the kernels use (see RateView in model.hpp).
struct RateTable {
  std::vector<double> knots, alpha, beta;
  double constant = kDefaultRate;
  RateView view() const;
};
RateTable make_rate_table(const Problem& problem);

// A level's discretisation: stage points; step j uses points 2j (start), 2j+1
// (middle) and 2j+2 (end = next start) with size h[j].
struct Grid {
  std::vector<double> pts, h;
  std::vector<int> year;  // outer grids: whole year at each point, or -1
};
// The outer grid of a policy (whole years marked) and the middle grid for a
// given pension delay k (k matters only with align_breaks).
Grid outer_grid(const Policy& p, bool align);
Grid middle_grid(int h2, double k, bool align);

struct Plan {
  std::size_t policies = 0;
  // Outer level, policies concatenated: stage points [outer_offset[p], outer_offset[p+1]),
  // steps from (outer_offset[p] - p) / 2.
  std::vector<std::int64_t> outer_offset;
  std::vector<double> outer_t, outer_h;
  std::vector<int> outer_year;
  // One Middle request per outer stage point: its tau = x + t and its column.
  std::vector<double> request_tau;
  std::vector<std::int32_t> request_column;
  // Columns: distinct (k, t if a curve, h2, h3) with their middle grid.
  std::vector<double> column_k, column_t;
  std::vector<std::int32_t> column_h3, column_grid;
  std::vector<std::int64_t> column_offset;  // into the inner values, size columns+1
  // Middle grids: points [grid_offset[g], grid_offset[g+1]), steps from (grid_offset[g] - g) / 2.
  std::vector<std::int64_t> grid_offset;
  std::vector<double> grid_eta, grid_h;
  RateTable rate;
  bool align = false;
  // Work counts (for rates in profiles and the bench).
  double inner_steps = 0;          // RK4 steps of Inner actually taken (shared columns once)
  double inner_steps_unshared = 0; // ... had every Middle call run its own Inner calls
  std::size_t columns() const { return column_k.size(); }
  std::size_t requests() const { return request_tau.size(); }
  std::size_t inner_values() const { return static_cast<std::size_t>(column_offset.back()); }
};

// Builds the plan of a whole problem, or of policies [first, last).
Plan make_plan(const Problem& problem, std::size_t first, std::size_t last);

// An allocator that leaves elements default-initialised (doubles: not written) on
// resize: the solvers write every element of the reserve, and zero-filling a large
// result first costs as much as the download into it.
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using ReserveArray = std::vector<double, NoInitAllocator<double>>;

struct Result {
  ReserveArray reserve;         // [policies, 121]: year 0..120, NaN past 120 - x
  PhaseLog log;                 // phase timings, bytes and flops
  double inner_steps = 0, inner_steps_unshared = 0;
  std::size_t columns = 0, requests = 0;
  bool table = false;              // the CUDA table plan: columns counts table rows
  std::size_t middle_values = 0;   // Middle values computed (table plan; else requests)
};

// Flops of one Inner RK4 step as counted for the rate reports (docs/integrate.md):
// the fp64 instructions of the step loop in inner_kernel's SASS (sm_90, nvcc 13):
// 45 DFMA (2 flops each) + 12 DADD + 6 DMUL, two exp evaluations included.
inline constexpr double kFlopsPerInnerStep = 45 * 2 + 12 + 6;

// The CPU backend (OpenMP; threads 0 = OpenMP's default). Same bits for any thread count.
Result solve_cpu(const Problem& problem, int threads = 0);
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

#ifdef NUMPIPE_HAVE_CUDA
// The CUDA backend on the given devices (a device may be listed more than once).
// Constant rate and the faithful scheme (table_plan_applies): the table plan, its
// inner rows, Middle values and policies split over the devices, each shared value
// computed on one device and copied to the others. Otherwise (a yield curve,
// --align-breaks, k h3 > 600): the column plan, policies split into contiguous
// ranges, each planned on its own device.
Result solve_cuda(const Problem& problem, const std::vector<int>& devices);
#endif

}  // namespace numpipe::integrate
