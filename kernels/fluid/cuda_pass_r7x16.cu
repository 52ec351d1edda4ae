// fluid-step's CUDA passes, tile r7x16 (rb_reg: K 7, 16 rows per thread, 8 threads in y,
// 2 blocks per SM; cuda.cu's kTiles): one tile per unit, so that the units compile in parallel.
#include "cuda_pass.cuh"

namespace numpipe::fluid::pass {
template RegKernels reg_kernels<7, 16, 8, 2>();
}
