// Reproducible random numbers, the same on every machine and compiler: the
// standard fixes std::mt19937_64's sequence but not std::*_distribution's, so the
// conversions to uniform and normal variates are written out here.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>

namespace numpipe {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  std::uint64_t next_u64() { return engine_(); }
  // Uniform on [0, 1): the top 53 bits of one draw, times 2^-53.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1]: never 0, safe for log().
  double uniform_open0() { return 1.0 - uniform(); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Integer uniform on [lo, hi] (inclusive), by rejection (no modulo bias).
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<std::int64_t>(engine_());
    std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    std::uint64_t x;
    do x = engine_(); while (x >= limit);
    return lo + static_cast<std::int64_t>(x % span);
  }
  // Standard normal by Box-Muller, both variates used in turn.
  double normal() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    double r = std::sqrt(-2.0 * std::log(uniform_open0()));
    double t = 2.0 * M_PI * uniform();
    spare_ = r * std::sin(t);
    have_spare_ = true;
    return r * std::cos(t);
  }
  // Exponential with rate 1.
  double exponential() { return -std::log(uniform_open0()); }
  // Gamma(shape k, scale 1) by Marsaglia and Tsang (2000), k > 0.
  double gamma(double k) {
    if (k < 1.0) return gamma(k + 1.0) * std::pow(uniform_open0(), 1.0 / k);
    double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal(), v = 1.0 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = uniform_open0();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

 private:
  std::mt19937_64 engine_;
  bool have_spare_ = false;
  double spare_ = 0;
};

}  // namespace numpipe
