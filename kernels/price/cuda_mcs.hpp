// price, CUDA: the adjoint pass with the mixed term (rho != 0) as one persistent
// kernel per batch of time steps (cuda_mcs.cu); used by adjoint_weights_cuda (cuda.cu).
#pragma once
#include <vector>

#include "detail/backends.hpp"
#include "price.hpp"
#include "tuning.hpp"

namespace numpipe::price::detail {

// W[lane][m][i] of the lanes (adjoint_weights_cuda's result) from the transposed
// modified Craig-Sneyd steps, every lane a cluster of thread blocks that runs the
// four phases of each step with cluster barriers between them instead of a kernel
// launch per phase. Returns false, having done nothing, where it does not apply: a
// device without thread block clusters (before sm_90), a grid whose lines do not fit
// the shared memory of a block of 8 warps, or tuning.fused off (NUMPIPE_PRICE_FUSED=0).
// Fused::required (NUMPIPE_PRICE_FUSED=1) requires it (a resource error says why it
// cannot run); tuning.cluster (NUMPIPE_PRICE_CLUSTER=N) fixes the blocks per lane (1, 2,
// 4, 8 or 16). The values do not depend on either.
template <class Real>
bool mcs_weights_cuda(const std::vector<Lane>& lanes, int device, const Tuning& tuning, CudaRun* run,
                      std::vector<double>& weights);

}  // namespace numpipe::price::detail
