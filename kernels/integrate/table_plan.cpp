// integrate: the table plan of the CUDA backend (see table.hpp): types, table
// rows, classes, Middle families and each policy's lookup, all O(policies) on the host.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.hpp"
#ifdef __linux__
#include <sys/mman.h>
#endif
#include "table.hpp"

namespace numpipe::integrate {

namespace {

std::uint64_t key_bits(double v) {
  if (v == 0) v = 0;  // -0 and +0: one key
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// An open-addressing map from W 64-bit words to dense ids in first-insertion order
// (the plan's hashing is most of its time for large portfolios).
template <int W>
class FlatIds {
 public:
  using Key = std::array<std::uint64_t, W>;
  explicit FlatIds(std::size_t expect = 16) { rehash(expect < 8 ? 16 : 2 * expect); }
  // The id of key, a new one (== size() before the call) when it was absent.
  std::int32_t id(const Key& k) { return id(k, hash(k)); }
  std::int32_t id(const Key& k, std::size_t h) {
    std::size_t i = h & mask_;
    while (slot_[i] >= 0) {
      if (keys_[slot_[i]] == k) return slot_[i];
      i = (i + 1) & mask_;
    }
    std::int32_t n = static_cast<std::int32_t>(keys_.size());
    slot_[i] = n;
    keys_.push_back(k);
    if (2 * keys_.size() > slot_.size()) rehash(2 * slot_.size());
    return n;
  }
  std::size_t size() const { return keys_.size(); }
  static std::size_t hash(const Key& k) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (std::uint64_t w : k) {
      h ^= w;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    return static_cast<std::size_t>(h);
  }

 private:
  void rehash(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n) cap *= 2;
    slot_.assign(cap, -1);
    mask_ = cap - 1;
    for (std::size_t id = 0; id < keys_.size(); ++id) {
      std::size_t i = hash(keys_[id]) & mask_;
      while (slot_[i] >= 0) i = (i + 1) & mask_;
      slot_[i] = static_cast<std::int32_t>(id);
    }
  }
  std::vector<Key> keys_;
  std::vector<std::int32_t> slot_;
  std::size_t mask_ = 0;
};

// The first stage point j of an outer segment with x + point_j < v (the points
// decrease along j): an estimate from the uniform spacing, then exact comparisons.
std::int32_t first_below(const Segment& seg, int steps, double x, double v) {
  int L = segment_points(seg), off = seg.partial ? 2 : 0;
  auto below = [&](int j) { return x + segment_point(seg, j) < v; };
  double est = 2.0 * (static_cast<double>(seg.full) - (v - x - seg.b) * static_cast<double>(steps));
  int j = est < -1.0 ? 0 : (est > static_cast<double>(L) ? L : off + static_cast<int>(std::floor(est)) + 1);
  j = std::min(std::max(j, 0), L);
  while (j > 0 && below(j - 1)) --j;
  while (j < L && !below(j)) ++j;
  return j;
}

}  // namespace

bool table_plan_applies(const Problem& pb) {
  if (!pb.curve.empty() || pb.align_breaks) return false;
  // kmax <= max g (up to one rounding of r + g - tau): keep the table's cuts per row,
  // about 2 kmax h3, and its tail steps, about (kmax h3)^2, bounded.
  for (const Policy& p : pb.policies)
    if (p.g * p.h3 > kTableMaxCut - 1 || p.h2 > kTableMaxH2) return false;
  return true;
}

void table_row_host(const RateView& rv, const TableRow& r, double* table) {
  if (r.points == 0) {
    table[r.base] = 0.0;
    return;
  }
  auto coef = [&](int l) { return inner_coefficient(rv, r.eta, 0.0, segment_point(r.seg, l)); };
  int steps = segment_steps(r.seg);
  int q_lo = table_tail_start(r.n_lo);
  std::vector<double> U(static_cast<std::size_t>(steps - q_lo + 1));
  double V = 0;
  for (int q = 0; q < steps; ++q) {
    if (q >= q_lo) U[q - q_lo] = V;
    V = rk4_linear_step(V, segment_step_size(r.seg, q), coef(2 * q), 1.0, coef(2 * q + 1), 1.0, coef(2 * q + 2), 1.0);
  }
  U[steps - q_lo] = V;
  for (int n = r.n_lo; n <= r.points; ++n)
    table[r.base + static_cast<std::int64_t>(r.points - n) * r.stride] =
        table_tail(r.seg, n, U[table_tail_start(n) - q_lo], coef);
}

void plan_table_rows(const Problem& pb, TablePlan& tp) {
  if (!table_plan_applies(pb)) fail_internal("integrate: the table plan does not apply to this problem");
  // Types (h2, h3), each with a bound on its k: k is g, 0 or r + g - tau with
  // r <= tau, so k <= g up to the rounding of r + g and of the difference.
  for (const Policy& p : pb.policies) {
    std::size_t t = 0;
    while (t < tp.types.size() && !(tp.types[t].h2 == p.h2 && tp.types[t].h3 == p.h3)) ++t;
    if (t == tp.types.size()) {
      TableType ty;
      ty.h2 = p.h2;
      ty.h3 = p.h3;
      ty.mseg = make_segment(kMaxAge, kMiddleLow, p.h2);
      tp.types.push_back(ty);
    }
    tp.types[t].kmax = std::max(tp.types[t].kmax, p.g);
  }
  for (TableType& ty : tp.types) ty.kmax += 1e-9 * (1.0 + ty.kmax);
  // Table rows: per type, one per middle grid point; the type's table holds
  // depths x rows doubles, depth-major.
  TableWork work;
  for (TableType& ty : tp.types) {
    ty.row0 = static_cast<std::int64_t>(tp.rows.size());
    ty.rows = segment_points(ty.mseg);
    ty.table = tp.table_size;
    ty.depths = 1;
    for (std::int32_t e = 0; e < ty.rows; ++e) {
      TableRow r;
      r.eta = segment_point(ty.mseg, e);
      r.steps = ty.h3;
      r.base = ty.table + e;
      r.stride = ty.rows;
      double a = kMaxAge - r.eta;
      if (a > 0.0) {
        r.seg = make_segment(a, 0.0, ty.h3);
        r.points = segment_points(r.seg);
        r.n_lo = segment_count_ge(r.seg, ty.h3, ty.kmax);
        int steps = segment_steps(r.seg), q_lo = table_tail_start(r.n_lo);
        tp.max_tail_points = std::max(tp.max_tail_points, r.points - 2 * q_lo);
        tp.max_tail_states = std::max(tp.max_tail_states, steps - q_lo + 1);
        ty.depths = std::max(ty.depths, r.points - r.n_lo + 1);
        tp.row_full.push_back(r.seg.full);
      } else {
        tp.row_full.push_back(-1);
      }
      tp.rows.push_back(r);
      work.add(r);
    }
    tp.table_size += static_cast<std::int64_t>(ty.depths) * ty.rows;
    tp.max_rows = std::max(tp.max_rows, ty.rows);
  }
  tp.trajectory_steps = work.trajectory;
  tp.tail_steps = work.tail;
  tp.coefficients = work.coefficients;
}

void first_touch(double* p, std::size_t n, int threads) {
  if (n == 0) return;
#ifdef __linux__
  // Huge pages: a 2 MiB fault instead of 512 small ones (where THP is "madvise").
  constexpr std::uintptr_t kHuge = 2u << 20;
  std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p + n)) & ~(kHuge - 1);
  if (e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
#endif
  const std::int64_t pages = static_cast<std::int64_t>((n + 511) / 512);
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
  for (std::int64_t pg = 0; pg < pages; ++pg) p[pg * 512] = 0.0;
}

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kPiece = 256 << 10;
  const std::int64_t pieces = static_cast<std::int64_t>((bytes + kPiece - 1) / kPiece);
  if (pieces <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < pieces; ++i) {
    std::size_t off = static_cast<std::size_t>(i) * kPiece;
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(kPiece, bytes - off));
  }
}

