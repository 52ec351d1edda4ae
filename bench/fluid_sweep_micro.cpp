// bench/fluid_sweep_micro: how fast the red-black half-sweep of fluid-step's
// CPU backend runs when its rolling window sits in L1, L2 or L3, on one core
// and on every core at once. The production's line of 16 cells and division
// routes (kernels/fluid/simd_avx512.hpp) and the same aligned loads (valignd
// for the horizontal neighbours), inlined into the wavefront traversal of one pass
// of k iterations over a ring of 2k + 2 row slots of four planes (x red, x
// black, x0 red, x0 black), W pairs per plane, for each way of dividing by c
// (multiply: c a power of two; divide: vdivps; reciprocal: cpu.cpp's FMA route;
// double: the product in double; mixed: divide and reciprocal on alternate
// lines). Prints ns per cell update for each W, so that the working set's
// level and the division's cost can be read off.
//
//   g++ -O3 -march=native -fopenmp -I. bench/fluid_sweep_micro.cpp -o /tmp/micro   (in the repository)
//   /tmp/micro [threads]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/fluid/simd_avx512.hpp"

namespace {

constexpr int kIters = 20;                // k: iterations of the pass
constexpr int kSlots = 2 * kIters + 2;    // ring of row slots

// out[i] = (x0[i] + a*((L + R) + D + U)) * r over i in [0, pairs), lines aligned.
enum Route { kMultiply, kDivide, kReciprocal, kDouble, kMixed, kRoutes };
const char* const kRouteNames[kRoutes] = {"multiply", "divide", "reciprocal", "double", "mixed"};

// num/c by the double product num * RN(1/c) rounded to float (exact where
// |num| is in [2^-100, 2^100) and c in [1, 2^24]), the IEEE division elsewhere.
__attribute__((always_inline)) inline __m512 div_double(__m512 num, __m512 c, __m512d rd) {
  const __m512d lo = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(num)), rd);
  const __m512d hi = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(num, 1)), rd);
  __m512 q = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
  const __m512i mag = _mm512_and_si512(_mm512_set1_epi32(0x7fffffff), _mm512_castps_si512(num));
  const __mmask16 ok = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(mag, _mm512_set1_epi32(27 << 23)),
                                               _mm512_set1_epi32(200 << 23)) |
                       _mm512_cmpeq_epi32_mask(mag, _mm512_setzero_si512());
  if (static_cast<__mmask16>(~ok)) q = _mm512_mask_div_ps(q, static_cast<__mmask16>(~ok), num, c);
  return q;
}

template <int Par, int R>
__attribute__((always_inline)) inline void sweep(float* out, const float* mid, const float* D, const float* U,
                                                 const float* X0, int pairs, __m512 va, __m512 vr) {
  const __m512 vc = _mm512_set1_ps(5.0f);  // vr: 1/5 rounded (reciprocal route), 0.2 (multiply)
  const __m512d rd = _mm512_set1_pd(1.0 / 5.0);
  __m512i carry = _mm512_castps_si512(_mm512_loadu_ps(mid - (Par ? 0 : 16)));
  for (int i = 0; i < pairs; i += 16) {
    __m512 l, r;
    if constexpr (Par) {
      const __m512i next = _mm512_castps_si512(_mm512_loadu_ps(mid + i + 16));
      l = _mm512_castsi512_ps(carry);
      r = _mm512_castsi512_ps(_mm512_alignr_epi32(next, carry, 1));
      carry = next;
    } else {
      const __m512i here = _mm512_castps_si512(_mm512_loadu_ps(mid + i));
      l = _mm512_castsi512_ps(_mm512_alignr_epi32(here, carry, 15));
      r = _mm512_castsi512_ps(here);
      carry = here;
    }
    const __m512 d = _mm512_loadu_ps(D + i), u = _mm512_loadu_ps(U + i), x0 = _mm512_loadu_ps(X0 + i);
    const __mmask16 all = 0xffff;
    using numpipe::fluid::DivMode;
    if constexpr (R == kMultiply) numpipe::fluid::cell16<DivMode::multiply>(out + i, all, l, r, d, u, x0, va, vc, vr);
    else if constexpr (R == kDivide) numpipe::fluid::cell16<DivMode::divide>(out + i, all, l, r, d, u, x0, va, vc, vr);
    else if constexpr (R == kReciprocal)
      numpipe::fluid::cell16<DivMode::reciprocal>(out + i, all, l, r, d, u, x0, va, vc, vr);
    else if constexpr (R == kDouble) {  // the numerator as cell16 forms it
      const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l, r), d), u);
      _mm512_storeu_ps(out + i, div_double(_mm512_add_ps(x0, _mm512_mul_ps(va, sum)), vc, rd));
    }
    else if (i & 16) numpipe::fluid::cell16<DivMode::reciprocal>(out + i, all, l, r, d, u, x0, va, vc, vr);
    else numpipe::fluid::cell16<DivMode::divide>(out + i, all, l, r, d, u, x0, va, vc, vr);
  }
}

