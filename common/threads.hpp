// Work split over devices, one host thread per part: each part makes its own device
// current (the current device is per thread) and the parts run at once.
#pragma once
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace numpipe {

// Runs part(0), ..., part(count - 1) at once, each on a thread of its own (on the
// calling thread when count is 1), waits for every one, then rethrows the failure of
// the lowest-numbered part that failed.
inline void run_parts_on_threads(std::size_t count, const std::function<void(std::size_t)>& part) {
  std::vector<std::exception_ptr> errors(count);
  auto guarded = [&](std::size_t i) {
    try {
      part(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  if (count == 1) {
    guarded(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < count; ++i) threads.emplace_back(guarded, i);
    for (auto& t : threads) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace numpipe
