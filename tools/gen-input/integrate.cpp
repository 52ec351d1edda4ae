// gen-input integrate: policies and RK4 step settings for `integrate`: one policy
// from options, a random portfolio, or a text table; the products and their
// payments; the basis (each life's mortality law or table, the marriage and
// spouse-age assumptions); optionally a yield curve table. Text tables go through
// the common reader (CSV with a header, or whitespace columns). A portfolio is never
// held: its policies are drawn again from the seed for each record, whose rows are
// written in pieces (output.hpp), so memory is a piece whatever N.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>

#include "common/cli.hpp"
#include "common/memory.hpp"
#include "common/labels.hpp"
#include "common/random.hpp"
#include "common/text_table.hpp"
#include "common/strings.hpp"
#include "generator.hpp"
#include "output.hpp"
#include "kernels/integrate/integrate.hpp"
#include "kernels/integrate/units.hpp"

namespace numpipe {
namespace {

namespace ig = integrate;


std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<int> parse_steps(const std::string& text) {
  std::vector<int> v;
  for (const std::string& item : split_fields(text)) {
    try {
      std::size_t used = 0;
      long s = std::stol(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      v.push_back(static_cast<int>(s < -1 ? -1 : (s > 1000000 ? 1000000 : s)));
    } catch (const std::exception&) {
      fail_input("--steps must be three whole numbers H1,H2,H3, got '" + text + "'");
    }
  }
  if (v.size() != 3) fail_input("--steps must be three whole numbers H1,H2,H3, got '" + text + "'");
  return v;
}

// Product names (--product, a policies table's product column).
int product_code(const std::string& name, const std::string& where) {
  const std::string n = lower(name);
  static const std::map<std::string, int> names = {
      {"spouse", ig::kSpousePension},      {"spouse-pension", ig::kSpousePension},
      {"annuity", ig::kLifeAnnuity},       {"life-annuity", ig::kLifeAnnuity},
      {"term", ig::kTermInsurance},        {"term-insurance", ig::kTermInsurance},
      {"pure-endowment", ig::kPureEndowment}, {"endowment", ig::kEndowmentInsurance},
      {"endowment-insurance", ig::kEndowmentInsurance}, {"joint-life", ig::kJointLifeAnnuity},
      {"joint-life-annuity", ig::kJointLifeAnnuity}, {"last-survivor", ig::kLastSurvivorAnnuity},
      {"last-survivor-annuity", ig::kLastSurvivorAnnuity}};
  auto it = names.find(n);
  if (it == names.end())
    fail_input(where + "unknown product '" + name +
               "' (known: spouse, annuity, term, pure-endowment, endowment, joint-life, last-survivor; "
               "spouse-pension, life-annuity, term-insurance, endowment-insurance, joint-life-annuity, "
               "last-survivor-annuity also work)");
  return it->second;
}

// "P" or "equivalence".
void parse_premium(const std::string& text, const std::string& where, ig::Policy& p) {
  if (lower(text) == "equivalence") {
    p.equivalence = true;
    p.premium = 0;
    return;
  }
  double v = 0;
  if (!parse_number(text, v) || !std::isfinite(v))
    fail_input(where + "premium must be a number (per year) or 'equivalence': '" + text + "'");
  p.premium = v;
  p.equivalence = false;
}

// "[LIFE=]REST": LIFE names the law's life ("insured", "spouse", or the user's own
// name, which a policies table's insured/spouse columns refer to).
std::pair<std::string, std::string> split_life(const std::string& spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos) return {"insured", spec};
  std::string life = spec.substr(0, eq);
  bool ok = !life.empty();
  for (char c : life) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!ok) return {"insured", spec};  // a file name with '=' in it
  return {life, spec.substr(eq + 1)};
}

// --mortality [LIFE=]gm:A,B,C
ig::MortalityLaw parse_gm(const std::string& spec) {
  auto [life, rest] = split_life(spec);
  const std::string usage = "--mortality wants [insured=|spouse=|NAME=]gm:A,B,C (mu = A + 10^(B + C age)), got '" + spec + "'";
  if (rest.rfind("gm:", 0) != 0) fail_input(usage);
  std::vector<double> c;
  for (const std::string& item : split_fields(rest.substr(3))) {
    double v = 0;
    if (!parse_number(item, v) || !std::isfinite(v)) fail_input(usage);
    c.push_back(v);
  }
  if (c.size() != 3) fail_input(usage);
  return ig::gompertz_makeham(life, c[0], c[1], c[2]);
}

// --select [LIFE=]N,F: a select period of N years in which the force is F^(N - s) times
// the life's law (Dickson, Hardy and Waters' Standard Select Survival Model: 2,0.9).
void parse_select(const std::string& spec, std::map<std::string, std::pair<int, double>>& select) {
  auto [life, rest] = split_life(spec);
  const std::vector<std::string> f = split_fields(rest);
  double years = 0, factor = 0;
  if (f.size() != 2 || !parse_number(f[0], years) || !parse_number(f[1], factor) || years != std::floor(years) ||
      !(years >= 1 && years <= 10) || !(factor > 0 && factor <= 10))
    fail_input("--select wants [LIFE=]N,F: a select period of N whole years (1 to 10) and a factor F in (0, 10], got '" +
               spec + "'");
  select[life] = {static_cast<int>(years), factor};
}

// --select-table [LIFE=]FILE: ages at selection [x], then d columns q_[x] .. q_[x]+d-1,
// then the ultimate q_x (by age x), checked with the file's line numbers.
ig::MortalityLaw read_select_table(const std::string& spec) {
  auto [life, path] = split_life(spec);
  TextTable t = read_text_table(path);
  if (t.columns() < 3 || t.columns() > 12)
    fail_input("--select-table: " + path + ": want columns age, q_[x], ..., q_[x]+d-1 and the ultimate q_x (d from 1 to 10), got " +
               std::to_string(t.columns()) + " columns");
  const std::size_t d = t.columns() - 2;
  ig::MortalityLaw m;
  m.name = life;
  m.table = true;
  m.source = path;
  m.select_years = static_cast<int>(d);
  m.ages = t.numbers(0);
  m.values = t.numbers(d + 1);
  std::vector<std::vector<double>> sel;
  for (std::size_t k = 0; k < d; ++k) sel.push_back(t.numbers(k + 1));
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string at = "--select-table: " + t.where(i) + "age " + exact_text(m.ages[i]) + ": ";
    if (m.ages[i] != std::floor(m.ages[i]) || m.ages[i] < 0 || m.ages[i] > 200) fail_input(at + "ages must be whole numbers in [0, 200]");
    if (i > 0 && m.ages[i] != m.ages[i - 1] + 1) fail_input(at + "ages must increase by 1 from row to row, after " + exact_text(m.ages[i - 1]));
    for (std::size_t k = 0; k < d; ++k) {
      if (!(sel[k][i] >= 0 && sel[k][i] < 1)) fail_input(at + "select rates q_[x]+k must be in [0, 1): " + exact_text(sel[k][i]));
      m.select_q.push_back(sel[k][i]);
    }
    if (!(m.values[i] >= 0 && m.values[i] <= 1)) fail_input(at + "q_x must be in [0, 1]: " + exact_text(m.values[i]));
  }
  try {
    ig::validate_law(m);  // coverage (the last row reaches 120), the forces
  } catch (const Error& e) {
    fail_input("--select-table: " + path + ": " + e.what());
  }
  return m;
}

