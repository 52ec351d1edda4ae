// StepReplay: device work that a stream is given the same way every time (a solver's
// step, a pricing pass), captured into a CUDA graph at its first run and replayed
// from then on: one launch instead of one per kernel. Without capture the work is
// enqueued kernel by kernel each time: the same kernels, the same bits.
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "cuda_timer.hpp"

namespace numpipe {

class StepReplay {
 public:
  explicit StepReplay(bool capture = true) : capture_(capture) {}
  ~StepReplay() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  StepReplay(const StepReplay&) = delete;
  StepReplay& operator=(const StepReplay&) = delete;

  // Runs the work `times` times on `stream` after the stream's earlier work; waits
  // for the end and returns the device seconds of the runs (CUDA events; the first
  // run's capture is not counted). enqueue(stream) gives the stream the work once.
  template <class Enqueue>
  double run(cudaStream_t stream, int times, Enqueue&& enqueue) {
    if (times <= 0) return 0;
    if (capture_ && !exec_) {
      cudaGraph_t graph = nullptr;
      NUMPIPE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      enqueue(stream);
      NUMPIPE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
      cudaGraphDestroy(graph);  // the executable graph keeps what it needs
      NUMPIPE_CUDA_CHECK(made);
    }
    CudaEventTimer timer;
    timer.start(stream);
    for (int k = 0; k < times; ++k) {
      if (exec_) NUMPIPE_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
      else enqueue(stream);
    }
    timer.stop(stream);
    const double seconds = timer.seconds();
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return seconds;
  }

 private:
  bool capture_;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
