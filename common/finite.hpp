// Non-finite values are never written silently: a solver checks its outputs
// (and a tool the inputs its model cannot take) before writing them, in one line:
//
//   require_finite(ExitCode::bad_input, "rho", shape, rho.data(), "the run blew up: lower --dt or --cfl");
//
// gives "rho[3, 0, 7] is nan: the run blew up: lower --dt or --cfl" with that exit
// code (2 when the input or the options caused it, 4 for a bug).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "error.hpp"
#include "stream.hpp"

namespace numpipe {

// The lowest i in [0, n) for which bad(i) holds, or -1, whatever the thread count
// (the OpenMP threads share the range; the minimum is exact).
template <class Bad>
std::int64_t first_where(std::size_t n, Bad bad) {
  std::int64_t first = INT64_MAX;
  const std::int64_t count = static_cast<std::int64_t>(n);
#pragma omp parallel for reduction(min : first) schedule(static) if (n > (std::size_t(1) << 20))
  for (std::int64_t i = 0; i < count; ++i)
    if (i < first && bad(i)) first = i;
  return first == INT64_MAX ? -1 : first;
}

// The flat index of the first value that is not finite, or -1 (the lowest such
// index whatever the thread count).
template <class T>
std::int64_t first_non_finite(const T* v, std::size_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    // Blocks of values tested by their exponent bits (all ones: inf or NaN) with an
    // integer OR, which the compiler vectorises; only a block holding one is searched
    // value by value. A state of 100 million values is checked at memory speed.
    using Bits = std::conditional_t<std::is_same_v<T, float>, std::uint32_t, std::uint64_t>;
    constexpr Bits kExponent = std::is_same_v<T, float> ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
    constexpr std::size_t kBlock = 4096;
    const std::int64_t blocks = static_cast<std::int64_t>((n + kBlock - 1) / kBlock);
    std::int64_t first = INT64_MAX;
#pragma omp parallel for reduction(min : first) schedule(static) if (n > (std::size_t(1) << 20))
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::size_t lo = static_cast<std::size_t>(b) * kBlock, hi = std::min(n, lo + kBlock);
      Bits any = 0;
      for (std::size_t i = lo; i < hi; ++i) {
        Bits bits;
        std::memcpy(&bits, v + i, sizeof bits);
        any |= static_cast<Bits>((bits & kExponent) == kExponent);
      }
      if (!any) continue;
      for (std::size_t i = lo; i < hi; ++i)
        if (!std::isfinite(v[i])) {
          first = std::min(first, static_cast<std::int64_t>(i));
          break;
        }
    }
    return first == INT64_MAX ? -1 : first;
  } else {
    return first_where(n, [v](std::int64_t i) { return !std::isfinite(static_cast<double>(v[i])); });
  }
}

// "[3, 0, 7]": the C-order index of flat position i in shape (i for an empty shape).
inline std::string index_in(const Shape& shape, std::uint64_t i) {
  if (shape.empty()) return "[" + std::to_string(i) + "]";
  std::string s;
  for (std::size_t d = shape.size(); d-- > 0;) {
    const std::uint64_t n = shape[d] > 0 ? static_cast<std::uint64_t>(shape[d]) : 1;
    s = std::to_string(i % n) + (s.empty() ? "" : ", ") + s;
    i /= n;
  }
  return "[" + s + "]";
}

inline std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Error with `code` naming the record, the index and the value of the first
// non-finite value of v (shape's element count of them); `why` says what to do.
template <class T>
void require_finite(ExitCode code, const std::string& record, const Shape& shape, const T* v, const std::string& why) {
  const std::int64_t at = first_non_finite(v, static_cast<std::size_t>(element_count(shape)));
  if (at < 0) return;
  throw Error(code, record + index_in(shape, static_cast<std::uint64_t>(at)) + " is " +
                        value_text(static_cast<double>(v[at])) + ": " + why);
}

}  // namespace numpipe
