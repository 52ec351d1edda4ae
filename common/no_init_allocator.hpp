// An allocator that leaves elements default-initialised (doubles: not written) on
// resize, for results whose every element the solver writes: zero-filling a large
// result first costs as much as the download into it.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>

namespace numpipe {

template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

}  // namespace numpipe
