#include "dispatch.hpp"

#include "common/error.hpp"
#include "common/parallel.hpp"

namespace numpipe::ns {

namespace {
[[noreturn]] void no_cuda() { fail_resource("this build has no CUDA backend"); }
}  // namespace

DeviceInfo prepare_backend(Backend backend, RunOptions& o, bool device_named) {
  if (backend != Backend::cuda) return query_host_cpu();
#ifdef NUMPIPE_HAVE_CUDA
  o.device = par::default_device_for_rank(o.device, device_named, cuda_device_count());
  return query_cuda_device(o.device);
#else
  (void)o;
  (void)device_named;
  no_cuda();
#endif
}

Result solve(Backend backend, const Problem& pr, const RunOptions& o) {
  if (backend != Backend::cuda) return solve_cpu(pr, o);
#ifdef NUMPIPE_HAVE_CUDA
  return solve_cuda(pr, o);
#else
  no_cuda();
#endif
}

}  // namespace numpipe::ns
