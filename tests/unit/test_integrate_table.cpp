// integrate: the CUDA backend's table plan (table.hpp) run on the CPU: its grids
// equal the planned grids, its table equals Inner bit for bit, and its families
// give every policy the reference backend's reserve bit for bit when the Middle
// sums run in the reference's order (and within 1e-13 in the GPU's lane order).
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "integrate_test_util.hpp"
#include "kernels/integrate/table.hpp"

namespace ig = numpipe::integrate;
using namespace integrate_test;  // policy, table_basis, same_bits, max_rel

namespace {

// The whole table plan on the CPU, as the CUDA kernels run it. lane_order: Middle
// sums split over 32 lanes and combined by the shuffle tree (the CUDA kernel's
// order); else sequential (the CPU reference's order).
std::vector<double> emulate(const ig::Problem& pb, bool lane_order, std::vector<double>* premium = nullptr) {
  ig::TablePlan tp = ig::make_table_plan(pb);
  ig::RateTable rate = ig::make_rate_table(pb);
  ig::RateView rv = rate.view();
  // One law per life for the whole batch (table_plan_applies), the spouse assumptions.
  const ig::BasisViews bv = ig::basis_views(pb);
  const ig::MortalityView insured = bv.laws[static_cast<std::size_t>(pb.policies.front().insured)];
  const ig::MortalityView spouse = bv.laws[static_cast<std::size_t>(pb.policies.front().spouse)];
  std::vector<double> table(static_cast<std::size_t>(tp.table_size), std::numeric_limits<double>::quiet_NaN());
  for (const ig::TableRow& r : tp.rows) ig::table_row_host(rv, spouse, r, table.data());
  // Class points: r(t), muF(x + t), year, tau.
  std::vector<double> crate(tp.class_points), cmuf(tp.class_points), ctau(tp.class_points);
  std::vector<int> cyear(tp.class_points);
  for (const ig::TableClass& c : tp.classes)
    for (int j = 0; j < c.points; ++j) {
      double t = ig::segment_point(c.seg, j);
      crate[c.point + j] = ig::forward_rate(rv, t);
      cmuf[c.point + j] = ig::mortality(insured, c.x + t);
      ctau[c.point + j] = c.x + t;
      cyear[c.point + j] = ig::segment_year(c.seg, c.h1, j);
    }
  // Middle: per class point, the weights once, then each family active there.
  std::vector<double> middle(static_cast<std::size_t>(tp.entries), std::numeric_limits<double>::quiet_NaN());
  for (const ig::TableClass& c : tp.classes) {
    const ig::TableType& ty = tp.types[c.type];
    const ig::TableRow* rows = tp.rows.data() + ty.row0;
    const std::int32_t* full = tp.row_full.data() + ty.row0;
    std::vector<double> W(ty.rows);
    for (int j = 0; j < c.points; ++j) {
      double tau = ctau[c.point + j];
      for (int e = 0; e < ty.rows; ++e) W[e] = ig::middle_weight(bv.spouse, rows[e].eta, tau);
      for (int fi = 0; fi < c.nfam; ++fi) {
        const ig::TableFamily& f = tp.families[c.fam0 + fi];
        if (j < f.j0 || j >= f.j0 + f.count) continue;
        double k = ig::family_k(f, tau);
        ig::TableCut cut = ig::table_cut(ty, k);
        auto inner = [&](int e) { return ig::table_inner_at(ty, rows, full, table.data(), cut, e, k); };
        double v = 0;
        if (lane_order) {
          double part[ig::kMiddleLanes];
          for (int l = 0; l < ig::kMiddleLanes; ++l) part[l] = ig::table_middle_lane(ty.mseg, W.data(), inner, l, ig::kMiddleLanes);
          for (int off = ig::kMiddleLanes / 2; off > 0; off /= 2)
            for (int l = 0; l < off; ++l) part[l] += part[l + off];
          v = part[0];
        } else {
          v = ig::table_middle_lane(ty.mseg, W.data(), inner, 0, 1);
        }
        middle[f.base + j - f.j0] = v;
      }
    }
  }
  std::size_t unset = 0;
  for (double v : middle) unset += std::isnan(v);
  REQUIRE(unset == 0);  // every Middle value computed
  std::vector<double> out(pb.policies.size() * ig::kYears);
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    const ig::TablePolicy& p = tp.profiles[tp.profile_of[i]];
    const ig::TableClass& c = tp.classes[p.cls];
    double prem = 0;
    if (p.general)
      prem = ig::table_outer_general(c.seg, p, crate.data() + c.point, cmuf.data() + c.point, cyear.data() + c.point,
                                     middle.data(), out.data() + i * ig::kYears);
    else
      ig::table_outer(c.seg, p, crate.data() + c.point, cmuf.data() + c.point, cyear.data() + c.point, middle.data(),
                      out.data() + i * ig::kYears);
    if (premium) premium->push_back(prem);
  }
  return out;
}

}  // namespace

