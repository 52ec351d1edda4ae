// price: the interface of the LocVolCalib kernels (kernels/price/).
//   Params (model.hpp) -> validate -> make_setup (the grid and the strike-independent
//   tables, built once on the host) -> solve_cpu / solve_cuda -> one price per strike.
#pragma once
#include <cstdint>
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
inline constexpr std::int64_t kMaxGridPoints = std::int64_t(1) << 28;  // numX*numY
inline constexpr std::int64_t kMaxSide = std::int64_t(1) << 20;        // numX, numY, numT, OUTER

// The grid and the strike-independent tables of one problem (double precision).
struct Setup {
  Params p;
  std::int64_t ind_x = 0, ind_y = 0;
  std::vector<double> time;   // [numT]
  std::vector<double> x, y;   // [numX], [numY]
  std::vector<double> px;     // [numX]  exp(2*beta*log X[i])
  std::vector<double> py;     // [numY]  exp(2*Y[j])
  std::vector<double> pt;     // [numT]  exp(-nu^2*Time[g])
  std::vector<double> dxx;    // [numX][3]
  std::vector<double> dyy;    // [numY][3]
  std::vector<double> dt_inv; // [numT-1]  1/(Time[g+1]-Time[g])
};
Setup make_setup(const Params& p);  // validates first

// The y direction's implicit systems do not depend on the strike nor on the row i
// (VarY = nu^2 is constant): their explicit weights gy = 0.5*VarY*Dyy[j][k], and per
// time step g their Thomas factors (beta, inv) and upper diagonal c, in Real.
template <class Real>
struct YTables {
  std::vector<Real> gy;    // [numY][3]
  std::vector<Real> c;     // [numY]         -0.5*gy[j][2]
  std::vector<Real> beta;  // [numT-1][numY] beta_0 = 0
  std::vector<Real> inv;   // [numT-1][numY]
};
template <class Real>
YTables<Real> make_y_tables(const Setup& s) {
  const std::int64_t ny = s.p.num_y, steps = s.p.num_t - 1;
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

#ifdef NUMPIPE_HAVE_CUDA
struct CudaRun {
  double seconds = 0;          // device time of the solve (CUDA events), slowest device
  double upload_seconds = 0;   // tables to the device (host clock)
  std::int64_t group = 0;      // strikes resident at once per device
  std::uint64_t device_bytes = 0;  // device memory used per device
  std::string kernel;              // x kernel used: "sweep" or "chunk"
};
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
#endif

// ---- streams ---------------------------------------------------------------------------
// One problem is one record "problem", f8 [9] = (OUTER, numX, numY, numT, s0, t,
// alpha, nu, beta), attrs kind "price.input" and the same values by name.
inline constexpr const char* kInputKind = "price.input";
inline constexpr const char* kOutputKind = "price.output";
json params_json(const Params& p);
Record make_problem_record(const Params& p, json attrs);
// Reads a problem record (bad input naming what is wrong) and validates it.
Params params_from_record(const Record& r);

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
