// ns-step's CUDA sub-step kernels (f64), variant 7 (the ring, 32 x 8, two blocks per SM);
// cuda_substep.hpp says why the variants are compiled in units of their own.
#include "cuda_substep.cuh"

namespace numpipe::ns::substep {
template void launch_substep<double, 8, 2, true, false, 1>(const SubstepCall<double>&);
}
