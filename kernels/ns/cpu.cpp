// ns-step, CPU backend (OpenMP): the reference. Every point's update depends only
// on its stencil, and the diagnostics are summed per (i, j) line and then in a fixed
// order, so the result is the same bits for any thread count.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "bodies.hpp"
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

// Loads block g's interior (the whole grid in one process) from the problem's
// global fields; velocity components pinned at walls or inside bodies are held at zero.
template <class T>
void load_block(const Problem& pr, const Geometry& g, const IbTables<T>& ib, Fields<T>& f) {
  for (int v = 0; v < kVars; ++v) {
    const double* src = pr.fields[v].data();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < g.n[0]; ++i)
      for (int j = 0; j < g.n[1]; ++j)
        for (int k = 0; k < g.n[2]; ++k)
          f.v[v][g.at(i, j, k)] = pinned_point(g, i, j, k, v) ? T(0) : T(src[global_index(pr.params, g, i, j, k)]);
  }
  for (int i = 0; i < g.n[0]; ++i)
    for (int j = 0; j < g.n[1]; ++j) {
      const int r = i * g.n[1] + j;
      for (int e = ib.row_start[r]; e < ib.row_start[r + 1]; ++e)
        if (ib.entries[e].point < 0)
          for (int k = ib.entries[e].k0; k < ib.entries[e].k1; ++k)
            for (int v = kVx; v < kVars; ++v) f.v[v][g.at(i, j, k)] = T(0);
    }
}

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

// One run: the whole grid in one process, or under MPI this rank's block of a 3-D
// Cartesian decomposition (decomp.hpp). Before every RK sub-step the two ghost layers
// of each halo face are exchanged (every face's messages posted at once; with overlap,
// the default, the block's inner part is updated meanwhile), and wall or single-rank
// periodic faces are filled by the boundary rules as in one process. Every point's
// update reads the same values as in one process, so the fields are the same bits.
// Diagnostics: the blocks are gathered to rank 0, which computes the row on the whole
// grid with the one-process code (the same fixed summation order); forces: every
// crossing's contribution goes to rank 0, which sums them in the global order.
template <class T>
class CpuRun final : public Solver {
 public:
  CpuRun(const Problem& pr, const RunOptions& o, std::unique_ptr<Decomposition> d)
      : pr_(pr), p_(pr.params), o_(o), own_(std::move(d)), d_(own_.get()), g_(d_ ? d_->block : make_geometry(pr.params)),
        a_(static_cast<std::size_t>(g_.padded())), b_(a_.v[0].size()), q_(a_.v[0].size()) {
    ib_ = build_ib_tables<T>(p_, pr.bodies, g_);
    load_block<T>(pr, g_, ib_, a_);
    const std::vector<double> kold = kolmogorov_table(g_, p_);
    kol_.assign(kold.begin(), kold.end());
    const auto sp = sponge_tables(p_, g_);
    for (int a = 0; a < 3; ++a) sigma_[a].assign(sp[a].begin(), sp[a].end());
    cf_ = make_coefs<T>(g_, o.order, p_.c, p_.re, p_.force, p_.kol_amp);
    if (p_.free_stream) {
      cf_.sponge = true;
      for (int c = 0; c < 3; ++c) cf_.target[kVx + c] = T(p_.stream[c]);
    }
    tb_.kol = kol_.data();
    for (int a = 0; a < 3; ++a) tb_.sigma[a] = sigma_[a].data();
    if (pr.bodies.any()) {
      tb_.row_start = ib_.row_start.data();
      tb_.entries = ib_.entries.data();
      tb_.points = ib_.points.data();
    }
    if (d_) setup_halos();
    // the first diagnostics row and the stability estimate, at the input state
    r_.t = pr_.t0;
    r_.step = pr_.step0;
    if (d_) r_.halo_path = "host";
    cur_ = &a_;
    nxt_ = &b_;
    max_speed_ = diagnose(r_);
    if (d_) max_speed_ = par::max_all(max_speed_);  // the one-process run's first max |v|: rank 0's
    r_.stable_dt = stable_dt(g_, o_.order, max_speed_, p_.c, p_.re);
  }

  double next_dt() override {
    if (o_.dt <= 0 && steps_ > 0) {
      max_speed_ = cpu::max_speed<T>(g_, cur_->ptr().data());
      if (d_) max_speed_ = par::max_all(max_speed_);
    }
    return choose_dt(g_, p_, o_, max_speed_);
  }