TEST_CASE("integrate table: segment points and years equal the planned grids") {
  for (double x : {35.0, 35.5, 0.0, 119.0, 20.3, 64.7, 118.95})
    for (int h1 : {1, 2, 3, 7, 10}) {
      ig::Policy p = policy(10, 65, x, h1, 2, 2);
      ig::Grid g = ig::outer_grid(p, false);
      ig::Segment s = ig::make_segment(ig::kMaxAge - x, 0.0, h1);
      REQUIRE(ig::segment_points(s) == static_cast<int>(g.pts.size()));
      bool ok = true;
      for (int j = 0; j < ig::segment_points(s); ++j) {
        double v = ig::segment_point(s, j);
        ok = ok && std::memcmp(&v, &g.pts[j], sizeof v) == 0 && ig::segment_year(s, h1, j) == g.year[j];
      }
      for (int q = 0; q < ig::segment_steps(s); ++q) ok = ok && ig::segment_step_size(s, q) == g.h[q];
      CHECK_MESSAGE(ok, "x = " << x << ", h1 = " << h1);
    }
  for (int h2 : {1, 2, 3, 5}) {
    ig::Grid g = ig::middle_grid(h2, 0.0, false);
    ig::Segment s = ig::make_segment(ig::kMaxAge, ig::kMiddleLow, h2);
    REQUIRE(ig::segment_points(s) == static_cast<int>(g.pts.size()));
    std::vector<double> pts;
    for (int e = 0; e < ig::segment_points(s); ++e) pts.push_back(ig::segment_point(s, e));
    CHECK(same_bits(pts, g.pts));
  }
}

TEST_CASE("integrate table: count_ge counts the stage points >= k") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-0.5, 20.0);
  for (double a : {119.0, 0.25, 7.3, 60.0, 14.95})
    for (int steps : {1, 2, 10, 13}) {
      ig::Segment s = ig::make_segment(a, 0.0, steps);
      int L = ig::segment_points(s);
      std::vector<double> ks{0.0, 5e-324, a, a + 1, 10.0};
      for (int l = 0; l < L; ++l) ks.push_back(ig::segment_point(s, l));
      for (int i = 0; i < 200; ++i) ks.push_back(u(rng));
      bool ok = true;
      for (double k : ks) {
        int n = 0;
        while (n < L && ig::segment_point(s, n) >= k) ++n;
        ok = ok && ig::segment_count_ge(s, steps, k) == n;
      }
      CHECK_MESSAGE(ok, "a = " << a << ", steps = " << steps);
    }
}

