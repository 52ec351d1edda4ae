// mle-fit, CPU backend (OpenMP): the reference. Work is split into tasks of
// one series and one chunk of `refresh` windows (one window with --exact);
// each task starts from a full recompute and then updates its sums
// incrementally, so the result does not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "common/progress.hpp"
#include "common/error.hpp"
#include "common/strings.hpp"
#include "detail/backends.hpp"
#include "mle.hpp"
#include "model.hpp"

namespace numpipe::mle {

namespace {

double parse_number(const std::string& item, const std::string& whole) {
  if (item.empty()) fail_input("--alpha-grid: '" + item + "' is not a number in '" + whole + "'");
  return decimal_number(item, "--alpha-grid");
}
}  // namespace

Grid parse_grid(const std::string& text) {
  Grid g;
  if (text.empty()) fail_input("--alpha-grid is empty");
  if (text.find(':') != std::string::npos) {
    const std::vector<std::string> parts = split_fields(text, ':');
    if (parts.size() != 3) fail_input("--alpha-grid must be START:STOP:COUNT or a comma-separated list, got '" + text + "'");
    double a = parse_number(parts[0], text), b = parse_number(parts[1], text);
    char* end = nullptr;
    long long count = std::strtoll(parts[2].c_str(), &end, 10);
    if (!decimal_integer(parts[2]) || *end || count < 1 || count > 100000)
      fail_input("--alpha-grid: COUNT must be an integer in 1..100000, got '" + parts[2] + "'");
    if (!std::isfinite(a) || !std::isfinite(b) || a <= 0 || b <= 0)
      fail_input("--alpha-grid: shapes must be finite and > 0, got '" + text + "'");
    if (count > 1 && !(b > a)) fail_input("--alpha-grid: STOP must exceed START, got '" + text + "'");
    if (count == 1 && a != b) fail_input("--alpha-grid: COUNT 1 needs START = STOP, got '" + text + "'");
    g.alpha.resize(static_cast<std::size_t>(count));
    for (long long i = 0; i < count; ++i)
      g.alpha[static_cast<std::size_t>(i)] = count == 1 ? a : a + (b - a) * static_cast<double>(i) / static_cast<double>(count - 1);
    if (count > 1) {
      g.uniform = true;
      g.h = (b - a) / static_cast<double>(count - 1);
      g.alpha.back() = b;
    }
    // The ladder restarts at alpha[g0] each group and steps by h; the grid values
    // a + (b-a) i/(count-1) differ from a + i h by an ulp at most.
  } else {
    for (const std::string& item : split_fields(text)) {
      double v = parse_number(item, text);
      if (!std::isfinite(v) || v <= 0) fail_input("--alpha-grid: shapes must be finite and > 0, got '" + item + "'");
      g.alpha.push_back(v);
    }
    if (g.alpha.empty()) fail_input("--alpha-grid is empty");
  }
  for (double a : g.alpha)
    if (a > 64) fail_input("--alpha-grid: shapes above 64 overflow the power sums, got " + exact_text(a));
  return g;
}

std::int64_t window_count(const Series& s, const Params& p) {
  if (s.length < p.window || p.step < 1) return 0;
  return (s.length - p.window) / p.step + 1;
}

void validate(const Series& s, const Params& p) {
  if (p.window < 3) fail_input("--window must be >= 3, got " + std::to_string(p.window));
  if (p.step < 1) fail_input("--step must be >= 1, got " + std::to_string(p.step));
  if (p.refresh < 1) fail_input("--refresh must be >= 1, got " + std::to_string(p.refresh));
  if (p.shapes != 1 && p.shapes != 2) fail_input("--shapes must be 1 or 2, got " + std::to_string(p.shapes));
  if (p.grid.alpha.empty()) fail_input("--alpha-grid is empty");
  if (s.series < 1 || s.length < 1) fail_input("the input series is empty");
  if (p.window > s.length)
    fail_input("--window " + std::to_string(p.window) + " is longer than the series: length " + std::to_string(s.length));
  if (p.window > (std::int64_t{1} << 30)) fail_input("--window too large: " + std::to_string(p.window));
  const std::size_t total = static_cast<std::size_t>(s.series * s.length);
  for (std::size_t i = 0; i < total; ++i)
    if (!std::isfinite(s.x[i]))
      fail_input("x: non-finite value at series " + std::to_string(i / static_cast<std::size_t>(s.length)) + ", index " +
                 std::to_string(i % static_cast<std::size_t>(s.length)) + ": " + exact_text(s.x[i]));
}

void WindowFits::resize(std::size_t count, bool two_shapes) {
  shape.assign(count, 0);
  shape2.assign(two_shapes ? count : 0, 0);
  index.assign(count, 0);
  xm.assign(count, 0);
  xp.assign(count, 0);
  S.assign(count, 0);
  loglik.assign(count, 0);
}

Work work_estimate(const Series& s, const Params& p) {
  const double W = static_cast<double>(window_count(s, p)), n = static_cast<double>(p.window);
  const double A = static_cast<double>(p.grid.alpha.size()), K = static_cast<double>(p.step);
  const double groups = std::ceil(A / kGroup);
  Work w;
  double pairs_per_series;
  if (p.exact || K >= n) {
    pairs_per_series = W * n * n;
  } else {
    const double R = static_cast<double>(p.refresh), chunks = std::ceil(W / R);
    // A chunk: one full window, then per slide n-1 leave and n-1 enter pairs.
    pairs_per_series = chunks * n * n + (W - chunks) * K * 2.0 * (n - 1);
  }
  w.pairs = pairs_per_series * static_cast<double>(s.series) * groups;
  w.terms = pairs_per_series * static_cast<double>(s.series) * A;
  return w;
}

namespace {

// The sums of one chunk's window, indexed [slot][shape]; slot = time index mod n.
struct ChunkState {
  std::int64_t n = 0, A = 0;
  std::vector<double> ms, mc, ps, pc;  // X- sum and correction, X+ sum and correction
  std::vector<std::int64_t> cm, cp;    // points strictly left / right of each candidate
  std::vector<double> bestS;
  std::vector<std::int64_t> bestj;
  void init(std::int64_t n_, std::int64_t A_) {
    n = n_;
    A = A_;
    const std::size_t sz = static_cast<std::size_t>(n * A);
    ms.assign(sz, 0);
    mc.assign(sz, 0);
    ps.assign(sz, 0);
    pc.assign(sz, 0);
    cm.assign(static_cast<std::size_t>(n), 0);
    cp.assign(static_cast<std::size_t>(n), 0);
    bestS.assign(static_cast<std::size_t>(A), 0);
    bestj.assign(static_cast<std::size_t>(A), 0);
  }
};

// Zeroes one candidate's sums and their compensation terms (A shapes from `base`).
void clear_slot(ChunkState& st, std::size_t base, std::int64_t A) {
  for (auto* v : {&st.ms, &st.ps, &st.mc, &st.pc}) std::fill(v->begin() + base, v->begin() + base + A, 0.0);
}

// Full sums of candidate j over the window [t0, t0+n), compensated, in time
// order. Compensation matters here too: a rounding error of the first sum
// would outlive every term that later leaves (spec: rolling windows).
void full_candidate(const double* x, std::int64_t j, std::int64_t t0, const Params& p, ChunkState& st) {
  const std::int64_t n = st.n, A = st.A;
  const std::size_t base = static_cast<std::size_t>((j % n) * A);
  clear_slot(st, base, A);
  double *ms = &st.ms[base], *ps = &st.ps[base], *mc = &st.mc[base], *pc = &st.pc[base];
  std::int64_t left = 0, right = 0;
  const double* alpha = p.grid.alpha.data();
  double pw[kGroup];
  for (std::int64_t k = t0; k < t0 + n; ++k) {
    const double d = x[j] - x[k];
    if (d == 0) continue;
    const double L = std::log(std::fabs(d));
    double* acc = d > 0 ? ms : ps;  // x[k] < theta: left sum
    double* cor = d > 0 ? mc : pc;
    ++(d > 0 ? left : right);
    for (std::int64_t g0 = 0; g0 < A; g0 += kGroup) {
      const int cnt = static_cast<int>(std::min<std::int64_t>(kGroup, A - g0));
      group_powers(L, alpha, static_cast<int>(g0), cnt, p.grid.uniform, p.grid.h, pw);
      for (int i = 0; i < cnt; ++i) comp_add(acc[g0 + i], cor[g0 + i], pw[i]);
    }
  }
  st.cm[static_cast<std::size_t>(j % n)] = left;
  st.cp[static_cast<std::size_t>(j % n)] = right;
}

// One slide: point tl leaves, point te = tl + n enters (same slot).
void slide(const double* x, std::int64_t tl, const Params& p, ChunkState& st) {
  const std::int64_t n = st.n, A = st.A, te = tl + n;
  const double* alpha = p.grid.alpha.data();
  const std::size_t snew = static_cast<std::size_t>((te % n) * A);
  clear_slot(st, snew, A);
  double *nm = &st.ms[snew], *np_ = &st.ps[snew], *nmc = &st.mc[snew], *npc = &st.pc[snew];
  std::int64_t nleft = 0, nright = 0;
  double pw[kGroup];
  for (std::int64_t j = tl + 1; j < te; ++j) {
    const std::size_t b = static_cast<std::size_t>((j % n) * A);
    // the leaving point: subtract its term from candidate j
    const double dl = x[j] - x[tl];
    if (dl != 0) {
      const double L = std::log(std::fabs(dl));
      double* s = dl > 0 ? &st.ms[b] : &st.ps[b];
      double* c = dl > 0 ? &st.mc[b] : &st.pc[b];
      std::int64_t& count = dl > 0 ? st.cm[static_cast<std::size_t>(j % n)] : st.cp[static_cast<std::size_t>(j % n)];
      if (--count == 0) {
        // the side is empty: its sum is exactly 0, whatever rounding is left
        std::fill(s, s + A, 0.0);
        std::fill(c, c + A, 0.0);
      } else {
        for (std::int64_t g0 = 0; g0 < A; g0 += kGroup) {
          const int cnt = static_cast<int>(std::min<std::int64_t>(kGroup, A - g0));
          group_powers(L, alpha, static_cast<int>(g0), cnt, p.grid.uniform, p.grid.h, pw);
          for (int i = 0; i < cnt; ++i) comp_add(s[g0 + i], c[g0 + i], -pw[i]);
        }
      }
    }
    // the entering point: add its term to candidate j, and j's term to the new candidate
    const double de = x[j] - x[te];
    if (de != 0) {
      const double L = std::log(std::fabs(de));
      double* s = de > 0 ? &st.ms[b] : &st.ps[b];
      double* c = de > 0 ? &st.mc[b] : &st.pc[b];
      double* nacc = de > 0 ? np_ : nm;  // x[j] > x[te]: right of the new candidate
      double* ncor = de > 0 ? npc : nmc;
      ++(de > 0 ? st.cm[static_cast<std::size_t>(j % n)] : st.cp[static_cast<std::size_t>(j % n)]);
      ++(de > 0 ? nright : nleft);
      for (std::int64_t g0 = 0; g0 < A; g0 += kGroup) {
        const int cnt = static_cast<int>(std::min<std::int64_t>(kGroup, A - g0));
        group_powers(L, alpha, static_cast<int>(g0), cnt, p.grid.uniform, p.grid.h, pw);
        for (int i = 0; i < cnt; ++i) {
          comp_add(s[g0 + i], c[g0 + i], pw[i]);
          comp_add(nacc[g0 + i], ncor[g0 + i], pw[i]);
        }
      }
    }
  }  st.cm[static_cast<std::size_t>(te % n)] = nleft;
  st.cp[static_cast<std::size_t>(te % n)] = nright;
}

// The best candidate per shape and the best shape of the window [t0, t0+n).
// par: spread the shapes over threads (each shape's scan keeps its order).
void evaluate(const double* x, std::int64_t t0, const Params& p, ChunkState& st, std::size_t out_i, WindowFits& out,
              bool par) {
  const std::int64_t n = st.n, A = st.A;
  const double* alpha = p.grid.alpha.data();
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t a = 0; a < A; ++a) {
    const double inv_p1 = 1.0 / (alpha[a] + 1.0);
    double bS = std::numeric_limits<double>::quiet_NaN();
    std::int64_t bj = -1;
    for (std::int64_t j = t0; j < t0 + n; ++j) {
      const std::size_t b = static_cast<std::size_t>((j % n) * A + a);
      const double S = scale_sum(st.ms[b] + st.mc[b], st.ps[b] + st.pc[b], inv_p1);
      if (bj < 0 || better_candidate(S, x[j], static_cast<int>(j - t0), bS, x[bj], static_cast<int>(bj - t0))) {
        bS = S;
        bj = j;
      }
    }
    st.bestS[static_cast<std::size_t>(a)] = bS;
    st.bestj[static_cast<std::size_t>(a)] = bj;
  }
  double ll = 0;
  const int a = pick_shape(st.bestS.data(), alpha, static_cast<int>(A), static_cast<double>(n), &ll);
  const std::int64_t j = st.bestj[static_cast<std::size_t>(a)];
  const std::size_t b = static_cast<std::size_t>((j % n) * A + a);
  out.shape[out_i] = a;
  out.index[out_i] = j;
  out.xm[out_i] = st.ms[b] + st.mc[b];
  out.xp[out_i] = st.ps[b] + st.pc[b];
  out.S[out_i] = st.bestS[static_cast<std::size_t>(a)];
  out.loglik[out_i] = ll;
}

// Two shapes: the best (theta, p1, p2) of the window [t0, t0+n), after
// evaluate() has put the best common shape in out (a lower bound: p1 = p2 is
// one of the pairs, and profile2 gives it the same bits). Each candidate's
// sums X-(p1) and X+(p2) are already there for every shape, so only the
// combination is new: a candidate is skipped when its bound
// max U1 + max U2 (inference.hpp side_bound, with w its share of points left of
// it) falls below the best so far by more than rounding can explain, and a pair
// likewise; the rest get the exact profile. Ties: the smaller theta, then the
// earlier candidate, the smaller p1, the smaller p2. The skipped ones provably
// lose, so the result does not depend on the order of the search.
void evaluate2(const double* x, std::int64_t t0, const std::vector<ShapeConst>& sc, ChunkState& st,
               std::size_t out_i, WindowFits& out, std::vector<double>& u1, std::vector<double>& u2) {
  const std::int64_t n = st.n, A = st.A;
  const double nd = static_cast<double>(n);
  double best = out.loglik[out_i];
  std::int64_t bj = out.index[out_i];
  int bi = out.shape[out_i], bk = out.shape[out_i];
  double bxm = out.xm[out_i], bxp = out.xp[out_i];
  const double margin = 1e-9 * (std::fabs(best) + nd);
  const bool finite_best = std::isfinite(best);
  for (std::int64_t j = t0; j < t0 + n; ++j) {
    const std::size_t slot = static_cast<std::size_t>(j % n), base = slot * static_cast<std::size_t>(A);
    const double w = (static_cast<double>(st.cm[slot]) + 0.5) / (nd + 1.0);
    const double m1 = nd * w, m2 = nd * (1.0 - w), lw1 = std::log(w), lw2 = std::log1p(-w);
    double max1 = -INFINITY, max2 = -INFINITY;
    for (std::int64_t a = 0; a < A; ++a) {
      const std::size_t b = base + static_cast<std::size_t>(a);
      u1[static_cast<std::size_t>(a)] = side_bound(st.ms[b] + st.mc[b], sc[static_cast<std::size_t>(a)], m1, lw1);
      u2[static_cast<std::size_t>(a)] = side_bound(st.ps[b] + st.pc[b], sc[static_cast<std::size_t>(a)], m2, lw2);
      max1 = std::max(max1, u1[static_cast<std::size_t>(a)]);
      max2 = std::max(max2, u2[static_cast<std::size_t>(a)]);
    }
    if (finite_best && max1 + max2 < best - margin) continue;
    for (std::int64_t i = 0; i < A; ++i) {
      if (finite_best && u1[static_cast<std::size_t>(i)] + max2 < best - margin) continue;
      const double xm = st.ms[base + static_cast<std::size_t>(i)] + st.mc[base + static_cast<std::size_t>(i)];
      for (std::int64_t k = 0; k < A; ++k) {
        if (finite_best && u1[static_cast<std::size_t>(i)] + u2[static_cast<std::size_t>(k)] < best - margin) continue;
        const double xp = st.ps[base + static_cast<std::size_t>(k)] + st.pc[base + static_cast<std::size_t>(k)];
        const double ll = profile2(xm, xp, sc[static_cast<std::size_t>(i)], sc[static_cast<std::size_t>(k)], nd).loglik;
        if (ll != ll) continue;
        bool better = ll > best;
        if (ll == best) {
          if (x[j] != x[bj]) better = x[j] < x[bj];
          else if (j != bj) better = j < bj;
          else if (i != bi) better = i < bi;
          else better = k < bk;
        }
        if (better) {
          best = ll;
          bj = j;
          bi = static_cast<int>(i);
          bk = static_cast<int>(k);
          bxm = xm;
          bxp = xp;
        }
      }
    }
  }
  out.index[out_i] = bj;
  out.shape[out_i] = bi;
  out.shape2[out_i] = bk;
  out.xm[out_i] = bxm;
  out.xp[out_i] = bxp;
  out.S[out_i] = NAN;
  out.loglik[out_i] = best;
}

}  // namespace

