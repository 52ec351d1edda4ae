// fluid-step's CUDA passes, the rb_pass tiles (cuda.cu's kTiles): s5x6 (fp64, the
// default), s5x10 and s10x16 (fp32, for comparison).
#include "cuda_pass.cuh"

namespace numpipe::fluid::pass {
template SmemKernels<double> smem_kernels<double, 5, 6>();
template SmemKernels<float> smem_kernels<float, 5, 10>();
template SmemKernels<float> smem_kernels<float, 10, 16>();
}
