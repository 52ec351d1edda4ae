#include "dispatch.hpp"

#include "common/parallel.hpp"
#ifdef NUMPIPE_HAVE_CUDA
#include "cuda_run.hpp"
#endif

namespace numpipe::ns {

DeviceInfo prepare_backend(Backend backend, RunOptions& o, bool device_named) {
  if (backend != Backend::cuda) return query_host_cpu();
#ifdef NUMPIPE_HAVE_CUDA
  o.device = par::default_device_for_rank(o.device, device_named, cuda_device_count());
  return query_cuda_device(o.device);
#else
  (void)o;
  (void)device_named;
  fail_no_cuda_backend();
#endif
}

std::unique_ptr<Solver> make_solver(Backend backend, const Problem& pr, const RunOptions& o) {
  if (backend != Backend::cuda) return make_cpu_solver(pr, o);
#ifdef NUMPIPE_HAVE_CUDA
  return make_cuda_solver(pr, o);
#else
  fail_no_cuda_backend();
#endif
}

Result solve(Backend backend, const Problem& pr, const RunOptions& o) {
  const std::unique_ptr<Solver> solver = make_solver(backend, pr, o);
  return run(*solver, pr, o);
}

#ifdef NUMPIPE_HAVE_CUDA
// The CUDA run in its precision (cuda_run_f32.cu, cuda_run_f64.cu).
std::unique_ptr<Solver> make_cuda_solver(const Problem& pr, const RunOptions& o) {
  return make_run(pr, o, &make_cuda_run<float>, &make_cuda_run<double>);
}

Result solve_cuda(const Problem& pr, const RunOptions& o) {
  const std::unique_ptr<Solver> solver = make_cuda_solver(pr, o);
  return run(*solver, pr, o);
}
#endif

}  // namespace numpipe::ns
