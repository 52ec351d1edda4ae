// NUMPIPE_CUDA_CHECK(call) and NUMPIPE_CUDA_CHECK_LAUNCH(): every CUDA runtime
// call and every kernel launch goes through one of these. Out-of-memory becomes
// a resource error (exit 3), anything else an internal error (exit 4), with the
// call, file and line in the message.
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include <string>

#include "error.hpp"

namespace numpipe::detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line);
}  // namespace numpipe::detail

#define NUMPIPE_CUDA_CHECK(call)                                                     \
  do {                                                                               \
    cudaError_t numpipe_status_ = (call);                                            \
    if (numpipe_status_ != cudaSuccess)                                              \
      ::numpipe::detail::throw_cuda_error(numpipe_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: catches bad configurations at once; execution errors
// surface at the next synchronizing call, which is itself checked.
#define NUMPIPE_CUDA_CHECK_LAUNCH() NUMPIPE_CUDA_CHECK(cudaGetLastError())

#endif  // NUMPIPE_HAVE_CUDA
