// The run skeleton's stepping part, once for the stepping tools (fluid-step,
// ns-step): how long a run lasts (--steps K, or --t-end T, the last step shortened
// so that the run ends at T exactly) and when it writes snapshots and diagnostics
// (every M steps, or every DT of time), declared on the Cli once and followed by
// the steppers' loops through a StepClock.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "progress.hpp"

namespace numpipe {

class Cli;  // common/cli.hpp (the kernels include this header without the CLI)

// What the options asked for.
struct StepPlan {
  long long steps = 1;              // --steps: the steps to run (without --t-end)
  std::optional<double> t_end;      // --t-end: the time to run to, exactly
  long long snapshot_every = 0;     // --snapshot-every M (0: never)
  double snapshot_dt = 0;           // --snapshot-dt DT: at every multiple of DT the run reaches (0: never)
  long long diag_every = 0;         // --diag-every M (0: at the start and the end only)
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
// One loop for a stepper's whole run (fluid-step): whole steps of the fixed dt in
// chunks up to the next snapshot (with a progress line, chunks of about a quarter
// second; at most max_chunk), a snapshot where the clock says, and the last step of a
// --t-end run, shortened. A Stepper has
//   double advance(long long n)       n whole steps of the fixed dt; the seconds they took
//   double last_step(double dt)       one step of a shorter dt (the end of a --t-end run)
//   void snapshot(long long step, double time)
struct SteppedRun {
  double seconds = 0;   // the stepper's own time
  long long steps = 0;  // the steps taken
  double time = 0;      // the time reached
};

template <class Stepper>
SteppedRun run_steps(Stepper& stepper, const StepPlan& plan, double t0, long long step0, double fixed_dt,
                     const std::string& tool, long long max_chunk, bool quiet) {
  StepClock clock(plan, t0, step0, fixed_dt);
  Progress progress(tool, "steps", static_cast<std::uint64_t>(clock.total_steps() > 0 ? clock.total_steps() : 0), quiet);
  SteppedRun out;
  long long chunk_steps = 1;
  while (!clock.done()) {
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
    progress.update(static_cast<std::uint64_t>(clock.steps_taken()));
    if (clock.snapshot_due()) stepper.snapshot(clock.step(), clock.time());
  }
  progress.finish();
  out.steps = clock.steps_taken();
  out.time = clock.time();
  return out;
}

}  // namespace numpipe
