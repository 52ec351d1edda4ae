// The OpenMP backend of fluid-step (spec/fluid.md).
//
// Everything but lin_solve works on the natural layout, rows dealt to threads
// in chunks as they come free (every cell independent: the same bits for any
// thread count). lin_solve is where the time goes (5 solves of 20 red-black
// iterations a step): each pass over memory reads x and x0 row by row into a
// small rolling window of rows that stays in cache, split into red and black
// planes on 64-byte lines (so that each half-sweep is an aligned, unit-stride
// vector loop), runs up to all the solve's iterations there as a skewed
// wavefront over rows, and writes x back. The grid is cut into blocks of rows
// and columns, each recomputing a halo of 2 cells per fused iteration from the
// pass's input, so blocks never wait for each other; threads take blocks as
// they come free, those of a step's three independent diffusions together.
// Half-step h of a pass updates only the cells within 2k-1-h of the block (a
// trapezoid, half the halo's work), and the wavefront sweeps a group of
// consecutive steps per iteration so that the rows it reads are still in L1.
// Red-black Gauss-Seidel is independent of the order of the
// cells within a colour, so every schedule that keeps the dependencies (red k
// after black k-1 of rows y-1..y+1, black k after red k of rows y-1..y+1, the
// edges after black) computes the same bits.
//
// Scenes in a square box with closed sides (SceneBlockedCpuSolver; scene_cpu.cpp's
// step, the same bits) run the same passes: a window row that holds an obstacle's
// cell or one beside it is half-swept between the runs of solid cells (which stay
// 0), then its cells beside the obstacle by gs_cell_solid (scene_model.hpp), which
// reads the other colour only; an emitter and the forces are added to x0 as a pass
// loads it; the row kernels of the divergence, gradient and advection run between
// the obstacle's runs, its cells by the scene path's formulas.
//
// Memory passes saved without changing a bit (docs/fluid.md): react's sources
// are never stored (a solve's first pass generates its initial guess, zero but
// at the injection points, and forms add_source's x + dt*s as it reads x0);
// react's two maxima are taken by the passes that write d0 and the last
// pressure; the projection's zero pressure is generated, not written.
#include <omp.h>
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define NUMPIPE_FLUID_X86 1
// GCC 12 flags the _mm512_undefined_* inside its own AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "fluid.hpp"
#include "scene.hpp"
#include "simd_avx512.hpp"
#include "tuning.hpp"

namespace numpipe::fluid {
namespace {

constexpr int kMaxTemporal = 32;  // red-black iterations fused per pass over memory, at most
constexpr int kMaxGroup = 8;      // wavefront steps swept together, at most
constexpr std::size_t kWindowBytes = 384 * 1024;  // a thread's rolling window, to stay in L2
// Rows per chunk of the row loops, dealt to threads as they come free: on a
// shared host some cores run slower than others (measured up to 1.4x on the
// 16-core Xeon host), and a fixed share would make every thread wait for them.
constexpr int kRowChunk = 16;

// ---- one half-sweep of one row of colour planes ------------------------------------------
// out[i] = (X0[i] + a*(((L[i] + R[i]) + D[i]) + U[i])) / c, i in [lo, hi], the
// division as the Divisor says (model.hpp); every version rounds alike.
template <class T>
void sweep_row_generic(T* __restrict out, const T* __restrict L, const T* __restrict R, const T* __restrict D,
                       const T* __restrict U, const T* __restrict X0, int lo, int hi, T a, const Divisor<T>& dv) {
  if (dv.mode == DivMode::multiply) {
    const T r = dv.r;
#pragma omp simd
    for (int i = lo; i <= hi; ++i) out[i] = (X0[i] + a * (L[i] + R[i] + D[i] + U[i])) * r;
  } else {
    const T c = dv.c;
#pragma omp simd
    for (int i = lo; i <= hi; ++i) out[i] = gs_cell(X0[i], L[i], R[i], D[i], U[i], a, c);
  }
}

#ifdef NUMPIPE_FLUID_X86
template <DivMode M>
__attribute__((target("avx512f"))) inline void sweep_avx512_mode(float* __restrict out, const float* __restrict L,
                                                                 const float* __restrict R, const float* __restrict D,
                                                                 const float* __restrict U, const float* __restrict X0,
                                                                 int lo, int hi, float a, const Divisor<float>& dv) {
  const __m512 va = _mm512_set1_ps(a), vc = _mm512_set1_ps(dv.c), vr = _mm512_set1_ps(dv.r);
  int i = lo;
  for (; i + 15 <= hi; i += 16)
    cell16<M>(out + i, static_cast<__mmask16>(0xffff), _mm512_loadu_ps(L + i), _mm512_loadu_ps(R + i),
              _mm512_loadu_ps(D + i), _mm512_loadu_ps(U + i), _mm512_loadu_ps(X0 + i), va, vc, vr);
  if (i <= hi) {
    const __mmask16 m = static_cast<__mmask16>((1u << (hi - i + 1)) - 1);
    cell16<M>(out + i, m, _mm512_maskz_loadu_ps(m, L + i), _mm512_maskz_loadu_ps(m, R + i),
              _mm512_maskz_loadu_ps(m, D + i), _mm512_maskz_loadu_ps(m, U + i), _mm512_maskz_loadu_ps(m, X0 + i), va,
              vc, vr);
  }
}

__attribute__((target("avx512f"))) void sweep_row_avx512(float* __restrict out, const float* __restrict L,
                                                         const float* __restrict R, const float* __restrict D,
                                                         const float* __restrict U, const float* __restrict X0, int lo,
                                                         int hi, float a, const Divisor<float>& dv) {
  if (dv.mode == DivMode::multiply) sweep_avx512_mode<DivMode::multiply>(out, L, R, D, U, X0, lo, hi, a, dv);
  else if (dv.mode == DivMode::reciprocal) sweep_avx512_mode<DivMode::reciprocal>(out, L, R, D, U, X0, lo, hi, a, dv);
  else sweep_avx512_mode<DivMode::divide>(out, L, R, D, U, X0, lo, hi, a, dv);
}

// One line of 16 cells at i (on a 64-byte line), mid's line before (Par 0) or
// at (Par 1) i carried in `carry`.
template <DivMode M, int Par>
__attribute__((target("avx512f"))) inline void window_block16(float* out, const float* mid, const float* D,
                                                              const float* U, const float* X0, int i, __mmask16 m,
                                                              __m512i& carry, __m512 va, __m512 vc, __m512 vr) {
  __m512 l, r;
  if constexpr (Par == 1) {  // L = mid[i..], R = mid[i + 1..]
    const __m512i next = _mm512_castps_si512(_mm512_loadu_ps(mid + i + 16));
    l = _mm512_castsi512_ps(carry);
    r = _mm512_castsi512_ps(_mm512_alignr_epi32(next, carry, 1));
    carry = next;
  } else {  // L = mid[i - 1..], R = mid[i..]
    const __m512i here = _mm512_castps_si512(_mm512_loadu_ps(mid + i));
    l = _mm512_castsi512_ps(_mm512_alignr_epi32(here, carry, 15));
    r = _mm512_castsi512_ps(here);
    carry = here;
  }
  cell16<M>(out + i, m, l, r, _mm512_loadu_ps(D + i), _mm512_loadu_ps(U + i), _mm512_loadu_ps(X0 + i), va, vc, vr);
}

// The window's half-sweep: L[i] = mid[i + par - 1], R[i] = mid[i + par]. Every
// load and the store are whole 64-byte lines (out, mid, D, U and X0 must share
// their address modulo 64, as the window's planes do): L or R is formed from two
// lines of mid by valignd, the ends of [lo, hi] by masks. On the 16-core Xeon
// host the unaligned version's L and R loads split cache lines and straddle the
// stores of the half-sweep before, which store forwarding cannot serve. Reads
// mid over [lo - 31, hi + 31] and D, U, X0 over [lo - 15, hi + 15].
template <DivMode M, int Par>
__attribute__((target("avx512f"))) inline void sweep_window_avx512_mode(float* __restrict out,
                                                                        const float* __restrict mid,
                                                                        const float* __restrict D,
                                                                        const float* __restrict U,
                                                                        const float* __restrict X0, int lo, int hi,
                                                                        float a, const Divisor<float>& dv) {
  const __m512 va = _mm512_set1_ps(a), vc = _mm512_set1_ps(dv.c), vr = _mm512_set1_ps(dv.r);
  const int first = lo - static_cast<int>((reinterpret_cast<std::uintptr_t>(out + lo) >> 2) & 15);
  __m512i carry = _mm512_castps_si512(_mm512_loadu_ps(mid + first - (Par == 1 ? 0 : 16)));
  int i = first;
  if (i < lo || hi - i < 15) {  // the first line, partly outside [lo, hi]
    const unsigned tail = hi - i >= 15 ? 0xffffu : (1u << (hi - i + 1)) - 1;
    window_block16<M, Par>(out, mid, D, U, X0, i, static_cast<__mmask16>(tail & (0xffffu << (lo - i))), carry, va, vc,
                           vr);
    i += 16;
  }
  for (; i + 15 <= hi; i += 16)
    window_block16<M, Par>(out, mid, D, U, X0, i, static_cast<__mmask16>(0xffff), carry, va, vc, vr);
  if (i <= hi)
    window_block16<M, Par>(out, mid, D, U, X0, i, static_cast<__mmask16>((1u << (hi - i + 1)) - 1), carry, va, vc, vr);
}

template <int Par>
__attribute__((target("avx512f"))) void sweep_window_avx512_par(float* __restrict out, const float* __restrict mid,
                                                                const float* __restrict D, const float* __restrict U,
                                                                const float* __restrict X0, int lo, int hi, float a,
                                                                const Divisor<float>& dv) {
  if (dv.mode == DivMode::multiply) sweep_window_avx512_mode<DivMode::multiply, Par>(out, mid, D, U, X0, lo, hi, a, dv);
  else if (dv.mode == DivMode::reciprocal)
    sweep_window_avx512_mode<DivMode::reciprocal, Par>(out, mid, D, U, X0, lo, hi, a, dv);
  else sweep_window_avx512_mode<DivMode::divide, Par>(out, mid, D, U, X0, lo, hi, a, dv);
}

void sweep_window_avx512(float* out, const float* mid, int par, const float* D, const float* U, const float* X0, int lo,
                         int hi, float a, const Divisor<float>& dv) {
  if (par) sweep_window_avx512_par<1>(out, mid, D, U, X0, lo, hi, a, dv);
  else sweep_window_avx512_par<0>(out, mid, D, U, X0, lo, hi, a, dv);
}

__attribute__((target("avx2,fma"))) inline __m256 div_avx2(__m256 num, __m256 c, __m256 r) {
  __m256 q = _mm256_mul_ps(num, r);
  __m256 e = _mm256_fnmadd_ps(c, q, num);
  q = _mm256_fmadd_ps(e, r, q);
  e = _mm256_fnmadd_ps(c, q, num);
  q = _mm256_fmadd_ps(e, r, q);
  const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  q = _mm256_or_ps(_mm256_andnot_ps(sign, q), _mm256_and_ps(sign, num));
  const __m256i mag = _mm256_castps_si256(_mm256_andnot_ps(sign, num));
  // unsigned (mag - lo) < span, by the signed compare of both sides shifted by 2^31
  const __m256i flip = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  const __m256i off = _mm256_xor_si256(_mm256_sub_epi32(mag, _mm256_set1_epi32(static_cast<int>(kRecipExpLo))), flip);
  const __m256i lim = _mm256_xor_si256(_mm256_set1_epi32(static_cast<int>(kRecipExpSpan)), flip);
  const __m256i ok = _mm256_or_si256(_mm256_cmpgt_epi32(lim, off), _mm256_cmpeq_epi32(mag, _mm256_setzero_si256()));
  if (_mm256_movemask_ps(_mm256_castsi256_ps(ok)) != 0xff)
    q = _mm256_blendv_ps(_mm256_div_ps(num, c), q, _mm256_castsi256_ps(ok));
  return q;
}

__attribute__((target("avx2,fma"))) void sweep_row_avx2(float* __restrict out, const float* __restrict L,
                                                        const float* __restrict R, const float* __restrict D,
                                                        const float* __restrict U, const float* __restrict X0, int lo,
                                                        int hi, float a, const Divisor<float>& dv) {
  const __m256 va = _mm256_set1_ps(a), vc = _mm256_set1_ps(dv.c), vr = _mm256_set1_ps(dv.r);
  const DivMode mode = dv.mode;
  int i = lo;
  for (; i + 7 <= hi; i += 8) {
    const __m256 l = _mm256_loadu_ps(L + i), r = _mm256_loadu_ps(R + i);
    const __m256 d = _mm256_loadu_ps(D + i), u = _mm256_loadu_ps(U + i);
    const __m256 x0 = _mm256_loadu_ps(X0 + i);
    const __m256 num = _mm256_add_ps(x0, _mm256_mul_ps(va, _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(l, r), d), u)));
    __m256 q;
    if (mode == DivMode::multiply) q = _mm256_mul_ps(num, vr);
    else if (mode == DivMode::reciprocal) q = div_avx2(num, vc, vr);
    else q = _mm256_div_ps(num, vc);
    _mm256_storeu_ps(out + i, q);
  }
  // the tail: the division itself, which the other routes equal
  for (; i <= hi; ++i) out[i] = gs_cell(X0[i], L[i], R[i], D[i], U[i], a, dv.c);
}
#endif

