// integrate: the backend dispatch, the one place that chooses the CPU or the CUDA
// backend (integrate.hpp, Engine).
#include "common/run.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

Result solve(const Problem& problem, const Engine& engine, const ProgressFn& progress) {
  if (!engine.cuda) return solve_cpu(problem, engine.threads, progress);
#ifdef NUMPIPE_HAVE_CUDA
  return solve_cuda(problem, engine.devices);
#else
  fail_no_cuda_backend();
#endif
}

}  // namespace numpipe::integrate
