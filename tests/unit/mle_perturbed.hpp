// inference.hpp's per-window code compiled again (tests/unit/mle_perturbed.cpp,
// mle_lanes.cpp, from mle_copy.inc) with exp, log, pow and lgamma whose results
// are moved by a few units in the last place: a stand-in, on the CPU, for
// another math library (CUDA's), which rounds these differently from the
// host's libm; mle_lanes.cpp also sums each window in the CUDA kernel's order.
// Plain structs mirror WindowTask and WindowEstimate (the perturbed copy lives
// in its own namespace, so its types are distinct).
#pragma once
#include <cstdint>

namespace numpipe::mle_test {

struct PlainTask {
  double theta0, p1, p1_lo, p1_hi, p2, p2_lo, p2_hi, p_min, p_max;
  bool two_shapes, refine, inform;
};
struct PlainEstimate {
  double theta, p1, p2, s_l, s_r, loglik;
  double se[5];
  double ci_lo, ci_hi;
  int smooth, iterations;
};

// estimate_window of x[0..n) with every exp, log, pow and lgamma result moved
// by k ulps, k in [-ulps, ulps] drawn from a hash of the argument and salt
// (the same argument moves the same way within one call, as a math library).
PlainEstimate estimate_window_perturbed(const double* x, std::int64_t n, const PlainTask& task, int ulps,
                                        std::uint64_t salt);
// The same with the window's sums in the order of the CUDA estimate kernel
// (inference.hpp window_sums: 8 lanes, each summing every 8th point, combined
// by a butterfly) instead of point order.
PlainEstimate estimate_window_lanes(const double* x, std::int64_t n, const PlainTask& task, int ulps,
                                    std::uint64_t salt);

}  // namespace numpipe::mle_test
