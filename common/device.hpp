// Backend selection and device query: what runs the kernels, and how fast it can
// go (peaks from `profile-report --calibrate` when measured, else the datasheet).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stream.hpp"

namespace numpipe {

enum class Backend { cpu, cuda };
const char* backend_name(Backend b);

// --backend auto|cpu|cuda. auto: CUDA when this build has it and a device is present.
// Asking for cuda without it is a resource error (exit 3) saying why.
Backend resolve_backend(const std::string& requested);

// Number of usable CUDA devices (0 in a CPU-only build or without a driver).
int cuda_device_count();
bool built_with_cuda();

struct DeviceInfo {
  std::string kind;            // "cuda" or "cpu"
  int index = 0;
  std::string name;
  int multiprocessors = 0;     // SMs, or CPU hardware threads
  int cc_major = 0, cc_minor = 0;
  std::uint64_t memory_bytes = 0;
  double peak_bandwidth_gbs = 0;  // bytes read + written per second, GB/s
  double peak_fp64_gflops = 0;
  double peak_fp32_gflops = 0;
  std::string peak_source;     // "measured <date>", "datasheet" or "estimated"
  json to_json() const;
};

// The CUDA device `index`; resource error if there is none. Waits for the early
// start (start_cuda_early) first.
DeviceInfo query_cuda_device(int index);
// Creates the CUDA context of device `index` (the driver's one-time set-up, ~0.1 s),
// so that a tool can time it as its own phase instead of inside its first solve.
// Waits for the early start first.
void init_cuda_context(int index);

// Start-up: the driver's initialisation and the devices' primary contexts cost a
// GPU tool most of its start-up (0.1-0.3 s). start_cuda_early() does them on a thread
// of their own while the tool reads and checks its input (Cli::parse calls it for
// every tool with --backend auto or cuda; `devices` empty: the driver only, as under
// MPI where the rank picks its GPU later); lazy module loading (CUDA_MODULE_LOADING=
// LAZY unless set) loads only the kernels a run launches. wait_cuda_ready() returns
// when that work is done, and counts the time the caller waited as the process phase
// "cuda start-up". The CUDA runtime is thread-safe: a CUDA call made before waiting
// is correct too, it only blocks inside the driver, unaccounted. Without CUDA, or
// when never started, both do nothing.
void start_cuda_early(const std::vector<int>& devices);
void wait_cuda_ready();
// A check that needs the device (its free memory) asked for while the early start is
// still making the context: run it when the context is ready (wait_cuda_ready runs the
// deferred checks, in order, on the thread that waits), so that reading the input goes
// on meanwhile. Returns false when the check should run now (no early start under
// way). The checks still come before any device allocation: every GPU path waits
// first (query_cuda_device, init_cuda_context).
bool defer_until_cuda_ready(std::function<void()> check);
// A tool that copies large arrays between host and device (staging.hpp) asks for
// the pinned buffers to be allocated by the early start too (after the contexts).
void request_staging_early();
// Joins the early start's thread (run_tool calls it before the process ends, so that
// the thread never runs while the CUDA runtime tears down).
void end_cuda_early();
// The end of a run's device work: ends this process's use of `devices` (cudaDeviceReset
// of each: their memory, modules, streams and graphs) on a thread of its own while the
// host goes on writing its output, instead of at the process's exit, where the driver
// does the same work outside any profile. After it no CUDA call may be made: every
// device object must be gone; the pinned staging buffers go with the contexts.
// wait_device_release() waits for it, as the process phase "cuda teardown"
// (write_profile_if_requested and run_tool's end call it). Without CUDA: nothing.
void release_devices_in_background(const std::vector<int>& devices);
void wait_device_release();
// What the early start measured on its thread (seconds; 0 when it did not run):
// the driver's initialisation and the contexts' creation.
struct CudaStartup {
  double driver_seconds = 0, context_seconds = 0;
  bool started = false;
};
CudaStartup cuda_startup();
// The host CPU (model name, hardware threads, memory; peaks from calibration if any).
DeviceInfo query_host_cpu();

// Calibration file: $NUMPIPE_CALIBRATION, else $XDG_CACHE_HOME/numpipe/calibration.json,
// else ~/.cache/numpipe/calibration.json. A JSON object keyed by device name.
std::string calibration_path();
// Applies stored measurements for info.name, if any, to the peaks.
void apply_calibration(DeviceInfo& info);

}  // namespace numpipe
