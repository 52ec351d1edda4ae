// integrate: the stream side of the workload beside the kernels: the input's groups
// of records read into Problems (bad input names the record), the memory they need,
// the output records and attrs, and --repeat's report of the phases and rates.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "common/run.hpp"
#include "common/stream.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

// One group of the input: a "policies" record starts it, the others belong to the last.
struct Group {
  const Record* policies = nullptr;
  const Record* steps = nullptr;
  const Record* curve = nullptr;
  const Record* products = nullptr;
  const Record* lives = nullptr;
  const Record* marriage = nullptr;
  const Record* spouse_age = nullptr;
  const Record* second_life = nullptr;   // joint-life and last-survivor annuities: the second life's age
  const Record* policy_rate = nullptr;   // each policy's interest basis (an index of rate_basis, -1: the group's)
  const Record* valuation_year = nullptr;  // each policy's calendar year now (improving mortality tables)
  std::vector<const Record*> mortality;  // one per law, in order
  std::vector<const Record*> rate_basis; // the policies' own rates or curves, in order
  std::vector<const Record*> carried;    // the group's records, in order (written to the output unchanged)
};
// The input filter: the groups' records only (other tools' records, the reserves of
// an earlier run, pass by unread); the host memory checked from each 'policies'
// header (docs/integrate.md "Memory": per policy its records and its reserve).
RecordFilter input_filter();
// Groups the records (bad input: a record before any 'policies', two of one name in
// a group, no 'policies' at all).
std::vector<Group> group_records(const std::vector<Record>& records);
// A group's problem, validated (validate).
Problem make_problem(const Group& group, bool align);

// The payments of every policy (--frequency, --timing; 0: continuous): bad input
// where they do not apply (a spouse pension; --timing without annuity or premium).
// option: the option named in those messages ("--timing" or "--frequency").
void set_payments(std::vector<Problem>& problems, int frequency, bool advance, bool timing_given);
// The faithful scheme takes the steps as asked: a warning on stderr where a step is
// beyond RK4's stability limit (faithful_stability_warning; the first only).
void warn_if_unstable(const std::vector<Problem>& problems);
// The plan's memory grows with each policy's outer steps: checked before the solve (exit 3).
void require_plan_memory(const std::vector<Problem>& problems);

// --tolerance: every level at 2, 4, 8, ... steps a year until Richardson's estimate
// holds (bad input when 1000 steps a year do not reach it). Returns the problem at
// those steps; `half`: its result at half the steps (for the error estimate).
Problem steps_for_tolerance(const Problem& problem, double tolerance, const Engine& engine, Result& half);

// The attrs of one group's output records: the scheme, the backend, the rate, the
// error estimate, the payments, the steps --tolerance chose (pb: the problem as
// solved), the plan (one process) or the ranks.
json reserve_attrs(const Group& group, const Problem& whole, const Problem& pb, const Result& result,
                   const std::optional<ErrorEstimate>& error, const std::optional<double>& tolerance,
                   const std::string& timing, Backend backend, int ranks);
// The profile's totals over the groups: add(result) after each group, then params().
struct Totals {
  std::size_t policies = 0, groups = 0;
  double inner_steps = 0, inner_steps_unshared = 0;
  bool table = false;
  void add(const Result& result, std::size_t group_policies);
  json params(bool align, std::size_t devices, int ranks) const;
};

// The output records of one group: its input records as they were, then reserve,
// reserve0 and (with products) premium, attrs from `attrs` (stamped).
// With --cash-flows (cash_flow, [policy, year, 2]: benefit, premium) and --duration
// (duration and reserve_rate_derivative, [policy, year]) their records after those.
struct Valuation {
  std::vector<double> cash_flow;  // empty: not asked for
  std::optional<RateSensitivity> sensitivity;
};
void write_group(StreamWriter& writer, const Group& group, const Problem& whole, const Result& result,
                 const json& stamped_attrs, const Valuation& valuation = {});
// Under MPI: every rank's reserves, premiums and step counts on rank 0, in rank order.
void gather_result(const BatchRun& run, Result& result);
// Internal error (exit 4) on a reserve that is infinite, or NaN at t = 0.
void check_reserves(const Result& result, std::size_t policies);

// --repeat: the run above (`first`) was the warm-up; `solve` N more times, the
// median per phase and of the total on stderr, with the rates.
void report_repeats(const Problem& problem, const Result& first, int repeat, const std::function<Result()>& solve);

}  // namespace numpipe::integrate
