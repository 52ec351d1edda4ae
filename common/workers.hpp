// A small team of host threads for the work around a solve: compressing and
// decompressing stream frames, copying through pinned staging buffers. Separate
// from OpenMP (the CPU backends' threads), started on first use, idle (blocked,
// no spinning) when there is nothing to do.
//
// Size: NUMPIPE_IO_THREADS (a tuning knob, docs/DEVELOPING.md "Tuning"), else the
// online cores, at most 16. Results never depend on it: every job is a fixed piece
// of work (one frame, one slice of a copy) whose output does not depend on which
// thread ran it or how many there are.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace numpipe {

// The completion of one job: wait() returns when it ran, rethrowing its exception.
class Job {
 public:
  Job() = default;
  bool valid() const { return static_cast<bool>(state_); }
  bool ready() const;
  void wait() const;  // rethrows the job's exception (once per Job object it was taken from)

 private:
  friend class WorkerPool;
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr error;
  };
  std::shared_ptr<State> state_;
};

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The process's pool for stream and copy work (created on first call).
  static WorkerPool& io();
  // Its size without starting it: NUMPIPE_IO_THREADS, else min(online cores, 16).
  static int default_size();
  // Tests: replaces the io pool by one of `threads` (only while no job runs).
  static void reset_io_for_testing(int threads);

  int size() const { return threads_; }
  // Queues f to run on a worker; the Job reports its completion.
  Job submit(std::function<void()> f);
  // Runs f(0..count-1), spread over the workers and the calling thread; returns when
  // every call returned, rethrowing the first exception (by index) after all ended.
  // Not from inside a job (a worker waiting for helpers queued behind it could wait forever).
  void parallel_for(std::size_t count, const std::function<void(std::size_t)>& f);

 private:
  void start();
  void loop();
  int threads_;
  bool started_ = false, stopping_ = false;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::pair<std::function<void()>, std::shared_ptr<Job::State>>> queue_;
  std::vector<std::thread> workers_;
};

// Jobs that must all end before the memory they touch goes away: the destructor waits
// for every job still running (without rethrowing), so an error that unwinds the
// caller never leaves a worker writing into freed buffers.
class JobGroup {
 public:
  explicit JobGroup(WorkerPool& pool) : pool_(pool) {}
  ~JobGroup() { wait_all_quietly(); }
  JobGroup(const JobGroup&) = delete;
  JobGroup& operator=(const JobGroup&) = delete;
  Job add(std::function<void()> f) {
    jobs_.push_back(pool_.submit(std::move(f)));
    return jobs_.back();
  }
  void wait_all_quietly() noexcept;

 private:
  WorkerPool& pool_;
  std::vector<Job> jobs_;
};

// Makes items 0..count-1 on `pool` and hands each to take(buffer), on the calling
// thread and in order, as soon as it and the ones before it are made: make(k, buffer)
// fills one of a window of pool.size() + 2 buffers, reused from item to item (no
// fresh memory per item). Writing compressed frames in order while the next ones
// compress. An exception of make() is rethrown here after the jobs ended.
template <class Buffer, class Make, class Take>
void make_in_order(WorkerPool& pool, std::size_t count, Make make, Take take) {
  const std::size_t window = std::min<std::size_t>(count, static_cast<std::size_t>(pool.size()) + 2);
  std::vector<Buffer> bufs(window);
  std::vector<Job> jobs(window);
  JobGroup group(pool);  // after bufs: destroyed first, it waits for every job still writing into them
  for (std::size_t k = 0; k < count + window; ++k) {
    if (k >= window && k - window < count) {  // item k - window is next
      const std::size_t slot = (k - window) % window;
      jobs[slot].wait();
      take(static_cast<const Buffer&>(bufs[slot]));
    }
    if (k < count) {
      Buffer* buffer = &bufs[k % window];
      jobs[k % window] = group.add([&make, k, buffer] { make(k, *buffer); });
    }
  }
}

// memcpy spread over the io pool for large copies (pinned staging, frame assembly).
void parallel_copy(void* dst, const void* src, std::size_t bytes);

// Writes one byte (0) in every page of [p, p + bytes), spread over the io pool: the
// page faults (and the kernel's zeroing) of fresh memory taken now, on many threads,
// instead of by the one that fills it later (a download while the GPU still works).
// For memory whose contents are about to be overwritten.
void touch_pages(void* p, std::size_t bytes);

}  // namespace numpipe
