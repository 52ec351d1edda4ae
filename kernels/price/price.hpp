// price: the interface of the LocVolCalib kernels (kernels/price/).
//   Params (model.hpp) -> validate -> make_setup (the grid and the strike-independent
//   tables, built once on the host) -> solve_cpu / solve_cuda -> one price per strike.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/stream.hpp"
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

// The grid coarser by 2 in each direction (numX, numY halved, the time steps halved):
// price_error is |price - its price on this grid| / 3, Richardson's estimate of the
// finer grid's error for a second-order scheme. numT keeps a step per maturity.
Params coarser_by_two(const Params& p, std::size_t maturities);
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

// One axis of the grid: its points and the node of the start (s0, or log alpha).
// FinPar's grid: the spec's uniform points. The sinh grid (GridKind::sinh): x from 0
// (a node) with s0 on node ind, concentrated about s0; y concentrated about log alpha
// (node numY/2). t_min: the shortest maturity, which sets the concentration.
struct Axis {
  std::vector<double> points;
  std::int64_t ind = 0;
};
Axis x_axis(const Params& p, double t_min);
Axis y_axis(const Params& p, double t_min);

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

// The y direction's implicit systems do not depend on the strike nor on the row i
// (VarY = nu^2 is constant): their explicit weights gy = 0.5*VarY*Dyy[j][k], and per
// time step g their Thomas factors (beta, inv) and upper diagonal c, in Real.
// factors = false: gy and c only (the CUDA mixed-term pass forms the factors on the
// device by the same operations).
template <class Real>
struct YTables {
  std::vector<Real> gy;    // [numY][3]
  std::vector<Real> c;     // [numY]         -0.5*gy[j][2]
  std::vector<Real> beta;  // [numT-1][numY] beta_0 = 0
  std::vector<Real> inv;   // [numT-1][numY]
};
template <class Real>
YTables<Real> make_y_tables(const Setup& s, bool factors = true) {
  const std::int64_t ny = s.p.num_y, steps = factors ? s.p.num_t - 1 : 0;
  YTables<Real> t;
  t.gy.resize(3 * ny);
  t.c.resize(ny);
  t.beta.resize(steps * ny);
  t.inv.resize(steps * ny);
  const Real var_y = Real(s.p.nu) * Real(s.p.nu);
  for (std::int64_t j = 0; j < ny; ++j) {
    for (int k = 0; k < 3; ++k) t.gy[3 * j + k] = Real(0.5) * var_y * Real(s.dyy[3 * j + k]);
    t.c[j] = -(Real(0.5) * t.gy[3 * j + 2]);
  }
  for (std::int64_t g = 0; g < steps; ++g) {
    const Real dt_inv = Real(s.dt_inv[g]);
    Real* beta = t.beta.data() + g * ny;
    Real* inv = t.inv.data() + g * ny;
    for (std::int64_t j = 0; j < ny; ++j) {
      const Real a = -(Real(0.5) * t.gy[3 * j + 0]);
      const Real b = dt_inv - Real(0.5) * t.gy[3 * j + 1];
      beta[j] = j == 0 ? Real(0) : a * inv[j - 1];
      inv[j] = thomas_inv(b, beta[j], j == 0 ? Real(0) : t.c[j - 1]);
    }
  }
  return t;
}

// The mixed term's tables (rho != 0), in Real: sx [numX], sq [numT-1][numY] =
// sqrt(py[j]*pt[g]) (computed in double), dx1, dy1; the step g view is step(g).
template <class Real>
struct MixedTables {
  Real rho_nu = 0;
  std::int64_t nx = 0, ny = 0;
  std::vector<Real> sx, sq, dx1, dy1;
  MixedStep<Real> step(std::int64_t g) const {
    return {sx.data(), sq.data() + g * ny, dx1.data(), dy1.data(), rho_nu, nx, ny};
  }
};
template <class Real>
MixedTables<Real> make_mixed_tables(const Setup& s) {
  MixedTables<Real> m;
  m.rho_nu = Real(s.p.rho * s.p.nu);
  m.nx = s.p.num_x;
  m.ny = s.p.num_y;
  m.sx.assign(s.sx.begin(), s.sx.end());
  m.dx1.assign(s.dx1.begin(), s.dx1.end());
  m.dy1.assign(s.dy1.begin(), s.dy1.end());
  const std::int64_t steps = s.p.num_t - 1;
  m.sq.resize(steps * m.ny);
  for (std::int64_t g = 0; g < steps; ++g)
    for (std::int64_t j = 0; j < m.ny; ++j) m.sq[g * m.ny + j] = Real(std::sqrt(s.py[j] * s.pt[g]));
  return m;
}

