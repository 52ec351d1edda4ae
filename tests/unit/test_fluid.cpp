// fluid-step's kernels: the fast CPU backend against the literal transcription
// of the spec (kernels/fluid/reference.hpp), bit for bit, and the properties
// the issue asks for.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/random.hpp"
#include "kernels/fluid/fluid.hpp"
#include "kernels/fluid/reference.hpp"
#include "fluid_test_util.hpp"

using namespace numpipe::fluid;
using fluid_test::check_same_fields;
using fluid_test::same_bits;

namespace {

template <class T>
Fields<T> random_state(int n, std::uint64_t seed, double scale = 1.0) {
  Fields<T> f(n);
  numpipe::Rng rng(seed);
  const int w = n + 2;
  for (int j = 1; j <= n; ++j)
    for (int i = 1; i <= n; ++i) {
      f.d[ix(i, j, w)] = T(rng.uniform());
      f.u[ix(i, j, w)] = T(scale * rng.uniform(-0.5, 0.5));
      f.v[ix(i, j, w)] = T(scale * rng.uniform(-0.5, 0.5));
    }
  return f;
}

template <class T>
void check_same(const Fields<T>& a, const Fields<T>& b) {
  check_same_fields(a, b);
}

template <class T>
Fields<T> run_cpu(const Params& p, const Fields<T>& init, int steps, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  auto s = make_cpu_solver<T>(p, init);
  s->advance(steps);
  Fields<T> out;
  s->fetch(out);
  omp_set_num_threads(saved);
  return out;
}

template <class T>
Fields<T> run_ref(const Params& p, Fields<T> f, int steps) {
  reference::Ref<T> r(p);
  for (int s = 0; s < steps; ++s) r.step(f);
  return f;
}

Params seed_params(int n) {
  Params p;
  p.n = n;
  p.diff = 0.0001;
  p.visc = 0.0001;
  return p;
}

double l2(const FieldVector<float>& a) {
  double s = 0;
  for (float x : a) s += double(x) * x;
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("fluid: CPU backend equals the reference bit for bit (react scene, seed scheme)") {
  for (int n : {16, 37, 130}) {
    CAPTURE(n);
    Params p = seed_params(n);
    Fields<float> init(n);
    check_same(run_cpu(p, init, 4, 2), run_ref(p, init, 4));
  }
}

TEST_CASE("fluid: CPU backend equals the reference bit for bit (random fields, both schemes, odd iterations)") {
  for (Scheme s : {Scheme::seed, Scheme::stam})
    for (int iters : {20, 7}) {
      CAPTURE(iters);
      Params p = seed_params(45);
      p.scheme = s;
      p.iters = iters;
      p.forcing = Forcing::none;
      auto init = random_state<float>(45, 3);
      check_same(run_cpu(p, init, 3, 3), run_ref(p, init, 3));
      auto init64 = random_state<double>(45, 4);
      check_same(run_cpu(p, init64, 2, 2), run_ref(p, init64, 2));
    }
}

TEST_CASE("fluid: the half-sweep's division routes round exactly as the division") {
  // Numerators over the whole float range: the reciprocal route's exact range,
  // its edges, subnormals, signed zeros, huge values, infinities and NaN.
  std::vector<float> t;
  numpipe::Rng rng(11);
  for (int e = -149; e <= 127; ++e)
    for (float m : {1.0f, 1.5f, 1.9999999f, 1.2345678f}) {
      t.push_back(std::ldexp(m, e));
      t.push_back(-std::ldexp(m, e));
    }
  for (int i = 0; i < 3000; ++i) t.push_back(float(rng.uniform(-1000.0, 1000.0)));
  for (int i = 0; i < 500; ++i) t.push_back(std::ldexp(float(rng.uniform(1.0, 2.0)), int(rng.uniform(-130.0, 130.0))));
  t.push_back(0.0f);
  t.push_back(-0.0f);
  t.push_back(std::numeric_limits<float>::infinity());
  t.push_back(-std::numeric_limits<float>::infinity());
  t.push_back(std::numeric_limits<float>::quiet_NaN());
  t.push_back(std::numeric_limits<float>::denorm_min());
  const int count = static_cast<int>(t.size());  // not a multiple of 8 or 16: the tails too
  CHECK(count % 16 != 0);
  std::vector<float> l(t.size()), out(t.size()), want(t.size());
  for (int i = 0; i < count; ++i) l[i] = std::signbit(t[i]) && t[i] == 0 ? -0.0f : 0.0f;  // keeps -0 a -0
  for (float c : {4.0f, 1.0f, 672.0898f, 1.0000001f, 3.0f, 16777216.0f, 33554432.0f, 1.0e9f}) {
    for (int i = 0; i < count; ++i) want[i] = gs_cell(t[i], l[i], l[i], l[i], l[i], 1.0f, c);
    for (const char* isa : {"generic", "avx2", "avx512"}) {
      CAPTURE(c);
      const std::string name = isa;
      CAPTURE(name);
      std::fill(out.begin(), out.end(), 7.0f);
      const bool recip = testing::sweep_row_float(isa, out.data(), l.data(), l.data(), l.data(), l.data(), t.data(),
                                                  count, 1.0f, c);
      CAPTURE(recip);
      CHECK(std::memcmp(out.data(), want.data(), t.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("fluid: the window's aligned half-sweep equals the cell formula on every range and alignment") {
  // Planes as in the window: on 64-byte lines with room around them; every start
  // lo and end hi within a few lines, both parities, each division route. Cells
  // outside [lo, hi] must keep their content.
  constexpr int kPad = 64, kLen = 160;
  const std::size_t size = kLen + 2 * kPad + 16;
  std::vector<float> mid_b(size), d_b(size), u_b(size), x0_b(size), out_b(size);
  numpipe::Rng rng(5);
  for (auto* b : {&mid_b, &d_b, &u_b, &x0_b})
    for (float& v : *b) v = float(rng.uniform(-2.0, 2.0));
  // line up the planes: each starts where its address is 0 mod 64, offset alike
  auto line_up = [&](std::vector<float>& b) {
    const auto p = reinterpret_cast<std::uintptr_t>(b.data() + kPad);
    return b.data() + kPad + ((64 - p % 64) % 64) / 4;
  };
  float* mid = line_up(mid_b);
  float* D = line_up(d_b);
  float* U = line_up(u_b);
  float* X0 = line_up(x0_b);
  float* out = line_up(out_b);
  bool ran = false;
  for (float c : {4.0f, 672.0898f, 3.0f, 1.0e9f})
    for (bool recip : {false, true})
      for (int par : {0, 1})
        for (int lo = 0; lo < 40; ++lo)
          for (int hi = lo; hi < std::min(lo + 70, kLen - 32); hi += (hi - lo < 20 ? 1 : 7)) {
            std::fill(out, out + kLen, 7.0f);
            if (!testing::sweep_window_float(out, mid, par, D, U, X0, lo, hi, 0.75f, c, recip)) continue;
            ran = true;
            bool same = true;
            for (int i = 0; i < kLen; ++i) {
              const float want = i >= lo && i <= hi
                                     ? gs_cell(X0[i], mid[i + par - 1], mid[i + par], D[i], U[i], 0.75f, c)
                                     : 7.0f;
              same = same && std::memcmp(&want, &out[i], sizeof want) == 0;
            }
            CAPTURE(c);
            CAPTURE(recip);
            CAPTURE(par);
            CAPTURE(lo);
            CAPTURE(hi);
            CHECK(same);
          }
  if (!ran) MESSAGE("no AVX-512 on this machine: the window kernel was not run");
}

TEST_CASE("fluid: every CPU kernel variant (instruction set, division route, advection) equals the reference") {
  // The backend picks its row kernels at run time; the environment forces the
  // others (those the machine lacks fall back), so each is held to the reference.
  Params p = seed_params(45);
  auto init = random_state<float>(45, 21);
  Params ps = p;
  ps.scheme = Scheme::stam;
  const auto want = run_ref(p, init, 2);
  const auto want_stam = run_ref(ps, init, 2);
  for (const char* isa : {"avx512", "avx2", "generic"})
    for (const char* adv : {"gather", "scalar"})
      for (const char* dv : {"", "divide"}) {
        const std::string name = std::string(isa) + "/" + adv + "/" + dv;
        CAPTURE(name);
        setenv("NUMPIPE_FLUID_CPU_ISA", isa, 1);
        setenv("NUMPIPE_FLUID_CPU_ADVECT", adv, 1);
        setenv("NUMPIPE_FLUID_CPU_DIV", dv, 1);
        check_same(run_cpu(p, init, 2, 2), want);
        check_same(run_cpu(ps, init, 2, 3), want_stam);
      }
  unsetenv("NUMPIPE_FLUID_CPU_ISA");
  unsetenv("NUMPIPE_FLUID_CPU_ADVECT");
  unsetenv("NUMPIPE_FLUID_CPU_DIV");
}

TEST_CASE("fluid: the same bits for 1, 2 and 4 threads") {
  for (Scheme s : {Scheme::seed, Scheme::stam}) {
    Params p = seed_params(130);
    p.scheme = s;
    Fields<float> init(130);
    auto a = run_cpu(p, init, 6, 1);
    check_same(a, run_cpu(p, init, 6, 2));
    check_same(a, run_cpu(p, init, 6, 4));
    CHECK(l2(a.d) > 0);  // react injected something
  }
}

TEST_CASE("fluid: one pass of all 20 iterations (one thread) equals strips of a few (three threads)") {
  Params p = seed_params(300);
  auto init = random_state<float>(300, 8);
  check_same(run_cpu(p, init, 2, 1), run_cpu(p, init, 2, 3));
}

TEST_CASE("fluid: blocks of columns (a small window) give the same bits") {
  Params p = seed_params(300);
  auto init = random_state<float>(300, 9);
  auto whole = run_cpu(p, init, 2, 2);
  setenv("NUMPIPE_FLUID_CPU_WINDOW", "16384", 1);  // 64-column blocks
  auto blocked = run_cpu(p, init, 2, 3);
  Params p77 = seed_params(77);
  auto blocked64 = run_cpu(p77, random_state<double>(77, 2), 2, 2);
  unsetenv("NUMPIPE_FLUID_CPU_WINDOW");
  check_same(whole, blocked);
  check_same(blocked64, run_ref(p77, random_state<double>(77, 2), 2));
}

TEST_CASE("fluid: the wavefront's traversal knobs (step groups, block cuts and counts, trapezoids, prefetch, unaligned kernel) keep the bits") {
  // Only the order of traversal changes with these; every cell must be computed by
  // the same operations, so each setting equals the reference.
  Params p = seed_params(203);
  auto init = random_state<float>(203, 4);
  const auto want = run_ref(p, init, 3);
  struct Knob {
    const char* name;
    const char* value;
  };
  setenv("NUMPIPE_FLUID_CPU_WINDOW", "16384", 1);  // several column blocks at N=203
  for (Knob k : {Knob{"NUMPIPE_FLUID_CPU_GROUP", "1"}, Knob{"NUMPIPE_FLUID_CPU_GROUP", "3"},
                 Knob{"NUMPIPE_FLUID_CPU_GROUP", "8"}, Knob{"NUMPIPE_FLUID_CPU_BALANCE", "0"},
                 Knob{"NUMPIPE_FLUID_CPU_TRAPEZOID", "0"}, Knob{"NUMPIPE_FLUID_CPU_PREFETCH", "0"},
                 Knob{"NUMPIPE_FLUID_CPU_ALIGNED", "0"}, Knob{"NUMPIPE_FLUID_CPU_BLOCKS", "3"}}) {
    CAPTURE(k.name);
    CAPTURE(k.value);
    setenv(k.name, k.value, 1);
    check_same(run_cpu(p, init, 3, 3), want);
    unsetenv(k.name);
  }
  unsetenv("NUMPIPE_FLUID_CPU_WINDOW");
}

TEST_CASE("fluid: the diffusion solves of one step share a pass (blocks of all three dealt together)") {
  // N=500 on 2 threads: blocks of 251 rows fuse all 20 iterations into one pass,
  // so the three (seed) or two (stam) diffusion solves run as one set of blocks;
  // react's density maximum must come from the density solve's blocks.
  for (Scheme s : {Scheme::seed, Scheme::stam}) {
    Params p = seed_params(500);
    p.scheme = s;
    auto init = random_state<float>(500, 12);
    CAPTURE(static_cast<int>(s));
    check_same(run_cpu(p, init, 2, 2), run_ref(p, init, 2));
  }
  Params p = seed_params(500);
  Fields<float> react(500);  // all zero: react injects, then decides by the maxima
  check_same(run_cpu(p, react, 3, 2), run_ref(p, react, 3));
}

TEST_CASE("fluid: a run split in two equals one run") {
  Params p = seed_params(96);
  Fields<float> init(96);
  auto whole = run_cpu(p, init, 8, 2);
  auto half = run_cpu(p, init, 4, 2);
  check_same(whole, run_cpu(p, half, 4, 2));
}

TEST_CASE("fluid: the react scene stays symmetric under swapping x with y and u with v") {
  for (Scheme s : {Scheme::seed, Scheme::stam}) {
    const int n = 128;
    Params p = seed_params(n);
    p.scheme = s;
    auto f = run_cpu(p, Fields<float>(n), 10, 2);
    const int w = n + 2;
    double worst = 0, scale = 0;
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i) {
        worst = std::max(worst, std::fabs(double(f.d[ix(i, j, w)]) - f.d[ix(j, i, w)]));
        worst = std::max(worst, std::fabs(double(f.u[ix(i, j, w)]) - f.v[ix(j, i, w)]));
        scale = std::max({scale, std::fabs(double(f.d[ix(i, j, w)])), std::fabs(double(f.u[ix(i, j, w)]))});
      }
    CHECK(scale > 0);
    // Red-black ordering is symmetric under the transpose ((x+y) parity is), so
    // only rounding of sums in another order separates the two halves.
    CHECK(worst <= 1e-4 * scale);
  }
}

TEST_CASE("fluid: projection reduces the divergence as 20 iterations should") {
  const int n = 64, w = n + 2;
  Fields<double> f(n);
  for (int j = 1; j <= n; ++j)
    for (int i = 1; i <= n; ++i) {
      const double x = (i - 0.5) / n, y = (j - 0.5) / n;
      f.u[ix(i, j, w)] = 0.1 * std::sin(6 * M_PI * x) * std::sin(2 * M_PI * y);
      f.v[ix(i, j, w)] = 0.1 * std::sin(4 * M_PI * x) * std::sin(6 * M_PI * y);
    }
  const double before = diagnose(f).max_divergence;
  // A stam step with dt = 0 and no viscosity is add_source (zero), diffuse
  // (a = 0: a copy), project, advect (the identity at dt = 0), project.
  auto after = [&](int iters) {
    Params p;
    p.n = n;
    p.dt = 0;
    p.scheme = Scheme::stam;
    p.forcing = Forcing::none;
    p.iters = iters;
    return diagnose(run_cpu(p, f, 1, 2)).max_divergence;
  };
  // Gauss-Seidel damps the smooth error modes slowly: measured 3.31 before,
  // 0.70 after 2x20 iterations, 0.16 after 2x40, 0.038 after 2x100.
  const double a20 = after(20), a40 = after(40), a100 = after(100);
  CHECK(a20 < 0.3 * before);
  CHECK(a40 < 0.5 * a20);
  CHECK(a100 < 0.5 * a40);
}

TEST_CASE("fluid: diffusion with closed walls and no sources conserves density within rounding") {
  const int n = 80;
  Params p;
  p.n = n;
  p.dt = 0.1;
  p.diff = 0.001;
  p.forcing = Forcing::none;
  for (Scheme s : {Scheme::seed, Scheme::stam}) {
    p.scheme = s;
    Fields<double> f(n);
    numpipe::Rng rng(5);
    const int w = n + 2;
    for (int j = 1; j <= n; ++j)
      for (int i = 1; i <= n; ++i) f.d[ix(i, j, w)] = rng.uniform();
    const double before = diagnose(f).total_density;
    // No velocity: advection is the identity, only diffusion acts on d. The
    // Neumann walls make Gauss-Seidel conserve the sum only at convergence,
    // so allow what 20 iterations leave.
    auto out = run_cpu(p, f, 5, 2);
    const double after = diagnose(out).total_density;
    CHECK(std::fabs(after - before) <= 1e-3 * before);
    CHECK(after > 0);
  }
}

TEST_CASE("fluid: react injects on the first step only while the sources stay small") {
  Params p = seed_params(128);
  reference::Ref<float> r(p);
  Fields<float> f(128);
  r.step(f);
  CHECK(r.counters.velocity_injections == 1);
  CHECK(r.counters.density_injections == 1);
  auto s = make_cpu_solver<float>(p, Fields<float>(128));
  s->advance(3);
  auto c = s->counters();
  CHECK(c.steps == 3);
  CHECK(c.velocity_injections >= 1);
  CHECK(c.density_injections >= 1);
}
