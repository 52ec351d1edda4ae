// integrate: the stream side of the workload (io.hpp).
#include "io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/strings.hpp"
#include "common/timeline.hpp"

namespace numpipe::integrate {
namespace {

// Peak resident memory per policy (docs/integrate.md "Memory"), measured on the CPU:
// about 1100 bytes (its records, the reserve at every year) and 36 bytes per point
// of its outer RK4 chain (2 h1 (120 - x) points: the plan's stage points and Middle
// values), 54 KB for a policy of x = 45 at 10 outer steps per year.
constexpr double kBytesPerPolicy = 1100, kBytesPerOuterPoint = 36;



}  // namespace

std::vector<Group> group_records(const std::vector<Record>& records) {
  std::vector<Group> groups;
  for (const Record& r : records) {
    if (r.name == "policies") {
      groups.push_back({});
      groups.back().policies = &r;
      groups.back().carried.push_back(&r);
      continue;
    }
    const Record** slot = nullptr;
    bool known = true;
    if (r.name == "steps") slot = groups.empty() ? nullptr : &groups.back().steps;
    else if (r.name == "curve") slot = groups.empty() ? nullptr : &groups.back().curve;
    else if (r.name == "products") slot = groups.empty() ? nullptr : &groups.back().products;
    else if (r.name == "lives") slot = groups.empty() ? nullptr : &groups.back().lives;
    else if (r.name == "marriage") slot = groups.empty() ? nullptr : &groups.back().marriage;
    else if (r.name == "spouse_age") slot = groups.empty() ? nullptr : &groups.back().spouse_age;
    else if (r.name == "second_life") slot = groups.empty() ? nullptr : &groups.back().second_life;
    else if (r.name == "policy_rate") slot = groups.empty() ? nullptr : &groups.back().policy_rate;
    else if (r.name == "valuation_year") slot = groups.empty() ? nullptr : &groups.back().valuation_year;
    else if (r.name != "mortality" && r.name != "rate_basis" && !numpipe::is_labels(r)) known = false;
    if (!known) continue;  // not integrate's (other tools' records pass by)
    if (groups.empty()) fail_input("record '" + r.name + "' comes before any 'policies' record");
    if (r.name == "mortality") groups.back().mortality.push_back(&r);
    if (r.name == "rate_basis") groups.back().rate_basis.push_back(&r);
    if (slot) {
      if (*slot) fail_input("two '" + r.name + "' records in one group");
      *slot = &r;
    }
    groups.back().carried.push_back(&r);
  }
  if (groups.empty()) fail_input("the input holds no 'policies' record (make one with gen-input integrate)");
  return groups;
}

namespace {

// A record of shape [rows, cols] (cols > 0) or [cols] (rows < 0: 1-D); its values as doubles.
std::vector<double> table_values(const Record& r, std::int64_t rows, std::int64_t cols, const std::string& what) {
  bool ok = rows < 0 ? (r.shape.size() == 1 && r.shape[0] == cols)
                     : (r.shape.size() == 2 && r.shape[1] == cols && (rows == 0 ? r.shape[0] >= 1 : r.shape[0] == rows));
  if (!ok)
    fail_input("'" + r.name + "' must have shape " +
               (rows < 0 ? "[" + std::to_string(cols) + "]"
                         : "[" + (rows == 0 ? std::string("M") : std::to_string(rows)) + ", " + std::to_string(cols) + "]") +
               " (" + what + "), got " + numpipe::shape_string(r.shape));
  std::vector<double> v = r.to_vector<double>();
  return v;
}

std::string attr_string(const Record& r, const std::string& key) {
  if (!r.attrs.contains(key) || !r.attrs[key].is_string()) return "";
  return r.attrs[key].get<std::string>();
}

// A law's select period given as attrs select {"years": N, "factor": F} (select.hpp).
void read_select_factor(const Record& r, MortalityLaw& m) {
  if (!r.attrs.contains("select")) return;
  const json& s = r.attrs["select"];
  if (!s.is_object() || !s.contains("years") || !s["years"].is_number_integer() || !s.contains("factor") ||
      !s["factor"].is_number())
    fail_input("'mortality' record '" + m.name + "': attrs select must be {\"years\": N, \"factor\": F}");
  m.select_years = s["years"].get<int>();
  m.select_factor = s["factor"].get<double>();
  if (m.select_years < 1)  // 0 would read as no select period
    fail_input("'mortality' record '" + m.name + "': the select period must be whole years in [1, 10]: " +
               std::to_string(m.select_years));
}

// attrs improvement: {"base_year": Y, "ai": [AI_x per row]}, or rates by age and calendar
// year {"base_year": Y, "years": [Y1, ...], "ai_by_year": [row by row, one a year]}.
void read_improvement(const json& im, const std::string& name, MortalityLaw& m) {
  const std::string at = "'mortality' record '" + name + "': attrs improvement";
  const bool by_year = im.is_object() && im.contains("years");
  const char* rates = by_year ? "ai_by_year" : "ai";
  if (!im.is_object() || !im.contains("base_year") || !im["base_year"].is_number() || !im.contains(rates) ||
      !im[rates].is_array() || (by_year && (!im["years"].is_array() || im["years"].empty() || im.contains("ai"))))
    fail_input(at + " must be {\"base_year\": Y, \"ai\": [AI per row]} or {\"base_year\": Y, \"years\": [Y1, ...], "
               "\"ai_by_year\": [AI per row and year]}");
  m.improvement_base_year = im["base_year"].get<double>();
  auto numbers = [&](const json& list, std::vector<double>& out) {
    for (const json& a : list) {
      if (!a.is_number()) fail_input(at + ": years and improvement rates must be numbers");
      out.push_back(a.get<double>());
    }
  };
  if (by_year) numbers(im["years"], m.improvement_years);
  numbers(im[rates], by_year ? m.improvement_by_year : m.improvement);
}

MortalityLaw read_law(const Record& r, std::size_t index) {
  const std::string law = attr_string(r, "law");
  const std::string name = attr_string(r, "name").empty() ? "law " + std::to_string(index) : attr_string(r, "name");
  if (law == "gompertz-makeham") {
    auto c = table_values(r, -1, 3, "A, B, C");
    MortalityLaw m = gompertz_makeham(name, c[0], c[1], c[2]);
    read_select_factor(r, m);
    return m;
  }
  if (law == "select-table") {  // age, q_[x], ..., q_[x]+d-1, q_x
    if (r.shape.size() != 2 || r.shape[1] < 3 || r.shape[1] > 12 || r.shape[0] < 1)
      fail_input("'mortality' record '" + name + "' (select table) must have shape [M, d + 2] (age, d select rates, "
                 "the ultimate rate; d in [1, 10]), got " + numpipe::shape_string(r.shape));
    const std::size_t cols = static_cast<std::size_t>(r.shape[1]), d = cols - 2;
    const std::vector<double> v = r.to_vector<double>();
    MortalityLaw m;
    m.name = name;
    m.table = true;
    m.source = attr_string(r, "source");
    m.select_years = static_cast<int>(d);
    for (std::size_t i = 0; i < v.size(); i += cols) {
      m.ages.push_back(v[i]);
      m.select_q.insert(m.select_q.end(), v.begin() + static_cast<std::ptrdiff_t>(i + 1),
                        v.begin() + static_cast<std::ptrdiff_t>(i + 1 + d));
      m.values.push_back(v[i + cols - 1]);
    }
    return m;
  }
  if (law == "table") {
    auto v = table_values(r, 0, 2, "age, q or mu");
    MortalityLaw m;
    m.name = name;
    m.table = true;
    m.source = attr_string(r, "source");
    std::string kind;
    if (r.attrs.contains("columns") && r.attrs["columns"].is_array() && r.attrs["columns"].size() == 2 &&
        r.attrs["columns"][1].is_string())
      kind = r.attrs["columns"][1].get<std::string>();
    if (kind != "q" && kind != "mu")
      fail_input("'mortality' record '" + name + "': attrs columns must be [\"age\", \"q\"] or [\"age\", \"mu\"]");
    m.q = kind == "q";
    for (std::size_t i = 0; i < v.size(); i += 2) {
      m.ages.push_back(v[i]);
      m.values.push_back(v[i + 1]);
    }
    read_select_factor(r, m);
    if (r.attrs.contains("improvement")) read_improvement(r.attrs["improvement"], name, m);
    return m;
  }
  fail_input("'mortality' record '" + name + "': attrs law must be \"gompertz-makeham\" or \"table\" (or \"select-table\"), got '" + law + "'");
}

}  // namespace

Problem make_problem(const Group& gr, bool align) {
  const Record& pol = *gr.policies;
  if (pol.shape.size() != 2 || pol.shape[1] != 3)
    fail_input("'policies' must have shape [N, 3] (g, r, x), got " + numpipe::shape_string(pol.shape));
  std::size_t n = static_cast<std::size_t>(pol.shape[0]);
  const std::int64_t rows = pol.shape[0];
  if (!gr.steps) fail_input("no 'steps' record after 'policies'");
  const Record& st = *gr.steps;
  if (st.shape.size() != 2 || st.shape[0] != pol.shape[0] || st.shape[1] != 3)
    fail_input("'steps' must have shape [" + std::to_string(n) + ", 3] (h1, h2, h3), got " +
               numpipe::shape_string(st.shape));
  Problem pb;
  pb.align_breaks = align;
  if (pol.attrs.contains("rate")) {
    if (!pol.attrs["rate"].is_number()) fail_input("'policies' attrs: rate must be a number");
    pb.rate = pol.attrs["rate"].get<double>();
  }
  pb.policies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Policy& p = pb.policies[i];
    p.g = pol.value_as_double(3 * i);
    p.r = pol.value_as_double(3 * i + 1);
    p.x = pol.value_as_double(3 * i + 2);
    int* hs[3] = {&p.h1, &p.h2, &p.h3};
    for (int j = 0; j < 3; ++j) {
      double v = st.value_as_double(3 * i + j);
      if (!(v >= 1 && v <= kMaxStepsPerYear) || v != std::floor(v))
        fail_input("policy " + std::to_string(i) + ": steps per year must be whole numbers in [1, " +
                   std::to_string(kMaxStepsPerYear) + "]: " + std::to_string(v));
      *hs[j] = static_cast<int>(v);
    }
  }
  if (gr.products) {
    auto v = table_values(*gr.products, rows, 7, "product, term, deferment, premium_term, benefit, premium, equivalence");
    for (std::size_t i = 0; i < n; ++i) {
      Policy& p = pb.policies[i];
      const double* row = v.data() + 7 * i;
      if (!(row[0] >= 0 && row[0] < kProductCodes) || row[0] != std::floor(row[0]))
        fail_input("'products' row " + std::to_string(i) + ": unknown product " + exact_text(row[0]) +
                   " (0 spouse pension, 1 life annuity, 2 term insurance, 3 pure endowment, 4 endowment insurance, "
                   "5 joint-life annuity, 6 last-survivor annuity)");
      if (row[6] != 0 && row[6] != 1)
        fail_input("'products' row " + std::to_string(i) + ": equivalence must be 0 or 1: " + exact_text(row[6]));
      p.product = static_cast<int>(row[0]);
      p.term = row[1];
      p.deferment = row[2];
      p.premium_term = row[3];
      p.benefit = row[4];
      p.premium = row[5];
      p.equivalence = row[6] == 1;
    }
  }
  if (!gr.mortality.empty()) {
    pb.laws.clear();
    for (std::size_t i = 0; i < gr.mortality.size(); ++i) pb.laws.push_back(read_law(*gr.mortality[i], i));
    if (pb.laws.size() == 1) pb.laws.push_back(default_laws()[1]);  // the spouse's by default
  }
  if (gr.lives) {
    auto v = table_values(*gr.lives, rows, 2, "insured, spouse: indices of 'mortality' records");
    for (std::size_t i = 0; i < n; ++i) {
      for (int j = 0; j < 2; ++j)
        if (v[2 * i + j] != std::floor(v[2 * i + j]) || !(v[2 * i + j] >= 0 && v[2 * i + j] < 1e6))
          fail_input("'lives' row " + std::to_string(i) + ": law indices must be whole numbers >= 0: " + exact_text(v[2 * i + j]));
      pb.policies[i].insured = static_cast<int>(v[2 * i]);
      pb.policies[i].spouse = static_cast<int>(v[2 * i + 1]);
    }
  }
  if (gr.marriage) {
    auto v = table_values(*gr.marriage, 0, 2, "age, probability");
    pb.spouse.marriage_table = true;
    for (std::size_t i = 0; i < v.size(); i += 2) {
      pb.spouse.marriage_age.push_back(v[i]);
      pb.spouse.marriage_prob.push_back(v[i + 1]);
    }
  }
  if (gr.spouse_age) {
    const std::string law = attr_string(*gr.spouse_age, "law");
    if (law == "normal") {
      auto v = table_values(*gr.spouse_age, -1, 2, "mean, sd");
      pb.spouse.mean = v[0];
      pb.spouse.sd = v[1];
    } else if (law == "table") {
      auto v = table_values(*gr.spouse_age, 0, 2, "difference, density");
      pb.spouse.age_table = true;
      for (std::size_t i = 0; i < v.size(); i += 2) {
        pb.spouse.age_diff.push_back(v[i]);
        pb.spouse.age_density.push_back(v[i + 1]);
      }
    } else {
      fail_input("'spouse_age' record: attrs law must be \"normal\" or \"table\", got '" + law + "'");
    }
  }
  if (gr.curve) {
    const Record& c = *gr.curve;
    if (c.shape.size() != 2 || c.shape[1] != 2)
      fail_input("'curve' must have shape [N, 2] (maturity, rate), got " + numpipe::shape_string(c.shape));
    for (std::size_t i = 0; i < static_cast<std::size_t>(c.shape[0]); ++i) {
      pb.curve.maturity.push_back(c.value_as_double(2 * i));
      pb.curve.rate.push_back(c.value_as_double(2 * i + 1));
    }
  }
  if (gr.second_life) {
    auto v = table_values(*gr.second_life, rows, 1, "the second life's age now, per policy");
    for (std::size_t i = 0; i < n; ++i) pb.policies[i].y = v[i];
  }
  for (std::size_t k = 0; k < gr.rate_basis.size(); ++k) {
    const Record& r = *gr.rate_basis[k];
    RateBasis b;
    b.name = attr_string(r, "name").empty() ? "rate " + std::to_string(k) : attr_string(r, "name");
    if (r.shape.size() == 1) {
      b.rate = table_values(r, -1, 1, "a constant rate")[0];
    } else {
      auto v = table_values(r, 0, 2, "maturity, zero rate");
      for (std::size_t i = 0; i < v.size(); i += 2) {
        b.curve.maturity.push_back(v[i]);
        b.curve.rate.push_back(v[i + 1]);
      }
    }
    pb.rate_bases.push_back(std::move(b));
  }
  if (gr.valuation_year) {
    auto v = table_values(*gr.valuation_year, rows, 1, "each policy's calendar year now");
    for (std::size_t i = 0; i < n; ++i) pb.policies[i].year = v[i];
  }
  if (gr.policy_rate) {
    auto v = table_values(*gr.policy_rate, rows, 1, "each policy's interest: an index of the rate_basis records, or -1");
    for (std::size_t i = 0; i < n; ++i) {
      if (v[i] != std::floor(v[i]) || !(v[i] >= -1 && v[i] < static_cast<double>(pb.rate_bases.size())))
        fail_input("'policy_rate' row " + std::to_string(i) + ": must be -1 or the index of one of the " +
                   std::to_string(pb.rate_bases.size()) + " 'rate_basis' records: " + exact_text(v[i]));
      pb.policies[i].rate_basis = static_cast<int>(v[i]);
    }
  }
  validate(pb);
  return pb;
}

