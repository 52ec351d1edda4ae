// GPU units for the common library: device buffers, pinned host memory, checked
// launches, CUDA-event timing and the device query.
#include <doctest/doctest.h>

#include <vector>

#include "common/cuda_timer.hpp"
#include "common/device.hpp"
#include "common/device_array.hpp"
#include "common/host_array.hpp"

using namespace numpipe;

namespace {
__global__ void axpy(double a, const double* x, double* y, std::size_t n) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
}  // namespace

TEST_CASE("device buffers round-trip through pinned host memory and a kernel") {
  const std::size_t n = 1 << 20;
  HostArray<double> x(n, /*pinned=*/true), y(n, true);
  CHECK(x.pinned());
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(i);
    y[i] = 1.0;
  }
  DeviceArray<double> dx(n), dy(n);
  dx.copy_from_host(x.data(), n);
  dy.copy_from_host(y.data(), n);
  CudaEventTimer timer;
  timer.start();
  axpy<<<(n + 255) / 256, 256>>>(2.0, dx.data(), dy.data(), n);
  NUMPIPE_CUDA_CHECK_LAUNCH();
  timer.stop();
  double seconds = timer.seconds();
  CHECK(seconds > 0);
  CHECK(seconds < 1);
  dy.copy_to_host(y.data(), n);
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
  for (std::size_t i = 0; i < n; i += 997) CHECK(y[i] == 1.0 + 2.0 * static_cast<double>(i));
}

TEST_CASE("a bad launch and an impossible allocation become errors with exit codes") {
  axpy<<<1, 4096>>>(1.0, nullptr, nullptr, 0);  // 4096 threads per block is over the limit
  try {
    NUMPIPE_CUDA_CHECK_LAUNCH();
    FAIL("an invalid launch configuration passed the check");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::internal);
    // CUDA 12 says cudaErrorInvalidConfiguration, CUDA 13 cudaErrorInvalidValue.
    std::string what = e.what();
    CHECK(what.find("CUDA error cudaErrorInvalid") != std::string::npos);
    CHECK(what.find("cudaGetLastError()") != std::string::npos);
  }
  try {
    DeviceArray<double> huge(std::size_t(1) << 50);  // 8 PiB
    FAIL("an 8 PiB allocation succeeded");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::resource);
    CHECK(std::string(e.what()).find("out of device memory") != std::string::npos);
  }
  // The device still works afterwards.
  DeviceArray<double> small(16);
  NUMPIPE_CUDA_CHECK(cudaMemset(small.data(), 0, small.bytes()));
  NUMPIPE_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_CASE("device query reports a plausible GPU") {
  DeviceInfo d = query_cuda_device(0);
  MESSAGE("device 0: " << d.name << ", " << d.multiprocessors << " SMs, " << d.memory_bytes / (1 << 30) << " GiB, peak "
                       << d.peak_bandwidth_gbs << " GB/s, fp64 " << d.peak_fp64_gflops << " GFLOP/s (" << d.peak_source << ")");
  CHECK(!d.name.empty());
  CHECK(d.multiprocessors > 0);
  CHECK(d.memory_bytes > (std::uint64_t(1) << 30));
  CHECK(d.peak_bandwidth_gbs > 100);
  CHECK(d.peak_fp64_gflops > 0);
  CHECK(d.peak_fp32_gflops >= d.peak_fp64_gflops);
  CHECK_THROWS_AS(query_cuda_device(cuda_device_count()), Error);
  CHECK(resolve_backend("auto") == Backend::cuda);
}