// --improvement [LIFE=]FILE[:COLUMN]: ages and yearly improvement factors AI_x for the
// life's table of q_x (its base year --base-year); ages the file lacks improve by 0.
void read_improvement(const std::string& spec, ig::MortalityLaw& m, double base_year);

// --improvement-table [LIFE=]FILE: rates AI(x, year) by age (rows, the first column) and
// calendar year (the other columns, named by their years); ages the file lacks improve by 0.
void read_improvement_table(const std::string& spec, ig::MortalityLaw& m, double base_year);

// The one numeric column of a table besides `taken`, or the one chosen by `pick`.
std::size_t value_column(const TextTable& t, std::size_t taken, const std::string& pick, const std::string& option,
                         const std::string& what) {
  if (!pick.empty()) return t.column(pick, option);
  std::vector<std::size_t> cand;
  for (std::size_t c = 0; c < t.columns(); ++c)
    if (c != taken && t.is_numeric(c)) cand.push_back(c);
  if (cand.size() == 1) return cand[0];
  std::string names;
  for (std::size_t c : cand) names += (names.empty() ? "" : ", ") + t.names[c];
  fail_input(option + ": " + t.source + " has " + (cand.empty() ? "no column" : "several columns (" + names + ")") +
             " for the " + what + ": pick one with " + t.source + ":COLUMN");
}

// FILE or FILE:COLUMN (a whole existing file name wins).
std::pair<std::string, std::string> split_column(const std::string& spec) {
  if (std::ifstream(spec).good() || spec == "-") return {spec, ""};
  auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0) return {spec, ""};
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

// --mortality-table [LIFE=]FILE[:COLUMN]: ages and q_x (or mu_x: a column whose
// name starts with "mu"), checked row by row with the file's line numbers.
ig::MortalityLaw read_mortality_table(const std::string& spec) {
  auto [life, rest] = split_life(spec);
  auto [path, pick] = split_column(rest);
  const std::string option = "--mortality-table";
  TextTable t = read_text_table(path);
  std::size_t age_col = 0;
  if (t.has_header) {
    for (std::size_t c = 0; c < t.columns(); ++c)
      if (lower(t.names[c]) == "age" || lower(t.names[c]) == "x") age_col = c;
  }
  std::size_t val_col = value_column(t, age_col, pick, option, "rates (q_x or mu_x)");
  ig::MortalityLaw m;
  m.name = life;
  m.table = true;
  m.source = path + (t.has_header ? ":" + t.names[val_col] : "");
  const std::string vname = lower(t.names[val_col]);
  if (!t.has_header || vname.rfind("q", 0) == 0) {
    m.q = true;
  } else if (vname.rfind("mu", 0) == 0) {
    m.q = false;
  } else {
    fail_input(option + ": " + path + ": column '" + t.names[val_col] +
               "': name it q... (one-year death probabilities q_x) or mu... (forces of mortality mu_x)");
  }
  m.ages = t.numbers(age_col);
  m.values = t.numbers(val_col, true);
  // Row by row, naming the file's line: ages whole and consecutive, values in range.
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double a = m.ages[i], v = m.values[i];
    const std::string at = t.where(i) + "age " + exact_text(a) + ": ";
    if (a != std::floor(a) || a < 0 || a > 200) fail_input(at + "ages must be whole numbers in [0, 200]");
    if (i > 0 && a != m.ages[i - 1] + 1) fail_input(at + "ages must increase by 1 from row to row, after " + exact_text(m.ages[i - 1]));
    if (m.q && !(v >= 0 && v <= 1)) fail_input(at + "q_x must be in [0, 1]: " + exact_text(v));
    if (m.q && v == 1 && a < ig::kMaxAge)
      fail_input(at + "q_x = 1 below age 120 (an infinite force of mortality; every life ends at 120 here)");
    if (!m.q && !(v >= 0 && std::isfinite(v))) fail_input(at + "mu_x must be finite and >= 0: " + exact_text(v));
  }
  ig::validate_law(m);  // coverage (the last row reaches 120), the forces
  return m;
}

void read_improvement(const std::string& spec, ig::MortalityLaw& m, double base_year) {
  auto [life, rest] = split_life(spec);
  auto [path, pick] = split_column(rest);
  TextTable t = read_text_table(path);
  const std::size_t c = value_column(t, 0, pick, "--improvement", "improvement factors");
  const std::vector<double> ages = t.numbers(0), ai = t.numbers(c);
  if (!m.table || !m.q)
    fail_input("--improvement " + life + "=...: the life's law must be a table of q_x (--mortality-table)");
  if (m.improving_by_year())
    fail_input("--improvement " + life + "=...: the life's law has improvement rates by year already (--improvement-table)");
  m.improvement.assign(m.ages.size(), 0.0);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(ai[i] >= 0 && ai[i] < 1))
      fail_input("--improvement: " + t.where(i) + "age " + exact_text(ages[i]) + ": AI_x must be in [0, 1): " + exact_text(ai[i]));
    for (std::size_t r = 0; r < m.ages.size(); ++r)
      if (m.ages[r] == ages[i]) m.improvement[r] = ai[i];
  }
  m.improvement_base_year = base_year;
  ig::validate_law(m);
}

