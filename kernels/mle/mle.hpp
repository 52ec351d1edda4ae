// mle-fit's interface: grid maximum-likelihood fits of the AEPD (model.hpp)
// over rolling windows of one or many series, on the CPU (OpenMP) or on CUDA
// devices. Both backends fill the same WindowFits; finish() turns them into
// the reported estimates (theta, p, s_l, s_r, loglik, skew, quantiles).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "distribution.hpp"
#include "inference.hpp"

namespace numpipe::mle {

// The shape grid: "START:STOP:COUNT" (evenly spaced, both ends included) or a
// comma-separated list. Bad-input error (exit 2) when empty, non-finite, <= 0.
struct Grid {
  std::vector<double> alpha;
  bool uniform = false;  // evenly spaced: alpha[i] = alpha[0] + i*h, h > 0
  double h = 0;
};
Grid parse_grid(const std::string& text);

struct Params {
  std::int64_t window = 500;   // n: points per window (>= 3)
  std::int64_t step = 1;       // K: windows start every K points
  Grid grid;
  bool exact = false;          // recompute every window from scratch (the seed's method)
  std::int64_t refresh = 1000; // R: rolling sums recomputed from scratch every R windows
  int shapes = 1;              // 1: one shape p; 2: p1 left of theta, p2 right (inference.hpp)
};

// The series: [series][length], C order.
struct Series {
  const double* x = nullptr;
  std::int64_t series = 0, length = 0;
};

std::int64_t window_count(const Series& s, const Params& p);  // (length - window)/step + 1
// Validates params against the data: window >= 3, window <= length, step >= 1,
// refresh >= 1, finite data; fail_input with the offending value otherwise.
void validate(const Series& s, const Params& p);

// The grid result of every window, [series][windows]: the chosen shape index,
// the chosen candidate (time index within its series), its sums X-, X+ and S,
// and the profile log-likelihood.
// With two shapes: shape is p1's index, shape2 p2's, xm = X-(theta, p1),
// xp = X+(theta, p2), S is not used (NaN), loglik the two-shape profile.
struct WindowFits {
  std::vector<std::int32_t> shape, shape2;
  std::vector<std::int64_t> index;
  std::vector<double> xm, xp, S, loglik;
  void resize(std::size_t count, bool two_shapes = false);
};

// Work counts for profiles and benchmarks: power terms and windows.
struct Work {
  double terms = 0;     // pair-shape power terms evaluated
  double pairs = 0;     // pairs (one log each, per shape group)
};
Work work_estimate(const Series& s, const Params& p);

void solve_cpu(const Series& s, const Params& p, WindowFits& out);

// A backend's work as tasks: one series and one chunk of windows each, task =
// series_index * chunks + chunk, chunk c holding windows [c*chunk, min(W, (c+1)*chunk)).
// A task's fits do not depend on which other tasks run (each starts from a full
// recompute), so a contiguous range of tasks (e.g. one MPI rank's) gives the
// same bits as those windows of a whole solve; and its windows are contiguous
// in [series][windows] order.
struct TaskPlan {
  std::int64_t series = 0, windows = 0;  // series, W per series
  std::int64_t chunk = 1, chunks = 1;   // windows per task, tasks per series
  std::int64_t tasks() const { return series * chunks; }
  // [series][windows] index of task t's first window; t = tasks() gives the end.
  std::int64_t first_window(std::int64_t t) const {
    const std::int64_t w = (t % chunks) * chunk;
    return (t / chunks) * windows + (w < windows ? w : windows);
  }
};
TaskPlan cpu_plan(const Series& s, const Params& p);  // validates
// Tasks [first_task, last_task) of cpu_plan: out holds windows
// [first_window(first_task), first_window(last_task)) only, in [series][windows] order.
void solve_cpu(const Series& s, const Params& p, std::int64_t first_task, std::int64_t last_task, WindowFits& out);
struct CudaTiming {
  double kernel_seconds = 0;   // CUDA events around the kernels, summed over devices' longest
  double copy_seconds = 0;     // host <-> device copies
};
// The CUDA backend (cuda.cu, in CUDA builds only): called through the dispatch
// (backend.cpp: the Engine functions below), which says when the build has none.
// devices: the CUDA devices to spread series and chunks of windows over.
void solve_cuda(const Series& s, const Params& p, const std::vector<int>& devices, WindowFits& out,
                CudaTiming* timing = nullptr);
// The CUDA backend's tasks (chunks of `refresh` windows; see TaskPlan) and a
// contiguous range of them, as solve_cpu's range form, on `devices` in turn.
TaskPlan cuda_plan(const Series& s, const Params& p);  // validates
void solve_cuda(const Series& s, const Params& p, const std::vector<int>& devices, std::int64_t first_task,
                std::int64_t last_task, WindowFits& out, CudaTiming* timing = nullptr);
// Measured fp64 exp() throughput of a device (exponentials per second): the
// floor of the full recompute is one exp per power term (spec, anchors).
double measure_exp_rate(int device);

// What finish() computes beside the estimates.
struct FinishOptions {
  bool refine = false;          // continuous optimum near the grid's (inference.hpp)
  bool inform = false;          // standard errors and theta's interval (implies refine)
  std::vector<double> levels;   // quantiles of the fitted distribution
  bool gof = false;             // Kolmogorov-Smirnov and Anderson-Darling statistics
  bool normal = false, student = false;  // the same windows fitted by a normal / Student-t
  // Called now and then from the calling thread with the windows finished so far
  // (for a progress line); may be empty.
  std::function<void(std::int64_t)> progress;
};

// The reported estimates, [series][windows] each (p2 = p with one shape).
struct Estimates {
  std::vector<double> theta, p, p2, s_l, s_r, loglik, skew;
  std::vector<double> quantiles;  // [series][windows][levels]
  std::vector<std::uint8_t> refined;
  // inform: [windows][K] standard errors (K = 4: theta, p, s_l, s_r; 5: theta,
  // p1, p2, s_l, s_r), [windows][2] theta's 95% interval, 1 where theta's
  // information exists (the interval is theta +- 1.96 se; else profile likelihood)
  std::vector<double> stderr_, theta_ci;
  std::vector<std::uint8_t> smooth;
  std::vector<double> ks, ad;            // gof
  std::vector<double> normal, student;   // [windows][3] mu, sigma, loglik; [windows][4] mu, sigma, nu, loglik
};
// From the grid fits: theta = x[index], p = alpha[shape], closed-form scales.
// refine / inform: inference.hpp's estimate_window for every window (on the
// CPU, or given: `refined` from estimate_cuda). levels: quantiles of the fitted
// distribution. Windows [begin, end) of [series][windows] order only (fits holds
// those); each window's estimates are the same bits as in the whole finish.
Estimates finish(const Series& s, const Params& p, const WindowFits& fits, const FinishOptions& options,
                 std::int64_t begin, std::int64_t end, const std::vector<WindowEstimate>* refined = nullptr);
Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels);
Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels, std::int64_t begin, std::int64_t end);

