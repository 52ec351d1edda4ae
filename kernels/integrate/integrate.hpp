// integrate: the interface of the reserve kernels: policies, the basis, the problem,
// the result, the backend as a value and solve; what a valuation needs out in
// valuation.hpp. The model is in model.hpp and products.hpp; plans, grids and the
// backends' parts in detail/.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/no_init_allocator.hpp"
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
  double y = -1;                  // joint-life and last-survivor annuities: the second life's age now (law: spouse)
  int rate_basis = -1;            // index of Problem::rate_bases, or -1: the problem's rate or curve
  double year = 0;                // the calendar year now (the valuation year: improving mortality tables)
};

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
  // Select mortality (select.hpp): a select period of select_years after the policy's
  // start, the force select_factor^(select_years - s) times the law's; or with a select
  // table (table and select_q not empty) q_[x]+k by age at selection (rows as ages),
  // select_years values a row, duration k = 0 .. select_years - 1.
  int select_years = 0;
  double select_factor = 1.0;
  std::vector<double> select_q;
  std::vector<double> select_force;  // made by validate from select_q: -ln(1 - q), rows as force
  bool select() const { return select_years > 0; }
  // Mortality improvement (select.hpp): a q_x table with yearly improvement factors AI_x,
  // one per row (empty: none), q_x(year) = q_x (1 - AI_x)^(year - improvement_base_year);
  // or rates AI(x, year) by age and calendar year: improvement_years (whole, consecutive)
  // and improvement_by_year (rows x years; validate then sets improvement to the last year's).
  std::vector<double> improvement;
  double improvement_base_year = 0;
  std::vector<double> improvement_years, improvement_by_year;
  std::vector<double> improve_q, improve_cum;  // made by validate (select.hpp's improve_cum)
  bool improving() const { return !improvement.empty() || !improvement_by_year.empty(); }
  bool improving_by_year() const { return !improvement_years.empty(); }
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

// A policy's own interest (a policies table's rate column, Policy::rate_basis): a
// constant rate, or a yield curve; the name says where it came from.
struct RateBasis {
  std::string name;
  double rate = kDefaultRate;
  Curve curve;
};

struct Problem {
  std::vector<Policy> policies;
  std::vector<RateBasis> rate_bases;  // the policies' own rates or curves (Policy::rate_basis)
  double rate = kDefaultRate;  // the constant rate when there is no curve
  Curve curve;
  bool align_breaks = false;   // step boundaries at every break of the integrands
  int frequency = 0;           // annuity and premium payments a year (0: continuous), products.hpp
  bool advance = true;         // discrete payments at each period's start (else its end)
  std::vector<MortalityLaw> laws = default_laws();
  SpouseBasis spouse;
};

// Limits of the accepted input, validate (the input's checks): detail/plan.hpp.

// Results (the reserve: common/no_init_allocator.hpp, no zero fill of a large result).
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

// progress(n): n more policies done; called from any thread (OpenMP workers).
using ProgressFn = std::function<void(std::uint64_t)>;

// The backend as a value: the CPU (OpenMP threads, 0: OpenMP's default) or CUDA on
// `devices`. solve (backend.cpp, the one place that chooses) runs the problem on it;
// progress: the CPU backend's policies as they finish (CUDA reports none).
struct Engine {
  bool cuda = false;
  std::vector<int> devices;
  int threads = 0;
};
Result solve(const Problem& problem, const Engine& engine, const ProgressFn& progress = {});


}  // namespace numpipe::integrate

// What a run reports beside the reserves: the error estimate, cash flows, durations.
#include "valuation.hpp"
// The internals: plans, grids, the backends' parts (detail/).
#include "detail/plan.hpp"
#include "detail/solve.hpp"