void read_improvement_table(const std::string& spec, ig::MortalityLaw& m, double base_year) {
  auto [life, path] = split_life(spec);
  const std::string option = "--improvement-table";
  if (!m.table || !m.q)
    fail_input(option + " " + life + "=...: the life's law must be a table of q_x (--mortality-table)");
  if (m.improving()) fail_input(option + " " + life + "=...: the life's law has improvement rates already (--improvement)");
  TextTableOptions header;
  header.header = TextTableOptions::Header::present;
  const TextTable t = read_text_table(path, header);
  if (t.columns() < 2) fail_input(option + ": " + path + ": want the ages and one column per calendar year");
  const std::size_t years = t.columns() - 1;
  for (std::size_t c = 1; c <= years; ++c) {
    double year = 0;
    if (!parse_number(t.names[c], year) || year != std::floor(year))
      fail_input(option + ": " + path + ": column " + std::to_string(c + 1) + " is named '" + t.names[c] +
                 "': name each column after the first by its calendar year");
    m.improvement_years.push_back(year);
  }
  const std::vector<double> ages = t.numbers(0);
  std::vector<std::vector<double>> rates;
  for (std::size_t c = 1; c <= years; ++c) rates.push_back(t.numbers(c));
  m.improvement_by_year.assign(m.ages.size() * years, 0.0);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && !(ages[i] > ages[i - 1]))
      fail_input(option + ": " + t.where(i) + "age " + exact_text(ages[i]) + ": ages must increase, after " + exact_text(ages[i - 1]));
    for (std::size_t c = 0; c < years; ++c)
      if (!(rates[c][i] >= 0 && rates[c][i] < 1))
        fail_input(option + ": " + t.where(i) + "age " + exact_text(ages[i]) + ", year " + t.names[c + 1] +
                   ": the improvement rate must be in [0, 1): " + exact_text(rates[c][i]));
    for (std::size_t r = 0; r < m.ages.size(); ++r)
      if (m.ages[r] == ages[i])
        for (std::size_t c = 0; c < years; ++c) m.improvement_by_year[r * years + c] = rates[c][i];
  }
  m.improvement_base_year = base_year;
  try {
    ig::validate_law(m);  // the years: whole, consecutive, from the year after the base year at the latest
  } catch (const Error& e) {
    fail_input(option + ": " + path + ": " + e.what());
  }
}

// Two numeric columns (x, y) of a table: the first and the chosen (or only other) one.
void read_two_columns(const std::string& spec, const std::string& option, const std::string& what,
                      std::vector<double>& x, std::vector<double>& y) {
  auto [path, pick] = split_column(spec);
  TextTable t = read_text_table(path);
  std::size_t c = value_column(t, 0, pick, option, what);
  x = t.numbers(0);
  y = t.numbers(c);
}

// --spouse-age normal:MEAN,SD or a table FILE (difference, density).
void parse_spouse_age(const std::string& spec, ig::SpouseBasis& s) {
  if (spec.rfind("normal:", 0) == 0) {
    const std::vector<std::string> fields = split_fields(spec.substr(7));
    std::vector<double> c(fields.size());
    bool numbers = c.size() == 2;
    for (std::size_t i = 0; i < c.size(); ++i) numbers = numbers && parse_number(fields[i], c[i]);
    if (!numbers)
      fail_input("--spouse-age wants normal:MEAN,SD (the spouse's age minus the insured's) or a table file, got '" +
                 spec + "'");
    s.age_table = false;
    s.mean = c[0];
    s.sd = c[1];
    return;
  }
  s.age_table = true;
  read_two_columns(spec, "--spouse-age", "density", s.age_diff, s.age_density);
}

// A policies table: without a header three numbers a row (g r x); with one, columns
// by name (x, and any of g, r, product, term, deferment, premium_term, benefit,
// premium, insured, spouse, policy), the options giving the rest.
void read_curve(const std::string& path, ig::Curve& curve);

// A policies table's rate column: a number (a constant rate) or a yield curve's file;
// each distinct one an interest basis of the problem (Policy::rate_basis).
int rate_basis_of(const std::string& text, ig::Problem& pb, const std::string& where) {
  for (std::size_t k = 0; k < pb.rate_bases.size(); ++k)
    if (pb.rate_bases[k].name == text) return static_cast<int>(k);
  ig::RateBasis b;
  b.name = text;
  double v = 0;
  if (parse_number(text, v)) {
    if (!std::isfinite(v) || v <= -1 || v >= 1) fail_input(where + "rate must be a fraction in (-1, 1) or a curve file: '" + text + "'");
    b.rate = v;
  } else {
    read_curve(text, b.curve);  // a file's errors name the file
  }
  pb.rate_bases.push_back(std::move(b));
  return static_cast<int>(pb.rate_bases.size()) - 1;
}

