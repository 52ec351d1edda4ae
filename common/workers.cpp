#include "workers.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "error.hpp"

namespace numpipe {

bool Job::ready() const {
  if (!state_) return true;
  std::lock_guard<std::mutex> lock(state_->m);
  return state_->done;
}

void Job::wait() const {
  if (!state_) return;
  std::unique_lock<std::mutex> lock(state_->m);
  state_->cv.wait(lock, [&] { return state_->done; });
  if (state_->error) std::rethrow_exception(state_->error);
}

int WorkerPool::default_size() {
  if (const char* env = std::getenv("NUMPIPE_IO_THREADS"); env && *env) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end == env || *end || v < 1 || v > 1024)
      fail_input(std::string("NUMPIPE_IO_THREADS must be an integer in [1, 1024], got '") + env + "'");
    return static_cast<int>(v);
  }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<int>(std::clamp(cores, 1L, 16L));
}

WorkerPool::WorkerPool(int threads) : threads_(std::max(1, threads)) {}

namespace {
std::mutex io_mutex;
std::unique_ptr<WorkerPool>& io_slot() {
  static std::unique_ptr<WorkerPool> pool;
  return pool;
}
}  // namespace

WorkerPool& WorkerPool::io() {
  std::lock_guard<std::mutex> lock(io_mutex);
  auto& pool = io_slot();
  if (!pool) pool = std::make_unique<WorkerPool>(default_size());
  return *pool;
}

void WorkerPool::reset_io_for_testing(int threads) {
  std::lock_guard<std::mutex> lock(io_mutex);
  io_slot() = std::make_unique<WorkerPool>(threads);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void WorkerPool::start() {
  // Under the lock: the first submit starts the team. A thread that cannot be
  // started leaves a smaller team (at least the jobs still run: see submit()).
  started_ = true;
  for (int i = 0; i < threads_; ++i) {
    try {
      workers_.emplace_back([this] { loop(); });
    } catch (const std::exception&) {
      break;
    }
  }
}

void WorkerPool::loop() {
  for (;;) {
    std::pair<std::function<void()>, std::shared_ptr<Job::State>> item;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      item.first();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(item.second->m);
      item.second->done = true;
      item.second->error = error;
    }
    item.second->cv.notify_all();
  }
}

Job WorkerPool::submit(std::function<void()> f) {
  Job job;
  job.state_ = std::make_shared<Job::State>();
  bool run_here = false;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (!started_) start();
    if (workers_.empty()) run_here = true;  // no thread could be started: run it now
    else queue_.emplace_back(std::move(f), job.state_);
  }
  if (run_here) {
    try {
      f();
    } catch (...) {
      job.state_->error = std::current_exception();
    }
    job.state_->done = true;
    return job;
  }
  cv_.notify_one();
  return job;
}

void WorkerPool::parallel_for(std::size_t count, const std::function<void(std::size_t)>& f) {
  if (count == 0) return;
  if (count == 1 || threads_ <= 1) {
    for (std::size_t i = 0; i < count; ++i) f(i);
    return;
  }
  // Indices are taken from a shared counter by the helpers and the caller; each
  // index runs exactly once, and its work does not depend on who ran it.
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  std::vector<std::exception_ptr> errors(count);
  auto drain = [&, next] {
    for (std::size_t i; (i = next->fetch_add(1)) < count;) {
      try {
        f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(count - 1, static_cast<std::size_t>(threads_));
  {
    JobGroup group(*this);
    for (std::size_t h = 0; h < helpers; ++h) group.add(drain);
    drain();
  }  // every helper has ended
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void JobGroup::wait_all_quietly() noexcept {
  for (auto& j : jobs_) {
    try {
      j.wait();
    } catch (...) {
    }
  }
  jobs_.clear();
}

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  // A thread's share: 512 KiB (16 shares of a staging piece). On the H200 host an 8 MiB
  // piece copied into pinned memory at 24-25 GB/s in 1 MiB shares (8 threads) and at
  // 47-49 GB/s in these (smaller shares not measured).
  constexpr std::size_t kSlice = std::size_t(512) << 10;
  if (bytes <= 2 * kSlice) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  WorkerPool& pool = WorkerPool::io();
  const std::size_t parts = std::min<std::size_t>((bytes + kSlice - 1) / kSlice, static_cast<std::size_t>(pool.size()) + 1);
  // ceil(bytes / parts), rounded up to a cache line: the shares cover every byte (the
  // quotient rounded down lost the last bytes where it was already a multiple of 64).
  const std::size_t per = ((bytes + parts - 1) / parts + 63) & ~std::size_t(63);
  pool.parallel_for(parts, [&](std::size_t i) {
    const std::size_t a = std::min(bytes, i * per), b = std::min(bytes, a + per);
    if (b > a) std::memcpy(static_cast<char*>(dst) + a, static_cast<const char*>(src) + a, b - a);
  });
}

void touch_pages(void* p, std::size_t bytes) {
  constexpr std::uintptr_t kPage = 4096;               // the smallest page: a huge one holds many
  constexpr std::size_t kChunk = std::size_t(2) << 20;  // one huge page a job
  if (bytes == 0) return;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p), end = begin + bytes;
  const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
  auto touch = [&](std::size_t c) {
    const std::uintptr_t a = begin + c * kChunk, e = std::min<std::uintptr_t>(end, a + kChunk);
    for (std::uintptr_t q = a; q < e; q = (q | (kPage - 1)) + 1) *reinterpret_cast<volatile char*>(q) = 0;
  };
  if (chunks == 1) {
    touch(0);
    return;
  }
  WorkerPool::io().parallel_for(chunks, touch);
}

}  // namespace numpipe
