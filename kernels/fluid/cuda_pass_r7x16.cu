// fluid-step's CUDA passes, tile r7x16 (rb_reg: K 7, 16 rows per thread, 8 threads in y,
// 2 blocks per SM; cuda.cu's kTiles): the plain passes' kernels; the scene's in
// cuda_pass_r7x16_scene.cu, so that the tile's two halves compile in parallel.
#include "cuda_pass.cuh"

namespace numpipe::fluid::pass {
template void reg_plain_kernels<7, 16, 8, 2>(RegKernels&);
}