std::vector<ig::Policy> read_policies(const std::string& path, const ig::Policy& base,
                                      const std::map<std::string, int>& laws, std::vector<std::string>& labels,
                                      ig::Problem& pb) {
  TextTable t = read_text_table(path);
  std::vector<ig::Policy> out(t.size(), base);
  if (!t.has_header) {
    if (t.columns() != 3)
      fail_input(path + ": want three columns g r x (or a header line naming the columns), got " +
                 std::to_string(t.columns()));
    auto g = t.numbers(0), r = t.numbers(1), x = t.numbers(2);
    for (std::size_t i = 0; i < t.size(); ++i) {
      out[i].g = g[i];
      out[i].r = r[i];
      out[i].x = x[i];
    }
    return out;
  }
  static const std::map<std::string, std::string> aliases = {
      {"g", "g"},         {"guarantee", "g"}, {"r", "r"},           {"retirement", "r"},
      {"x", "x"},         {"age", "x"},       {"product", "product"}, {"term", "term"},
      {"deferment", "deferment"},             {"premium_term", "premium_term"}, {"premium-term", "premium_term"},
      {"benefit", "benefit"}, {"premium", "premium"}, {"insured", "insured"}, {"spouse", "spouse"},
      {"policy", "policy"}, {"name", "policy"}, {"y", "y"}, {"second_age", "y"}, {"second-age", "y"},
      {"rate", "rate"}, {"year", "year"}, {"valuation_year", "year"}};
  std::map<std::string, std::size_t> col;
  for (std::size_t c = 0; c < t.columns(); ++c) {
    auto it = aliases.find(lower(t.names[c]));
    if (it == aliases.end())
      fail_input(path + ": unknown column '" + t.names[c] +
                 "' (known: g, r, x, product, term, deferment, premium_term, benefit, premium, insured, spouse, "
                 "policy, y, rate, year)");
    if (col.count(it->second)) fail_input(path + ": two columns for '" + it->second + "'");
    col[it->second] = c;
  }
  if (!col.count("x")) fail_input(path + ": no column 'x' (the insured's age now)");
  // Numbers by column; an empty field keeps the options' value.
  auto numbers = [&](const char* k, double ig::Policy::*field) {
    if (!col.count(k)) return;
    auto v = t.strings(col[k]);
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (v[i].empty()) continue;
      double x = 0;
      if (!parse_number(v[i], x) || !std::isfinite(x))
        fail_input(t.where(i) + "column '" + t.names[col[k]] + "': not a finite number: '" + v[i] + "'");
      out[i].*field = x;
    }
  };
  numbers("g", &ig::Policy::g);
  numbers("r", &ig::Policy::r);
  numbers("x", &ig::Policy::x);
  numbers("term", &ig::Policy::term);
  numbers("deferment", &ig::Policy::deferment);
  numbers("benefit", &ig::Policy::benefit);
  numbers("premium_term", &ig::Policy::premium_term);
  numbers("y", &ig::Policy::y);
  numbers("year", &ig::Policy::year);
  for (std::size_t i = 0; col.count("premium_term") && i < t.size(); ++i)
    if (!(out[i].premium_term >= 0)) fail_input(t.where(i) + "premium_term must be >= 0 years: " + exact_text(out[i].premium_term));
  auto text = [&](const char* k) { return col.count(k) ? t.strings(col[k]) : std::vector<std::string>{}; };
  auto products = text("product"), premiums = text("premium"), insured = text("insured"), spouse = text("spouse"),
       rates = text("rate");
  auto law_of = [&](const std::string& name, std::size_t i) {
    auto it = laws.find(name);
    if (it == laws.end()) {
      std::string known;
      for (const auto& kv : laws) known += (known.empty() ? "" : ", ") + kv.first;
      fail_input(t.where(i) + "no mortality law named '" + name + "' (given: " + known +
                 "; name one with --mortality NAME=gm:A,B,C or --mortality-table NAME=FILE)");
    }
    return it->second;
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    ig::Policy& p = out[i];
    if (!products.empty() && !products[i].empty()) p.product = product_code(products[i], t.where(i));
    if (!premiums.empty() && !premiums[i].empty()) parse_premium(premiums[i], t.where(i), p);
    if (!insured.empty() && !insured[i].empty()) p.insured = law_of(insured[i], i);
    if (!spouse.empty() && !spouse[i].empty()) p.spouse = law_of(spouse[i], i);
    if (!rates.empty() && !rates[i].empty()) p.rate_basis = rate_basis_of(rates[i], pb, t.where(i));
  }
  if (col.count("policy")) labels = t.strings(col["policy"]);
  return out;
}

// ---- A random portfolio: drawn from its seed, policy by policy ------------------------

struct Portfolio {
  std::size_t n = 0;
  std::uint64_t seed = 1;
  bool mixed = false;  // --product mixed: products drawn too
  ig::Policy base;     // the options' policy: what is not drawn

  // The next policy of the draws: x, r, g (and with mixed the product and its term).
  ig::Policy draw(Rng& rng) const {
    ig::Policy p = base;
    p.x = static_cast<double>(rng.integer(20, 70));
    p.r = static_cast<double>(rng.integer(60, 70));
    p.g = static_cast<double>(rng.integer(0, 15));
    if (mixed) {
      // Each product alike; a deferred annuity from retirement (5 years past it),
      // the other terms whole in [5, 30].
      p.product = static_cast<int>(rng.integer(0, ig::kEndowmentInsurance));  // the five of one life
      const double term = static_cast<double>(rng.integer(5, 30));
      p.term = p.product == ig::kLifeAnnuity ? ig::kMaxAge : term;
      p.deferment = p.product == ig::kLifeAnnuity ? (p.x < p.r ? p.r - p.x : 5.0) : 0.0;
    }
    // Equivalence where there are premiums to solve for (a spouse pension past
    // retirement has none: its single premium is its reserve at inception).
    if (p.equivalence && !(ig::premium_term_of(p) > 0)) p.equivalence = false;
    return p;
  }

  json attrs() const {
    json port = {{"n", n}, {"seed", seed}, {"x", "whole, uniform on [20, 70]"},
                 {"r", "whole, uniform on [60, 70]"}, {"g", "whole, uniform on [0, 15]"}};
    if (mixed)
      port["products"] = "each of spouse, annuity (deferred to retirement, or 5 years), term, pure-endowment, "
                         "endowment alike; terms whole, uniform on [5, 30]";
    return port;
  }
};

// The policies in order, held (the options' one, a table's) or drawn: a portfolio is
// never held, its draws are replayed from the seed for each pass over it (the checks,
// then each record), so memory is a policy, not the portfolio.
class PolicyCursor {
 public:
  PolicyCursor(const std::vector<ig::Policy>& held, const std::optional<Portfolio>& drawn)
      : held_(held), drawn_(drawn), rng_(drawn ? drawn->seed : 0) {}
  std::size_t size() const { return drawn_ ? drawn_->n : held_.size(); }
  // Policy i; i never goes back.
  const ig::Policy& at(std::size_t i) {
    if (!drawn_) return held_[i];
    for (; next_ <= i; ++next_) current_ = drawn_->draw(rng_);
    return current_;
  }

 private:
  const std::vector<ig::Policy>& held_;
  const std::optional<Portfolio>& drawn_;
  Rng rng_;
  std::size_t next_ = 0;  // the draws made
  ig::Policy current_;
};

// The records a stream needs beyond policies and steps: products where a policy is
// not the spec's spouse pension to age 120, lives where a policy names other laws.
struct OptionalRecords {
  bool products = false, lives = false, second_life = false, policy_rate = false, valuation_year = false;
  void note(const ig::Policy& p) {
    second_life = second_life || p.product == ig::kJointLifeAnnuity || p.product == ig::kLastSurvivorAnnuity;
    policy_rate = policy_rate || p.rate_basis >= 0;
    products = products || !ig::plain_spouse_pension(p) || p.term < ig::kMaxAge - p.x;  // a term: written
    lives = lives || p.insured != 0 || p.spouse != 1;
  }
};

