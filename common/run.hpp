// The run skeleton, once for every compute tool.
// The batch part (price, integrate, mle-fit; BatchRun below): the output file, the
// MPI world and the devices of each rank, reading and filtering the records, one
// --repeat, splitting a batch over the ranks and gathering it, the profile and the
// commit.
// The stepping part (fluid-step, ns-step; StepPlan, StepClock): how long a run lasts (--steps K, or --t-end T, the last step shortened
// so that the run ends at T exactly) and when it writes snapshots and diagnostics
// (every M steps, or every DT of time), declared on the Cli once and followed by
// the steppers' loops through a StepClock.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device.hpp"
#include "parallel.hpp"
#include "profile.hpp"
#include "stream.hpp"

#include "progress.hpp"

namespace numpipe {

class Cli;  // common/cli.hpp (the kernels include this header without the CLI)

// ---- --repeat: one meaning in every compute tool ---------------------------------------------
// --repeat N (benchmarks): besides the run whose output is written, N more runs of the
// same solve from the same input (1 to 1000; every run computes the same bits), and
// their median time on stderr. Not given: no more runs. Declared here once for the
// five compute tools (price, integrate, mle-fit, fluid-step, ns-step), with its help
// and its range; the man pages say the same (kRepeatHelp).
inline constexpr int kRepeatMax = 1000;
inline constexpr const char* kRepeatHelp =
    "Benchmark: N more runs of the solve from the same input besides the one written (1 to 1000), "
    "their median time on stderr";
void declare_repeat(Cli& cli, std::optional<int>* repeat, const std::string& group = "");

// ---- the batch part ---------------------------------------------------------------------
// The one word for a CUDA backend asked of a build without one (exit 3): the
// workloads' dispatch files (kernels/<w>/) say it, never the tools.
[[noreturn]] void fail_no_cuda_backend();

// Provenance for an output record: Cli::stamp (the kernels' io writes records without the CLI).
using Stamp = std::function<json(json attrs, const json& input_attrs)>;

// A batch tool's run: each problem's items (strikes, policies, windows) split over
// the MPI ranks in contiguous shares, each rank on its own devices, the results
// gathered on rank 0, which writes them. A tool's main:
//   BatchRun::declare(cli, &repeat, "Price");   cli.parse(argc, argv);
//   BatchRun run(cli, repeat);                  // the output refuses a terminal here
//   auto records = run.read(filter);            // rank 0 reads, every rank gets them
//   ... solve this rank's share (run.share(n)), run.gather(mine) ...
//   return run.write(records, params, log);     // rank 0: records, profile, commit
class BatchRun {
 public:
  // --repeat N, as declare_repeat() below says (price, integrate, mle-fit).
  static void declare(Cli& cli, std::optional<int>* repeat, const std::string& group = "");

  // After cli.parse(): the backend, this rank's devices (--devices; under MPI
  // without --devices the node-local rank's device; on the CPU {--device}), and
  // rank 0's output file, opened first so that a terminal is refused before any work.
  BatchRun(const Cli& cli, std::optional<int> repeat);
  BatchRun(const Cli& cli, std::optional<int> repeat, Backend backend);  // a backend the tool chose
  ~BatchRun();

  par::Group& world() const { return world_; }
  Backend backend() const { return backend_; }
  bool cuda() const { return backend_ == Backend::cuda; }
  const std::vector<int>& devices() const { return devices_; }
  int repeat() const { return repeat_; }  // 0: not benchmarking

  // Rank 0 reads the input (the records `keep` keeps), every rank gets them.
  std::vector<Record> read(const RecordFilter& keep) const;
  // The CUDA contexts of this rank's devices, once per process (the process phase
  // "cuda start-up"), so that the first solve does not pay for them; nothing on the CPU.
  void start_devices() const;
  // The device the profile describes: the first CUDA device, or the host's CPU.
  DeviceInfo device_info() const;

  // This rank's contiguous share of n items (all of them in one process).
  par::Range share(std::size_t n) const;
  // Rank 0: every rank's items in rank order (in one process: `mine`).
  template <class T>
  std::vector<T> gather(std::vector<T> mine) const {
    return world_.distributed() ? world_.gather_concat(mine) : mine;
  }