TaskPlan cpu_plan(const Series& s, const Params& p) {
  validate(s, p);
  const std::int64_t W = window_count(s, p), n = p.window, K = p.step;
  // Incremental updates pay off while a slide (2n pairs per point) is cheaper
  // than a fresh window (n^2 pairs): K < n/2.
  const bool rolling = !p.exact && 2 * K < n;
  // Chunks of windows, each started by a full recompute: at most `refresh`
  // windows, and small enough that the series give about 64 chunks (so that 16
  // cores have work), but at least n/4 windows (a full recompute costs about
  // n/4 rolling windows' pairs). They depend on the sizes only, never on the
  // thread count, so neither do the bits.
  std::int64_t chunk = 1;
  if (rolling) {
    const std::int64_t per_series = (64 + s.series - 1) / s.series;
    chunk = std::min(p.refresh, std::max<std::int64_t>(std::max<std::int64_t>(16, n / 4), (W + per_series - 1) / per_series));
  }
  TaskPlan plan;
  plan.series = s.series;
  plan.windows = W;
  plan.chunk = chunk;
  plan.chunks = (W + chunk - 1) / chunk;
  return plan;
}

void solve_cpu(const Series& s, const Params& p, WindowFits& out) {
  solve_cpu(s, p, 0, cpu_plan(s, p).tasks(), out);
}

