// integrate on CUDA (label gpu): the table plan and the column plan agree with the
// CPU reference within 1e-13 relative, repeat their bits, and give the same bits
// when the work is split over several device slots (a device listed twice splits
// its table rows, Middle values and policies exactly as two devices would).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "integrate_test_util.hpp"
#include "kernels/integrate/table.hpp"

namespace ig = numpipe::integrate;
using integrate_test::max_rel;
using integrate_test::policy;
using integrate_test::same_bits;

namespace {

ig::Problem portfolio(int n, int h1, int h2, int h3, unsigned seed) {
  ig::Problem pb;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < n; ++i)
    pb.policies.push_back(policy(static_cast<double>(rng() % 16), static_cast<double>(60 + rng() % 11),
                                 static_cast<double>(20 + rng() % 51), h1, h2, h3));
  // fractional settings, g = 0, past r + g, an old insured, a young one
  pb.policies.push_back(policy(7.5, 64.7, 35.3, h1, h2, h3));
  pb.policies.push_back(policy(0, 60, 40, h1, h2, h3));
  pb.policies.push_back(policy(5, 60, 80, h1, h2, h3));
  pb.policies.push_back(policy(3, 67, 119, h1, h2, h3));
  pb.policies.push_back(policy(5, 62.5, 10.25, h1, h2, h3));
  return pb;
}

}  // namespace

TEST_CASE("integrate gpu: the table plan at 10/2/10 against the CPU, over 1, 2 and 3 device slots") {
  ig::Problem pb = portfolio(60, 10, 2, 10, 7);
  REQUIRE(ig::table_plan_applies(pb));
  auto cpu = ig::solve_cpu(pb);
  auto one = ig::solve_cuda(pb, {0});
  CHECK(one.table);
  CHECK(one.middle_values < one.requests);
  double rel = max_rel(one.reserve, cpu.reserve);
  MESSAGE("table plan, 10/2/10: max relative difference GPU vs CPU " << rel);
  CHECK(rel < 1e-13);
  CHECK(same_bits(ig::solve_cuda(pb, {0}).reserve, one.reserve));
  CHECK(same_bits(ig::solve_cuda(pb, {0, 0}).reserve, one.reserve));
  CHECK(same_bits(ig::solve_cuda(pb, {0, 0, 0}).reserve, one.reserve));
  // The phases of each slot are named apart.
  auto two = ig::solve_cuda(pb, {0, 0});
  bool named = false;
  for (const auto& ph : two.log.phases()) named = named || ph.name == "middle@cuda0#1";
  CHECK(named);
}

TEST_CASE("integrate gpu: the spec's checkpoint and one policy on more slots than policies") {
  ig::Problem pb;
  pb.policies = {policy(10, 65, 35, 2, 2, 2)};
  auto r = ig::solve_cuda(pb, {0, 0, 0});
  CHECK(r.reserve[0] == doctest::Approx(0.6232110341974992).epsilon(1e-12));
  CHECK(r.reserve[40] == doctest::Approx(2.2718034492774297).epsilon(1e-12));
  CHECK(r.reserve[85] == 0.0);
  CHECK(std::isnan(r.reserve[86]));
  CHECK(same_bits(r.reserve, ig::solve_cuda(pb, {0}).reserve));
}

TEST_CASE("integrate gpu: mixed step settings (several types and classes) and the column plan") {
  ig::Problem pb = portfolio(20, 2, 2, 3, 9);
  for (std::size_t i = 0; i < pb.policies.size(); i += 3) pb.policies[i].h1 = 3;
  for (std::size_t i = 1; i < pb.policies.size(); i += 4) pb.policies[i].h2 = 1;
  auto cpu = ig::solve_cpu(pb);
  auto gpu = ig::solve_cuda(pb, {0});
  CHECK(gpu.table);
  CHECK(max_rel(gpu.reserve, cpu.reserve) < 1e-13);
  CHECK(same_bits(ig::solve_cuda(pb, {0, 0}).reserve, gpu.reserve));
  pb.align_breaks = true;  // the column plan
  cpu = ig::solve_cpu(pb);
  gpu = ig::solve_cuda(pb, {0});
  CHECK_FALSE(gpu.table);
  CHECK(max_rel(gpu.reserve, cpu.reserve) < 1e-13);
  CHECK(same_bits(ig::solve_cuda(pb, {0, 0}).reserve, gpu.reserve));
  pb.align_breaks = false;
  pb.policies = {policy(15, 65, 35, 1, 1, 50)};  // g h3 = 750: the column plan
  CHECK_FALSE(ig::table_plan_applies(pb));
  CHECK(max_rel(ig::solve_cuda(pb, {0}).reserve, ig::solve_cpu(pb).reserve) < 1e-13);
}

// One thread per policy in the outer kernel; a result of more than 2^20 values is
// pinned in place for the download.
TEST_CASE("integrate gpu: many policies") {
  ig::Problem pb = portfolio(9000, 1, 2, 2, 13);
  REQUIRE(pb.policies.size() * ig::kYears >= (std::size_t{1} << 20));
  auto cpu = ig::solve_cpu(pb);
  auto gpu = ig::solve_cuda(pb, {0});
  CHECK(gpu.table);
  CHECK(max_rel(gpu.reserve, cpu.reserve) < 1e-13);
  CHECK(same_bits(ig::solve_cuda(pb, {0, 0}).reserve, gpu.reserve));
  CHECK(same_bits(ig::solve_cuda(pb, {0, 0, 0, 0}).reserve, gpu.reserve));
}
