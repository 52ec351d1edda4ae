// fluid-step's CUDA passes, tile r7x4 (rb_reg: K 7, 4 rows per thread, 32 threads in y,
// 1 blocks per SM; cuda.cu's kTiles): one tile per unit, so that the units compile in parallel.
#include "cuda_pass.cuh"

namespace numpipe::fluid::pass {
template void reg_plain_kernels<7, 4, 32, 1>(RegKernels&);
template void reg_scene_kernels<7, 4, 32, 1>(RegKernels&);
}
