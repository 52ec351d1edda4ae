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
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/profile.hpp"
#include "model.hpp"
#include "products.hpp"

namespace numpipe::integrate {

struct Policy {
  double g = 10, r = 65, x = 35;  // guarantee years, retirement age, age now
  int h1 = 10, h2 = 2, h3 = 10;   // steps per year: outer, middle, inner
  int product = kSpousePension;   // ProductKind (products.hpp)
  int insured = 0, spouse = 1;    // mortality laws (Problem::laws) of the insured and the spouse
  double term = kMaxAge;          // years from now to the product's term (cut at 120 - x)
  double deferment = 0;           // life annuity: years until its payments start
  double premium_term = -1;       // years of premium payments; < 0: the product's default (premium_term_of)
  double benefit = 1;             // the pension or annuity rate per year, or the sum insured
  double premium = 0;             // the level premium per year (with equivalence: solved for)
  bool equivalence = false;       // solve for the premium that makes the reserve at inception zero
};

// The premium term (years from now): as given, or by default until retirement
// (spouse pension; 0 past it), until the annuity starts (life annuity; 0: a single
// premium), else the term.
NUMPIPE_HD_INLINE double premium_term_of(const Policy& p) {
  if (p.premium_term >= 0) return p.premium_term;
  if (p.product == kSpousePension) return p.r - p.x > 0 ? p.r - p.x : 0.0;
  if (p.product == kLifeAnnuity) return p.deferment;
  return p.term;
}
// The end of a policy's cover (years from now): its term, cut at age 120.
NUMPIPE_HD_INLINE double cover_end(const Policy& p) { return p.term < kMaxAge - p.x ? p.term : kMaxAge - p.x; }
// Whether a policy is a spouse pension with the default payments (no premium, unit
// benefit): the spec's arithmetic, bit for bit.
NUMPIPE_HD_INLINE bool plain_spouse_pension(const Policy& p) {
  return p.product == kSpousePension && p.premium == 0 && !p.equivalence && p.benefit == 1;
}

// Yield curve points (maturity in years, zero rate as a fraction); empty: constant rate.
struct Curve {
  std::vector<double> maturity, rate;
  bool empty() const { return maturity.empty(); }
};

// A life's mortality (model.hpp, MortalityView): a Gompertz-Makeham law, or a table
// of q_x (one-year death probabilities) or mu_x (forces) by whole age, the force
// constant within each year of age: mu = -ln(1 - q_x) on [x, x + 1).
struct MortalityLaw {
  std::string name;             // "insured", "spouse", or the user's name for it
  bool table = false;
  double A = 0.0005, B = 5.728 - 10.0, C = 0.038;  // Gompertz-Makeham
  std::vector<double> ages, values;  // table, as given: whole consecutive ages, q_x or mu_x
  bool q = true;                     // table values are q_x (else mu_x)
  std::string source;                // where the table came from (a file's name)
  std::vector<double> force;         // table: the force per year of age from ages[0] (made by validate)
  MortalityView view() const;        // host pointers (force)
};
MortalityLaw gompertz_makeham(const std::string& name, double A, double B, double C);
// The default laws: 0 "insured" (Danish women), 1 "spouse" (Danish men).
std::vector<MortalityLaw> default_laws();

// The spouse assumptions (model.hpp, SpouseView): marriage probability by age (the
// spec's parabola, or a table), the spouse's age given the insured's (normal with
// a mean difference and a spread, or a table of the density of the difference).
struct SpouseBasis {
  bool marriage_table = false;
  std::vector<double> marriage_age, marriage_prob;
  bool age_table = false;
  double mean = 0, sd = 3;                  // spouse's age minus the insured's: normal
  std::vector<double> age_diff, age_density;  // ... or a table of its density
  bool is_default() const { return !marriage_table && !age_table && mean == 0 && sd == 3; }
  SpouseView view() const;                    // host pointers
};

struct Problem {
  std::vector<Policy> policies;
  double rate = kDefaultRate;  // the constant rate when there is no curve
  Curve curve;
  bool align_breaks = false;   // step boundaries at every break of the integrands
  int frequency = 0;           // annuity and premium payments a year (0: continuous), products.hpp
  bool advance = true;         // discrete payments at each period's start (else its end)
  std::vector<MortalityLaw> laws = default_laws();
  SpouseBasis spouse;
};

// Limits of the accepted input (exit 2 outside them, naming the value).
inline constexpr int kMaxStepsPerYear = 1000;
inline constexpr int kMaxCurvePoints = 1000;

// Throws a bad-input error (exit 2) naming the first policy or value out of range:
// x in [0, 119], g in [0, 120], r in [0, 120], steps in [1, 1000], a curve with
// increasing finite maturities >= 0 and finite rates in (-1, 1).
// Also checks the basis (and fills each table's forces): tables with whole
// consecutive ages, 0 <= q_x <= 1 (q_x < 1 below 120) or finite mu_x >= 0, covering
// the ages the integrals reach (the insured's from x, the spouse's from 1, up to 120);
// the marriage and spouse-age tables; each policy's product, laws and payments.
void validate(Problem& problem);
void validate_curve(const Curve& curve);
void validate_law(MortalityLaw& law);
void validate_spouse(const SpouseBasis& spouse);
void validate_policy_payments(const Problem& problem, std::size_t policy);
// RK4's stability limit on a step, |h| (r + mu) (model.hpp, stable_steps).
inline constexpr double kRk4StabilityLimit = 2.785;
// The faithful scheme takes the steps as asked: where a step is beyond RK4's stability
// limit for a law, the first such policy, level and age in words ("" where none).
// (The default scheme shortens such steps itself.)
std::string faithful_stability_warning(const Problem& problem);
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
// The outer grid of a spouse pension under the problem's basis: with --align-breaks
// also at the premium term (a premium), at the insured's whole ages (a table's
// life) and at the marriage table's ages (its kinks) instead of tau = 15.
Grid outer_grid(const Problem& problem, const Policy& p);

// The basis in the form the kernels use: one view per law, the spouse assumptions
// (host pointers into the problem; the CUDA backend copies the arrays and points
// into its own).
struct BasisViews {
  std::vector<MortalityView> laws;
  SpouseView spouse;
};
BasisViews basis_views(const Problem& problem);
// A single-life policy as its chain integrates it (products.hpp).
ProductSpec product_spec(const Policy& p);
// ... with the problem's payment frequency and timing.
ProductSpec product_spec(const Problem& problem, const Policy& p);
// Every policy's (all single-life), by OpenMP's threads; steps: the RK4 steps of
// their chains (three chains with an equivalence premium).
std::vector<ProductSpec> product_specs(const Problem& problem, double& steps);
// The same into out[0..policies) (e.g. a pinned upload buffer: no copies).
void product_specs(const Problem& problem, ProductSpec* out, double& steps);

// The spouse pension's outer recurrence for one policy from its Middle values at
// the stage points t (steps h, whole years `year`): writes 121 years (NaN past
// 120 - x) and returns the premium. A plain policy (plain_spouse_pension) runs the
// spec's arithmetic; otherwise Thiele's equation with S = benefit x Middle and the
// premium while alive before the premium term (solved for with equivalence, as
// product_reserve does).
NUMPIPE_HD_INLINE double spouse_outer(const Policy& p, const RateView& rv, const MortalityView& insured, bool align,
                                      const double* t, const double* h, const int* year, std::int64_t npts,
                                      const double* middle, double* out) {
  // 0 after the term (the grid's years overwrite theirs), NaN past age 120.
  for (int y = 0; y < kYears; ++y) out[y] = y <= kMaxAge - p.x ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  // The insured's force and the rate at a stage point; aligned (the default), a
  // table's and a curve's one-sided values from the step's midpoint (its steps never
  // cross a whole age or a maturity).
  auto mu = [&](double tt, double tmid) {
    return align ? mortality_within(insured, p.x + tt, p.x + tmid) : mortality(insured, p.x + tt);
  };
  auto rate = [&](double tt, double tmid) { return align ? forward_rate_within(rv, tt, tmid) : forward_rate(rv, tt); };
  if (plain_spouse_pension(p)) {
    double V = 0;
    if (year[0] >= 0) out[year[0]] = V;
    for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
      double t0 = t[2 * j], tm = t[2 * j + 1], t1 = t[2 * j + 2], hj = h[j];
      double r0 = rate(t0, tm), rm = rate(tm, tm), r1 = rate(t1, tm);
      double m0 = mu(t0, tm), mm = mu(tm, tm), m1 = mu(t1, tm);
      double k1 = hj * outer_derivative(r0, m0, middle[2 * j], V);
      double k2 = hj * outer_derivative(rm, mm, middle[2 * j + 1], V + k1 / 2);
      double k3 = hj * outer_derivative(rm, mm, middle[2 * j + 1], V + k2 / 2);
      double k4 = hj * outer_derivative(r1, m1, middle[2 * j + 2], V + k3);
      V = V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
      if (year[2 * j + 2] >= 0) out[year[2 * j + 2]] = V;
    }
    return 0.0;
  }
  const double tp = premium_term_of(p), B = p.benefit;
  auto point = [&](double tt, double tmid, double M, double premium, bool benefits) {
    ThielePoint q;
    q.r = rate(tt, tmid);
    q.mu = mu(tt, tmid);
    q.S = benefits ? (B == 1.0 ? M : B * M) : 0.0;
    q.c = premium != 0.0 && (align ? tmid : tt) < tp ? premium : 0.0;
    return q;
  };
  auto chain = [&](double premium, bool benefits, bool write) {
    double V = 0;
    if (write && year[0] >= 0) out[year[0]] = V;
    for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
      double tm = t[2 * j + 1];
      V = thiele_step(V, h[j], point(t[2 * j], tm, middle[2 * j], premium, benefits),
                      point(tm, tm, middle[2 * j + 1], premium, benefits),
                      point(t[2 * j + 2], tm, middle[2 * j + 2], premium, benefits));
      if (write && year[2 * j + 2] >= 0) out[year[2 * j + 2]] = V;
    }
    return V;
  };
  double premium = p.premium;
  if (p.equivalence) premium = -chain(0.0, true, false) / chain(1.0, false, false);
  chain(premium, true, true);
  return premium;
}

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
  std::vector<std::int32_t> column_h3, column_grid, column_law;  // column_law: the spouse's law
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
  std::vector<double> premium;  // per policy: the level premium (given or solved), when any policy has one
  PhaseLog log;                 // phase timings, bytes and flops
  double inner_steps = 0, inner_steps_unshared = 0;
  std::size_t columns = 0, requests = 0;
  bool table = false;              // the CUDA table plan: columns counts table rows
  std::size_t middle_values = 0;   // Middle values computed (table plan; else requests)
  std::size_t products = 0;        // single-life policies (the others are spouse pensions)
  double product_steps = 0;        // RK4 steps of their chains (equivalence: three chains)
};

