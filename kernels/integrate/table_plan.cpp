// integrate: the table plan of the CUDA backend (see table.hpp): types, table
// rows, classes, Middle families and each policy's lookup, all O(policies) on the host.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include <omp.h>

#include "common/error.hpp"
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include "table.hpp"
#include "tuning.hpp"

namespace numpipe::integrate {

namespace {

std::uint64_t key_bits(double v) {
  if (v == 0) v = 0;  // -0 and +0: one key
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// An open-addressing map from W 64-bit words to dense ids in first-insertion order
// (the plan's hashing is most of its time for large portfolios). Each slot keeps
// 32 bits of its key's hash, so that a probe compares whole keys only on a match.
template <int W>
class FlatIds {
 public:
  using Key = std::array<std::uint64_t, W>;
  explicit FlatIds(std::size_t expect = 16) { rehash(expect < 8 ? 16 : 2 * expect); }
  // The id of key, a new one (== size() before the call) when it was absent.
  std::int32_t id(const Key& k) { return id(k, hash(k)); }
  // ... with h = hash(k) given.
  std::int32_t id(const Key& k, std::uint64_t h) {
    const std::uint32_t tag = static_cast<std::uint32_t>(h >> 32);
    std::size_t i = h & mask_;
    while (slot_[i].id >= 0) {
      if (slot_[i].tag == tag && same(keys_[static_cast<std::size_t>(slot_[i].id)], k)) return slot_[i].id;
      i = (i + 1) & mask_;
    }
    std::int32_t n = static_cast<std::int32_t>(keys_.size());
    slot_[i] = {n, tag};
    keys_.push_back(k);
    hashes_.push_back(h);
    if (2 * keys_.size() > slot_.size()) rehash(2 * slot_.size());
    return n;
  }
  std::size_t size() const { return keys_.size(); }
  // W independent products summed, then MurmurHash3's 64-bit finaliser: the low
  // bits (the slot) and the high bits (the plan's buckets, the tags) both mixed.
  static std::uint64_t hash(const Key& k) {
    static constexpr std::uint64_t kOdd[8] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                                              0xD6E8FEB86659FD93ull, 0xFF51AFD7ED558CCDull, 0xC4CEB9FE1A85EC53ull,
                                              0x94D049BB133111EBull, 0xBF58476D1CE4E5B9ull};
    std::uint64_t h = W;
    for (int j = 0; j < W; ++j) h += (k[j] ^ (k[j] >> 29)) * kOdd[j % 8];
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 33;
    return h;
  }

 private:
  static bool same(const Key& a, const Key& b) {
    bool eq = true;
    for (int j = 0; j < W; ++j) eq &= a[j] == b[j];
    return eq;
  }
  void rehash(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n) cap *= 2;
    slot_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (std::size_t id = 0; id < keys_.size(); ++id) {
      std::size_t i = hashes_[id] & mask_;
      while (slot_[i].id >= 0) i = (i + 1) & mask_;
      slot_[i] = {static_cast<std::int32_t>(id), static_cast<std::uint32_t>(hashes_[id] >> 32)};
    }
  }
  struct Slot {
    std::int32_t id = -1;
    std::uint32_t tag = 0;
  };
  std::vector<Key> keys_;
  std::vector<std::uint64_t> hashes_;
  std::vector<Slot> slot_;
  std::size_t mask_ = 0;
};

// The plan's passes over every policy go by fixed blocks of policies (each block
// by one thread, the blocks' results joined in block order), so that what they
// find does not depend on the thread count.
constexpr std::int64_t kPlanBlock = 4096;
std::int64_t plan_blocks(std::int64_t n) { return (n + kPlanBlock - 1) / kPlanBlock; }

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

TableScan scan_table(const Problem& pb) {
  TableScan scan;
  if (!pb.curve.empty() || pb.align_breaks) {
    scan.applies = false;
    return scan;
  }
  // kmax <= max g (up to one rounding of r + g - tau): keep the table's cuts per row,
  // about 2 kmax h3, and its tail steps, about (kmax h3)^2, bounded.
  // One law per life for the whole batch (the table's rows and the class points'
  // muF). One pass over every policy, by OpenMP's threads for a large batch; the
  // types in the order of their first policy.
  const std::int64_t n = static_cast<std::int64_t>(pb.policies.size());
  if (n == 0) return scan;
  const int insured = pb.policies.front().insured, spouse = pb.policies.front().spouse;
  auto type_key = [](const auto& t) {
    return FlatIds<1>::Key{static_cast<std::uint64_t>(static_cast<std::uint32_t>(t.h2)) << 32 |
                           static_cast<std::uint32_t>(t.h3)};
  };
  struct BlockScan {
    std::vector<TableType> types;  // h2, h3 and the largest g, in the block's order (while all fit)
    std::int64_t misfits = 0, payments = 0;
  };
  const std::int64_t nblocks = plan_blocks(n);
  std::vector<BlockScan> blocks(static_cast<std::size_t>(nblocks));
#pragma omp parallel for schedule(static) if (n > 20000)
  for (std::int64_t b = 0; b < nblocks; ++b) {
    BlockScan& o = blocks[static_cast<std::size_t>(b)];
    FlatIds<1> ids;
    std::size_t t = 0;
    const std::int64_t end = std::min(n, (b + 1) * kPlanBlock);
    for (std::int64_t i = b * kPlanBlock; i < end; ++i) {
      const Policy& p = pb.policies[static_cast<std::size_t>(i)];
      o.misfits += p.g * p.h3 > kTableMaxCut - 1 || p.h2 > kTableMaxH2 || p.product != kSpousePension ||
                   p.insured != insured || p.spouse != spouse || p.term < kMaxAge - p.x;  // a term: the column plan
      o.payments += !plain_spouse_pension(p);
      if (o.misfits > 0) continue;  // no table plan: its types do not matter
      if (t >= o.types.size() || o.types[t].h2 != p.h2 || o.types[t].h3 != p.h3) {  // not the last policy's type
        t = static_cast<std::size_t>(ids.id(type_key(p)));
        if (t == o.types.size()) {
          TableType ty;
          ty.h2 = p.h2;
          ty.h3 = p.h3;
          o.types.push_back(ty);
        }
      }
      o.types[t].kmax = std::max(o.types[t].kmax, p.g);
    }
  }
  std::int64_t misfits = 0, payments = 0;
  for (const BlockScan& o : blocks) {
    misfits += o.misfits;
    payments += o.payments;
  }
  scan.applies = misfits == 0;
  scan.payments = payments > 0;
  if (!scan.applies) return scan;
  FlatIds<1> ids;
  for (const BlockScan& o : blocks)
    for (const TableType& bt : o.types) {
      const std::size_t t = static_cast<std::size_t>(ids.id(type_key(bt)));
      if (t == scan.types.size()) scan.types.push_back(bt);
      else scan.types[t].kmax = std::max(scan.types[t].kmax, bt.kmax);
    }
  return scan;
}

bool table_plan_applies(const Problem& pb) { return scan_table(pb).applies; }

void table_row_host(const RateView& rv, const MortalityView& spouse, const TableRow& r, double* table) {
  if (r.points == 0) {
    table[r.base] = 0.0;
    return;
  }
  auto coef = [&](int l) { return inner_coefficient(rv, spouse, r.eta, 0.0, segment_point(r.seg, l)); };
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

void plan_table_rows(const Problem& pb, TablePlan& tp) { plan_table_rows(pb, scan_table(pb), tp); }

void plan_table_rows(const Problem& pb, const TableScan& scan, TablePlan& tp) {
  (void)pb;
  if (!scan.applies) fail_internal("integrate: the table plan does not apply to this problem");
  // Types (h2, h3), each with a bound on its k: k is g, 0 or r + g - tau with
  // r <= tau, so k <= g up to the rounding of r + g and of the difference.
  tp.types = scan.types;
  tp.payments = scan.payments;
  for (TableType& ty : tp.types) {
    ty.mseg = make_segment(kMaxAge, kMiddleLow, ty.h2);
    ty.kmax += 1e-9 * (1.0 + ty.kmax);
  }
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

void advise_huge_pages(void* p, std::size_t bytes) {
#ifdef __linux__
  constexpr std::uintptr_t kHuge = 2u << 20;
  std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);  // advice only: failure is harmless
#else
  (void)p;
  (void)bytes;
#endif
}

namespace {
constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
constexpr std::uintptr_t kPage = 4096;
}  // namespace

PageFaulter::PageFaulter(double* p, std::size_t n, int helpers) {
  if (n == 0) return;
  advise_huge_pages(p, n * sizeof(double));
  begin_ = reinterpret_cast<char*>(p);
  end_ = begin_ + n * sizeof(double);
  first_chunk_ = reinterpret_cast<std::uintptr_t>(begin_) & ~(kHugePage - 1);
  chunks_ = (reinterpret_cast<std::uintptr_t>(end_) - first_chunk_ + kHugePage - 1) / kHugePage;
  for (int i = 0; i < helpers; ++i) {
    try {
      helpers_.emplace_back([this] { take(); });
    } catch (...) {  // no thread to be had: the others, or help(), take its share
      break;
    }
  }
}

PageFaulter::~PageFaulter() { join(); }

void PageFaulter::take() {
  for (std::size_t k = next_.fetch_add(1); k < chunks_; k = next_.fetch_add(1)) {
    const std::uintptr_t lo = std::max(first_chunk_ + k * kHugePage, reinterpret_cast<std::uintptr_t>(begin_));
    const std::uintptr_t hi = std::min(first_chunk_ + (k + 1) * kHugePage, reinterpret_cast<std::uintptr_t>(end_));
    // The first value of the chunk, then of each page that starts in it (a page
    // start in the array is a value's start: the array is 8-byte aligned).
    *reinterpret_cast<double*>(begin_ + ((lo - reinterpret_cast<std::uintptr_t>(begin_)) & ~std::uintptr_t{7})) = 0.0;
    for (std::uintptr_t a = (lo + kPage - 1) & ~(kPage - 1); a < hi; a += kPage) *reinterpret_cast<double*>(a) = 0.0;
  }
}

void PageFaulter::join() {
  for (std::thread& t : helpers_) t.join();
  helpers_.clear();
}

void PageFaulter::help() {
  if (chunks_ > 0) {
#pragma omp parallel
    take();
  }
  join();
}

int early_page_helpers(int threads) {
  return tuning_from_environment().early_pages && threads >= 4 ? threads / 4 : 0;
}

std::unique_ptr<PageFaulter> fault_pages_early(double* p, std::size_t n, TeamShare& team) {
  const int threads = omp_get_max_threads(), helpers = early_page_helpers(threads);
  auto faulter = std::make_unique<PageFaulter>(p, n, helpers);
  if (helpers > 0) team.set(threads - helpers);
  return faulter;
}

void TeamShare::set(int threads) {
  if (saved_ == 0) saved_ = omp_get_max_threads();
  omp_set_num_threads(std::max(1, threads));
}

void TeamShare::restore() {
  if (saved_ > 0) omp_set_num_threads(saved_);
  saved_ = 0;
}

void parallel_items(std::int64_t n, void (*fn)(std::int64_t, void*), void* arg) {
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t i = 0; i < n; ++i) fn(i, arg);
}

namespace {
// Rows of a result larger than this go by streaming stores.
constexpr std::int64_t kStreamValues = std::int64_t{1} << 16;
// One row of kYears doubles; with stream, by streaming stores: the result's lines
// are written whole without being read first, and are not read again here (the
// caller fences before the region ends).
inline void put_row(double* dst, const double* src, bool stream) {
#if defined(__x86_64__)
  if (stream) {
    for (int y = 0; y < kYears; ++y) {
      long long b;
      std::memcpy(&b, src + y, sizeof b);
      _mm_stream_si64(reinterpret_cast<long long*>(dst + y), b);
    }
    return;
  }
#endif
  (void)stream;
  std::memcpy(dst, src, sizeof(double) * kYears);
}
inline void stream_fence() {
#if defined(__x86_64__)
  _mm_sfence();  // this thread's streaming stores visible before the region ends
#endif
}
}  // namespace

void expand_rows(double* out, const double* rows, const std::int32_t* profile_of, std::int64_t n) {
  const bool big = n * kYears >= kStreamValues;
#pragma omp parallel if (big)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i)
      put_row(out + i * kYears, rows + static_cast<std::int64_t>(profile_of[i]) * kYears, big);
    stream_fence();
  }
}

