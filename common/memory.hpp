// The memory budget: a tool estimates its working set before allocating it and
// refuses, with exit 3 and a message naming the size, the estimate and what is
// available, a run that would not fit (rather than being killed by the kernel's
// out-of-memory killer, which on Linux's overcommitting allocator is what happens
// to a run that allocates more than the machine has: malloc succeeds, the pages
// are touched later, and the process gets SIGKILL with nothing on stderr).
//
//   MemoryEstimate e{"n = 4096 (16.8 M cells)", cells, 48, "cell"};
//   require_host_memory(e);            // exit 3 when it does not fit
//   require_device_memory(device, e);  // the same against the GPU's free memory
//
// Available host memory is the least of: MemAvailable (/proc/meminfo), what the
// cgroup's memory limit leaves (v2 memory.max - memory.current + inactive file
// pages, over every ancestor; v1 memory.limit_in_bytes - usage), what `ulimit -v`
// leaves (RLIMIT_AS - VmSize), and NUMPIPE_MEMORY_LIMIT (bytes, or with a k, M,
// G or T suffix: a budget a user sets on a shared machine; the tests use it).
#pragma once
#include <cstdint>
#include <string>

namespace numpipe {

struct HostMemory {
  std::uint64_t bytes = 0;  // available now
  std::string source;       // what bounds it: "MemAvailable", "the cgroup memory limit", ...
  bool known = false;       // false: nothing could be read (bytes is then UINT64_MAX)
};
HostMemory available_host_memory();

// "20.1 GiB", "512.0 MiB", "4.0 KiB", "100 bytes".
std::string format_bytes(double bytes);

// A working set: `units` units of work (cells, points, windows, strikes...) at
// `bytes_per_unit` each, plus `fixed` bytes; `what` names the problem for the
// message ("n = 20480 (419 M cells)").
struct MemoryEstimate {
  std::string what;
  double units = 0;
  double bytes_per_unit = 0;
  std::string unit;  // singular: "cell"
  double fixed = 0;
  double total() const { return units * bytes_per_unit + fixed; }
};

// Resource error (exit 3) when the estimate exceeds the available host memory:
// "not enough memory for n = 20480 (419 M cells): needs about 18.8 GiB (48 bytes
// per cell), 15.2 GiB available (MemAvailable); ...".
void require_host_memory(const MemoryEstimate& e);
// The same against the free memory of CUDA device `device` (cudaMemGetInfo); does
// nothing in a build without CUDA.
void require_device_memory(int device, const MemoryEstimate& e);

// The message run_tool prints for std::bad_alloc: names the available memory.
std::string out_of_memory_message();

}  // namespace numpipe
