// GARCH(1,1) with AEPD innovations (garch.hpp) on the CPU: every window's fit
// (garch_model.hpp, the search the CUDA backend runs too) over the points in
// time order, the chunks of windows spread over the threads.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "garch_model.hpp"

namespace numpipe::mle {

void garch_default_start(const double* r, std::int64_t n, double* par) {
  garch_default_start(GarchSerialWindow{r, n}, par);
}

GarchFit fit_garch_window(const double* r, std::int64_t n, const double* start, const GarchOptions& o) {
  return garch_fit_model(GarchSerialWindow{r, n}, garch_carry_from(start), o);
}

std::vector<double> garch_fhs_quantiles(const double* r, std::int64_t n, const double* par, double h_next,
                                        const std::vector<double>& levels) {
  // the standardised residuals on the passes' variance path
  const double mu = par[kMu];
  std::vector<double> z(static_cast<std::size_t>(n));
  garch_variance_path<false>(r, n, par, [&](std::int64_t t, double e, double h, const double*) {
    z[static_cast<std::size_t>(t)] = e / std::sqrt(h);
  });
  std::sort(z.begin(), z.end());
  std::vector<double> q;
  for (double level : levels) {
    const double pos = level * static_cast<double>(n - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, z.size() - 1);
    const double zq = z[lo] + (pos - static_cast<double>(lo)) * (z[hi] - z[lo]);
    q.push_back(mu + std::sqrt(h_next) * zq);
  }
  return q;
}

std::vector<GarchFit> fit_garch(const double* x, std::int64_t series, std::int64_t length, const GarchOptions& o) {
  const std::int64_t n = o.window > 0 ? o.window : length;
  const std::int64_t W = (length - n) / o.step + 1;
  // chunks of a fixed number of windows: each starts afresh, then warm starts
  const std::int64_t chunks = (W + kGarchChunk - 1) / kGarchChunk;
  std::vector<GarchFit> fits(static_cast<std::size_t>(series * W));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t task = 0; task < series * chunks; ++task) {
    const std::int64_t si = task / chunks, c = task % chunks;
    const double* xs = x + si * length;
    auto window = [&](std::int64_t w) { return GarchSerialWindow{xs + w * o.step, n}; };
    garch_fit_chunk(window, c * kGarchChunk, std::min(W, (c + 1) * kGarchChunk), o, fits.data() + si * W);
  }
  return fits;
}

}  // namespace numpipe::mle
