#include "timeline.hpp"

#include "signals.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

namespace numpipe::timeline {

namespace {

using Clock = std::chrono::steady_clock;

// Seconds from the process's start to now, by two measures: the kernel's start time
// (clock ticks since boot, 10 ms resolution) against CLOCK_BOOTTIME, and the main
// thread's scheduler accounting (time on a CPU plus time waiting for one: exact,
// but blind to time blocked, e.g. on a cold disk). The second where the first
// agrees with it within a tick, else the first.
double seconds_since_process_start() {
  double coarse = -1, fine = -1;
  {
    std::ifstream f("/proc/self/stat");
    std::string line;
    if (std::getline(f, line)) {
      // Field 22 (starttime) counts from the field after the command's closing ')'.
      const auto close = line.rfind(')');
      if (close != std::string::npos) {
        std::istringstream rest(line.substr(close + 2));
        std::string field;
        unsigned long long start_ticks = 0;
        for (int i = 3; i <= 22 && rest >> field; ++i)
          if (i == 22) start_ticks = std::strtoull(field.c_str(), nullptr, 10);
        const long hz = sysconf(_SC_CLK_TCK);
        timespec ts{};
        if (start_ticks > 0 && hz > 0 && clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
          coarse = double(ts.tv_sec) + ts.tv_nsec * 1e-9 - double(start_ticks) / double(hz);
      }
    }
  }
  {
    std::ifstream f("/proc/self/schedstat");
    unsigned long long run_ns = 0, wait_ns = 0;
    if (f >> run_ns >> wait_ns) fine = (double(run_ns) + double(wait_ns)) * 1e-9;
  }
  const long hz = sysconf(_SC_CLK_TCK);
  const double tick = hz > 0 ? 1.0 / double(hz) : 0.01;
  if (fine >= 0 && (coarse < 0 || coarse - fine < tick + 1e-3)) return fine;
  return std::max(0.0, coarse);
}

struct State {
  Clock::time_point t_static = Clock::now();
  double at_static = seconds_since_process_start();
  std::mutex m;
  std::vector<Entry> entries;  // entries[0]: start-up, once marked
  std::atomic<bool> started{false};
  double startup = 0;
};

State& state() {
  static State s;  // first used from a static initialiser below: as early as this library's initialisation
  return s;
}

// Touch the state during static initialisation so that t_static is taken before main().
const bool kInitialised = (state(), true);

thread_local double nested_seconds = 0;

void add_locked(State& s, const std::string& name, double seconds, double bytes) {
  for (auto& e : s.entries)
    if (e.name == name) {
      e.seconds += seconds;
      e.bytes += bytes;
      return;
    }
  s.entries.push_back({name, seconds, bytes});
}

}  // namespace

double now() {
  State& s = state();
  return s.at_static + std::chrono::duration<double>(Clock::now() - s.t_static).count();
}

void mark_started() {
  State& s = state();
  bool expected = false;
  if (!s.started.compare_exchange_strong(expected, true)) return;
  const double t = now();
  std::lock_guard<std::mutex> lock(s.m);
  s.startup = t;
  s.entries.insert(s.entries.begin(), Entry{"start-up", t, 0});
}

double startup_seconds() { return state().startup; }

void add(const std::string& name, double seconds, double bytes) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  add_locked(s, name, seconds, bytes);
}

std::vector<Entry> phases() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  return s.entries;
}

double total_seconds() {
  double t = 0;
  for (const auto& e : phases()) t += e.seconds;
  return t;
}

bool tracing() {
  static const bool on = [] {
    const char* e = std::getenv("NUMPIPE_TIMELINE_TRACE");
    return e != nullptr && e[0] != '\0' && std::strcmp(e, "0") != 0;
  }();
  return on;
}

void trace(const std::string& name, double begin, double end) {
  if (!tracing()) return;
  std::fprintf(stderr, "%s: timeline: %.4f-%.4f s %s\n", tool_name().c_str(), begin, end, name.c_str());
}

namespace {
// The last moment the process's own code sees: static destruction of this library
// (the CUDA runtime's and the C library's own teardown come after it).
struct TraceAtExit {
  ~TraceAtExit() {
    // (not trace(): the tool's name may already be destroyed at this point)
    if (tracing()) std::fprintf(stderr, "timeline: %.4f s static destruction reached\n", now());
  }
} trace_at_exit;
}  // namespace

Scope::Scope(std::string name, double bytes)
    : name_(std::move(name)), bytes_(bytes), t0_(now()), nested0_(nested_seconds) {
  (void)kInitialised;
}

Scope::~Scope() {
  const double elapsed = now() - t0_;
  const double inner = nested_seconds - nested0_;
  add(name_, std::max(0.0, elapsed - inner), bytes_);
  nested_seconds = nested0_ + elapsed;
  trace(name_, t0_, t0_ + elapsed);
}

}  // namespace numpipe::timeline
