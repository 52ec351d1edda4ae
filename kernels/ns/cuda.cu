// ns-step, CUDA backend: the problem checked, then the run in its precision
// (cuda_run.cuh: the kernels and the stepping, compiled once per precision).
#include "cuda_run.hpp"

namespace numpipe::ns {
namespace {
// solve_with's Run<T>: the run of cuda_run_f32.cu or cuda_run_f64.cu.
template <class T>
class CudaRunIn {
 public:
  CudaRunIn(const Problem& problem, const RunOptions& options, const Decomposition* block)
      : problem_(problem), options_(options), block_(block) {}
  Result run() { return run_cuda<T>(problem_, options_, block_); }

 private:
  const Problem& problem_;
  const RunOptions& options_;
  const Decomposition* block_;
};
}  // namespace

Result solve_cuda(const Problem& pr, const RunOptions& o) { return solve_with<CudaRunIn>(pr, o); }

}  // namespace numpipe::ns