TEST_CASE("integrate table: the table gives Inner(eta, k) bit for bit, by count and by depth") {
  ig::Problem pb;
  pb.policies = {policy(15, 60, 35, 2, 2, 10), policy(7.5, 64.7, 35.3, 3, 2, 10), policy(3, 67, 119, 1, 3, 7)};
  ig::TablePlan tp = ig::make_table_plan(pb);
  REQUIRE(tp.types.size() == 2);
  CHECK(tp.types[0].kmax >= 15.0);  // a bound on k: max g, with room for rounding
  CHECK(tp.types[0].kmax < 15.0 + 1e-6);
  ig::RateView rv;
  std::vector<double> table(static_cast<std::size_t>(tp.table_size), std::numeric_limits<double>::quiet_NaN());
  for (const ig::TableRow& r : tp.rows) ig::table_row_host(rv, r, table.data());
  std::mt19937_64 rng(5);
  int bad = 0, bad_depth = 0, checked = 0, by_depth = 0;
  for (const ig::TableType& ty : tp.types) {
    std::uniform_real_distribution<double> u(0.0, ty.kmax);
    std::vector<double> ks{0.0, ty.kmax, 1e-9, 10.0, 0.05, 0.1, 9.95, 14.95, 15.0};
    for (int m = 0; m < 40; ++m) ks.push_back(ig::inner_grid_point(-1.0 / ty.h3, m));  // ties with grid points
    for (int m = 1; m < 40; ++m) ks.push_back(ig::inner_grid_mid(-1.0 / ty.h3, m));
    for (int i = 0; i < 200; ++i) ks.push_back(u(rng));
    for (double k : ks) {
      if (k > ty.kmax) continue;
      ig::TableCut cut = ig::table_cut(ty, k);
      for (int e = 0; e < ty.rows; ++e) {
        const ig::TableRow& r = tp.rows[ty.row0 + e];
        double want = ig::inner_value(rv, r.eta, k, 0.0, ty.h3, false);
        double got = ig::table_inner(r, table.data(), k);
        double fast = ig::table_inner_at(ty, tp.rows.data() + ty.row0, tp.row_full.data() + ty.row0, table.data(), cut, e, k);
        bad += std::memcmp(&want, &got, sizeof want) != 0;
        bad_depth += std::memcmp(&want, &fast, sizeof want) != 0;
        by_depth += tp.row_full[ty.row0 + e] >= cut.ma;
        ++checked;
      }
    }
  }
  CHECK(checked > 50000);
  CHECK(by_depth > checked * 3 / 4);  // most lookups by the shared depth
  CHECK(bad == 0);
  CHECK(bad_depth == 0);
}

TEST_CASE("integrate table: the plan reproduces the reference backend bit for bit") {
  ig::Problem pb;
  pb.policies = {policy(10, 65, 35, 2, 2, 2)};
  auto ref = ig::solve_cpu(pb);
  CHECK(same_bits(emulate(pb, false), ref.reserve));
  CHECK(ref.reserve[0] == doctest::Approx(0.6232110341974992).epsilon(1e-12));

  // Mixed: fractional ages and ages, g = 0, x past r + g (k = 0 only), x = 119, x < 15,
  // several step settings (types and classes), duplicates.
  pb.policies = {policy(10, 65, 35, 2, 2, 2),   policy(7.5, 64.7, 35.3, 1, 2, 1), policy(0, 60, 40, 2, 2, 2),
                 policy(5, 60, 80, 2, 2, 2),    policy(3, 67, 119, 1, 3, 3),      policy(5, 62.5, 10.25, 1, 2, 2),
                 policy(15, 70, 65, 3, 1, 2),   policy(10, 65, 35, 2, 2, 2),      policy(12, 60, 35, 2, 2, 2),
                 policy(2, 63, 61.5, 2, 2, 2), policy(10, 120, 20, 1, 1, 1),    policy(120, 0, 50, 1, 1, 1)};
  pb.policies.back().h3 = 4;  // g h3 = 480 <= 599: still a table
  REQUIRE(ig::table_plan_applies(pb));
  ref = ig::solve_cpu(pb);
  auto seq = emulate(pb, false);
  CHECK(same_bits(seq, ref.reserve));
  auto lanes = emulate(pb, true);
  CHECK(max_rel(lanes, ref.reserve) < 1e-13);
}

