// price: the problem record and its parameters (written and read), problem groups in a
// stream (the user's strikes, maturities, quote tables) and the checks of their
// contracts and quotes.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "black.hpp"
#include "common/error.hpp"
#include "detail/grid.hpp"
#include "io.hpp"
#include "price.hpp"

namespace numpipe::price {

namespace {

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

std::string kind_of(const Record& r) {
  return r.attrs.is_object() && r.attrs.contains("kind") && r.attrs["kind"].is_string()
             ? r.attrs["kind"].get<std::string>()
             : std::string("(none)");
}

void need_kind(const Record& r, const char* kind) {
  if (kind_of(r) != kind)
    fail_input("record '" + r.name + "' has kind '" + kind_of(r) + "', expected '" + kind +
               "' (make one with gen-input price)");
}

std::vector<double> vector_of(const Record& r, std::size_t want, const char* what) {
  if (r.dtype != DType::f8 || r.shape.size() != 1)
    fail_input("record '" + r.name + "' must be f8 [" + what + "], got " + dtype_name(r.dtype) + " " +
               shape_string(r.shape));
  if (want && r.shape[0] != static_cast<std::int64_t>(want))
    fail_input("record '" + r.name + "' holds " + std::to_string(r.shape[0]) + " values, the problem's OUTER is " +
               std::to_string(want));
  const double* v = r.data<double>();
  return std::vector<double>(v, v + r.size());
}

}  // namespace

json params_json(const Params& p) {
  json j = {{"outer", p.outer}, {"num_x", p.num_x}, {"num_y", p.num_y}, {"num_t", p.num_t},
            {"s0", p.s0},       {"t", p.t},         {"alpha", p.alpha}, {"nu", p.nu},
            {"beta", p.beta}, {"rho", p.rho}};
  if (p.grid == GridKind::sinh) j["grid"] = "sinh";
  return j;
}

Record make_problem_record(const Params& p, json attrs) {
  const double v[9] = {static_cast<double>(p.outer), static_cast<double>(p.num_x), static_cast<double>(p.num_y),
                       static_cast<double>(p.num_t), p.s0, p.t, p.alpha, p.nu, p.beta};
  attrs["kind"] = kInputKind;
  attrs["fields"] = {"outer", "num_x", "num_y", "num_t", "s0", "t", "alpha", "nu", "beta"};
  attrs["params"] = params_json(p);
  attrs["rho"] = p.rho;
  if (p.grid == GridKind::sinh) attrs["grid"] = "sinh";
  return Record::from<double>("problem", {9}, v, std::move(attrs));
}

namespace {
std::int64_t as_size(const char* name, double v) {
  if (!std::isfinite(v) || v != std::floor(v) || v < 0 || v > static_cast<double>(kMaxSide))
    fail_input(std::string("problem record: ") + name + " must be a whole number in [0, " +
               std::to_string(kMaxSide) + "], got " + num(v));
  return static_cast<std::int64_t>(v);
}
}  // namespace

Params params_from_record(const Record& r) {
  std::string kind = r.attrs.is_object() && r.attrs.contains("kind") && r.attrs["kind"].is_string()
                         ? r.attrs["kind"].get<std::string>()
                         : std::string("(none)");
  if (kind != kInputKind)
    fail_input("record '" + r.name + "' has kind '" + kind + "', expected '" + kInputKind +
               "' (make one with gen-input price)");
  if (r.dtype != DType::f8 || r.shape.size() != 1 || r.shape[0] != 9)
    fail_input("record '" + r.name + "' must be f8 [9], got " + dtype_name(r.dtype) + " " + shape_string(r.shape));
  const double* v = r.data<double>();
  Params p;
  p.outer = as_size("OUTER", v[0]);
  p.num_x = as_size("numX", v[1]);
  p.num_y = as_size("numY", v[2]);
  p.num_t = as_size("numT", v[3]);
  p.s0 = v[4];
  p.t = v[5];
  p.alpha = v[6];
  p.nu = v[7];
  p.beta = v[8];
  // rho travels in the attrs (the payload keeps FinPar's nine values); 0 when absent
  if (r.attrs.contains("rho")) {
    if (!r.attrs["rho"].is_number())
      fail_input("record '" + r.name + "': attrs rho must be a number, got " + r.attrs["rho"].dump());
    p.rho = r.attrs["rho"].get<double>();
  }
  // the grid travels in the attrs too: "sinh" for the user's contracts, FinPar's when absent
  if (r.attrs.contains("grid")) {
    if (r.attrs["grid"] != "sinh" && r.attrs["grid"] != "finpar")
      fail_input("record '" + r.name + "': attrs grid must be \"sinh\" or \"finpar\", got " + r.attrs["grid"].dump());
    p.grid = r.attrs["grid"] == "sinh" ? GridKind::sinh : GridKind::finpar;
  }
  validate(p);
  return p;
}

const char* quote_kind_name(QuoteKind k) {
  return k == QuoteKind::price ? "price" : k == QuoteKind::implied_vol ? "implied_vol" : "none";
}

std::vector<Contract> Problem::contracts() const {
  std::vector<Contract> out;
  if (list()) {
    const std::vector<double> ms = maturities.empty() ? std::vector<double>{p.t} : maturities;
    for (const Quote& q : quotes) {
      const auto it = std::find(ms.begin(), ms.end(), q.maturity);
      out.push_back({static_cast<std::int64_t>(it - ms.begin()), q.strike, q.put, true});
    }
    return out;
  }
  const std::int64_t m_count = maturities.empty() ? 1 : static_cast<std::int64_t>(maturities.size());
  for (std::int64_t m = 0; m < m_count; ++m)
    for (std::int64_t k = 0; k < p.outer; ++k) out.push_back({m, strike(k), put, user_strikes});
  return out;
}

void check_contracts(const Problem& pr, const std::function<std::string(std::size_t)>& where, bool quotes) {
  const Params& p = pr.p;
  const double t_min = pr.maturities.empty() ? p.t : pr.maturities.front();
  const double x_last = x_axis(p, t_min).points.back();
  auto check_strike = [&](double k, const std::string& at) {
    if (!std::isfinite(k) || k <= 0) fail_input(at + "strike must be finite and > 0, got " + num(k));
    if (k >= x_last)
      fail_input(at + "strike " + num(k) + " lies beyond the x grid, which ends at X = " + num(x_last) +
                 " (20*alpha*s0*sqrt(t) wide): raise alpha or t, or drop the strike");
  };
  if (!pr.list()) {
    if (pr.user_strikes)
      for (std::size_t k = 0; k < pr.strikes.size(); ++k) check_strike(pr.strikes[k], "strike " + std::to_string(k) + ": ");
    return;
  }
  const std::vector<double> ms = pr.maturities.empty() ? std::vector<double>{p.t} : pr.maturities;
  // each quote's price (from an implied vol where the table holds vols)
  std::vector<double> price(pr.quotes.size(), std::nan(""));
  for (std::size_t r = 0; r < pr.quotes.size(); ++r) {
    const Quote& q = pr.quotes[r];
    const std::string at = where(r);
    check_strike(q.strike, at);
    if (!std::isfinite(q.maturity) || q.maturity <= 0) fail_input(at + "maturity must be finite and > 0, got " + num(q.maturity));
    if (q.maturity > p.t)
      fail_input(at + "maturity " + num(q.maturity) + " lies beyond the grid's time axis, which ends at t = " + num(p.t));
    if (std::find(ms.begin(), ms.end(), q.maturity) == ms.end())
      fail_input(at + "maturity " + num(q.maturity) + " is not one of the problem's maturities");
    if (!std::isfinite(q.weight) || q.weight < 0) fail_input(at + "weight must be finite and >= 0, got " + num(q.weight));
    if (pr.quote_kind == QuoteKind::none || !quotes) continue;
    if (!std::isfinite(q.quote)) fail_input(at + "the quote is missing or not finite: " + num(q.quote));
    if (pr.quote_kind == QuoteKind::implied_vol) {
      if (q.quote <= 0) fail_input(at + "implied_vol must be > 0, got " + num(q.quote));
      price[r] = black_price(p.s0, q.strike, q.maturity, q.quote, q.put);
      continue;
    }
    if (q.quote < 0) fail_input(at + "negative price " + num(q.quote));
    const double intrinsic = q.put ? std::max(q.strike - p.s0, 0.0) : std::max(p.s0 - q.strike, 0.0);
    const double upper = q.put ? q.strike : p.s0;
    if (q.quote < intrinsic - 1e-12 * p.s0)
      fail_input(at + "price " + num(q.quote) + " is below the intrinsic value " + num(intrinsic) + " of a " +
                 (q.put ? "put" : "call") + " with strike " + num(q.strike) + " and spot " + num(p.s0) + " (arbitrage)");
    if (q.quote >= upper)
      fail_input(at + "price " + num(q.quote) + " is not below " + num(upper) + ", the most a " +
                 (q.put ? "put (its strike)" : "call (the spot)") + " can be worth (arbitrage)");
    price[r] = q.quote;
  }
  if (pr.quote_kind == QuoteKind::none || !quotes) return;
  // static arbitrage between quotes: per (maturity, type) along the strike, per
  // (strike, type) along the maturity; a small slack for quotes rounded to print
  const double slack = 1e-10 * p.s0;
  std::map<std::pair<double, bool>, std::vector<std::size_t>> by_maturity, by_strike;
  for (std::size_t r = 0; r < pr.quotes.size(); ++r) {
    by_maturity[{pr.quotes[r].maturity, pr.quotes[r].put}].push_back(r);
    by_strike[{pr.quotes[r].strike, pr.quotes[r].put}].push_back(r);
  }
  auto name_rows = [&](std::initializer_list<std::size_t> rows) {
    std::string s;
    for (std::size_t r : rows) s += (s.empty() ? "" : " and ") + where(r).substr(0, where(r).size() - 2);
    return s;
  };
  for (auto& [key, rows] : by_maturity) {
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t a, std::size_t b) { return pr.quotes[a].strike < pr.quotes[b].strike; });
    const bool put = key.second;
    for (std::size_t n = 1; n < rows.size(); ++n) {
      const std::size_t a = rows[n - 1], b = rows[n];
      const double ka = pr.quotes[a].strike, kb = pr.quotes[b].strike;
      if (ka == kb)
        fail_input(name_rows({a, b}) + ": two " + (put ? "puts" : "calls") + " with strike " + num(ka) +
                   " and maturity " + num(key.first));
      const double slope = (price[b] - price[a]) / (kb - ka);
      if (put ? (slope < -slack || slope > 1 + slack) : (slope > slack || slope < -1 - slack))
        fail_input(name_rows({a, b}) + ": " + (put ? "put" : "call") + " prices " + num(price[a]) + " and " +
                   num(price[b]) + " at strikes " + num(ka) + " and " + num(kb) + " change by " + num(slope) +
                   " per unit strike, outside " + (put ? "[0, 1]" : "[-1, 0]") + " (arbitrage)");
      if (n >= 2) {
        const std::size_t z = rows[n - 2];
        const double left = (price[a] - price[z]) / (ka - pr.quotes[z].strike);
        if (slope < left - slack)
          fail_input(name_rows({z, a, b}) + ": " + (put ? "put" : "call") + " prices " + num(price[z]) + ", " +
                     num(price[a]) + ", " + num(price[b]) + " are not convex in the strike (a butterfly arbitrage)");
      }
    }
  }
  for (auto& [key, rows] : by_strike) {
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t a, std::size_t b) { return pr.quotes[a].maturity < pr.quotes[b].maturity; });
    for (std::size_t n = 1; n < rows.size(); ++n) {
      const std::size_t a = rows[n - 1], b = rows[n];
      if (pr.quotes[a].maturity == pr.quotes[b].maturity) continue;  // reported above
      if (price[b] < price[a] - slack)
        fail_input(name_rows({a, b}) + ": the " + (key.second ? "put" : "call") + " with strike " + num(key.first) +
                   " is worth " + num(price[a]) + " at maturity " + num(pr.quotes[a].maturity) + " but " +
                   num(price[b]) + " at the later " + num(pr.quotes[b].maturity) + " (a calendar arbitrage)");
    }
  }
}

