// integrate's CUDA kernel of the single-life products' reserves and premiums
// (products.hpp), launched through cuda_kernels.hpp: most of the backend's machine
// code (Thiele's chains of every product), hence a unit of its own.
#include "common/cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "products.hpp"

namespace numpipe::integrate {

namespace {

constexpr int kProductsBlock = 128;

// One thread per single-life policy: its Thiele chain(s) (products.hpp) into its row,
// its premium (given, or solved for) into prem.
__global__ void products_kernel(const ProductSpec* specs, std::int64_t n, RateView rv, const MortalityView* laws,
                                bool align, double* rows, double* prem) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const ProductSpec sp = specs[i];
  prem[i] = product_reserve(sp, rv, laws, align, rows + i * kYears);
}

}  // namespace

namespace gpu {

void launch_products(const ProductSpec* specs, std::int64_t n, const RateView& rv, const MortalityView* laws,
                     bool align, double* rows, double* prem, cudaStream_t stream) {
  products_kernel<<<blocks_for(n, kProductsBlock), kProductsBlock, 0, stream>>>(specs, n, rv, laws, align, rows, prem);
  NUMPIPE_CUDA_CHECK_LAUNCH();
}

void load_product_kernels() {
  cudaFuncAttributes a;
  NUMPIPE_CUDA_CHECK(cudaFuncGetAttributes(&a, products_kernel));
}

}  // namespace gpu
}  // namespace numpipe::integrate
