// integrate: the table plan of the CUDA backend (see table.hpp): types, table
// rows, classes, Middle families and each policy's lookup, all O(policies) on the host.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "common/error.hpp"
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
  std::int32_t id(const Key& k) {
    std::size_t i = hash(k) & mask_;
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

 private:
  static std::size_t hash(const Key& k) {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (std::uint64_t w : k) {
      h ^= w;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    return static_cast<std::size_t>(h);
  }
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

// First index j with tau[j] < v (tau decreases along j).
std::int32_t first_below(const double* tau, std::int32_t n, double v) {
  return static_cast<std::int32_t>(std::partition_point(tau, tau + n, [&](double t) { return !(t < v); }) - tau);
}

}  // namespace

bool table_plan_applies(const Problem& pb) {
  if (!pb.curve.empty() || pb.align_breaks) return false;
  // kmax <= max g (up to one rounding of r + g - tau): keep the table's cuts per row,
  // about 2 kmax h3, and its tail steps, about (kmax h3)^2, bounded.
  for (const Policy& p : pb.policies)
    if (p.g * p.h3 > kTableMaxCut - 1) return false;
  return true;
}

void table_row_host(const RateView& rv, const TableRow& r, double* out) {
  if (r.points == 0) {
    out[0] = 0.0;
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
    out[n - r.n_lo] = table_tail(r.seg, n, U[table_tail_start(n) - q_lo], coef);
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
  // Table rows: per type, one per middle grid point.
  TableWork work;
  for (TableType& ty : tp.types) {
    ty.row0 = static_cast<std::int64_t>(tp.rows.size());
    ty.rows = segment_points(ty.mseg);
    for (std::int32_t e = 0; e < ty.rows; ++e) {
      TableRow r;
      r.eta = segment_point(ty.mseg, e);
      r.steps = ty.h3;
      r.row = tp.table_size;
      double a = kMaxAge - r.eta;
      if (a > 0.0) {
        r.seg = make_segment(a, 0.0, ty.h3);
        r.points = segment_points(r.seg);
        r.n_lo = segment_count_ge(r.seg, ty.h3, ty.kmax);
        int steps = segment_steps(r.seg), q_lo = table_tail_start(r.n_lo);
        tp.max_tail_points = std::max(tp.max_tail_points, r.points - 2 * q_lo);
        tp.max_tail_states = std::max(tp.max_tail_states, steps - q_lo + 1);
        tp.table_size += r.points - r.n_lo + 1;
      } else {
        tp.table_size += 1;
      }
      tp.rows.push_back(r);
      work.add(r);
    }
  }
  tp.trajectory_steps = work.trajectory;
  tp.tail_steps = work.tail;
  tp.coefficients = work.coefficients;
}

void first_touch(double* p, std::size_t n) {
  const std::int64_t pages = static_cast<std::int64_t>((n + 511) / 512);
#pragma omp parallel for schedule(static)
  for (std::int64_t pg = 0; pg < pages; ++pg) p[pg * 512] = 0.0;
}

void plan_table_families(const Problem& pb, TablePlan& tp) {
  const std::size_t np = pb.policies.size();
  auto type_of = [&](const Policy& p) {
    std::int32_t t = 0;
    while (!(tp.types[t].h2 == p.h2 && tp.types[t].h3 == p.h3)) ++t;
    return t;
  };

  // Profiles: distinct (x, g, r, steps); a portfolio repeats them.
  FlatIds<4> profile_ids(np < 4096 ? np : 4096);
  std::vector<std::size_t> profile_first;  // a policy of each profile
  tp.profile_of.resize(np);
  for (std::size_t i = 0; i < np; ++i) {
    const Policy& p = pb.policies[i];
    std::uint64_t steps = static_cast<std::uint64_t>(p.h1) << 42 | static_cast<std::uint64_t>(p.h2) << 21 |
                          static_cast<std::uint64_t>(p.h3);
    std::int32_t id = profile_ids.id({key_bits(p.x), key_bits(p.g), key_bits(p.r), steps});
    if (static_cast<std::size_t>(id) == profile_first.size()) profile_first.push_back(i);
    tp.profile_of[i] = id;
  }
  const std::size_t nprof = profile_first.size();
  std::vector<double> multiplicity(nprof, 0.0);
  for (std::int32_t id : tp.profile_of) multiplicity[id] += 1;
  tp.profiles.resize(nprof);

  // Classes (x, h1, type); each class's tau at its stage points.
  FlatIds<3> class_ids;
  std::vector<double> tau;  // class points, concatenated
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
      c.point = static_cast<std::int64_t>(tau.size());
      for (std::int32_t j = 0; j < c.points; ++j) tau.push_back(p.x + segment_point(c.seg, j));
      tp.classes.push_back(c);
    }
    tp.profiles[pi].cls = cls;
  }
  tp.class_points = static_cast<std::int64_t>(tau.size());
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
    const double* ct = tau.data() + c.point;
    if (p.g == 0) {  // k = 0 everywhere (pension_delay returns g = 0 or 0)
      tpp.jG = tpp.jS = c.points;
    } else {
      tpp.jG = first_below(ct, c.points, p.r);
      tpp.jS = first_below(ct, c.points, p.r + p.g);
    }
    if (tpp.jG < c.points) fams[pi].G = family(tpp.cls, kFamilyG, p.g, tpp.jG, c.points);
    if (tpp.jS < tpp.jG) fams[pi].S = family(tpp.cls, kFamilyS, p.r + p.g, tpp.jS, tpp.jG);
    if (tpp.jS > 0) fams[pi].Z = family(tpp.cls, kFamilyZ, 0.0, 0, tpp.jS);
  }
  std::int64_t base = 0;
  for (std::size_t f = 0; f < tp.families.size(); ++f) {
    TableFamily& fa = tp.families[f];
    fa.count = fam_end[f] - fa.j0;
    fa.base = base;
    base += fa.count;
    // The largest k of the family (tau decreases along j, so the ramp's k grows)
    // within its type's bound: the table rows cover it.
    const TableType& ty = tp.types[tp.classes[fa.cls].type];
    double kmax = fa.kind == kFamilyZ ? 0.0 : family_k(fa, tau[tp.classes[fa.cls].point + fam_end[f] - 1]);
    if (!(kmax <= ty.kmax)) fail_internal("integrate: table plan: a pension delay beyond its bound");
  }
  tp.entries = base;
  for (std::size_t pi = 0; pi < nprof; ++pi) {
    TablePolicy& tpp = tp.profiles[pi];
    const TableClass& c = tp.classes[tpp.cls];
    if (fams[pi].G >= 0) tpp.offG = tp.families[fams[pi].G].base - tp.families[fams[pi].G].j0;
    if (fams[pi].S >= 0) tpp.offS = tp.families[fams[pi].S].base - tp.families[fams[pi].S].j0;
    if (fams[pi].Z >= 0) tpp.offZ = tp.families[fams[pi].Z].base;
    tp.outer_steps += multiplicity[pi] * segment_steps(c.seg);
    tp.requests += multiplicity[pi] * c.points;
  }

  // Middle integrand evaluations per Middle value: each lane evaluates its steps'
  // points once, its first point included (the previous lane's last).
  for (const TableFamily& f : tp.families) {
    int n = segment_steps(tp.types[tp.classes[f.cls].type].mseg);
    double per_entry = 0;
    for (int lane = 0; lane < kMiddleLanes; ++lane) {
      std::int64_t s0 = static_cast<std::int64_t>(n) * lane / kMiddleLanes;
      std::int64_t s1 = static_cast<std::int64_t>(n) * (lane + 1) / kMiddleLanes;
      if (s1 > s0) per_entry += 2.0 * static_cast<double>(s1 - s0) + 1;
    }
    tp.middle_points += f.count * per_entry;
    tp.middle_steps += static_cast<double>(f.count) * n;
  }
}

TablePlan make_table_plan(const Problem& pb) {
  TablePlan tp;
  plan_table_rows(pb, tp);
  plan_table_families(pb, tp);
  return tp;
}

}  // namespace numpipe::integrate
