// CPU-only builds: no CUDA calibration kernels; asking for them says so.
#include "calibrate.hpp"
#include "common/error.hpp"

namespace numpipe::calibrate {

bool cuda_built() { return false; }

Rates measure_cuda(int, bool) {
  fail_resource("--calibrate: no CUDA device: this numpipe was built without CUDA (use --backend cpu to calibrate the CPU)");
}

}  // namespace numpipe::calibrate
