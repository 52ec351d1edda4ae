// ns-step's CUDA sub-step kernels (f64), variants 0 and 1 (32 x 8, without and with LDG);
// cuda_substep.hpp says why the variants are compiled in units of their own.
#include "cuda_substep.cuh"

namespace numpipe::ns::substep {
template void launch_substep<double, 8, 2, false, false, 0>(const SubstepCall<double>&);
template void launch_substep<double, 8, 2, true, false, 0>(const SubstepCall<double>&);
}