// ---- row layout: natural <-> colour planes --------------------------------------------------
// split: even[j] = in[2j] (+ add), odd[j] = in[2j+1] (+ add) for the cols cells of a
// row (even gets the last one when cols is odd); merge: the inverse for pairs [j0, j1).
template <class T>
void split_generic(const T* __restrict in, T* __restrict even, T* __restrict odd, int cols, bool do_add, T add) {
  const int pairs = cols / 2;
  if (do_add) {
    for (int j = 0; j < pairs; ++j) {
      even[j] = in[2 * j] + add;
      odd[j] = in[2 * j + 1] + add;
    }
    if (cols & 1) even[pairs] = in[cols - 1] + add;
  } else {
    for (int j = 0; j < pairs; ++j) {
      even[j] = in[2 * j];
      odd[j] = in[2 * j + 1];
    }
    if (cols & 1) even[pairs] = in[cols - 1];
  }
}
template <class T>
void merge_generic(const T* __restrict even, const T* __restrict odd, T* __restrict out, int j0, int j1) {
  for (int j = j0; j < j1; ++j) {
    out[2 * j] = even[j];
    out[2 * j + 1] = odd[j];
  }
}

#ifdef NUMPIPE_FLUID_X86
__attribute__((target("avx512f"))) void split_avx512(const float* __restrict in, float* __restrict even,
                                                     float* __restrict odd, int cols, bool do_add, float add) {
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 va = _mm512_set1_ps(add);
  const int pairs = cols / 2;
  int j = 0;
  for (; j + 16 <= pairs; j += 16) {
    const __m512 a = _mm512_loadu_ps(in + 2 * j), b = _mm512_loadu_ps(in + 2 * j + 16);
    __m512 e = _mm512_permutex2var_ps(a, ie, b), o = _mm512_permutex2var_ps(a, io, b);
    if (do_add) {
      e = _mm512_add_ps(e, va);
      o = _mm512_add_ps(o, va);
    }
    _mm512_storeu_ps(even + j, e);
    _mm512_storeu_ps(odd + j, o);
  }
  for (; j < pairs; ++j) {
    even[j] = do_add ? in[2 * j] + add : in[2 * j];
    odd[j] = do_add ? in[2 * j + 1] + add : in[2 * j + 1];
  }
  if (cols & 1) even[pairs] = do_add ? in[cols - 1] + add : in[cols - 1];
}
__attribute__((target("avx512f"))) void merge_avx512(const float* __restrict even, const float* __restrict odd,
                                                     float* __restrict out, int j0, int j1) {
  const __m512i il = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i ih = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  int j = j0;
  for (; j + 16 <= j1; j += 16) {
    const __m512 e = _mm512_loadu_ps(even + j), o = _mm512_loadu_ps(odd + j);
    _mm512_storeu_ps(out + 2 * j, _mm512_permutex2var_ps(e, il, o));
    _mm512_storeu_ps(out + 2 * j + 16, _mm512_permutex2var_ps(e, ih, o));
  }
  for (; j < j1; ++j) {
    out[2 * j] = even[j];
    out[2 * j + 1] = odd[j];
  }
}
#endif

// ---- a scene's x0 ------------------------------------------------------------------------
// out[i] = ((x[i] + z) + dt*e[i]) + dt*f[i], i in [lo, hi]: add_source's + dt*0 (add),
// an emitter (e) and a force (f) where given, in scene_cpu.cpp's order.
template <class T>
void x0_row_generic(T* __restrict out, const T* __restrict x, const T* __restrict e, const T* __restrict f, int lo,
                    int hi, bool add, T z, T dt) {
  for (int i = lo; i <= hi; ++i) {
    T v = x[i];
    if (add) v = v + z;
    if (e) v = v + dt * e[i];
    if (f) v = v + dt * f[i];
    out[i] = v;
  }
}
#ifdef NUMPIPE_FLUID_X86
__attribute__((target("avx512f"))) void x0_row_avx512(float* __restrict out, const float* __restrict x,
                                                      const float* __restrict e, const float* __restrict f, int lo,
                                                      int hi, bool add, float z, float dt) {
  const __m512 vz = _mm512_set1_ps(z), vdt = _mm512_set1_ps(dt);
  for (int i = lo; i <= hi; i += 16) {
    const __mmask16 m =
        hi - i + 1 >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (hi - i + 1)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    if (add) v = _mm512_add_ps(v, vz);
    if (e) v = _mm512_add_ps(v, _mm512_mul_ps(vdt, _mm512_maskz_loadu_ps(m, e + i)));
    if (f) v = _mm512_add_ps(v, _mm512_mul_ps(vdt, _mm512_maskz_loadu_ps(m, f + i)));
    _mm512_mask_storeu_ps(out + i, m, v);
  }
}
#endif

// ---- advection of one row ------------------------------------------------------------------
// out_f[c] = q_f advected to cell (i, j) by (U, V), i in [1, n], for `count` fields
// (model.hpp's advect_weights and advect_apply, operation for operation).
struct AdvectRow {
  float* out[3];
  const float* q[3];
  int count;
};
void advect_row_generic(const float* U, const float* V, const AdvectRow& f, int j, int n, float dt0, int i_lo,
                        int i_hi) {
  const int w = n + 2;
  for (int i = i_lo; i <= i_hi; ++i) {
    const std::int64_t c = ix(i, j, w);
    const AdvectWeights<float> q = advect_weights(w, n, i, j, U[c], V[c], dt0);
    for (int k = 0; k < f.count; ++k) f.out[k][c] = advect_apply(f.q[k], q);
  }
}
#ifdef NUMPIPE_FLUID_X86
// q[idx], q[idx + 1] for 16 lanes by two gathers of 8-byte elements.
__attribute__((target("avx512f"))) inline void gather_pairs(const float* q, __m512i idx, __mmask8 ml, __mmask8 mh,
                                                            __m512i even, __m512i odd, __m512& left, __m512& right) {
  const __m512d zd = _mm512_setzero_pd();
  const __m512 a = _mm512_castpd_ps(_mm512_mask_i32gather_pd(zd, ml, _mm512_castsi512_si256(idx), q, 4));
  const __m512 b = _mm512_castpd_ps(_mm512_mask_i32gather_pd(zd, mh, _mm512_extracti64x4_epi64(idx, 1), q, 4));
  left = _mm512_permutex2var_ps(a, even, b);
  right = _mm512_permutex2var_ps(a, odd, b);
}

// Pairs: each row's two corners (i0, i0 + 1) are adjacent, so one 8-byte gather
// element fetches both (half the gathered elements of one float per corner).
template <bool Pairs>
__attribute__((target("avx512f"))) void advect_row_avx512_t(const float* U, const float* V, const AdvectRow& f, int j,
                                                            int n, float dt0, int i_lo, int i_hi) {
  const int w = n + 2;
  const std::int64_t row = static_cast<std::int64_t>(j) * w;
  const __m512 vdt0 = _mm512_set1_ps(dt0), lo = _mm512_set1_ps(0.5f);
  const __m512 hi = _mm512_set1_ps(static_cast<float>(n) + 0.5f), one = _mm512_set1_ps(1.0f);
  const __m512 py0 = _mm512_set1_ps(static_cast<float>(j));
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i vw = _mm512_set1_epi32(w), vone = _mm512_set1_epi32(1);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int i = i_lo; i <= i_hi; i += 16) {
    const __mmask16 m =
        i_hi - i + 1 >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (i_hi - i + 1)) - 1);
    const std::int64_t c = row + i;
    const __m512 uu = _mm512_maskz_loadu_ps(m, U + c), vv = _mm512_maskz_loadu_ps(m, V + c);
    const __m512i ii = _mm512_add_epi32(_mm512_set1_epi32(i), lane);
    __m512 px = _mm512_sub_ps(_mm512_cvtepi32_ps(ii), _mm512_mul_ps(vdt0, uu));
    __m512 py = _mm512_sub_ps(py0, _mm512_mul_ps(vdt0, vv));
    // if (!(p >= lo)) p = lo; if (p > hi) p = hi;  (a NaN becomes lo)
    px = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(px, lo, _CMP_GE_OQ), lo, px);
    px = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(px, hi, _CMP_GT_OQ), px, hi);
    py = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(py, lo, _CMP_GE_OQ), lo, py);
    py = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(py, hi, _CMP_GT_OQ), py, hi);
    const __m512i i0 = _mm512_cvttps_epi32(px), j0 = _mm512_cvttps_epi32(py);
    const __m512 s1 = _mm512_sub_ps(px, _mm512_cvtepi32_ps(i0)), t1 = _mm512_sub_ps(py, _mm512_cvtepi32_ps(j0));
    const __m512 s0 = _mm512_sub_ps(one, s1), t0 = _mm512_sub_ps(one, t1);
    const __m512i i00 = _mm512_add_epi32(_mm512_mullo_epi32(j0, vw), i0);
    const __m512i i01 = _mm512_add_epi32(i00, vw);
    for (int k = 0; k < f.count; ++k) {
      const float* q = f.q[k];
      const __m512 z = _mm512_setzero_ps();
      __m512 g00, g01, g10, g11;
      if constexpr (Pairs) {
        const __mmask8 ml = static_cast<__mmask8>(m & 0xff), mh = static_cast<__mmask8>(m >> 8);
        gather_pairs(q, i00, ml, mh, even, odd, g00, g10);
        gather_pairs(q, i01, ml, mh, even, odd, g01, g11);
      } else {
        const __m512i i10 = _mm512_add_epi32(i00, vone), i11 = _mm512_add_epi32(i01, vone);
        g00 = _mm512_mask_i32gather_ps(z, m, i00, q, 4);
        g01 = _mm512_mask_i32gather_ps(z, m, i01, q, 4);
        g10 = _mm512_mask_i32gather_ps(z, m, i10, q, 4);
        g11 = _mm512_mask_i32gather_ps(z, m, i11, q, 4);
      }
      const __m512 a0 = _mm512_add_ps(_mm512_mul_ps(t0, g00), _mm512_mul_ps(t1, g01));
      const __m512 a1 = _mm512_add_ps(_mm512_mul_ps(t0, g10), _mm512_mul_ps(t1, g11));
      _mm512_mask_storeu_ps(f.out[k] + c, m, _mm512_add_ps(_mm512_mul_ps(s0, a0), _mm512_mul_ps(s1, a1)));
    }
  }
}
void advect_row_avx512(const float* U, const float* V, const AdvectRow& f, int j, int n, float dt0, int i_lo,
                       int i_hi) {
  advect_row_avx512_t<false>(U, V, f, j, n, dt0, i_lo, i_hi);
}
void advect_row_avx512_pairs(const float* U, const float* V, const AdvectRow& f, int j, int n, float dt0, int i_lo,
                             int i_hi) {
  advect_row_avx512_t<true>(U, V, f, j, n, dt0, i_lo, i_hi);
}
#endif