// --repeat: the run above was the warm-up; N more, median per phase and of the total.
RecordFilter input_filter() {
  auto policies_seen = std::make_shared<double>(0);
  return [policies_seen](const RecordHeader& h) {
    static const char* const kGroupNames[] = {"policies",   "steps",       "curve",       "products",   "lives",
                                               "marriage",   "spouse_age",  "mortality",   "second_life",
                                               "policy_rate", "rate_basis",  "valuation_year"};
    const bool labels = is_labels(h);
    if (!labels && std::find(std::begin(kGroupNames), std::end(kGroupNames), h.name) == std::end(kGroupNames))
      return false;  // as group_records: other tools' records pass by
    if (h.name == "policies" && !h.shape.empty()) {
      *policies_seen += static_cast<double>(h.shape[0]);
      require_host_memory({std::to_string(static_cast<long long>(*policies_seen)) + " policies", *policies_seen,
                           kBytesPerPolicy, "policy"});
    }
    return true;
  };
}

void set_payments(std::vector<Problem>& problems, int frequency, bool advance, bool timing_given) {
  for (Problem& pb : problems) {
    pb.frequency = frequency;
    pb.advance = advance;
    for (std::size_t i = 0; i < pb.policies.size() && (frequency > 0 || timing_given); ++i) {
      const Policy& p = pb.policies[i];
      const char* option = timing_given ? "--timing" : "--frequency";
      if (p.product == kSpousePension)
        fail_input(std::string(option) + " does not apply to the spouse pension (policy " + std::to_string(i) + ")");
      const bool annuity = p.product == kLifeAnnuity || p.product == kJointLifeAnnuity || p.product == kLastSurvivorAnnuity;
      if (timing_given && !annuity && p.premium == 0 && !p.equivalence)
        fail_input("--timing applies to annuities and premiums: policy " + std::to_string(i) + " has neither");
    }
  }
}

