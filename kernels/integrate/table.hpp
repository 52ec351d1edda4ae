// integrate: the table plan of the CUDA backend (constant rate, faithful scheme).
//
// Two exact observations make the work nearly independent of the portfolio:
//
// 1. Inner(eta, k) depends on k only through the faithful indicator [s >= k] at the
//    stage points of eta's inner grid, and those points decrease along the
//    integration, so the indicator is 1 on the first n points and 0 after:
//    Inner(eta, k) = G_eta(n), n = the number of stage points >= k
//    (segment_count_ge). All G_eta(n) for k in [0, kmax] come from one RK4
//    trajectory with every indicator 1 (Inner(eta, 0)), stopped at each cut and
//    finished with the remaining indicators: the same operations on the same
//    values as inner_value, so the same bits. The whole steps' points are the same
//    values s_m = m h for every eta (model.hpp, inner_grid_point), so the depth of
//    the cut below the last point, d = points - n, depends on k alone wherever k
//    lies among whole-step points: the table is stored depth-major,
//    T[d][e] = G_e(points_e - d), and a Middle sum reads one depth across the eta
//    points (adjacent addresses).
//
// 2. Middle(x + t, t) depends on the policy only through k(x + t) = pension_delay,
//    which is g before r, r + g - (x + t) until r + g, then 0. Policies with the
//    same outer grid (x, h1) and step settings form a class; within a class the
//    Middle values of all policies come from families: G (k = g; one per distinct
//    g), S (k = r + g - tau; one per distinct r + g) and Z (k = 0), each a run of
//    the class's outer stage points. Each Middle value is computed once, and the
//    middle weights -gp(tau) h(eta, tau) once per stage point for all its families.
//
// The per-item functions below are NUMPIPE_HD: the CUDA kernels call them, and the
// tests run them on the CPU to check the plan against the reference backend.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "integrate.hpp"