// ---- project's rows ---------------------------------------------------------------------
// divergence: dj[i] = divergence_cell(uj[i-1], uj[i+1], vd[i], vu[i], n), its division
// by n as the Divisor for c = n says; gradient: uj[i] -= h*(pj[i+1] - pj[i-1]), vj[i] -=
// h*(pu[i] - pd[i]), h = 0.5*n (gradient_sub). Both over i in [lo, hi]; a scene's 1/h
// in place of n (scene_model.hpp's divergence_h and gradient_sub_h, the same
// operations).
template <class T>
void divergence_row_generic(T* dj, const T* uj, const T* vd, const T* vu, int lo, int hi, const Divisor<T>& dv) {
  for (int i = lo; i <= hi; ++i) dj[i] = divergence_h(uj[i - 1], uj[i + 1], vd[i], vu[i], dv.c);
}
template <class T>
void gradient_row_generic(T* uj, T* vj, const T* pj, const T* pd, const T* pu, int lo, int hi, T h) {
  for (int i = lo; i <= hi; ++i) {
    uj[i] = uj[i] - h * (pj[i + 1] - pj[i - 1]);
    vj[i] = vj[i] - h * (pu[i] - pd[i]);
  }
}
#ifdef NUMPIPE_FLUID_X86
__attribute__((target("avx512f"))) void divergence_row_avx512(float* dj, const float* uj, const float* vd,
                                                              const float* vu, int lo, int hi,
                                                              const Divisor<float>& dv) {
  const __m512 half = _mm512_set1_ps(-0.5f), vc = _mm512_set1_ps(dv.c), vr = _mm512_set1_ps(dv.r);
  for (int i = lo; i <= hi; i += 16) {
    const __mmask16 m =
        hi - i + 1 >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (hi - i + 1)) - 1);
    const __m512 ul = _mm512_maskz_loadu_ps(m, uj + i - 1), ur = _mm512_maskz_loadu_ps(m, uj + i + 1);
    const __m512 d = _mm512_maskz_loadu_ps(m, vd + i), u = _mm512_maskz_loadu_ps(m, vu + i);
    const __m512 num = _mm512_mul_ps(half, _mm512_sub_ps(_mm512_add_ps(_mm512_sub_ps(ur, ul), u), d));
    __m512 q;
    if (dv.mode == DivMode::multiply) q = _mm512_mul_ps(num, vr);
    else if (dv.mode == DivMode::reciprocal) q = div_avx512(num, vc, vr, m);
    else q = _mm512_div_ps(num, vc);
    _mm512_mask_storeu_ps(dj + i, m, q);
  }
}
__attribute__((target("avx512f"))) void gradient_row_avx512(float* uj, float* vj, const float* pj, const float* pd,
                                                            const float* pu, int lo, int hi, float hf) {
  const __m512 h = _mm512_set1_ps(hf);
  for (int i = lo; i <= hi; i += 16) {
    const __mmask16 m =
        hi - i + 1 >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (hi - i + 1)) - 1);
    const __m512 pl = _mm512_maskz_loadu_ps(m, pj + i - 1), pr = _mm512_maskz_loadu_ps(m, pj + i + 1);
    const __m512 dn = _mm512_maskz_loadu_ps(m, pd + i), up = _mm512_maskz_loadu_ps(m, pu + i);
    const __m512 u = _mm512_maskz_loadu_ps(m, uj + i), v = _mm512_maskz_loadu_ps(m, vj + i);
    _mm512_mask_storeu_ps(uj + i, m, _mm512_sub_ps(u, _mm512_mul_ps(h, _mm512_sub_ps(pr, pl))));
    _mm512_mask_storeu_ps(vj + i, m, _mm512_sub_ps(v, _mm512_mul_ps(h, _mm512_sub_ps(up, dn))));
  }
}
#endif

using SweepF = void (*)(float*, const float*, const float*, const float*, const float*, const float*, int, int, float,
                        const Divisor<float>&);
using SweepWindowF = void (*)(float*, const float*, int, const float*, const float*, const float*, int, int, float,
                              const Divisor<float>&);
using SplitF = void (*)(const float*, float*, float*, int, bool, float);
using X0RowF = void (*)(float*, const float*, const float*, const float*, int, int, bool, float, float);
using MergeF = void (*)(const float*, const float*, float*, int, int);
using AdvectF = void (*)(const float*, const float*, const AdvectRow&, int, int, float, int, int);
using DivergenceF = void (*)(float*, const float*, const float*, const float*, int, int, const Divisor<float>&);
using GradientF = void (*)(float*, float*, const float*, const float*, const float*, int, int, float);
struct FloatKernels {
  DivergenceF divergence = divergence_row_generic<float>;
  GradientF gradient = gradient_row_generic<float>;
  SweepF sweep = sweep_row_generic<float>;
  SweepWindowF sweep_window = nullptr;  // the aligned window version, where there is one
  SplitF split = split_generic<float>;
  X0RowF x0_row = x0_row_generic<float>;
  MergeF merge = merge_generic<float>;
  AdvectF advect = advect_row_generic;
  AdvectF advect_gather = nullptr;  // the gather version, where there is one
  bool fma = false;  // the reciprocal route is open
  const char* isa = "generic";
};

// The float row kernels for this machine (NUMPIPE_FLUID_CPU_ISA=generic|avx2|avx512
// picks one, for tests and the bench).
FloatKernels pick_kernels(const Tuning& tuning, const char* forced = nullptr) {
  std::string isa = forced ? forced : "";
  if (isa.empty()) isa = tuning.cpu_isa;
  FloatKernels k;
#ifdef NUMPIPE_FLUID_X86
  __builtin_cpu_init();
  const bool has512 = __builtin_cpu_supports("avx512f");
  const bool has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if ((isa.empty() || isa == "avx512") && has512) {
    k.sweep = sweep_row_avx512;
    k.sweep_window = sweep_window_avx512;
    k.split = split_avx512;
    k.x0_row = x0_row_avx512;
    k.merge = merge_avx512;
    k.divergence = divergence_row_avx512;
    k.gradient = gradient_row_avx512;
    // corner pairs by 8-byte gathers; NUMPIPE_FLUID_CPU_GATHER=single: one float per element (bench)
    k.advect_gather = advect_row_avx512_pairs;
    if (tuning.cpu_gather_single) k.advect_gather = advect_row_avx512;
    k.fma = true;
    k.isa = "avx512";
  } else if ((isa.empty() || isa == "avx512" || isa == "avx2") && has2) {
    k.sweep = sweep_row_avx2;
    k.fma = true;
    k.isa = "avx2";
  }
#endif
  return k;
}

#ifdef __linux__
// The CPUs this process may run on, as it started (before any pinning).
const std::vector<int>& process_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> v;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) v.push_back(c);
    return v;
  }();
  return cpus;
}
#endif

void advise_huge_pages(void* p, std::size_t bytes) {
#ifdef __linux__
  const std::uintptr_t page = 4096, a = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
  if (b > a) madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);  // advice only: failure is harmless
#else
  (void)p;
  (void)bytes;
#endif
}

// AnonHugePages of this process (/proc/self/smaps_rollup), for the phase report.
std::string huge_pages_report() {
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return "huge pages: unknown";
  char line[256];
  std::string r = "huge pages: unknown";
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "AnonHugePages:", 14) == 0) {
      r = std::string("AnonHugePages") + (line + 14);
      while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
    }
  std::fclose(f);
  return r;
}

template <class T>
T max_of(T m, T s) {
  return s > m ? s : m;  // react's comparison (exact: any order gives the same maximum)
}
// The maximum of m and a[i] (b null) or a[i]^2 + b[i]^2, i < count.
template <class T>
T max_row(const T* __restrict a, const T* __restrict b, int count, T m) {
  if (!b) {
#pragma omp simd reduction(max : m)
    for (int i = 0; i < count; ++i) m = a[i] > m ? a[i] : m;
  } else {
#pragma omp simd reduction(max : m)
    for (int i = 0; i < count; ++i) {
      const T s = a[i] * a[i] + b[i] * b[i];
      m = s > m ? s : m;
    }
  }
  return m;
}

// x where keep, else +0, by a bitwise select: no branch for the compiler to put the
// computation of x behind (then the loop around it does not vectorise).
template <class T>
inline T keep_if(bool keep, T x) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  U b;
  std::memcpy(&b, &x, sizeof b);
  b &= keep ? ~U(0) : U(0);
  std::memcpy(&x, &b, sizeof b);
  return x;
}
// scene_model.hpp's confinement_force operation for operation, its zero chosen after
// the quotients instead of before them (the same bits), so that a row of it vectorises.
template <class T>
inline void confinement_force_rows(T w, T wl, T wr, T wd, T wu, T inv_h, T eps_h, T& fx, T& fy) {
  const T ex = static_cast<T>(0.5) * inv_h * (wr - wl);
  const T ey = static_cast<T>(0.5) * inv_h * (wu - wd);
  const T len = std::sqrt(ex * ex + ey * ey);
  const bool some = len > T(0);
  fx = keep_if(some, eps_h * ((ey / len) * w));
  fy = keep_if(some, -(eps_h * ((ex / len) * w)));
}

template <class T>
class CpuSolver final : public Solver<T> {
 public:
  // state: d, u, v, d0, u0, v0, each (n+2)^2 values; scene: the step is a scene's
  // (scene_cpu.cpp's stam step on a square box with closed sides), or null.
  CpuSolver(const Params& p, const T* const state[6], const FusedScene<T>* scene = nullptr)
      : p_(p), n_(p.n), w_(p.n + 2) {
    f_.n = p.n;
    const std::size_t cells = static_cast<std::size_t>(w_) * static_cast<std::size_t>(w_);
    FieldVector<T>* const to[6] = {&f_.d, &f_.u, &f_.v, &f_.d0, &f_.u0, &f_.v0};
    for (int k = 0; k < 6; ++k) adopt(*to[k], state[k], cells);
    inv_h_ = static_cast<T>(n_);
    threads_ = std::max(1, omp_get_max_threads());
    if (scene) set_scene(*scene);
    kf_ = pick_kernels(tuning_);
    // Both ways of dividing by c (not a power of two) and of gathering in the
    // advection give the same bits; which is faster depends on the machine (and
    // on how many values fall outside the reciprocal route's range), so the
    // solver tries both (Tuned) unless NUMPIPE_FLUID_CPU_DIV=reciprocal|divide or
    // NUMPIPE_FLUID_CPU_ADVECT=gather|scalar fixes one (tests, bench).
    const std::string& dvenv = tuning_.cpu_div;
    const std::string& adenv = tuning_.cpu_advect;
    const bool recip_ok = kf_.fma && sizeof(T) == 4;
    div_.open = recip_ok && dvenv != "divide" && dvenv != "reciprocal";
    // Where both are open, the IEEE division serves first with AVX-512 (on the
    // 16-core Xeon host it beat the reciprocal route, 6.4 against 8.7 ns/cell/step)
    // and the reciprocal route with AVX2, until the first trial says otherwise.
    div_.current = recip_ok && (dvenv == "reciprocal" || (div_.open && std::string(kf_.isa) != "avx512")) ? 0 : 1;
    const bool gather_ok = kf_.advect_gather != nullptr && sizeof(T) == 4;
    adv_.open = gather_ok && adenv != "gather" && adenv != "scalar";
    adv_.current = gather_ok && adenv != "scalar" ? 0 : 1;
    // Blocks of rows x columns, one window each at a time: columns so that a
    // window (2k+2 rows of x and x0, both colours) stays within kWindowBytes (in
    // L2) with k = the solve's iterations; row strips so that every thread has
    // a block; then k as large as keeps the halo (2 cells per iteration on each
    // side) within a sixth of the block.
    const int k0 = std::min(p.iters, kMaxTemporal);
    const std::size_t window_bytes = tuning_.cpu_window_bytes.value_or(kWindowBytes);  // tests: smaller
    const int per_row = static_cast<int>(std::min<std::size_t>(
        window_bytes / (static_cast<std::size_t>(2 * k0 + 2) * 4 * sizeof(T)), 1u << 28));
    const int cb = std::max(64, 2 * per_row - 4 * k0);  // columns per block
    ncols_ = std::max(1, (w_ + cb - 1) / cb);
    // More blocks than threads (NUMPIPE_FLUID_CPU_BLOCKS=b per thread): near-square
    // blocks, the least halo for their number.
    const int per_thread = tuning_.cpu_blocks;
    const int blocks = threads_ * per_thread;
    if (per_thread > 1)
      ncols_ = std::clamp(static_cast<int>(std::sqrt(static_cast<double>(blocks))), ncols_, std::max(ncols_, w_ / 64));
    nstrips_ = std::clamp((blocks + ncols_ - 1) / ncols_, 1, std::max(1, w_ / 32));
    const int block_w = (w_ + ncols_ - 1) / ncols_, block_h = w_ / nstrips_;
    kmax_ = std::clamp(std::min(block_w, block_h) / 12, 1, k0);
    wpw_ = window_pitch((block_w + 1) / 2 + 2 * kmax_ + 2 + (kmax_ + 3) / 2);  // (cut: edge blocks up to k + 2 wider)
    windows_.resize(static_cast<std::size_t>(threads_));
    const std::size_t window_size = static_cast<std::size_t>(slots()) * 4 * wpw_ + 2 * kWindowPad + 64 / sizeof(T);
    for (auto& win : windows_) win.assign(window_size, T(0));
    partial_.assign(static_cast<std::size_t>(3 * nstrips_ * ncols_), T(0));
    if ((p_.iters + kmax_ - 1) / kmax_ > 1) adopt(scratch_, std::vector<T>(f_.cells(), T(0)).data(), f_.cells());
    if (pin_) pin_threads();
    initial_maxima();
  }

