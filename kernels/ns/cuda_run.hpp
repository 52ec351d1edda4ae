// ns-step's CUDA run in one precision. Its code (cuda_run.cuh) is compiled once per
// precision, in cuda_run_f32.cu and cuda_run_f64.cu, so that the two compile in
// parallel (one unit held both: 89 s on one core); cuda.cu chooses between them.
#pragma once
#include "decomp.hpp"
#include "ns.hpp"

namespace numpipe::ns {
template <class T>
Result run_cuda(const Problem& problem, const RunOptions& options, const Decomposition* block);
}  // namespace numpipe::ns
