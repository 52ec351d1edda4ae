// CUDA calibration kernels: a large device-to-device copy (bytes read + written)
// and register-resident FMA chains in fp64 and fp32, each timed by CUDA events,
// the median of several runs kept.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>

#include "calibrate.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_timer.hpp"
#include "common/device_array.hpp"

namespace numpipe::calibrate {

namespace {

__global__ void copy_kernel(const double2* __restrict__ in, double2* __restrict__ out, std::size_t n) {
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}

constexpr int kChains = 8;  // independent FMA chains per thread: hides the FMA latency

template <class T>
__global__ void fma_kernel(T* out, int iterations, T b, T c) {
  T a[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) a[j] = static_cast<T>(threadIdx.x + j) * static_cast<T>(1e-3);
#pragma unroll 4
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) a[j] = fma(a[j], b, c);
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j) s += a[j];
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = s;  // keeps the chains alive
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
double fma_rate(int blocks, int threads, int iterations, int reps) {
  DeviceArray<T> out(static_cast<std::size_t>(blocks) * threads);
  CudaEventTimer timer;
  std::vector<double> times;
  for (int r = 0; r < reps + 1; ++r) {  // the first run warms up
    timer.start();
    fma_kernel<T><<<blocks, threads>>>(out.data(), iterations, static_cast<T>(0.999999), static_cast<T>(1e-6));
    NUMPIPE_CUDA_CHECK_LAUNCH();
    timer.stop();
    double t = timer.seconds();
    if (r > 0) times.push_back(t);
  }
  double flops = 2.0 * kChains * static_cast<double>(iterations) * blocks * threads;
  return flops / median(times) / 1e9;
}

}  // namespace

bool cuda_built() { return true; }

Rates measure_cuda(int device, bool quick) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    fail_resource("--calibrate: no CUDA device is visible (use --backend cpu to calibrate the CPU only)");
  }
  if (device < 0 || device >= count)
    fail_resource("--device " + std::to_string(device) + ": there are " + std::to_string(count) + " CUDA devices");
  NUMPIPE_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  NUMPIPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  Rates r;
  r.repetitions = quick ? 3 : 15;

  // Copy: two buffers of 1 GiB (less when memory is short; 64 MiB when quick).
  std::size_t free_bytes = 0, total_bytes = 0;
  NUMPIPE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::size_t bytes = quick ? (std::size_t{64} << 20) : (std::size_t{1} << 30);
  while (bytes > (std::size_t{16} << 20) && 2 * bytes > free_bytes / 2) bytes /= 2;
  std::size_t n = bytes / sizeof(double2);
  {
    DeviceArray<double2> a(n), b(n);
    NUMPIPE_CUDA_CHECK(cudaMemset(a.data(), 0, a.bytes()));
    NUMPIPE_CUDA_CHECK(cudaMemset(b.data(), 0, b.bytes()));
    int threads = 512;
    int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / threads);
    CudaEventTimer timer;
    std::vector<double> times;
    for (int rep = 0; rep < r.repetitions + 1; ++rep) {
      timer.start();
      copy_kernel<<<blocks, threads>>>(a.data(), b.data(), n);
      NUMPIPE_CUDA_CHECK_LAUNCH();
      timer.stop();
      double t = timer.seconds();
      if (rep > 0) times.push_back(t);
    }
    r.bandwidth_gbs = 2.0 * static_cast<double>(n * sizeof(double2)) / median(times) / 1e9;
    r.copy_bytes = static_cast<double>(n * sizeof(double2));
  }

  // FMA chains: 256-thread blocks filling every SM to its thread limit.
  int threads = 256;
  int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / threads);
  int iterations = quick ? (1 << 12) : (1 << 16);
  r.fp64_gflops = fma_rate<double>(blocks, threads, iterations, r.repetitions);
  r.fp32_gflops = fma_rate<float>(blocks, threads, iterations * 2, r.repetitions);
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  r.fma_iterations = iterations;
  r.workers = blocks * threads;
  char line[256];
  std::snprintf(line, sizeof line,
                "cuda: copy kernel over 2 x %.0f MiB (read + write); %d FMA chains x %d threads x %d iterations; "
                "CUDA events, median of %d",
                r.copy_bytes / 1048576.0, kChains, blocks * threads, iterations, r.repetitions);
  r.method = line;
  return r;
}

}  // namespace numpipe::calibrate