  ~CpuSolver() override {
    unpin_master();
    if (!phases_on_) return;  // NUMPIPE_FLUID_CPU_PHASES: where a run's time went, for the bench
    static const char* const names[] = {"diffuse", "divergence", "pressure solve", "gradient", "advect", "other"};
    double total = 0;
    for (double t : phase_) total += t;
    std::fprintf(stderr, "fluid-step cpu phases (%lld steps, %.3f s):", static_cast<long long>(c_.steps), total);
    for (int k = 0; k < 6; ++k) std::fprintf(stderr, " %s %.1f%%", names[k], total > 0 ? 100 * phase_[k] / total : 0.0);
    // the solves' blocks: how long the slowest block of a pass took against the mean block
    if (block_mean_ > 0)
      std::fprintf(stderr, "; solve blocks: mean %.3f s, slowest %.3f s (%.2fx)", block_mean_, block_max_,
                   block_max_ / block_mean_);
    std::fprintf(stderr, "; %s\n", huge_pages_report().c_str());
  }

  double advance(int steps) override {
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) step();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void fetch(Fields<T>& out) override { out = f_; }
  Counters counters() const override { return c_; }

 private:
  const Tuning tuning_ = tuning_from_environment();  // first: the members below start from it
  Params p_;
  int n_, w_;  // interior size, row width n+2
  Fields<T> f_;
  std::vector<T> scratch_;               // the other buffer of a solve's passes (more than one pass)
  std::vector<std::vector<T>> windows_;  // rolling windows, one per thread
  std::vector<T> partial_;               // per block maxima of a pass, for up to 3 solves
  int threads_ = 1, nstrips_ = 1, ncols_ = 1, kmax_ = 1, wpw_ = 1;  // blocks, fused iterations, window pairs
  // Knobs for the bench (the same bits either way): NUMPIPE_FLUID_CPU_TRAPEZOID=0
  // updates the whole window at every half-step (as before the trapezoid);
  // NUMPIPE_FLUID_CPU_PREFETCH=R prefetches R rows ahead of a pass's loads (0: none).
  bool trapezoid_ = tuning_.cpu_trapezoid;
  // NUMPIPE_FLUID_CPU_ADVECT_TILE=C: the advection's column tiles (0: whole rows).
  int adv_tile_ = tuning_.cpu_advect_tile;
  // NUMPIPE_FLUID_CPU_HUGE=0: no transparent huge pages for the scratch buffer (the
  // fields' own storage asks for them: common/host_vector.hpp);
  // NUMPIPE_FLUID_CPU_PIN=0|1: OpenMP threads pinned one per CPU (unless OMP_PROC_BIND,
  // OMP_PLACES or GOMP_CPU_AFFINITY say otherwise).
  bool huge_ = tuning_.cpu_huge;
  bool pin_ = tuning_.cpu_pin;
  bool pinned_master_ = false;
  // A copy of `from` in a buffer advised for transparent huge pages before its
  // first touch (Linux): the passes' row streams and the advection's gathers then
  // walk 2 MiB pages (fewer TLB misses, and far fewer nested page walks in a VM).
  template <class To>
  void adopt(To& to, const T* from, std::size_t count) const {
    To().swap(to);
    to.reserve(count);
    if (huge_) advise_huge_pages(to.data(), count * sizeof(T));
    to.assign(from, from + count);
  }
  // One CPU per OpenMP thread, the i-th of the process's CPUs for thread i, so
  // that a thread's window stays in its core's L2 from pass to pass. The master's
  // own mask is restored when the solver goes.
  void pin_threads() {
#ifdef __linux__
    if (std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES") || std::getenv("GOMP_CPU_AFFINITY")) return;
    const std::vector<int>& cpus = process_cpus();
    if (static_cast<int>(cpus.size()) < threads_) return;
#pragma omp parallel num_threads(threads_)
    {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[static_cast<std::size_t>(omp_get_thread_num())], &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    }
    pinned_master_ = true;
#endif
  }
  void unpin_master() {
#ifdef __linux__
    if (!pinned_master_) return;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c : process_cpus()) CPU_SET(c, &all);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all);
#endif
  }
  int prefetch_rows_ = tuning_.cpu_prefetch;
  // NUMPIPE_FLUID_CPU_GROUP=g: steps of the wavefront swept together (pass_block).
  int group_ = std::clamp(tuning_.cpu_group, 1, kMaxGroup);
  bool balance_ = tuning_.cpu_balance;
  // NUMPIPE_FLUID_CPU_ALIGNED=0: the half-sweeps by unaligned loads (as before the window kernel).
  bool aligned_ = tuning_.cpu_aligned;
  int slots() const { return 2 * kmax_ + 1 + group_; }  // window rows: 2k + 1 behind a group of g
  // The window's planes start on 64-byte lines (the aligned half-sweep reads and
  // writes whole lines), with kWindowPad elements readable before and after.
  static constexpr int kWindowPad = 64;
  T* window(int thread) {
    const auto p = reinterpret_cast<std::uintptr_t>(windows_[static_cast<std::size_t>(thread)].data() + kWindowPad);
    return reinterpret_cast<T*>((p + 63) & ~std::uintptr_t(63));
  }
  // Elements per plane: `need` rounded up to whole lines, then to a number of
  // lines m whose small multiples stay clear of 4 KiB (k*m mod 64 not in
  // {-1, 0, 1} for k <= 9): the planes a half-sweep reads sit 1 to 9 planes from
  // the one it writes, and addresses 4 KiB apart (within a line) make Intel cores
  // take a load for a dependant of an earlier store.
  static int window_pitch(int need) {
    const int per_line = 64 / static_cast<int>(sizeof(T));
    int m = (need + per_line - 1) / per_line;
    auto clear = [](int lines) {
      for (int k = 1; k <= 9; ++k) {
        const int r = k * lines % 64;
        if (r == 0 || r == 1 || r == 63) return false;
      }
      return true;
    };
    while (!clear(m)) ++m;
    return m * per_line;
  }
  FloatKernels kf_;
  // An online choice between two kernels that compute the same bits. div_: 0 the
  // reciprocal route, 1 the IEEE division; adv_: 0 gathers, 1 scalar loads.
  // Steps 1 and 2 of every kTrialPeriod race the two: the u diffusion with option
  // 0 and the v diffusion with option 1 in step 1, the other way round in step 2
  // (two solves of the slower option, not whole steps), the advection with option
  // 0 in step 1 and 1 in step 2; the faster serves until the next trial.
  static constexpr int kTrialPeriod = 64;
  struct Tuned {
    bool open = false;  // both options available and none forced
    int current = 1;
    double time[2] = {0, 0};
  };
  Tuned div_, adv_;
  int trial_step() const {
    const long long r = c_.steps % kTrialPeriod;
    return r == 1 || r == 2 ? static_cast<int>(r) : 0;
  }
  // The division's option for the diffusion of `field` in this step.
  int div_option(int field) const {
    const int r = trial_step();
    if (!div_.open || r == 0 || (field != kFieldU && field != kFieldV)) return div_.current;
    return (field == kFieldU) == (r == 1) ? 0 : 1;
  }
  int adv_option() const {
    const int r = trial_step();
    return adv_.open && r != 0 ? r - 1 : adv_.current;
  }
  void record(Tuned& t, int opt, double seconds) {
    if (!t.open || trial_step() == 0) return;
    t.time[opt] += seconds;
  }
  void decide(Tuned& t) {  // after the second trial step
    if (!t.open || trial_step() != 2) return;
    t.current = t.time[1] < t.time[0] ? 1 : 0;
    t.time[0] = t.time[1] = 0;
  }
  static double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

 public:
  std::string kernels() const override {
    if (scene_)
      return std::string("scene path, blocked passes (") + (sizeof(T) == 4 ? "fp32" : "fp64") + "), " +
             std::to_string(fix_.size()) + " cells beside obstacles, " + plain_kernels();
    return plain_kernels();
  }
  // A scene's d, u, v, d0, u0, v0 and T (empty without one).
  void fetch_scene(T* const dst[6], FieldVector<T>& t) const {
    const FieldVector<T>* const from[6] = {&f_.d, &f_.u, &f_.v, &f_.d0, &f_.u0, &f_.v0};
    for (int k = 0; k < 6; ++k) std::copy(from[k]->begin(), from[k]->end(), dst[k]);
    t = t_;
  }

 private:
  std::string plain_kernels() const {
    if (sizeof(T) == 8) return "generic (fp64), IEEE division, scalar advection";
    std::string k = std::string(kf_.isa) + ", " +
                    (div_.current == 0 && kf_.fma ? "reciprocal" : "IEEE") + " division" +
                    (div_.open ? " (chosen online)" : "") + ", " +
                    (adv_.current == 0 && kf_.advect_gather ? "gather" : "scalar") + " advection" +
                    (adv_.open ? " (chosen online)" : "") + ", " + std::to_string(nstrips_) + "x" +
                    std::to_string(ncols_) + " blocks, wavefront groups of " + std::to_string(group_) +
                    (aligned_ && kf_.sweep_window ? ", aligned window" : "");
    return k;
  }

 private:
  bool phases_on_ = tuning_.cpu_phases;
  double phase_[6] = {0, 0, 0, 0, 0, 0};
  // Per pass: the mean and the largest of its blocks' times, summed over passes
  // (NUMPIPE_FLUID_CPU_PHASES).
  double block_mean_ = 0, block_max_ = 0;
  std::vector<double> block_time_;
  std::chrono::steady_clock::time_point mark_;
  void phase(int k) {  // charges the time since the last mark to phase k
    if (!phases_on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (k >= 0) phase_[k] += std::chrono::duration<double>(now - mark_).count();
    mark_ = now;
  }
  T mv_ = 0, md_ = 0;          // react's maxima of the source buffers as they stand
  bool inj_v_ = false, inj_d_ = false;  // react's decision for this step
  Counters c_;

  // ---- a scene (scene_cpu.cpp's stam step on a square box with closed sides) ----------------
  // Per row y, the runs of solid cells and of cells with a code (solid or beside
  // the obstacle), and the fluid cells beside it (column, code), each sorted by
  // column: rows [begin[y], begin[y + 1]).
  struct Run {
    int x0, x1;  // columns, inclusive
  };
  struct Runs {
    std::vector<int> begin;
    std::vector<Run> run;
  };
  bool scene_ = false, vort_ = false, buoy_ = false;
  T inv_h_ = T(1);  // 1/h: N for a plain state
  SceneForces forces_;
  std::vector<std::uint8_t> code_;      // the obstacle's cell codes (scene_model.hpp), empty without one
  std::vector<std::uint8_t> row_has_;   // [n + 2]: 1 where row y has a cell with a code
  Runs solid_, special_;
  std::vector<int> fix_begin_;
  std::vector<ObstacleLists::Fix> fix_;
  std::vector<ObstacleLists::Border> border_;
  FieldVector<T> emit_[4];                   // d, u, v, T; each empty without one
  std::vector<std::uint8_t> emit_rows_[4];   // [n + 2]: 1 where the row holds a value that is not +0
  FieldVector<T> t_, t0_, fu_, fv_, wabs_;   // temperature and its work buffer, forces, |vorticity|
  std::vector<std::vector<T>> rows_;         // a natural-layout row per thread (pass_block's x0)

  bool obstacle_row(int y) const { return !row_has_.empty() && row_has_[static_cast<std::size_t>(y)]; }
  bool solid_cell(int x, int y) const {
    return !code_.empty() && (code_[static_cast<std::size_t>(ix(x, y, w_))] & kSolidSelf);
  }
  // Over columns [lo, hi] of row y: gap(a, b) for each stretch outside the runs,
  // cell(i) for each column inside one.
  template <class Gap, class Cell>
  static void for_runs(const Runs& r, int y, int lo, int hi, Gap&& gap, Cell&& cell) {
    int x = lo;
    const int e = r.begin[static_cast<std::size_t>(y) + 1];
    for (int q = r.begin[static_cast<std::size_t>(y)]; q < e && x <= hi; ++q) {
      const Run& R = r.run[static_cast<std::size_t>(q)];
      if (R.x1 < x) continue;
      if (R.x0 > hi) break;
      if (R.x0 > x) gap(x, R.x0 - 1);
      const int b = std::min(R.x1, hi);
      for (int i = std::max(R.x0, x); i <= b; ++i) cell(i);
      x = R.x1 + 1;
    }
    if (x <= hi) gap(x, hi);
  }

  void set_scene(const FusedScene<T>& sc) {
    scene_ = true;
    inv_h_ = sc.inv_h;
    const int n = n_, w = w_;
    const std::size_t cells = f_.cells();
    if (sc.obstacle) {
      const ObstacleLists& ob = *sc.obstacle;
      code_ = ob.code;
      border_ = ob.border;
      row_has_.assign(static_cast<std::size_t>(n) + 2, 0);
      for (Runs* r : {&solid_, &special_}) r->begin.assign(static_cast<std::size_t>(n) + 3, 0);
      fix_begin_.assign(static_cast<std::size_t>(n) + 3, 0);
      for (int y = 0; y <= n + 1; ++y) {
        const auto yy = static_cast<std::size_t>(y);
        solid_.begin[yy] = static_cast<int>(solid_.run.size());
        special_.begin[yy] = static_cast<int>(special_.run.size());
        fix_begin_[yy] = static_cast<int>(fix_.size());
        if (y < 1 || y > n) continue;
        const std::uint8_t* cd = code_.data() + ix(0, y, w);
        auto runs = [&](Runs& r, auto&& in) {
          for (int i = 1; i <= n; ++i) {
            if (!in(cd[i])) continue;
            int e = i;
            while (e < n && in(cd[e + 1])) ++e;
            r.run.push_back(Run{i, e});
            i = e;
          }
        };
        runs(solid_, [](int c) { return (c & kSolidSelf) != 0; });
        runs(special_, [](int c) { return c != 0; });
        for (int i = 1; i <= n; ++i)
          if (cd[i] && !(cd[i] & kSolidSelf)) fix_.push_back(ObstacleLists::Fix{i, cd[i]});
        row_has_[yy] = special_.run.size() > static_cast<std::size_t>(special_.begin[yy]);
      }
      solid_.begin[static_cast<std::size_t>(n) + 2] = static_cast<int>(solid_.run.size());
      special_.begin[static_cast<std::size_t>(n) + 2] = static_cast<int>(special_.run.size());
      fix_begin_[static_cast<std::size_t>(n) + 2] = static_cast<int>(fix_.size());
    }
    for (int f = 0; f < 4; ++f) {
      if (!sc.emit[f]) continue;
      adopt(emit_[f], sc.emit[f], cells);
      emit_rows_[f].assign(static_cast<std::size_t>(n) + 2, 0);
      for (int y = 0; y <= n + 1; ++y) {
        const T* r = sc.emit[f] + ix(0, y, w);
        bool any = false;  // a value whose bits are not +0's (-0 included)
        for (int x = 0; x < w; ++x) any |= !(r[x] == T(0) && !std::signbit(r[x]));
        emit_rows_[f][static_cast<std::size_t>(y)] = any;
      }
    }
    // zeros in huge pages, filled on all threads
    auto zeros = [&](FieldVector<T>& to) {
      FieldVector<T>().swap(to);
      to.reserve(cells);
      if (huge_) advise_huge_pages(to.data(), cells * sizeof(T));
      to.resize(cells);
      parallel_fill(to.data(), cells, T(0));
    };
    if (sc.temperature) {
      adopt(t_, sc.temperature, cells);
      zeros(t0_);
    }
    forces_ = sc.forces;
    vort_ = forces_.vorticity_on();
    buoy_ = forces_.buoyancy_on();
    if (vort_ || buoy_) {
      zeros(fu_);
      zeros(fv_);
    }
    if (vort_) zeros(wabs_);
    rows_.assign(static_cast<std::size_t>(threads_), std::vector<T>(static_cast<std::size_t>(w) + 64, T(0)));
  }

  // The forces from the state at the start of the step (scene_cpu.cpp's forces():
  // the confinement, a solid neighbour's |w| the cell's own, then buoyancy added to
  // f_y; 0 in solid cells). Cell by cell in its order; both forces in one pass (each
  // cell's f_y depends on that cell only), vector loops between the obstacle's runs.
  void scene_forces() {
    const int n = n_, w = w_;
    const T inv_h = inv_h_;
    set_bnd(kU, f_.u.data());  // the ghost cells by the sides' rules first (an input state's may be stale)
    set_bnd(kV, f_.v.data());
    const T* u = f_.u.data();
    const T* v = f_.v.data();
    T* fu = fu_.data();
    T* fv = fv_.data();
    T* wa = vort_ ? wabs_.data() : nullptr;
    const bool vort = vort_, buoy = buoy_;
    if (vort) {
#pragma omp parallel for schedule(dynamic, kRowChunk)
      for (int j = 1; j <= n; ++j) {
        const std::int64_t r = ix(0, j, w);
#pragma omp simd
        for (int i = 1; i <= n; ++i)
          wa[r + i] = std::fabs(vorticity_cell(u[r + i - w], u[r + i + w], v[r + i - 1], v[r + i + 1], inv_h));
        if (obstacle_row(j)) for_runs(solid_, j, 1, n, [](int, int) {}, [&](int i) { wa[r + i] = T(0); });
      }
      set_bnd(kScalar, wa);  // closed sides: copies (kSceneCopy)
    }
    const T eps_h = static_cast<T>(forces_.vorticity) / inv_h;
    const T ba = static_cast<T>(forces_.buoyancy_a), bb = static_cast<T>(forces_.buoyancy_b), amb = static_cast<T>(forces_.ambient);
    const T* d = f_.d.data();
    const T* t = t_.empty() ? nullptr : t_.data();
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = 1; j <= n; ++j) {
      const std::int64_t r = ix(0, j, w);
      auto plain = [&](int lo, int hi) {
        if (vort) {
#pragma omp simd
          for (int i = lo; i <= hi; ++i) {
            const std::int64_t c = r + i;
            T x, y;
            confinement_force_rows(vorticity_cell(u[c - w], u[c + w], v[c - 1], v[c + 1], inv_h), wa[c - 1], wa[c + 1],
                              wa[c - w], wa[c + w], inv_h, eps_h, x, y);
            fu[c] = x;
            fv[c] = y;
          }
        }
        if (buoy && t) {
#pragma omp simd
          for (int i = lo; i <= hi; ++i) {
            const T fb = buoyancy_force(d[r + i], t[r + i], ba, bb, amb);
            fv[r + i] = vort ? fv[r + i] + fb : fb;
          }
        } else if (buoy) {
#pragma omp simd
          for (int i = lo; i <= hi; ++i) {
            const T fb = buoyancy_force(d[r + i], amb, ba, bb, amb);
            fv[r + i] = vort ? fv[r + i] + fb : fb;
          }
        }
      };
      if (!obstacle_row(j)) {
        plain(1, n);
        continue;
      }
      for_runs(special_, j, 1, n, plain, [&](int i) {
        const std::int64_t c = r + i;
        const int cd = code_[static_cast<std::size_t>(c)];
        if (cd & kSolidSelf) {
          fu[c] = fv[c] = T(0);
          return;
        }
        if (vort) {
          const T wc = wa[c];
          confinement_force(vorticity_cell(u[c - w], u[c + w], v[c - 1], v[c + 1], inv_h), cd & kSolidL ? wc : wa[c - 1],
                            cd & kSolidR ? wc : wa[c + 1], cd & kSolidD ? wc : wa[c - w], cd & kSolidU ? wc : wa[c + w],
                            inv_h, eps_h, fu[c], fv[c]);
        }
        if (buoy) {
          const T fb = buoyancy_force(d[c], t ? t[c] : amb, ba, bb, amb);
          fv[c] = vort ? fv[c] + fb : fb;
        }
      });
    }
  }

  // A scalar's solid cells beside fluid: the mean of their fluid neighbours for the
  // advection (fill; summed left, right, down, up), 0 again after it.
  void fill_border(T* q) const {
    for (const ObstacleLists::Border& b : border_) q[b.c] = border_mean(q, b);
  }
  void clear_border(T* q) const {
    for (const ObstacleLists::Border& b : border_) q[b.c] = T(0);
  }

  // scene_cpu.cpp's step: react (the decision; the sources inside the solves), the
  // forces, the velocity's diffusions with add_source, the emitters and the forces
  // inside their passes' x0, project, advect, project; the density's (and the
  // temperature's) diffusion with its emitter, advection with the obstacle's border.
  void scene_step() {
    auto& F = f_;
    react_decide();
    if (vort_ || buoy_) scene_forces();
    const int oa = adv_option();
    double ta = velocity_step({kU, &F.u0, &F.u, kFieldU, p_.visc, false, 1, vort_ ? fu_.data() : nullptr, T(-1)},
                              {kV, &F.v0, &F.v, kFieldV, p_.visc, false, 2, vort_ || buoy_ ? fv_.data() : nullptr, T(-1)});
    // the temperature beside the density (independent: its work buffer cleared by
    // react, no react source; closed sides: the ambient value never enters)
    const bool temp = !t_.empty();
    if (temp) {
      diffuse({{kScalar, &F.d0, &F.d, kFieldD, p_.diff, true, 0, nullptr, T(1)},
               {kScalar, &t0_, &t_, -1, p_.diff, false, 3, nullptr, T(1)}});
    } else {
      diffuse({{kScalar, &F.d0, &F.d, kFieldD, p_.diff, true, 0, nullptr, T(1)}});
    }
    fill_border(F.d0.data());
    if (temp) fill_border(t0_.data());
    const double t0 = now_s();
    if (temp) advect(F.u.data(), F.v.data(), {{F.d.data(), F.d0.data()}, {t_.data(), t0_.data()}});
    else advect(F.u.data(), F.v.data(), {{F.d.data(), F.d0.data()}});
    ta += now_s() - t0;
    clear_border(F.d0.data());
    set_bnd(kScalar, F.d.data());
    if (temp) {
      clear_border(t0_.data());
      set_bnd(kScalar, t_.data());
    }
    record(adv_, oa, ta);
  }

  // ---- natural-layout kernels ------------------------------------------------------
  void set_bnd(int b, T* x) const {
    const int n = n_, w = w_;
    for (int i = 1; i <= n; ++i) {
      x[ix(0, i, w)] = b == kU ? -x[ix(1, i, w)] : x[ix(1, i, w)];
      x[ix(n + 1, i, w)] = b == kU ? -x[ix(n, i, w)] : x[ix(n, i, w)];
      x[ix(i, 0, w)] = b == kV ? -x[ix(i, 1, w)] : x[ix(i, 1, w)];
      x[ix(i, n + 1, w)] = b == kV ? -x[ix(i, n, w)] : x[ix(i, n, w)];
    }
    set_corners(x);
  }
  void set_corners(T* x) const {
    const int n = n_, w = w_;
    x[ix(0, 0, w)] = corner(x[ix(1, 0, w)], x[ix(0, 1, w)]);
    x[ix(n + 1, 0, w)] = corner(x[ix(n, 0, w)], x[ix(n + 1, 1, w)]);
    x[ix(0, n + 1, w)] = corner(x[ix(1, n + 1, w)], x[ix(0, n, w)]);
    x[ix(n + 1, n + 1, w)] = corner(x[ix(n, n + 1, w)], x[ix(n + 1, n, w)]);
  }
  std::int64_t corner_index(int k) const {
    const int e = n_ + 1;
    return ix(k & 1 ? e : 0, k & 2 ? e : 0, w_);
  }

  // react's maxima of the initial sources (later steps take them from the passes).
  void initial_maxima() {
    const std::int64_t cells = static_cast<std::int64_t>(f_.cells());
    const T* d0 = f_.d0.data();
    const T* u0 = f_.u0.data();
    const T* v0 = f_.v0.data();
    const T lowest = -std::numeric_limits<T>::infinity();
    std::vector<T> pv(static_cast<std::size_t>(threads_), lowest), pd(static_cast<std::size_t>(threads_), lowest);
#pragma omp parallel num_threads(threads_)
    {
      T mv = lowest, md = lowest;
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < cells; ++i) {
        mv = max_of(mv, u0[i] * u0[i] + v0[i] * v0[i]);
        md = max_of(md, d0[i]);
      }
      pv[static_cast<std::size_t>(omp_get_thread_num())] = mv;
      pd[static_cast<std::size_t>(omp_get_thread_num())] = md;
    }
    mv_ = md_ = lowest;
    for (int t = 0; t < threads_; ++t) {
      mv_ = max_of(mv_, pv[static_cast<std::size_t>(t)]);
      md_ = max_of(md_, pd[static_cast<std::size_t>(t)]);
    }
  }

  // react: the decision from the maxima; the sources themselves are generated by the solves.
  void react_decide() {
    inj_v_ = inj_d_ = false;
    if (p_.forcing == Forcing::react) {
      inj_v_ = mv_ < T(kReactVelocityThreshold);
      inj_d_ = md_ < T(kReactDensityThreshold);
    }
    c_.velocity_injections += inj_v_;
    c_.density_injections += inj_d_;
  }
  T source_at(int field, int x, int y) const {
    return react_source(field, x, y, n_, inj_v_, inj_d_, T(p_.force), T(p_.source));
  }
  // Calls fn(x) for the columns of row y in [x_lo, x_hi) where react may inject.
  template <class F>
  void injection_points(int y, int x_lo, int x_hi, F&& fn) const {
    const int n = n_;
    if (y == n / 2 && n / 2 >= x_lo && n / 2 < x_hi) fn(n / 2);
    if (y % kReactLattice == 0 && y >= kReactLattice && y < n) {
      const int first = std::max(kReactLattice, (x_lo + kReactLattice - 1) / kReactLattice * kReactLattice);
      for (int x = first; x < std::min(n, x_hi); x += kReactLattice) fn(x);
    }
  }

  // add_source on the boundary layer of x (its interior is overwritten later in the step).
  void add_zero_source_boundary(T* x) const {
    const T zero = T(p_.dt) * T(0);
    const int e = n_ + 1, w = w_;
    for (int i = 0; i <= e; ++i) {
      x[ix(i, 0, w)] = x[ix(i, 0, w)] + zero;
      x[ix(i, e, w)] = x[ix(i, e, w)] + zero;
    }
    for (int j = 1; j < e; ++j) {
      x[ix(0, j, w)] = x[ix(0, j, w)] + zero;
      x[ix(e, j, w)] = x[ix(e, j, w)] + zero;
    }
  }

  // diffuse(b, x, x0, k) of up to three fields at once (they are independent):
  // their blocks share one pass over the threads, so that a slow core holds up
  // one barrier instead of three and the blocks of all three balance the load.
  // A scene's: field -1 (the temperature: no react source), its emitter (emit: 0 d,
  // 1 u, 2 v, 3 T; -1 none), a force added after it, sigma of gs_cell_solid.
  struct Diffusion {
    int b;
    FieldVector<T>* x;
    const FieldVector<T>* x0;
    int field;
    double k;
    bool max_out;
    int emit = -1;
    const T* force = nullptr;
    T sigma = T(1);
  };
  void diffuse(std::initializer_list<Diffusion> fields) {
    Solve S[3];
    int count = 0;
    for (const Diffusion& d : fields) {
      // diffuse_a's dt*k*N*N; a scene's dt*k/h^2 (scene_cpu.cpp), the same where 1/h = N
      const T a = scene_ ? T(p_.dt) * static_cast<T>(d.k) * inv_h_ * inv_h_ : diffuse_a(T(p_.dt), T(d.k), n_);
      const bool emits = d.emit >= 0 && !emit_[d.emit].empty();
      S[count++] = Solve{d.b,
                         d.x->data(),
                         d.x0->data(),
                         a,
                         T(1) + T(4) * a,
                         d.field,
                         d.field,
                         d.max_out ? 1 : 0,
                         div_option(d.field),
                         emits ? emit_[d.emit].data() : nullptr,
                         emits ? emit_rows_[d.emit].data() : nullptr,
                         d.force,
                         d.sigma};
    }
    double busy[3] = {0, 0, 0};  // the solves' block times, for the division's trial steps only
    const bool trial = div_.open && trial_step() != 0;
    lin_solve(S, count, trial ? busy : nullptr);
    for (int i = 0; i < count; ++i) {
      if (S[i].max) md_ = finish_max(i, S[i].x, nullptr);
      if (trial && (S[i].gen == kFieldU || S[i].gen == kFieldV)) record(div_, S[i].div_opt, busy[i]);
    }
  }

  // Stam's velocity step (the stam scheme and a scene's): u and v diffused together,
  // projected, advected, projected again; the seconds of the advection (the trials').
  double velocity_step(const Diffusion& du, const Diffusion& dv) {
    auto& F = f_;
    diffuse({du, dv});
    project(F.u0, F.v0, F.u, F.v, false);
    const double t0 = now_s();
    advect(F.u0.data(), F.v0.data(), {{F.u.data(), F.u0.data()}, {F.v.data(), F.v0.data()}});
    const double seconds = now_s() - t0;
    set_bnd(kU, F.u.data());
    set_bnd(kV, F.v.data());
    project(F.u, F.v, F.u0, F.v0, true);
    return seconds;
  }

  // Every interior row on the threads: row(j, lo, hi) over a row without the
  // obstacle and over the runs of cells without a code, cell(i, j) for a cell with one.
  template <class Row, class Cell>
  void rows_beside_obstacle(const Row& row, const Cell& cell) {
    const int n = n_;
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = 1; j <= n; ++j) {
      if (!obstacle_row(j)) {
        row(j, 1, n);
        continue;
      }
      for_runs(special_, j, 1, n, [&](int lo, int hi) { row(j, lo, hi); }, [&](int i) { cell(i, j); });
    }
  }

  // project(u, v, p, div): div and its set_bnd, the solve from a generated zero
  // pressure (with react's velocity maximum p^2 + div^2 when max_out), the gradient.
  // A scene's rows beside its obstacle: the row kernels between the runs of cells
  // with a code, those cells by scene_cpu.cpp's formulas (scene_model.hpp).
  void project(FieldVector<T>& uvec, FieldVector<T>& vvec, FieldVector<T>& pvec, FieldVector<T>& dvec, bool max_out) {
    const int w = w_;
    T* u = uvec.data();
    T* v = vvec.data();
    T* pr = pvec.data();
    T* div = dvec.data();
    const T inv_h = inv_h_;
    const Divisor<T> dn = make_divisor(inv_h, kf_.fma && div_.current == 0);
    const T hg = T(0.5) * inv_h;  // gradient_sub's 0.5*N (gradient_sub_h's 0.5/h)
    auto div_row = [&](int j, int lo, int hi) {
      const T* uj = u + ix(0, j, w);
      const T* vd = v + ix(0, j - 1, w);
      const T* vu = v + ix(0, j + 1, w);
      T* dj = div + ix(0, j, w);
      if constexpr (sizeof(T) == 4) kf_.divergence(dj, uj, vd, vu, lo, hi, dn);
      else divergence_row_generic<T>(dj, uj, vd, vu, lo, hi, dn);
    };
    auto grad_row = [&](int j, int lo, int hi) {
      const T* pj = pr + ix(0, j, w);
      const T* pd = pr + ix(0, j - 1, w);
      const T* pu = pr + ix(0, j + 1, w);
      T* uj = u + ix(0, j, w);
      T* vj = v + ix(0, j, w);
      if constexpr (sizeof(T) == 4) kf_.gradient(uj, vj, pj, pd, pu, lo, hi, hg);
      else gradient_row_generic<T>(uj, vj, pj, pd, pu, lo, hi, hg);
    };
    rows_beside_obstacle(div_row, [&](int i, int j) {
      const std::int64_t c = ix(i, j, w);
      const int cd = code_[static_cast<std::size_t>(c)];
      div[c] = cd & kSolidSelf ? T(0) : divergence_solid(u[c], v[c], u[c - 1], u[c + 1], v[c - w], v[c + w], cd, inv_h);
    });
    set_bnd(kScalar, div);
    phase(1);
    const Solve pressure{kScalar, pr, div, T(1), T(4), -1, -1, max_out ? 2 : 0, div_.current, nullptr, nullptr, nullptr,
                         T(1)};
    lin_solve(&pressure, 1, nullptr);
    if (max_out) mv_ = finish_max(0, pr, div);
    phase(2);
    rows_beside_obstacle(grad_row, [&](int i, int j) {  // a solid neighbour's pressure is the cell's own
      const std::int64_t c = ix(i, j, w);
      const int cd = code_[static_cast<std::size_t>(c)];
      if (cd & kSolidSelf) {
        u[c] = v[c] = T(0);
        return;
      }
      const T pc = pr[c];
      u[c] = gradient_sub_h(u[c], cd & kSolidL ? pc : pr[c - 1], cd & kSolidR ? pc : pr[c + 1], inv_h);
      v[c] = gradient_sub_h(v[c], cd & kSolidD ? pc : pr[c - w], cd & kSolidU ? pc : pr[c + w], inv_h);
    });
    set_bnd(kU, u);
    set_bnd(kV, v);
    phase(3);
  }

  // out <- q advected by (U, V), interior only; up to three fields by one velocity,
  // the interpolation weights computed once per cell. A scene's solid cells get 0.
  void advect(const T* U, const T* V, std::initializer_list<std::pair<T*, const T*>> jobs) const {
    const int n = n_, w = w_;
    const T dt0 = T(p_.dt) * inv_h_;
    std::pair<T*, const T*> job[3] = {};
    int count = 0;
    for (const auto& j : jobs) job[count++] = j;
    // row j's cells [lo, hi], a scene's solid cells aside (0)
    auto solid_aside = [&](int j, int lo, int hi, auto&& row) {
      if (!obstacle_row(j)) {
        row(lo, hi);
        return;
      }
      for_runs(solid_, j, lo, hi, row, [&](int i) {
        for (int k = 0; k < count; ++k) job[k].first[ix(i, j, w)] = T(0);
      });
    };
    if constexpr (sizeof(T) == 4) {
      AdvectRow f{};
      f.count = count;
      for (int k = 0; k < count; ++k) {
        f.out[k] = job[k].first;
        f.q[k] = job[k].second;
      }
      const AdvectF row = adv_option() == 0 && kf_.advect_gather ? kf_.advect_gather : kf_.advect;
      // Chunks of rows as threads come free, each in tiles of adv_tile_ columns:
      // the rows that the back-traces gather from, a few dozen around the row at
      // hand, then stay in L2 across the chunk's rows.
      const int tile = adv_tile_ > 0 ? std::min(adv_tile_, n) : n;
      const int tiles = (n + tile - 1) / tile, chunk = adv_tile_ > 0 ? 4 * kRowChunk : kRowChunk;
#pragma omp parallel for schedule(dynamic, 1)
      for (int ja = 1; ja <= n; ja += chunk) {
        const int jb = std::min(n, ja + chunk - 1);
        for (int b = 0; b < tiles; ++b) {
          const int i_lo = 1 + b * tile, i_hi = std::min(n, i_lo + tile - 1);
          for (int j = ja; j <= jb; ++j)
            solid_aside(j, i_lo, i_hi, [&](int lo, int hi) { row(U, V, f, j, n, dt0, lo, hi); });
        }
      }
      return;
    }
#pragma omp parallel for schedule(dynamic, kRowChunk)
    for (int j = 1; j <= n; ++j)
      solid_aside(j, 1, n, [&](int lo, int hi) {
        for (int i = lo; i <= hi; ++i) {
          const std::int64_t c = ix(i, j, w);
          const AdvectWeights<T> q = advect_weights(w, n, i, j, U[c], V[c], dt0);
          job[0].first[c] = advect_apply(job[0].second, q);
          if (count > 1) job[1].first[c] = advect_apply(job[1].second, q);
          if (count > 2) job[2].first[c] = advect_apply(job[2].second, q);
        }
      });
  }

  // ---- lin_solve: temporally blocked passes over colour planes -----------------------
  // Plane c of a window row holds the row's cells with (x + y) % 2 == c at x / 2.
  struct Solve {
    int b;      // boundary kind
    T* x;       // the result (its content before the solve is not read: see gen)
    const T* x0;
    T a, c;
    int gen;    // initial guess: react's source of this field (kField*), or -1: zero
    int add;    // x0 is read as x0 + dt*(react's source of this field), or -1: as it is
    int max;    // the last pass's maximum: 0 none, 1 of x, 2 of x^2 + x0^2 (corners aside)
    int div_opt;  // the division: 0 the reciprocal route where it applies, 1 the IEEE division
    // A scene's: x0 + dt*emit inside (after add's source; read in the rows where
    // emit_rows says it holds a value other than +0), then + dt*force inside
    // (scene_cpu.cpp's add_source and add_interior, in that order); sigma: a solid
    // neighbour counts as sigma times the cell (gs_cell_solid).
    const T* emit;
    const std::uint8_t* emit_rows;
    const T* force;
    T sigma;
  };
  struct PassArgs {
    const T* src;  // x before the pass (natural layout), or null: the generated initial guess
    T* dst;        // x after the pass (natural layout)
    const Solve* S;
    Divisor<T> dv;
    int k;
    bool max;
  };

  void sweep(T* out, const T* L, const T* R, const T* D, const T* U, const T* X0, int lo, int hi, T a,
             const Divisor<T>& dv) const {
    if constexpr (sizeof(T) == 4) kf_.sweep(out, L, R, D, U, X0, lo, hi, a, dv);
    else sweep_row_generic<T>(out, L, R, D, U, X0, lo, hi, a, dv);
  }
  void split(const T* in, T* even, T* odd, int cols, bool do_add, T add) const {
    if constexpr (sizeof(T) == 4) kf_.split(in, even, odd, cols, do_add, add);
    else split_generic<T>(in, even, odd, cols, do_add, add);
  }
  void x0_row(T* out, const T* x, const T* e, const T* f, int lo, int hi, bool add, T z, T dt) const {
    if constexpr (sizeof(T) == 4) kf_.x0_row(out, x, e, f, lo, hi, add, z, dt);
    else x0_row_generic<T>(out, x, e, f, lo, hi, add, z, dt);
  }
  void merge(const T* even, const T* odd, T* out, int j0, int j1) const {
    if constexpr (sizeof(T) == 4) kf_.merge(even, odd, out, j0, j1);
    else merge_generic<T>(even, odd, out, j0, j1);
  }

  // One block (rows [r0, r1), columns [c0, c1), c0 even) of one pass of k fused
  // iterations (see the file comment). The window covers the block and its halo
  // of 2k cells on each side; per row slot it holds x's two colour planes and
  // x0's, pair j of a plane being column lo_x + 2j or lo_x + 2j + 1. Half-step h
  // (red of iteration kk: 2kk, black: 2kk + 1) updates only the cells within
  // 2k - 1 - h of the block (a trapezoid: the cells farther out cannot reach the
  // block's final values), which halves the halo's redundant work. Returns the
  // block's maximum (A.max) over the cells it writes, corners aside.
  //
  // A scene (rows beside its obstacle): the half-sweep runs between the runs of
  // solid cells, which stay 0 (loaded as 0 and never updated: no fluid cell reads
  // them), then the fluid cells beside them again by gs_cell_solid, which reads
  // the other colour only (scene_cpu.cpp's order, the same bits); x0 takes the
  // emitter and the forces as it is loaded (through `row`, a natural-layout row).
  T pass_block(const PassArgs& A, int r0, int r1, int c0, int c1, T* win, T* row) const {
    const Solve& S = *A.S;
    const int n = n_, w = w_, k = A.k, ns = slots();
    const std::size_t wpw = static_cast<std::size_t>(wpw_);
    const int lo = std::max(0, r0 - 2 * k), hi = std::min(w, r1 + 2 * k);
    const int lo_x = std::max(0, c0 - 2 * k), hi_x = std::min(w, c1 + 2 * k);  // lo_x even
    const int base = lo_x / 2, cols = hi_x - lo_x;
    const int upd_lo = std::max(1, lo + 1), upd_hi = std::min(n, hi - 2);
    const int x_lo = std::max(1, lo_x + 1), x_hi = std::min(n, hi_x - 2);  // what the window can update
    // The rows and columns half-step h updates: within reach(h) of the block.
    struct Range {
      int y0, y1, x0, x1;
    };
    Range red[kMaxTemporal], black[kMaxTemporal];
    for (int kk = 0; kk < k; ++kk)
      for (int c = 0; c < 2; ++c) {
        const int d = trapezoid_ ? 2 * k - 1 - (2 * kk + c) : 2 * k;
        (c ? black : red)[kk] = Range{std::max(upd_lo, r0 - d), std::min(upd_hi, r1 - 1 + d), std::max(x_lo, c0 - d),
                                      std::min(x_hi, c1 - 1 + d)};
      }
    auto plane = [&](int s, int c) { return win + (static_cast<std::size_t>(s) * 4 + c) * wpw; };  // c: 2 + c for x0
    auto prev = [&](int s) { return s == 0 ? ns - 1 : s - 1; };
    auto next = [&](int s) { return s + 1 == ns ? 0 : s + 1; };
    const T a = S.a;
    const bool neg_u = S.b == kU, neg_v = S.b == kV;
    const T zero_add = T(p_.dt) * T(0);  // add_source's dt*s where react left s = 0
    T m = -std::numeric_limits<T>::infinity();

    auto load = [&](int y) {
      const int s = y % ns, ce = y & 1, co = (y + 1) & 1;  // colours of even and odd x in row y
      T* xe = plane(s, ce);
      T* xo = plane(s, co);
      if (A.src) {
        split(A.src + ix(lo_x, y, w), xe, xo, cols, false, T(0));
      } else {  // react's sources (or zero) as the initial guess
        std::fill(xe, xe + (cols + 1) / 2, T(0));
        std::fill(xo, xo + cols / 2, T(0));
        if (S.gen >= 0)
          injection_points(y, lo_x, hi_x, [&](int x) {  // (a scene's solid cells stay 0)
            ((x - lo_x) % 2 ? xo : xe)[(x - lo_x) / 2] = solid_cell(x, y) ? T(0) : source_at(S.gen, x, y);
          });
      }
      const T* in0 = S.x0 + ix(lo_x, y, w);
      T* e0 = plane(s, 2 + ce);
      T* o0 = plane(s, 2 + co);
      const T dt = T(p_.dt);
      const bool inside = y >= 1 && y <= n;
      if (inside && ((S.emit && S.emit_rows[y]) || S.force)) {
        // a scene's row with an emitter's values or forces: add_source's x0 + dt*s,
        // then inside + dt*emit, + dt*force (scene_cpu.cpp's order), then the split
        // (the boundary columns' x0 is never read: copied as it is)
        const int ia = std::max(lo_x, 1) - lo_x, ib = std::min(hi_x - 1, n) - lo_x;
        const T* e = S.emit ? S.emit + ix(lo_x, y, w) : nullptr;
        const T* f = S.force ? S.force + ix(lo_x, y, w) : nullptr;
        std::copy(in0, in0 + ia, row);
        std::copy(in0 + ib + 1, in0 + cols, row + ib + 1);
        x0_row(row, in0, e, f, ia, ib, S.add >= 0, zero_add, dt);
        if (S.add >= 0)
          injection_points(y, lo_x, hi_x, [&](int x) {
            const int i = x - lo_x;
            T x0v = in0[i] + dt * source_at(S.add, x, y);
            if (e) x0v = x0v + dt * e[i];
            if (f) x0v = x0v + dt * f[i];
            row[i] = x0v;
          });
        split(row, e0, o0, cols, false, T(0));
        return;
      }
      // add_source: x0 + dt*s, s = 0 but at react's points; an emitter's + dt*0 where it
      // holds +0 only (x + 0 + 0 = x + 0 whatever the signs of the zeros)
      split(in0, e0, o0, cols, S.add >= 0 || S.emit, zero_add);
      if (S.add >= 0) {
        injection_points(y, lo_x, hi_x, [&](int x) {
          T x0v = in0[x - lo_x] + dt * source_at(S.add, x, y);
          if (S.emit) x0v = x0v + dt * S.emit[ix(x, y, w)];  // (the value itself: +0 here)
          ((x - lo_x) % 2 ? o0 : e0)[(x - lo_x) / 2] = x0v;
        });
      }
    };
    auto store = [&](int y) {
      const int s = y % ns;
      const T* even = plane(s, y & 1);
      const T* odd = plane(s, (y + 1) & 1);
      T* out = A.dst + ix(lo_x, y, w);
      const int j0 = (c0 - lo_x) / 2, j1 = (c1 - lo_x) / 2;  // whole pairs of [c0, c1)
      merge(even, odd, out, j0, j1);
      if ((c1 - lo_x) & 1) out[c1 - 1 - lo_x] = even[j1];
      if (A.max) {  // x, or x^2 + x0^2 (x0 as stored: the pressure's divergence), corners aside
        const bool edge_row = y == 0 || y == n + 1;
        const int xa = edge_row ? std::max(c0, 1) : c0, xb = edge_row ? std::min(c1, n + 1) : c1;
        if (xb > xa)
          m = max_row(out + (xa - lo_x), S.max == 2 ? S.x0 + ix(xa, y, w) : nullptr, xb - xa, m);
      }
    };
    // Half-sweep of colour c over columns [xa, xb] of row y in slot s.
    auto sweep_range = [&](int c, int y, int s, int xa, int xb) {
      const int par = (c + y) & 1;  // x parity of this colour's cells in row y
      const int i_lo = (xa - par + 1) >> 1, i_hi = (xb - par) >> 1;  // global pairs, x = 2i + par
      if (i_hi < i_lo) return;
      const T* mid = plane(s, 1 - c) - base;
      if constexpr (sizeof(T) == 4) {
        if (aligned_ && kf_.sweep_window) {
          kf_.sweep_window(plane(s, c) - base, mid, par, plane(prev(s), 1 - c) - base, plane(next(s), 1 - c) - base,
                           plane(s, 2 + c) - base, i_lo, i_hi, a, A.dv);
          return;
        }
      }
      sweep(plane(s, c) - base, mid + par - 1, mid + par, plane(prev(s), 1 - c) - base, plane(next(s), 1 - c) - base,
            plane(s, 2 + c) - base, i_lo, i_hi, a, A.dv);
    };
    auto cell = [&](int x, int y, int s) -> T& { return plane(s, (x + y) & 1)[(x - lo_x) / 2]; };
    // A scene's row beside its obstacle: the fluid cells between the solid runs,
    // then those beside the obstacle by gs_cell_solid.
    auto sweep_c = [&](int c, int y, int s, int xa, int xb) {
      if (!obstacle_row(y)) {
        sweep_range(c, y, s, xa, xb);
        return;
      }
      for_runs(solid_, y, xa, xb, [&](int lo, int hi) { sweep_range(c, y, s, lo, hi); }, [](int) {});
      const int e = fix_begin_[static_cast<std::size_t>(y) + 1];
      for (int q = fix_begin_[static_cast<std::size_t>(y)]; q < e; ++q) {
        const int i = fix_[static_cast<std::size_t>(q)].i;
        if (i > xb) break;
        if (i < xa || ((i + y) & 1) != c) continue;
        cell(i, y, s) = gs_cell_solid(plane(s, 2 + c)[(i - lo_x) / 2], cell(i - 1, y, s), cell(i + 1, y, s),
                                      cell(i, y - 1, prev(s)), cell(i, y + 1, next(s)), fix_[static_cast<std::size_t>(q)].code,
                                      a, S.c, S.sigma);
      }
    };
    // The rows ahead are fetched while the sweeps run (the hardware prefetcher
    // restarts at every short row of a block): the rows of the next group, spread
    // over the iterations of the wavefront.
    const int row_lines = static_cast<int>((static_cast<std::size_t>(cols) * sizeof(T) + 63) / 64);
    auto prefetch = [&](int y, int part) {  // part kk of k of row y's lines of x0 and src
      if (prefetch_rows_ <= 0 || y >= hi) return;
      const int l0 = static_cast<int>(static_cast<std::int64_t>(row_lines) * part / k);
      const int l1 = static_cast<int>(static_cast<std::int64_t>(row_lines) * (part + 1) / k);
      const char* px0 = reinterpret_cast<const char*>(S.x0 + ix(lo_x, y, w));
      const char* psrc = A.src ? reinterpret_cast<const char*>(A.src + ix(lo_x, y, w)) : nullptr;
      for (int l = l0; l < l1; ++l) {
        __builtin_prefetch(px0 + 64 * l, 0, 3);
        if (psrc) __builtin_prefetch(psrc + 64 * l, 0, 3);
      }
    };

    // The wavefront in groups of g = group_ consecutive steps t: the group's rows
    // are loaded first, then for each iteration kk the g red and black half-sweeps
    // (rows t - 2kk and t - 2kk - 1 of each t), so that a row swept for step t is
    // still in L1 when step t + 1 sweeps its neighbour; then the group's finished
    // rows are stored. Every dependency of the one-step order holds: step t's
    // iteration kk needs iteration kk - 1 of steps t and t - 1 and iteration kk of
    // steps t - 1 and t - 2 only.
    const int g = group_, t_last = hi - 1 + 2 * k;
    load(lo);
    int s0 = lo % ns;  // slot of row t0
    for (int t0 = lo; t0 <= t_last; t0 += g) {
      const int te = std::min(t0 + g - 1, t_last);
      for (int t = t0; t <= te; ++t)
        if (t + 1 < hi) load(t + 1);
      int sr[kMaxGroup];  // slot of row t - 2kk, for each t of the group
      for (int t = t0, s = s0; t <= te; ++t, s = next(s)) sr[t - t0] = s;
      for (int kk = 0; kk < k; ++kk) {
        for (int j = 0; j < g; ++j) prefetch(te + 2 + (prefetch_rows_ - 1) * g + j, kk);  // rows loaded prefetch_rows_ groups on
        const Range& R = red[kk];
        const Range& B = black[kk];
        for (int t = t0; t <= te; ++t) {
          const int yr = t - 2 * kk, s = sr[t - t0];
          if (yr >= R.y0 && yr <= R.y1) sweep_c(0, yr, s, R.x0, R.x1);
          const int yb = yr - 1, sb = prev(s);
          if (yb >= B.y0 && yb <= B.y1) {
            sweep_c(1, yb, sb, B.x0, B.x1);
            // set_bnd after the iteration: x[0,y], x[n+1,y] from the row's interior,
            // and rows 0 and n+1 from rows 1 and n
            if (lo_x == 0 && B.x0 <= 1) cell(0, yb, sb) = neg_u ? -cell(1, yb, sb) : cell(1, yb, sb);
            if (hi_x == w && B.x1 >= n) cell(n + 1, yb, sb) = neg_u ? -cell(n, yb, sb) : cell(n, yb, sb);
            if (yb == 1 || yb == n) {
              const int to = yb == 1 ? 0 : n + 1, st_to = yb == 1 ? prev(sb) : next(sb);
              for (int x = B.x0; x <= B.x1; ++x)
                cell(x, to, st_to) = neg_v ? -cell(x, yb, sb) : cell(x, yb, sb);
            }
          }
          sr[t - t0] = s >= 2 ? s - 2 : s - 2 + ns;
        }
      }
      for (int t = t0; t <= te; ++t) {
        const int ys = t - 2 * k;
        if (ys >= r0 && ys < r1 && ys >= lo) store(ys);
      }
      for (int t = t0; t <= te; ++t) s0 = next(s0);
    }
    return m;
  }

  // Boundary j of `parts` blocks of [0, w): a block at the grid's edge has a halo
  // on one side only, so it gets k more cells (the trapezoid's mean halo) than
  // an inner one, and all blocks cost alike (NUMPIPE_FLUID_CPU_BALANCE=0: equal
  // blocks). Any cut gives the same bits.
  int cut(int j, int parts, int k) const {
    if (j <= 0) return 0;
    if (j >= parts) return w_;
    if (!balance_ || w_ <= 4 * k + 2 * parts) return static_cast<int>(static_cast<std::int64_t>(w_) * j / parts);
    return static_cast<int>(static_cast<std::int64_t>(w_ - 2 * k) * j / parts) + k;
  }

  // lin_solve(b, x, x0, a, c) from the generated initial guess for `count`
  // independent solves (at most 3) at once: passes of up to kmax_ iterations;
  // the last one writes x, the others alternate with scratch_ (one solve at a
  // time then). busy[i], where given: the time solve i's blocks took, summed.
  // Solve i's block maxima go to partial_'s part first + i (finish_max).
  void lin_solve(const Solve* S, int count, double* busy, int first = 0) {
    const int passes = (p_.iters + kmax_ - 1) / kmax_;
    if (passes > 1 && count > 1) {  // one scratch buffer: one solve after the other
      for (int i = 0; i < count; ++i) lin_solve(S + i, 1, busy ? busy + i : nullptr, first + i);
      return;
    }
    Divisor<T> dv[3];
    const T* src[3] = {nullptr, nullptr, nullptr};
    for (int i = 0; i < count; ++i) dv[i] = make_divisor(S[i].c, kf_.fma && S[i].div_opt == 0);
    const int ns = nstrips_, nc = ncols_, w = w_, nb = ns * nc;
    const bool timed = busy || phases_on_;
    for (int q = 0; q < passes; ++q) {
      const int k = p_.iters / passes + (q < p_.iters % passes ? 1 : 0);
      PassArgs A[3];
      for (int i = 0; i < count; ++i) {
        T* dst = (passes - 1 - q) % 2 == 0 ? S[i].x : scratch_.data();
        A[i] = PassArgs{src[i], dst, S + i, dv[i], k, S[i].max != 0 && q == passes - 1};
        src[i] = dst;
      }
      if (timed) block_time_.assign(static_cast<std::size_t>(count * nb), 0.0);
      // Blocks go to threads as they come free, so that a core that runs slower
      // (a busy neighbour on a shared host) takes fewer of them: those of all the
      // solves at hand, and NUMPIPE_FLUID_CPU_BLOCKS=b blocks per thread at least.
#pragma omp parallel for schedule(dynamic, 1)
      for (int item = 0; item < count * nb; ++item) {
        const int i = item / nb, s = item % nb / nc, cb = item % nc;
        const int c0 = cb == 0 ? 0 : cut(cb, nc, k) & ~1, c1 = cb == nc - 1 ? w : cut(cb + 1, nc, k) & ~1;
        const double t0 = timed ? now_s() : 0;
        const int thread = omp_get_thread_num();
        partial_[static_cast<std::size_t>(first * nb + item)] =
            pass_block(A[i], cut(s, ns, k), cut(s + 1, ns, k), c0, c1, window(thread),
                       scene_ ? rows_[static_cast<std::size_t>(thread)].data() : nullptr);
        if (timed) block_time_[static_cast<std::size_t>(item)] = now_s() - t0;
      }
      if (timed) {
        double sum = 0, mx = 0;
        for (int item = 0; item < count * nb; ++item) {
          const double t = block_time_[static_cast<std::size_t>(item)];
          if (busy) busy[item / nb] += t;
          sum += t;
          mx = std::max(mx, t);
        }
        block_mean_ += sum / static_cast<double>(count * nb);
        block_max_ += mx;
      }
    }
    for (int i = 0; i < count; ++i) set_corners(S[i].x);
  }

  // The maximum of the last pass's blocks of solve i and the corners (of x, or
  // of x^2 + x0^2).
  T finish_max(int i, const T* x, const T* x0) const {
    T m = -std::numeric_limits<T>::infinity();
    const std::size_t nb = static_cast<std::size_t>(nstrips_ * ncols_);
    for (std::size_t b = 0; b < nb; ++b) m = max_of(m, partial_[static_cast<std::size_t>(i) * nb + b]);
    for (int k = 0; k < 4; ++k) {
      const T p = x[corner_index(k)];
      m = max_of(m, x0 ? p * p + x0[corner_index(k)] * x0[corner_index(k)] : p);
    }
    return m;
  }

  // ---- the step ----------------------------------------------------------------------------
  // react's zeroing and injection and add_source happen inside the solves (see
  // the file comment); a buffer's old content is never read where the
  // reference would have overwritten it first.
  void step() {
    phase(-1);
    if (scene_) {
      scene_step();
      decide(div_);
      decide(adv_);
      ++c_.steps;
      return;
    }
    react_decide();
    auto& F = f_;
    if (p_.scheme == Scheme::seed) {
      add_zero_source_boundary(F.d.data());  // d's boundary layer survives the step
      phase(5);
      const int oa = adv_option();
      diffuse({{kScalar, &F.d0, &F.d, kFieldD, p_.diff, true},
               {kU, &F.u0, &F.u, kFieldU, p_.visc, false},
               {kV, &F.v0, &F.v, kFieldV, p_.visc, false}});
      phase(0);
      project(F.u0, F.v0, F.u, F.v, false);
      const double t0 = now_s();
      advect(F.u0.data(), F.v0.data(), {{F.d.data(), F.d0.data()}, {F.u.data(), F.u0.data()}, {F.v.data(), F.v0.data()}});
      record(adv_, oa, now_s() - t0);
      set_bnd(kU, F.u.data());
      set_bnd(kV, F.v.data());
      phase(4);
      project(F.u, F.v, F.u0, F.v0, true);
    } else {
      const int oa = adv_option();
      double ta = velocity_step({kU, &F.u0, &F.u, kFieldU, p_.visc, false}, {kV, &F.v0, &F.v, kFieldV, p_.visc, false});
      diffuse({{kScalar, &F.d0, &F.d, kFieldD, p_.diff, true}});
      const double t0 = now_s();
      advect(F.u.data(), F.v.data(), {{F.d.data(), F.d0.data()}});
      ta += now_s() - t0;
      set_bnd(kScalar, F.d.data());
      record(adv_, oa, ta);
    }
    decide(div_);
    decide(adv_);
    ++c_.steps;
  }
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_cpu_solver(const Params& p, const Fields<T>& initial) {
  const T* const state[6] = {initial.d.data(), initial.u.data(), initial.v.data(),
                             initial.d0.data(), initial.u0.data(), initial.v0.data()};
  return std::make_unique<CpuSolver<T>>(p, state);
}

