// The one progress line of a long run, on stderr:
//
//   integrate: 41250/100000 policies (41%), 2310 policies/s, 0:25 left
//
// and, when the run ends, a summary line in its place:
//
//   integrate: 100000 policies in 43.3 s (2310 policies/s)
//
// Shown only when stderr is a terminal, -q was not given, this is rank 0 of an
// MPI run, and the run has lasted NUMPIPE_PROGRESS_AFTER seconds (default 1; a
// short run prints nothing). At most 4 updates a second. Cheap enough for any
// loop: update() and advance() read the steady clock and print only when the
// line is due; advance() may be called from any thread (OpenMP workers).
// Nothing is printed, and almost nothing is done, when the line is disabled.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace numpipe {

class Progress {
 public:
  // tool: the tool's name; unit: what is counted, plural ("steps", "policies",
  // "windows", "strikes"); total: how many of them this run does.
  Progress(std::string tool, std::string unit, std::uint64_t total, bool quiet);
  // Counted in "steps" (the first form of this class).
  Progress(std::string tool, std::uint64_t total, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The count so far (from the loop that owns it; never decreases the count).
  void update(std::uint64_t done);
  // Adds n to the count; safe from several threads at once.
  void advance(std::uint64_t n = 1);
  // A kernel whose work does not come in the tool's unit (the CPU loops of a plan
  // shared by many policies) reports its own: set_work(W) once, then add_work(w)
  // from any thread as work is finished; the line then counts the tool's unit in
  // proportion (W of work stands for `total`). Costs one branch when disabled.
  void set_work(std::uint64_t total_work);
  void add_work(std::uint64_t w) {
    if (enabled_ && work_total_) advance_work(w);
  }
  // Text the line and the summary add after the count (a stepping run: the simulated
  // time reached), asked for only when a line is printed, from the thread that prints.
  void set_detail(std::function<std::string()> detail) { detail_ = std::move(detail); }
  // Ends the line: the summary when the line was shown. Idempotent; the destructor calls it.
  void finish();

  bool enabled() const { return enabled_; }
  std::uint64_t done() const { return done_.load(std::memory_order_relaxed); }

  // The text of the line and of the summary (for tests): `elapsed` seconds since the start.
  std::string line(std::uint64_t done, double elapsed) const;
  std::string summary(std::uint64_t done, double elapsed) const;

 private:
  void maybe_print(std::uint64_t done);
  void advance_work(std::uint64_t w);

  std::string tool_, unit_;
  std::function<std::string()> detail_;
  std::uint64_t total_;
  bool enabled_;
  bool finished_ = false;
  std::atomic<bool> shown_{false};
  std::atomic<std::uint64_t> done_{0};
  std::uint64_t work_total_ = 0;
  std::atomic<std::uint64_t> work_done_{0};
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::int64_t> next_print_ns_;  // since start_; the next time a line is due
  std::mutex print_;
};

// The running tool's progress line, for the loops of its kernels, which are not
// handed one (their interfaces stay as they are): the tool makes its Progress
// active for the solve,
//   ActiveProgress active(progress);
// and a kernel's loop reports through active_progress(), null when there is none
// or when the line is disabled (not a terminal, -q): one load and a branch.
//   if (auto* p = active_progress()) p->advance(1);
Progress* active_progress();
class ActiveProgress {
 public:
  explicit ActiveProgress(Progress& p);
  ~ActiveProgress();
  ActiveProgress(const ActiveProgress&) = delete;
  ActiveProgress& operator=(const ActiveProgress&) = delete;

 private:
  Progress* previous_;
};

// "1:02:03" or "2:03" for a number of seconds.
std::string format_duration(double seconds);
// 3 significant digits with k/M/G: "2310", "45.2k", "1.25M".
std::string format_rate(double per_second);

}  // namespace numpipe