TEST_CASE("integrate table: a random portfolio at 10/2/10 reproduces the reference") {
  ig::Problem pb;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40; ++i)
    pb.policies.push_back(policy(static_cast<double>(rng() % 16), static_cast<double>(60 + rng() % 11),
                                 static_cast<double>(20 + rng() % 51), 10, 2, 10));
  auto ref = ig::solve_cpu(pb);
  CHECK(same_bits(emulate(pb, false), ref.reserve));
  CHECK(max_rel(emulate(pb, true), ref.reserve) < 1e-13);
  ig::TablePlan tp = ig::make_table_plan(pb);
  CHECK(tp.entries < static_cast<std::int64_t>(tp.requests));  // Middle values shared within classes
}

TEST_CASE("integrate table: when the table plan applies") {
  ig::Problem pb;
  pb.policies = {policy(10, 65, 35, 10, 2, 10)};
  CHECK(ig::table_plan_applies(pb));
  pb.align_breaks = true;
  CHECK_FALSE(ig::table_plan_applies(pb));
  pb.align_breaks = false;
  pb.curve.maturity = {0, 10};
  pb.curve.rate = {0.02, 0.03};
  CHECK_FALSE(ig::table_plan_applies(pb));
  pb.curve = {};
  pb.policies[0].h3 = 100;  // g h3 = 1000: the column plan is cheaper
  CHECK_FALSE(ig::table_plan_applies(pb));
  pb.policies[0].h3 = 10;
  pb.policies[0].h2 = 26;  // the middle weights would not fit in shared memory
  CHECK_FALSE(ig::table_plan_applies(pb));
  pb.policies[0].h2 = 25;
  CHECK(ig::table_plan_applies(pb));
}

TEST_CASE("integrate table: the middle kernel's blocks and (family, point) pairs give every Middle value once") {
  ig::Problem pb;
  std::mt19937_64 rng(21);
  for (int i = 0; i < 300; ++i)
    pb.policies.push_back(policy(static_cast<double>(rng() % 16), static_cast<double>(60 + rng() % 11),
                                 static_cast<double>(20 + rng() % 51), 1 + static_cast<int>(rng() % 3), 2, 2));
  pb.policies.push_back(policy(0, 60, 40, 1, 2, 2));
  ig::TablePlan tp = ig::make_table_plan(pb);
  const int nclass = static_cast<int>(tp.classes.size());
  for (int group : {1, 3, 8}) {
    std::int64_t blocks = ig::assign_middle_blocks(tp, group);
    for (int slots : {1, 2, 5}) {
      std::vector<int> hits(static_cast<std::size_t>(tp.entries), 0);
      int empty = 0;
      for (int sl = 0; sl < slots; ++sl) {
        int c0, c1;
        ig::table_class_split(tp, slots, sl, c0, c1);
        int b0 = c0 < nclass ? tp.classes[c0].block0 : static_cast<int>(blocks);
        int b1 = c1 < nclass ? tp.classes[c1].block0 : static_cast<int>(blocks);
        for (int b = b0; b < b1; ++b) {
          ig::MiddleBlock mb = ig::table_middle_block(tp.classes.data(), c0, c1, b, group);
          const ig::TableClass& c = tp.classes[mb.cls];
          empty += mb.np < 1;
          for (int pi = 0; pi < c.nfam * group; ++pi) {
            int pt = pi % group, j = mb.j0 + pt;
            if (pt >= mb.np) continue;
            const ig::TableFamily& f = tp.families[c.fam0 + pi / group];
            if (j < f.j0 || j >= f.j0 + f.count) continue;
            ++hits[f.base + (j - f.j0)];
          }
        }
      }
      int wrong = 0;
      for (int h : hits) wrong += h != 1;
      CHECK_MESSAGE(wrong == 0, "group " << group << ", slots " << slots);
      CHECK(empty == 0);
    }
  }
}

