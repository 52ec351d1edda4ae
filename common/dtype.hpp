// One dispatch over the stream's element types: code that handles every dtype alike
// writes its body once, for the C++ type of the dtype, instead of a switch of six cases.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "stream.hpp"

namespace numpipe {

// Calls f(T{}) with T the C++ type of t (double, float, std::int64_t, std::int32_t,
// std::uint64_t, std::uint8_t) and returns what it returns:
//   visit_dtype(r.dtype, [&](auto zero) { using T = decltype(zero); ... });
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f8: break;
    case DType::f4: return std::forward<F>(f)(float{});
    case DType::i8: return std::forward<F>(f)(std::int64_t{});
    case DType::i4: return std::forward<F>(f)(std::int32_t{});
    case DType::u8: return std::forward<F>(f)(std::uint64_t{});
    case DType::u1: return std::forward<F>(f)(std::uint8_t{});
  }
  return std::forward<F>(f)(double{});
}

// The element of dtype t at p (any alignment) as a double: exact but for i8 and u8
// beyond 2^53, which round to the nearest double.
inline double element_as_double(DType t, const std::byte* p) {
  return visit_dtype(t, [p](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  });
}

}  // namespace numpipe