// The searches of windows [begin, end) as inference.hpp's WindowTask: the grid's
// location and shapes and their grid neighbours. Here and in estimate_cpu and
// estimate_cuda, `fits` holds those windows only (fits[u] is window begin + u,
// as finish() and one MPI rank have them); other sizes are an internal error.
std::vector<WindowTask> make_tasks(const Series& s, const Params& p, const WindowFits& fits, bool refine, bool inform,
                                   std::int64_t begin, std::int64_t end);
// inference.hpp's estimate_window for windows [begin, end) of the fits, on the
// CPU (OpenMP over windows; the same bits for any thread count).
std::vector<WindowEstimate> estimate_cpu(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                                         bool inform, std::int64_t begin, std::int64_t end,
                                         const std::function<void(std::int64_t)>& progress = {});
// (CUDA builds only; through estimate_on_device below)
// The same on one CUDA device, a few threads per window (the same source; the
// results agree with the CPU's to rounding: exp and log differ in the last
// bit, and the window's sums are added in another order). With `quantiles`,
// also the quantiles at `levels` of each window's estimate, [windows][levels]
// (as quantiles_cuda, without the estimates' round trip).
std::vector<WindowEstimate> estimate_cuda(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                                          bool inform, std::int64_t begin, std::int64_t end, int device,
                                          double* kernel_seconds = nullptr, const std::vector<double>& levels = {},
                                          std::vector<double>* quantiles = nullptr);
// The quantiles (distribution.hpp aepd_quantile2) of the estimates e (theta,
// p, p2, s_l, s_r of its windows) at the levels, on one CUDA device, one thread
// per window and level: [windows][levels], as finish() computes them on the
// host (the same source; CUDA's exp, log and lgamma round differently).
std::vector<double> quantiles_cuda(const Estimates& e, const std::vector<double>& levels, int device,
                                   double* kernel_seconds = nullptr);