TEST_CASE("integrate table: profiles are distinct, numbered by class, and every policy finds its own") {
  ig::Problem pb;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 30000; ++i)  // past the plan's threshold for threads (20000)
    pb.policies.push_back(policy(static_cast<double>(rng() % 16), static_cast<double>(60 + rng() % 11),
                                 static_cast<double>(20 + rng() % 51), 1 + static_cast<int>(rng() % 2), 2, 2));
  pb.policies.push_back(policy(-0.0, 60, 40, 1, 2, 2));  // -0 and +0: one profile
  pb.policies.push_back(policy(0.0, 60, 40, 1, 2, 2));
  ig::TablePlan tp = ig::make_table_plan(pb);
  const std::size_t nc = tp.classes.size(), nprof = tp.profiles.size();
  REQUIRE(tp.class_profile.size() == nc + 1);
  CHECK(tp.class_profile.front() == 0);
  CHECK(static_cast<std::size_t>(tp.class_profile.back()) == nprof);
  int wrong_class = 0;
  for (std::size_t c = 0; c < nc; ++c)
    for (std::int32_t q = tp.class_profile[c]; q < tp.class_profile[c + 1]; ++q)
      wrong_class += tp.profiles[q].cls != static_cast<std::int32_t>(c);
  CHECK(wrong_class == 0);
  // Policies of one profile have the same (g, r, x, steps); different profiles differ.
  std::vector<int> first(nprof, -1);
  int mismatched = 0;
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    std::int32_t q = tp.profile_of[i];
    REQUIRE(q >= 0);
    REQUIRE(static_cast<std::size_t>(q) < nprof);
    if (first[q] < 0) {
      first[q] = static_cast<int>(i);
      continue;
    }
    const ig::Policy &a = pb.policies[i], &b = pb.policies[first[q]];
    mismatched += !(a.g == b.g && a.r == b.r && a.x == b.x && a.h1 == b.h1 && a.h2 == b.h2 && a.h3 == b.h3);
  }
  CHECK(mismatched == 0);
  int unused = 0;
  for (int f : first) unused += f < 0;
  CHECK(unused == 0);
  CHECK(tp.profile_of[pb.policies.size() - 1] == tp.profile_of[pb.policies.size() - 2]);
  std::vector<std::array<double, 4>> keys;
  for (std::size_t q = 0; q < nprof; ++q) {
    const ig::Policy& p = pb.policies[first[q]];
    keys.push_back({p.g == 0 ? 0.0 : p.g, p.r, p.x, static_cast<double>(p.h1 * 1000000 + p.h2 * 1000 + p.h3)});
  }
  std::sort(keys.begin(), keys.end());
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  // The chains run per profile: their steps, times each profile's policies, are the policies' steps.
  double steps = 0;
  for (std::size_t i = 0; i < pb.policies.size(); ++i)
    steps += ig::segment_steps(tp.classes[tp.profiles[tp.profile_of[i]].cls].seg);
  CHECK(steps == tp.outer_steps);
  CHECK(tp.profile_steps < tp.outer_steps);
}

