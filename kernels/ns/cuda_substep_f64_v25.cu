// ns-step's CUDA sub-step kernels (f64), variants 2 and 5 (32 x 16 LDG, 5 with Q by cp.async);
// cuda_substep.hpp says why the variants are compiled in units of their own.
#include "cuda_substep.cuh"

namespace numpipe::ns::substep {
template void launch_substep<double, 16, 1, true, false, 0>(const SubstepCall<double>&);
template void launch_substep<double, 16, 1, true, true, 0>(const SubstepCall<double>&);
}