namespace numpipe::integrate {

// One eta point e of a middle grid: its inner segment (from 120 - eta down to 0) and
// its column of the table: G(n) for n in [n_lo, points] at table[base + (points - n) stride].
struct TableRow {
  Segment seg;              // make_segment(120 - eta, 0, h3); unused when points == 0
  double eta = 0;
  std::int64_t base = 0;    // table index of depth 0 (type's table + e)
  std::int32_t points = 0;  // stage points of seg; 0 when eta >= 120 (Inner = 0, one depth)
  std::int32_t n_lo = 0;    // count_ge(kmax): the smallest cut in use
  std::int32_t steps = 0;   // h3
  std::int32_t stride = 0;  // the type's rows
};

// Kinds of Middle families.
enum FamilyKind : std::int32_t { kFamilyG = 0, kFamilyS = 1, kFamilyZ = 2 };

// A class: policies with the same outer grid (x, h1) and the same (h2, h3); its
// families are [fam0, fam0 + nfam) (families are ordered by class).
struct TableClass {
  Segment seg;              // make_segment(120 - x, 0, h1)
  double x = 0;
  std::int64_t point = 0;   // offset of its outer stage points in the class-point arrays
  std::int32_t points = 0;  // segment_points(seg)
  std::int32_t h1 = 0;
  std::int32_t type = 0;    // its (h2, h3) type
  std::int32_t fam0 = 0, nfam = 0;
  std::int32_t block0 = 0;  // the CUDA middle kernel's first block of this class (set by the backend)
};

// A run of Middle values of one class: points j in [j0, j0 + count) with k by kind.
struct TableFamily {
  double value = 0;         // g (G) or r + g (S)
  std::int64_t base = 0;    // its first Middle value in the entry array
  std::int32_t cls = 0, kind = 0, j0 = 0, count = 0;
};

// A policy profile (the policies with the same g, r, x and steps): its Middle
// lookup. At its class's point j, k = g when j >= jG, the ramp when jS <= j < jG,
// else 0; the value is middle[off + j] with off of that family.
struct TablePolicy {
  std::int64_t offG = 0, offS = 0, offZ = 0;
  std::int32_t cls = 0, jG = 0, jS = 0;
  // 0: a plain spouse pension (the spec's chain, table_outer); 1: Thiele's chain
  // with the payments below (table_outer_general).
  std::int32_t general = 0;
  double benefit = 1, premium = 0, premium_end = 0;
  std::int32_t equivalence = 0, pad = 0;
};

// A (h2, h3) type: its middle grid and its table rows.
struct TableType {
  Segment mseg;             // make_segment(120, 1, h2)
  std::int64_t row0 = 0;    // its first TableRow
  std::int64_t table = 0;   // its table: depths x rows doubles from here
  std::int32_t rows = 0;    // segment_points(mseg)
  std::int32_t depths = 0;  // 1 + the largest points - n_lo of its rows
  std::int32_t h2 = 0, h3 = 0;
  double kmax = 0;          // a bound on every k of its Middle values
};

// The device reads these as uploaded from the host: one layout for both compilers.
static_assert(sizeof(Segment) == 40 && sizeof(TableRow) == 72 && sizeof(TableClass) == 80 &&
                  sizeof(TableFamily) == 32 && sizeof(TablePolicy) == 72 && sizeof(TableType) == 80,
              "table plan structs: unexpected layout");

struct TablePlan {
  std::vector<TableType> types;
  std::vector<TableRow> rows;
  std::vector<std::int32_t> row_full;  // per row: seg.full, or -1 when points == 0
  std::vector<TableClass> classes;
  std::vector<TableFamily> families;  // ordered by class, then by base
  std::vector<std::int64_t> class_entry;  // per class: its first Middle value (size classes + 1)
  std::vector<TablePolicy> profiles;      // distinct policies, ordered by class
  std::vector<std::int32_t> class_profile;  // per class: its first profile (size classes + 1)
  std::vector<std::int32_t> profile_of;   // per policy
  std::int64_t table_size = 0, class_points = 0, entries = 0;
  // Work counts (RK4 steps and integrand evaluations the kernels execute).
  double trajectory_steps = 0, tail_steps = 0;  // inner table
  double coefficients = 0;                       // inner coefficient evaluations (table kernel)
  double middle_steps = 0;                       // middle RK4 increments (one per step of each Middle value)
  double outer_steps = 0;                        // outer RK4 steps over all policies
  double profile_steps = 0;                      // ... over the profiles (what the CUDA chains run)
  double requests = 0;                           // Middle values the policies read (outer stage points)
  std::int32_t max_tail_points = 0, max_tail_states = 0;  // per row, for the table kernel's shared memory
  std::int32_t max_rows = 0;                     // rows of the largest type (the middle kernel's weights)
  std::int64_t general_profiles = 0;             // profiles with payments (table_outer_general)
  bool payments = false;                         // some policy has payments (plan_table_rows' scan)
};

// Whether the table plan applies: spouse pensions only, all with one insured's and
// one spouse's mortality law, constant rate, the faithful scheme, and a table
// of moderate size: g h3 <= kTableMaxCut for every policy (about 2 g h3 cuts per
// row and (g h3)^2 tail steps) ...
inline constexpr double kTableMaxCut = 600;
// ... and h2 <= 25: the middle kernel keeps a type's weights (2 h2 119 + 1) in 48 KiB
// of shared memory.
inline constexpr int kTableMaxH2 = 25;
bool table_plan_applies(const Problem& problem);
// One pass over a batch's policies (OpenMP's threads): whether the table plan
// applies, its (h2, h3) types in the order of their first policy, each with the
// largest g (kmax; mseg not set), and whether any policy has payments.
struct TableScan {
  bool applies = true;
  bool payments = false;
  std::vector<TableType> types;
};
TableScan scan_table(const Problem& problem);
// The plan (host) in two parts: the types and table rows (from the step settings
// and a bound on k alone, so the table can start on the device first), then the
// profiles, classes and families. Throws an internal error if the problem does not
// qualify. The scan, where the caller has made it, is not made again.
void plan_table_rows(const Problem& problem, TablePlan& plan);
void plan_table_rows(const Problem& problem, const TableScan& scan, TablePlan& plan);
void plan_table_families(const Problem& problem, TablePlan& plan);
TablePlan make_table_plan(const Problem& problem);

// The CUDA table kernel computes a row's trajectory coefficients in chunks of
// kTableChunk steps (2 kTableChunk + 1 points, the chunks' shared points twice).
inline constexpr int kTableChunk = 256;
NUMPIPE_HD_INLINE int table_chunk_overlaps(int trajectory_steps) {
  return trajectory_steps > 0 ? (trajectory_steps - 1) / kTableChunk : 0;
}

// ---- per-item functions (host and device) --------------------------------------

// k of family f at its class's stage point with tau: as pension_delay computes it.
NUMPIPE_HD_INLINE double family_k(const TableFamily& f, double tau) {
  if (f.kind == kFamilyG) return f.value;
  if (f.kind == kFamilyS) return f.value - tau;
  return 0.0;
}

// The indicator pattern of a cut: point l carries 1 when l < n.
NUMPIPE_HD_INLINE double cut_indicator(int l, int n) { return l < n ? 1.0 : 0.0; }

// G(n) from the trajectory state V = U_q* before step q* = first step with a zero
// indicator, finishing steps q* .. steps-1. coef(l) is the inner coefficient at point l.
NUMPIPE_HD_INLINE int table_tail_start(int n) { return n >= 1 ? (n - 1) / 2 : 0; }
template <class Coef>
NUMPIPE_HD_INLINE double table_tail(const Segment& s, int n, double V, Coef&& coef) {
  int steps = segment_steps(s);
  for (int q = table_tail_start(n); q < steps; ++q) {
    V = rk4_linear_step(V, segment_step_size(s, q), coef(2 * q), cut_indicator(2 * q, n), coef(2 * q + 1),
                        cut_indicator(2 * q + 1, n), coef(2 * q + 2), cut_indicator(2 * q + 2, n));
  }
  return V;
}

// The work of table rows as the table kernel does it: RK4 steps of the trajectory
// and of the tails, inner coefficient evaluations.
struct TableWork {
  double trajectory = 0, tail = 0, coefficients = 0;
  void add(const TableRow& r) {
    if (r.points == 0) return;
    double steps = segment_steps(r.seg);
    int q_lo = table_tail_start(r.n_lo);
    trajectory += steps;
    // sum over n in [n_lo, points] of steps - tail_start(n), with
    // sum_{n=1..m} floor((n - 1) / 2) = floor((m - 1)^2 / 4)
    auto F = [](double m) { return m < 1 ? 0.0 : std::floor((m - 1) * (m - 1) / 4); };
    tail += (r.points - r.n_lo + 1.0) * steps - (F(r.points) - F(r.n_lo - 1.0));
    coefficients += r.points + table_chunk_overlaps(q_lo) + (q_lo > 0 ? 1 : 0);
  }
};

// fn(i) for i in [0, n) on OpenMP's threads, one item at a time (dynamic schedule);
// fn must not throw (the CUDA backend's pinning of the result in pieces).
void parallel_items(std::int64_t n, void (*fn)(std::int64_t, void*), void* arg);
// The result of n policies from their profiles' rows: row i of out = row
// profile_of[i] of rows (kYears doubles each), copied bit for bit by OpenMP's
// threads (streaming stores for a large result: it is not read again here). With
// a sink: into the sink's rows (row index[i] of the whole result), with premiums
// from the profiles' (prem).
void expand_rows(double* out, const double* rows, const std::int32_t* profile_of, std::int64_t n);
void expand_rows(const RowSink& sink, const double* rows, const double* prem, const std::int32_t* profile_of,
                 std::int64_t n);
// Rows 0..n-1 (and premiums, where prem and sink.premium are given) into the sink;
// a sink without an index takes them in order. OpenMP's threads.
void scatter_rows(const RowSink& sink, const double* rows, const double* prem, std::int64_t n);
// Takes the page faults of a part's rows in the whole result (while the devices
// work): writes the first value of each of its rows, which the part overwrites later.
void touch_rows(const RowSink& sink, std::int64_t n);

// Inner(eta, k) of a row from the table, by counting its stage points >= k.
NUMPIPE_HD_INLINE double table_inner(const TableRow& r, const double* table, double k) {
  if (r.points == 0) return table[r.base];
  int n = segment_count_ge(r.seg, r.steps, k);
  n = n < r.n_lo ? r.n_lo : n;  // never below n_lo: kmax bounds every k (memory safety only)
  return table[r.base + static_cast<std::int64_t>(r.points - n) * r.stride];
}

// A Middle value's cut for all rows at once: the depth below the last point when k
// lies among the whole-step points (row_full >= ma), else the row's own count.
struct TableCut {
  int ma = 0;          // smallest m with s_m >= k
  std::int64_t d = 0;  // depth times the stride: ma + mb - 1 rows down
};
NUMPIPE_HD_INLINE TableCut table_cut(const TableType& ty, double k) {
  double h = -1.0 / static_cast<double>(ty.h3);
  TableCut c;
  c.ma = inner_first_point_ge(h, ty.h3, k);
  int mb = inner_first_mid_ge(h, ty.h3, k);
  c.d = static_cast<std::int64_t>(c.ma + mb - 1) * ty.rows;
  return c;
}
// Inner at row e (of the type's rows) for the cut. Below k there is no whole-step
// point of the row (row_full < ma) only for spouses near 120; then only its first
// (partial) step's two points can be >= k.
NUMPIPE_HD_INLINE double table_inner_at(const TableType& ty, const TableRow* rows, const std::int32_t* row_full,
                                        const double* table, const TableCut& c, int e, double k) {
  if (row_full[e] >= c.ma) return table[ty.table + c.d + e];
  const TableRow& r = rows[e];
  if (r.points == 0) return table[r.base];
  int n = r.seg.partial ? (r.seg.a >= k ? 1 : 0) + (r.seg.a + r.seg.hp / 2 >= k ? 1 : 0) : 0;
  n = n < r.n_lo ? r.n_lo : n;  // kmax bounds every k (memory safety only)
  return table[r.base + static_cast<std::int64_t>(r.points - n) * r.stride];
}

// One lane's share of a Middle sum: middle steps [lane * n / lanes, (lane + 1) * n / lanes),
// each integrand point W[e] Inner(e) evaluated once (a step's end is the next one's
// start); W[e] = middle_weight(eta_e, tau).
template <class Inner>
NUMPIPE_HD_INLINE double table_middle_lane(const Segment& mseg, const double* W, Inner&& inner, int lane, int lanes) {
  int n = segment_steps(mseg);
  int s0 = static_cast<int>(static_cast<std::int64_t>(n) * lane / lanes);
  int s1 = static_cast<int>(static_cast<std::int64_t>(n) * (lane + 1) / lanes);
  double sum = 0;
  if (s0 >= s1) return sum;
  double f0 = W[2 * s0] * inner(2 * s0);
  for (int s = s0; s < s1; ++s) {
    double fm = W[2 * s + 1] * inner(2 * s + 1);
    double f1 = W[2 * s + 2] * inner(2 * s + 2);
    sum += middle_increment(segment_step_size(mseg, s), f0, fm, f1);
    f0 = f1;
  }
  return sum;
}
// The CUDA middle kernel's blocks: each takes a run of up to `group` stage points
// of one class. assign_middle_blocks sets every class's block0 and returns the
// number of blocks; table_middle_block finds block b's class (among classes
// [c0, c1)) and points [j0, j0 + np).
std::int64_t assign_middle_blocks(TablePlan& plan, int group);
// Slot i of `slots` computes the Middle values of classes [c0, c1): whole classes
// (a class's values are one run), balanced by their number.
void table_class_split(const TablePlan& plan, std::size_t slots, std::size_t i, int& c0, int& c1);
struct MiddleBlock {
  int cls = 0, j0 = 0, np = 0;
};
NUMPIPE_HD_INLINE MiddleBlock table_middle_block(const TableClass* classes, int c0, int c1, int b, int group) {
  int lo = c0, hi = c1;  // the last class with block0 <= b
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (classes[mid].block0 <= b) lo = mid;
    else hi = mid;
  }
  MiddleBlock m;
  m.cls = lo;
  m.j0 = (b - classes[lo].block0) * group;
  int left = classes[lo].points - m.j0;
  m.np = group < left ? group : left;
  return m;
}

