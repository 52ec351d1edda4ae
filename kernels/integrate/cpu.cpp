// integrate: the CPU backend (OpenMP), the reference. Every parallel loop writes
// independent slots and every sum runs in a fixed sequential order, so the bits
// do not depend on the thread count.
#include <omp.h>

#include <atomic>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "integrate.hpp"

namespace numpipe::integrate {

namespace {

// Middle(tau) from one column's Inner values at its grid points.
double middle_sum(const Plan& plan, const SpouseView& sv, std::int32_t column, double tau, const double* inner) {
  std::int32_t g = plan.column_grid[column];
  const double* eta = plan.grid_eta.data() + plan.grid_offset[g];
  std::int64_t npts = plan.grid_offset[g + 1] - plan.grid_offset[g];
  const double* h = plan.grid_h.data() + (plan.grid_offset[g] - g) / 2;
  double V = 0;
  for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
    double f0 = middle_weight(sv, eta[2 * j], tau) * inner[2 * j];
    double fm = middle_weight(sv, eta[2 * j + 1], tau) * inner[2 * j + 1];
    double f1 = middle_weight(sv, eta[2 * j + 2], tau) * inner[2 * j + 2];
    V = V + middle_increment(h[j], f0, fm, f1);
  }
  return V;
}

// Inner(eta, k) of a spouse with a table law at a constant rate, in the default scheme:
// its segments from s = 120 - eta down end at the spouse's whole ages and at k, and each
// segment above k (pension 1) is the same for every k, the same steps from the same
// value. So each eta point's run with k = 0 (a top run) is taken once per (law, steps,
// eta) and the value after each of its segments kept; a column's Inner takes the kept
// value for its segments that match the top run's and integrates only from k's segment
// down: the same operations on the same values, so the same bits as inner_value.
struct TopSegment {
  double a, b, h, V;  // the segment (model.hpp, Segment) and the value after it
};
struct InnerTops {
  std::vector<std::int32_t> of_point;  // per inner value: its top run, or -1 (computed whole)
  std::vector<std::vector<TopSegment>> runs;
};

InnerTops inner_tops(const Plan& plan, const BasisViews& bv, const RateView& rv) {
  InnerTops tops;
  tops.of_point.assign(plan.inner_values(), -1);
  if (!plan.align || rv.n != 0) return tops;
  struct Key {
    std::int32_t law, steps;
    double eta;
    bool operator==(const Key& o) const { return law == o.law && steps == o.steps && eta == o.eta; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::uint64_t b;
      std::memcpy(&b, &k.eta, sizeof b);
      return std::hash<std::uint64_t>()(b ^ (static_cast<std::uint64_t>(k.law) << 48) ^
                                        (static_cast<std::uint64_t>(k.steps) << 32));
    }
  };
  std::unordered_map<Key, std::int32_t, KeyHash> seen;
  std::vector<Key> keys;
  for (std::size_t c = 0; c < plan.columns(); ++c) {
    if (!bv.laws[static_cast<std::size_t>(plan.column_law[c])].table) continue;
    const std::int32_t g = plan.column_grid[c];
    for (std::int64_t e = plan.grid_offset[g]; e < plan.grid_offset[g + 1]; ++e) {
      const double eta = plan.grid_eta[e];
      if (!(kMaxAge - eta > 0.0)) continue;  // Inner is 0 there
      const Key key{plan.column_law[c], plan.column_h3[c], eta};
      auto it = seen.find(key);
      if (it == seen.end()) {
        it = seen.emplace(key, static_cast<std::int32_t>(keys.size())).first;
        keys.push_back(key);
      }
      tops.of_point[plan.column_offset[c] + (e - plan.grid_offset[g])] = it->second;
    }
  }
  tops.runs.resize(keys.size());
  const std::int64_t nruns = static_cast<std::int64_t>(keys.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t i = 0; i < nruns; ++i) {
    const Key& key = keys[i];
    const MortalityView& spouse = bv.laws[static_cast<std::size_t>(key.law)];
    std::vector<TopSegment>& run = tops.runs[i];
    double V = 0.0;
    inner_aligned_segments(rv, spouse, key.eta, 0.0, 0.0, key.steps, [&](const Segment& seg, int pension) {
      V = inner_segment(rv, spouse, seg, V, key.eta, 0.0, 0.0, pension);
      run.push_back({seg.a, seg.b, seg.h, V});
    });
  }
  return tops;
}

// Inner(eta, k, t) as inner_value computes it (align), the segments above k from a top run.
double inner_from_top(const RateView& rv, const MortalityView& spouse, double eta, double k, double t, int steps,
                      const std::vector<TopSegment>& run) {
  double V = 0.0;
  std::size_t j = 0;
  bool shared = true;
  inner_aligned_segments(rv, spouse, eta, k, t, steps, [&](const Segment& seg, int pension) {
    if (shared && pension == 1 && j < run.size() && seg.a == run[j].a && seg.b == run[j].b && seg.h == run[j].h) {
      V = run[j++].V;
      return;
    }
    shared = false;
    V = inner_segment(rv, spouse, seg, V, eta, t, k, pension);
  });
  return V;
}

// The progress line counts policies, but the spouse plan finishes every policy in
// its last phase: the work of all three phases (one unit per Inner value, Middle
// value and outer recurrence) is credited to the policies in proportion, so the
// line moves, with a rate and time left, from the start.
class WorkCredit {
 public:
  WorkCredit(const ProgressFn& progress, std::uint64_t policies, std::uint64_t total_work)
      : progress_(progress), policies_(policies),
        per_unit_(total_work ? static_cast<double>(policies) / static_cast<double>(total_work) : 0.0) {}
  bool on() const { return static_cast<bool>(progress_); }
  void add(std::uint64_t w) {  // from any thread
    const std::uint64_t due = std::min<std::uint64_t>(
        policies_, static_cast<std::uint64_t>(static_cast<double>(work_.fetch_add(w) + w) * per_unit_));
    std::uint64_t before = credited_.load();
    while (due > before && !credited_.compare_exchange_weak(before, due)) {
    }
    if (due > before) progress_(due - before);
  }
  void finish() {  // every policy credited once the work is done
    const std::uint64_t before = credited_.exchange(policies_);
    if (policies_ > before) progress_(policies_ - before);
  }