// CPU backend (OpenMP; the reference): prices of strikes [0, OUTER). Same bits for
// any thread count. OpenMP threads as set by the caller (omp_set_num_threads).
// The x pivots, which do not depend on the strike, are tabulated once for all steps
// when the table ((numT-1)*numX*numY values) takes at most table_limit bytes
// (0: kCpuTableLimit), else recomputed by every strike; the bits are the same.
inline constexpr std::uint64_t kCpuTableLimit = std::uint64_t(1) << 30;
std::vector<double> solve_cpu(const Setup& s, Precision precision, std::uint64_t table_limit = 0);

// Strikes [first, last) of a problem (0 <= first <= last <= OUTER), e.g. one MPI rank's
// share: each strike is computed by the same operations whatever the range, so the
// prices are bit-identical to the same entries of a whole-problem solve.
struct StrikeRange {
  std::int64_t first = 0, last = 0;
};
// Internal error unless 0 <= first <= last <= OUTER.
void check_range(const Setup& s, StrikeRange range);
std::vector<double> solve_cpu(const Setup& s, Precision precision, StrikeRange range,
                              std::uint64_t table_limit = 0);

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

// W[i] = sum_j w[i][j] (summed in double, j ascending), in Real arithmetic.
std::vector<double> adjoint_weights_cpu(const Setup& s, Precision precision);
// price_o = sum_i W[i] * Real(max(X[i] - strike_o, 0)) in double, i ascending, for
// strikes in range: one function for both backends, so a range's prices are the
// same bits as the whole problem's.
std::vector<double> prices_from_weights(const Setup& s, Precision precision, const std::vector<double>& weights,
                                        StrikeRange range);
std::vector<double> solve_cpu_adjoint(const Setup& s, Precision precision, StrikeRange range);

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

// What a solve measured: on CUDA its device time and more; on the CPU (solve_strikes)
// the wall time of the solve in `seconds`.
struct CudaRun {
  double seconds = 0;          // device time of the solve (CUDA events), slowest device
  double upload_seconds = 0;   // tables to the device (host clock)
  std::int64_t group = 0;      // strikes resident at once per device
  std::uint64_t device_bytes = 0;  // device memory used per device
  std::string kernel;              // x kernel used: "sweep" or "chunk"
};
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

// ---- streams ---------------------------------------------------------------------------
// One problem is one record "problem", f8 [9] = (OUTER, numX, numY, numT, s0, t,
// alpha, nu, beta), attrs kind "price.input" and the same values by name.
inline constexpr const char* kInputKind = "price.input";
inline constexpr const char* kOutputKind = "price.output";
json params_json(const Params& p);
Record make_problem_record(const Params& p, json attrs);
// Reads a problem record (bad input naming what is wrong) and validates it.
Params params_from_record(const Record& r);

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

// Work counted from the algorithm (for profile records and the benchmark):
// fp64/fp32 operations and the bytes a two-pass-per-step design moves.
double flops_of(const Params& p);
// The adjoint method's operations (same counting): per grid point and step 53 (the
// transposed y solve 5, the x pivots 10 and transposed x solve 16, E^T and G^T 22),
// plus 2 per strike and x point for the prices.
double adjoint_flops_of(const Params& p);
// Device-memory bytes of the CUDA time loop, from its access model per strike, grid
// point and step: kernel "chunk" 5.25 accesses (R once plus 2 halo rows in 8, the
// right sides written; y phase: right sides read, R written), "sweep" 7.
double cuda_bytes_of(const Params& p, Precision precision, const std::string& kernel);

}  // namespace numpipe::price
