// Helpers shared by the fluid unit tests: bit-for-bit comparison of arrays and of
// the six fields of a state (Fields or SceneFields, in any mix).
#pragma once
#include <doctest/doctest.h>

#include <cstring>

namespace fluid_test {

// The same size and the same bytes.
template <class V>
bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

// d, u, v, d0, u0, v0 bit for bit.
template <class A, class B>
void check_same_fields(const A& a, const B& b) {
  CHECK(same_bits(a.d, b.d));
  CHECK(same_bits(a.u, b.u));
  CHECK(same_bits(a.v, b.v));
  CHECK(same_bits(a.d0, b.d0));
  CHECK(same_bits(a.u0, b.u0));
  CHECK(same_bits(a.v0, b.v0));
}

}  // namespace fluid_test
