// price: evaluation of contracts and functionals on either backend (price.hpp, evaluate).
#include "common/error.hpp"
#include "price.hpp"

namespace numpipe::price {

std::vector<double> evaluate(const Setup& s, const std::vector<Contract>& contracts, const std::vector<Functional>& fs,
                             const Engine& engine, EvalTiming* timing,
                             const std::function<void(std::int64_t, std::int64_t)>& progress) {
  if (timing) *timing = EvalTiming{};
  const std::int64_t count = static_cast<std::int64_t>(contracts.size()), nf = static_cast<std::int64_t>(fs.size());
  if (engine.method == Method::forward) {
    std::function<void(std::int64_t)> each;
    if (progress) each = [&](std::int64_t done) { progress(done, count); };
    if (!engine.cuda) return solve_cpu_contracts(s, engine.precision, contracts, fs, each);
#ifdef NUMPIPE_HAVE_CUDA
    CudaRun run;
    std::vector<double> out = solve_cuda_contracts(s, engine.precision, contracts, fs, engine.device, &run);
    if (timing) *timing = {run.seconds, run.upload_seconds};
    return out;
#else
    fail_resource("this build has no CUDA backend");
#endif
  }
  const std::int64_t nx = s.p.num_x, m_count = static_cast<std::int64_t>(s.levels.size());
  std::vector<double> weights;
  if (!engine.cuda) {
    std::function<void(std::int64_t)> each;
    const std::int64_t total = nf * (s.p.num_t - 1);
    if (progress) each = [&](std::int64_t done) { progress(done, total); };
    weights = adjoint_weights_cpu(s, engine.precision, fs, each);
  } else {
#ifdef NUMPIPE_HAVE_CUDA
    std::vector<Lane> lanes;
    for (const Functional& f : fs) lanes.push_back({&s, &f});
    CudaRun run;
    weights = adjoint_weights_cuda(lanes, engine.precision, engine.device, &run);
    if (timing) *timing = {run.seconds, run.upload_seconds};
#else
    fail_resource("this build has no CUDA backend");
#endif
  }
  std::vector<double> out(nf * count);
  for (std::int64_t f = 0; f < nf; ++f)
    for (std::int64_t c = 0; c < count; ++c)
      out[f * count + c] = contract_value(s, engine.precision, weights.data() + (f * m_count + contracts[c].maturity) * nx,
                                          contracts[c].strike, contracts[c].put, contracts[c].smooth);
  return out;
}

}  // namespace numpipe::price
