// HostVector<T>: a std::vector for large numeric arrays (fields, states).
//
// Two differences from std::vector<T>, both for the time a tool spends outside its
// solve (bench/host-memory measures them):
//  - storage from allocate_host (host_array.hpp): large arrays on huge pages, whose
//    first touch and release cost a fraction of ordinary pages';
//  - growth without writing: resize(n) leaves the new elements of an arithmetic T
//    uninitialised, so that the code that fills them (a copy, a decompression, a
//    download, a parallel fill) is the first to touch the memory, on as many threads
//    as it uses, instead of one thread zeroing gigabytes first. Code that needs zeros
//    says so: assign(n, 0), or parallel_fill.
// Everything else (copies, assign, iterators, data()) is std::vector's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "host_array.hpp"

namespace numpipe {

template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() noexcept = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(detail::allocate_host(n * sizeof(T), false)); }
  void deallocate(T* p, std::size_t) noexcept { detail::free_host(p, false); }
  // Value-less construction (resize, the size constructor) default-initialises: for
  // an arithmetic T it writes nothing.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const HostAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const HostAllocator<U>&) const noexcept {
    return false;
  }
};

template <class T>
using HostVector = std::vector<T, HostAllocator<T>>;

// x[i] = value for every i, on the OpenMP threads (the pages' first touch shared out).
template <class T>
void parallel_fill(T* x, std::size_t n, T value) {
  const std::int64_t count = static_cast<std::int64_t>(n);
#ifdef _OPENMP  // (CUDA translation units include this header without OpenMP)
#pragma omp parallel for schedule(static) if (n > (std::size_t(1) << 18))
#endif
  for (std::int64_t i = 0; i < count; ++i) x[i] = value;
}

}  // namespace numpipe
