// common/run.hpp's stepping loop (run_steps): the chunks of whole steps up to each
// snapshot, the snapshots' steps and times, and a --t-end run's shortened last step.
#include <doctest/doctest.h>

#include <vector>

#include "common/run.hpp"

using namespace numpipe;

namespace {

// Records what the loop asked of it.
struct FakeStepper {
  std::vector<long long> chunks;
  std::vector<double> last_dts;
  std::vector<std::pair<long long, double>> snapshots;
  double advance(long long n) {
    chunks.push_back(n);
    return 0.5;
  }
  double last_step(double dt) {
    last_dts.push_back(dt);
    return 0.25;
  }
  void snapshot(long long step, double time) { snapshots.emplace_back(step, time); }
};

}  // namespace

TEST_CASE("run_steps: whole steps in chunks up to each snapshot") {
  StepPlan plan;
  plan.steps = 10;
  plan.snapshot_every = 4;
  FakeStepper s;
  const SteppedRun run = run_steps(s, plan, 2.0, 20, 0.5, "test", 1LL << 30, true);
  CHECK(s.chunks == std::vector<long long>{4, 4, 2});
  CHECK(s.last_dts.empty());
  REQUIRE(s.snapshots.size() == 2);
  CHECK(s.snapshots[0] == std::pair<long long, double>{24, 4.0});
  CHECK(s.snapshots[1] == std::pair<long long, double>{28, 6.0});
  CHECK(run.steps == 10);
  CHECK(run.time == 7.0);
  CHECK(run.seconds == 1.5);
}

TEST_CASE("run_steps: max_chunk caps a call; --t-end ends on a shortened step at the time exactly") {
  StepPlan plan;
  plan.t_end = 1.05;
  FakeStepper s;
  const SteppedRun run = run_steps(s, plan, 0.0, 0, 0.1, "test", 4, true);
  CHECK(s.chunks == std::vector<long long>{4, 4, 2});
  REQUIRE(s.last_dts.size() == 1);
  CHECK(s.last_dts[0] == doctest::Approx(0.05).epsilon(1e-12));
  CHECK(run.steps == 11);
  CHECK(run.time == 1.05);
  CHECK(run.seconds == 1.75);
}

TEST_CASE("run_steps: no steps, no calls") {
  StepPlan plan;
  plan.steps = 0;
  FakeStepper s;
  const SteppedRun run = run_steps(s, plan, 3.0, 5, 0.1, "test", 100, true);
  CHECK(s.chunks.empty());
  CHECK(run.steps == 0);
  CHECK(run.time == 3.0);
}
