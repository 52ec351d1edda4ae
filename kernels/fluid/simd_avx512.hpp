// AVX-512 pieces of the CPU backend's half-sweep (kernels/fluid/cpu.cpp), in a
// header so that bench/fluid_sweep_micro.cpp times the same code: the division
// by c along model.hpp's routes and one line of 16 cells.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include "model.hpp"

namespace numpipe::fluid {

// The reciprocal route: q = num*r, two corrections by fused multiply-adds, the
// sign of num (zero), and a division for the lanes outside the exact range.
__attribute__((target("avx512f"))) inline __m512 div_avx512(__m512 num, __m512 c, __m512 r, __mmask16 live) {
  __m512 q = _mm512_mul_ps(num, r);
  __m512 e = _mm512_fnmadd_ps(c, q, num);
  q = _mm512_fmadd_ps(e, r, q);
  e = _mm512_fnmadd_ps(c, q, num);
  q = _mm512_fmadd_ps(e, r, q);
  const __m512i bits = _mm512_castps_si512(num);
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  q = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(abs_mask, _mm512_castps_si512(q)), _mm512_and_si512(sign, bits)));
  const __m512i mag = _mm512_and_si512(abs_mask, bits);
  const __mmask16 ok = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(mag, _mm512_set1_epi32(static_cast<int>(kRecipExpLo))),
                                               _mm512_set1_epi32(static_cast<int>(kRecipExpSpan))) |
                       _mm512_cmpeq_epi32_mask(mag, _mm512_setzero_si512());
  const __mmask16 slow = static_cast<__mmask16>(~ok & live);
  if (slow) q = _mm512_mask_div_ps(q, slow, num, c);
  return q;
}

template <DivMode M>
__attribute__((target("avx512f"))) inline void cell16(float* out, __mmask16 m, __m512 l, __m512 r, __m512 d, __m512 u,
                                                      __m512 x0, __m512 va, __m512 vc, __m512 vr) {
  const __m512 num = _mm512_add_ps(x0, _mm512_mul_ps(va, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l, r), d), u)));
  __m512 q;
  if constexpr (M == DivMode::multiply) q = _mm512_mul_ps(num, vr);
  else if constexpr (M == DivMode::reciprocal) q = div_avx512(num, vc, vr, m);
  else q = _mm512_div_ps(num, vc);
  // A whole line by a plain store: the next half-sweep loads it back at once,
  // and a load may not be served from a masked store still in flight.
  if (m == static_cast<__mmask16>(0xffff)) _mm512_storeu_ps(out, q);
  else _mm512_mask_storeu_ps(out, m, q);
}

}  // namespace numpipe::fluid

#endif
