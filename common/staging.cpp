#ifdef NUMPIPE_HAVE_CUDA
#include "staging.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <array>
#include <map>
#include <mutex>

#include "cuda_check.hpp"
#include "error.hpp"
#include "workers.hpp"

namespace numpipe {

namespace {

struct DeviceRing {
  std::array<cudaEvent_t, kStagingBuffers> done{};  // the buffer's last copy (and kernel) finished
  std::array<void*, kStagingBuffers> piece{};       // device buffers, for the device-side steps
};

struct Ring {
  std::mutex m;
  std::array<void*, kStagingBuffers> host{};
  bool tried = false, pinned = false;
  std::map<int, DeviceRing> devices;
};

Ring& ring() {
  // Never freed: the buffers live until the process ends (freeing pinned memory
  // after the runtime's own teardown at exit is not allowed).
  static Ring* r = new Ring;
  return *r;
}

// Under the ring's lock.
bool allocate_host_ring(Ring& r) {
  if (r.tried) return r.pinned;
  r.tried = true;
  for (auto& h : r.host)
    if (cudaHostAlloc(&h, kStagingBytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      for (auto& g : r.host)
        if (g) cudaFreeHost(g), g = nullptr;
      return r.pinned = false;  // no pinned memory to be had: plain copies, slower but correct
    }
  return r.pinned = true;
}

DeviceRing& device_ring(Ring& r, bool pieces) {
  int device = 0;
  NUMPIPE_CUDA_CHECK(cudaGetDevice(&device));
  DeviceRing& d = r.devices[device];
  if (!d.done[0])
    for (auto& e : d.done) NUMPIPE_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  if (pieces && !d.piece[0])
    for (auto& p : d.piece) NUMPIPE_CUDA_CHECK(cudaMalloc(&p, kStagingBytes));
  return d;
}

bool is_pinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

std::size_t piece_bytes(std::size_t align) {
  align = std::max<std::size_t>(align, 1);
  return std::max(align, kStagingBytes - kStagingBytes % align);
}

using Consume = std::function<void(const void*, std::size_t, std::size_t)>;
using Produce = std::function<void(void*, std::size_t, std::size_t)>;

void to_device(void* dst, const void* src, std::size_t bytes, std::size_t align, cudaStream_t stream, const Consume* consume) {
  Ring& r = ring();
  std::lock_guard<std::mutex> lock(r.m);
  const std::size_t piece = piece_bytes(align);
  if (!allocate_host_ring(r)) {  // plain copies, through one device buffer for the device-side step
    if (!consume) {
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
      return;
    }
    DeviceRing& d = device_ring(r, true);
    for (std::size_t off = 0; off < bytes; off += piece) {
      const std::size_t len = std::min(piece, bytes - off);
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(d.piece[0], static_cast<const char*>(src) + off, len, cudaMemcpyHostToDevice, stream));
      (*consume)(d.piece[0], off, len);
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return;
  }
  DeviceRing& d = device_ring(r, consume != nullptr);
  const std::size_t n = (bytes + piece - 1) / piece;
  for (std::size_t i = 0; i < n; ++i) {
    const int b = static_cast<int>(i % kStagingBuffers);
    if (i >= static_cast<std::size_t>(kStagingBuffers)) NUMPIPE_CUDA_CHECK(cudaEventSynchronize(d.done[b]));
    const std::size_t off = i * piece, len = std::min(piece, bytes - off);
    parallel_copy(r.host[b], static_cast<const char*>(src) + off, len);  // while piece i-1 crosses the bus
    if (consume) {
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(d.piece[b], r.host[b], len, cudaMemcpyHostToDevice, stream));
      (*consume)(d.piece[b], off, len);
    } else {
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, r.host[b], len, cudaMemcpyHostToDevice, stream));
    }
    NUMPIPE_CUDA_CHECK(cudaEventRecord(d.done[b], stream));
  }
  // The ring is free again when this returns (the next transfer may be on another stream).
  for (std::size_t i = n > kStagingBuffers ? n - kStagingBuffers : 0; i < n; ++i)
    NUMPIPE_CUDA_CHECK(cudaEventSynchronize(d.done[i % kStagingBuffers]));
}

