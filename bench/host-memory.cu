// bench/host-memory.cu: what host memory costs on this machine, the costs that bound
// a tool's wall time outside its solve: first touch of fresh memory (page faults), with
// and without transparent huge pages, from one and from all threads; copies of memory
// already touched; pinning (cudaHostAlloc, cudaHostRegister) and its release; device
// allocation. Build and run: nvcc -O2 -arch=sm_90 -Xcompiler -fopenmp bench/host-memory.cu
// -o /tmp/host-memory && /tmp/host-memory [MiB]
#include <cuda_runtime.h>
#include <omp.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void touch(char* p, std::size_t bytes, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long i = 0; i < static_cast<long long>(bytes); i += 4096) p[i] = 1;
}

void copy(char* dst, const char* src, std::size_t bytes, int threads) {
  const std::size_t chunk = (bytes + threads - 1) / threads;
#pragma omp parallel num_threads(threads)
  {
    const std::size_t b = std::min(bytes, chunk * omp_get_thread_num()), e = std::min(bytes, b + chunk);
    std::memcpy(dst + b, src + b, e - b);
  }
}

std::string read_file(const char* path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// first touch of a fresh mapping, GB/s
double first_touch(std::size_t bytes, int threads, bool huge) {
  char* p = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) return 0;
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  const auto t0 = Clock::now();
  touch(p, bytes, threads);
  const double s = since(t0);
  const auto t1 = Clock::now();
  munmap(p, bytes);
  std::printf("  first touch %s %2d threads: %6.2f GB/s (%.1f ms), munmap %.1f ms\n", huge ? "huge " : "4 KiB", threads,
              bytes / s * 1e-9, s * 1e3, since(t1) * 1e3);
  return bytes / s * 1e-9;
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const std::size_t bytes = mib << 20;
  const int all = omp_get_max_threads();
  std::printf("host memory costs, %zu MiB, %d threads\n", mib, all);
  std::printf("  transparent huge pages: enabled %s; defrag %s\n", read_file("/sys/kernel/mm/transparent_hugepage/enabled").c_str(),
              read_file("/sys/kernel/mm/transparent_hugepage/defrag").c_str());
  for (int rep = 0; rep < 2; ++rep) {
    first_touch(bytes, 1, false);
    first_touch(bytes, all, false);
    first_touch(bytes, 1, true);
    first_touch(bytes, all, true);
  }
  {  // malloc'd (glibc: mmap for large blocks) and std::vector-style value initialisation
    const auto t0 = Clock::now();
    std::vector<double> v(bytes / 8);
    std::printf("  std::vector<double>(n) (zeroing, one thread): %.2f GB/s (%.1f ms)\n", bytes / since(t0) * 1e-9, since(t0) * 1e3);
    const auto t1 = Clock::now();
    v = std::vector<double>();
    std::printf("  its release: %.1f ms\n", since(t1) * 1e3);
  }
  std::vector<char> a(bytes, 1), b(bytes, 2);
  for (int threads : {1, 4, all}) {
    copy(b.data(), a.data(), bytes, threads);
    const auto t0 = Clock::now();
    copy(b.data(), a.data(), bytes, threads);
    std::printf("  memcpy of touched memory, %2d threads: %.2f GB/s\n", threads, bytes / since(t0) * 1e-9);
  }
  auto t0 = Clock::now();
  check(cudaFree(nullptr), "context");
  std::printf("CUDA context: %.1f ms\n", since(t0) * 1e3);
  for (std::size_t m : {std::size_t(64) << 20, std::size_t(256) << 20, bytes}) {
    void* p = nullptr;
    t0 = Clock::now();
    check(cudaHostAlloc(&p, m, cudaHostAllocPortable), "cudaHostAlloc");
    const double alloc = since(t0);
    t0 = Clock::now();
    touch(static_cast<char*>(p), m, all);
    const double first = since(t0);
    t0 = Clock::now();
    check(cudaFreeHost(p), "cudaFreeHost");
    std::printf("  cudaHostAlloc %4zu MiB: %.1f ms (%.2f GB/s), first touch %.1f ms, cudaFreeHost %.1f ms\n", m >> 20,
                alloc * 1e3, m / alloc * 1e-9, first * 1e3, since(t0) * 1e3);
  }
  t0 = Clock::now();
  check(cudaHostRegister(a.data(), bytes, cudaHostRegisterDefault), "cudaHostRegister");
  const double reg = since(t0);
  void* d = nullptr;
  check(cudaMalloc(&d, bytes), "cudaMalloc");
  check(cudaMemcpy(d, a.data(), bytes, cudaMemcpyHostToDevice), "h2d");
  t0 = Clock::now();
  check(cudaMemcpy(d, a.data(), bytes, cudaMemcpyHostToDevice), "h2d");
  const double h2d = since(t0);
  t0 = Clock::now();
  check(cudaMemcpy(a.data(), d, bytes, cudaMemcpyDeviceToHost), "d2h");
  const double d2h = since(t0);
  t0 = Clock::now();
  check(cudaHostUnregister(a.data()), "cudaHostUnregister");
  std::printf("  cudaHostRegister of touched memory: %.1f ms (%.2f GB/s), registered copies h2d %.1f GB/s d2h %.1f GB/s, "
              "unregister %.1f ms\n",
              reg * 1e3, bytes / reg * 1e-9, bytes / h2d * 1e-9, bytes / d2h * 1e-9, since(t0) * 1e3);
  t0 = Clock::now();
  check(cudaMemcpy(d, a.data(), bytes, cudaMemcpyHostToDevice), "h2d");
  std::printf("  pageable h2d %.2f GB/s", bytes / since(t0) * 1e-9);
  t0 = Clock::now();
  check(cudaMemcpy(a.data(), d, bytes, cudaMemcpyDeviceToHost), "d2h");
  std::printf(", d2h %.2f GB/s\n", bytes / since(t0) * 1e-9);
  check(cudaFree(d), "cudaFree");
  for (std::size_t m : {std::size_t(256) << 20, std::size_t(1700) << 20}) {
    t0 = Clock::now();
    check(cudaMalloc(&d, m), "cudaMalloc");
    const double al = since(t0);
    t0 = Clock::now();
    check(cudaFree(d), "cudaFree");
    std::printf("  cudaMalloc %4zu MiB: %.2f ms, cudaFree %.2f ms\n", m >> 20, al * 1e3, since(t0) * 1e3);
  }
  return 0;
}
