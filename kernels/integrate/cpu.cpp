// integrate: the CPU backend (OpenMP), the reference. Every parallel loop writes
// independent slots and every sum runs in a fixed sequential order, so the bits
// do not depend on the thread count.
#include <omp.h>

#include <atomic>
#include <algorithm>
#include <cmath>
#include <limits>

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
  res.log.add("plan", plan_timer.seconds());
  RateTable rate = make_rate_table(problem);
  RateView rv = rate.view();
  const BasisViews bv = basis_views(problem);
  res.inner_steps = plan.inner_steps;
  res.inner_steps_unshared = plan.inner_steps_unshared;
  res.columns = plan.columns();
  res.requests = plan.requests();
  WorkCredit credit(progress, plan.policies, plan.inner_values() + plan.requests() + plan.policies);

  // 1. Inner for every (column, eta point); longest integrations first for balance.
  std::vector<double> inner(plan.inner_values());
  const std::int64_t ncol = static_cast<std::int64_t>(plan.columns());
  // Bytes: the CUDA column plan's traffic model (cuda.cu; docs/profile.md, "Traffic models").
  const double items = static_cast<double>(plan.inner_values()), requests = static_cast<double>(plan.requests());
  res.log.time("inner", 8.0 * items, plan.inner_steps * kFlopsPerInnerStep, [&] {
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t c = 0; c < ncol; ++c) {
      std::int32_t g = plan.column_grid[c];
      const double* eta = plan.grid_eta.data() + plan.grid_offset[g];
      std::int64_t n = plan.grid_offset[g + 1] - plan.grid_offset[g];
      double* out = inner.data() + plan.column_offset[c];
      const MortalityView& spouse = bv.laws[static_cast<std::size_t>(plan.column_law[c])];
      for (std::int64_t e = 0; e < n; ++e)
        out[e] = inner_value(rv, spouse, eta[e], plan.column_k[c], plan.column_t[c], plan.column_h3[c], plan.align);
      if (credit.on()) credit.add(static_cast<std::uint64_t>(n));
    }
  });

  // 2. Middle for every outer stage point of every policy.
  std::vector<double> middle(plan.requests());
  const std::int64_t nreq = static_cast<std::int64_t>(plan.requests());
  res.log.time("middle", 8.0 * (3 * items + 2 * requests), 0, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t q = 0; q < nreq; ++q) {
      std::int32_t c = plan.request_column[q];
      middle[q] = middle_sum(plan, bv.spouse, c, plan.request_tau[q], inner.data() + plan.column_offset[c]);
      if (credit.on() && (q & 1023) == 1023) credit.add(1024);
    }
  });

  // 3. The outer recurrences.
  if (!sink) {
    res.reserve.assign(plan.policies * kYears, 0.0);
    res.premium.assign(plan.policies, 0.0);
  }
  const std::int64_t np = static_cast<std::int64_t>(plan.policies);
  res.log.time("outer", 8.0 * (3 * requests + static_cast<double>(plan.policies) * kYears), 0, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < np; ++p) {
      std::int64_t o = plan.outer_offset[p], n = plan.outer_offset[p + 1] - o;
      const Policy& pol = problem.policies[p];
      double* row = sink ? sink->row(p) : res.reserve.data() + p * kYears;
      double prem = spouse_outer(pol, rv, bv.laws[static_cast<std::size_t>(pol.insured)], plan.align,
                                 plan.outer_t.data() + o, plan.outer_h.data() + (o - p) / 2, plan.outer_year.data() + o,
                                 n, middle.data() + o, row);
      (sink ? sink->premium[sink->index[p]] : res.premium[p]) = prem;
      if (credit.on()) credit.add(1);
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
