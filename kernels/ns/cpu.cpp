// ns-step, CPU backend (OpenMP): the reference. Every point's update depends only
// on its stencil, and the diagnostics are summed per (i, j) line and then in a fixed
// order, so the result is the same bits for any thread count.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cpu_impl.hpp"
#include "ns.hpp"

namespace numpipe::ns {
namespace {

template <class T>
struct Fields {
  std::array<std::vector<T>, kVars> v;
  explicit Fields(std::size_t n) {
    for (auto& x : v) x.assign(n, T(0));
  }
  std::array<T*, kVars> ptr() { return {v[0].data(), v[1].data(), v[2].data(), v[3].data()}; }
};

template <class T>
Result run(const Problem& pr, const RunOptions& o) {
  const Params& p = pr.params;
  const Geometry g = make_geometry(p);
  const std::size_t padded = static_cast<std::size_t>(g.padded());
  Fields<T> a(padded), b(padded), q(padded);
  // Load the interior; velocity components pinned at walls are held at zero.
  for (int v = 0; v < kVars; ++v) {
    const double* src = pr.fields[v].data();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < g.n[0]; ++i)
      for (int j = 0; j < g.n[1]; ++j)
        for (int k = 0; k < g.n[2]; ++k) {
          const std::size_t s = (static_cast<std::size_t>(i) * g.n[1] + j) * g.n[2] + k;
          a.v[v][g.at(i, j, k)] = pinned_point(g, i, j, k, v) ? T(0) : T(src[s]);
        }
  }
  const std::vector<double> kold = kolmogorov_table(g, p);
  const std::vector<T> kol(kold.begin(), kold.end());
  const Coefs<T> cf = make_coefs<T>(g, o.order, p.c, p.re, p.force, p.kol_amp);

  Result r;
  r.t = pr.t0;
  r.step = pr.step0;
  Fields<T>* cur = &a;
  Fields<T>* nxt = &b;

  auto diagnose = [&](double& max_speed) {
    auto t0 = std::chrono::steady_clock::now();
    auto f = cur->ptr();
    cpu::fill_ghosts<T>(g, f.data());
    r.diag.push_back(cpu::diagnostics<T>(g, p, o.order, f.data(), r.step, r.t, &max_speed));
    r.diag_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double max_speed = 0;
  diagnose(max_speed);
  r.stable_dt = stable_dt(g, o.order, max_speed, p.c, p.re);

  for (int s = 0; s < o.steps; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    if (o.dt <= 0 && s > 0) max_speed = cpu::max_speed<T>(g, cur->ptr().data());
    const double dt = choose_dt(g, p, o, max_speed);
    for (int stage = 0; stage < 3; ++stage) {
      auto fin = cur->ptr(), fout = nxt->ptr(), fq = q.ptr();
      cpu::fill_ghosts<T>(g, fin.data());
      cpu::substep<T>(g, cf, o.order, stage, T(dt), kol.data(), fin.data(), fout.data(), fq.data());
      std::swap(cur, nxt);
    }
    r.t += dt;
    r.step += 1;
    r.dt_last = dt;
    r.max_dt = std::max(r.max_dt, dt);
    r.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    const bool last = s + 1 == o.steps;
    if (last || (o.diag_every > 0 && (s + 1) % o.diag_every == 0)) diagnose(max_speed);
  }
  for (int v = 0; v < kVars; ++v) {
    r.fields[v].resize(static_cast<std::size_t>(g.points()));
    const T* src = cur->v[v].data();
    double* dst = r.fields[v].data();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < g.n[0]; ++i)
      for (int j = 0; j < g.n[1]; ++j)
        for (int k = 0; k < g.n[2]; ++k)
          dst[(static_cast<std::size_t>(i) * g.n[1] + j) * g.n[2] + k] = double(src[g.at(i, j, k)]);
  }
  return r;
}

}  // namespace

Result solve_cpu(const Problem& pr, const RunOptions& o) {
  validate(pr, o);
  return o.fp32 ? run<float>(pr, o) : run<double>(pr, o);
}

}  // namespace numpipe::ns