void expand_rows(const RowSink& sink, const double* rows, const double* prem, const std::int32_t* profile_of,
                 std::int64_t n) {
  const bool big = n * kYears >= kStreamValues;
#pragma omp parallel if (big)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) {
      put_row(sink.row(i), rows + static_cast<std::int64_t>(profile_of[i]) * kYears, big);
      sink.premium[sink.index[i]] = prem ? prem[profile_of[i]] : 0.0;
    }
    stream_fence();
  }
}

// The profile key of a policy: (x, g, r, steps), and with W = 8 its payments
// (benefit, premium, premium term, equivalence) too.
template <int W>
typename FlatIds<W>::Key profile_key(const Policy& p) {
  std::uint64_t steps = static_cast<std::uint64_t>(p.h1) << 42 | static_cast<std::uint64_t>(p.h2) << 21 |
                        static_cast<std::uint64_t>(p.h3);
  if constexpr (W == 4) {
    return {key_bits(p.x), key_bits(p.g), key_bits(p.r), steps};
  } else {
    return {key_bits(p.x),       key_bits(p.g),       key_bits(p.r),
            steps,               key_bits(p.benefit), key_bits(p.premium),
            key_bits(premium_term_of(p)), static_cast<std::uint64_t>(p.equivalence)};
  }
}

