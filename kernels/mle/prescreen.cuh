// mle-fit, CUDA: a cheap, bounded approximation of S = X-^q + X+^q (q = 1/(p+1))
// that the rolling kernel uses to rule out candidates before it computes S
// exactly (model.hpp scale_sum: two fp64 log and two fp64 exp per candidate
// and shape, most of the rolling fit's cost otherwise).
//
// approx_root(X) ~ X^q from the bits of X, one lg2.approx and one ex2.approx
// (the SFU, fp32) and exact fp32/integer steps:
//   X = 2^e M, M in [1, 2): log2 X = e + log2 M; M is cut to 23 bits (m);
//   q e = q_hi e + q_lo e, q_hi with 12 significant bits so that q_hi e is exact;
//   q_hi e = k + r1 (k the nearest integer, r1 in [-1/2, 1/2], both exact);
//   X^q = 2^k * 2^y, y = r1 + q lg2(m) + q_lo e (|y| < 1.8), 2^k by the exponent field.
// Error of y: q (|log2 M - log2 m| + lg2 error) + three fp32 roundings of
// values below 2 + (q_lo's rounding) e <= q (1.443*2^-23 + E_lg2) + 3*2^-24 + 2^-26.
// Relative error of X^q: ln 2 * that + E_ex2. With E_lg2 <= 2^-22 (absolute,
// on [1, 2)) and E_ex2 <= 2^-21 (relative, on [-2, 2]), both checked on the
// device over every input by tests/unit/test_mle_cuda.cu, the error is below
// 2^-20; S's (one more fp32 addition) too, and the exact fp64 S is within
// 2^-42 of the true value. kApproxEps = 2^-19 keeps a factor 2 in hand.
//
// A lane keeps a candidate for the exact evaluation when its approximate S is
// at most kSlack times the smallest approximate S of its warp (kSlack >=
// (1+eps)/(1-eps)): a candidate left out has exact S > that smallest exact S,
// so it can neither win nor tie. Out-of-range X (denormal, inf, NaN, X^q
// outside [2^-100, 2^100]) is flagged and always evaluated exactly.
#pragma once
#include <cuda_runtime.h>

#include <cmath>

namespace numpipe::mle {

inline constexpr float kApproxEps = 1.0f / 524288.0f;   // 2^-19: bound on |S~ - S| / S
inline constexpr float kSlack = 1.0f + 1.0f / 131072.0f;  // 1 + 2^-17 >= (1+eps)/(1-eps), rounded up

// The constants of one shape: q = 1/(p+1) split for approx_root.
struct RootConst {
  float q_hi;  // q rounded to 12 significant bits
  float q_lo;  // fl(q - q_hi)
  float q_f;   // fl(q)
};
__host__ __device__ inline RootConst root_const(double q) {
  int ex = 0;
  const double f = frexp(q, &ex);  // q = f 2^ex, f in [0.5, 1)
  const double hi = ldexp(rint(ldexp(f, 12)), ex - 12);
  return {static_cast<float>(hi), static_cast<float>(q - hi), static_cast<float>(q)};
}

__device__ __forceinline__ float lg2_approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// X^q within kApproxEps (relative) in *out; false when X is out of the covered
// range. X <= 0 (and -0, and NaN with the sign bit) gives 0 and true, as
// model.hpp root_p1 gives 0 for anything not > 0.
__device__ __forceinline__ bool approx_root(double X, RootConst c, float* out) {
  const int hi = __double2hiint(X), lo = __double2loint(X);
  const int ex = (hi >> 20) & 0x7ff;
  // the top 23 bits of the mantissa, as a float in [1, 2)
  const float m = __int_as_float(0x3f800000 | (__funnelshift_l(lo, hi, 3) & 0x7fffff));
  const float lf = lg2_approx(m);
  const int e = ex - 1023;
  const float ef = __fsub_rn(__int_as_float(0x4b400000 + e), 12582912.0f);  // e, exactly (|e| < 2^22)
  const float v = __fmul_rn(c.q_hi, ef);                                    // exact: 12 + 11 bits
  const float big = __fadd_rn(v, 12582912.0f);                               // 1.5*2^23 + rint(v)
  const int k = __float_as_int(big) - 0x4b400000;
  const float r1 = __fsub_rn(v, __fsub_rn(big, 12582912.0f));                // v - k, exact
  const float y = __fmaf_rn(c.q_lo, ef, __fmaf_rn(c.q_f, lf, r1));
  const float a = ex2_approx(y);                                             // in [0.5, 4]
  const bool pos = hi > 0;
  *out = pos ? __int_as_float(__float_as_int(a) + (k << 23)) : 0.0f;
  // hi > 0: normal, finite, power in range; hi <= 0: zero or negative (fine), or
  // a positive denormal with hi == 0 (not covered)
  return pos ? (ex != 0 && ex != 0x7ff && k > -100 && k < 100) : !(hi == 0 && lo != 0);
}

}  // namespace numpipe::mle