// Richardson's error estimate (docs/integrate.md, "Accuracy"): the problem at half
// the steps per year (each level's h -> ceil(h / 2)), and from the two results the
// error of the finer one, |V_h - V_half| / (q^p - 1) with q = h1 / ceil(h1 / 2) and
// p the scheme's order (4 aligned, 1 faithful), |V_h - V_half| where q = 1.
Problem halved_steps(const Problem& problem);
// Every level at `steps` a year.
Problem with_steps(const Problem& problem, int steps);
struct ErrorEstimate {
  double absolute = 0;  // the largest estimated error of any reserve
  double relative = 0;  // the largest estimated error relative to its policy's largest |reserve|
};
ErrorEstimate richardson_estimate(const Problem& problem, const Result& fine, const Result& half);
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
// progress(n): n more policies done; called from any thread (OpenMP workers).
using ProgressFn = std::function<void(std::uint64_t)>;
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

// The backend as a value: the CPU (OpenMP threads, 0: OpenMP's default) or CUDA on
// `devices`. solve (backend.cpp, the one place that chooses) runs the problem on it;
// progress: the CPU backend's policies as they finish (CUDA reports none).
struct Engine {
  bool cuda = false;
  std::vector<int> devices;
  int threads = 0;
};
Result solve(const Problem& problem, const Engine& engine, const ProgressFn& progress = {});