// Rows t = 0..rows-1 of a pass: row t is "loaded" (its slot reused), then the
// wavefront's half-sweeps of rows t - 2kk (red) and t - 2kk - 1 (black).
// Floats per plane: whole lines, a number of lines whose small multiples stay
// clear of 4 KiB (as the production window does).
int plane_pitch(int pairs) {
  int m = (pairs + 15) / 16;
  auto clear = [](int lines) {
    for (int k = 1; k <= 9; ++k)
      if (const int r = k * lines % 64; r == 0 || r == 1 || r == 63) return false;
    return true;
  };
  while (!clear(m)) ++m;
  return 16 * m;
}

template <int R>
double run_pass(float* win, int pairs, int rows) {
  const int pitch = plane_pitch(pairs);
  auto plane = [&](int slot, int c) { return win + (static_cast<std::size_t>(slot) * 4 + c) * pitch; };
  const __m512 va = _mm512_set1_ps(0.25f), vr = _mm512_set1_ps(0.2f);
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 2 * kSlots; t < rows + 2 * kSlots; ++t)
    for (int kk = 0; kk < kIters; ++kk) {
      const int y = t - 2 * kk, s = y % kSlots, sp = (y - 1) % kSlots, spp = (y - 2) % kSlots, sn = (y + 1) % kSlots;
      if (y & 1) sweep<1, R>(plane(s, 0), plane(s, 1), plane(sp, 1), plane(sn, 1), plane(s, 2), pairs, va, vr);
      else sweep<0, R>(plane(s, 0), plane(s, 1), plane(sp, 1), plane(sn, 1), plane(s, 2), pairs, va, vr);
      if (y & 1) sweep<1, R>(plane(sp, 1), plane(sp, 0), plane(spp, 0), plane(s, 0), plane(sp, 3), pairs, va, vr);
      else sweep<0, R>(plane(sp, 1), plane(sp, 0), plane(spp, 0), plane(s, 0), plane(sp, 3), pairs, va, vr);
    }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

template <int R>
void measure(int threads, int pairs) {
  const std::size_t floats = static_cast<std::size_t>(kSlots) * 4 * plane_pitch(pairs) + 256;
  const long long updates_per_row = 2LL * kIters * pairs;
  const int rows = std::max(64, static_cast<int>(40'000'000 / updates_per_row));
  std::vector<double> per(threads);
#pragma omp parallel num_threads(threads)
  {
    void* raw = nullptr;
    if (posix_memalign(&raw, 64, floats * sizeof(float)) != 0) std::abort();
    float* win = static_cast<float*>(raw);
    for (std::size_t i = 0; i < floats; ++i) win[i] = 1.0f + static_cast<float>(i % 7) * 0.125f;
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
#pragma omp barrier
      best = std::min(best, run_pass<R>(win + 128, pairs, rows));
    }
    per[omp_get_thread_num()] = best / (static_cast<double>(rows) * updates_per_row) * 1e9;
    std::free(raw);
  }
  const auto [lo, hi] = std::minmax_element(per.begin(), per.end());
  double mean = 0;
  for (double v : per) mean += v / threads;
  std::printf("   %7.4f (%.4f..%.4f)", mean, *lo, *hi);
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  std::printf("threads %d, k = %d, %d row slots x 4 planes; ns per cell update (mean over threads, min..max)\n",
              threads, kIters, kSlots);
  std::printf("%8s %12s", "pairs", "window KiB");
  for (const char* name : kRouteNames) std::printf(" %24s", name);
  std::printf("\n");
  for (int pairs : {16, 32, 64, 128, 256, 512, 1024, 2048}) {
    std::printf("%8d %12.1f", pairs, static_cast<double>(kSlots) * 4 * plane_pitch(pairs) * 4.0 / 1024);
    measure<kMultiply>(threads, pairs);
    measure<kDivide>(threads, pairs);
    measure<kReciprocal>(threads, pairs);
    measure<kDouble>(threads, pairs);
    measure<kMixed>(threads, pairs);
    std::printf("\n");
  }
  return 0;
}
