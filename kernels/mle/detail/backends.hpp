// mle, internal: the CPU and CUDA backends behind the Engine (backend.cpp: plan, solve,
// estimate_on_device, quantiles_on_device), and the searches after the grid (make_tasks,
// estimate_cpu) that finish() runs on the CPU.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/mle/garch.hpp"
#include "kernels/mle/mle.hpp"

namespace numpipe::mle {

void solve_cpu(const Series& s, const Params& p, WindowFits& out);

TaskPlan cpu_plan(const Series& s, const Params& p);  // validates
// Tasks [first_task, last_task) of cpu_plan: out holds windows
// [first_window(first_task), first_window(last_task)) only, in [series][windows] order.
void solve_cpu(const Series& s, const Params& p, std::int64_t first_task, std::int64_t last_task, WindowFits& out);
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

// --model garch's fits on one CUDA device (garch_cuda.cu; through fit_garch's
// dispatch, garch.hpp); *kernel_seconds: the kernel's time by CUDA events.
std::vector<GarchFit> fit_garch_cuda(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o,
                                     int device, double* kernel_seconds);
// The latency of one pass over the window r[0..n) on one warp, as the fits run
// it (mle-garch-bench): `passes` log-likelihood passes, then as many gradient
// passes, one after another, each loop timed by CUDA events; seconds per pass.
void garch_pass_seconds_cuda(const double* r, std::int64_t n, const double* par, int passes, int device,
                             double* loglik_seconds, double* gradient_seconds);

}  // namespace numpipe::mle