// ---- the backend as a value (backend.cpp, the one place that chooses) ------------------
// The CPU (OpenMP) or CUDA on `devices` (the quantiles and estimates on the first).
struct Engine {
  bool cuda = false;
  std::vector<int> devices;
};
// The engine's tasks (cpu_plan or cuda_plan); validates.
TaskPlan plan(const Series& s, const Params& p, const Engine& engine);
// The grid fits of every window (whole) or of tasks [first_task, last_task) of
// plan(). Returns the seconds measured: the kernels' on CUDA (timing: also the
// copies), the wall time on the CPU.
double solve(const Series& s, const Params& p, const Engine& engine, bool whole, std::int64_t first_task,
             std::int64_t last_task, WindowFits& out, CudaTiming* timing = nullptr);
// On CUDA only (internal error otherwise): estimate_cuda and quantiles_cuda on the first device.
std::vector<WindowEstimate> estimate_on_device(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                                               bool inform, std::int64_t begin, std::int64_t end, const Engine& engine,
                                               double* kernel_seconds, const std::vector<double>& levels,
                                               std::vector<double>* quantiles);
std::vector<double> quantiles_on_device(const Estimates& e, const std::vector<double>& levels, const Engine& engine,
                                        double* kernel_seconds);

// ---- beside the fit -------------------------------------------------------------
// (the distribution function and quantiles: distribution.hpp)
// Kolmogorov-Smirnov sup |F_n - F| and Anderson-Darling A^2 of x[0..n) against
// the fitted distribution (F clipped to [1e-300, 1 - 2^-53] inside the logs).
void gof_statistics(const double* x, std::int64_t n, double theta, double p1, double p2, double s_l, double s_r,
                    double* ks, double* ad);
// Normal fit (closed form): mu, sigma, loglik.
void fit_normal(const double* x, std::int64_t n, double* out);
// Location-scale Student-t fit: mu, sigma, nu, loglik (see post.cpp).
void fit_student_t(const double* x, std::int64_t n, double* out);

// ---- windows without a maximum ----------------------------------------------------
// Where the likelihood has no maximum the fit is no answer: a window whose points
// are all equal (S = 0: log-likelihood +inf, scales 0), or one whose location is
// a value the window holds at least twice while the shape sits at the grid's
// smallest (either shape with two): with m points at theta the profile grows like
// n log(n / (n - m)) / p as p -> 0, so the ties, not the data's spread, set the
// shape and the grid's edge is no maximum (231 equal returns in a window of 250
// gave a 1% VaR of -0.035% against an empirical -0.49%).
enum class Degenerate : std::uint8_t { none = 0, constant = 1, ties = 2 };
// Marks windows [series][windows] of `e` (as finish() returns them, in the data's
// units) and sets their estimates, standard errors, intervals, goodness of fit and
// quantiles to NaN. One code per window.
std::vector<Degenerate> mark_degenerate(const Series& s, const Params& p, std::size_t levels, Estimates& e);

// ---- VaR backtest ------------------------------------------------------------------
// Each out-of-sample point t (window <= t < length) against the quantile of the
// latest window that ends before it, w = (t - window) / step: a hit (1) when
// x[t] < q for a level <= 0.5 (the loss exceeds the VaR), x[t] > q for a level
// above 0.5. hits: [series][length - window][levels]; kNoForecast where the
// quantile is NaN (a window without a maximum: mark_degenerate).
inline constexpr std::uint8_t kNoForecast = 2;
std::vector<std::uint8_t> exceedances(const Series& s, const Params& p, const std::vector<double>& levels,
                                      const std::vector<double>& quantiles);
// Kupiec's proportion-of-failures test (Kupiec 1995) and Christoffersen's
// independence and conditional-coverage tests (Christoffersen 1998) of one hit
// series against the expected rate (level, or 1 - level above 0.5). Columns of
// the `backtest` record, in this order. Points without a forecast (kNoForecast)
// are counted apart (no_forecast) and left out: n counts the others, and
// Christoffersen's transitions join consecutive points that both have one.
struct BacktestRow {
  double level, n, exceedances, kupiec_lr, kupiec_p, christoffersen_ind_lr, christoffersen_ind_p, cc_lr, cc_p,
      no_forecast;
};
inline constexpr int kBacktestColumns = 10;
BacktestRow backtest_statistics(double level, const std::uint8_t* hits, std::int64_t count, std::int64_t stride);
// Survival functions of chi-square with 1 and 2 degrees of freedom.
double chi2_sf1(double x);
double chi2_sf2(double x);

// The full log-likelihood of window points x[0..n) at (theta, p, s_l, s_r).
double full_loglik(const double* x, std::int64_t n, double theta, double p, double s_l, double s_r);
// Profile log-likelihood at location theta, shape p (closed-form scales), O(n).
double profile_loglik_at(const double* x, std::int64_t n, double theta, double p);


}  // namespace numpipe::mle