std::vector<Problem> read_problems(const std::vector<Record>& records) {
  std::vector<Problem> out;
  for (const Record& r : records) {
    if (r.name == "strike" || r.name == "maturity" || r.name == "quotes") {
      if (out.empty()) fail_input("record '" + r.name + "' comes before any problem record");
      Problem& pr = out.back();
      if (r.name == "strike") {
        need_kind(r, kStrikesKind);
        if (pr.user_strikes) fail_input("two strike records for one problem");
        pr.strikes = vector_of(r, static_cast<std::size_t>(pr.p.outer), "S");
        pr.user_strikes = true;
      } else if (r.name == "maturity") {
        need_kind(r, kMaturitiesKind);
        if (!pr.maturities.empty()) fail_input("two maturity records for one problem");
        pr.maturities = vector_of(r, 0, "M");
        if (pr.maturities.empty()) fail_input("record 'maturity' is empty");
        std::vector<std::int64_t> levels;
        time_grid(pr.p, pr.maturities, &levels);  // validates the list against t and numT
      } else {
        need_kind(r, kQuotesKind);
        if (pr.list()) fail_input("two quotes records for one problem");
        if (r.dtype != DType::f8 || r.shape.size() != 2 || r.shape[1] != 5)
          fail_input("record 'quotes' must be f8 [Q, 5], got " + std::string(dtype_name(r.dtype)) + " " +
                     shape_string(r.shape));
        if (r.shape[0] != pr.p.outer)
          fail_input("record 'quotes' holds " + std::to_string(r.shape[0]) + " rows, the problem's OUTER is " +
                     std::to_string(pr.p.outer));
        const std::string qk = r.attrs.contains("quote_kind") && r.attrs["quote_kind"].is_string()
                                   ? r.attrs["quote_kind"].get<std::string>()
                                   : "none";
        if (qk == "price") pr.quote_kind = QuoteKind::price;
        else if (qk == "implied_vol") pr.quote_kind = QuoteKind::implied_vol;
        else if (qk == "none") pr.quote_kind = QuoteKind::none;
        else fail_input("record 'quotes': quote_kind must be price, implied_vol or none, got '" + qk + "'");
        const double* v = r.data<double>();
        for (std::int64_t k = 0; k < r.shape[0]; ++k) {
          const double* row = v + 5 * k;
          if (row[2] != 1 && row[2] != -1)
            fail_input("quotes row " + std::to_string(k + 1) + ": type must be +1 (call) or -1 (put), got " + num(row[2]));
          pr.quotes.push_back({row[0], row[1], row[2] < 0, row[3], row[4]});
        }
      }
      continue;
    }
    Problem pr;
    pr.p = params_from_record(r);  // bad input names the record
    pr.source = &r;
    if (r.attrs.contains("option")) {
      const json& o = r.attrs["option"];
      if (!o.is_string() || (o != "call" && o != "put"))
        fail_input("record '" + r.name + "': attrs option must be \"call\" or \"put\", got " + o.dump());
      pr.put = o == "put";
    }
    if (r.attrs.contains("tolerance")) {
      const json& t = r.attrs["tolerance"];
      if (!t.is_number() || !(t.get<double>() > 0))
        fail_input("record '" + r.name + "': attrs tolerance must be a number > 0, got " + t.dump());
      pr.tolerance = t.get<double>();
    }
    out.push_back(std::move(pr));
  }
  for (Problem& pr : out) {
    if (pr.list() && pr.user_strikes) fail_input("a problem holds both a strike record and a quotes record");
    check_contracts(pr, [](std::size_t k) { return "quotes row " + std::to_string(k + 1) + ": "; });
  }
  return out;
}

