// Helpers the integrate unit tests share: building policies and a basis of tables, and
// comparing reserve arrays bit for bit or by the largest relative difference.
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

// A basis of tables (q_x for both lives, from a Gompertz-Makeham law), a marriage
// table and a younger, more spread spouse.
inline void table_basis(ig::Problem& pb) {
  for (int life = 0; life < 2; ++life) {
    ig::MortalityLaw m;
    m.name = life ? "spouse" : "insured";
    m.table = true;
    for (int a = 0; a <= 120; ++a) {
      m.ages.push_back(a);
      m.values.push_back(std::min(0.9, 0.0005 + std::pow(10.0, (life ? -4.1 : -4.3) + 0.039 * (a + 0.5))));
    }
    pb.laws[static_cast<std::size_t>(life)] = m;
  }
  pb.spouse.marriage_table = true;
  pb.spouse.marriage_age = {18, 30, 60, 90};
  pb.spouse.marriage_prob = {0.1, 0.6, 0.7, 0.3};
  pb.spouse.mean = -2.5;
  pb.spouse.sd = 4;
}

}  // namespace integrate_test