// ig::validate over the policies, before any byte is written. A portfolio is checked
// as drawn, with the same checks in the same order as on the whole portfolio, so that
// the same message names the same policy: ig::validate on policy 0 (the rate, the
// curve, the ranges, the basis, policy 0's payments; the ranges hold for every drawn
// policy or fail at policy 0, since x, r and g are drawn within them and the steps are
// the options'), then each other policy's payments.
OptionalRecords validate_policies(ig::Problem& pb, const std::optional<Portfolio>& portfolio) {
  OptionalRecords records;
  if (!portfolio) {
    ig::validate(pb);
    for (const ig::Policy& p : pb.policies) records.note(p);
    return records;
  }
  const std::vector<ig::Policy> none;
  PolicyCursor cursor(none, portfolio);
  pb.policies = {cursor.at(0)};
  ig::validate(pb);
  records.note(pb.policies[0]);
  const std::string first = "policy 0: ";
  for (std::size_t i = 1; i < cursor.size(); ++i) {
    pb.policies[0] = cursor.at(i);
    try {
      ig::validate_policy_payments(pb, 0);
    } catch (const Error& e) {  // the message names the policy checked as policy 0
      const std::string what = e.what();
      if (what.rfind(first, 0) != 0) throw;
      throw Error(e.code(), "policy " + std::to_string(i) + ": " + what.substr(first.size()));
    }
    records.note(pb.policies[0]);
  }
  pb.policies.clear();
  return records;
}

// ---- The steps of run_integrate -------------------------------------------------------

Cli integrate_cli() {
  Cli cli({"gen-input integrate",
           "Write policies, their products and payments, the basis and RK4 step settings for integrate", "",
           "  gen-input integrate --g 10 --r 65 --x 35 --steps 10,2,10 | integrate | inspect\n"
           "  gen-input integrate --portfolio 1000 --seed 7 --steps 2,2,2 | integrate -o reserve.nps\n"
           "  gen-input integrate --product annuity --x 40 --deferment 25 --premium equivalence | integrate | inspect\n"
           "  gen-input integrate --product endowment --x 45 --term 20 --mortality-table "
           "share/examples/integrate-life-table.csv:q_male | integrate | inspect",
           "the policies and step settings for integrate",
           "Accepted for symmetry with the other tools (gen-input integrate shows no progress line)"},
          kOutput | kTextInput);
  cli.add("Policies")("g,guarantee", "Guarantee years of the spouse pension (--g G also works)",
                      cxxopts::value<double>()->default_value("10"), "G")(
      "r,retirement", "Retirement age (--r R also works)", cxxopts::value<double>()->default_value("65"), "R")(
      "x,age", "Age of the insured now (--x X also works)", cxxopts::value<double>()->default_value("35"), "X")(
      "steps", "RK4 steps per year of the outer, middle and inner levels",
      cxxopts::value<std::string>()->default_value("10,2,10"), "H1,H2,H3")(
      "portfolio", "N random policies: x whole in [20, 70], r whole in [60, 70], g whole in [0, 15]",
      cxxopts::value<std::int64_t>(), "N")("seed", "Random seed for --portfolio",
                                            cxxopts::value<std::uint64_t>()->default_value("1"), "S")(
      "from-text", "Policies from a text table: columns g r x, or a header naming columns (x, and any of g, r, "
                   "product, term, deferment, premium_term, benefit, premium, insured, spouse, policy)",
      cxxopts::value<std::string>(), "FILE");
  cli.add("Products")("product",
                      "spouse (the collective spouse pension), annuity (life annuity), term (term insurance), "
                      "pure-endowment, endowment (endowment insurance), joint-life or last-survivor (annuities on "
                      "two lives: the insured and a second life, --second-age); with --portfolio also mixed (spouse "
                      "and the four single-life products at random)",
                      cxxopts::value<std::string>()->default_value("spouse"), "NAME")(
      "term", "Years to the product's term (default: to age 120)", cxxopts::value<double>(), "N")(
      "deferment", "Life annuity: years until its payments start (default 0: immediate)", cxxopts::value<double>(),
      "M")("premium-term",
           "Years of premium payments (default: until retirement, until the annuity starts, or the term)",
           cxxopts::value<double>(), "T")(
      "second-age", "Joint-life and last-survivor annuities: the second life's age now (its law: the spouse's)",
      cxxopts::value<double>(), "Y")(
      "benefit", "Pension or annuity rate per year, or the sum insured", cxxopts::value<double>()->default_value("1"),
      "B")("premium", "Level premium per year, or 'equivalence': the premium that makes the reserve at inception zero",
           cxxopts::value<std::string>()->default_value("0"), "P");
  cli.add("Basis")("mortality",
                   "A life's mortality law, mu(a) = A + 10^(B + C a); LIFE: insured (the default), spouse, or a name "
                   "a policies table refers to (repeatable)",
                   cxxopts::value<std::vector<std::string>>(), "[LIFE=]gm:A,B,C")(
      "mortality-table",
      "A life's mortality table: ages and q_x (or mu_x: a column named mu...), constant force within each year "
      "of age; COLUMN picks one of several (repeatable)",
      cxxopts::value<std::vector<std::string>>(), "[LIFE=]FILE[:COLUMN]")(
      "select",
      "A select period for a life's law: N years after the policy's start in which the force is F^(N - s) "
      "times the law's (2,0.9: the Standard Select Survival Model) (repeatable)",
      cxxopts::value<std::vector<std::string>>(), "[LIFE=]N,F")(
      "select-table",
      "A life's select table: columns age at selection, q_[x], ..., q_[x]+d-1 and the ultimate q_x (repeatable)",
      cxxopts::value<std::vector<std::string>>(), "[LIFE=]FILE")(
      "improvement",
      "Mortality improvement for a life's table of q_x: ages and yearly factors AI_x, q_x(year) = q_x (1 - "
      "AI_x)^(year - the base year) (repeatable)",
      cxxopts::value<std::vector<std::string>>(), "[LIFE=]FILE[:COLUMN]")(
      "improvement-table",
      "Mortality improvement rates by age (rows) and calendar year (a column a year, named by it) for a life's "
      "table of q_x: q_x(year) = q_x(year - 1) (1 - AI(x, year)), the last year's rates after it (repeatable)",
      cxxopts::value<std::vector<std::string>>(), "[LIFE=]FILE")(
      "base-year", "The calendar year of the tables that --improvement or --improvement-table improves",
      cxxopts::value<double>(), "Y")(
      "valuation-year", "The calendar year now, of the policies' ages (default: --base-year)",
      cxxopts::value<double>(), "Y")(
      "marriage", "Probability of being married by age: parabola (the default) or a table (age, probability)",
      cxxopts::value<std::string>()->default_value("parabola"), "parabola|FILE")(
      "spouse-age",
      "The spouse's age minus the insured's: normal:MEAN,SD (default normal:0,3) or a table (difference, density)",
      cxxopts::value<std::string>()->default_value("normal:0,3"), "normal:MEAN,SD|FILE");
  cli.add("Interest")("curve", "Yield curve table: two columns maturity (years) and zero rate (fraction)",
                      cxxopts::value<std::string>(), "FILE")(
      "rate", "Constant interest rate when there is no curve", cxxopts::value<double>()->default_value("0.05"), "R");
  return cli;
}