  void step(double dt) override {
    auto t0 = std::chrono::steady_clock::now();
    for (int stage = 0; stage < 3; ++stage) {
      auto fin = cur_->ptr(), fout = nxt_->ptr(), fq = q_.ptr();
      substep(fin.data(), fout.data(), fq.data(), stage, T(dt));
      std::swap(cur_, nxt_);
    }
    ++steps_;
    r_.dt_last = dt;
    r_.max_dt = std::max(r_.max_dt, dt);
    r_.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  void diagnose(long long step, double t) override {
    r_.step = step;
    r_.t = t;
    const double m = diagnose(r_);
    if (!d_) max_speed_ = m;
  }

  const BlockFields& snapshot(long long step, double t) override {
    r_.step = step;
    r_.t = t;
    snapshot(r_);
    return snap_;
  }

  Result finish(long long step, double t) override {
    Result& r = r_;
    r.step = step;
    r.t = t;
    // The other register sets go before the result is allocated (the peak stays at
    // three sets, docs/ns.md "Memory").
    for (int v = 0; v < kVars; ++v) {
      std::vector<T>().swap(nxt_->v[v]);
      std::vector<T>().swap(q_.v[v]);
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int v = 0; v < kVars; ++v) {
      r.fields[v].resize(static_cast<std::size_t>(g_.points()));
      const T* src = cur_->v[v].data();
      double* dst = r.fields[v].data();
#pragma omp parallel for schedule(static)
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k)
            dst[(static_cast<std::size_t>(i) * g_.n[1] + j) * g_.n[2] + k] = double(src[g_.at(i, j, k)]);
    }
    for (int a = 0; a < 3; ++a) {
      r.block_offset[a] = g_.offset[a];
      r.block_n[a] = g_.n[a];
    }
    r.download_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::move(r_);
  }

 private:
  struct HaloFace {
    int axis, side;
    std::vector<T> send, recv;
  };

