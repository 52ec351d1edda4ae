// fluid-step's CUDA passes, tile r7x16 (rb_reg: K 7, 16 rows per thread, 8 threads in y,
// 2 blocks per SM; cuda.cu's kTiles): the scene's kernels; the plain passes' in
// cuda_pass_r7x16.cu, so that the tile's two halves compile in parallel.
#include "cuda_pass.cuh"

namespace numpipe::fluid::pass {
template void reg_scene_kernels<7, 16, 8, 2>(RegKernels&);
}
