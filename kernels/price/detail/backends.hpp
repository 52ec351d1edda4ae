// price, internal: the CPU and CUDA backends behind the Engine (engine.cpp: solve_strikes,
// evaluate), and the arithmetic they share (the prices from the adjoint weights, the
// no-arbitrage bounds).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/price/price.hpp"

namespace numpipe::price {

// CPU backend (OpenMP; the reference): prices of strikes [0, OUTER). Same bits for
// any thread count. OpenMP threads as set by the caller (omp_set_num_threads).
// The x pivots, which do not depend on the strike, are tabulated once for all steps
// when the table ((numT-1)*numX*numY values) takes at most table_limit bytes
// (0: kCpuTableLimit), else recomputed by every strike; the bits are the same.
inline constexpr std::uint64_t kCpuTableLimit = std::uint64_t(1) << 30;
std::vector<double> solve_cpu(const Setup& s, Precision precision, std::uint64_t table_limit = 0);

// Internal error unless 0 <= first <= last <= OUTER.
void check_range(const Setup& s, StrikeRange range);
std::vector<double> solve_cpu(const Setup& s, Precision precision, StrikeRange range,
                              std::uint64_t table_limit = 0);


// W[i] = sum_j w[i][j] (summed in double, j ascending), in Real arithmetic.
std::vector<double> adjoint_weights_cpu(const Setup& s, Precision precision);
// price_o = sum_i W[i] * Real(max(X[i] - strike_o, 0)) in double, i ascending, for
// strikes in range: one function for both backends, so a range's prices are the
// same bits as the whole problem's.
std::vector<double> prices_from_weights(const Setup& s, Precision precision, const std::vector<double>& weights,
                                        StrikeRange range);
std::vector<double> solve_cpu_adjoint(const Setup& s, Precision precision, StrikeRange range);


// The price, and with greeks: delta = dR/dX and gamma = d2R/dX2 at (indX, indY) by the
// grid's central weights (spec "Operators"), vega = dR/dalpha = (dR/dY)/alpha (Y starts
// at log alpha; the model depends on alpha only there). Bad input when the spot's
// point has no neighbour (indX or indY on the grid's edge).
std::vector<Functional> functionals_of(const Setup& s, bool greeks);

// The adjoint pass for several functionals and every maturity: W[f][m][i] (flattened,
// f-major) = sum_j of the weights of functional f after levels[m] transposed steps,
// so that f(payoff placed at maturity m) = sum_i W[f][m][i] * payoff(X[i]). With rho
// != 0 the transposed modified Craig-Sneyd step (docs/price.md). For one functional
// (the price) and one maturity it is adjoint_weights_cpu(s, precision), bit for bit.
// progress: called with the number of steps done (may be null).
std::vector<double> adjoint_weights_cpu(const Setup& s, Precision precision, const std::vector<Functional>& fs,
                                        const std::function<void(std::int64_t)>& progress = {});
// value = sum_i W[i] * Real(payoff(X[i])) in double, i ascending (prices_from_weights's
// arithmetic; a FinPar strike gives the same bits).
double contract_value(const Setup& s, Precision precision, const double* weights, double strike, bool put,
                      bool smooth = false);

// The no-arbitrage bounds of European prices under zero rates, forward s0: a call in
// [max(s0 - K, 0), s0], a put in [max(K - s0, 0), K]. Counts the prices outside them by
// more than `slack`; largest: the largest excess; first: the first such contract.
struct BoundsReport {
  std::size_t violations = 0;
  double largest = 0;
  std::string first;
};
BoundsReport check_bounds(const Setup& s, const std::vector<Contract>& contracts, const double* prices, double slack);

// The forward method for contracts: each contract's payoff rolled back from its
// maturity's level, then every functional read from the time-0 grid: out[f][c].
// Any rho (with rho != 0 a plain implementation of the modified Craig-Sneyd step:
// the reference the adjoint is tested against). progress: contracts done.
std::vector<double> solve_cpu_contracts(const Setup& s, Precision precision, const std::vector<Contract>& contracts,
                                        const std::vector<Functional>& fs,
                                        const std::function<void(std::int64_t)>& progress = {});

// The CUDA backend (cuda.cu, in CUDA builds only): called through the dispatch
// (engine.cpp: solve_strikes, evaluate), which says when the build has none.
// CUDA backend: strikes split into contiguous ranges over `devices`; every strike's
// arithmetic is the same whatever the split, so the result does not depend on it.
// group > 0 overrides the number of strikes kept resident at once (tuning; 0: auto).
// kernel: the x phase's kernel, "sweep" (a thread per column), "chunk" (a thread per
// column and chunk of 8 rows; numX <= 256) or "auto".
std::vector<double> solve_cuda(const Setup& s, Precision precision, const std::vector<int>& devices,
                               std::int64_t group = 0, CudaRun* run = nullptr, const std::string& kernel = "auto");
// Strikes [first, last) only (see StrikeRange), split over `devices` as above.
std::vector<double> solve_cuda(const Setup& s, Precision precision, StrikeRange range,
                               const std::vector<int>& devices, std::int64_t group = 0, CudaRun* run = nullptr,
                               const std::string& kernel = "auto");
// The adjoint weights W (see above) on device `device`; run->seconds: device time
// of the whole pass (CUDA events), run->kernel "adjoint".
std::vector<double> adjoint_weights_cuda(const Setup& s, Precision precision, int device, CudaRun* run = nullptr);
// The adjoint pass of several lanes at once, each lane a setup (all with the same
// numX, numY and time grid; any model parameters) and a functional: W[lane][m][i].
// The lanes run in the same kernels (a grid dimension), so a batch of a few costs
// about what one does: the Greeks' functionals, calibration's finite differences.
struct Lane {
  const Setup* setup = nullptr;
  const Functional* functional = nullptr;
};
std::vector<double> adjoint_weights_cuda(const std::vector<Lane>& lanes, Precision precision, int device,
                                         CudaRun* run = nullptr);
// Forward method for contracts (rho = 0 only): out[f][c] like solve_cpu_contracts.
std::vector<double> solve_cuda_contracts(const Setup& s, Precision precision, const std::vector<Contract>& contracts,
                                         const std::vector<Functional>& fs, int device, CudaRun* run = nullptr);

}  // namespace numpipe::price
