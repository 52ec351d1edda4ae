// price: the stream side of the workload beside the kernels: which records are
// price's, the memory a problem needs, the work and traffic models of a solve, and
// the output records of FinPar's strikes, of the user's contracts and of a calibration.
#pragma once
#include <string>
#include <vector>

#include "common/profile.hpp"
#include "common/progress.hpp"
#include "common/run.hpp"
#include "common/stream.hpp"
#include "calibrate.hpp"
#include "price.hpp"

namespace numpipe::price {

// The input filter: every record must be a problem or belong to one (strikes,
// maturities, quotes); another is refused from its header (bad input), before its
// payload is read.
bool keep_input_record(const RecordHeader& h);

// The working set of a problem (docs/price.md "Memory", measured), checked against
// the host's memory and, for the adjoint method on CUDA, the device's: exit 3.
void require_memory(const Params& p, const Engine& engine);

// The work of a solve for the profile: bytes by the traffic models of docs/profile.md
// and flops counted from the algorithm.
struct Work {
  double bytes = 0, flops = 0;
};
// FinPar's strikes: forward, the two-pass-per-step model (7 accesses per strike, grid
// point and step; on CUDA by the kernel that ran); adjoint, one grid's backward pass by
// the same model plus a weight and a payoff per strike and x point.
Work work_of_strikes(const Params& p, Precision precision, Method method, const std::string& kernel = "sweep");
// The user's contracts: the adjoint one grid's pass per functional (two solves of each
// kind a step with the mixed term) plus a weight and a payoff per contract, functional
// and x point; forward, every contract's grid.
Work work_of_contracts(const Params& p, std::size_t contracts, std::size_t functionals, Precision precision,
                       Method method);

// FinPar's strikes [range) of one problem solved (solve_strikes) and their phases
// logged: on the CPU the solve, the progress line counting strikes as they finish;
// on CUDA the upload, the device's solve and the rest of the wall time. attrs: what
// the solve adds to the record (devices, kernel; under MPI only what all ranks share).
// Internal error (exit 4) on a price that is not finite.
struct StrikeSolve {
  std::vector<double> prices;
  json attrs = json::object();
};
StrikeSolve price_strikes(const Setup& setup, const Engine& engine, StrikeRange range, bool distributed,
                          Progress& progress, PhaseLog& log);

// The record "price" of FinPar's strikes of one problem, attrs `extra` added (the
// devices, the kernel: what the solve reports).
Record strike_prices_record(const Problem& pr, const Setup& setup, const std::vector<double>& prices,
                            const Engine& engine, const json& extra, const Stamp& stamp);

// The user's contracts of one problem priced (evaluate), with the Greeks, implied
// volatilities and the error estimate of the sinh grid; warnings on stderr where
// prices break the no-arbitrage bounds or the tolerance. Phases into `log`; a
// progress line unless quiet. Returns the output records.
std::vector<Record> price_contracts(const Problem& pr, const Engine& engine, bool greeks, bool implied,
                                   const Stamp& stamp, bool quiet, PhaseLog& log);

// A calibration of one problem to its quotes: the records "calibrated", the
// coordinates, the model's prices, implied volatilities and residuals at the fit and
// the iteration log.
std::vector<Record> calibrate_problem(const Problem& pr, const Engine& engine, const CalibrationOptions& options,
                                      const Stamp& stamp, bool quiet, PhaseLog& log);

}  // namespace numpipe::price