TEST_CASE("integrate table: the plan does not depend on the thread count") {
  // Past the plan's threshold for threads (20000), several blocks of its passes,
  // two step types, payments on some policies (the wide profile key), duplicates.
  ig::Problem pb;
  std::mt19937_64 rng(8);
  for (int i = 0; i < 45000; ++i) {
    pb.policies.push_back(policy(static_cast<double>(rng() % 16), static_cast<double>(60 + rng() % 11),
                                 static_cast<double>(20 + rng() % 51), 1 + static_cast<int>(rng() % 2), 2,
                                 2 + static_cast<int>(rng() % 2)));
    if (rng() % 5 == 0) pb.policies.back().premium = 0.01 * static_cast<double>(rng() % 3);
    if (rng() % 7 == 0 && pb.policies.back().r > pb.policies.back().x) pb.policies.back().equivalence = true;
  }
  ig::validate(pb);
  const int saved = omp_get_max_threads();
  auto plan = [&](int threads) {
    omp_set_num_threads(threads);
    ig::TablePlan tp = ig::make_table_plan(pb);
    omp_set_num_threads(saved);
    return tp;
  };
  auto bytes_of = [](const auto& v) {
    return std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(v.data()),
                                      reinterpret_cast<const unsigned char*>(v.data() + v.size()));
  };
  const ig::TablePlan one = plan(1);
  CHECK(one.types.size() == 2);
  CHECK(one.payments);
  CHECK(one.general_profiles > 0);
  CHECK(one.profiles.size() < pb.policies.size());
  for (int threads : {2, 3, 5}) {
    const ig::TablePlan tp = plan(threads);
    CHECK_MESSAGE(tp.profile_of == one.profile_of, threads << " threads");
    CHECK(bytes_of(tp.profiles) == bytes_of(one.profiles));
    CHECK(bytes_of(tp.families) == bytes_of(one.families));
    CHECK(bytes_of(tp.classes) == bytes_of(one.classes));
    CHECK(bytes_of(tp.types) == bytes_of(one.types));
    CHECK(bytes_of(tp.rows) == bytes_of(one.rows));
    CHECK(tp.class_profile == one.class_profile);
    CHECK(tp.outer_steps == one.outer_steps);
  }
  // Profiles are numbered by class, then by their first policy.
  std::vector<std::int64_t> first(one.profiles.size(), -1);
  for (std::size_t i = 0; i < pb.policies.size(); ++i)
    if (first[one.profile_of[i]] < 0) first[one.profile_of[i]] = static_cast<std::int64_t>(i);
  int out_of_order = 0;
  for (std::size_t q = 1; q < first.size(); ++q)
    out_of_order += one.profiles[q].cls == one.profiles[q - 1].cls && first[q] < first[q - 1];
  CHECK(out_of_order == 0);
}

TEST_CASE("integrate: PageFaulter writes the first value of every page once, and nothing else") {
  // Helpers and the calling team share the 2 MiB chunks: every page start (and the
  // array's first value) is written 0 exactly where a page starts, whatever took it.
  const int saved = omp_get_max_threads();
  for (int helpers : {0, 1, 3}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{700}, std::size_t{3} << 20}) {
      std::vector<double> v(n + 3, 1.0);
      double* p = v.data() + 1;  // not page aligned
      {
        ig::TeamShare team;
        team.set(2);
        ig::PageFaulter f(p, n, helpers);
        f.help();
        team.restore();
      }
      CHECK(omp_get_max_threads() == saved);
      int wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto a = reinterpret_cast<std::uintptr_t>(p + i);
        const bool page_start = i == 0 || a % 4096 == 0;
        wrong += v[i + 1] != (page_start ? 0.0 : 1.0);
      }
      CHECK_MESSAGE(wrong == 0, helpers << " helpers, " << n << " values");
      CHECK(v[0] == 1.0);
      CHECK(v[n + 1] == 1.0);
    }
  }
  // Destroyed without help(): the helpers finish every chunk.
  std::vector<double> v(std::size_t{1} << 20, 1.0);
  { ig::PageFaulter f(v.data(), v.size(), 2); }
  int wrong = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    wrong += (reinterpret_cast<std::uintptr_t>(&v[i]) % 4096 == 0 || i == 0) != (v[i] == 0.0);
  CHECK(wrong == 0);
}

