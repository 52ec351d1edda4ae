// Host and device allocation behind HostArray and DeviceArray, and the memory
// budget of memory.hpp.
#include "memory.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "device.hpp"
#include "device_array.hpp"
#include "error.hpp"
#include "host_array.hpp"
#include "strings.hpp"

namespace numpipe {

std::string format_bytes(double b) {
  char buf[48];
  if (b >= 1099511627776.0) std::snprintf(buf, sizeof buf, "%.1f TiB", b / 1099511627776.0);
  else if (b >= 1073741824.0) std::snprintf(buf, sizeof buf, "%.1f GiB", b / 1073741824.0);
  else if (b >= 1048576.0) std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else if (b >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.0f bytes", b);
  return buf;
}

namespace {

// The first number of a file ("max" or a missing file: nothing).
bool read_number(const std::string& path, std::uint64_t& out) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word.empty() || word[0] < '0' || word[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(word.c_str(), &end, 10);
  if (errno || *end) return false;
  out = v;
  return true;
}

// "key value" lines (/proc/meminfo "MemAvailable:  123 kB", memory.stat "inactive_file 123").
bool read_key(const std::string& path, const std::string& key, std::uint64_t& out) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() == key.size()) continue;
    const char next = line[key.size()];
    if (next != ' ' && next != ':' && next != '\t') continue;
    std::istringstream rest(line.substr(key.size() + 1));
    unsigned long long v = 0;
    std::string unit;
    if (!(rest >> v)) return false;
    rest >> unit;
    out = unit == "kB" ? v * 1024ull : v;
    return true;
  }
  return false;
}

// This process's cgroup path for a controller ("" for v2's unified line "0::").
std::string cgroup_path(const std::string& controller) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string list = line.substr(a + 1, b - a - 1);
    bool match = controller.empty() ? list.empty() : false;
    for (const std::string& name : split_items(list))
      if (name == controller) match = true;
    if (match) return line.substr(b + 1);
  }
  return "";
}

// What the cgroup limits leave, over every ancestor of this process's cgroup.
void bound_by_cgroups(HostMemory& m) {
  auto consider = [&](std::uint64_t avail, const std::string& where) {
    if (!m.known || avail < m.bytes) {
      m.bytes = avail;
      m.source = "the cgroup memory limit of " + where;
      m.known = true;
    }
  };
  // v2: memory.max, memory.current, memory.stat's inactive_file (page cache the kernel reclaims first).
  for (std::string dir = "/sys/fs/cgroup" + cgroup_path("");;) {
    std::uint64_t max = 0, cur = 0, inactive = 0;
    if (read_number(dir + "/memory.max", max) && read_number(dir + "/memory.current", cur)) {
      read_key(dir + "/memory.stat", "inactive_file", inactive);
      consider(max + inactive > cur ? max + inactive - cur : 0, dir);
    }
    if (dir == "/sys/fs/cgroup" || dir.size() <= 14) break;
    dir = dir.substr(0, dir.rfind('/'));
  }
  // v1: memory.limit_in_bytes (a value near 2^63 means none), memory.usage_in_bytes.
  for (std::string dir = "/sys/fs/cgroup/memory" + cgroup_path("memory");;) {
    std::uint64_t max = 0, cur = 0, inactive = 0;
    if (read_number(dir + "/memory.limit_in_bytes", max) && max < (std::uint64_t(1) << 60) &&
        read_number(dir + "/memory.usage_in_bytes", cur)) {
      read_key(dir + "/memory.stat", "total_inactive_file", inactive);
      consider(max + inactive > cur ? max + inactive - cur : 0, dir);
    }
    if (dir == "/sys/fs/cgroup/memory" || dir.size() <= 21) break;
    dir = dir.substr(0, dir.rfind('/'));
  }
}

// "20G", "512M", "1.5GB", "1000000": bytes, or false. The number in decimal
// (is_decimal_number: "0x10G" is no size).
bool parse_size(const char* text, std::uint64_t& out) {
  std::string number = text;
  if (!number.empty() && (number.back() == 'B' || number.back() == 'b')) number.pop_back();
  double scale = 1;
  switch (number.empty() ? '\0' : number.back()) {
    case 'k': case 'K': scale = 1024.0; break;
    case 'm': case 'M': scale = 1048576.0; break;
    case 'g': case 'G': scale = 1073741824.0; break;
    case 't': case 'T': scale = 1099511627776.0; break;
    default: break;
  }
  if (scale != 1) number.pop_back();
  double v = 0;
  if (!is_decimal_number(number, &v) || !(v > 0) || v * scale > 1.8e19) return false;
  out = static_cast<std::uint64_t>(v * scale);
  return true;
}

}  // namespace

HostMemory available_host_memory() {
  HostMemory m;
  std::uint64_t v = 0;
  if (read_key("/proc/meminfo", "MemAvailable", v)) {
    m.bytes = v;
    m.source = "MemAvailable in /proc/meminfo";
    m.known = true;
  }
  bound_by_cgroups(m);
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    std::uint64_t used = 0;
    read_key("/proc/self/status", "VmSize", used);
    const std::uint64_t left = as.rlim_cur > used ? as.rlim_cur - used : 0;
    if (!m.known || left < m.bytes) {
      m.bytes = left;
      m.source = "the address-space limit (ulimit -v " + std::to_string(as.rlim_cur / 1024) + ")";
      m.known = true;
    }
  }
  if (const char* env = std::getenv("NUMPIPE_MEMORY_LIMIT"); env && *env) {
    std::uint64_t limit = 0;
    if (!parse_size(env, limit))
      fail_input(std::string("NUMPIPE_MEMORY_LIMIT must be a size in bytes such as 8G or 512M, got '") + env + "'");
    if (!m.known || limit < m.bytes) {
      m.bytes = limit;
      m.source = std::string("NUMPIPE_MEMORY_LIMIT=") + env;
      m.known = true;
    }
  }
  if (!m.known) m.bytes = UINT64_MAX;
  return m;
}

