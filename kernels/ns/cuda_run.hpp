// ns-step's CUDA solver in one precision. Its code (cuda_run.cuh) is compiled once per
// precision, in cuda_run_f32.cu and cuda_run_f64.cu, so that the two compile in
// parallel. Its heaviest kernels are compiled in units of their own, the sub-step
// kernels (cuda_substep_*.cu) and the bodies' kernel (cuda_bodies_*.cu), and the run
// sees their declarations alone (cuda_substep.hpp). dispatch.cpp chooses the precision.
#pragma once
#include <memory>

#include "decomp.hpp"
#include "ns.hpp"

namespace numpipe::ns {
template <class T>
std::unique_ptr<Solver> make_cuda_run(const Problem& problem, const RunOptions& options, std::unique_ptr<Decomposition> block);
}  // namespace numpipe::ns