void warn_if_unstable(const std::vector<Problem>& problems) {
  for (const Problem& pb : problems) {
    const std::string warning = faithful_stability_warning(pb);
    if (!warning.empty()) {
      std::fprintf(stderr, "integrate: warning: %s\n", warning.c_str());
      return;
    }
  }
}

void gather_result(const BatchRun& run, Result& res) {
  const std::vector<double> all = run.gather(std::vector<double>(res.reserve.begin(), res.reserve.end()));
  res.reserve.assign(all.begin(), all.end());
  res.premium = run.gather(res.premium);
  const std::vector<double> counts = run.gather(std::vector<double>{res.inner_steps, res.inner_steps_unshared});
  res.inner_steps = res.inner_steps_unshared = 0;
  for (std::size_t k = 0; k + 1 < counts.size(); k += 2) {
    res.inner_steps += counts[k];
    res.inner_steps_unshared += counts[k + 1];
  }
}

void require_plan_memory(const std::vector<Problem>& problems) {
  double policies = 0, bytes = 0;
  for (const Problem& pb : problems)
    for (const Policy& p : pb.policies) {
      policies += 1;
      bytes += kBytesPerPolicy + kBytesPerOuterPoint * (2.0 * p.h1 * std::max(0.0, 120 - p.x) + 1);
    }
  if (policies > 0)
    require_host_memory({std::to_string(static_cast<long long>(policies)) + " policies", policies,
                         std::ceil(bytes / policies), "policy (on average at these steps)"});
}