 private:
  const ProgressFn& progress_;
  std::uint64_t policies_;
  double per_unit_;
  std::atomic<std::uint64_t> work_{0}, credited_{0};
};

// The spouse pensions of a problem (every policy one): rows into the sink, or
// into the result's reserve without one.
Result solve_spouse_cpu(const Problem& problem, const RowSink* sink, const ProgressFn& progress) {
  Result res;
  HostTimer plan_timer;
  Plan plan = make_plan(problem, 0, problem.policies.size());
  RateTable rate = make_rate_table(problem);
  RateView rv = rate.view();
  const BasisViews bv = basis_views(problem);
  const MiddleCalls calls = distinct_middle_calls(plan);
  res.log.add("plan", plan_timer.seconds());
  res.inner_steps = plan.inner_steps;
  res.inner_steps_unshared = plan.inner_steps_unshared;
  res.columns = plan.columns();
  res.requests = plan.requests();
  res.middle_values = calls.size();
  WorkCredit credit(progress, plan.policies, plan.inner_values() + calls.size() + plan.policies);

  // 1. Inner for every (column, eta point); longest integrations first for balance.
  std::vector<double> inner(plan.inner_values());
  const std::int64_t ncol = static_cast<std::int64_t>(plan.columns());
  // Bytes: the CUDA column plan's traffic model (cuda.cu; docs/profile.md, "Traffic models").
  const double items = static_cast<double>(plan.inner_values()), requests = static_cast<double>(plan.requests());
  res.log.time("inner", 8.0 * items, plan.inner_steps * kFlopsPerInnerStep, [&] {
    const InnerTops tops = inner_tops(plan, bv, rv);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t c = 0; c < ncol; ++c) {
      std::int32_t g = plan.column_grid[c];
      const double* eta = plan.grid_eta.data() + plan.grid_offset[g];
      std::int64_t n = plan.grid_offset[g + 1] - plan.grid_offset[g];
      double* out = inner.data() + plan.column_offset[c];
      const MortalityView& spouse = bv.laws[static_cast<std::size_t>(plan.column_law[c])];
      const std::int32_t* top = tops.of_point.data() + plan.column_offset[c];
      for (std::int64_t e = 0; e < n; ++e)
        out[e] = top[e] >= 0 ? inner_from_top(rv, spouse, eta[e], plan.column_k[c], plan.column_t[c], plan.column_h3[c],
                                              tops.runs[static_cast<std::size_t>(top[e])])
                             : inner_value(rv, spouse, eta[e], plan.column_k[c], plan.column_t[c], plan.column_h3[c],
                                           plan.align);
      if (credit.on()) credit.add(static_cast<std::uint64_t>(n));
    }
  });

