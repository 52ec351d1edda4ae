// mle: the backend dispatch, the one place that chooses the CPU or the CUDA backend
// (mle.hpp, Engine).
#include "common/error.hpp"
#include "common/profile.hpp"
#include "common/run.hpp"
#include "detail/backends.hpp"
#include "garch.hpp"
#include "mle.hpp"

namespace numpipe::mle {

TaskPlan plan(const Series& s, const Params& p, const Engine& engine) {
  if (!engine.cuda) return cpu_plan(s, p);
#ifdef NUMPIPE_HAVE_CUDA
  return cuda_plan(s, p);
#else
  fail_no_cuda_backend();
#endif
}

double solve(const Series& s, const Params& p, const Engine& engine, bool whole, std::int64_t first_task,
             std::int64_t last_task, WindowFits& out, CudaTiming* timing) {
  if (!engine.cuda) {
    HostTimer timer;
    if (whole) solve_cpu(s, p, out);
    else solve_cpu(s, p, first_task, last_task, out);
    return timer.seconds();
  }
#ifdef NUMPIPE_HAVE_CUDA
  CudaTiming local;
  CudaTiming* t = timing ? timing : &local;
  if (whole) solve_cuda(s, p, engine.devices, out, t);
  else solve_cuda(s, p, engine.devices, first_task, last_task, out, t);
  return t->kernel_seconds;
#else
  (void)timing;
  fail_no_cuda_backend();
#endif
}

std::vector<WindowEstimate> estimate_on_device(const Series& s, const Params& p, const WindowFits& fits, bool refine,
                                               bool inform, std::int64_t begin, std::int64_t end, const Engine& engine,
                                               double* kernel_seconds, const std::vector<double>& levels,
                                               std::vector<double>* quantiles) {
  if (!engine.cuda) fail_internal("mle: estimate_on_device on the CPU backend");
#ifdef NUMPIPE_HAVE_CUDA
  return estimate_cuda(s, p, fits, refine, inform, begin, end, engine.devices.front(), kernel_seconds, levels,
                       quantiles);
#else
  (void)s, (void)p, (void)fits, (void)refine, (void)inform, (void)begin, (void)end, (void)kernel_seconds,
      (void)levels, (void)quantiles;
  fail_no_cuda_backend();
#endif
}

std::vector<double> quantiles_on_device(const Estimates& e, const std::vector<double>& levels, const Engine& engine,
                                        double* kernel_seconds) {
  if (!engine.cuda) fail_internal("mle: quantiles_on_device on the CPU backend");
#ifdef NUMPIPE_HAVE_CUDA
  return quantiles_cuda(e, levels, engine.devices.front(), kernel_seconds);
#else
  (void)e, (void)levels, (void)kernel_seconds;
  fail_no_cuda_backend();
#endif
}

std::vector<GarchFit> fit_garch(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o,
                                const Engine& engine, double* solve_seconds) {
  if (!engine.cuda) {
    HostTimer timer;
    std::vector<GarchFit> fits = fit_garch(x, series, length, o);
    *solve_seconds = timer.seconds();
    return fits;
  }
#ifdef NUMPIPE_HAVE_CUDA
  return fit_garch_cuda(x, series, length, o, engine.devices.front(), solve_seconds);
#else
  (void)solve_seconds;
  fail_no_cuda_backend();
#endif
}

}  // namespace numpipe::mle