void to_host(void* dst, const void* src, std::size_t bytes, std::size_t align, cudaStream_t stream, const Produce* produce) {
  Ring& r = ring();
  std::lock_guard<std::mutex> lock(r.m);
  const std::size_t piece = piece_bytes(align);
  if (!allocate_host_ring(r)) {
    if (!produce) {
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
    DeviceRing& d = device_ring(r, true);
    for (std::size_t off = 0; off < bytes; off += piece) {
      const std::size_t len = std::min(piece, bytes - off);
      (*produce)(d.piece[0], off, len);
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, d.piece[0], len, cudaMemcpyDeviceToHost, stream));
      NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return;
  }
  DeviceRing& d = device_ring(r, produce != nullptr);
  const std::size_t n = (bytes + piece - 1) / piece;
  auto issue = [&](std::size_t i) {
    const int b = static_cast<int>(i % kStagingBuffers);
    const std::size_t off = i * piece, len = std::min(piece, bytes - off);
    if (produce) {
      (*produce)(d.piece[b], off, len);
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(r.host[b], d.piece[b], len, cudaMemcpyDeviceToHost, stream));
    } else {
      NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(r.host[b], static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost, stream));
    }
    NUMPIPE_CUDA_CHECK(cudaEventRecord(d.done[b], stream));
  };
  for (std::size_t i = 0; i < std::min<std::size_t>(n, kStagingBuffers); ++i) issue(i);
  for (std::size_t i = 0; i < n; ++i) {
    const int b = static_cast<int>(i % kStagingBuffers);
    NUMPIPE_CUDA_CHECK(cudaEventSynchronize(d.done[b]));
    const std::size_t off = i * piece, len = std::min(piece, bytes - off);
    parallel_copy(static_cast<char*>(dst) + off, r.host[b], len);  // while the next pieces cross the bus
    if (i + kStagingBuffers < n) issue(i + kStagingBuffers);
  }
}

}  // namespace

void forget_staging() {
  Ring& r = ring();
  std::lock_guard<std::mutex> lock(r.m);
  r.host = {};
  r.tried = r.pinned = false;
  r.devices.clear();
}

void prepare_staging() {
  Ring& r = ring();
  std::lock_guard<std::mutex> lock(r.m);
  allocate_host_ring(r);
}

namespace {
// A large copy with no device-side step can instead page-lock the host memory where
// it is (cudaHostRegister) and let the DMA engine read or write it directly
// (NUMPIPE_STAGING=register). On the H200 machine registering alone runs at 16-25
// GB/s and the copy at 55 GB/s (bench/host-memory), but fluid-step's upload of six
// 67 MB fields took 95 ms that way against 79 ms through the ring: the ring stays
// the default.
bool register_large_copies() {
  static const bool on = [] {
    const char* e = std::getenv("NUMPIPE_STAGING");
    if (!e || !*e || std::strcmp(e, "ring") == 0) return false;
    if (std::strcmp(e, "register") == 0) return true;
    fail_input(std::string("NUMPIPE_STAGING must be register or ring, got '") + e + "'");
  }();
  return on;
}

// Page-locks [p, p + bytes) for the copy; false (nothing locked) where the system refuses.
bool lock_in_place(const void* p, std::size_t bytes) {
  if (cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterDefault) == cudaSuccess) return true;
  cudaGetLastError();  // not a sticky error: the ring does the copy instead
  return false;
}
}  // namespace

void copy_to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes < 2 * kStagingBytes || is_pinned(src)) {
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  if (register_large_copies() && lock_in_place(src, bytes)) {
    const cudaError_t copy = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
    const cudaError_t done = copy == cudaSuccess ? cudaStreamSynchronize(stream) : copy;
    cudaHostUnregister(const_cast<void*>(src));  // after the copy: src may be reused on return
    NUMPIPE_CUDA_CHECK(done);
    return;
  }
  to_device(dst, src, bytes, 1, stream, nullptr);
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes < 2 * kStagingBytes || is_pinned(dst)) {
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    NUMPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  if (register_large_copies() && lock_in_place(dst, bytes)) {
    const cudaError_t copy = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
    const cudaError_t done = copy == cudaSuccess ? cudaStreamSynchronize(stream) : copy;
    cudaHostUnregister(dst);
    NUMPIPE_CUDA_CHECK(done);
    return;
  }
  to_host(dst, src, bytes, 1, stream, nullptr);
}

void stream_to_device(const void* src, std::size_t bytes, std::size_t align, cudaStream_t stream,
                      const std::function<void(const void*, std::size_t, std::size_t)>& consume) {
  to_device(nullptr, src, bytes, align, stream, &consume);
}

void stream_from_device(void* dst, std::size_t bytes, std::size_t align, cudaStream_t stream,
                        const std::function<void(void*, std::size_t, std::size_t)>& produce) {
  to_host(dst, nullptr, bytes, align, stream, &produce);
}

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