Problem steps_for_tolerance(const Problem& problem, double tolerance, const Engine& engine, Result& half) {
  int steps = 2;
  Result coarse = solve(with_steps(problem, 1), engine);
  for (;;) {
    Problem trial = with_steps(problem, steps);
    Result r = solve(trial, engine);
    const ErrorEstimate e = richardson_estimate(trial, r, coarse);
    if (e.relative <= tolerance) {
      half = std::move(coarse);
      return trial;
    }
    if (steps * 2 > kMaxStepsPerYear)
      fail_input("--tolerance " + value_text(tolerance) + " not reached at " + std::to_string(steps) +
                 " steps a year (estimated error " + value_text(e.relative) + " of the largest reserve): ask for less");
    coarse = std::move(r);
    steps *= 2;
  }
}

void check_reserves(const Result& result, std::size_t policies) {
  // NaN marks the years a policy's grid does not reach (documented); anything else
  // non-finite, and a NaN at t = 0 (always on the grid), is a bug.
  timeline::Scope check("check output");
  const double* reserve = result.reserve.data();
  const std::int64_t bad = first_where(policies * kYears, [reserve](std::int64_t k) {
    const double v = reserve[k];
    return std::isinf(v) || (k % kYears == 0 && std::isnan(v));
  });
  if (bad >= 0)
    fail_internal("reserve[" + std::to_string(bad / kYears) + ", " + std::to_string(bad % kYears) + "] is " +
                  value_text(reserve[bad]) + ": a reserve came out non-finite (please report the input)");
}

