// price, internal: the work counted from the algorithm, the building blocks of io.hpp's
// work_of_strikes and work_of_contracts.
#pragma once
#include <string>

#include "kernels/price/price.hpp"

namespace numpipe::price {

// Work counted from the algorithm (for profile records and the benchmark):
// fp64/fp32 operations and the bytes a two-pass-per-step design moves.
double flops_of(const Params& p);
// The adjoint method's operations (same counting): per grid point and step 53 (the
// transposed y solve 5, the x pivots 10 and transposed x solve 16, E^T and G^T 22),
// plus 2 per strike and x point for the prices.
double adjoint_flops_of(const Params& p);
// Device-memory bytes of the CUDA time loop, from its access model per strike, grid
// point and step: kernel "chunk" 5.25 accesses (R once plus 2 halo rows in 8, the
// right sides written; y phase: right sides read, R written), "sweep" 7.
double cuda_bytes_of(const Params& p, Precision precision, const std::string& kernel);

}  // namespace numpipe::price