  void setup_halos() {
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side)
        if ((side == 0 ? g_.lo[axis] : g_.hi[axis]) == Face::halo) {
          const std::size_t count = static_cast<std::size_t>(face_values(g_, axis));
          faces_.push_back({axis, side, std::vector<T>(count), std::vector<T>(count)});
        }
    for (HaloFace& f : faces_) msgs_.push_back({f.axis, f.side, f.send.data(), f.recv.data(), f.send.size() * sizeof(T)});
    Box shell[6];
    nshell_ = overlap_boxes(g_, inner_, shell);
    std::copy(shell, shell + nshell_, shell_);
  }

  // Ghost layers of f: the boundary rules, and under MPI the halo faces.
  void fill(T* const* f) {
    cpu::fill_ghosts<T>(g_, f);
    if (!d_) return;
    for (HaloFace& h : faces_) copy_face<T>(g_, f, h.axis, h.side, false, h.send.data());
    d_->cart->exchange(msgs_);
    for (HaloFace& h : faces_) copy_face<T>(g_, f, h.axis, h.side, true, h.recv.data());
  }

  // a sub-step: boundary-rule ghosts, faces packed and posted, the inner box (which
  // reads no halo ghost) updated while they travel, then the halos and the shell
  void substep(T* const* in, T* const* out, T* const* qq, int stage, T dt) {
    cpu::fill_ghosts<T>(g_, in);
    if (!d_) {
      cpu::substep<T>(g_, cf_, o_.order, stage, dt, tb_, in, out, qq);
      return;
    }
    for (HaloFace& f : faces_) copy_face<T>(g_, in, f.axis, f.side, false, f.send.data());
    d_->cart->start_exchange(msgs_);
    if (o_.overlap) cpu::substep<T>(g_, cf_, o_.order, stage, dt, tb_, in, out, qq, &inner_);
    d_->cart->finish_exchange();
    for (HaloFace& f : faces_) copy_face<T>(g_, in, f.axis, f.side, true, f.recv.data());
    if (o_.overlap)
      for (int b = 0; b < nshell_; ++b) cpu::substep<T>(g_, cf_, o_.order, stage, dt, tb_, in, out, qq, &shell_[b]);
    else
      cpu::substep<T>(g_, cf_, o_.order, stage, dt, tb_, in, out, qq);
  }

  // A diagnostics row (rank 0) and the forces on the bodies; returns max |v| (in one
  // process; under MPI rank 0's, 0 elsewhere).
  double diagnose(Result& r) {
    auto t0 = std::chrono::steady_clock::now();
    double speed = 0;
    auto f = cur_->ptr();
    if (!d_) {
      cpu::fill_ghosts<T>(g_, f.data());
      r.diag.push_back(cpu::diagnostics<T>(g_, p_, o_.order, f.data(), r.step, r.t, &speed));
    } else {
      speed = diagnose_distributed(r);
    }
    if (pr_.bodies.any()) {
      if (d_ && !lines_whole(*d_)) fill(f.data());  // (with whole lines the diagnostics filled them)
      forces(r, f.data());
    }
    r.diag_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return speed;
  }

  // Every rank computes its lines' terms (halos exchanged), rank 0 sums them in the
  // one-process order; with z split (lines across blocks, --dims only), rank 0
  // computes the row on the whole grid (gathered) with the one-process code.
  double diagnose_distributed(Result& r) {
    if (lines_whole(*d_)) {
      auto f = cur_->ptr();
      fill(f.data());
      LineTerms mine;
      cpu::line_terms<T>(g_, o_.order, f.data(), mine.sums, mine.mdiv, mine.msp);
      LineTerms all = gather_lines(p_, *d_, mine);
      if (!par::world().is_root()) return 0;
      r.diag.push_back(finish_diagnostics(d_->whole, p_, r.step, r.t, all.sums, all.mdiv, all.msp));
      double m = 0;
      for (double x : all.msp) m = std::max(m, x);
      return m;
    }
    std::vector<T> mine(static_cast<std::size_t>(g_.points()) * kVars);
    std::size_t at = 0;
    for (int v = 0; v < kVars; ++v)
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k) mine[at++] = cur_->v[v][g_.at(i, j, k)];
    std::array<std::vector<T>, kVars> all = gather_blocks<T>(p_, *d_, mine);
    if (!par::world().is_root()) return 0;
    const Geometry& full = d_->whole;
    Fields<T> whole(static_cast<std::size_t>(full.padded()));
    for (int v = 0; v < kVars; ++v)
      for (int i = 0; i < full.n[0]; ++i)
        for (int j = 0; j < full.n[1]; ++j)
          for (int k = 0; k < full.n[2]; ++k)
            whole.v[v][full.at(i, j, k)] = all[v][(static_cast<std::size_t>(i) * full.n[1] + j) * full.n[2] + k];
    auto wf = whole.ptr();
    cpu::fill_ghosts<T>(full, wf.data());
    double speed = 0;
    r.diag.push_back(cpu::diagnostics<T>(full, p_, o_.order, wf.data(), r.step, r.t, &speed));
    return speed;
  }

  // Every crossing's contribution (model.hpp crossing_force), summed per body in the
  // global crossing order on rank 0.
  void forces(Result& r, const T* const* f) {
    std::vector<ForcePart> parts(ib_.crossings.size());
    const double c2 = p_.c * p_.c, nu = 1.0 / p_.re;
#pragma omp parallel for schedule(static)
    for (std::size_t x = 0; x < parts.size(); ++x) {
      const Crossing& c = ib_.crossings[x];
      parts[x].key = c.key;
      parts[x].body = c.body;
      parts[x].pad = 0;
      crossing_force<T>(g_, f, c, c2, nu, parts[x].f);
    }
    ForceRow row;
    if (sum_force_parts(std::move(parts), d_ != nullptr, pr_.bodies.list.size(), r.t, row)) r.forces.push_back(std::move(row));
  }

  // Snapshot fields of the block into snap_ (every rank).
  void snapshot(const Result& r) {
    auto f = cur_->ptr();
    const std::size_t n = static_cast<std::size_t>(g_.points());
    std::vector<std::vector<T>>& store = snap_store_;
    store.clear();
    BlockFields& bf = snap_;
    bf = snapshot_of(g_, r.step, r.t, sizeof(T) == 4);
    std::vector<int> derived;
    for (const std::string& name : o_.snapshot_fields) {
      int var = -1;
      for (int v = 0; v < kVars; ++v)
        if (name == kVarNames[v]) var = v;
      if (var >= 0) {
        store.emplace_back(n);
        T* dst = store.back().data();
#pragma omp parallel for schedule(static)
        for (int i = 0; i < g_.n[0]; ++i)
          for (int j = 0; j < g_.n[1]; ++j)
            for (int k = 0; k < g_.n[2]; ++k)
              dst[(static_cast<std::size_t>(i) * g_.n[1] + j) * g_.n[2] + k] = f[var][g_.at(i, j, k)];
      } else {
        for (int dv = 0; dv < kDerivedCount; ++dv)
          if (name == kDerivedNames[dv]) derived.push_back(dv);
        store.emplace_back();
      }
    }
    if (!derived.empty()) {
      fill(f.data());
      std::vector<std::vector<T>> dfields(kDerivedCount);
      for (int dv : derived) dfields[static_cast<std::size_t>(dv)].assign(n, T(0));
      double d1s[3];
      for (int a = 0; a < 3; ++a) d1s[a] = o_.order == 4 ? 1.0 / (12.0 * g_.h[a]) : 1.0 / (2.0 * g_.h[a]);
#pragma omp parallel for collapse(2) schedule(static)
      for (int i = 0; i < g_.n[0]; ++i)
        for (int j = 0; j < g_.n[1]; ++j)
          for (int k = 0; k < g_.n[2]; ++k) {
            const int what = tb_.row_start ? ib_lookup(tb_.row_start, tb_.entries, i * g_.n[1] + j, k) : kIbFluid;
            double out[kDerivedCount] = {0, 0, 0, 0, 0};
            if (what != kIbSolid) {
              PointStencil<T> p;
              cpu::gather(g_, f.data(), g_.at(i, j, k), p);
              if (what >= 0) apply_ib(p, tb_.points[what]);
              if (o_.order == 4) derived_point<4>(p, d1s, out);
              else derived_point<2>(p, d1s, out);
            }
            const std::size_t at = (static_cast<std::size_t>(i) * g_.n[1] + j) * g_.n[2] + k;
            for (int dv = 0; dv < kDerivedCount; ++dv)
              if (!dfields[static_cast<std::size_t>(dv)].empty()) dfields[static_cast<std::size_t>(dv)][at] = T(out[dv]);
          }
      for (std::size_t s = 0; s < o_.snapshot_fields.size(); ++s)
        for (int dv = 0; dv < kDerivedCount; ++dv)
          if (o_.snapshot_fields[s] == kDerivedNames[dv]) store[s] = dfields[static_cast<std::size_t>(dv)];
    }
    for (std::size_t s = 0; s < o_.snapshot_fields.size(); ++s) {
      bf.names.push_back(o_.snapshot_fields[s]);
      bf.data.push_back(store[s].data());
    }
  }

  const Problem& pr_;
  const Params& p_;
  RunOptions o_;
  std::unique_ptr<Decomposition> own_;
  const Decomposition* d_;
  Geometry g_;
  Fields<T> a_, b_, q_;
  Fields<T>*cur_ = nullptr, *nxt_ = nullptr;
  IbTables<T> ib_;
  std::vector<T> kol_, sigma_[3];
  Coefs<T> cf_{};
  cpu::StepTables<T> tb_{};
  std::vector<HaloFace> faces_;
  std::vector<par::Cart3::Face> msgs_;
  Box inner_{}, shell_[6]{};
  int nshell_ = 0;
  Result r_;
  long long steps_ = 0;  // steps taken
  double max_speed_ = 0;  // max |v| of the state the next dt is chosen from
  BlockFields snap_;
  std::vector<std::vector<T>> snap_store_;
};

template <class T>
std::unique_ptr<Solver> make_cpu_run(const Problem& pr, const RunOptions& o, std::unique_ptr<Decomposition> d) {
  return std::make_unique<CpuRun<T>>(pr, o, std::move(d));
}

}  // namespace

std::unique_ptr<Solver> make_cpu_solver(const Problem& pr, const RunOptions& o) {
  return make_run(pr, o, &make_cpu_run<float>, &make_cpu_run<double>);
}

Result solve_cpu(const Problem& pr, const RunOptions& o) {
  const std::unique_ptr<Solver> solver = make_cpu_solver(pr, o);
  return run(*solver, pr, o);
}

}  // namespace numpipe::ns