// The lanes' partial sums are combined as a warp shuffle tree (offsets 16, 8, 4, 2, 1).
inline constexpr int kMiddleLanes = 32;
// Middle integrand products W Inner per Middle value: each lane's points once, its
// first point included (the previous lane's last).
inline double table_middle_products(int msteps) {
  double n = 0;
  for (int lane = 0; lane < kMiddleLanes; ++lane) {
    std::int64_t s0 = static_cast<std::int64_t>(msteps) * lane / kMiddleLanes;
    std::int64_t s1 = static_cast<std::int64_t>(msteps) * (lane + 1) / kMiddleLanes;
    if (s1 > s0) n += 2.0 * static_cast<double>(s1 - s0) + 1;
  }
  return n;
}

NUMPIPE_HD_INLINE std::int64_t table_middle_index(const TablePolicy& p, int j) {
  return (j >= p.jG ? p.offG : (j >= p.jS ? p.offS : p.offZ)) + j;
}

// One outer RK4 step (the arithmetic of outer_recurrence) from r, muF and Middle at
// the step's start, middle and end.
NUMPIPE_HD_INLINE double outer_step(double V, double hj, double r0, double m0, double M0, double rm, double mm,
                                    double Mm, double r1, double m1, double M1) {
  double k1 = hj * outer_derivative(r0, m0, M0, V);
  double k2 = hj * outer_derivative(rm, mm, Mm, V + k1 / 2);
  double k3 = hj * outer_derivative(rm, mm, Mm, V + k2 / 2);
  double k4 = hj * outer_derivative(r1, m1, M1, V + k3);
  return V + (k1 + 2 * (k2 + k3) + k4) * kSixth;
}