// The basis: the rate, each life's law in the order given after the two defaults
// (insured, spouse), the marriage and spouse-age assumptions. Returns the laws' index
// by name (a policies table names them).
std::map<std::string, int> read_basis(const Cli& cli, ig::Problem& pb) {
  pb.rate = cli.get<double>("rate");
  std::map<std::string, int> law_index = {{"insured", 0}, {"spouse", 1}};
  auto set_law = [&](ig::MortalityLaw m) {
    auto it = law_index.find(m.name);
    if (it != law_index.end()) {
      pb.laws[static_cast<std::size_t>(it->second)] = std::move(m);
    } else {
      law_index[m.name] = static_cast<int>(pb.laws.size());
      pb.laws.push_back(std::move(m));
    }
  };
  std::map<std::string, std::pair<int, double>> select;
  for (const auto& kv : cli.args().arguments()) {  // each occurrence, unsplit (a law holds commas)
    if (kv.key() == "mortality") set_law(parse_gm(kv.value()));
    if (kv.key() == "mortality-table") set_law(read_mortality_table(kv.value()));
    if (kv.key() == "select-table") set_law(read_select_table(kv.value()));
    if (kv.key() == "select") parse_select(kv.value(), select);
  }
  for (const auto& kv : cli.args().arguments()) {
    if (kv.key() != "improvement" && kv.key() != "improvement-table") continue;
    const std::string option = "--" + kv.key();
    if (!cli.has("base-year")) fail_input(option + " needs --base-year: the calendar year of the life's table");
    const std::string life = split_life(kv.value()).first;
    auto it = law_index.find(life);
    if (it == law_index.end()) fail_input(option + " " + life + "=...: no mortality law named '" + life + "'");
    ig::MortalityLaw& law = pb.laws[static_cast<std::size_t>(it->second)];
    if (kv.key() == "improvement") read_improvement(kv.value(), law, cli.get<double>("base-year"));
    else read_improvement_table(kv.value(), law, cli.get<double>("base-year"));
  }
  for (const auto& [life, period] : select) {  // on the life's law, whichever option gave it
    auto it = law_index.find(life);
    if (it == law_index.end()) fail_input("--select " + life + "=...: no mortality law named '" + life + "'");
    ig::MortalityLaw& m = pb.laws[static_cast<std::size_t>(it->second)];
    if (!m.select_q.empty()) fail_input("--select " + life + "=...: the life's law is a select table already");
    m.select_years = period.first;
    m.select_factor = period.second;
    ig::validate_law(m);
  }
  const std::string marriage = cli.get<std::string>("marriage");
  if (marriage != "parabola") {
    pb.spouse.marriage_table = true;
    read_two_columns(marriage, "--marriage", "probability", pb.spouse.marriage_age, pb.spouse.marriage_prob);
  }
  parse_spouse_age(cli.get<std::string>("spouse-age"), pb.spouse);
  return law_index;
}

// The options' policy (a portfolio's and a table's defaults).
ig::Policy options_policy(const Cli& cli, const std::vector<int>& steps, bool mixed) {
  ig::Policy base;
  base.product = mixed ? ig::kSpousePension : product_code(lower(cli.get<std::string>("product")), "--product: ");
  base.g = cli.get<double>("guarantee");
  base.r = cli.get<double>("retirement");
  base.x = cli.get<double>("age");
  base.h1 = steps[0];
  base.h2 = steps[1];
  base.h3 = steps[2];
  base.term = cli.has("term") ? cli.get<double>("term") : ig::kMaxAge;
  base.deferment = cli.has("deferment") ? cli.get<double>("deferment") : 0.0;
  if (cli.has("premium-term")) {
    base.premium_term = cli.get<double>("premium-term");
    if (!(base.premium_term >= 0)) fail_input("--premium-term must be >= 0 years: " + exact_text(base.premium_term));
  }
  base.benefit = cli.get<double>("benefit");
  if (cli.has("second-age")) base.y = cli.get<double>("second-age");
  if (cli.has("base-year")) base.year = cli.get<double>("base-year");
  if (cli.has("valuation-year")) base.year = cli.get<double>("valuation-year");
  parse_premium(cli.get<std::string>("premium"), "--premium: ", base);
  return base;
}

// --portfolio N: checked, and the memory its pieces take (exit 3 where they exceed the
// memory the run may use).
Portfolio portfolio_of(const Cli& cli, const ig::Policy& base, bool mixed) {
  const std::int64_t n = cli.get<std::int64_t>("portfolio");
  if (n < 1 || n > 100000000) fail_input("--portfolio must be in [1, 100000000]: " + std::to_string(n));
  Portfolio port;
  port.n = static_cast<std::size_t>(n);
  port.seed = cli.get<std::uint64_t>("seed");
  port.mixed = mixed;
  port.base = base;
  const double largest = 8.0 * 7 * static_cast<double>(n);  // the products record
  require_host_memory({"a portfolio of " + std::to_string(n) + " policies (written in pieces of " +
                           format_bytes(double(StreamWriter::kPieceBytes)) + ")",
                       std::min(largest, double(StreamWriter::kPieceBytes)), 1.0, "byte"});
  return port;
}

