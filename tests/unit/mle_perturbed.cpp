// See mle_perturbed.hpp. inference.hpp and model.hpp are included into the
// namespace numpipe::mle_perturbed (by renaming `mle` while they are read), in
// which exp, log, pow and lgamma below hide the C library's: every unqualified
// call in the shared source resolves to them. The copy has its own symbols, so
// it cannot clash with the library's (unperturbed) instances of the same code.
// This file must not include kernels/mle/mle.hpp or inference.hpp otherwise.
#include "mle_perturbed.hpp"

#include <cmath>
#include <cstring>

#include "common/hd.hpp"

namespace numpipe::mle_perturbed {
namespace {
std::uint64_t g_salt = 0;
int g_ulps = 0;

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
double moved(double r, double a, double b, std::uint64_t which) {
  if (g_ulps == 0 || !std::isfinite(r) || r == 0) return r;
  std::uint64_t ba, bb;
  std::memcpy(&ba, &a, sizeof ba);
  std::memcpy(&bb, &b, sizeof bb);
  const std::uint64_t h = mix(ba ^ mix(bb ^ mix(g_salt ^ which)));
  const int k = static_cast<int>(h % static_cast<std::uint64_t>(2 * g_ulps + 1)) - g_ulps;
  for (int i = 0; i < k; ++i) r = std::nextafter(r, INFINITY);
  for (int i = 0; i > k; --i) r = std::nextafter(r, -INFINITY);
  return r;
}
}  // namespace

double exp(double a) { return moved(std::exp(a), a, 0.0, 1); }
double log(double a) { return moved(std::log(a), a, 0.0, 2); }
double pow(double a, double b) { return moved(std::pow(a, b), a, b, 3); }
double lgamma(double a) { return moved(std::lgamma(a), a, 0.0, 4); }

}  // namespace numpipe::mle_perturbed

#define mle mle_perturbed
#include "kernels/mle/inference.hpp"
#include "kernels/mle/model.hpp"
#undef mle

namespace numpipe::mle_test {

PlainEstimate estimate_window_perturbed(const double* x, std::int64_t n, const PlainTask& t, int ulps,
                                        std::uint64_t salt) {
  namespace m = numpipe::mle_perturbed;
  m::g_ulps = ulps;
  m::g_salt = salt;
  m::WindowTask w;
  w.theta0 = t.theta0;
  w.p1 = t.p1;
  w.p1_lo = t.p1_lo;
  w.p1_hi = t.p1_hi;
  w.p2 = t.p2;
  w.p2_lo = t.p2_lo;
  w.p2_hi = t.p2_hi;
  w.p_min = t.p_min;
  w.p_max = t.p_max;
  w.two_shapes = t.two_shapes;
  w.refine = t.refine;
  w.inform = t.inform;
  const m::WindowEstimate e = m::estimate_window(x, n, w);
  PlainEstimate r;
  r.theta = e.theta;
  r.p1 = e.p1;
  r.p2 = e.p2;
  r.s_l = e.s_l;
  r.s_r = e.s_r;
  r.loglik = e.loglik;
  for (int k = 0; k < 5; ++k) r.se[k] = e.se[k];
  r.ci_lo = e.ci_lo;
  r.ci_hi = e.ci_hi;
  r.smooth = e.smooth;
  r.iterations = e.iterations;
  return r;
}

}  // namespace numpipe::mle_test
