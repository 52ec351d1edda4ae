// ns-step, CPU backend (OpenMP): the reference. Every point's update depends only
// on its stencil, and the diagnostics are summed per (i, j) line and then in a fixed
// order, so the result is the same bits for any thread count.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/progress.hpp"
#include "common/parallel.hpp"
#include "cpu_impl.hpp"
#include "decomp.hpp"
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

// The RK3 time loop of one process and of an MPI rank alike: `substep(in, out, q,
// stage, dt)` fills the ghosts and updates the block (under MPI with the halo
// exchange), `global_max` combines max |v| over the ranks for the CFL step, and
// `diagnose()` appends a diagnostics row at the steps --diag-every names.
template <class T, class Substep, class GlobalMax, class Diagnose>
void advance(const Geometry& g, const Params& p, const RunOptions& o, Fields<T>*& cur, Fields<T>*& nxt, Fields<T>& q,
             double max_speed, Result& r, Substep&& substep, GlobalMax&& global_max, Diagnose&& diagnose) {
  for (int s = 0; s < o.steps; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    if (o.dt <= 0 && s > 0) max_speed = global_max(cpu::max_speed<T>(g, cur->ptr().data()));
    const double dt = choose_dt(g, p, o, max_speed);
    for (int stage = 0; stage < 3; ++stage) {
      auto fin = cur->ptr(), fout = nxt->ptr(), fq = q.ptr();
      substep(fin.data(), fout.data(), fq.data(), stage, T(dt));
      std::swap(cur, nxt);
    }
    r.t += dt;
    r.step += 1;
    r.dt_last = dt;
    r.max_dt = std::max(r.max_dt, dt);
    r.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (auto* progress = active_progress()) progress->update(static_cast<std::uint64_t>(s + 1));
    const bool last = s + 1 == o.steps;
    if (last || (o.diag_every > 0 && (s + 1) % o.diag_every == 0)) diagnose();
  }
}

// Loads block g's interior (the whole grid in one process) from the problem's
// global fields; velocity components pinned at walls are held at zero.
template <class T>
void load_block(const Problem& pr, const Geometry& g, Fields<T>& f) {
  for (int v = 0; v < kVars; ++v) {
    const double* src = pr.fields[v].data();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < g.n[0]; ++i)
      for (int j = 0; j < g.n[1]; ++j)
        for (int k = 0; k < g.n[2]; ++k)
          f.v[v][g.at(i, j, k)] = pinned_point(g, i, j, k, v) ? T(0) : T(src[global_index(pr.params, g, i, j, k)]);
  }
}

