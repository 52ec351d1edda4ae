// price: the interface of the LocVolCalib kernels (kernels/price/).
//   Params (model.hpp) -> validate -> make_setup (the grid and the strike-independent
//   tables, built once on the host) -> solve_strikes / evaluate on an Engine (the backend
//   as a value) -> one price per strike or contract. The backends and their tables:
//   detail/backends.hpp, detail/grid.hpp; the problem records and the problems they make
//   (read, written, checked): io.hpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model.hpp"

namespace numpipe::price {

enum class Precision { fp64, fp32 };
Precision parse_precision(const std::string& text);  // "fp64" | "fp32", else bad input
const char* precision_name(Precision p);

// Bad input (exit 2) naming the field and its value: numX, numY < 3, numT < 2,
// OUTER < 1, non-finite or non-positive s0, t, alpha, nu, non-finite beta, sizes
// beyond the limits below, or a grid on which s0 falls outside the x range.
void validate(const Params& p);

// The user's contracts at a stated accuracy: sizes of the sinh grid (numX, numY, numT)
// for an absolute price error of about `tolerance` per unit of s0, from the scheme's
// second order in each direction with constants measured against converged prices
// (docs/price.md, "Choosing a tolerance"). Only the sizes whose flag is set change.
inline constexpr double kDefaultTolerance = 5e-6;
void size_for_tolerance(Params& p, double tolerance, bool set_x, bool set_y, bool set_t);

inline constexpr std::int64_t kMaxGridPoints = std::int64_t(1) << 28;  // numX*numY
inline constexpr std::int64_t kMaxSide = std::int64_t(1) << 20;        // numX, numY, numT, OUTER

// The time grid. One maturity (FinPar): Time[i] = t*i/(numT-1). Several maturities
// T_1 < ... < T_M = t: every T_m is a time level; the numT-1 steps are dealt to the
// segments [T_{m-1}, T_m] (T_0 = 0) in proportion to their lengths, at least one
// each (one step each first, the rest by the largest-remainder rule, ties to the
// earlier segment), uniform within a segment. levels[m]: the level of T_m.
// Bad input when a maturity is not finite and > 0, the list is not strictly
// ascending, its last value is not t, or numT - 1 < M.
std::vector<double> time_grid(const Params& p, const std::vector<double>& maturities, std::vector<std::int64_t>* levels);

// The grid and the strike-independent tables of one problem (double precision).
struct Setup {
  Params p;
  std::int64_t ind_x = 0, ind_y = 0;
  std::vector<double> maturities;       // [M] ascending, the last = t
  std::vector<std::int64_t> levels;     // [M] time level of each maturity; the last = numT-1
  std::vector<double> time;   // [numT]
  std::vector<double> x, y;   // [numX], [numY]
  std::vector<double> px;     // [numX]  exp(2*beta*log X[i])
  std::vector<double> py;     // [numY]  exp(2*Y[j])
  std::vector<double> pt;     // [numT]  exp(-nu^2*Time[g])
  std::vector<double> dxx;    // [numX][3]
  std::vector<double> dyy;    // [numY][3]
  std::vector<double> dt_inv; // [numT-1]  1/(Time[g+1]-Time[g])
  // the mixed term (used when rho != 0; model.hpp "correlated SABR")
  std::vector<double> sx;     // [numX]    sqrt(px[i]) = X^beta
  std::vector<double> dx1;    // [numX][3] central first-derivative weights, zero rows at the ends
  std::vector<double> half_cell;  // [numX] half the smaller gap to a neighbour (0 at the ends)
  std::vector<double> dy1;    // [numY][3]
};
// Validates first. maturities: empty means {t}.
Setup make_setup(const Params& p, const std::vector<double>& maturities = {});

// Strikes [first, last) of a problem (0 <= first <= last <= OUTER), e.g. one MPI rank's
// share: each strike is computed by the same operations whatever the range, so the
// prices are bit-identical to the same entries of a whole-problem solve.
struct StrikeRange {
  std::int64_t first = 0, last = 0;
};

// ---- the adjoint method -------------------------------------------------------------
// forward: FinPar's algorithm, each strike's grid rolled back through every step
//          (the reference; work OUTER x numX x numY x (numT-1)).
// adjoint: the transposed steps applied once to the unit vector at (indX, indY)
//          (model.hpp) give weights w with price_o = sum_ij w[i][j] payoff_o[i][j];
//          the payoff does not depend on j, so W[i] = sum_j w[i][j] suffices. The same
//          prices up to rounding (tested against forward at 1e-12 in fp64), in the
//          work of one strike plus OUTER x numX multiply-adds.
enum class Method { forward, adjoint };
Method parse_method(const std::string& text);  // "forward" | "adjoint", else bad input
const char* method_name(Method m);

// ---- contracts, functionals, several maturities ---------------------------------------
// A contract: a call or put of strike K expiring at maturity index m (Setup::maturities).
// smooth: the payoff cell-averaged over each node's symmetric cell (Setup::half_cell;
// model.hpp payoff_cell), as the user's contracts are priced; false: the spec's point
// values, as FinPar's strikes are.
struct Contract {
  std::int64_t maturity = 0;
  double strike = 0;
  bool put = false;
  bool smooth = false;
};
// A linear functional of the time-0 grid, sum_k coef[k] * R[i[k]][j[k]]: the price is
// R[indX][indY]; the Greeks are difference quotients of the neighbours (below).
struct Functional {
  std::string name;
  std::vector<std::int64_t> i, j;
  std::vector<double> coef;
};

// What a solve measured: on CUDA its device time and more; on the CPU (solve_strikes)
// the wall time of the solve in `seconds`.
struct CudaRun {
  double seconds = 0;          // device time of the solve (CUDA events), slowest device
  double upload_seconds = 0;   // tables to the device (host clock)
  std::int64_t group = 0;      // strikes resident at once per device
  std::uint64_t device_bytes = 0;  // device memory used per device
  std::string kernel;              // x kernel used: "sweep" or "chunk"
};

// ---- evaluation on either backend ---------------------------------------------------
// Every functional of every contract, values[f][c] (f-major), by the adjoint (one pass
// per functional, every maturity at once; on CUDA the functionals run as lanes of one
// pass) or the forward method (CUDA: rho = 0 only). timing: device seconds of the
// solve and the upload on CUDA, else 0.
struct Engine {
  bool cuda = false;
  int device = 0;
  Precision precision = Precision::fp64;
  Method method = Method::adjoint;
  // FinPar's strikes by the forward method on CUDA (solve_strikes): the devices the
  // strikes are split over, strikes resident at once (0: auto), the x kernel.
  std::vector<int> devices;
  std::int64_t gpu_group = 0;
  std::string gpu_kernel = "auto";
};
// FinPar's strikes [first, last) by the engine's method on its backend (the forward
// method over engine.devices on CUDA, the adjoint on engine.device). run (may be
// null): what the solve measured (CudaRun; on the CPU the wall time in seconds).
std::vector<double> solve_strikes(const Setup& s, const Engine& engine, StrikeRange range, CudaRun* run = nullptr);
struct EvalTiming {
  double solve_seconds = 0, upload_seconds = 0;
};
std::vector<double> evaluate(const Setup& s, const std::vector<Contract>& contracts, const std::vector<Functional>& fs,
                             const Engine& engine, EvalTiming* timing = nullptr,
                             const std::function<void(std::int64_t, std::int64_t)>& progress = {});
// The contracts' prices at several points of the model (setups of the same sizes and
// maturities), values[k][c]: on CUDA by the adjoint method one pass with a lane per point,
// else one evaluate each. device_seconds: the solves' device time (0 on the CPU); done(n)
// after n points.
std::vector<std::vector<double>> evaluate_points(const std::vector<Setup>& setups, const std::vector<Contract>& contracts,
                                                const Engine& engine, double* device_seconds,
                                                const std::function<void(int)>& done = {});

// The work of a solve (bytes and flops, for profiles): io.hpp's work_of_strikes and
// work_of_contracts, from the counts of detail/work.hpp.

}  // namespace numpipe::price