  // --repeat: `solve` N more times, each returning the seconds it measured; their
  // median, printed by rank 0 as "TOOL: WHAT: N runs after the first, median MEASURED
  // X ms[, TAIL]" (tail(median) may be empty). Nothing when not benchmarking.
  void repeat_runs(const std::function<double()>& solve, const std::string& what,
                   const std::function<std::string(double)>& tail = {}, const std::string& measured = "solve") const;
  // The seconds of --repeat's runs (for tools that print their own report).
  std::vector<double> repeat_seconds(const std::function<double()>& solve) const;

  // Rank 0's writer into the output (other ranks: a writer into nothing).
  StreamWriter& writer();
  // Writes `records` (rank 0), then finishes the stream, appends the profile
  // (before the commit: a failure leaves no output) and commits. Returns 0.
  int write(const std::vector<Record>& records, const json& params, const PhaseLog& log);
  int write(const std::vector<Record>& records, const json& params, const PhaseLog& log, const DeviceInfo& device);
  // Rank 0: finishes the stream written through writer() and commits, without a profile. Returns 0.
  int commit();

 private:
  const Cli& cli_;
  par::Group& world_;
  Backend backend_;
  int repeat_ = 0;
  std::vector<int> devices_;
  std::unique_ptr<OutputFile> out_;
  std::unique_ptr<MemorySink> discard_;
  std::unique_ptr<StreamWriter> writer_;
};

// ---- the stepping part ------------------------------------------------------------------

// What the options asked for.
struct StepPlan {
  long long steps = 1;              // --steps: the steps to run (without --t-end)
  std::optional<double> t_end;      // --t-end: the time to run to, exactly
  long long snapshot_every = 0;     // --snapshot-every M: at the state's steps that are multiples of M (0: never)
  double snapshot_dt = 0;           // --snapshot-dt DT: at every multiple of DT the run reaches (0: never)
  long long diag_every = 0;         // --diag-every M, likewise (0: at the start and the end only)
  double diag_dt = 0;               // --diag-dt DT
  bool by_time() const { return t_end.has_value(); }

  // Declares --steps, --t-end, --snapshot-every, --snapshot-dt and, with
  // diagnostics, --diag-every and --diag-dt on `cli`, bound to this plan and checked.
  // `steps` holds the default of --steps.
  // steps_help says what a step is; snapshot_what what a snapshot writes.
  void declare(Cli& cli, const std::string& steps_help, const std::string& snapshot_what, bool diagnostics,
               const std::string& group = "");
  // After cli.parse(): refuses --t-end with --steps (one says when the run ends).
  void check(const Cli& cli) const;
};

// The time and step of a run as it goes, and what is due after each step. With a
// fixed dt the time after n steps is t0 + n dt (not a sum of n dt's: a run split into
// two has the same times as one); with a dt chosen every step (CFL) it is the sum.
class StepClock {
 public:
  // fixed_dt > 0: every step takes it (the last one shortened to reach t_end); 0: the
  // stepper chooses each step's dt and passes it to next_dt().
  StepClock(const StepPlan& plan, double t0, long long step0, double fixed_dt = 0);

  bool done() const { return done_; }
  // The dt of the next step: `dt`, or what is left to t_end when that is no more than
  // dt (the last step; a remainder below a billionth of dt joins the step before).
  double next_dt(double dt) const;
  double next_dt() const { return next_dt(fixed_dt_); }
  // After a step of next_dt(dt): the time and step it reached (t_end exactly at the end).
  void advance(double dt);
  // Fixed dt: `n` whole steps at once (n <= full_steps_to_next_event()).
  void advance_steps(long long n);
  // After advance(): a snapshot, a diagnostics row is due (the end is not one by itself).
  bool snapshot_due() const { return snapshot_due_; }
  bool diag_due() const { return diag_due_; }

  double time() const { return t_; }
  long long step() const { return step0_ + taken_; }
  long long steps_taken() const { return taken_; }
  // Fixed dt: the whole steps of dt from here before the next snapshot or the end
  // (0 when the next step is a shortened last one), so that a solver runs them in one call.
  long long full_steps_to_next_event() const;
  // The steps the whole run takes (the shortened one counted): --steps, or with
  // --t-end and a fixed dt the steps to reach it; -1 when unknown (--t-end, dt by CFL).
  long long total_steps() const { return total_; }
  // How far along the run is, 0 to 1 (steps, or time with --t-end).
  double fraction_done() const;

 private:
  bool crossed(double before, double after, double every) const;
  double time_at(long long taken) const;  // fixed dt: the time after `taken` steps