// ---- what a valuation needs out (valuation.cpp) ---------------------------------------
// Expected cash flows (products.hpp, product_cash_flows) of every policy with its
// premium as solved: [policies][kYears][2], benefits and premiums by year. A spouse
// pension's premiums are its insured's; its benefits (the spouse's pension, which
// depends on the spouse's life too) are not computed: NaN.
inline constexpr int kCashFlowKinds = 2;
// The policies as their cash flows are computed: each one's premium fixed at `premium`.
std::vector<ProductSpec> cash_flow_specs(const Problem& problem, const std::vector<double>& premium);
std::vector<double> cash_flows_cpu(const Problem& problem, const std::vector<ProductSpec>& specs, int threads);
std::vector<double> cash_flows_cuda(const Problem& problem, const std::vector<ProductSpec>& specs, int device);
std::vector<double> cash_flows(const Problem& problem, const std::vector<double>& premium, const Engine& engine);

// Each reserve's sensitivity to a parallel shift of the rate (the constant force of
// interest, or every zero rate of a curve), the premiums held at their values:
// dV/dr by a central difference of two solves at r + h and r - h on the same steps,
// and the effective duration -(1/V) dV/dr (NaN where the reserve is zero to rounding).
inline constexpr double kRateShift = 1e-5;
struct RateSensitivity {
  std::vector<double> derivative;  // [policies][kYears]: dV/dr (NaN past 120 - x)
  std::vector<double> duration;    // [policies][kYears]: -(1/V) dV/dr
};
Problem shifted_rate(const Problem& problem, const std::vector<double>& premium, double shift);
RateSensitivity rate_sensitivity(const Problem& problem, const Result& result, const Engine& engine);

}  // namespace numpipe::integrate