std::vector<Record> problem_records(const Problem& pr, json attrs) {
  std::vector<Record> out;
  if (pr.put) attrs["option"] = "put";
  if (pr.tolerance > 0) attrs["tolerance"] = pr.tolerance;
  out.push_back(make_problem_record(pr.p, attrs));
  if (pr.user_strikes)
    out.push_back(Record::from<double>("strike", {static_cast<std::int64_t>(pr.strikes.size())}, pr.strikes.data(),
                                       {{"kind", kStrikesKind}, {"dims", {"strike"}}}));
  if (pr.maturities.size() > 1)
    out.push_back(Record::from<double>("maturity", {static_cast<std::int64_t>(pr.maturities.size())},
                                       pr.maturities.data(), {{"kind", kMaturitiesKind}, {"dims", {"maturity"}}}));
  if (pr.list()) {
    std::vector<double> v;
    for (const Quote& q : pr.quotes) v.insert(v.end(), {q.strike, q.maturity, q.put ? -1.0 : 1.0, q.quote, q.weight});
    out.push_back(Record::from<double>(
        "quotes", {static_cast<std::int64_t>(pr.quotes.size()), 5}, v.data(),
        {{"kind", kQuotesKind},
         {"columns", {"strike", "maturity", "type", "quote", "weight"}},
         {"type", "+1 call, -1 put"},
         {"quote_kind", quote_kind_name(pr.quote_kind)}}));
  }
  return out;
}

}  // namespace numpipe::price