void plan_table_families(const Problem& pb, TablePlan& tp) {
  const std::size_t np = pb.policies.size();
  auto type_of = [&](const Policy& p) {
    std::int32_t t = 0;
    while (!(tp.types[t].h2 == p.h2 && tp.types[t].h3 == p.h3)) ++t;
    return t;
  };

  // Profiles: distinct (x, g, r, steps); a portfolio repeats them. Numbered in
  // the order of their first policy, whatever the thread count: the policies are
  // spread over 64 buckets by hash, each bucket's ids found by one thread in policy
  // order, then all ids renumbered by first policy.
  using Key = FlatIds<4>::Key;
  std::vector<Key> keys(np);
  std::vector<std::uint8_t> bucket(np);
  const std::int64_t nps = static_cast<std::int64_t>(np);
#pragma omp parallel for schedule(static) if (np > 20000)
  for (std::int64_t i = 0; i < nps; ++i) {
    const Policy& p = pb.policies[i];
    std::uint64_t steps = static_cast<std::uint64_t>(p.h1) << 42 | static_cast<std::uint64_t>(p.h2) << 21 |
                          static_cast<std::uint64_t>(p.h3);
    keys[i] = {key_bits(p.x), key_bits(p.g), key_bits(p.r), steps};
    bucket[i] = static_cast<std::uint8_t>(FlatIds<4>::hash(keys[i]) >> 58);
  }
  constexpr int kBuckets = 64;
  std::vector<std::int64_t> bstart(kBuckets + 1, 0);
  for (std::uint8_t b : bucket) ++bstart[b + 1];
  for (int b = 0; b < kBuckets; ++b) bstart[b + 1] += bstart[b];
  std::vector<std::int32_t> by_bucket(np);  // policy indices, ascending within each bucket
  {
    std::vector<std::int64_t> fill(bstart.begin(), bstart.end() - 1);
    for (std::size_t i = 0; i < np; ++i) by_bucket[fill[bucket[i]]++] = static_cast<std::int32_t>(i);
  }
  std::vector<std::int32_t> local(np);                 // id within its bucket
  std::vector<std::vector<std::int32_t>> firsts(kBuckets);  // per bucket: first policy of each id
#pragma omp parallel for schedule(dynamic, 1) if (np > 20000)
  for (int b = 0; b < kBuckets; ++b) {
    FlatIds<4> ids(static_cast<std::size_t>(bstart[b + 1] - bstart[b]));
    for (std::int64_t q = bstart[b]; q < bstart[b + 1]; ++q) {
      std::int32_t i = by_bucket[q];
      std::int32_t id = ids.id(keys[i]);
      if (static_cast<std::size_t>(id) == firsts[b].size()) firsts[b].push_back(i);
      local[i] = id;
    }
  }
  std::vector<std::size_t> profile_first;  // a policy of each profile, ascending
  for (const auto& f : firsts) profile_first.insert(profile_first.end(), f.begin(), f.end());
  std::sort(profile_first.begin(), profile_first.end());
  std::vector<std::int32_t> global_of_first(np, -1);
  for (std::size_t g = 0; g < profile_first.size(); ++g) global_of_first[profile_first[g]] = static_cast<std::int32_t>(g);
  tp.profile_of.resize(np);
#pragma omp parallel for schedule(static) if (np > 20000)
  for (std::int64_t i = 0; i < nps; ++i) tp.profile_of[i] = global_of_first[firsts[bucket[i]][local[i]]];
  const std::size_t nprof = profile_first.size();
  std::vector<double> multiplicity(nprof, 0.0);
  for (std::int32_t id : tp.profile_of) multiplicity[id] += 1;
  tp.profiles.resize(nprof);

  // Classes (x, h1, type).
  FlatIds<3> class_ids;
  for (std::size_t pi = 0; pi < nprof; ++pi) {
    const Policy& p = pb.policies[profile_first[pi]];
    std::int32_t type = type_of(p);
    std::int32_t cls = class_ids.id({key_bits(p.x), static_cast<std::uint64_t>(p.h1), static_cast<std::uint64_t>(type)});
    if (static_cast<std::size_t>(cls) == tp.classes.size()) {
      TableClass c;
      c.x = p.x;
      c.h1 = p.h1;
      c.type = type;
      c.seg = make_segment(kMaxAge - p.x, 0.0, p.h1);
      c.points = segment_points(c.seg);
      c.point = tp.class_points;
      tp.class_points += c.points;
      tp.classes.push_back(c);
    }
    tp.profiles[pi].cls = cls;
  }

  // Each profile's thresholds and families (G: k = g, S: ramp with r + g, Z: k = 0).
  FlatIds<3> family_ids;
  std::vector<std::int32_t> fam_end;  // one past the last point of each family
  auto family = [&](std::int32_t cls, std::int32_t kind, double value, std::int32_t j0, std::int32_t j1) {
    std::int32_t id = family_ids.id({static_cast<std::uint64_t>(cls), static_cast<std::uint64_t>(kind), key_bits(value)});
    if (static_cast<std::size_t>(id) == tp.families.size()) {
      TableFamily f;
      f.cls = cls;
      f.kind = kind;
      f.value = value;
      f.j0 = j0;
      tp.families.push_back(f);
      fam_end.push_back(j1);
    } else {
      tp.families[id].j0 = std::min(tp.families[id].j0, j0);
      fam_end[id] = std::max(fam_end[id], j1);
    }
    return id;
  };
  struct Fams {
    std::int32_t G = -1, S = -1, Z = -1;
  };
  std::vector<Fams> fams(nprof);
  for (std::size_t pi = 0; pi < nprof; ++pi) {
    const Policy& p = pb.policies[profile_first[pi]];
    TablePolicy& tpp = tp.profiles[pi];
    const TableClass& c = tp.classes[tpp.cls];
    if (p.g == 0) {  // k = 0 everywhere (pension_delay returns g = 0 or 0)
      tpp.jG = tpp.jS = c.points;
    } else {
      tpp.jG = first_below(c.seg, c.h1, c.x, p.r);
      tpp.jS = first_below(c.seg, c.h1, c.x, p.r + p.g);
    }
    if (tpp.jG < c.points) fams[pi].G = family(tpp.cls, kFamilyG, p.g, tpp.jG, c.points);
    if (tpp.jS < tpp.jG) fams[pi].S = family(tpp.cls, kFamilyS, p.r + p.g, tpp.jS, tpp.jG);
    if (tpp.jS > 0) fams[pi].Z = family(tpp.cls, kFamilyZ, 0.0, 0, tpp.jS);
  }
  // Families ordered by class (stable), so that a class's Middle values are one run.
  const std::size_t nf = tp.families.size();
  std::vector<std::int32_t> order(nf), rank(nf);
  for (std::size_t f = 0; f < nf; ++f) order[f] = static_cast<std::int32_t>(f);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t u, std::int32_t v) { return tp.families[u].cls < tp.families[v].cls; });
  std::vector<TableFamily> sorted(nf);
  for (std::size_t i = 0; i < nf; ++i) {
    sorted[i] = tp.families[order[i]];
    sorted[i].count = fam_end[order[i]] - sorted[i].j0;
    rank[order[i]] = static_cast<std::int32_t>(i);
  }
  tp.families.swap(sorted);
  tp.class_entry.assign(tp.classes.size() + 1, 0);
  std::int64_t base = 0;
  for (std::size_t i = 0; i < nf; ++i) {
    TableFamily& fa = tp.families[i];
    TableClass& c = tp.classes[fa.cls];
    if (c.nfam == 0) c.fam0 = static_cast<std::int32_t>(i);
    ++c.nfam;
    fa.base = base;
    base += fa.count;
    tp.class_entry[fa.cls + 1] += fa.count;
    // The largest k of the family (the points decrease along j, so the ramp's k
    // grows) within its type's bound: the table covers it.
    double last = c.x + segment_point(c.seg, fa.j0 + fa.count - 1);
    double kmax = fa.kind == kFamilyZ ? 0.0 : family_k(fa, last);
    if (!(kmax <= tp.types[c.type].kmax)) fail_internal("integrate: table plan: a pension delay beyond its bound");
    tp.middle_steps += static_cast<double>(fa.count) * segment_steps(tp.types[c.type].mseg);
  }
  for (std::size_t c = 0; c < tp.classes.size(); ++c) tp.class_entry[c + 1] += tp.class_entry[c];
  tp.entries = base;
  for (std::size_t pi = 0; pi < nprof; ++pi) {
    TablePolicy& tpp = tp.profiles[pi];
    const TableClass& c = tp.classes[tpp.cls];
    if (fams[pi].G >= 0) tpp.offG = tp.families[rank[fams[pi].G]].base - tp.families[rank[fams[pi].G]].j0;
    if (fams[pi].S >= 0) tpp.offS = tp.families[rank[fams[pi].S]].base - tp.families[rank[fams[pi].S]].j0;
    if (fams[pi].Z >= 0) tpp.offZ = tp.families[rank[fams[pi].Z]].base;
    tp.outer_steps += multiplicity[pi] * segment_steps(c.seg);
    tp.requests += multiplicity[pi] * c.points;
  }
}

