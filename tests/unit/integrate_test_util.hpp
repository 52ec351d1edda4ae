// Helpers the integrate unit tests share: building policies, and comparing
// reserve arrays bit for bit or by the largest relative difference.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/integrate/integrate.hpp"

namespace integrate_test {

namespace ig = numpipe::integrate;

inline ig::Policy policy(double g, double r, double x, int h1, int h2, int h3) {
  ig::Policy p;
  p.g = g;
  p.r = r;
  p.x = x;
  p.h1 = h1;
  p.h2 = h2;
  p.h3 = h3;
  return p;
}

template <class A, class B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The largest |a - b| / |b| over entries that differ by more than 1e-15; NaN must
// stand in both places (past the end of a policy's years), else 1.
template <class A, class B>
double max_rel(const A& a, const B& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return 1;
      continue;
    }
    const double d = std::fabs(a[i] - b[i]);
    if (d > 1e-15) m = std::max(m, d / std::fabs(b[i]));
  }
  return m;
}

}  // namespace integrate_test