template <int W>
void plan_table_families_keyed(const Problem& pb, TablePlan& tp);

void touch_rows(const RowSink& sink, std::int64_t n) {
  // Each thread writes the first value of rows of this part only (the other part
  // may be writing its rows into the same pages): the page faults are taken here,
  // spread over the threads, and scatter_rows or expand_rows overwrites every value.
#pragma omp parallel for schedule(static) if (n * kYears >= kStreamValues)
  for (std::int64_t i = 0; i < n; ++i) sink.row(i)[0] = 0.0;
}

void scatter_rows(const RowSink& sink, const double* rows, const double* prem, std::int64_t n) {
  const bool big = n * kYears >= kStreamValues;
#pragma omp parallel if (big)
  {
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t to = sink.index ? sink.index[i] : i;
      put_row(sink.rows + to * kYears, rows + i * kYears, big);
      if (prem && sink.premium) sink.premium[to] = prem[i];
    }
    stream_fence();
  }
}

void plan_table_families(const Problem& pb, TablePlan& tp) {
  // The payments enter the profiles' keys only where some policy has any (found by
  // plan_table_rows' scan).
  if (tp.payments) plan_table_families_keyed<8>(pb, tp);
  else plan_table_families_keyed<4>(pb, tp);
}

template <int W>
void plan_table_families_keyed(const Problem& pb, TablePlan& tp) {
  const std::size_t np = pb.policies.size();
  const std::int64_t nps = static_cast<std::int64_t>(np);
  auto type_of = [&](const Policy& p) {
    std::int32_t t = 0;
    while (!(tp.types[t].h2 == p.h2 && tp.types[t].h3 == p.h3)) ++t;
    return t;
  };

  // Profiles: distinct (x, g, r, steps[, payments]); a portfolio repeats them. The
  // policies are spread over 64 buckets by hash (in policy order within each) and
  // each bucket's distinct keys found by one thread, so that each profile is known
  // by its first policy and the plan does not depend on the thread count.
  // One parallel region for the whole plan (its serial steps by one thread between
  // barriers): the team is woken once. The per-policy arrays are left unwritten
  // until the parallel loops write them (their pages faulted there, in parallel).
  constexpr int kBuckets = 64;
  auto bucket_of = [](std::uint64_t h) { return static_cast<int>(h >> 58); };
  const std::int64_t nblocks = plan_blocks(nps);
  std::unique_ptr<std::uint64_t[]> hash(new std::uint64_t[np]);
  std::unique_ptr<std::int32_t[]> by_bucket(new std::int32_t[np]);
  std::unique_ptr<std::int32_t[]> local(new std::int32_t[np]);  // id within its bucket
  std::unique_ptr<std::uint8_t[]> first(new std::uint8_t[np]);  // 1: the first policy of its profile
  std::vector<std::int64_t> at(static_cast<std::size_t>(nblocks) * kBuckets, 0);  // [block][bucket]
  std::vector<std::int64_t> bstart(kBuckets + 1, 0);
  std::vector<std::vector<double>> counts(kBuckets);  // per bucket: policies of each id
  std::vector<std::int64_t> block_first(static_cast<std::size_t>(nblocks) + 1, 0);
  // Profiles in the order of their first policy: (first policy, bucket, id in bucket).
  struct First {
    std::int32_t policy, bucket, id;
  };
  std::vector<First> by_first;
  std::size_t nprof = 0, nc = 0;
  std::vector<std::int32_t> first_policy;  // per profile (numbered by class)
  std::vector<double> multiplicity;
  std::vector<std::vector<std::int32_t>> renumber(kBuckets);  // per bucket: the new id of each id
  // Each profile's thresholds and families (G: k = g, S: ramp with r + g, Z: k = 0),
  // class by class in parallel: a family is (kind, value) within its class,
  // numbered in the order of its first profile.
  struct ClassFamilies {
    std::vector<TableFamily> fams;
    std::vector<std::int32_t> end;  // one past the last point of each family
  };
  std::vector<ClassFamilies> cf;
  struct Fams {
    std::int32_t G = -1, S = -1, Z = -1;  // within the class
  };
  std::vector<Fams> fams;
#pragma omp parallel if (np > 2000)
  {
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < nblocks; ++b) {
      std::int64_t* count = at.data() + b * kBuckets;
      const std::int64_t end = std::min(nps, (b + 1) * kPlanBlock);
      for (std::int64_t i = b * kPlanBlock; i < end; ++i) {
        hash[i] = FlatIds<W>::hash(profile_key<W>(pb.policies[i]));
        ++count[bucket_of(hash[i])];
      }
    }
#pragma omp single
    {
      // Each bucket's policies: its blocks' in block order, so in policy order.
      for (int k = 0; k < kBuckets; ++k) {
        std::int64_t s = bstart[k];
        for (std::int64_t b = 0; b < nblocks; ++b) {
          const std::int64_t c = at[b * kBuckets + k];
          at[b * kBuckets + k] = s;
          s += c;
        }
        bstart[k + 1] = s;
      }
    }
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < nblocks; ++b) {
      std::int64_t* fill = at.data() + b * kBuckets;
      const std::int64_t end = std::min(nps, (b + 1) * kPlanBlock);
      for (std::int64_t i = b * kPlanBlock; i < end; ++i) by_bucket[fill[bucket_of(hash[i])]++] = static_cast<std::int32_t>(i);
    }