json reserve_attrs(const Group& group, const Problem& whole, const Problem& pb, const Result& res,
                   const std::optional<ErrorEstimate>& error, const std::optional<double>& tolerance,
                   const std::string& timing, Backend backend, int ranks) {
  json attrs = {{"kind", "integrate.reserve"},
                {"units", "currency units per unit of yearly pension"},
                {"align_breaks", pb.align_breaks},
                {"scheme", pb.align_breaks ? "aligned" : "faithful-gf820"},
                {"backend", backend_name(backend)},
                {"rate", pb.curve.empty() ? json(pb.rate) : json("curve")},
                {"inner_steps", res.inner_steps}};
  if (error) {  // Richardson: this run against one at half the steps
    attrs["error_estimate"] = error->absolute;
    attrs["error_estimate_relative"] = error->relative;
  }
  if (pb.frequency > 0) {  // discrete payments: what the reserves assume
    attrs["frequency"] = pb.frequency;
    attrs["timing"] = timing;
  }
  if (tolerance) {
    attrs["tolerance"] = *tolerance;
    attrs["steps_per_year"] = pb.policies.empty() ? 0 : pb.policies.front().h1;
  }
  if (ranks > 1) {
    attrs["ranks"] = ranks;
  } else if (res.table) {
    attrs["plan"] = "table";
    attrs["table_rows"] = res.columns;
    attrs["middle_values"] = res.middle_values;
  } else {
    attrs["plan"] = "columns";
    attrs["inner_columns"] = res.columns;  // a count; "columns" is a table's list of column names
  }
  if (group.products) {
    std::size_t single = 0;
    for (const Policy& p : whole.policies) single += p.product != kSpousePension;
    attrs["single_life_policies"] = single;
    attrs["units"] = "currency units, the benefits' unit";
  }
  return attrs;
}

