// mle-garch-bench: the solve of mle-fit --model garch (every window's fit, no
// reading or writing) timed inside one process, the median of REPS runs after
// a warm-up: CUDA events around the kernel on the GPU, the steady clock on the
// CPU. Prints one Markdown table row. Used by bench/mle-garch.
// Usage: mle-garch-bench cpu|gpu RETURNS.nps WINDOW STEP [REPS]
//        mle-garch-bench passes RETURNS.nps WINDOW STEP
//        mle-garch-bench pass RETURNS.nps WINDOW STEP   (one pass's latency on the GPU)
//   RETURNS.nps: a stream with the series x (gen-input mle --from-text ...)
//   passes: the CPU's fits once, as the GPU runs them (the re-search's starts
//   each searched ahead), counting the passes over a window's points (the
//   log-likelihood's and the gradient's): all of them, and per chunk of
//   warm-started windows the chain of passes one after another (the starts side
//   by side: the longest one's): the GPU runs the chunks side by side, so the
//   slowest chunk's chain bounds its solve (bench/mle-garch).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/stream.hpp"
#include "kernels/mle/detail/backends.hpp"
#include "kernels/mle/garch.hpp"
#include "kernels/mle/garch_model.hpp"
#include "kernels/mle/mle.hpp"

using namespace numpipe;
using namespace numpipe::mle;

namespace {

// The CPU's window, counting its passes as the GPU runs them: the
// re-search's starts searched ahead side by side (all of them: *passes; over
// all windows, those with the gradient: *gradient_passes), and the chain of
// passes one after another (*path: the longest piece's).
struct CountingWindow : GarchSerialWindow {
  long long* passes;
  long long* path;
  long long* gradient_passes;
  static constexpr bool kSearchAhead = true;
  double loglik(const double* par, double* h_next) const {
    ++*passes;
    ++*path;
    return GarchSerialWindow::loglik(par, h_next);
  }
  double loglik_gradient(const double* par, double* grad) const {
    ++*passes;
    ++*path;
    ++*gradient_passes;
    return GarchSerialWindow::loglik_gradient(par, grad);
  }
  template <class Result, int N, class Body>
  void side_by_side(Result (&out)[N], const Body& body) const {
    const long long before = *path;
    long long longest = before;
    for (int j = 0; j < N; ++j) {
      *path = before;
      out[j] = body(j);
      longest = std::max(longest, *path);
    }
    *path = longest;
  }
};

// One series' rolling fits in the backends' chunks, their passes counted: one row.
void count_passes(const std::vector<double>& x, std::int64_t length, const GarchOptions& o) {
  const std::int64_t W = (length - o.window) / o.step + 1;
  std::vector<long long> per_window(static_cast<std::size_t>(W), 0), path(static_cast<std::size_t>(W), 0);
  std::vector<GarchFit> fits(static_cast<std::size_t>(W));
  long long total = 0, heavy = 0, gradient = 0;
  std::vector<long long> chains;  // each chunk's chain
  for (std::int64_t first = 0; first < W; first += kGarchChunk) {
    const std::int64_t last = std::min(W, first + kGarchChunk);
    auto window = [&](std::int64_t w) {
      const auto i = static_cast<std::size_t>(w);
      CountingWindow counting{{x.data() + w * o.step, o.window}, &per_window[i], &path[i], &gradient};
      return counting;
    };
    garch_fit_chunk(window, first, last, o, fits.data());
    long long chunk = 0;
    for (std::int64_t w = first; w < last; ++w) {
      chunk += path[static_cast<std::size_t>(w)];
      total += per_window[static_cast<std::size_t>(w)];
    }
    chains.push_back(chunk);
  }
  std::sort(chains.begin(), chains.end());
  long long chained = 0;  // the chains' sum: the work the GPU's blocks share out over its SMs
  for (long long c : chains) chained += c;
  // a window searched again from the fixed starts costs several hundred passes
  for (long long p : per_window) heavy += p > 300 ? 1 : 0;
  std::printf("| passes (CPU, counted) | window %lld, step %lld | %lld windows in chunks of %lld | total %lld (%lld with "
              "the gradient), %.1f a window | chunks' chains (the starts side by side): slowest %lld, median %lld, "
              "sum %lld | windows over 300 passes %lld |\n",
              static_cast<long long>(o.window), static_cast<long long>(o.step), static_cast<long long>(W),
              static_cast<long long>(kGarchChunk), total, gradient, static_cast<double>(total) / static_cast<double>(W),
              chains.back(), chains[chains.size() / 2], chained, heavy);
}

}  // namespace