  // 2. Middle for every distinct (column, tau) of the outer stage points.
  std::vector<double> middle(calls.size());
  const std::int64_t ncalls = static_cast<std::int64_t>(calls.size());
  const double distinct = static_cast<double>(calls.size());
  res.log.time("middle", 8.0 * (3 * items + 2 * distinct), 0, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t q = 0; q < ncalls; ++q) {
      std::int32_t c = calls.column[q];
      middle[q] = middle_sum(plan, bv.spouse, c, calls.tau[q], inner.data() + plan.column_offset[c]);
      if (credit.on() && (q & 1023) == 1023) credit.add(1024);
    }
  });

  // 3. The outer recurrences, each from its stage points' Middle values.
  if (!sink) {
    res.reserve.assign(plan.policies * kYears, 0.0);
    res.premium.assign(plan.policies, 0.0);
  }
  const std::int64_t np = static_cast<std::int64_t>(plan.policies);
  res.log.time("outer", 8.0 * (3 * requests + static_cast<double>(plan.policies) * kYears), 0, [&] {
#pragma omp parallel
    {
      std::vector<double> at_points;  // this policy's Middle values, stage point by stage point
#pragma omp for schedule(static)
      for (std::int64_t p = 0; p < np; ++p) {
        std::int64_t o = plan.outer_offset[p], n = plan.outer_offset[p + 1] - o;
        at_points.resize(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) at_points[i] = middle[calls.of_request[o + i]];
        const Policy& pol = problem.policies[p];
        double* row = sink ? sink->row(p) : res.reserve.data() + p * kYears;
        double prem = spouse_outer(pol, rv, bv.laws[static_cast<std::size_t>(pol.insured)], plan.align,
                                   plan.outer_t.data() + o, plan.outer_h.data() + (o - p) / 2,
                                   plan.outer_year.data() + o, n, at_points.data(), row);
        (sink ? sink->premium[sink->index[p]] : res.premium[p]) = prem;
        if (credit.on()) credit.add(1);
      }
    }
  });
  if (credit.on()) credit.finish();
  return res;
}

// The single-life products of a problem (no spouse pension among them).
Result solve_products_cpu(const Problem& problem, const RowSink* sink, const ProgressFn& progress) {
  Result res;
  RateTable rate = make_rate_table(problem);
  RateView rv = rate.view();
  const BasisViews bv = basis_views(problem);
  const std::int64_t np = static_cast<std::int64_t>(problem.policies.size());
  HostTimer plan_timer;
  double steps = 0;
  std::vector<ProductSpec> specs = product_specs(problem, steps);
  res.log.add("plan", plan_timer.seconds());
  if (!sink) {
    res.reserve.resize(static_cast<std::size_t>(np) * kYears);
    res.premium.assign(static_cast<std::size_t>(np), 0.0);
  }
  res.log.time("products", 8.0 * static_cast<double>(np) * kYears, 0, [&] {  // bytes: the rows written
#pragma omp parallel for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < np; ++i) {
      const ProductSpec& s = specs[i];
      double* row = sink ? sink->row(i) : res.reserve.data() + i * kYears;
      (sink ? sink->premium[sink->index[i]] : res.premium[i]) = product_reserve(s, rv, bv.laws.data(), problem.align_breaks, row);
      if (progress) progress(1);
    }
  });
  res.product_steps = steps;
  return res;
}

}  // namespace

Result solve_cpu(const Problem& problem, int threads, const ProgressFn& progress) {
  if (threads > 0) omp_set_num_threads(threads);
  return solve_split(
      problem, [&](const Problem& pb, const RowSink* sink) { return solve_spouse_cpu(pb, sink, progress); },
      [&](const Problem& pb, const RowSink* sink) { return solve_products_cpu(pb, sink, progress); });
}

std::vector<double> reference_reserve(const Problem& problem, const Policy& p) {
  RateTable rate = make_rate_table(problem);
  RateView rv = rate.view();
  const BasisViews bv = basis_views(problem);
  bool align = problem.align_breaks;
  std::vector<double> out(kYears);
  if (p.product != kSpousePension) {
    product_reserve(product_spec(problem, p), rv, bv.laws.data(), align, out.data());
    return out;
  }
  const MortalityView& spouse = bv.laws[static_cast<std::size_t>(p.spouse)];
  Grid og = outer_grid(problem, p);
  std::int64_t npts = static_cast<std::int64_t>(og.pts.size());
  // Middle(x + t, t) at every outer stage point, each with its own Inner calls.
  std::vector<double> middle(og.pts.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t i = 0; i < npts; ++i) {
    double t = og.pts[i], tau = p.x + t, k = pension_delay(tau, p.g, p.r);
    Grid mg = middle_grid(p.h2, k, align);
    auto F = [&](std::size_t e) {
      return middle_weight(bv.spouse, mg.pts[e], tau) * inner_value(rv, spouse, mg.pts[e], k, t, p.h3, align);
    };
    double V = 0;
    for (std::size_t j = 0; j < mg.h.size(); ++j) V = V + middle_increment(mg.h[j], F(2 * j), F(2 * j + 1), F(2 * j + 2));
    middle[i] = V;
  }
  spouse_outer(p, rv, bv.laws[static_cast<std::size_t>(p.insured)], align, og.pts.data(), og.h.data(), og.year.data(),
               npts, middle.data(), out.data());
  return out;
}

}  // namespace numpipe::integrate