void Totals::add(const Result& res, std::size_t group_policies) {
  table = table || res.table;
  inner_steps += res.inner_steps;
  inner_steps_unshared += res.inner_steps_unshared;
  policies += group_policies;
}

json Totals::params(bool align, std::size_t devices, int ranks) const {
  return {{"policies", policies},
          {"groups", groups},
          {"align_breaks", align},
          {"devices", devices},
          {"ranks", ranks},
          {"plan", table ? "table" : "columns"},
          {"inner_steps", inner_steps},
          {"inner_steps_unshared", inner_steps_unshared},
          {"flops_per_inner_step", kFlopsPerInnerStep}};
}

void write_group(StreamWriter& writer, const Group& group, const Problem& whole, const Result& res,
                 const json& stamped, const Valuation& valuation) {
  const std::size_t n = whole.policies.size();
  std::vector<double> year0(n);
  for (std::size_t i = 0; i < n; ++i) year0[i] = res.reserve[i * kYears];
  for (const Record* r : group.carried) writer.write(r->name, r->dtype, r->shape, r->payload.data(), r->attrs);
  json a_res = stamped;
  a_res["layout"] = "[policy, year]: reserve at t = 0..120 years from now; NaN past 120 - x";
  a_res["dims"] = {"policy", "year"};  // a table (policy, year), not a field on a grid: nps-export's rows
  writer.write<double>("reserve", {static_cast<std::int64_t>(n), kYears}, res.reserve.data(), a_res);
  json a0 = stamped;
  a0["layout"] = "[policy]: reserve at t = 0";
  a0["dims"] = {"policy"};
  writer.write<double>("reserve0", {static_cast<std::int64_t>(n)}, year0.data(), a0);
  if (group.products) {  // the level premium of each policy: as given, or solved for
    json ap = stamped;
    ap["layout"] = "[policy]: the level premium per year (as given, or the equivalence premium)";
    ap["dims"] = {"policy"};
    ap["units"] = "currency units per year";
    writer.write<double>("premium", {static_cast<std::int64_t>(n)}, res.premium.data(), ap);
  }
  if (!valuation.cash_flow.empty()) {  // a table (policy, year) of two columns: nps-export's rows
    json ac = stamped;
    ac["layout"] =
        "[policy, year, flow]: expected (survival-weighted) undiscounted amounts paid in year y (t in [y, y + 1)), "
        "flow 0 the benefits paid, 1 the premiums received; NaN: a spouse pension's benefits (not computed)";
    ac["dims"] = {"policy", "year"};
    ac["columns"] = {"benefit", "premium"};
    writer.write<double>("cash_flow", {static_cast<std::int64_t>(n), kYears, kCashFlowKinds},
                         valuation.cash_flow.data(), ac);
  }
  if (valuation.sensitivity) {
    json ad = stamped;
    ad["layout"] = "[policy, year]: effective duration -(1/V) dV/dr of the reserve V at t = 0..120 for a parallel shift "
                   "of the rate, premiums held; NaN where V is zero (to 1e-12 of the policy's largest) or past 120 - x";
    ad["dims"] = {"policy", "year"};
    ad["rate_shift"] = kRateShift;
    writer.write<double>("duration", {static_cast<std::int64_t>(n), kYears}, valuation.sensitivity->duration.data(), ad);
    json ar = stamped;
    ar["layout"] = "[policy, year]: dV/dr, the reserve's change per unit of the rate (per 1.0 = 100 %), premiums held";
    ar["dims"] = {"policy", "year"};
    ar["rate_shift"] = kRateShift;
    writer.write<double>("reserve_rate_derivative", {static_cast<std::int64_t>(n), kYears},
                         valuation.sensitivity->derivative.data(), ar);
  }
}

