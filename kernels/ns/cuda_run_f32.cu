// ns-step's CUDA solver in float (cuda_run.hpp says why each precision has a unit of its own).
#include "cuda_run.cuh"

namespace numpipe::ns {
template std::unique_ptr<Solver> make_cuda_run<float>(const Problem&, const RunOptions&, std::unique_ptr<Decomposition>);
}  // namespace numpipe::ns
