// Host and device allocation behind HostArray and DeviceArray.
#include <cstdlib>
#include <cstring>
#include <string>

#include "device_array.hpp"
#include "error.hpp"
#include "host_array.hpp"

namespace numpipe::detail {

namespace {
std::string gib(std::size_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}
}  // namespace

void* allocate_host(std::size_t bytes, bool pinned) {
  if (bytes == 0) return nullptr;
#ifdef NUMPIPE_HAVE_CUDA
  if (pinned) {
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) == cudaSuccess) return p;
    cudaGetLastError();  // clear the sticky-free error and fall back to pageable memory
  }
#endif
  (void)pinned;
  constexpr std::size_t kAlign = 64;
  std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) fail_resource("out of host memory allocating " + gib(bytes));
  return p;
}

void free_host(void* p, bool pinned) noexcept {
  if (!p) return;
#ifdef NUMPIPE_HAVE_CUDA
  // A pinned request may have fallen back to aligned_alloc: ask the runtime which it was.
  if (pinned) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost) {
      cudaFreeHost(p);
      return;
    }
    cudaGetLastError();
  }
#endif
  (void)pinned;
  std::free(p);
}

#ifdef NUMPIPE_HAVE_CUDA
void* allocate_device(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  cudaError_t status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    fail_resource("out of device memory allocating " + gib(bytes) + " (" + gib(free_b) + " free of " + gib(total_b) +
                  "): use a smaller problem or split it (--devices all)");
  }
  return p;
}

void free_device(void* p) noexcept {
  if (p) cudaFree(p);
}

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line) {
  std::string msg = std::string("CUDA error ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                    ") in " + what + " at " + file + ":" + std::to_string(line);
  if (status == cudaErrorMemoryAllocation) fail_resource(msg);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) fail_resource(msg);
  fail_internal(msg);
}
#endif

}  // namespace numpipe::detail
