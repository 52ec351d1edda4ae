// DeviceArray<T>: an owning device buffer (cudaMalloc/cudaFree, RAII), with
// checked copies to and from host memory. Only in CUDA builds.
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
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
  // Moves only (the buffer has one owner); a moved-from array is empty.
  DeviceArray(DeviceArray&& o) noexcept : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    DeviceArray tmp(std::move(o));
    swap(tmp);
    return *this;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  void copy_from_host(const T* src, std::size_t count, cudaStream_t stream = nullptr) {
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(data(), src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void copy_to_host(T* dst, std::size_t count, cudaStream_t stream = nullptr) const {
    NUMPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, data(), count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }
  void swap(DeviceArray& o) noexcept {
    data_.swap(o.data_);
    std::swap(size_, o.size_);
  }

 private:
  struct Free {
    void operator()(T* p) const noexcept { detail::free_device(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
