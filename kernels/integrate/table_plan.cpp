// integrate: the table plan of the CUDA backend (see table.hpp): types, table
// rows, classes, Middle families and each policy's lookup, all O(policies) on the host.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

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

struct Key3 {
  std::uint64_t a, b, c;
  bool operator==(const Key3& o) const { return a == o.a && b == o.b && c == o.c; }
};
struct Key3Hash {
  std::size_t operator()(const Key3& k) const {
    std::uint64_t h = k.a * 0x9E3779B97F4A7C15ull;
    h ^= k.b + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= k.c + 0x94D049BB133111EBull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
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

TablePlan make_table_plan(const Problem& pb) {
  if (!table_plan_applies(pb)) fail_internal("integrate: the table plan does not apply to this problem");
  TablePlan tp;
  const std::size_t np = pb.policies.size();
  tp.policies.resize(np);

  // Types (h2, h3) and classes (x, h1, type); each class's tau at its stage points.
  std::unordered_map<Key3, std::int32_t, Key3Hash> class_of;
  std::vector<double> tau;  // class points, concatenated
  std::vector<std::int32_t> policy_type(np);
  for (std::size_t i = 0; i < np; ++i) {
    const Policy& p = pb.policies[i];
    std::int32_t type = -1;
    for (std::size_t t = 0; t < tp.types.size(); ++t)
      if (tp.types[t].h2 == p.h2 && tp.types[t].h3 == p.h3) type = static_cast<std::int32_t>(t);
    if (type < 0) {
      TableType ty;
      ty.h2 = p.h2;
      ty.h3 = p.h3;
      ty.mseg = make_segment(kMaxAge, kMiddleLow, p.h2);
      type = static_cast<std::int32_t>(tp.types.size());
      tp.types.push_back(ty);
    }
    policy_type[i] = type;
    Key3 key{key_bits(p.x), static_cast<std::uint64_t>(p.h1), static_cast<std::uint64_t>(type)};
    auto it = class_of.find(key);
    if (it == class_of.end()) {
      TableClass c;
      c.x = p.x;
      c.h1 = p.h1;
      c.type = type;
      c.seg = make_segment(kMaxAge - p.x, 0.0, p.h1);
      c.points = segment_points(c.seg);
      c.point = static_cast<std::int64_t>(tau.size());
      for (std::int32_t j = 0; j < c.points; ++j) tau.push_back(p.x + segment_point(c.seg, j));
      it = class_of.emplace(key, static_cast<std::int32_t>(tp.classes.size())).first;
      tp.classes.push_back(c);
    }
    tp.policies[i].cls = it->second;
  }
  tp.class_points = static_cast<std::int64_t>(tau.size());

  // Each policy's thresholds and families (G: k = g, S: ramp with r + g, Z: k = 0).
  std::unordered_map<Key3, std::int32_t, Key3Hash> family_of;
  std::vector<std::int32_t> fam_end;  // one past the last point of each family
  auto family = [&](std::int32_t cls, std::int32_t kind, double value, std::int32_t j0, std::int32_t j1) {
    Key3 key{static_cast<std::uint64_t>(cls), static_cast<std::uint64_t>(kind), key_bits(value)};
    auto it = family_of.find(key);
    if (it == family_of.end()) {
      TableFamily f;
      f.cls = cls;
      f.kind = kind;
      f.value = value;
      f.j0 = j0;
      it = family_of.emplace(key, static_cast<std::int32_t>(tp.families.size())).first;
      tp.families.push_back(f);
      fam_end.push_back(j1);
    } else {
      TableFamily& f = tp.families[it->second];
      f.j0 = std::min(f.j0, j0);
      fam_end[it->second] = std::max(fam_end[it->second], j1);
    }
    return it->second;
  };
  struct Fams {
    std::int32_t G = -1, S = -1, Z = -1;
  };
  std::vector<Fams> fams(np);
  for (std::size_t i = 0; i < np; ++i) {
    const Policy& p = pb.policies[i];
    TablePolicy& tpp = tp.policies[i];
    const TableClass& c = tp.classes[tpp.cls];
    const double* ct = tau.data() + c.point;
    if (p.g == 0) {  // k = 0 everywhere (pension_delay returns g = 0 or 0)
      tpp.jG = tpp.jS = c.points;
    } else {
      tpp.jG = first_below(ct, c.points, p.r);
      tpp.jS = first_below(ct, c.points, p.r + p.g);
    }
    if (tpp.jG < c.points) fams[i].G = family(tpp.cls, kFamilyG, p.g, tpp.jG, c.points);
    if (tpp.jS < tpp.jG) fams[i].S = family(tpp.cls, kFamilyS, p.r + p.g, tpp.jS, tpp.jG);
    if (tpp.jS > 0) fams[i].Z = family(tpp.cls, kFamilyZ, 0.0, 0, tpp.jS);
  }
  std::int64_t base = 0;
  for (std::size_t f = 0; f < tp.families.size(); ++f) {
    TableFamily& fa = tp.families[f];
    fa.count = fam_end[f] - fa.j0;
    fa.base = base;
    base += fa.count;
    // The largest k of the family (tau decreases along j, so the ramp's k grows).
    TableType& ty = tp.types[tp.classes[fa.cls].type];
    double kmax = fa.kind == kFamilyZ ? 0.0 : family_k(fa, tau[tp.classes[fa.cls].point + fam_end[f] - 1]);
    ty.kmax = std::max(ty.kmax, kmax);
  }
  tp.entries = base;
  for (std::size_t i = 0; i < np; ++i) {
    TablePolicy& tpp = tp.policies[i];
    const TableClass& c = tp.classes[tpp.cls];
    if (fams[i].G >= 0) tpp.offG = tp.families[fams[i].G].base - tp.families[fams[i].G].j0;
    if (fams[i].S >= 0) tpp.offS = tp.families[fams[i].S].base - tp.families[fams[i].S].j0;
    if (fams[i].Z >= 0) tpp.offZ = tp.families[fams[i].Z].base;
    tp.outer_steps += segment_steps(c.seg);
    tp.requests += c.points;
  }

  // Table rows: per type, one per middle grid point.
  std::vector<double> evals_per_entry;
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
        tp.trajectory_steps += steps;
        for (int n = r.n_lo; n <= r.points; ++n) tp.tail_steps += steps - table_tail_start(n);
        tp.max_tail_points = std::max(tp.max_tail_points, r.points - 2 * q_lo);
        tp.max_tail_states = std::max(tp.max_tail_states, steps - q_lo + 1);
        tp.table_size += r.points - r.n_lo + 1;
      } else {
        tp.table_size += 1;
      }
      tp.rows.push_back(r);
    }
    // Middle integrand evaluations per Middle value: each lane evaluates its steps'
    // points once, its first point included (the previous lane's last).
    int n = segment_steps(ty.mseg);
    double per_entry = 0;
    for (int lane = 0; lane < kMiddleLanes; ++lane) {
      std::int64_t s0 = static_cast<std::int64_t>(n) * lane / kMiddleLanes;
      std::int64_t s1 = static_cast<std::int64_t>(n) * (lane + 1) / kMiddleLanes;
      if (s1 > s0) per_entry += 2.0 * static_cast<double>(s1 - s0) + 1;
    }
    evals_per_entry.push_back(per_entry);
  }
  for (const TableFamily& f : tp.families) tp.middle_points += f.count * evals_per_entry[tp.classes[f.cls].type];
  return tp;
}

}  // namespace numpipe::integrate
