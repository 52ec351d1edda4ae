// fluid-step's CUDA passes, tile r7x8 (rb_reg: K 7, 8 rows per thread, 16 threads in y,
// 2 blocks per SM; cuda.cu's kTiles): one tile per unit, so that the units compile in parallel.
#include "cuda_pass.cuh"

namespace numpipe::fluid::pass {
template void reg_plain_kernels<7, 8, 16, 2>(RegKernels&);
template void reg_scene_kernels<7, 8, 16, 2>(RegKernels&);
}
