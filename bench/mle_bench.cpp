// mle-bench: the benchmark cases of issue 11, timed inside one process (CUDA
// events around the kernels; steady clock for the CPU), median of several runs
// after a warm-up. Prints Markdown table rows. Used by bench/mle.
// Usage: mle-bench gpu|cpu [THREADS] [CASE-SUBSTRING]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/random.hpp"
#include "kernels/mle/detail/backends.hpp"
#include "kernels/mle/mle.hpp"

using namespace numpipe;
using namespace numpipe::mle;

namespace {
std::vector<double> draw(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (double& v : x) {
    const bool left = rng.uniform() < 1.0 / 3.0;
    const double g = std::pow(rng.gamma(1.0 / 1.5), 1.0 / 1.5);
    v = left ? -g : 2.0 * g;
  }
  return x;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
struct Case {
  const char* name;
  std::int64_t series, length, window, step;
  bool exact;
  int reps;
};
}  // namespace

int main(int argc, char** argv) {
  const bool gpu = argc > 1 && std::strcmp(argv[1], "gpu") == 0;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  // optional third argument: run only the cases whose name contains it
  const char* only = argc > 3 ? argv[3] : nullptr;
  Params base;
  base.grid = parse_grid("0.5:4.45:80");
  if (!gpu && threads > 0) omp_set_num_threads(threads);
  const std::vector<Case> gpu_cases{{"one window n=500 (seed case)", 1, 500, 500, 1, true, 21},
                                    {"10000 independent windows of 500", 1, 500 * 10000, 500, 500, true, 5},
                                    {"rolling, window 500, step 1, series of 100000", 1, 100000, 500, 1, false, 7},
                                    {"64 series of 10000, window 500, step 1", 64, 10000, 500, 1, false, 5}};
  const std::vector<Case> cpu_cases{{"one window n=500 (seed case)", 1, 500, 500, 1, true, 5},
                                    {"64 independent windows of 500", 1, 500 * 64, 500, 500, true, 3},
                                    {"rolling, window 500, step 1, series of 5000", 1, 5000, 500, 1, false, 3}};
  const std::vector<Case>& cases = gpu ? gpu_cases : cpu_cases;
#ifdef NUMPIPE_HAVE_CUDA
  double exp_rate = 0;
  if (gpu) {
    exp_rate = measure_exp_rate(0);
    std::printf("| fp64 exp throughput (measured) | %.3g exp/s |\n", exp_rate);
  }
#endif
  for (const Case& c : cases) {
    if (only && !std::strstr(c.name, only)) continue;
    const std::vector<double> x = draw(static_cast<std::size_t>(c.series * c.length), 1234);
    Series s{x.data(), c.series, c.length};
    Params p = base;
    p.window = c.window;
    p.step = c.step;
    p.exact = c.exact;
    const double windows = static_cast<double>(window_count(s, p) * s.series);
    const Work work = work_estimate(s, p);
    WindowFits f;
    std::vector<double> t;
    for (int r = 0; r <= c.reps; ++r) {  // r = 0: warm-up
      double sec = 0;
      if (gpu) {
#ifdef NUMPIPE_HAVE_CUDA
        CudaTiming tm;
        solve_cuda(s, p, {0}, f, &tm);
        sec = tm.kernel_seconds;
#endif
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        solve_cpu(s, p, f);
        sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      if (r > 0) t.push_back(sec);
    }
    const double m = median(t), per = m / windows;
    std::printf("| %s | %s | %.0f windows | median %.4g s of %d | %.4g us/window | %.3g windows/s | %.3g terms/s", c.name,
                gpu ? "cuda" : ("cpu " + std::to_string(threads) + " threads").c_str(), windows, m, c.reps, per * 1e6,
                windows / m, work.terms / m);
#ifdef NUMPIPE_HAVE_CUDA
    if (gpu) {
      // floor: one exp per power term of a full recompute (spec); rolling: its own term count
      const double floor_s = work.terms / exp_rate;
      std::printf(" | floor %.4g us/window, ratio %.2f | anchor 564 us/window: %.0fx faster", floor_s / windows * 1e6,
                  m / floor_s, 564e-6 / per);
    }
#endif
    std::printf(" | loglik[0] %.17g |\n", f.loglik[0]);
    std::fflush(stdout);
  }
  return 0;
}
