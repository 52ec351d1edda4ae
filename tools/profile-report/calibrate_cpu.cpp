// CPU calibration: an OpenMP stream copy (bytes read + written) and a
// register-resident FMA loop on every thread, with the widest vector unit the
// CPU has (runtime dispatch: AVX-512F, AVX2+FMA, else SSE2 multiply-add).
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "calibrate.hpp"
#include "common/error.hpp"
#include "common/host_array.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NUMPIPE_X86 1
#endif

namespace numpipe::calibrate {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr int kChains = 12;  // independent vector accumulators: 2 FMA ports x latency 4-6

// Each kernel runs `iterations` steps of kChains independent a = a * b + c over a
// vector register and returns a sum so that nothing is optimised away.
// Returns the lanes of its vector (flops per iteration = 2 * lanes * kChains).
using Kernel = double (*)(long iterations, double seed);

#ifdef NUMPIPE_X86
#define NUMPIPE_FMA_KERNEL(NAME, TARGET, VEC, SET1, FMA, ADD, STORE, ELEM, LANES)  \
  __attribute__((target(TARGET))) double NAME(long iterations, double seed) {    \
    VEC a[kChains];                                                              \
    for (int j = 0; j < kChains; ++j) a[j] = SET1(static_cast<ELEM>(seed + j * 1e-3)); \
    const VEC b = SET1(static_cast<ELEM>(0.999999)), c = SET1(static_cast<ELEM>(1e-6)); \
    for (long i = 0; i < iterations; ++i) {                                      \
      _Pragma("GCC unroll 16") for (int j = 0; j < kChains; ++j) a[j] = FMA(a[j], b, c); \
    }                                                                            \
    VEC s = a[0];                                                                \
    for (int j = 1; j < kChains; ++j) s = ADD(s, a[j]);                          \
    alignas(64) ELEM lanes[LANES];                                               \
    STORE(lanes, s);                                                             \
    double t = 0;                                                                \
    for (int l = 0; l < LANES; ++l) t += lanes[l];                               \
    return t;                                                                    \
  }

#define SSE_FMA_PD(a, b, c) _mm_add_pd(_mm_mul_pd(a, b), c)
#define SSE_FMA_PS(a, b, c) _mm_add_ps(_mm_mul_ps(a, b), c)
NUMPIPE_FMA_KERNEL(fma512_f64, "avx512f", __m512d, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd, _mm512_store_pd, double, 8)
NUMPIPE_FMA_KERNEL(fma512_f32, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_store_ps, float, 16)
NUMPIPE_FMA_KERNEL(fma256_f64, "avx2,fma", __m256d, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd, _mm256_store_pd, double, 4)
NUMPIPE_FMA_KERNEL(fma256_f32, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_store_ps, float, 8)
NUMPIPE_FMA_KERNEL(fma128_f64, "sse2", __m128d, _mm_set1_pd, SSE_FMA_PD, _mm_add_pd, _mm_store_pd, double, 2)
NUMPIPE_FMA_KERNEL(fma128_f32, "sse2", __m128, _mm_set1_ps, SSE_FMA_PS, _mm_add_ps, _mm_store_ps, float, 4)
#endif

// Portable fallback: arrays the compiler may vectorise (counts 2 flops per element).
template <class T, int Lanes>
double fma_generic(long iterations, double seed) {
  T a[kChains][Lanes];
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < Lanes; ++l) a[j][l] = static_cast<T>(seed + j * 1e-3 + l * 1e-4);
  const T b = static_cast<T>(0.999999), c = static_cast<T>(1e-6);
  for (long i = 0; i < iterations; ++i)
    for (int j = 0; j < kChains; ++j)
      for (int l = 0; l < Lanes; ++l) a[j][l] = a[j][l] * b + c;
  double t = 0;
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < Lanes; ++l) t += a[j][l];
  return t;
}

struct Isa {
  const char* name;
  Kernel f64, f32;
  int lanes64, lanes32;
};

Isa pick_isa() {
#ifdef NUMPIPE_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"AVX-512F", fma512_f64, fma512_f32, 8, 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"AVX2+FMA", fma256_f64, fma256_f32, 4, 8};
  return {"SSE2 (multiply + add)", fma128_f64, fma128_f32, 2, 4};
#else
  return {"generic", fma_generic<double, 4>, fma_generic<float, 8>, 4, 8};
#endif
}

volatile double g_sink = 0;  // results of the FMA loops land here

// Seconds for every thread to run `iterations` of the kernel (one parallel region).
double time_fma(Kernel k, long iterations) {
  double t0 = now();
  double total = 0;
#pragma omp parallel reduction(+ : total)
  total += k(iterations, 1.0 + omp_get_thread_num() * 1e-6);
  double t = now() - t0;
  g_sink = g_sink + total;
  return t;
}

double fma_gflops(Kernel k, int lanes, bool quick, int reps, long& iterations_out) {
  const double target = quick ? 0.01 : 0.2;  // seconds per timed run
  long iterations = 1 << 12;
  for (;;) {  // grow until one run takes a measurable time
    double t = time_fma(k, iterations);
    if (t >= target / 4 || iterations > (1L << 40)) {
      iterations = static_cast<long>(iterations * std::max(1.0, target / std::max(t, 1e-9)));
      break;
    }
    iterations *= 4;
  }
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) times.push_back(time_fma(k, iterations));
  iterations_out = iterations;
  double flops = 2.0 * lanes * kChains * static_cast<double>(iterations) * omp_get_max_threads();
  return flops / median(times) / 1e9;
}

}  // namespace

Rates measure_cpu(bool quick) {
  Rates r;
  r.repetitions = quick ? 3 : 7;
  r.workers = omp_get_max_threads();

  // Copy: two arrays of 512 MiB (at most 1/16 of the memory each; 32 MiB when quick).
  std::size_t n = quick ? (std::size_t{4} << 20) : (std::size_t{64} << 20);
  std::uint64_t mem = 0;
  {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) mem = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  while (mem > 0 && n > (std::size_t{1} << 20) && n * sizeof(double) > mem / 16) n /= 2;
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  double* pa = a.get();
  double* pb = b.get();
  const long nn = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < nn; ++i) {  // first touch on the thread that copies it
    pa[i] = static_cast<double>(i);
    pb[i] = 0;
  }
  std::vector<double> times;
  for (int rep = 0; rep < r.repetitions + 1; ++rep) {
    double t0 = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < nn; ++i) pb[i] = pa[i];
    double t = now() - t0;
    if (rep > 0) times.push_back(t);
  }
  g_sink = g_sink + pb[n / 3];
  r.copy_bytes = static_cast<double>(n * sizeof(double));
  r.bandwidth_gbs = 2.0 * r.copy_bytes / median(times) / 1e9;
  a.reset();
  b.reset();

  Isa isa = pick_isa();
  long it32 = 0;
  r.fp64_gflops = fma_gflops(isa.f64, isa.lanes64, quick, r.repetitions, r.fma_iterations);
  r.fp32_gflops = fma_gflops(isa.f32, isa.lanes32, quick, r.repetitions, it32);
  char line[256];
  std::snprintf(line, sizeof line,
                "cpu: OpenMP copy over 2 x %.0f MiB (read + write); %s FMA loop, %d chains x %d threads; "
                "steady_clock, median of %d",
                r.copy_bytes / 1048576.0, isa.name, kChains, r.workers, r.repetitions);
  r.method = line;
  return r;
}

}  // namespace numpipe::calibrate
