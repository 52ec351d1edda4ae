// profile-report --calibrate: measures a device's sustained copy bandwidth and
// fp64/fp32 FMA rates, the ceilings the reports' percentages are taken against.
// Plain C++ (no JSON) so that nvcc compiles it for calibrate.cu.
#pragma once
#include <string>

namespace numpipe::calibrate {

struct Rates {
  double bandwidth_gbs = 0;   // bytes read + written per second of a large copy, GB/s
  double fp64_gflops = 0;     // FMA counted as 2 flops
  double fp32_gflops = 0;
  double copy_bytes = 0;      // size of one buffer of the copy
  int repetitions = 0;        // timed runs per measurement (the median is kept)
  long fma_iterations = 0;    // FMA-chain iterations per thread (fp64 run)
  int workers = 0;            // CUDA threads in flight, or OpenMP threads
  std::string method;         // one line: how it was measured
};

// The host CPU: an OpenMP stream copy and a register-resident FMA loop on every
// thread (AVX-512, AVX2+FMA or SSE2, whichever the CPU has). quick: small sizes
// (tests), seconds rather than tens of seconds.
Rates measure_cpu(bool quick);

// True when this build has the CUDA calibration kernels.
bool cuda_built();
// CUDA device `device`: a device-to-device copy kernel and FMA-chain kernels,
// timed by CUDA events. Without CUDA: a resource error (exit 3) saying so.
Rates measure_cuda(int device, bool quick);

}  // namespace numpipe::calibrate
