#include "run.hpp"

#include <algorithm>
#include <cstdio>

#include "cli.hpp"
#include "error.hpp"
#include "timeline.hpp"

namespace numpipe {

// ---- the batch part ---------------------------------------------------------------------

void fail_no_cuda_backend() { fail_resource("this build has no CUDA backend"); }

void declare_repeat(Cli& cli, std::optional<int>* repeat, const std::string& group) {
  cli.option("repeat", repeat, kRepeatHelp, "N", group).range(1, kRepeatMax);
}

void BatchRun::declare(Cli& cli, std::optional<int>* repeat, const std::string& group) { declare_repeat(cli, repeat, group); }

BatchRun::BatchRun(const Cli& cli, std::optional<int> repeat) : BatchRun(cli, repeat, cli.backend()) {}

BatchRun::BatchRun(const Cli& cli, std::optional<int> repeat, Backend backend)
    : cli_(cli), world_(par::world()), backend_(backend), repeat_(repeat.value_or(0)) {
  if (cuda()) {
    devices_ = cli.devices();
    // Under MPI each rank drives its own GPU (node-local rank) unless --devices says which.
    if (world_.distributed() && !cli.has("devices"))
      devices_ = {par::default_device_for_rank(cli.device(), cli.has("device"), cuda_device_count())};
  } else {
    devices_ = {cli.device()};
  }
  if (world_.is_root()) out_ = std::make_unique<OutputFile>(cli.output());  // refuses a terminal before any work
}

BatchRun::~BatchRun() = default;

std::vector<Record> BatchRun::read(const RecordFilter& keep) const { return world_.read_input(cli_, keep); }

void BatchRun::start_devices() const {
  if (!cuda()) return;
  timeline::Scope phase("cuda start-up");  // with the early start's wait (common/device.hpp)
  for (int d : devices_) init_cuda_context(d);
}

DeviceInfo BatchRun::device_info() const { return cuda() ? query_cuda_device(devices_.front()) : query_host_cpu(); }

par::Range BatchRun::share(std::size_t n) const { return par::split_evenly(n, world_.size(), world_.rank()); }

std::vector<double> BatchRun::repeat_seconds(const std::function<double()>& solve) const {
  std::vector<double> seconds;
  for (int r = 0; r < repeat_; ++r) seconds.push_back(solve());
  return seconds;
}

void BatchRun::repeat_runs(const std::function<double()>& solve, const std::string& what,
                           const std::function<std::string(double)>& tail, const std::string& measured) const {
  if (repeat_ == 0) return;
  const double median = median_of(repeat_seconds(solve));
  if (!world_.is_root()) return;
  const std::string more = tail ? tail(median) : std::string();
  std::fprintf(stderr, "%s: %s: %d runs after the first, median %s %.4f ms%s%s\n", cli_.spec().name.c_str(),
               what.c_str(), repeat_, measured.c_str(), median * 1e3, more.empty() ? "" : ", ", more.c_str());
}

StreamWriter& BatchRun::writer() {
  if (!writer_) {
    if (!out_) discard_ = std::make_unique<MemorySink>();  // ranks other than 0 write nothing
    writer_ = out_ ? std::make_unique<StreamWriter>(*out_) : std::make_unique<StreamWriter>(*discard_);
  }
  return *writer_;
}

int BatchRun::write(const std::vector<Record>& records, const json& params, const PhaseLog& log) {
  if (!world_.is_root()) return 0;
  return write(records, params, log, device_info());
}

int BatchRun::write(const std::vector<Record>& records, const json& params, const PhaseLog& log,
                    const DeviceInfo& device) {
  if (!world_.is_root()) return 0;
  StreamWriter& w = writer();
  for (const Record& r : records) w.write(r);
  w.finish();
  write_profile_if_requested(cli_, backend_, device, params, log);  // before the commit: a failure leaves no output
  out_->commit();
  return 0;
}

int BatchRun::commit() {
  if (!world_.is_root()) return 0;
  writer().finish();
  out_->commit();
  return 0;
}

// ---- the stepping part ------------------------------------------------------------------

namespace {
// Two times closer than this part of a step (or of a snapshot interval) are one:
// 3 steps of 0.1 reach 0.30000000000000004, which is the time 0.3.
constexpr double kSameTime = 1e-9;
}  // namespace

void StepPlan::declare(Cli& cli, const std::string& steps_help, const std::string& snapshot_what, bool diagnostics,
                       const std::string& group) {
  cli.option("steps", &steps, steps_help, "K", group).min(0);
  cli.option("t-end", &t_end,
             "Run until this time (the solver's time, as in the state's attrs) instead of a number of steps: the "
             "last step is shortened to end there exactly",
             "T", group);
  cli.option("snapshot-every", &snapshot_every, "Write " + snapshot_what + " every M steps (0: never)", "M", group).min(0);
  cli.option("snapshot-dt", &snapshot_dt,
             "Write the snapshots at every multiple of DT of time instead (after the step that reaches or passes it; "
             "0: never)",
             "DT", group)
      .min(0);
  if (!diagnostics) return;
  cli.option("diag-every", &diag_every, "Diagnostics every M steps (always at the start and the end)", "M", group).min(0);
  cli.option("diag-dt", &diag_dt,
             "Diagnostics at every multiple of DT of time instead (after the step that reaches or passes it)", "DT", group)
      .min(0);
}

void StepPlan::check(const Cli& cli) const {
  if (t_end && cli.has("steps"))
    fail_input("give --steps or --t-end, not both: --steps counts the steps, --t-end says when the run ends");
}

StepClock::StepClock(const StepPlan& plan, double t0, long long step0, double fixed_dt)
    : plan_(plan), t0_(t0), fixed_dt_(fixed_dt), t_(t0), step0_(step0) {
  if (!plan_.t_end) {
    total_ = plan_.steps;
    done_ = total_ <= 0;
    return;
  }
  const double t_end = *plan_.t_end;
  if (!std::isfinite(t_end)) fail_input("--t-end must be finite, got " + cli_detail::show(t_end));
  if (t_end < t0 - kSameTime * std::max(fixed_dt, std::abs(t0)))
    fail_input("--t-end " + cli_detail::show(t_end) + " is before the input state's time " + cli_detail::show(t0));
  if (fixed_dt_ > 0) {
    const double whole = std::max(0.0, std::floor((t_end - t0) / fixed_dt_ + kSameTime));
    if (whole > double(1LL << 40))
      fail_input("--t-end " + cli_detail::show(t_end) + " takes more than 2^40 steps of --dt " + cli_detail::show(fixed_dt_));
    total_ = static_cast<long long>(whole);
    short_last_ = t_end - (t0 + whole * fixed_dt_) > kSameTime * fixed_dt_;
    total_ += short_last_;
    done_ = total_ == 0;
  } else {
    total_ = -1;  // unknown: the stepper chooses each dt
    done_ = t_end <= t0;
  }
}

double StepClock::time_at(long long taken) const {
  if (plan_.t_end && taken >= total_) return *plan_.t_end;
  return t0_ + static_cast<double>(taken) * fixed_dt_;
}

double StepClock::next_dt(double dt) const {
  if (!plan_.t_end) return dt;
  if (fixed_dt_ > 0) return short_last_ && taken_ + 1 == total_ ? *plan_.t_end - time_at(taken_) : dt;
  // a remainder that is dt but for rounding is a whole step (the same bits as by count)
  const double left = *plan_.t_end - t_;
  return left < dt * (1 - kSameTime) ? left : dt;
}

bool StepClock::crossed(double before, double after, double every) const {
  if (every <= 0) return false;
  return std::floor(after / every + kSameTime) > std::floor(before / every + kSameTime);
}

void StepClock::advance(double dt) {
  const double before = t_;
  ++taken_;
  if (!plan_.t_end) done_ = taken_ >= plan_.steps;
  else if (fixed_dt_ > 0) done_ = taken_ >= total_;
  else done_ = *plan_.t_end - (t_ + dt) <= kSameTime * dt;
  if (plan_.t_end && done_) t_ = *plan_.t_end;
  else if (fixed_dt_ > 0) t_ = time_at(taken_);
  else t_ += dt;
  // every M steps of the state's step count (not of this run's): a run restarted from a
  // snapshot or continued from a state keeps the schedule of the run that went on
  const long long at = step0_ + taken_;
  snapshot_due_ = (plan_.snapshot_every > 0 && at % plan_.snapshot_every == 0) || crossed(before, t_, plan_.snapshot_dt);
  diag_due_ = (plan_.diag_every > 0 && at % plan_.diag_every == 0) || crossed(before, t_, plan_.diag_dt);
}

void StepClock::advance_steps(long long n) {
  if (n <= 0) return;
  taken_ += n - 1;
  t_ = time_at(taken_);
  advance(fixed_dt_);
}

long long StepClock::full_steps_to_next_event() const {
  if (done_ || fixed_dt_ <= 0) return done_ ? 0 : 1;
  long long next = total_ - (short_last_ ? 1 : 0);  // the whole steps end here
  if (plan_.snapshot_every > 0)
    next = std::min(next, ((step0_ + taken_) / plan_.snapshot_every + 1) * plan_.snapshot_every - step0_);
  if (plan_.snapshot_dt > 0) {
    // the first step that passes the next multiple of snapshot_dt: estimated, then found exactly
    const double target = (std::floor(t_ / plan_.snapshot_dt + kSameTime) + 1) * plan_.snapshot_dt;
    const double estimate = std::ceil((target - t0_) / fixed_dt_) - 2;
    long long n = std::max(taken_ + 1, static_cast<long long>(std::min(estimate, double(1LL << 41))));
    while (n < next && !crossed(time_at(n - 1), time_at(n), plan_.snapshot_dt)) ++n;
    next = std::min(next, n);
  }
  return std::max(0LL, next - taken_);
}

double StepClock::fraction_done() const {
  if (done_) return 1;
  if (plan_.t_end && total_ < 0) {
    const double span = *plan_.t_end - t0_;
    return span > 0 ? std::clamp((t_ - t0_) / span, 0.0, 1.0) : 1;
  }
  return total_ > 0 ? static_cast<double>(taken_) / static_cast<double>(total_) : 1;
}

}  // namespace numpipe
