// ns-step's CUDA kernel for the bodies in double (cuda_bodies.cuh says why it has units of its own).
#include "cuda_bodies.cuh"

namespace numpipe::ns::substep {
template void launch_ib_step<double>(const SubstepCall<double>&, const IbSite*, long long);
}  // namespace numpipe::ns::substep