// --curve FILE: maturities and zero rates.
void read_curve(const std::string& path, ig::Curve& curve) {
  TextTable t = read_text_table(path);
  if (t.columns() != 2) fail_input(path + ": want two columns (maturity, zero rate), got " + std::to_string(t.columns()));
  curve.maturity = t.numbers(0);
  curve.rate = t.numbers(1);
  try {
    ig::validate_curve(curve);
  } catch (const Error& e) {
    fail_input(path + ": " + e.what());
  }
}

// The policies' records: policies, steps, the curve, then products and lives where
// wanted; each row made from its policy as the pieces are written.
void write_policy_records(StreamWriter& w, const ig::Problem& pb, const std::optional<Portfolio>& portfolio,
                          OptionalRecords wanted, json attrs) {
  const std::size_t n = portfolio ? portfolio->n : pb.policies.size();
  attrs["columns"] = {"g", "r", "x"};
  attrs["dims"] = {"policy", "column"};
  PolicyCursor for_policies(pb.policies, portfolio);
  write_rows<double, 3>(w, "policies", n, attrs, [&](std::size_t i, double* v) {
    const ig::Policy& p = for_policies.at(i);
    v[0] = p.g, v[1] = p.r, v[2] = p.x;
  });
  PolicyCursor for_steps(pb.policies, portfolio);
  write_rows<std::int32_t, 3>(w, "steps", n,
                              {{"kind", "integrate.input"}, {"columns", {"h1", "h2", "h3"}}, {"units", "steps per year"}},
                              [&](std::size_t i, std::int32_t* v) {
                                const ig::Policy& p = for_steps.at(i);
                                v[0] = p.h1, v[1] = p.h2, v[2] = p.h3;
                              });
  if (!pb.curve.empty())
    write_pairs(w, "curve", pb.curve.maturity, pb.curve.rate,
                {{"kind", "integrate.input"}, {"columns", {"maturity", "rate"}},
                 {"rate", "zero rate, linearly interpolated; the model uses its forward rate"}});
  // The products and payments, the lives' laws: only where they are not the spec's
  // defaults (a default stream is the spec's input as before).
  if (wanted.products) {
    PolicyCursor cursor(pb.policies, portfolio);
    write_rows<double, 7>(
        w, "products", n,
        {{"kind", "integrate.input"},
         {"columns", {"product", "term", "deferment", "premium_term", "benefit", "premium", "equivalence"}},
         {"dims", {"policy", "column"}},
         {"products", {"spouse pension", "life annuity", "term insurance", "pure endowment", "endowment insurance"}},
         {"units", "years; per year (benefit of annuities and pensions, premium); sums"}},
        [&](std::size_t i, double* v) {
          const ig::Policy& p = cursor.at(i);
          const double row[7] = {static_cast<double>(p.product), p.term,    p.deferment,
                                 ig::premium_term_of(p),         p.benefit, p.premium,
                                 p.equivalence ? 1.0 : 0.0};
          std::copy(row, row + 7, v);
        });
  }
  if (wanted.second_life) {
    PolicyCursor cursor(pb.policies, portfolio);
    write_rows<double, 1>(w, "second_life", n,
                          {{"kind", "integrate.input"}, {"columns", {"y"}}, {"dims", {"policy", "column"}},
                           {"meaning", "joint-life and last-survivor annuities: the second life's age now (its law: "
                                       "the spouse column of lives)"}},
                          [&](std::size_t i, double* v) { v[0] = cursor.at(i).y; });
  }
  if (wanted.valuation_year) {
    PolicyCursor cursor(pb.policies, portfolio);
    write_rows<double, 1>(w, "valuation_year", n,
                          {{"kind", "integrate.input"}, {"columns", {"year"}}, {"dims", {"policy", "column"}},
                           {"meaning", "the calendar year now, of the policy's ages (improving mortality tables)"}},
                          [&](std::size_t i, double* v) { v[0] = cursor.at(i).year; });
  }
  if (wanted.policy_rate) {
    for (const ig::RateBasis& b : pb.rate_bases) {
      if (b.curve.empty()) {
        double v[1] = {b.rate};
        w.write<double>("rate_basis", {1}, v,
                        {{"kind", "integrate.input"}, {"name", b.name}, {"meaning", "a constant rate (force of interest)"}});
      } else {
        write_pairs(w, "rate_basis", b.curve.maturity, b.curve.rate,
                    {{"kind", "integrate.input"}, {"name", b.name}, {"columns", {"maturity", "rate"}},
                     {"rate", "zero rate, linearly interpolated; the model uses its forward rate"}});
      }
    }
    PolicyCursor cursor(pb.policies, portfolio);
    write_rows<std::int32_t, 1>(w, "policy_rate", n,
                                {{"kind", "integrate.input"}, {"columns", {"rate_basis"}}, {"dims", {"policy", "column"}},
                                 {"meaning", "index of the policy's rate_basis record; -1: the policies' rate or curve"}},
                                [&](std::size_t i, std::int32_t* v) { v[0] = cursor.at(i).rate_basis; });
  }
  if (wanted.lives) {
    PolicyCursor cursor(pb.policies, portfolio);
    write_rows<std::int32_t, 2>(w, "lives", n,
                                {{"kind", "integrate.input"}, {"columns", {"insured", "spouse"}},
                                 {"dims", {"policy", "column"}}, {"meaning", "index of each life's mortality record"}},
                                [&](std::size_t i, std::int32_t* v) {
                                  const ig::Policy& p = cursor.at(i);
                                  v[0] = p.insured, v[1] = p.spouse;
                                });
  }
}