int main(int argc, char** argv) {
  return run_tool("mle-garch-bench", [&]() -> int {
  if (argc < 5) {
    std::fprintf(stderr, "usage: mle-garch-bench cpu|gpu|passes|pass RETURNS.nps WINDOW STEP [REPS]\n");
    return 2;
  }
  const bool gpu = std::strcmp(argv[1], "gpu") == 0;
  const std::vector<Record> records = read_stream(argv[2]);
  const auto xr = std::find_if(records.begin(), records.end(), [](const Record& r) { return r.name == "x"; });
  if (xr == records.end()) {
    std::fprintf(stderr, "mle-garch-bench: %s holds no record x\n", argv[2]);
    return 2;
  }
  const std::vector<double> x = xr->to_vector<double>();
  const std::int64_t series = xr->shape.size() == 2 ? xr->shape[0] : 1, length = xr->shape.back();
  GarchOptions o;
  o.window = std::atoll(argv[3]);
  o.step = std::atoll(argv[4]);
  const int reps = argc > 5 ? std::atoi(argv[5]) : 7;
  if (o.window < 10 || o.window > length || o.step < 1 || reps < 1) {
    std::fprintf(stderr, "mle-garch-bench: window in [10, %lld], step >= 1, reps >= 1\n", static_cast<long long>(length));
    return 2;
  }
  if (std::strcmp(argv[1], "passes") == 0) {
    count_passes(x, length, o);  // the first series
    return 0;
  }
  if (std::strcmp(argv[1], "pass") == 0) {  // one pass's latency on one warp, at the first window's fit
#ifdef NUMPIPE_HAVE_CUDA
    double start[kGarchParams], ll_s = 0, grad_s = 0;
    garch_default_start(x.data(), o.window, start);
    const GarchFit fit = fit_garch_window(x.data(), o.window, start, o);
    garch_pass_seconds_cuda(x.data(), o.window, fit.par, 2000, 0, &ll_s, &grad_s);
    std::printf("| one pass on one warp (CUDA events, 2000 in a chain) | window %lld | log-likelihood %.3g us | "
                "gradient %.3g us |\n",
                static_cast<long long>(o.window), ll_s * 1e6, grad_s * 1e6);
#else
    std::fprintf(stderr, "mle-garch-bench: pass needs a CUDA build\n");
#endif
    return 0;
  }
  std::vector<double> seconds;
  std::vector<GarchFit> fits;
  for (int r = 0; r <= reps; ++r) {  // r = 0: the warm-up
    double sec = 0;
    if (gpu) {
      fits = fit_garch(x.data(), series, length, o, Engine{true, {0}}, &sec);  // the kernel's time
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      fits = fit_garch(x.data(), series, length, o);
      sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (r > 0) seconds.push_back(sec);
  }
  std::sort(seconds.begin(), seconds.end());
  long long edge = 0, unconverged = 0;
  for (const GarchFit& f : fits) {
    edge += f.on_edge ? 1 : 0;
    unconverged += f.converged ? 0 : 1;
  }
  std::printf("| %s | window %lld, step %lld | %zu windows | median %.4g s of %d (min %.4g, max %.4g) | %.4g ms/window "
              "| on an edge %lld, at the iteration limit %lld | loglik[0] %.17g |\n",
              gpu ? "cuda (kernel, CUDA events)" : "cpu (solve, steady clock)", static_cast<long long>(o.window),
              static_cast<long long>(o.step), fits.size(), seconds[seconds.size() / 2], reps, seconds.front(),
              seconds.back(), seconds[seconds.size() / 2] / static_cast<double>(fits.size()) * 1e3, edge, unconverged,
              fits.front().loglik);
  return 0;
  });
}
