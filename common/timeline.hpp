// The process's own phases, from the kernel's start of the process to its profile
// record: start-up (exec, dynamic loading, static initialisers, option parsing),
// reading the input, waiting for the CUDA context, writing the output. The tools'
// solve phases (PhaseLog) come between them; profile.cpp puts both in one record
// whose phases add up to the wall time (the rest is named "other (host)").
//
// Thread-safe. Phases measured on a thread of their own (the CUDA context created
// while the input is read) count only the time the main thread waited for them.
#pragma once
#include <string>
#include <vector>

namespace numpipe::timeline {

// Seconds since the process started (the kernel's start time of this process).
double now();
// Start-up: seconds from the process's start to the first call of mark_started()
// (Cli::parse), measured by the scheduler's accounting of the main thread before
// static initialisation where that agrees with the kernel's start time (10 ms
// resolution), else by the start time.
double startup_seconds();
// Called once, when the tool has parsed its options: ends the start-up phase.
void mark_started();

struct Entry {
  std::string name;
  double seconds = 0;
  double bytes = 0;
};
// Adds to the named process phase (created at its first use, kept in that order).
void add(const std::string& name, double seconds, double bytes = 0);
// The process phases so far: "start-up" first, then the others in first-use order.
std::vector<Entry> phases();
// The seconds covered by the process phases (for "other (host)").
double total_seconds();

// With NUMPIPE_TIMELINE_TRACE=1, prints each phase as it ends ("TOOL: timeline:
// BEGIN-END s NAME", seconds since the process's start) on stderr, so that the gaps
// between phases (what the profile calls "other (host)") can be placed.
bool tracing();
void trace(const std::string& name, double begin, double end);

// Times a block into a process phase. A Scope inside another one (a context wait
// inside the reading) takes its time out of the outer one, so phases never overlap.
class Scope {
 public:
  explicit Scope(std::string name, double bytes = 0);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  void add_bytes(double b) { bytes_ += b; }

 private:
  std::string name_;
  double bytes_, t0_, nested0_;
};

}  // namespace numpipe::timeline
