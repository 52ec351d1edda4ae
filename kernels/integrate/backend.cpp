// integrate: the backend dispatch, the one place that chooses the CPU or the CUDA
// backend (integrate.hpp, Engine).
#include "common/run.hpp"
#include "integrate.hpp"

#include <cmath>

namespace numpipe::integrate {

Result solve(const Problem& problem, const Engine& engine, const ProgressFn& progress) {
  if (!engine.cuda) return solve_cpu(problem, engine.threads, progress);
#ifdef NUMPIPE_HAVE_CUDA
  return solve_cuda(problem, engine.devices);
#else
  fail_no_cuda_backend();
#endif
}

std::vector<double> cash_flows(const Problem& problem, const std::vector<double>& premium, const Engine& engine) {
  const std::vector<ProductSpec> specs = cash_flow_specs(problem, premium);
  std::vector<double> flows;
  if (!engine.cuda) {
    flows = cash_flows_cpu(problem, specs, engine.threads);
  } else {
#ifdef NUMPIPE_HAVE_CUDA
    flows = cash_flows_cuda(problem, specs, engine.devices.empty() ? 0 : engine.devices.front());
#else
    fail_no_cuda_backend();
#endif
  }
  // A spouse pension's benefits depend on the spouse's life too: not computed.
  for (std::size_t i = 0; i < problem.policies.size(); ++i)
    if (problem.policies[i].product == kSpousePension)
      for (int y = 0; y < kYears; ++y) flows[(i * kYears + static_cast<std::size_t>(y)) * kCashFlowKinds] = std::nan("");
  return flows;
}

}  // namespace numpipe::integrate
