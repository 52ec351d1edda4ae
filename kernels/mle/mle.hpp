// mle-fit's interface: grid maximum-likelihood fits of the AEPD (model.hpp)
// over rolling windows of one or many series, on the CPU (OpenMP) or on CUDA
// devices. Both backends fill the same WindowFits; finish() turns them into
// the reported estimates (theta, p, s_l, s_r, loglik, skew, quantiles).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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
struct WindowFits {
  std::vector<std::int32_t> shape;
  std::vector<std::int64_t> index;
  std::vector<double> xm, xp, S, loglik;
  void resize(std::size_t count);
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
#ifdef NUMPIPE_HAVE_CUDA
struct CudaTiming {
  double kernel_seconds = 0;   // CUDA events around the kernels, summed over devices' longest
  double copy_seconds = 0;     // host <-> device copies
};
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
#endif

// The reported estimates, [series][windows] each.
struct Estimates {
  std::vector<double> theta, p, s_l, s_r, loglik, skew;
  std::vector<double> quantiles;  // [series][windows][levels]
  std::vector<std::uint8_t> refined;
};
// From the grid fits: theta = x[index], p = alpha[shape], closed-form scales.
// refine: 1-D bounded searches of theta between the neighbouring data points of
// the best candidate and of p between its grid neighbours (golden section),
// alternated until neither moves. levels: quantiles of the fitted distribution.
Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels);
// Windows [begin, end) of [series][windows] order only (fits holds those); each
// window's estimates are the same bits as in the whole finish.
Estimates finish(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                 const std::vector<double>& levels, std::int64_t begin, std::int64_t end);

// The full log-likelihood of window points x[0..n) at (theta, p, s_l, s_r).
double full_loglik(const double* x, std::int64_t n, double theta, double p, double s_l, double s_r);
// Profile log-likelihood at location theta, shape p (closed-form scales), O(n).
double profile_loglik_at(const double* x, std::int64_t n, double theta, double p);

// Regularised lower incomplete gamma P(a, x) and its inverse in x.
double gamma_p(double a, double x);
double gamma_q(double a, double x);
double gamma_p_inverse(double a, double prob);   // x with P(a, x) = prob
double gamma_q_inverse(double a, double prob);   // x with Q(a, x) = prob
// Quantile (left-tail probability q) of the AEPD.
double aepd_quantile(double q, double theta, double p, double s_l, double s_r);

}  // namespace numpipe::mle
