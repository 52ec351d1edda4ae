#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace numpipe {

Progress::Progress(std::string label, std::uint64_t total, bool quiet)
    : label_(std::move(label)), total_(total), enabled_(!quiet && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(std::uint64_t done) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || std::chrono::duration<double>(now - last_).count() < 0.1) return;
  last_ = now;
  double frac = total_ ? static_cast<double>(done) / total_ : 0;
  double eta = frac > 0 ? elapsed * (1 - frac) / frac : 0;
  std::fprintf(stderr, "\r%s: %llu/%llu (%.0f%%), %.0f s left   ", label_.c_str(), (unsigned long long)done,
               (unsigned long long)total_, 100 * frac, eta);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
  enabled_ = false;
}

}  // namespace numpipe
