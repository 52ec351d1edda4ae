// ns's solver stepped by common/run.hpp's run_steps (a dt chosen every step): the
// loop's bookkeeping on a toy stepper, and ns::Solver driven by hand against the
// whole run (solve_cpu) bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "common/run.hpp"
#include "kernels/ns/ns.hpp"

using namespace numpipe;

namespace {

// A stepper whose dt is 0.3 and which records what run_steps asks of it.
struct ToyStepper {
  std::vector<double> dts;
  std::vector<long long> diag_steps, snap_steps;
  std::vector<double> diag_times;
  double next_dt() { return 0.3; }
  void step(double dt) { dts.push_back(dt); }
  void diagnose(long long step, double t) {
    diag_steps.push_back(step);
    diag_times.push_back(t);
  }
  void snapshot(long long step, double) { snap_steps.push_back(step); }
  long long steps_finished(long long queued) { return queued; }
};

}  // namespace

TEST_CASE("run_steps: a stepper that chooses its dt runs to --t-end exactly, diagnoses where asked and at the end") {
  StepPlan plan;
  plan.t_end = 1.0;
  plan.diag_dt = 0.5;
  plan.snapshot_every = 2;
  ToyStepper s;
  const SteppedRun run = run_steps(s, plan, 0.0, 10, 0, "test", 1, true);
  REQUIRE(s.dts.size() == 4);  // 0.3, 0.3, 0.3 and the last shortened to reach 1.0
  CHECK(s.dts[0] == 0.3);
  CHECK(s.dts[3] == doctest::Approx(0.1));
  CHECK(run.steps == 4);
  CHECK(run.time == 1.0);
  // 0.5 is crossed by the second step (t = 0.6); the end (step 14) diagnoses too
  CHECK(s.diag_steps == std::vector<long long>{12, 14});
  CHECK(s.diag_times.back() == 1.0);
  CHECK(s.snap_steps == std::vector<long long>{12, 14});
}

TEST_CASE("run_steps: --steps with a chosen dt takes them all and diagnoses every M") {
  StepPlan plan;
  plan.steps = 5;
  plan.diag_every = 2;
  ToyStepper s;
  const SteppedRun run = run_steps(s, plan, 1.0, 0, 0, "test", 1, true);
  CHECK(s.dts.size() == 5);
  CHECK(run.steps == 5);
  CHECK(s.diag_steps == std::vector<long long>{2, 4, 5});
  CHECK(s.snap_steps.empty());
}

TEST_CASE("ns::Solver stepped by hand gives the whole run's bits (CFL dt, diagnostics, snapshots)") {
  ns::Problem pr;
  ns::Params& p = pr.params;
  p.n[0] = 12, p.n[1] = 10, p.n[2] = 8;
  const std::size_t n = 12 * 10 * 8;
  for (auto& f : pr.fields) f.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    pr.fields[ns::kRho][i] = 1 + 0.01 * std::sin(0.1 * double(i));
    pr.fields[ns::kVx][i] = 0.3 * std::cos(0.07 * double(i));
  }
  ns::RunOptions o;
  o.steps = 7;
  o.diag_every = 3;
  o.snapshot_every = 4;
  o.snapshot_fields = {"rho", "vorticity_z"};
  std::vector<std::vector<double>> whole_snaps;
  o.on_snapshot = [&](const ns::BlockFields& b) {
    const double* rho = static_cast<const double*>(b.data[0]);
    whole_snaps.emplace_back(rho, rho + n);
  };
  const ns::Result whole = ns::solve_cpu(pr, o);

  // by hand: the loop run_steps runs for a stepper that chooses its dt (no --t-end)
  const std::unique_ptr<ns::Solver> solver = ns::make_cpu_solver(pr, o);
  std::vector<std::vector<double>> snaps;
  for (long long s = 1; s <= o.steps; ++s) {
    solver->step(solver->next_dt());
    if (s % o.diag_every == 0 || s == o.steps) solver->diagnose(s, 0);
    if (s % o.snapshot_every == 0) {
      const ns::BlockFields& b = solver->snapshot(s, 0);
      const double* rho = static_cast<const double*>(b.data[0]);
      snaps.emplace_back(rho, rho + n);
    }
  }
  const ns::Result byhand = solver->finish(o.steps, whole.t);
  CHECK(byhand.step == whole.step);
  REQUIRE(byhand.diag.size() == whole.diag.size());
  CHECK(whole.diag.size() == 4);  // the start, steps 3 and 6, the end
  for (std::size_t r = 0; r < whole.diag.size(); ++r)
    for (int c = 2; c < ns::kDiagColumns; ++c) CHECK(byhand.diag[r].v[c] == whole.diag[r].v[c]);
  for (int v = 0; v < ns::kVars; ++v)
    CHECK(std::memcmp(byhand.fields[v].data(), whole.fields[v].data(), n * sizeof(double)) == 0);
  CHECK(snaps == whole_snaps);
  CHECK(whole_snaps.size() == 1);
}