  StepPlan plan_;
  double t0_, fixed_dt_, t_;
  long long step0_, taken_ = 0, total_ = 0;
  bool done_ = false, short_last_ = false, snapshot_due_ = false, diag_due_ = false;
};

// ---- The stepping loop ---------------------------------------------------------------
// One loop for a stepper's whole run (fluid-step, ns-step). A stepper of a fixed dt
// (fluid-step) runs whole steps in chunks up to the next snapshot (with a progress
// line, chunks of about a quarter second; at most max_chunk) and the last step of a
// --t-end run, shortened; it has
//   double advance(long long n)       n whole steps of the fixed dt; the seconds they took
//   double last_step(double dt)       one step of a shorter dt (the end of a --t-end run)
//   void snapshot(long long step, double time)
// A stepper that chooses each step's dt (ns-step: a CFL step, or its --dt; the clock
// sums the steps' dt's, fixed_dt 0) is run step by step, and keeps diagnostics; it has
//   double next_dt()                  the dt it asks for (the clock shortens the last one)
//   void step(double dt)              one step of dt
//   void diagnose(long long step, double time)   where the plan asks and at the end
//   void snapshot(long long step, double time)
//   long long steps_finished(long long queued)   of the steps queued, those done (a GPU
//                                     runs behind the host), for the progress line
// The progress line counts steps, or thousandths of the time where the step count is
// not known (--t-end with a dt chosen every step).
struct SteppedRun {
  double seconds = 0;   // the stepper's own time (fixed dt steppers)
  long long steps = 0;  // the steps taken
  double time = 0;      // the time reached
};

namespace run_detail {
template <class S, class = void>
struct chooses_dt : std::false_type {};
template <class S>
struct chooses_dt<S, std::void_t<decltype(std::declval<S&>().next_dt())>> : std::true_type {};
}  // namespace run_detail

template <class Stepper>
SteppedRun run_steps(Stepper& stepper, const StepPlan& plan, double t0, long long step0, double fixed_dt,
                     const std::string& tool, long long max_chunk, bool quiet) {
  StepClock clock(plan, t0, step0, fixed_dt);
  const bool by_time = clock.total_steps() < 0;
  Progress progress(tool, by_time ? "thousandths of the time" : "steps",
                    by_time ? 1000 : static_cast<std::uint64_t>(clock.total_steps() > 0 ? clock.total_steps() : 0), quiet);
  // the simulated time beside the count, and the time the run ends at with --t-end
  progress.set_detail([&clock, &plan] {
    char t[96];
    if (plan.t_end) std::snprintf(t, sizeof t, "t = %.6g of %.6g", clock.time(), *plan.t_end);
    else std::snprintf(t, sizeof t, "t = %.6g", clock.time());
    return std::string(t);
  });
  const auto done_units = [&](long long steps) {
    return by_time ? static_cast<std::uint64_t>(clock.fraction_done() * 1000) : static_cast<std::uint64_t>(steps);
  };
  SteppedRun out;
  long long chunk_steps = 1;
  while (!clock.done()) {
    if constexpr (run_detail::chooses_dt<Stepper>::value) {
      const double dt = clock.next_dt(stepper.next_dt());
      stepper.step(dt);
      clock.advance(dt);
      if (clock.done() || clock.diag_due()) stepper.diagnose(clock.step(), clock.time());
      if (clock.snapshot_due()) stepper.snapshot(clock.step(), clock.time());
      progress.update(done_units(stepper.steps_finished(clock.steps_taken())));
    } else {
      long long chunk = clock.full_steps_to_next_event();
      if (chunk == 0) {  // the last step, shortened to end at --t-end
        const double dt = clock.next_dt();
        out.seconds += stepper.last_step(dt);
        clock.advance(dt);
      } else {
        chunk = chunk < max_chunk ? chunk : max_chunk;
        if (progress.enabled() && chunk_steps < chunk) chunk = chunk_steps;
        const double s = stepper.advance(chunk);
        out.seconds += s;
        if (progress.enabled() && s > 0) {
          const long long quarter = static_cast<long long>(static_cast<double>(chunk) * 0.25 / s);
          chunk_steps = quarter > 1 ? quarter : 1;
        } else if (progress.enabled()) {
          chunk_steps = 2 * chunk;
        }
        clock.advance_steps(chunk);
      }
      progress.update(done_units(clock.steps_taken()));
      if (clock.snapshot_due()) stepper.snapshot(clock.step(), clock.time());
    }
  }
  progress.update(done_units(clock.steps_taken()));
  progress.finish();
  out.steps = clock.steps_taken();
  out.time = clock.time();
  return out;
}

}  // namespace numpipe
