// Profile records: per phase, the time (CUDA events on the GPU, steady_clock on
// the host), the bytes it must move and the flops its algorithm performs.
// `--profile FILE` appends one complete stream per run to FILE; profile-report
// reads them.
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "device.hpp"
#include "stream.hpp"

namespace numpipe {

class Cli;

struct Phase {
  std::string name;
  double seconds = 0;
  double bytes = 0;  // bytes moved through memory (or over the bus) by this phase
  double flops = 0;  // floating-point operations counted from the algorithm
};

class PhaseLog {
 public:
  void add(std::string name, double seconds, double bytes = 0, double flops = 0) {
    phases_.push_back({std::move(name), seconds, bytes, flops});
  }
  const std::vector<Phase>& phases() const { return phases_; }
  double total_seconds() const {
    double t = 0;
    for (const auto& p : phases_) t += p.seconds;
    return t;
  }
  // Runs f() and logs its steady_clock time.
  template <class F>
  void time(const std::string& name, double bytes, double flops, F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    std::forward<F>(f)();
    add(name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), bytes, flops);
  }

 private:
  std::vector<Phase> phases_;
};

class HostTimer {
 public:
  HostTimer() : t0_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// The current UTC time as ISO 8601 ("2026-11-22T18:05:26Z"), for records and reports.
std::string utc_now_iso();

// The median of repeated runs' times (--repeat's reports): the middle value, or the
// mean of the two middle ones; 0 for none.
double median_of(std::vector<double> values);

// The phases of the whole process: the process's own (timeline.hpp: start-up, read
// input, cuda start-up; write output), the tool's `log` between them, and "other
// (host)", the wall time none of them covers; they add up to the seconds from the
// process's start to now. process_names gets the names that are not the tool's.
std::vector<Phase> whole_process_phases(const PhaseLog& log, json* process_names = nullptr, double* wall_seconds = nullptr);

// The profile record of `log`: name "profile", f8 [phases, 3] with columns
// (seconds, bytes, flops); attrs: kind "profile", tool, version, commit, command,
// backend, device{...}, params{...}, phases[names], columns, date, host.
Record make_profile_record(const Cli& cli, Backend backend, const DeviceInfo& device, const json& params,
                           const PhaseLog& log);
// Appends `records` as one complete stream to `path` (one write, O_APPEND).
void append_stream(const std::string& path, const std::vector<Record>& records);
// When the tool was given --profile: appends the record of the whole process
// (whole_process_phases of `log`) with attrs process_phases[names], wall_seconds
// (from the process's start to this record), solve_seconds (the sum of `log`) and,
// where the CUDA context was made early, cuda_startup{driver_seconds,
// context_seconds}. Does nothing otherwise.
void write_profile_if_requested(const Cli& cli, Backend backend, const DeviceInfo& device, const json& params,
                                const PhaseLog& log);

}  // namespace numpipe
