// integrate on CUDA (label gpu): the table plan and the column plan agree with the
// CPU reference within 1e-13 relative, repeat their bits, and give the same bits
// when the work is split over several device slots (a device listed twice splits
// its Middle values, outer chains and policies exactly as two devices would) and
// over several devices where the machine has them, by either result path
// (NUMPIPE_INTEGRATE_RESULT=host or device).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "integrate_test_util.hpp"
#include "kernels/integrate/table.hpp"

namespace ig = numpipe::integrate;
using namespace integrate_test;  // policy, table_basis, same_bits, max_rel

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

// Sets NUMPIPE_INTEGRATE_RESULT for its lifetime (the result path of the table plan).
struct ResultPath {
  explicit ResultPath(const char* path) { setenv("NUMPIPE_INTEGRATE_RESULT", path, 1); }
  ~ResultPath() { unsetenv("NUMPIPE_INTEGRATE_RESULT"); }
};

// Device lists to check against one device: slots of device 0, and every visible
// device (in both orders, and repeated) where there are several.
std::vector<std::vector<int>> device_lists() {
  std::vector<std::vector<int>> lists = {{0, 0}, {0, 0, 0}};
  int n = numpipe::cuda_device_count();
  if (n >= 2) {
    lists.push_back({0, 1});
    lists.push_back({1, 0});
    lists.push_back({0, 1, 0, 1});
    std::vector<int> all;
    for (int d = 0; d < n; ++d) all.push_back(d);
    if (n > 2) lists.push_back(all);
  }
  return lists;
}

std::string list_name(const std::vector<int>& l) {
  std::string s;
  for (int d : l) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
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

// Both result paths and every device list give the one-device bits; the device
// path of a large result is pinned in pieces (the 9000 policies are 8.7 MB:
// several 16 MiB-aligned pieces only where the allocation crosses a boundary, so
// a larger portfolio is checked too).
TEST_CASE("integrate gpu: result paths and device lists give the same bits") {
  for (int n : {60, 9000, 40000}) {
    ig::Problem pb = portfolio(n, n > 1000 ? 1 : 10, 2, n > 1000 ? 2 : 10, 17 + n);
    auto cpu = n <= 9000 ? ig::solve_cpu(pb) : ig::Result{};
    ig::Result one;
    {
      ResultPath host("host");
      one = ig::solve_cuda(pb, {0});
    }
    if (n <= 9000) CHECK(max_rel(one.reserve, cpu.reserve) < 1e-13);
    for (const char* path : {"host", "device"}) {
      ResultPath rp(path);
      CHECK_MESSAGE(same_bits(ig::solve_cuda(pb, {0}).reserve, one.reserve), path << ", " << n << " policies, device 0");
      for (const auto& list : device_lists()) {
        auto r = ig::solve_cuda(pb, list);
        CHECK_MESSAGE(same_bits(r.reserve, one.reserve), path << ", " << n << " policies, devices " << list_name(list));
      }
    }
  }
}

TEST_CASE("integrate gpu: a bad NUMPIPE_INTEGRATE_RESULT is a bad-input error") {
  ig::Problem pb = portfolio(3, 2, 2, 2, 3);
  ResultPath rp("sideways");
  CHECK_THROWS_WITH(ig::solve_cuda(pb, {0}), doctest::Contains("NUMPIPE_INTEGRATE_RESULT"));
}

namespace {

// The largest |a - b| / max(|b|, s / 10), s the largest |b| of b's row (121 years):
// a reserve that is zero up to rounding (at inception under the equivalence
// premium) is compared at its row's scale, where a relative difference means
// nothing. NaN must stand in both places, else 1.
template <class A, class B>
double max_rel_row(const A& a, const B& b) {
  double m = 0;
  for (std::size_t r = 0; r * ig::kYears < b.size(); ++r) {
    double scale = 0;
    for (int y = 0; y < ig::kYears; ++y)
      if (!std::isnan(b[r * ig::kYears + y])) scale = std::max(scale, std::fabs(b[r * ig::kYears + y]));
    for (int y = 0; y < ig::kYears; ++y) {
      const std::size_t i = r * ig::kYears + y;
      if (std::isnan(a[i]) || std::isnan(b[i])) {
        if (std::isnan(a[i]) != std::isnan(b[i])) return 1;
        continue;
      }
      const double d = std::fabs(a[i] - b[i]);
      if (d > 0) m = std::max(m, d / std::max(std::fabs(b[i]), scale / 10));
    }
  }
  return m;
}

// A mixed portfolio: every product, premiums given and solved for.
ig::Problem mixed(int n, int h1, unsigned seed) {
  ig::Problem pb = portfolio(n, h1, 2, 2, seed);
  std::mt19937_64 rng(seed + 1);
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    ig::Policy& p = pb.policies[i];
    p.product = static_cast<int>(i % ig::kProductKinds);
    p.term = p.product == ig::kLifeAnnuity ? 120 : 5 + static_cast<double>(rng() % 26) + 0.25 * (i % 3);
    p.deferment = p.product == ig::kLifeAnnuity ? (p.x < p.r ? p.r - p.x : 2.5) : 0;
    p.equivalence = i % 2 == 0 && ig::premium_term_of(p) > 0;
    p.premium = i % 2 ? 0.01 * static_cast<double>(i % 7) : 0;
    p.benefit = 1 + static_cast<double>(i % 3);
  }
  return pb;
}

}  // namespace

