// ns-step's CUDA sub-step kernels (f32), variant 3 (32 x 8 LDG without a register cap) and
// the flat one (8, for 2-D problems); cuda_substep.hpp says why the variants are
// compiled in units of their own.
#include "cuda_substep.cuh"

namespace numpipe::ns::substep {
template void launch_substep<float, 8, 1, true, false, 0>(const SubstepCall<float>&);
template void launch_substep_flat<float>(const SubstepCall<float>&);
}
