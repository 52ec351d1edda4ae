// integrate: input validation, the yield curve, the step grids and the plan
// shared by both backends.
#include <algorithm>
#include <functional>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "common/error.hpp"
#include "common/text_table.hpp"
#include "common/strings.hpp"
#include "integrate.hpp"

namespace numpipe::integrate {

void validate_curve(const Curve& c) {
  if (c.maturity.size() != c.rate.size()) fail_input("curve: maturities and rates differ in number");
  if (c.maturity.empty()) fail_input("curve: no points");
  if (c.maturity.size() > static_cast<std::size_t>(kMaxCurvePoints))
    fail_input("curve: more than " + std::to_string(kMaxCurvePoints) + " points: " + std::to_string(c.maturity.size()));
  for (std::size_t i = 0; i < c.maturity.size(); ++i) {
    double m = c.maturity[i], r = c.rate[i];
    if (!std::isfinite(m) || m < 0) fail_input("curve: maturity must be finite and >= 0, point " + std::to_string(i) + ": " + exact_text(m));
    if (!std::isfinite(r) || r <= -1 || r >= 1)
      fail_input("curve: rate must be a finite fraction in (-1, 1), point " + std::to_string(i) + ": " + exact_text(r));
    if (i > 0 && !(m > c.maturity[i - 1]))
      fail_input("curve: maturities must increase, point " + std::to_string(i) + ": " + exact_text(m) + " after " +
                 exact_text(c.maturity[i - 1]));
  }
}

void validate(Problem& pb) {
  if (!std::isfinite(pb.rate) || pb.rate <= -1 || pb.rate >= 1) fail_input("rate must be a finite fraction in (-1, 1): " + exact_text(pb.rate));
  if (!pb.curve.empty()) validate_curve(pb.curve);
  for (const RateBasis& b : pb.rate_bases) {
    try {
      if (!std::isfinite(b.rate) || b.rate <= -1 || b.rate >= 1)
        fail_input("rate must be a finite fraction in (-1, 1): " + exact_text(b.rate));
      if (!b.curve.empty()) validate_curve(b.curve);
    } catch (const Error& e) {
      fail_input("interest basis '" + b.name + "': " + e.what());
    }
  }
  for (std::size_t i = 0; i < pb.policies.size(); ++i) {
    const Policy& p = pb.policies[i];
    std::string at = "policy " + std::to_string(i) + ": ";
    if (!(p.x >= 0 && p.x <= 119)) fail_input(at + "x (age) must be in [0, 119]: " + exact_text(p.x));
    if (!(p.g >= 0 && p.g <= 120)) fail_input(at + "g (guarantee years) must be in [0, 120]: " + exact_text(p.g));
    if (!(p.r >= 0 && p.r <= 120)) fail_input(at + "r (retirement age) must be in [0, 120]: " + exact_text(p.r));
    for (int s : {p.h1, p.h2, p.h3})
      if (s < 1 || s > kMaxStepsPerYear)
        fail_input(at + "steps per year must be in [1, " + std::to_string(kMaxStepsPerYear) + "]: " + std::to_string(s));
  }
  if (pb.laws.empty()) fail_input("no mortality laws");
  for (MortalityLaw& m : pb.laws) validate_law(m);
  validate_spouse(pb.spouse);
  for (std::size_t i = 0; i < pb.policies.size(); ++i) validate_policy_payments(pb, i);
}

Curve parse_curve_text(const std::string& text, const std::string& label) {
  Curve c;
  for (const auto& row : parse_number_rows(text, label, 2, "maturity rate")) {
    c.maturity.push_back(row[0]);
    c.rate.push_back(row[1]);
  }
  if (c.maturity.empty()) fail_input(label + ": no curve points");
  try {
    validate_curve(c);
  } catch (const Error& e) {
    fail_input(label + ": " + e.what());
  }
  return c;
}

RateView RateTable::view() const {
  RateView v;
  v.n = static_cast<int>(knots.size());
  v.constant = constant;
  v.knots = knots.empty() ? nullptr : knots.data();
  v.alpha = alpha.empty() ? nullptr : alpha.data();
  v.beta = beta.empty() ? nullptr : beta.data();
  return v;
}

RateTable make_rate_table(const Problem& pb) {
  RateTable t;
  t.constant = pb.rate;
  const Curve& c = pb.curve;
  if (c.empty()) return t;
  std::size_t n = c.maturity.size();
  t.knots = c.maturity;
  t.alpha.assign(n + 1, 0.0);
  t.beta.assign(n + 1, 0.0);
  t.alpha[0] = c.rate[0];  // flat below the first point
  t.alpha[n] = c.rate[n - 1];  // and above the last
  for (std::size_t i = 0; i + 1 < n; ++i) {
    // R(T) = R_i + s (T - T_i) on [T_i, T_{i+1}); f = R + T R' = R_i - s T_i + 2 s T.
    double s = (c.rate[i + 1] - c.rate[i]) / (c.maturity[i + 1] - c.maturity[i]);
    t.alpha[i + 1] = c.rate[i] - s * c.maturity[i];
    t.beta[i + 1] = 2 * s;
  }
  return t;
}

namespace {

// Appends a segment's stage points and steps to a grid. A segment's last end
// point is the next segment's first start (or the grid's final point).
void append_segment(Grid& g, const Segment& s, int steps, bool mark_years) {
  auto year_of = [&](int i) {
    // A segment's top a = start(0) (no partial step) is the year a where whole, whatever b is.
    if (mark_years && i == 0 && !s.partial && s.a == std::floor(s.a)) return static_cast<int>(s.a);
    if (!mark_years || s.b != std::floor(s.b) || (s.full - i) % steps != 0) return -1;
    return static_cast<int>(s.b) + (s.full - i) / steps;
  };
  if (s.partial) {
    g.pts.push_back(s.a);
    g.pts.push_back(s.a + s.hp / 2);
    g.h.push_back(s.hp);
    if (mark_years) {
      g.year.push_back(s.a == std::floor(s.a) ? static_cast<int>(s.a) : -1);
      g.year.push_back(-1);
    }
  }
  for (int i = 0; i < s.full; ++i) {
    double u = s.start(i);
    g.pts.push_back(u);
    g.pts.push_back(u + s.h / 2);
    g.h.push_back(s.h);
    if (mark_years) {
      g.year.push_back(year_of(i));
      g.year.push_back(-1);
    }
  }
}

// A grid from a down to b through the interior breaks (any order, may repeat);
// steps_for(hi, lo): a segment's steps per year (default: steps).
Grid grid_through(double a, double b, std::vector<double> breaks, int steps, bool mark_years,
                  const std::function<int(double, double)>& steps_for = {}) {
  std::vector<double> cut{a};
  std::sort(breaks.begin(), breaks.end(), [](double u, double v) { return u > v; });
  for (double x : breaks)
    if (x < cut.back() - 1e-9 && x > b + 1e-9) cut.push_back(x);
  cut.push_back(b);
  Grid g;
  for (std::size_t i = 0; i + 1 < cut.size(); ++i) {
    const int n = steps_for ? steps_for(cut[i], cut[i + 1]) : steps;
    append_segment(g, make_segment(cut[i], cut[i + 1], n), n, mark_years);
  }
  g.pts.push_back(b);
  if (mark_years) g.year.push_back(b == std::floor(b) ? static_cast<int>(b) : -1);
  return g;
}

}  // namespace

namespace {
// The aligned outer grid's steps per year on [lo, hi] (at most a year): h1, or a
// multiple where the insured's law is steep (steep_steps, model.hpp).
std::function<int(double, double)> outer_stable_steps(const Policy& p, const MortalityView& insured, const RateView& rv) {
  return [&p, insured, rv](double hi, double lo) {
    return steep_steps(p.h1, max_rate(rv, lo, hi) + max_force(insured, p.x + lo, p.x + hi));
  };
}
}  // namespace

Grid outer_grid(const Policy& p, bool align) {
  double span = cover_end(p);
  std::vector<double> breaks;
  if (!align) return grid_through(span, 0.0, breaks, p.h1, true);
  {
    // Whole years (reported), then the kinks of k (tau = r, r + g) and of gp (tau = 15).
    for (int y = 1; y < span; ++y) breaks.push_back(y);
    breaks.push_back(p.r - p.x);
    breaks.push_back(p.r + p.g - p.x);
    breaks.push_back(15.0 - p.x);
  }
  RateView constant;  // the default basis: Danish women, the rate 0.05
  return grid_through(span, 0.0, breaks, p.h1, true, outer_stable_steps(p, danish_women(), constant));
}

Grid outer_grid(const Problem& pb, const Policy& p) {
  if (!pb.align_breaks) return outer_grid(p, false);
  const MortalityLaw& insured = pb.laws[static_cast<std::size_t>(p.insured)];
  const MortalityView insured_view = insured.view();
  if (!insured.table && !pb.spouse.marriage_table && pb.curve.empty() && plain_spouse_pension(p) &&
      insured.A == 0.0005 && insured.B == 5.728 - 10.0 && insured.C == 0.038 && pb.rate == kDefaultRate)
    return outer_grid(p, true);
  double span = cover_end(p);
  std::vector<double> breaks;
  for (int y = 1; y < span; ++y) breaks.push_back(y);
  breaks.push_back(p.r - p.x);
  breaks.push_back(p.r + p.g - p.x);
  if (pb.spouse.marriage_table) {
    for (double a : pb.spouse.marriage_age) breaks.push_back(a - p.x);  // kinks of the interpolated gp
  } else {
    breaks.push_back(15.0 - p.x);
  }
  if (insured.table)  // the force is constant within each year of age: a break at each whole age
    for (double a = std::ceil(p.x); a < kMaxAge; a += 1) breaks.push_back(a - p.x);
  if (!plain_spouse_pension(p)) breaks.push_back(premium_term_of(p));
  for (double m : pb.curve.maturity) breaks.push_back(m);  // the forward rate jumps at each maturity
  const RateTable rate = make_rate_table(pb);
  return grid_through(span, 0.0, breaks, p.h1, true, outer_stable_steps(p, insured_view, rate.view()));
}

Grid middle_grid(int h2, double k, bool align) {
  std::vector<double> breaks;
  if (align) breaks.push_back(kMaxAge - k);  // Inner switches on at eta = 120 - k
  return grid_through(kMaxAge, kMiddleLow, breaks, h2, false);
}

namespace {
struct ColumnKey {
  std::uint64_t k, t;
  std::int32_t h2, h3;
  std::int32_t law = 0;  // the spouse's mortality law
  bool operator==(const ColumnKey& o) const {
    return k == o.k && t == o.t && h2 == o.h2 && h3 == o.h3 && law == o.law;
  }
};
struct ColumnKeyHash {
  std::size_t operator()(const ColumnKey& c) const {
    std::uint64_t h = c.k * 0x9E3779B97F4A7C15ull;
    h ^= c.t + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= (static_cast<std::uint64_t>(c.h2) << 32 | static_cast<std::uint32_t>(c.h3)) + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(c.law) + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};
std::uint64_t bits(double v) {
  if (v == 0) v = 0;  // -0 and +0 are one column
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
}  // namespace

Plan make_plan(const Problem& pb, std::size_t first, std::size_t last) {
  Plan plan;
  plan.policies = last - first;
  plan.align = pb.align_breaks;
  plan.rate = make_rate_table(pb);
  const bool curve = !pb.curve.empty();
  std::unordered_map<ColumnKey, std::int32_t, ColumnKeyHash> columns;
  std::unordered_map<ColumnKey, std::int32_t, ColumnKeyHash> grids;  // key (k if align, h2)
  plan.outer_offset.push_back(0);
  plan.grid_offset.push_back(0);
  plan.column_offset.push_back(0);
  // Outer grids depend on (x, h1) only in the faithful scheme: cached.
  std::unordered_map<ColumnKey, Grid, ColumnKeyHash> outer_cache;
  std::size_t total = 0;
  for (std::size_t ip = first; ip < last; ++ip)
    total += 2 * static_cast<std::size_t>(std::ceil((kMaxAge - pb.policies[ip].x) * pb.policies[ip].h1)) + 3;
  plan.outer_t.reserve(total);
  plan.outer_year.reserve(total);
  plan.outer_h.reserve(total / 2);
  plan.request_tau.reserve(total);
  plan.request_column.reserve(total);
  bool have_last = false;
  ColumnKey last_key{0, 0, 0, 0, 0};
  std::int32_t last_col = -1;
  for (std::size_t ip = first; ip < last; ++ip) {
    const Policy& p = pb.policies[ip];
    Grid aligned;
    const Grid* ogp;
    if (p.product != kSpousePension) fail_internal("integrate: the spouse pension's plan got another product");
    if (pb.align_breaks) {
      aligned = outer_grid(pb, p);
      ogp = &aligned;
    } else {
      ColumnKey okey{bits(p.x), bits(cover_end(p)), p.h1, 0, 0};
      auto it = outer_cache.find(okey);
      if (it == outer_cache.end()) it = outer_cache.emplace(okey, outer_grid(p, false)).first;
      ogp = &it->second;
    }
    const Grid& og = *ogp;
    plan.outer_t.insert(plan.outer_t.end(), og.pts.begin(), og.pts.end());
    plan.outer_h.insert(plan.outer_h.end(), og.h.begin(), og.h.end());
    plan.outer_year.insert(plan.outer_year.end(), og.year.begin(), og.year.end());
    plan.outer_offset.push_back(static_cast<std::int64_t>(plan.outer_t.size()));
    for (double t : og.pts) {
      double tau = p.x + t;
      double k = pension_delay(tau, p.g, p.r);
      ColumnKey key{bits(k), curve ? bits(t) : 0, p.h2, p.h3, p.spouse};
      std::int32_t col;
      if (have_last && key == last_key) {  // k is constant before r and after r + g
        col = last_col;
      } else {
        auto it = columns.find(key);
        if (it == columns.end()) {
          col = static_cast<std::int32_t>(plan.column_k.size());
          columns.emplace(key, col);
          ColumnKey gkey{pb.align_breaks ? bits(k) : 0, 0, p.h2, 0, 0};
          auto gi = grids.find(gkey);
          std::int32_t grid;
          if (gi == grids.end()) {
            grid = static_cast<std::int32_t>(plan.grid_offset.size() - 1);
            grids.emplace(gkey, grid);
            Grid mg = middle_grid(p.h2, k, pb.align_breaks);
            plan.grid_eta.insert(plan.grid_eta.end(), mg.pts.begin(), mg.pts.end());
            plan.grid_h.insert(plan.grid_h.end(), mg.h.begin(), mg.h.end());
            plan.grid_offset.push_back(static_cast<std::int64_t>(plan.grid_eta.size()));
          } else {
            grid = gi->second;
          }
          plan.column_k.push_back(k);
          plan.column_t.push_back(curve ? t : 0.0);
          plan.column_h3.push_back(p.h3);
          plan.column_grid.push_back(grid);
          plan.column_law.push_back(p.spouse);
          std::int64_t n = plan.grid_offset[grid + 1] - plan.grid_offset[grid];
          plan.column_offset.push_back(plan.column_offset.back() + n);
        } else {
          col = it->second;
        }
        have_last = true;
        last_key = key;
        last_col = col;
      }
      plan.request_tau.push_back(tau);
      plan.request_column.push_back(col);
    }
  }
  // Work counts: Inner steps per column, and per request had nothing been shared.
  // In the faithful scheme the count does not depend on k: once per (grid, h3).
  std::vector<double> col_steps(plan.columns(), 0.0);
  const RateView rv = plan.rate.view();
  std::unordered_map<ColumnKey, double, ColumnKeyHash> faithful_counts;
  for (std::size_t c = 0; c < plan.columns(); ++c) {
    std::int32_t g = plan.column_grid[c];
    const MortalityView spouse = pb.laws[static_cast<std::size_t>(plan.column_law[c])].view();
    auto count = [&] {
      double n = 0;
      for (std::int64_t e = plan.grid_offset[g]; e < plan.grid_offset[g + 1]; ++e)
        n += inner_steps(rv, spouse, plan.grid_eta[e], plan.column_k[c], plan.column_t[c], plan.column_h3[c], plan.align);
      return n;
    };
    if (plan.align) {
      col_steps[c] = count();
    } else {
      ColumnKey key{0, 0, g, plan.column_h3[c], 0};
      auto it = faithful_counts.find(key);
      if (it == faithful_counts.end()) it = faithful_counts.emplace(key, count()).first;
      col_steps[c] = it->second;
    }
    plan.inner_steps += col_steps[c];
  }
  for (std::int32_t c : plan.request_column) plan.inner_steps_unshared += col_steps[c];
  return plan;
}

MiddleCalls distinct_middle_calls(const Plan& plan) {
  MiddleCalls calls;
  const std::size_t n = plan.requests();
  calls.of_request.resize(n);
  std::unordered_map<ColumnKey, std::int32_t, ColumnKeyHash> seen;
  for (std::size_t q = 0; q < n; ++q) {
    const ColumnKey key{bits(plan.request_tau[q]), 0, 0, 0, plan.request_column[q]};
    auto it = seen.find(key);
    if (it == seen.end()) {
      if (calls.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        fail_resource("integrate: more than 2^31 distinct Middle calls in one solve: " + std::to_string(calls.size()));
      it = seen.emplace(key, static_cast<std::int32_t>(calls.size())).first;
      calls.column.push_back(plan.request_column[q]);
      calls.tau.push_back(plan.request_tau[q]);
    }
    calls.of_request[q] = it->second;
  }
  return calls;
}

}  // namespace numpipe::integrate
