// DeviceArray<T>: an owning device buffer (cudaMalloc/cudaFree, RAII), with
// checked copies to and from host memory. Only in CUDA builds.
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda_check.hpp"

namespace numpipe {

namespace detail {
void* allocate_device(std::size_t bytes);  // resource error (exit 3) naming the size when it fails
void free_device(void* p) noexcept;
}  // namespace detail

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) : data_(static_cast<T*>(detail::allocate_device(count * sizeof(T)))), size_(count) {}
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept { swap(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    DeviceArray tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~DeviceArray() { detail::free_device(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  void copy_from_host(const T* src, std::size_t count, cudaStream_t stream = nullptr) {
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(data_, src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void copy_to_host(T* dst, std::size_t count, cudaStream_t stream = nullptr) const {
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, data_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }
  void swap(DeviceArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
