// CudaEventTimer: times device work between two points of a stream with CUDA
// events (RAII; checked).
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace numpipe {

class CudaEventTimer {
 public:
  CudaEventTimer() {
    NUMPIPE_CUDA_CHECK(cudaEventCreate(&start_));
    NUMPIPE_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~CudaEventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;
  void start(cudaStream_t s = nullptr) { NUMPIPE_CUDA_CHECK(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s = nullptr) { NUMPIPE_CUDA_CHECK(cudaEventRecord(stop_, s)); }
  // Waits for the stop event; seconds between start and stop.
  double seconds() const {
    NUMPIPE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    NUMPIPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
