#include "dispatch.hpp"

#include "common/error.hpp"
#include "common/parallel.hpp"

namespace numpipe::ns {

DeviceInfo prepare_backend(Backend backend, RunOptions& o, bool device_named) {
  if (backend != Backend::cuda) return query_host_cpu();
#ifdef NUMPIPE_HAVE_CUDA
  o.device = par::default_device_for_rank(o.device, device_named, cuda_device_count());
  return query_cuda_device(o.device);
#else
  (void)o;
  (void)device_named;
  fail_resource("this build has no CUDA backend");
#endif
}

Result solve(Backend backend, const Problem& pr, const RunOptions& o) {
  if (backend != Backend::cuda) return solve_cpu(pr, o);
#ifdef NUMPIPE_HAVE_CUDA
  return solve_cuda(pr, o);
#else
  fail_resource("this build has no CUDA backend");
#endif
}

}  // namespace numpipe::ns