// A step's inputs beyond its start: r, muF and Middle at its middle and end, and
// the whole year at its end (or -1).
struct OuterIn {
  double rm, mm, Mm, r1, m1, M1;
  int y1;
};
NUMPIPE_HD_INLINE OuterIn outer_in(const TablePolicy& p, const double* rate, const double* muf, const int* year,
                                   const double* middle, int q) {
  int jm = 2 * q + 1, j1 = 2 * q + 2;
  return OuterIn{rate[jm], muf[jm], middle[table_middle_index(p, jm)], rate[j1], muf[j1],
                 middle[table_middle_index(p, j1)], year[j1]};
}

// Thiele's chain of a profile with payments (general): S = benefit x Middle, the
// premium while alive before premium_end (faithful: at the stage points), solved
// for with equivalence as spouse_outer does. Returns the premium.
NUMPIPE_HD_INLINE double table_outer_general(const Segment& seg, const TablePolicy& p, const double* rate,
                                             const double* muf, const int* year, const double* middle, double* out) {
  for (int y = 0; y < kYears; ++y) out[y] = std::numeric_limits<double>::quiet_NaN();
  const int steps = segment_steps(seg);
  auto point = [&](int j, double premium, bool benefits) {
    ThielePoint q;
    q.r = rate[j];
    q.mu = muf[j];
    const double M = middle[table_middle_index(p, j)];
    q.S = benefits ? (p.benefit == 1.0 ? M : p.benefit * M) : 0.0;
    q.c = premium != 0.0 && segment_point(seg, j) < p.premium_end ? premium : 0.0;
    return q;
  };
  auto chain = [&](double premium, bool benefits, bool write) {
    double V = 0;
    if (write && year[0] >= 0) out[year[0]] = V;
    ThielePoint a = point(0, premium, benefits);
    for (int q = 0; q < steps; ++q) {
      const ThielePoint b = point(2 * q + 1, premium, benefits), c = point(2 * q + 2, premium, benefits);
      V = thiele_step(V, segment_step_size(seg, q), a, b, c);
      if (write && year[2 * q + 2] >= 0) out[year[2 * q + 2]] = V;
      a = c;
    }
    return V;
  };
  double premium = p.premium;
  if (p.equivalence) premium = -chain(0.0, true, false) / chain(1.0, false, false);
  chain(premium, true, true);
  return premium;
}

