#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "strings.hpp"

namespace numpipe {

namespace {
constexpr std::int64_t kInterval = 250'000'000;  // ns between two lines: at most 4 a second

// Rank of this process in an MPI run, read from the starter's environment without
// starting MPI (the progress line of an MPI run is rank 0's).
bool is_first_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    const char* r = std::getenv(v);
    if (r && *r && std::atoi(r) != 0) return false;
  }
  return true;
}

// Seconds before the first line (NUMPIPE_PROGRESS_AFTER; the tests set 0).
double first_line_after() {
  const char* s = std::getenv("NUMPIPE_PROGRESS_AFTER");
  if (!s || !*s) return 1.0;
  double v = 0;
  return is_decimal_number(s, &v) && v >= 0 && std::isfinite(v) ? v : 1.0;
}

std::int64_t ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

namespace {
std::atomic<Progress*> g_active{nullptr};
}

Progress* active_progress() { return g_active.load(std::memory_order_relaxed); }

ActiveProgress::ActiveProgress(Progress& p) : previous_(g_active.load()) {
  g_active.store(p.enabled() ? &p : nullptr);
}

ActiveProgress::~ActiveProgress() { g_active.store(previous_); }

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  auto s = static_cast<long long>(std::llround(seconds));
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

std::string format_rate(double v) {
  char buf[48];
  const char* suffix = "";
  if (v >= 1e9) {
    v /= 1e9;
    suffix = "G";
  } else if (v >= 1e6) {
    v /= 1e6;
    suffix = "M";
  } else if (v >= 1e4) {
    v /= 1e3;
    suffix = "k";
  }
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v, suffix);
  return buf;
}

Progress::Progress(std::string tool, std::string unit, std::uint64_t total, bool quiet)
    : tool_(std::move(tool)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(!quiet && isatty(STDERR_FILENO) && is_first_rank()),
      start_(std::chrono::steady_clock::now()),
      next_print_ns_(static_cast<std::int64_t>(first_line_after() * 1e9)) {}

Progress::Progress(std::string tool, std::uint64_t total, bool quiet)
    : Progress(std::move(tool), "steps", total, quiet) {}

Progress::~Progress() { finish(); }

std::string Progress::line(std::uint64_t done, double elapsed) const {
  std::string s = tool_ + ": " + std::to_string(done) + "/" + std::to_string(total_) + " " + unit_;
  if (total_ > 0) {
    char pct[16];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", std::floor(100.0 * static_cast<double>(done) / total_));
    s += pct;
  }
  if (detail_) s += ", " + detail_();
  if (done > 0 && elapsed > 0) {
    const double rate = done / elapsed;
    s += ", " + format_rate(rate) + " " + unit_ + "/s";
    if (total_ >= done) s += ", " + format_duration((total_ - done) / rate) + " left";
  }
  return s;
}

std::string Progress::summary(std::uint64_t done, double elapsed) const {
  char secs[32];
  std::snprintf(secs, sizeof secs, elapsed >= 10 ? "%.0f s" : "%.1f s", elapsed);
  std::string s = tool_ + ": " + std::to_string(done) + " " + unit_ + " in " + secs;
  if (elapsed >= 60) s += " (" + format_duration(elapsed) + ")";
  if (done > 0 && elapsed > 0) s += ", " + format_rate(done / elapsed) + " " + unit_ + "/s";
  if (detail_) s += ", " + detail_();
  if (done < total_) s += ", stopped at " + std::to_string(done) + "/" + std::to_string(total_);
  return s;
}

void Progress::maybe_print(std::uint64_t done) {
  const std::int64_t now = ns_since(start_);
  std::int64_t due = next_print_ns_.load(std::memory_order_relaxed);
  if (now < due) return;
  // One thread prints; the others go back to work.
  if (!next_print_ns_.compare_exchange_strong(due, now + kInterval, std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(print_);
  if (finished_) return;
  std::fprintf(stderr, "\r%s\033[K", line(done, now * 1e-9).c_str());
  std::fflush(stderr);
  shown_.store(true, std::memory_order_relaxed);
}

void Progress::update(std::uint64_t done) {
  if (!enabled_) return;
  std::uint64_t old = done_.load(std::memory_order_relaxed);
  while (done > old && !done_.compare_exchange_weak(old, done, std::memory_order_relaxed)) {
  }
  maybe_print(done_.load(std::memory_order_relaxed));
}

void Progress::advance(std::uint64_t n) {
  if (!enabled_) return;
  const std::uint64_t done = done_.fetch_add(n, std::memory_order_relaxed) + n;
  maybe_print(done);
}

void Progress::set_work(std::uint64_t total_work) {
  work_total_ = total_work;
  work_done_.store(0, std::memory_order_relaxed);
}

void Progress::advance_work(std::uint64_t w) {
  const std::uint64_t work = work_done_.fetch_add(w, std::memory_order_relaxed) + w;
  const double share = std::min(1.0, static_cast<double>(work) / static_cast<double>(work_total_));
  update(static_cast<std::uint64_t>(share * static_cast<double>(total_)));
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(print_);
  if (finished_) return;
  finished_ = true;
  if (shown_.load(std::memory_order_relaxed)) {
    std::fprintf(stderr, "\r%s\033[K\n", summary(done_.load(), ns_since(start_) * 1e-9).c_str());
    std::fflush(stderr);
  }
}

}  // namespace numpipe