void solve_cpu(const Series& s, const Params& p, std::int64_t first_task, std::int64_t last_task, WindowFits& out) {
  const TaskPlan plan = cpu_plan(s, p);
  if (first_task < 0 || first_task > last_task || last_task > plan.tasks())
    fail_internal("mle solve_cpu: task range [" + std::to_string(first_task) + ", " + std::to_string(last_task) +
                  ") outside [0, " + std::to_string(plan.tasks()) + ")");
  const std::int64_t W = plan.windows, n = p.window, K = p.step, A = static_cast<std::int64_t>(p.grid.alpha.size());
  const std::int64_t chunk = plan.chunk, chunks = plan.chunks, base = plan.first_window(first_task);
  out.resize(static_cast<std::size_t>(plan.first_window(last_task) - base), p.shapes == 2);
  std::vector<ShapeConst> sc;
  for (double a : p.grid.alpha) sc.push_back(shape_const(a));
  const std::int64_t tasks = last_task - first_task;
  // Few tasks (one long window, say): run them one by one and spread each
  // full recompute over the candidates instead (each candidate's sums are
  // independent, so the bits do not change).
  const bool inner = tasks < omp_get_max_threads();
#pragma omp parallel if (!inner)
  {
    ChunkState st;
    st.init(n, A);
    std::vector<double> u1(static_cast<std::size_t>(A)), u2(static_cast<std::size_t>(A));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t task = first_task; task < last_task; ++task) {
      const std::int64_t si = task / chunks, c = task % chunks;
      const double* x = s.x + si * s.length;
      const std::int64_t w0 = c * chunk, w1 = std::min(W, w0 + chunk);
      for (std::int64_t w = w0; w < w1; ++w) {
        const std::int64_t t0 = w * K;
        if (w == w0) {
#pragma omp parallel for schedule(static) if (inner)
          for (std::int64_t j = t0; j < t0 + n; ++j) full_candidate(x, j, t0, p, st);
        } else {
          for (std::int64_t tl = t0 - K; tl < t0; ++tl) slide(x, tl, p, st);
        }
        const std::size_t oi = static_cast<std::size_t>(si * W + w - base);
        evaluate(x, t0, p, st, oi, out, inner);
        if (p.shapes == 2) evaluate2(x, t0, sc, st, oi, out, u1, u2);
        if (auto* progress = active_progress()) progress->advance(1);
      }
    }
  }
}

}  // namespace numpipe::mle
