// price: the backend dispatch, the one place that chooses the CPU or the CUDA
// backend (price.hpp, Engine): FinPar's strikes (solve_strikes), contracts and
// functionals (evaluate).
#include "common/error.hpp"
#include "common/profile.hpp"
#include "common/run.hpp"
#include "detail/backends.hpp"
#include "price.hpp"

namespace numpipe::price {

std::vector<double> solve_strikes(const Setup& s, const Engine& engine, StrikeRange range, CudaRun* run) {
  if (!engine.cuda) {
    HostTimer timer;
    std::vector<double> prices = engine.method == Method::forward ? solve_cpu(s, engine.precision, range)
                                                                  : solve_cpu_adjoint(s, engine.precision, range);
    if (run) {
      *run = CudaRun{};
      run->seconds = timer.seconds();
    }
    return prices;
  }
#ifdef NUMPIPE_HAVE_CUDA
  CudaRun local;
  CudaRun* r = run ? run : &local;
  if (engine.method == Method::forward)
    return solve_cuda(s, engine.precision, range, engine.devices, engine.gpu_group, r, engine.gpu_kernel);
  return prices_from_weights(s, engine.precision, adjoint_weights_cuda(s, engine.precision, engine.device, r), range);
#else
  fail_no_cuda_backend();
#endif
}

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
    fail_no_cuda_backend();
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
    fail_no_cuda_backend();
#endif
  }
  std::vector<double> out(nf * count);
  for (std::int64_t f = 0; f < nf; ++f)
    for (std::int64_t c = 0; c < count; ++c)
      out[f * count + c] = contract_value(s, engine.precision, weights.data() + (f * m_count + contracts[c].maturity) * nx,
                                          contracts[c].strike, contracts[c].put, contracts[c].smooth);
  return out;
}

std::vector<std::vector<double>> evaluate_points(const std::vector<Setup>& setups, const std::vector<Contract>& contracts,
                                                const Engine& engine, double* device_seconds,
                                                const std::function<void(int)>& done) {
  std::vector<std::vector<double>> values(setups.size());
  if (device_seconds) *device_seconds = 0;
  if (setups.empty()) return values;
#ifdef NUMPIPE_HAVE_CUDA
  if (engine.cuda && engine.method == Method::adjoint) {
    // the points as lanes of one pass (their grids have the same sizes and time levels)
    std::vector<Functional> fs;
    for (const Setup& s : setups) fs.push_back(functionals_of(s, false)[0]);
    std::vector<Lane> lanes;
    for (std::size_t k = 0; k < setups.size(); ++k) lanes.push_back({&setups[k], &fs[k]});
    CudaRun run;
    const std::vector<double> w = adjoint_weights_cuda(lanes, engine.precision, engine.device, &run);
    if (device_seconds) *device_seconds = run.seconds;
    const std::int64_t nx = setups[0].p.num_x, per = static_cast<std::int64_t>(setups[0].levels.size()) * nx;
    for (std::size_t k = 0; k < setups.size(); ++k)
      for (const Contract& c : contracts)
        values[k].push_back(contract_value(setups[k], engine.precision, w.data() + k * per + c.maturity * nx, c.strike,
                                           c.put, c.smooth));
    if (done) done(static_cast<int>(setups.size()));
    return values;
  }
#endif
  if (!engine.cuda && setups.size() > 1) {
    // the points side by side, one thread each (the pass inside runs on that thread:
    // nested parallelism is off), as the CUDA lanes do; a pass's values do not depend
    // on its thread count, so the bits are those of one point at a time
    const int count = static_cast<int>(setups.size());
    int finished = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < count; ++k) {
      values[static_cast<std::size_t>(k)] =
          evaluate(setups[static_cast<std::size_t>(k)], contracts, functionals_of(setups[static_cast<std::size_t>(k)], false), engine);
#pragma omp critical(price_points_done)
      if (done) done(++finished);
    }
    return values;
  }
  for (std::size_t k = 0; k < setups.size(); ++k) {
    EvalTiming timing;
    values[k] = evaluate(setups[k], contracts, functionals_of(setups[k], false), engine, &timing);
    if (device_seconds) *device_seconds += timing.solve_seconds;
    if (done) done(static_cast<int>(k + 1));
  }
  return values;
}

}  // namespace numpipe::price