TEST_CASE("integrate: NUMPIPE_INTEGRATE_PAGES picks the page helpers; a bad value is a bad-input error") {
  unsetenv("NUMPIPE_INTEGRATE_PAGES");
  CHECK(ig::early_page_helpers(16) == 4);
  CHECK(ig::early_page_helpers(2) == 0);
  setenv("NUMPIPE_INTEGRATE_PAGES", "late", 1);
  CHECK(ig::early_page_helpers(16) == 0);
  setenv("NUMPIPE_INTEGRATE_PAGES", "early", 1);
  CHECK(ig::early_page_helpers(8) == 2);
  setenv("NUMPIPE_INTEGRATE_PAGES", "sideways", 1);
  CHECK_THROWS_WITH(ig::early_page_helpers(16), doctest::Contains("NUMPIPE_INTEGRATE_PAGES must be early or late, got 'sideways'"));
  unsetenv("NUMPIPE_INTEGRATE_PAGES");
}

TEST_CASE("integrate table: expand_rows copies each policy's profile row bit for bit") {
  for (std::int64_t n : {std::int64_t{3}, std::int64_t{700}}) {  // below and above the streaming-store size
    const int nprof = 5;
    std::vector<double> rows(static_cast<std::size_t>(nprof) * ig::kYears);
    std::mt19937_64 rng(static_cast<unsigned>(n));
    for (double& v : rows) v = static_cast<double>(rng() % 1000) / 7.0 - 50.0;
    rows[3] = std::numeric_limits<double>::quiet_NaN();
    rows[ig::kYears + 1] = -0.0;
    std::vector<std::int32_t> of(static_cast<std::size_t>(n));
    for (auto& q : of) q = static_cast<std::int32_t>(rng() % nprof);
    std::vector<double> out(static_cast<std::size_t>(n) * ig::kYears, 1.0);
    ig::expand_rows(out.data(), rows.data(), of.data(), n);
    int wrong = 0;
    for (std::int64_t i = 0; i < n; ++i)
      wrong += std::memcmp(out.data() + i * ig::kYears, rows.data() + static_cast<std::int64_t>(of[i]) * ig::kYears,
                           sizeof(double) * ig::kYears) != 0;
    CHECK(wrong == 0);
  }
}

TEST_CASE("integrate table: the user's basis and spouse pensions with payments, bit for bit as the reference") {
  // Tables for both lives (q_x from a Gompertz-Makeham law), a marriage table, a
  // younger and more spread spouse; premiums, a benefit, the equivalence premium.
  ig::Problem pb;
  table_basis(pb);
  pb.policies = {policy(10, 65, 35, 2, 2, 3), policy(0, 60, 70, 2, 2, 3), policy(15, 67, 50.5, 2, 2, 3),
                 policy(7.5, 64.7, 35.3, 2, 2, 3), policy(3, 61, 14, 2, 2, 3), policy(10, 65, 35, 2, 2, 3)};
  pb.policies[1].benefit = 2;
  pb.policies[2].premium = 0.05;
  pb.policies[3].equivalence = true;
  pb.policies[4].equivalence = true;
  pb.policies[4].premium_term = 20;
  ig::validate(pb);
  REQUIRE(ig::table_plan_applies(pb));
  ig::TablePlan tp = ig::make_table_plan(pb);
  CHECK(tp.general_profiles == 4);
  CHECK(tp.profiles.size() == 5);  // the first and last policies are one profile
  auto ref = ig::solve_cpu(pb);
  std::vector<double> prem;
  CHECK(same_bits(emulate(pb, false, &prem), ref.reserve));
  for (std::size_t i = 0; i < pb.policies.size(); ++i) CHECK(prem[i] == ref.premium[i]);
  CHECK(max_rel(emulate(pb, true), ref.reserve) < 1e-13);
  CHECK(std::fabs(ref.reserve[3 * ig::kYears]) < 1e-13);  // equivalence: V(0) = 0
  // Two laws for the insured in one batch: the column plan.
  pb.laws.push_back(ig::default_laws()[0]);
  pb.policies[2].insured = 2;
  CHECK_FALSE(ig::table_plan_applies(pb));
}