#pragma omp for schedule(dynamic, 1)
    for (int k = 0; k < kBuckets; ++k) {
      FlatIds<W> ids(static_cast<std::size_t>(bstart[k + 1] - bstart[k]));
      for (std::int64_t q = bstart[k]; q < bstart[k + 1]; ++q) {
        // A bucket's policies are far apart: the ones a few places on are fetched early.
        if (q + 8 < bstart[k + 1]) {
          const std::int32_t ahead = by_bucket[q + 8];
          __builtin_prefetch(&pb.policies[static_cast<std::size_t>(ahead)]);
          __builtin_prefetch(&hash[ahead]);
        }
        const std::int32_t i = by_bucket[q];
        const std::int32_t id = ids.id(profile_key<W>(pb.policies[i]), hash[i]);
        const bool fresh = static_cast<std::size_t>(id) == counts[k].size();
        if (fresh) counts[k].push_back(0.0);
        counts[k][id] += 1;
        local[i] = id;
        first[i] = fresh;
      }
    }
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < nblocks; ++b) {
      std::int64_t c = 0;
      const std::int64_t end = std::min(nps, (b + 1) * kPlanBlock);
      for (std::int64_t i = b * kPlanBlock; i < end; ++i) c += first[i];
      block_first[b + 1] = c;
    }