// The basis' records: the laws (unless both are the defaults), the marriage table,
// the spouse-age assumption (unless the default normal:0,3).
void write_basis_records(StreamWriter& w, const ig::Problem& pb) {
  bool default_laws = pb.laws.size() == 2;
  for (std::size_t i = 0; i < pb.laws.size() && default_laws; ++i) {
    const ig::MortalityLaw d = ig::default_laws()[i];
    default_laws = !pb.laws[i].table && !pb.laws[i].select() && pb.laws[i].A == d.A && pb.laws[i].B == d.B &&
                   pb.laws[i].C == d.C;
  }
  for (std::size_t k = 0; k < pb.laws.size() && !default_laws; ++k) {
    const ig::MortalityLaw& m = pb.laws[k];
    json select;
    if (m.select() && m.select_q.empty())
      select = {{"years", m.select_years}, {"factor", m.select_factor},
                {"meaning", "for s < years after the policy's start the force is factor^(years - s) times the law's"}};
    if (!m.table) {
      double c[3] = {m.A, m.B, m.C};
      json attrs = {{"kind", "integrate.input"}, {"law", "gompertz-makeham"}, {"name", m.name},
                    {"columns", {"A", "B", "C"}}, {"meaning", "mu(age) = A + 10^(B + C age)"}};
      if (!select.is_null()) attrs["select"] = select;
      w.write<double>("mortality", {3}, c, attrs);
    } else if (!m.select_q.empty()) {
      const std::size_t d = static_cast<std::size_t>(m.select_years), cols = d + 2;
      std::vector<double> v;
      json columns = {"age"};
      for (std::size_t k2 = 0; k2 < d; ++k2) columns.push_back("q_select_" + std::to_string(k2));
      columns.push_back("q");
      for (std::size_t i = 0; i < m.ages.size(); ++i) {
        v.push_back(m.ages[i]);
        v.insert(v.end(), m.select_q.begin() + static_cast<std::ptrdiff_t>(i * d),
                 m.select_q.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
        v.push_back(m.values[i]);
      }
      w.write<double>("mortality", {static_cast<std::int64_t>(m.ages.size()), static_cast<std::int64_t>(cols)}, v.data(),
                      {{"kind", "integrate.input"}, {"law", "select-table"}, {"name", m.name}, {"source", m.source},
                       {"columns", columns}, {"dims", {"row", "column"}},
                       {"meaning", "by age at selection [x]: q_[x]+k for the select period's years k, then the "
                                   "ultimate q_x by age x; constant force within each year"}});
    } else {
      json attrs = {{"kind", "integrate.input"}, {"law", "table"}, {"name", m.name}, {"source", m.source},
                    {"columns", {"age", m.q ? "q" : "mu"}}, {"dims", {"row", "column"}},
                    {"meaning", "constant force within each year of age; from q: mu = -ln(1 - q)"}};
      if (!select.is_null()) attrs["select"] = select;
      if (m.improving_by_year())
        attrs["improvement"] = {{"base_year", m.improvement_base_year}, {"years", m.improvement_years},
                                {"ai_by_year", m.improvement_by_year},
                                {"meaning", "q_x(year) = q_x(year - 1) (1 - AI(x, year)) from base_year, row by row "
                                            "a rate a year; the last year's rates after it"}};
      else if (m.improving())
        attrs["improvement"] = {{"base_year", m.improvement_base_year}, {"ai", m.improvement},
                                {"meaning", "q_x(year) = q_x (1 - AI_x)^(year - base_year), AI per row"}};
      write_pairs(w, "mortality", m.ages, m.values, attrs);
    }
  }
  const ig::SpouseBasis& s = pb.spouse;
  if (s.marriage_table)
    write_pairs(w, "marriage", s.marriage_age, s.marriage_prob,
                {{"kind", "integrate.input"}, {"law", "table"}, {"columns", {"age", "probability"}},
                 {"dims", {"row", "column"}}, {"meaning", "linearly interpolated, flat beyond the ends"}});
  if (s.age_table) {
    write_pairs(w, "spouse_age", s.age_diff, s.age_density,
                {{"kind", "integrate.input"}, {"law", "table"}, {"columns", {"difference", "density"}},
                 {"dims", {"row", "column"}},
                 {"meaning", "density of the spouse's age minus the insured's, linearly interpolated, 0 beyond"}});
  } else if (s.mean != 0 || s.sd != 3) {
    double v[2] = {s.mean, s.sd};
    w.write<double>("spouse_age", {2}, v,
                    {{"kind", "integrate.input"}, {"law", "normal"}, {"columns", {"mean", "sd"}},
                     {"meaning", "the spouse's age minus the insured's: normal"}});
  }
}

int run_integrate(int argc, char** argv) {
  // 1. The options.
  Cli cli = integrate_cli();
  cli.parse(argc, argv);  // --g --r --x work too (Cli reads --g as -g)
  if (cli.has("portfolio") && cli.has("from-text")) fail_input("--portfolio and --from-text exclude each other");
  const std::vector<int> steps = parse_steps(cli.get<std::string>("steps"));

  // 2. The basis.
  ig::Problem pb;
  const std::map<std::string, int> law_index = read_basis(cli, pb);
  json attrs = {{"kind", "integrate.input"}, {"rate", pb.rate}};

  // 3. The policies: the options' one, a table's, or a portfolio (drawn as written).
  const bool mixed = lower(cli.get<std::string>("product")) == "mixed";
  if (mixed && !cli.has("portfolio")) fail_input("--product mixed draws products for --portfolio only");
  const ig::Policy base = options_policy(cli, steps, mixed);
  std::optional<Portfolio> portfolio;
  std::vector<std::string> labels;
  if (cli.has("portfolio")) {
    portfolio = portfolio_of(cli, base, mixed);
    attrs["portfolio"] = portfolio->attrs();
  } else if (cli.has("from-text")) {
    const std::string path = cli.get<std::string>("from-text");
    pb.policies = read_policies(path, base, law_index, labels, pb);
    attrs["from_text"] = path;
  } else {
    pb.policies.push_back(base);
  }

  // 4. The yield curve.
  if (cli.has("curve")) read_curve(cli.get<std::string>("curve"), pb.curve);

  // 5. Everything checked before a byte is written.
  OptionalRecords wanted = validate_policies(pb, portfolio);
  for (const ig::MortalityLaw& m : pb.laws) wanted.valuation_year = wanted.valuation_year || m.improving();

  // 6. The records.
  OutputFile out(cli.output());
  StreamWriter w(out);
  w.set_units(integrate::units());
  write_policy_records(w, pb, portfolio, wanted, cli.stamp(attrs));
  write_basis_records(w, pb);
  if (!labels.empty()) w.write(make_labels("policy_label", labels, "policy", "name"));
  return finish_stream(w, out);
}

const RegisterGenerator reg{{"integrate", "Pension and life insurance policies, their basis and RK4 step settings for integrate",
                             run_integrate}};

}  // namespace
}  // namespace numpipe
