// price: the stream side of the workload beside the kernels: the problem records and
// the problems they make (read, written, checked), which records are price's, the
// memory a problem needs, the work and traffic models of a solve, and the output
// records of FinPar's strikes, of the user's contracts and of a calibration.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "common/profile.hpp"
#include "common/progress.hpp"
#include "common/run.hpp"
#include "common/stream.hpp"
#include "price.hpp"

namespace numpipe::price {

struct CalibrationOptions;  // calibrate.hpp

// ---- streams ---------------------------------------------------------------------------
// One problem is one record "problem", f8 [9] = (OUTER, numX, numY, numT, s0, t,
// alpha, nu, beta), attrs kind "price.input" and the same values by name.
inline constexpr const char* kInputKind = "price.input";
inline constexpr const char* kOutputKind = "price.output";
json params_json(const Params& p);
Record make_problem_record(const Params& p, json attrs);
// Reads a problem record (bad input naming what is wrong) and validates it.
Params params_from_record(const Record& r);

// ---- the user's contracts in a stream ---------------------------------------------------
// A problem group: the record `problem` (above; attrs `rho`, and `option` "call" or
// "put" for its strikes), then optionally
//   `strike`   f8 [S]    (kind price.strikes; S = OUTER): the strikes, else 0.001*o;
//   `maturity` f8 [M]    (kind price.maturities): ascending, the last = t, else {t};
//   `quotes`   f8 [Q, 5] (kind price.quotes; Q = OUTER): a quote table, columns
//              strike, maturity (one of `maturity`'s), type (+1 call, -1 put),
//              quote (NaN where absent), weight; attrs quote_kind "price",
//              "implied_vol" or "none".
// Without `quotes` the contracts are every strike at every maturity ([M][S]); with
// it, one per quote row.
inline constexpr const char* kStrikesKind = "price.strikes";
inline constexpr const char* kMaturitiesKind = "price.maturities";
inline constexpr const char* kQuotesKind = "price.quotes";
enum class QuoteKind { none, price, implied_vol };
const char* quote_kind_name(QuoteKind k);
struct Quote {
  double strike = 0, maturity = 0;
  bool put = false;
  double quote = 0, weight = 1;
};
struct Problem {
  Params p;
  std::vector<double> maturities;  // empty: {t}
  std::vector<double> strikes;     // the user's strikes (user_strikes)
  bool user_strikes = false;
  bool put = false;                // the strikes' option type
  std::vector<Quote> quotes;       // a quote table (list mode) when not empty
  QuoteKind quote_kind = QuoteKind::none;
  double tolerance = 0;            // the stated price accuracy per unit of s0 (attrs tolerance; 0: none stated)
  const Record* source = nullptr;  // the problem record

  bool list() const { return !quotes.empty(); }
  // FinPar's problem: its strikes, calls, one maturity, rho = 0 (the original path).
  bool finpar() const { return !user_strikes && !list() && maturities.size() <= 1 && !put && p.rho == 0; }
  double strike(std::int64_t k) const { return user_strikes ? strikes[k] : strike_of(k); }
  // The contracts: grid mode [M][S] (maturity-major), list mode one per quote.
  std::vector<Contract> contracts() const;
};
// Groups the records into problems (bad input names the record and what is wrong);
// every problem is validated, its quotes checked (check_quotes).
std::vector<Problem> read_problems(const std::vector<Record>& records);
// The records of one problem, `problem` first, for gen-input.
std::vector<Record> problem_records(const Problem& pr, json attrs);
// Checks a problem's contracts against its grid and, with quotes, the quotes against
// the no-arbitrage bounds and each other (bad input, exit 2): strikes finite, > 0 and
// inside the x grid (below X[numX-1]); quote maturities among the problem's; prices
// >= 0, inside [intrinsic, upper), non-increasing (calls) / non-decreasing (puts) in
// the strike and convex in it at each maturity, non-decreasing in the maturity at
// each strike; implied vols finite and > 0; weights finite and >= 0. where(k) names
// row k in messages ("quotes.txt:7: ", "quotes row 7: "). quotes = false: the strikes
// and maturities only.
void check_contracts(const Problem& pr, const std::function<std::string(std::size_t)>& where, bool quotes = true);


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