#pragma omp single
    {
      for (std::int64_t b = 0; b < nblocks; ++b) block_first[b + 1] += block_first[b];
      nprof = static_cast<std::size_t>(block_first.back());
      by_first.resize(nprof);
    }
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < nblocks; ++b) {
      std::int64_t u = block_first[b];
      const std::int64_t end = std::min(nps, (b + 1) * kPlanBlock);
      for (std::int64_t i = b * kPlanBlock; i < end; ++i)
        if (first[i]) by_first[u++] = {static_cast<std::int32_t>(i), bucket_of(hash[i]), local[i]};
    }
#pragma omp single
    {
      // Classes (x, h1, type), in the order of their first profile.
      std::vector<std::int32_t> cls_of(nprof);
      FlatIds<3> class_ids;
      for (std::size_t u = 0; u < nprof; ++u) {
        const Policy& p = pb.policies[by_first[u].policy];
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
        cls_of[u] = cls;
      }
      nc = tp.classes.size();
      // Profiles numbered by class, then by first policy: the profiles of a run of
      // classes are one run (a device computes the outer chains of the classes whose
      // Middle values it computed).
      tp.class_profile.assign(nc + 1, 0);
      for (std::size_t u = 0; u < nprof; ++u) ++tp.class_profile[cls_of[u] + 1];
      for (std::size_t c = 0; c < nc; ++c) tp.class_profile[c + 1] += tp.class_profile[c];
      first_policy.resize(nprof);
      multiplicity.resize(nprof);
      for (int k = 0; k < kBuckets; ++k) renumber[k].resize(counts[k].size());
      std::vector<std::int32_t> fill(tp.class_profile.begin(), tp.class_profile.end() - 1);
      for (std::size_t u = 0; u < nprof; ++u) {
        std::int32_t q = fill[cls_of[u]]++;
        first_policy[q] = by_first[u].policy;
        multiplicity[q] = counts[by_first[u].bucket][by_first[u].id];
        renumber[by_first[u].bucket][by_first[u].id] = q;
      }
      tp.profile_of.resize(np);
      tp.profiles.resize(nprof);
      cf.resize(nc);
      fams.resize(nprof);
    }
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < nps; ++i) tp.profile_of[i] = renumber[bucket_of(hash[i])][local[i]];
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t ci = 0; ci < static_cast<std::int64_t>(nc); ++ci) {
      const std::int32_t cls = static_cast<std::int32_t>(ci);
      const TableClass& c = tp.classes[cls];
      ClassFamilies& out = cf[cls];
      FlatIds<2> ids;
      auto family = [&](std::int32_t kind, double value, std::int32_t j0, std::int32_t j1) {
        std::int32_t id = ids.id({static_cast<std::uint64_t>(kind), key_bits(value)});
        if (static_cast<std::size_t>(id) == out.fams.size()) {
          TableFamily f;
          f.cls = cls;
          f.kind = kind;
          f.value = value;
          f.j0 = j0;
          out.fams.push_back(f);
          out.end.push_back(j1);
        } else {
          out.fams[id].j0 = std::min(out.fams[id].j0, j0);
          out.end[id] = std::max(out.end[id], j1);
        }
        return id;
      };
      for (std::int32_t q = tp.class_profile[cls]; q < tp.class_profile[cls + 1]; ++q) {
        const Policy& p = pb.policies[first_policy[q]];
        TablePolicy& tpp = tp.profiles[q];
        tpp.cls = cls;
        if (!plain_spouse_pension(p)) {
          tpp.general = 1;
          tpp.benefit = p.benefit;
          tpp.premium = p.premium;
          tpp.premium_end = premium_term_of(p);
          tpp.equivalence = p.equivalence ? 1 : 0;
        }
        if (p.g == 0) {  // k = 0 everywhere (pension_delay returns g = 0 or 0)
          tpp.jG = tpp.jS = c.points;
        } else {
          tpp.jG = first_below(c.seg, c.h1, c.x, p.r);
          tpp.jS = first_below(c.seg, c.h1, c.x, p.r + p.g);
        }
        if (tpp.jG < c.points) fams[q].G = family(kFamilyG, p.g, tpp.jG, c.points);
        if (tpp.jS < tpp.jG) fams[q].S = family(kFamilyS, p.r + p.g, tpp.jS, tpp.jG);
        if (tpp.jS > 0) fams[q].Z = family(kFamilyZ, 0.0, 0, tpp.jS);
      }
    }
  }
  // Families ordered by class, so that a class's Middle values are one run.
  tp.class_entry.assign(nc + 1, 0);
  std::int64_t base = 0;
  for (std::size_t c = 0; c < nc; ++c) {
    TableClass& cl = tp.classes[c];
    cl.fam0 = static_cast<std::int32_t>(tp.families.size());
    cl.nfam = static_cast<std::int32_t>(cf[c].fams.size());
    const TableType& ty = tp.types[cl.type];
    for (std::size_t k = 0; k < cf[c].fams.size(); ++k) {
      TableFamily fa = cf[c].fams[k];
      fa.count = cf[c].end[k] - fa.j0;
      fa.base = base;
      base += fa.count;
      tp.class_entry[c + 1] += fa.count;
      // The largest k of the family (the points decrease along j, so the ramp's k
      // grows) within its type's bound: the table covers it.
      double last = cl.x + segment_point(cl.seg, fa.j0 + fa.count - 1);
      double kmax = fa.kind == kFamilyZ ? 0.0 : family_k(fa, last);
      if (!(kmax <= ty.kmax)) fail_internal("integrate: table plan: a pension delay beyond its bound");
      tp.middle_steps += static_cast<double>(fa.count) * segment_steps(ty.mseg);
      tp.families.push_back(fa);
    }
    tp.class_entry[c + 1] += tp.class_entry[c];
  }
  tp.entries = base;
  for (std::size_t q = 0; q < nprof; ++q) {
    TablePolicy& tpp = tp.profiles[q];
    const TableClass& c = tp.classes[tpp.cls];
    const TableFamily* f = tp.families.data() + c.fam0;
    if (fams[q].G >= 0) tpp.offG = f[fams[q].G].base - f[fams[q].G].j0;
    if (fams[q].S >= 0) tpp.offS = f[fams[q].S].base - f[fams[q].S].j0;
    if (fams[q].Z >= 0) tpp.offZ = f[fams[q].Z].base;
    const double steps = segment_steps(c.seg);
    tp.general_profiles += tpp.general;
    tp.outer_steps += multiplicity[q] * steps;
    tp.profile_steps += steps;
    tp.requests += multiplicity[q] * c.points;
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
