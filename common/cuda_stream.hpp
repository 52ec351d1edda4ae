// CudaStream and CudaEvent: a CUDA stream and an event that live as long as their
// owner (RAII; created checked). For the timing of device work see cuda_timer.hpp.
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace numpipe {

// A stream; by default non-blocking with respect to the legacy default stream
// (cudaStreamDefault for one ordered with it). Its destructor waits for the work
// queued on it before destroying it: the buffers that work uses may be freed next.
class CudaStream {
 public:
  explicit CudaStream(unsigned flags = cudaStreamNonBlocking) {
    NUMPIPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, flags));
  }
  ~CudaStream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event for ordering streams (cudaStreamWaitEvent), without timing.
class CudaEvent {
 public:
  CudaEvent() { NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~CudaEvent() { cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
