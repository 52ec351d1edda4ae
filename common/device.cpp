#include "device.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <system_error>
#include <thread>

#include "timeline.hpp"

#ifdef NUMPIPE_HAVE_CUDA
#include "cuda_check.hpp"
#include "staging.hpp"
#endif

namespace numpipe {

const char* backend_name(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

bool built_with_cuda() {
#ifdef NUMPIPE_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

namespace {
// The early start's thread and what it found (start_cuda_early).
struct EarlyStart {
  std::mutex m;
  std::condition_variable cv;
  bool started = false, driver_done = false, done = false;
  int count = 0;
  double driver_seconds = 0, context_seconds = 0;
  std::thread thread;
  std::mutex join_m;
  std::atomic<bool> staging{false};
  std::vector<std::function<void()>> deferred;  // defer_until_cuda_ready
  ~EarlyStart() { join(); }
  void join() {
    if (thread.joinable()) thread.join();
  }
};
EarlyStart& early() {
  static EarlyStart e;
  return e;
}

// Waits (as the process phase "cuda start-up") until the early start has reached
// `stage`: the driver (false) or everything (true). Returns whether it was started.
bool wait_early(bool everything) {
  EarlyStart& e = early();
  std::unique_lock<std::mutex> lock(e.m);
  if (!e.started) return false;
  auto reached = [&] { return everything ? e.done : e.driver_done; };
  if (reached()) return true;
  timeline::Scope phase("cuda start-up");
  e.cv.wait(lock, reached);
  return true;
}
}  // namespace

void start_cuda_early(const std::vector<int>& devices) {
#ifdef NUMPIPE_HAVE_CUDA
  EarlyStart& e = early();
  std::lock_guard<std::mutex> lock(e.m);
  if (e.started) return;
  // Load a module's kernels when first launched, not all at context creation (the
  // default since CUDA 12.2; set here for older drivers and runtimes).
  setenv("CUDA_MODULE_LOADING", "LAZY", 0);
  e.started = true;
  try {
    e.thread = std::thread([devices, &e] {
      using Clock = std::chrono::steady_clock;
      const auto t0 = Clock::now();
      int n = 0;
      if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        n = 0;
      }
      const auto t1 = Clock::now();
      {
        std::lock_guard<std::mutex> l(e.m);
        e.count = n;
        e.driver_done = true;
        e.driver_seconds = std::chrono::duration<double>(t1 - t0).count();
      }
      e.cv.notify_all();
      std::vector<int> list = devices;
      if (list == std::vector<int>{-1})  // --devices all
        for (int d = (list.clear(), 0); d < n; ++d) list.push_back(d);
      for (int d : list) {
        if (d < 0 || d >= n) continue;  // the tool reports a bad --device itself
        if (cudaSetDevice(d) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) cudaGetLastError();
      }
      if (e.staging.load()) prepare_staging();
      {
        std::lock_guard<std::mutex> l(e.m);
        e.done = true;
        e.context_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
      }
      e.cv.notify_all();
    });
  } catch (const std::system_error&) {
    e.started = false;  // no thread to be had: everything happens on first use, as without the early start
  }
#else
  (void)devices;
#endif
}

bool defer_until_cuda_ready(std::function<void()> check) {
  EarlyStart& e = early();
  std::lock_guard<std::mutex> lock(e.m);
  if (!e.started || e.done) return false;
  e.deferred.push_back(std::move(check));
  return true;
}

void wait_cuda_ready() {
  if (!wait_early(true)) return;
  for (;;) {  // the checks deferred while the context was being made (they may refuse the run)
    std::function<void()> check;
    {
      EarlyStart& e = early();
      std::lock_guard<std::mutex> lock(e.m);
      if (e.deferred.empty()) return;
      check = std::move(e.deferred.front());
      e.deferred.erase(e.deferred.begin());
    }
    check();
  }
}

void request_staging_early() { early().staging.store(true); }

void end_cuda_early() {
  EarlyStart& e = early();
  {
    std::lock_guard<std::mutex> lock(e.join_m);
    e.join();
  }
  wait_device_release();
}

namespace {
struct DeviceRelease {
  std::mutex m;
  std::thread thread;
  bool started = false;
};
DeviceRelease& device_release() {
  static DeviceRelease* r = new DeviceRelease;  // never destroyed: joined by run_tool's end
  return *r;
}
}  // namespace

void release_devices_in_background(const std::vector<int>& devices) {
#ifdef NUMPIPE_HAVE_CUDA
  if (devices.empty()) return;
  DeviceRelease& r = device_release();
  std::lock_guard<std::mutex> lock(r.m);
  if (r.started) return;
  forget_staging();
  try {
    r.thread = std::thread([devices] {
      for (int d : devices)
        if (cudaSetDevice(d) == cudaSuccess) cudaDeviceReset();  // a failure here changes no result
      cudaGetLastError();
    });
    r.started = true;
  } catch (const std::system_error&) {
    // no thread to be had: the driver releases the devices at exit, as before
  }
#else
  (void)devices;
#endif
}

void wait_device_release() {
  DeviceRelease& r = device_release();
  std::lock_guard<std::mutex> lock(r.m);
  if (!r.thread.joinable()) return;
  timeline::Scope phase("cuda teardown");
  r.thread.join();
}

CudaStartup cuda_startup() {
  EarlyStart& e = early();
  std::lock_guard<std::mutex> lock(e.m);
  CudaStartup s;
  s.started = e.started;
  s.driver_seconds = e.driver_seconds;
  s.context_seconds = e.context_seconds;
  return s;
}

int cuda_device_count() {
#ifdef NUMPIPE_HAVE_CUDA
  static const int count = [] {
    if (wait_early(false)) {
      std::lock_guard<std::mutex> lock(early().m);
      return early().count;
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
#else
  return 0;
#endif
}

Backend resolve_backend(const std::string& requested) {
  if (requested == "cpu") return Backend::cpu;
  if (requested == "cuda") {
    if (!built_with_cuda())
      fail_resource("--backend cuda: this numpipe was built without CUDA (rebuild with nvcc present, or use --backend cpu)");
    if (cuda_device_count() == 0)
      fail_resource("--backend cuda: no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES, or use --backend cpu)");
    return Backend::cuda;
  }
  if (requested == "auto" || requested.empty()) return cuda_device_count() > 0 ? Backend::cuda : Backend::cpu;
  fail_input("--backend must be auto, cpu or cuda, got '" + requested + "'");
}

json DeviceInfo::to_json() const {
  return {{"kind", kind},
          {"index", index},
          {"name", name},
          {"multiprocessors", multiprocessors},
          {"compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
          {"memory_bytes", memory_bytes},
          {"peak_bandwidth_gbs", peak_bandwidth_gbs},
          {"peak_fp64_gflops", peak_fp64_gflops},
          {"peak_fp32_gflops", peak_fp32_gflops},
          {"peak_source", peak_source}};
}

std::string calibration_path() {
  if (const char* p = std::getenv("NUMPIPE_CALIBRATION"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/numpipe/calibration.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/numpipe/calibration.json";
  return ".numpipe-calibration.json";
}

void apply_calibration(DeviceInfo& info) {
  std::ifstream f(calibration_path());
  if (!f) return;
  json all = json::parse(f, nullptr, false);
  if (all.is_discarded() || !all.is_object() || !all.contains(info.name)) return;
  const json& c = all[info.name];
  if (!c.is_object()) return;
  auto take = [&](const char* key, double& dst) {
    if (c.contains(key) && c[key].is_number() && c[key].get<double>() > 0) dst = c[key].get<double>();
  };
  take("peak_bandwidth_gbs", info.peak_bandwidth_gbs);
  take("peak_fp64_gflops", info.peak_fp64_gflops);
  take("peak_fp32_gflops", info.peak_fp32_gflops);
  info.peak_source = "measured" + (c.contains("date") && c["date"].is_string() ? " " + c["date"].get<std::string>() : std::string());
}

#ifdef NUMPIPE_HAVE_CUDA
namespace {
struct Datasheet {
  const char* name_part;
  double bandwidth_gbs, fp64_gflops, fp32_gflops;
};
// Vendor datasheets (non-tensor FP64/FP32 peaks at boost clock).
constexpr Datasheet kDatasheets[] = {
    {"H200", 4800, 34000, 67000},
    {"H100 80GB HBM3", 3350, 34000, 67000},   // H100 SXM5
    {"H100 NVL", 3900, 30000, 60000},
    {"H100 PCIe", 2000, 25600, 51200},
    {"A100-SXM4-80GB", 2039, 9700, 19500},
    {"A100", 1555, 9700, 19500},
};
}  // namespace
#endif

void init_cuda_context(int index) {
#ifdef NUMPIPE_HAVE_CUDA
  wait_cuda_ready();
  NUMPIPE_CUDA_CHECK(cudaSetDevice(index));
  NUMPIPE_CUDA_CHECK(cudaFree(nullptr));
#else
  (void)index;
  fail_resource("this build has no CUDA backend");
#endif
}

DeviceInfo query_cuda_device(int index) {
  DeviceInfo info;
  info.kind = "cuda";
  info.index = index;
#ifdef NUMPIPE_HAVE_CUDA
  wait_cuda_ready();
  int count = cuda_device_count();
  if (index < 0 || index >= count)
    fail_resource("--device " + std::to_string(index) + ": there are " + std::to_string(count) + " CUDA devices");
  cudaDeviceProp prop{};
  NUMPIPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  info.name = prop.name;
  info.multiprocessors = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.memory_bytes = prop.totalGlobalMem;
  info.peak_source = "estimated";
  // Estimate from clocks: DDR memory moves 2 words per clock; an SM of cc >= 8
  // issues 64 fp32 FMAs per clock per 4 partitions (2 flops each).
  int mem_khz = 0, sm_khz = 0;
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index) != cudaSuccess) cudaGetLastError();
  if (cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, index) != cudaSuccess) cudaGetLastError();
  info.peak_bandwidth_gbs = 2.0 * mem_khz * 1e3 * (prop.memoryBusWidth / 8.0) / 1e9;
  info.peak_fp32_gflops = 2.0 * 128 * info.multiprocessors * sm_khz * 1e3 / 1e9;
  info.peak_fp64_gflops = info.peak_fp32_gflops / (prop.major == 9 || (prop.major == 8 && prop.minor == 0) ? 2 : 64);
  for (const auto& d : kDatasheets)
    if (info.name.find(d.name_part) != std::string::npos) {
      info.peak_bandwidth_gbs = d.bandwidth_gbs;
      info.peak_fp64_gflops = d.fp64_gflops;
      info.peak_fp32_gflops = d.fp32_gflops;
      info.peak_source = "datasheet";
      break;
    }
  apply_calibration(info);
#else
  fail_resource("no CUDA device: this numpipe was built without CUDA");
#endif
  return info;
}

DeviceInfo query_host_cpu() {
  DeviceInfo info;
  info.kind = "cpu";
  info.multiprocessors = static_cast<int>(std::thread::hardware_concurrency());
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) info.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  info.name = "cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) info.name = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  info.peak_source = "unknown (run profile-report --calibrate)";
  apply_calibration(info);
  return info;
}

}  // namespace numpipe