void require_host_memory(const MemoryEstimate& e) {
  const HostMemory m = available_host_memory();
  const double need = e.total();
  if (!m.known || need <= static_cast<double>(m.bytes)) return;
  char per[64];
  std::snprintf(per, sizeof per, "%.0f bytes per %s", e.bytes_per_unit, e.unit.c_str());
  fail_resource("not enough memory for " + e.what + ": the run needs about " + format_bytes(need) + " (" + per +
                (e.fixed > 0 ? " and " + format_bytes(e.fixed) : std::string()) + "), " + format_bytes(double(m.bytes)) +
                " available (" + m.source + "); use a smaller problem, or a machine with more memory");
}

std::string out_of_memory_message() {
  const HostMemory m = available_host_memory();
  std::string msg = "out of memory: an allocation failed";
  if (m.known) msg += " (" + format_bytes(double(m.bytes)) + " available now, " + m.source + ")";
  return msg + "; use a smaller problem, or a machine with more memory";
}

#ifndef NUMPIPE_HAVE_CUDA
void require_device_memory(int, const MemoryEstimate&) {}
#else
void require_device_memory(int device, const MemoryEstimate& e) {
  // While the CUDA context is being made on its thread (device.hpp), the check waits
  // for it without holding up the reading of the input; it runs before any device work.
  if (defer_until_cuda_ready([device, e] { require_device_memory(device, e); })) return;
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    cudaGetLastError();
    return;  // no usable device: the solve reports it
  }
  if (cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  std::size_t free_b = 0, total_b = 0;
  const bool ok = cudaMemGetInfo(&free_b, &total_b) == cudaSuccess;
  if (!ok) cudaGetLastError();
  cudaSetDevice(previous);
  if (!ok || e.total() <= static_cast<double>(free_b)) return;
  char per[64];
  std::snprintf(per, sizeof per, "%.0f bytes per %s", e.bytes_per_unit, e.unit.c_str());
  fail_resource("not enough GPU memory for " + e.what + ": the run needs about " + format_bytes(e.total()) + " (" + per +
                (e.fixed > 0 ? " and " + format_bytes(e.fixed) : std::string()) + ") on CUDA device " +
                std::to_string(device) + ", which has " + format_bytes(double(free_b)) + " free of " +
                format_bytes(double(total_b)) + "; use a smaller problem, or spread it over several GPUs where the "
                "tool can (--devices all, mpirun)");
}
#endif

}  // namespace numpipe

namespace numpipe::detail {

namespace {
std::string gib(std::size_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
  return buf;
}
}  // namespace

void* allocate_host(std::size_t bytes, bool pinned) {
  if (bytes == 0) return nullptr;
#ifdef NUMPIPE_HAVE_CUDA
  if (pinned) {
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) == cudaSuccess) return p;
    cudaGetLastError();  // clear the sticky-free error and fall back to pageable memory
  }
#endif
  (void)pinned;
  // Large arrays start on a huge-page boundary and ask for transparent huge pages:
  // their first touch (page faults) then runs 2-3x faster and their release about
  // 10x faster (bench/host-memory on the H200 machine: 7 against 2.4 GB/s from one
  // thread, 35-55 against 14-24 GB/s from 16; munmap 3 against 30 ms per GiB).
  constexpr std::size_t kAlign = 64, kHugePage = std::size_t(2) << 20;
  const bool large = bytes >= 2 * kHugePage;
  const std::size_t align = large ? kHugePage : kAlign;
  std::size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  if (p && large) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: no huge pages, no harm
#endif
  if (!p) {
    const HostMemory m = available_host_memory();
    fail_resource("out of host memory allocating " + gib(bytes) +
                  (m.known ? " (" + format_bytes(double(m.bytes)) + " available, " + m.source + ")" : std::string()) +
                  "; use a smaller problem, or a machine with more memory");
  }
  return p;
}

void free_host(void* p, bool pinned) noexcept {
  if (!p) return;
#ifdef NUMPIPE_HAVE_CUDA
  // A pinned request may have fallen back to aligned_alloc: ask the runtime which it was.
  if (pinned) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost) {
      cudaFreeHost(p);
      return;
    }
    cudaGetLastError();
  }
#endif
  (void)pinned;
  std::free(p);
}

#ifdef NUMPIPE_HAVE_CUDA
void* allocate_device(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  cudaError_t status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    fail_resource("out of device memory allocating " + gib(bytes) + " (" + gib(free_b) + " free of " + gib(total_b) +
                  "): use a smaller problem or split it (--devices all)");
  }
  return p;
}

void free_device(void* p) noexcept {
  if (p) cudaFree(p);
}

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line) {
  std::string msg = std::string("CUDA error ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                    ") in " + what + " at " + file + ":" + std::to_string(line);
  if (status == cudaErrorMemoryAllocation) fail_resource(msg);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) fail_resource(msg);
  fail_internal(msg);
}
#endif

}  // namespace numpipe::detail