template <class T>
Result run(const Problem& pr, const RunOptions& o) {
  const Params& p = pr.params;
  const Geometry g = make_geometry(p);
  const std::size_t padded = static_cast<std::size_t>(g.padded());
  Fields<T> a(padded), b(padded), q(padded);
  load_block<T>(pr, g, a);
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

  auto substep = [&](T* const* in, T* const* out, T* const* qq, int stage, T dt) {
    cpu::fill_ghosts<T>(g, in);
    cpu::substep<T>(g, cf, o.order, stage, dt, kol.data(), in, out, qq);
  };
  advance<T>(g, p, o, cur, nxt, q, max_speed, r, substep, [](double v) { return v; }, [&] { diagnose(max_speed); });
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


// ---- under MPI: one block per rank of a 3-D Cartesian decomposition -------------
// (decomp.hpp). Before every RK sub-step the two ghost layers of each halo face are
// exchanged (every face's messages posted at once; with overlap, the default, the
// block's inner part is updated meanwhile), and wall or single-rank periodic faces
// are filled by the boundary rules as in one process. Every point's update reads the same
// values as in one process, so the fields are the same bits. Diagnostics: the
// blocks are gathered to rank 0, which computes the row on the whole grid with the
// one-process code (the same fixed summation order).

// Pack (the two interior layers next to `side` of `axis`) or unpack (the two ghost
// layers beyond it) one halo face, in model.hpp's face layout, as on the GPU.
template <class T>
void copy_face(const Geometry& g, T* const* f, int axis, int side, bool unpack, T* buf) {
  const long long count = face_values(g, axis);
#pragma omp parallel for schedule(static)
  for (long long e = 0; e < count; ++e) {
    int v;
    const long long at = face_point(g, axis, side, unpack, e, &v);
    if (unpack) f[v][at] = buf[e];
    else buf[e] = f[v][at];
  }
}

template <class T>
Result run_mpi(const Problem& pr, const RunOptions& o) {
  const Params& p = pr.params;
  par::Group& world = par::world();
  const Decomposition d = decompose(p, o);
  par::Cart3& cart = *d.cart;
  const Geometry& full = d.whole;
  const Geometry& g = d.block;
  const std::size_t padded = static_cast<std::size_t>(g.padded());
  Fields<T> a(padded), b(padded), q(padded);
  load_block<T>(pr, g, a);
  const std::vector<double> kold = kolmogorov_table(g, p);
  const std::vector<T> kol(kold.begin(), kold.end());
  const Coefs<T> cf = make_coefs<T>(g, o.order, p.c, p.re, p.force, p.kol_amp);
  // the halo faces and their buffers; the inner box and the shell (overlap_boxes)
  struct HaloFace {
    int axis, side;
    std::vector<T> send, recv;
  };
  std::vector<HaloFace> faces;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side)
      if ((side == 0 ? g.lo[axis] : g.hi[axis]) == Face::halo) {
        const std::size_t count = static_cast<std::size_t>(face_values(g, axis));
        faces.push_back({axis, side, std::vector<T>(count), std::vector<T>(count)});
      }
  std::vector<par::Cart3::Face> msgs;
  for (HaloFace& f : faces) msgs.push_back({f.axis, f.side, f.send.data(), f.recv.data(), f.send.size() * sizeof(T)});
  Box inner, shell[6];
  const int nshell = overlap_boxes(g, inner, shell);

  Result r;
  r.t = pr.t0;
  r.step = pr.step0;
  r.halo_path = "host";
  Fields<T>* cur = &a;
  Fields<T>* nxt = &b;

  // Rank 0: the whole grid's interior values of the current state (C order).
  auto gather_state = [&]() {
    std::vector<T> mine(static_cast<std::size_t>(g.points()) * kVars);
    std::size_t at = 0;
    for (int v = 0; v < kVars; ++v)
      for (int i = 0; i < g.n[0]; ++i)
        for (int j = 0; j < g.n[1]; ++j)
          for (int k = 0; k < g.n[2]; ++k) mine[at++] = cur->v[v][g.at(i, j, k)];
    return gather_blocks<T>(p, d, mine);
  };
  // Diagnostics on rank 0 from the gathered state, by the one-process code.
  auto diagnose = [&]() {
    auto t0 = std::chrono::steady_clock::now();
    std::array<std::vector<T>, kVars> all = gather_state();
    double speed = 0;
    if (world.is_root()) {
      Fields<T> whole(static_cast<std::size_t>(full.padded()));
      for (int v = 0; v < kVars; ++v)
        for (int i = 0; i < full.n[0]; ++i)
          for (int j = 0; j < full.n[1]; ++j)
            for (int k = 0; k < full.n[2]; ++k)
              whole.v[v][full.at(i, j, k)] = all[v][(static_cast<std::size_t>(i) * full.n[1] + j) * full.n[2] + k];
      auto f = whole.ptr();
      cpu::fill_ghosts<T>(full, f.data());
      r.diag.push_back(cpu::diagnostics<T>(full, p, o.order, f.data(), r.step, r.t, &speed));
    }
    r.diag_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return speed;
  };
  // the one-process run takes the first step's max |v| from its diagnostics: rank 0's value
  double max_speed = par::max_all(diagnose());
  r.stable_dt = stable_dt(g, o.order, max_speed, p.c, p.re);

  // a sub-step: boundary-rule ghosts, faces packed and posted, the inner box (which
  // reads no halo ghost) updated while they travel, then the halos and the shell
  auto substep = [&](T* const* in, T* const* out, T* const* qq, int stage, T dt) {
    cpu::fill_ghosts<T>(g, in);
    for (HaloFace& f : faces) copy_face<T>(g, in, f.axis, f.side, false, f.send.data());
    cart.start_exchange(msgs);
    if (o.overlap) cpu::substep<T>(g, cf, o.order, stage, dt, kol.data(), in, out, qq, &inner);
    cart.finish_exchange();
    for (HaloFace& f : faces) copy_face<T>(g, in, f.axis, f.side, true, f.recv.data());
    if (o.overlap)
      for (int b = 0; b < nshell; ++b) cpu::substep<T>(g, cf, o.order, stage, dt, kol.data(), in, out, qq, &shell[b]);
    else
      cpu::substep<T>(g, cf, o.order, stage, dt, kol.data(), in, out, qq);
  };
  advance<T>(g, p, o, cur, nxt, q, max_speed, r, substep, [](double v) { return par::max_all(v); }, [&] { diagnose(); });
  auto t0 = std::chrono::steady_clock::now();
  std::array<std::vector<T>, kVars> all = gather_state();
  if (world.is_root())
    for (int v = 0; v < kVars; ++v) r.fields[v].assign(all[v].begin(), all[v].end());
  r.download_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

Result solve_cpu(const Problem& pr, const RunOptions& o) {
  validate(pr, o);
  if (par::world().distributed()) return o.fp32 ? run_mpi<float>(pr, o) : run_mpi<double>(pr, o);
  return o.fp32 ? run<float>(pr, o) : run<double>(pr, o);
}

}  // namespace numpipe::ns