template <class T>
std::unique_ptr<SceneSolver<T>> make_scene_cpu_blocked_solver(const Params& p, const Scene& s,
                                                              const SceneFields<T>& init) {
  return std::make_unique<FusedSceneSolver<T, CpuSolver<T>>>(
      p, s, init, [](const Params& q, const T* const state[6], const FusedScene<T>& setup) {
        return std::make_unique<CpuSolver<T>>(q, state, &setup);
      });
}
template std::unique_ptr<SceneSolver<float>> make_scene_cpu_blocked_solver(const Params&, const Scene&,
                                                                           const SceneFields<float>&);
template std::unique_ptr<SceneSolver<double>> make_scene_cpu_blocked_solver(const Params&, const Scene&,
                                                                            const SceneFields<double>&);
template std::unique_ptr<Solver<float>> make_cpu_solver(const Params&, const Fields<float>&);
template std::unique_ptr<Solver<double>> make_cpu_solver(const Params&, const Fields<double>&);

namespace testing {
bool sweep_row_float(const char* isa, float* out, const float* L, const float* R, const float* D, const float* U,
                     const float* X0, int count, float a, float c) {
  const FloatKernels k = pick_kernels(tuning_from_environment(), isa);
  const Divisor<float> dv = make_divisor(c, k.fma);
  k.sweep(out, L, R, D, U, X0, 0, count - 1, a, dv);
  return dv.mode == DivMode::reciprocal;
}
bool sweep_window_float(float* out, const float* mid, int par, const float* D, const float* U, const float* X0, int lo,
                        int hi, float a, float c, bool reciprocal) {
  const FloatKernels k = pick_kernels(tuning_from_environment(), "avx512");
  if (!k.sweep_window) return false;
  k.sweep_window(out, mid, par, D, U, X0, lo, hi, a, make_divisor(c, reciprocal && k.fma));
  return true;
}
}  // namespace testing

double bytes_per_cell_step(const Params& p, int element_size, bool cuda) {
  // Element reads + writes per interior cell and step, as the kernels move them
  // (docs/fluid.md). Both backends: two projections' divergence (2 read + 1
  // written) and gradient (3+2), advection (2 + 3 gathered + 3 written). Each
  // solve's first pass reads x0 only (the initial guess is generated) and writes
  // x; later passes read x and x0 and write x.
  const double sz = element_size;
  const double common = 2 * (3 + 5) + 8;
  if (cuda) {
    // Tiles read x and x0 over the extended tile (the output tile and its halo
    // of 2K cells: cuda_solve_elements_per_cell).
#ifdef NUMPIPE_FLUID_CUDA
    return sz * (common + 5 * cuda_solve_elements_per_cell(p.iters, element_size));
#endif
  }
  // One pass per up to 32 iterations (fewer on many threads and small grids: see
  // kmax_); the halo rows and columns of the blocks are read twice (not counted).
  const double passes = std::ceil(static_cast<double>(p.iters) / kMaxTemporal);
  return sz * (common + 5 * (2 + 3 * (passes - 1)));
}

}  // namespace numpipe::fluid
