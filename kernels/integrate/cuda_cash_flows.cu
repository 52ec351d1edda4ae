// integrate's CUDA kernel of the expected cash flows (products.hpp), launched through
// cuda_kernels.hpp: a unit of its own beside the products' reserves (cuda_products.cu),
// whose Thiele chains it shares, so that the two compile in parallel.
#include "common/cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

namespace {

constexpr int kCashFlowBlock = 128;

// One thread per policy: its expected cash flows by year (products.hpp), its premium fixed.
__global__ void cash_flow_kernel(const ProductSpec* specs, std::int64_t n, RateView rv, const MortalityView* laws,
                                 double* flows) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const ProductSpec sp = specs[i];
  product_cash_flows(sp, rv, laws, sp.premium, flows + i * kYears * kCashFlowKinds);
}

}  // namespace

namespace gpu {

void launch_cash_flows(const ProductSpec* specs, std::int64_t n, const RateView& rv, const MortalityView* laws,
                       double* flows, cudaStream_t stream) {
  cash_flow_kernel<<<blocks_for(n, kCashFlowBlock), kCashFlowBlock, 0, stream>>>(specs, n, rv, laws, flows);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

}  // namespace gpu
}  // namespace numpipe::integrate