std::int64_t assign_middle_blocks(TablePlan& tp, int group) {
  std::int64_t blocks = 0;
  for (TableClass& c : tp.classes) {
    if (blocks > std::numeric_limits<std::int32_t>::max()) fail_resource("integrate: too many outer stage points for one launch");
    c.block0 = static_cast<std::int32_t>(blocks);
    blocks += (c.points + group - 1) / group;
  }
  if (blocks > std::numeric_limits<std::int32_t>::max()) fail_resource("integrate: too many outer stage points for one launch");
  return blocks;
}

void table_class_split(const TablePlan& tp, std::size_t slots, std::size_t i, int& c0, int& c1) {
  const int nclass = static_cast<int>(tp.classes.size());
  auto at = [&](std::size_t k) {
    std::int64_t target = tp.entries * static_cast<std::int64_t>(k) / static_cast<std::int64_t>(slots);
    int c = static_cast<int>(std::lower_bound(tp.class_entry.begin(), tp.class_entry.end(), target) - tp.class_entry.begin());
    return std::min(c, nclass);
  };
  c0 = i == 0 ? 0 : at(i);
  c1 = i + 1 == slots ? nclass : at(i + 1);
  c1 = std::max(c0, c1);
}

TablePlan make_table_plan(const Problem& pb) {
  TablePlan tp;
  plan_table_rows(pb, tp);
  plan_table_families(pb, tp);
  return tp;
}

}  // namespace numpipe::integrate
