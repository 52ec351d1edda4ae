// mle-fit's interface: grid maximum-likelihood fits of the AEPD (model.hpp)
// over rolling windows of one or many series, on the CPU (OpenMP) or on CUDA
// devices. Both backends fill the same WindowFits; finish() turns them into
// the reported estimates (theta, p, s_l, s_r, loglik, skew, quantiles). The
// backends themselves: detail/backends.hpp; the statistics beside the fit
// (goodness of fit, windows without a maximum, the VaR backtest): statistics.hpp.
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
struct CudaTiming {
  double kernel_seconds = 0;   // CUDA events around the kernels, summed over devices' longest
  double copy_seconds = 0;     // host <-> device copies
};

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

}  // namespace numpipe::mle