// The outer recurrence of one policy: rate, muf and year at its class's points
// (r(t), muF(x + t), whole year or -1), Middle values looked up by family; writes
// 121 years (NaN where none).
NUMPIPE_HD_INLINE void table_outer(const Segment& seg, const TablePolicy& p, const double* rate, const double* muf,
                                   const int* year, const double* middle, double* out) {
  for (int y = 0; y < kYears; ++y) out[y] = std::numeric_limits<double>::quiet_NaN();
  double V = 0;
  if (year[0] >= 0) out[year[0]] = V;
  const int steps = segment_steps(seg);
  // A step's inputs are loaded one step ahead (they do not depend on V), so that
  // on a GPU their latency overlaps the previous step's arithmetic.
  double r0 = rate[0], m0 = muf[0], M0 = middle[table_middle_index(p, 0)];
  OuterIn cur = steps > 0 ? outer_in(p, rate, muf, year, middle, 0) : OuterIn{};
  for (int q = 0; q < steps; ++q) {
    OuterIn nxt = q + 1 < steps ? outer_in(p, rate, muf, year, middle, q + 1) : cur;
    V = outer_step(V, segment_step_size(seg, q), r0, m0, M0, cur.rm, cur.mm, cur.Mm, cur.r1, cur.m1, cur.M1);
    if (cur.y1 >= 0) out[cur.y1] = V;
    r0 = cur.r1;
    m0 = cur.m1;
    M0 = cur.M1;
    cur = nxt;
  }
}

// One table row (all its depths) computed serially (host): the reference for the
// CUDA table kernel, which runs the same steps with the trajectory in one thread
// and the tails spread over the block.
void table_row_host(const RateView& rv, const MortalityView& spouse, const TableRow& r, double* table);
inline void table_row_host(const RateView& rv, const TableRow& r, double* table) {
  table_row_host(rv, danish_men(), r, table);
}

}  // namespace numpipe::integrate
