// ns-step's CUDA run in double (cuda_run.hpp says why each precision has a unit of its own).
#include "cuda_run.cuh"

namespace numpipe::ns {
template Result run_cuda<double>(const Problem&, const RunOptions&, const Decomposition*);
}  // namespace numpipe::ns