TEST_CASE("integrate gpu: the user's basis and spouse pensions with payments, both plans, against the CPU") {
  ig::Problem pb = portfolio(40, 2, 2, 3, 11);
  table_basis(pb);
  // Every third policy solves for its premium (where there are premiums: before retirement).
  for (std::size_t i = 0; i < pb.policies.size(); i += 3)
    pb.policies[i].equivalence = ig::premium_term_of(pb.policies[i]) > 0;
  for (std::size_t i = 1; i < pb.policies.size(); i += 3) pb.policies[i].premium = 0.02;
  pb.policies[2].benefit = 3;
  ig::validate(pb);
  for (bool align : {false, true}) {
    pb.align_breaks = align;
    CHECK(ig::table_plan_applies(pb) == !align);
    auto cpu = ig::solve_cpu(pb);
    auto gpu = ig::solve_cuda(pb, {0});
    CAPTURE(align);
    CHECK(gpu.table == !align);
    CHECK(max_rel_row(gpu.reserve, cpu.reserve) < 1e-13);
    REQUIRE(gpu.premium.size() == pb.policies.size());
    CHECK(max_rel(gpu.premium, cpu.premium) < 1e-13);
    CHECK(same_bits(ig::solve_cuda(pb, {0}).reserve, gpu.reserve));
    CHECK(same_bits(ig::solve_cuda(pb, {0, 0}).reserve, gpu.reserve));
    for (std::size_t i = 0; i < pb.policies.size(); i += 3)
      if (pb.policies[i].equivalence) CHECK(std::fabs(gpu.reserve[i * ig::kYears]) < 1e-13);
  }
}

TEST_CASE("integrate gpu: mixed products and bases in one batch against the CPU, same bits over device slots") {
  for (bool align : {false, true}) {
    ig::Problem pb = mixed(200, 4, 5);
    pb.align_breaks = align;
    // A second law for some insureds: a table (the products' one-thread chains read it).
    ig::Problem t;
    table_basis(t);
    pb.laws.push_back(t.laws[0]);
    for (std::size_t i = 0; i < pb.policies.size(); i += 4)
      if (pb.policies[i].product != ig::kSpousePension) pb.policies[i].insured = 2;
    ig::validate(pb);
    auto cpu = ig::solve_cpu(pb);
    auto gpu = ig::solve_cuda(pb, {0});
    CAPTURE(align);
    CHECK(gpu.products == cpu.products);
    CHECK(max_rel_row(gpu.reserve, cpu.reserve) < 1e-13);
    CHECK(max_rel(gpu.premium, cpu.premium) < 1e-13);
    CHECK(same_bits(ig::solve_cuda(pb, {0}).reserve, gpu.reserve));
    for (const auto& list : device_lists()) {
      auto r = ig::solve_cuda(pb, list);
      CHECK_MESSAGE(same_bits(r.reserve, gpu.reserve), "--devices " << list_name(list));
      CHECK_MESSAGE(same_bits(r.premium, gpu.premium), "--devices " << list_name(list));
    }
    for (std::size_t i = 0; i < pb.policies.size(); ++i)
      if (pb.policies[i].equivalence) CHECK(std::fabs(gpu.reserve[i * ig::kYears]) < 1e-12);
    // Products only, and a curve (the products' chains read its forward rate).
    ig::Problem only = pb;
    only.policies.clear();
    for (const auto& p : pb.policies)
      if (p.product != ig::kSpousePension) only.policies.push_back(p);
    only.curve.maturity = {0, 10, 30};
    only.curve.rate = {0.02, 0.03, 0.035};
    auto oc = ig::solve_cpu(only), og = ig::solve_cuda(only, {0});
    CHECK(max_rel_row(og.reserve, oc.reserve) < 1e-13);
    CHECK(same_bits(ig::solve_cuda(only, {0, 0}).reserve, og.reserve));
  }
}