void report_repeats(const Problem& pb, const Result& first, int repeat, const std::function<Result()>& solve) {
  std::vector<std::vector<double>> times(first.log.phases().size() + 1);
  for (int i = 0; i < repeat; ++i) {
    numpipe::HostTimer wall;
    Result r = solve();
    double w = wall.seconds();
    const auto& ph = r.log.phases();
    for (std::size_t j = 0; j < ph.size() && j < times.size() - 1; ++j) times[j].push_back(ph[j].seconds);
    times.back().push_back(w);
  }
  std::fprintf(stderr, "integrate: %zu policies, %d runs after a warm-up, median seconds:", pb.policies.size(), repeat);
  double kernels = 0, inner = 0, flops = 0, fl[3] = {0, 0, 0};
  const char* levels[3] = {"inner", "middle", "outer"};
  for (std::size_t j = 0; j + 1 < times.size(); ++j) {
    double m = numpipe::median_of(times[j]);
    const auto& ph = first.log.phases()[j];
    for (int l = 0; l < 3; ++l)
      if (ph.name.rfind(levels[l], 0) == 0) {
        kernels += m;
        fl[l] += ph.flops;
        flops += ph.flops;
      }
    if (ph.name.rfind("inner", 0) == 0) inner += m;
    std::fprintf(stderr, " %s %.6g", ph.name.c_str(), m);
  }
  double wall = numpipe::median_of(times.back());
  std::fprintf(stderr, " | compute %.6g | wall %.6g\n", kernels, wall);
  if (first.table)
    std::fprintf(stderr,
                 "integrate: table plan: %zu table rows, inner RK4 steps %.6g; %zu Middle values for %zu outer stage "
                 "points\n",
                 first.columns, first.inner_steps, first.middle_values, first.requests);
  else
    std::fprintf(stderr, "integrate: inner RK4 steps %.6g (unshared %.6g), columns %zu, middle calls %zu\n",
                 first.inner_steps, first.inner_steps_unshared, first.columns, first.requests);
  if (flops > 0 && wall > 0 && kernels > 0)
    std::fprintf(stderr,
                 "integrate: counted flops %.6g GFLOP (inner %.4g, middle %.4g, outer %.4g): %.4g GFLOP/s over the "
                 "whole solve (wall), %.4g GFLOP/s over the kernels\n",
                 flops * 1e-9, fl[0] * 1e-9, fl[1] * 1e-9, fl[2] * 1e-9, flops / wall * 1e-9, flops / kernels * 1e-9);
  if (!first.table && inner > 0)
    std::fprintf(stderr,
                 "integrate: inner phase %.4g G RK4 steps/s, %.4g GFLOP/s (%g flops/step); unshared-equivalent "
                 "%.4g G steps/s over the compute time\n",
                 first.inner_steps / inner * 1e-9, first.inner_steps * kFlopsPerInnerStep / inner * 1e-9,
                 kFlopsPerInnerStep, first.inner_steps_unshared / kernels * 1e-9);
}

}  // namespace numpipe::integrate
