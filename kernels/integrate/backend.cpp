// integrate: the backend dispatch, the one place that chooses the CPU or the CUDA
// backend (integrate.hpp, Engine); a problem whose policies name their own interest
// is solved as one problem per rate or curve (each as if alone).
#include "common/run.hpp"
#include "integrate.hpp"

#include <cmath>

namespace numpipe::integrate {

namespace {

Result solve_on(const Problem& problem, const Engine& engine, const ProgressFn& progress) {
  if (!engine.cuda) return solve_cpu(problem, engine.threads, progress);
#ifdef NUMPIPE_HAVE_CUDA
  return solve_cuda(problem, engine.devices);
#else
  fail_no_cuda_backend();
#endif
}

// The policies that name their own interest basis (Policy::rate_basis), grouped: for
// each basis used (and the problem's own, -1), a problem of its policies with that rate
// or curve, and their indices in the whole problem. Empty where no policy names one.
struct RateGroup {
  Problem problem;
  std::vector<std::size_t> index;
};
std::vector<RateGroup> rate_groups(const Problem& problem) {
  bool own = false;
  for (const Policy& p : problem.policies) own = own || p.rate_basis >= 0;
  if (!own) return {};
  std::vector<RateGroup> groups(problem.rate_bases.size() + 1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Problem& sub = groups[g].problem;
    sub.rate = g == 0 ? problem.rate : problem.rate_bases[g - 1].rate;
    sub.curve = g == 0 ? problem.curve : problem.rate_bases[g - 1].curve;
    sub.align_breaks = problem.align_breaks;
    sub.frequency = problem.frequency;
    sub.advance = problem.advance;
    sub.laws = problem.laws;
    sub.spouse = problem.spouse;
  }
  for (std::size_t i = 0; i < problem.policies.size(); ++i) {
    RateGroup& g = groups[static_cast<std::size_t>(problem.policies[i].rate_basis + 1)];
    g.index.push_back(i);
    g.problem.policies.push_back(problem.policies[i]);
    g.problem.policies.back().rate_basis = -1;
  }
  std::vector<RateGroup> used;
  for (RateGroup& g : groups)
    if (!g.index.empty()) used.push_back(std::move(g));
  return used;
}

}  // namespace

Result solve(const Problem& problem, const Engine& engine, const ProgressFn& progress) {
  std::vector<RateGroup> groups = rate_groups(problem);
  if (groups.empty()) return solve_on(problem, engine, progress);
  const std::size_t n = problem.policies.size();
  Result res;
  res.reserve.resize(n * kYears);
  for (const RateGroup& g : groups) {
    const Result r = solve_on(g.problem, engine, progress);
    for (std::size_t k = 0; k < g.index.size(); ++k)
      std::copy(r.reserve.begin() + static_cast<std::ptrdiff_t>(k * kYears),
                r.reserve.begin() + static_cast<std::ptrdiff_t>((k + 1) * kYears),
                res.reserve.begin() + static_cast<std::ptrdiff_t>(g.index[k] * kYears));
    if (!r.premium.empty()) {
      res.premium.resize(n, 0.0);
      for (std::size_t k = 0; k < g.index.size(); ++k) res.premium[g.index[k]] = r.premium[k];
    }
    for (const auto& ph : r.log.phases()) res.log.add(ph.name, ph.seconds, ph.bytes, ph.flops);
    res.inner_steps += r.inner_steps;
    res.inner_steps_unshared += r.inner_steps_unshared;
    res.columns += r.columns;
    res.requests += r.requests;
    res.table = res.table || r.table;
    res.middle_values += r.middle_values;
    res.products += r.products;
    res.product_steps += r.product_steps;
  }
  return res;
}

namespace {

std::vector<double> cash_flows_on(const Problem& problem, const std::vector<double>& premium, const Engine& engine) {
  const std::vector<ProductSpec> specs = cash_flow_specs(problem, premium);
  if (!engine.cuda) return cash_flows_cpu(problem, specs, engine.threads);
#ifdef NUMPIPE_HAVE_CUDA
  return cash_flows_cuda(problem, specs, engine.devices.empty() ? 0 : engine.devices.front());
#else
  fail_no_cuda_backend();
#endif
}

}  // namespace

std::vector<double> cash_flows(const Problem& problem, const std::vector<double>& premium, const Engine& engine) {
  std::vector<double> flows;
  std::vector<RateGroup> groups = rate_groups(problem);
  if (groups.empty()) {
    flows = cash_flows_on(problem, premium, engine);
  } else {
    flows.resize(problem.policies.size() * kYears * kCashFlowKinds);
    const std::size_t row = static_cast<std::size_t>(kYears) * kCashFlowKinds;
    for (const RateGroup& g : groups) {
      std::vector<double> part_premium;
      if (!premium.empty())
        for (std::size_t i : g.index) part_premium.push_back(premium[i]);
      const std::vector<double> part = cash_flows_on(g.problem, part_premium, engine);
      for (std::size_t k = 0; k < g.index.size(); ++k)
        std::copy(part.begin() + static_cast<std::ptrdiff_t>(k * row), part.begin() + static_cast<std::ptrdiff_t>((k + 1) * row),
                  flows.begin() + static_cast<std::ptrdiff_t>(g.index[k] * row));
    }
  }
  // A spouse pension's benefits depend on the spouse's life too: not computed.
  for (std::size_t i = 0; i < problem.policies.size(); ++i)
    if (problem.policies[i].product == kSpousePension)
      for (int y = 0; y < kYears; ++y) flows[(i * kYears + static_cast<std::size_t>(y)) * kCashFlowKinds] = std::nan("");
  return flows;
}

}  // namespace numpipe::integrate
