// A progress line on stderr for long runs: shown only when stderr is a terminal,
// -q was not given, and the run has lasted more than a second; at most 10
// updates a second; erased when done.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace numpipe {

class Progress {
 public:
  Progress(std::string label, std::uint64_t total, bool quiet);
  ~Progress();
  void update(std::uint64_t done);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace numpipe
