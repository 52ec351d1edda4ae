// integrate: the CPU backend (OpenMP), the reference. Every parallel loop writes
// independent slots and every sum runs in a fixed sequential order, so the bits
// do not depend on the thread count.
#include <omp.h>

#include <cmath>
#include <limits>

#include "common/progress.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

namespace {

// Middle(tau) from one column's Inner values at its grid points.
double middle_sum(const Plan& plan, std::int32_t column, double tau, const double* inner) {
  std::int32_t g = plan.column_grid[column];
  const double* eta = plan.grid_eta.data() + plan.grid_offset[g];
  std::int64_t npts = plan.grid_offset[g + 1] - plan.grid_offset[g];
  const double* h = plan.grid_h.data() + (plan.grid_offset[g] - g) / 2;
  double V = 0;
  for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
    double f0 = middle_weight(eta[2 * j], tau) * inner[2 * j];
    double fm = middle_weight(eta[2 * j + 1], tau) * inner[2 * j + 1];
    double f1 = middle_weight(eta[2 * j + 2], tau) * inner[2 * j + 2];
    V = V + middle_increment(h[j], f0, fm, f1);
  }
  return V;
}

// The outer recurrence of one policy, from its Middle values; writes 121 years.
void outer_recurrence(const Policy& p, const RateView& rv, const double* t, const double* h, const int* year,
                      std::int64_t npts, const double* middle, double* out) {
  for (int y = 0; y < kYears; ++y) out[y] = std::numeric_limits<double>::quiet_NaN();
  double V = 0;
  if (year[0] >= 0) out[year[0]] = V;
  for (std::int64_t j = 0; 2 * j + 2 < npts; ++j) {
    double t0 = t[2 * j], tm = t[2 * j + 1], t1 = t[2 * j + 2], hj = h[j];
    double r0 = forward_rate(rv, t0), rm = forward_rate(rv, tm), r1 = forward_rate(rv, t1);
    double m0 = mu_female(p.x + t0), mm = mu_female(p.x + tm), m1 = mu_female(p.x + t1);
    double k1 = hj * outer_derivative(r0, m0, middle[2 * j], V);
    double k2 = hj * outer_derivative(rm, mm, middle[2 * j + 1], V + k1 / 2);
    double k3 = hj * outer_derivative(rm, mm, middle[2 * j + 1], V + k2 / 2);
    double k4 = hj * outer_derivative(r1, m1, middle[2 * j + 2], V + k3);
    V = V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
    if (year[2 * j + 2] >= 0) out[year[2 * j + 2]] = V;
  }
}

}  // namespace

Result solve_cpu(const Problem& problem, int threads) {
  if (threads > 0) omp_set_num_threads(threads);
  Result res;
  HostTimer plan_timer;
  Plan plan = make_plan(problem, 0, problem.policies.size());
  res.log.add("plan", plan_timer.seconds());
  RateTable rate = make_rate_table(problem);
  RateView rv = rate.view();
  res.inner_steps = plan.inner_steps;
  res.inner_steps_unshared = plan.inner_steps_unshared;
  res.columns = plan.columns();
  res.requests = plan.requests();

  // The progress line (integrate counts policies): the work of this solve is one
  // unit per Inner value, Middle value and outer recurrence, in proportion.
  Progress* progress = active_progress();
  if (progress) progress->set_work(plan.inner_values() + plan.requests() + plan.policies);

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
      for (std::int64_t e = 0; e < n; ++e)
        out[e] = inner_value(rv, eta[e], plan.column_k[c], plan.column_t[c], plan.column_h3[c], plan.align);
      if (progress) progress->add_work(static_cast<std::uint64_t>(n));
    }
  });

  // 2. Middle for every outer stage point of every policy.
  std::vector<double> middle(plan.requests());
  const std::int64_t nreq = static_cast<std::int64_t>(plan.requests());
  res.log.time("middle", 8.0 * (3 * items + 2 * requests), 0, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t q = 0; q < nreq; ++q) {
      std::int32_t c = plan.request_column[q];
      middle[q] = middle_sum(plan, c, plan.request_tau[q], inner.data() + plan.column_offset[c]);
      if (progress && (q & 1023) == 1023) progress->add_work(1024);
    }
  });

  // 3. The outer recurrences.
  res.reserve.assign(plan.policies * kYears, 0.0);
  const std::int64_t np = static_cast<std::int64_t>(plan.policies);
  res.log.time("outer", 8.0 * (3 * requests + static_cast<double>(plan.policies) * kYears), 0, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < np; ++p) {
      std::int64_t o = plan.outer_offset[p], n = plan.outer_offset[p + 1] - o;
      outer_recurrence(problem.policies[p], rv, plan.outer_t.data() + o, plan.outer_h.data() + (o - p) / 2,
                       plan.outer_year.data() + o, n, middle.data() + o, res.reserve.data() + p * kYears);
      if (progress) progress->add_work(1);
    }
  });
  return res;
}

std::vector<double> reference_reserve(const Problem& problem, const Policy& p) {
  RateTable rate = make_rate_table(problem);
  RateView rv = rate.view();
  bool align = problem.align_breaks;
  Grid og = outer_grid(p, align);
  std::int64_t npts = static_cast<std::int64_t>(og.pts.size());
  // Middle(x + t, t) at every outer stage point, each with its own Inner calls.
  std::vector<double> middle(og.pts.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t i = 0; i < npts; ++i) {
    double t = og.pts[i], tau = p.x + t, k = pension_delay(tau, p.g, p.r);
    Grid mg = middle_grid(p.h2, k, align);
    auto F = [&](std::size_t e) {
      return middle_weight(mg.pts[e], tau) * inner_value(rv, mg.pts[e], k, t, p.h3, align);
    };
    double V = 0;
    for (std::size_t j = 0; j < mg.h.size(); ++j) V = V + middle_increment(mg.h[j], F(2 * j), F(2 * j + 1), F(2 * j + 2));
    middle[i] = V;
  }
  std::vector<double> out(kYears);
  outer_recurrence(p, rv, og.pts.data(), og.h.data(), og.year.data(), npts, middle.data(), out.data());
  return out;
}

}  // namespace numpipe::integrate
