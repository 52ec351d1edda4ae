// HostArray<T>: an owning, uninitialised, 64-byte-aligned host array (RAII).
// Record payloads live in one; with CUDA present, `pinned` asks for page-locked
// memory so that host-device copies run at full speed (see device_array.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace numpipe {

namespace detail {
void* allocate_host(std::size_t bytes, bool pinned);  // throws resource error on failure
void free_host(void* p, bool pinned) noexcept;
}  // namespace detail

template <class T>
class HostArray {
 public:
  HostArray() = default;
  explicit HostArray(std::size_t count, bool pinned = false)
      : data_(static_cast<T*>(detail::allocate_host(count * sizeof(T), pinned))), size_(count), pinned_(pinned) {}
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  HostArray(HostArray&& o) noexcept { swap(o); }
  HostArray& operator=(HostArray&& o) noexcept {
    HostArray tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~HostArray() { detail::free_host(data_, pinned_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  bool pinned() const { return pinned_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void swap(HostArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(pinned_, o.pinned_);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  bool pinned_ = false;
};

}  // namespace numpipe
