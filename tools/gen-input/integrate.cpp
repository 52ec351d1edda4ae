// gen-input integrate: policies and RK4 step settings for `integrate`: one policy
// from options, a random portfolio, or a text table; the products and their
// payments; the basis (each life's mortality law or table, the marriage and
// spouse-age assumptions); optionally a yield curve table. Text tables go through
// the common reader (CSV with a header, or whitespace columns).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "common/cli.hpp"
#include "common/memory.hpp"
#include "common/labels.hpp"
#include "common/random.hpp"
#include "common/text_table.hpp"
#include "common/strings.hpp"
#include "generator.hpp"
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
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
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
      {"endowment-insurance", ig::kEndowmentInsurance}};
  auto it = names.find(n);
  if (it == names.end())
    fail_input(where + "unknown product '" + name +
               "' (known: spouse, annuity, term, pure-endowment, endowment; spouse-pension, life-annuity, "
               "term-insurance, endowment-insurance also work)");
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
  std::stringstream ss(rest.substr(3));
  for (std::string item; std::getline(ss, item, ',');) {
    double v = 0;
    if (!parse_number(item, v) || !std::isfinite(v)) fail_input(usage);
    c.push_back(v);
  }
  if (c.size() != 3) fail_input(usage);
  return ig::gompertz_makeham(life, c[0], c[1], c[2]);
}

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
    std::vector<double> c;
    std::stringstream ss(spec.substr(7));
    for (std::string item; std::getline(ss, item, ',');) {
      double v = 0;
      if (!parse_number(item, v)) c.clear();
      c.push_back(v);
    }
    if (c.size() != 2)
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
std::vector<ig::Policy> read_policies(const std::string& path, const ig::Policy& base,
                                      const std::map<std::string, int>& laws, std::vector<std::string>& labels) {
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
      {"policy", "policy"}, {"name", "policy"}};
  std::map<std::string, std::size_t> col;
  for (std::size_t c = 0; c < t.columns(); ++c) {
    auto it = aliases.find(lower(t.names[c]));
    if (it == aliases.end())
      fail_input(path + ": unknown column '" + t.names[c] +
                 "' (known: g, r, x, product, term, deferment, premium_term, benefit, premium, insured, spouse, policy)");
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
  for (std::size_t i = 0; col.count("premium_term") && i < t.size(); ++i)
    if (!(out[i].premium_term >= 0)) fail_input(t.where(i) + "premium_term must be >= 0 years: " + exact_text(out[i].premium_term));
  auto text = [&](const char* k) { return col.count(k) ? t.strings(col[k]) : std::vector<std::string>{}; };
  auto products = text("product"), premiums = text("premium"), insured = text("insured"), spouse = text("spouse");
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
  }
  if (col.count("policy")) labels = t.strings(col["policy"]);
  return out;
}

int run_integrate(int argc, char** argv) {
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
                      "pure-endowment, endowment (endowment insurance); with --portfolio also mixed (each at random)",
                      cxxopts::value<std::string>()->default_value("spouse"), "NAME")(
      "term", "Years to the product's term (default: to age 120)", cxxopts::value<double>(), "N")(
      "deferment", "Life annuity: years until its payments start (default 0: immediate)", cxxopts::value<double>(),
      "M")("premium-term",
           "Years of premium payments (default: until retirement, until the annuity starts, or the term)",
           cxxopts::value<double>(), "T")(
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
      "marriage", "Probability of being married by age: parabola (the default) or a table (age, probability)",
      cxxopts::value<std::string>()->default_value("parabola"), "parabola|FILE")(
      "spouse-age",
      "The spouse's age minus the insured's: normal:MEAN,SD (default normal:0,3) or a table (difference, density)",
      cxxopts::value<std::string>()->default_value("normal:0,3"), "normal:MEAN,SD|FILE");
  cli.add("Interest")("curve", "Yield curve table: two columns maturity (years) and zero rate (fraction)",
                      cxxopts::value<std::string>(), "FILE")(
      "rate", "Constant interest rate when there is no curve", cxxopts::value<double>()->default_value("0.05"), "R");
  cli.parse(argc, argv);  // --g --r --x work too (Cli reads --g as -g)
  if (cli.has("portfolio") && cli.has("from-text")) fail_input("--portfolio and --from-text exclude each other");
  std::vector<int> steps = parse_steps(cli.get<std::string>("steps"));

  ig::Problem pb;
  pb.rate = cli.get<double>("rate");
  json attrs = {{"kind", "integrate.input"}, {"rate", pb.rate}};

  // The basis: laws in the order given after the two defaults (insured, spouse).
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
  for (const auto& kv : cli.args().arguments()) {  // each occurrence, unsplit (a law holds commas)
    if (kv.key() == "mortality") set_law(parse_gm(kv.value()));
    if (kv.key() == "mortality-table") set_law(read_mortality_table(kv.value()));
  }
  const std::string marriage = cli.get<std::string>("marriage");
  if (marriage != "parabola") {
    pb.spouse.marriage_table = true;
    read_two_columns(marriage, "--marriage", "probability", pb.spouse.marriage_age, pb.spouse.marriage_prob);
  }
  parse_spouse_age(cli.get<std::string>("spouse-age"), pb.spouse);

  // The options' policy (a portfolio's and a table's defaults).
  ig::Policy base;
  const std::string product = lower(cli.get<std::string>("product"));
  const bool mixed = product == "mixed";
  if (mixed && !cli.has("portfolio")) fail_input("--product mixed draws products for --portfolio only");
  base.product = mixed ? ig::kSpousePension : product_code(product, "--product: ");
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
  parse_premium(cli.get<std::string>("premium"), "--premium: ", base);

  std::vector<std::string> labels;
  if (cli.has("portfolio")) {
    std::int64_t n = cli.get<std::int64_t>("portfolio");
    if (n < 1 || n > 100000000) fail_input("--portfolio must be in [1, 100000000]: " + std::to_string(n));
    std::uint64_t seed = cli.get<std::uint64_t>("seed");
    Rng rng(seed);
    // The portfolio is held whole (a policy, then its rows of the records written):
    // refused (exit 3) where that exceeds the memory the run may use.
    require_host_memory({std::to_string(n) + " policies (--portfolio)", static_cast<double>(n),
                         static_cast<double>(sizeof(ig::Policy)) + 8.0 * (3 + 7) + 4.0 * (3 + 2), "policy"});
    pb.policies.assign(static_cast<std::size_t>(n), base);
    for (auto& p : pb.policies) {
      p.x = static_cast<double>(rng.integer(20, 70));
      p.r = static_cast<double>(rng.integer(60, 70));
      p.g = static_cast<double>(rng.integer(0, 15));
      if (mixed) {
        // Each product alike; a deferred annuity from retirement (5 years past it),
        // the other terms whole in [5, 30].
        p.product = static_cast<int>(rng.integer(0, ig::kProductKinds - 1));
        const double term = static_cast<double>(rng.integer(5, 30));
        p.term = p.product == ig::kLifeAnnuity ? ig::kMaxAge : term;
        p.deferment = p.product == ig::kLifeAnnuity ? (p.x < p.r ? p.r - p.x : 5.0) : 0.0;
      }
      // Equivalence where there are premiums to solve for (a spouse pension past
      // retirement has none: its single premium is its reserve at inception).
      if (p.equivalence && !(ig::premium_term_of(p) > 0)) p.equivalence = false;
    }
    json port = {{"n", n}, {"seed", seed}, {"x", "whole, uniform on [20, 70]"},
                 {"r", "whole, uniform on [60, 70]"}, {"g", "whole, uniform on [0, 15]"}};
    if (mixed)
      port["products"] = "each of spouse, annuity (deferred to retirement, or 5 years), term, pure-endowment, "
                         "endowment alike; terms whole, uniform on [5, 30]";
    attrs["portfolio"] = port;
  } else if (cli.has("from-text")) {
    std::string path = cli.get<std::string>("from-text");
    pb.policies = read_policies(path, base, law_index, labels);
    attrs["from_text"] = path;
  } else {
    pb.policies.push_back(base);
  }
  if (cli.has("curve")) {
    std::string path = cli.get<std::string>("curve");
    TextTable t = read_text_table(path);
    if (t.columns() != 2)
      fail_input(path + ": want two columns (maturity, zero rate), got " + std::to_string(t.columns()));
    pb.curve.maturity = t.numbers(0);
    pb.curve.rate = t.numbers(1);
    try {
      ig::validate_curve(pb.curve);
    } catch (const Error& e) {
      fail_input(path + ": " + e.what());
    }
  }
  ig::validate(pb);

  OutputFile out(cli.output());
  std::size_t n = pb.policies.size();
  std::vector<double> pol(3 * n);
  std::vector<std::int32_t> st(3 * n);
  bool products = false, lives = false;
  for (std::size_t i = 0; i < n; ++i) {
    const ig::Policy& p = pb.policies[i];
    pol[3 * i] = p.g;
    pol[3 * i + 1] = p.r;
    pol[3 * i + 2] = p.x;
    st[3 * i] = p.h1;
    st[3 * i + 1] = p.h2;
    st[3 * i + 2] = p.h3;
    products = products || !ig::plain_spouse_pension(p) || p.term < ig::kMaxAge - p.x;  // a term: written
    lives = lives || p.insured != 0 || p.spouse != 1;
  }
  StreamWriter w(out);
  w.set_units(integrate::units());
  json a = cli.stamp(attrs);
  a["columns"] = {"g", "r", "x"};
  a["dims"] = {"policy", "column"};
  w.write<double>("policies", {static_cast<std::int64_t>(n), 3}, pol.data(), a);
  w.write<std::int32_t>("steps", {static_cast<std::int64_t>(n), 3}, st.data(),
                        {{"kind", "integrate.input"}, {"columns", {"h1", "h2", "h3"}}, {"units", "steps per year"}});
  if (!pb.curve.empty()) {
    std::vector<double> c;
    for (std::size_t i = 0; i < pb.curve.maturity.size(); ++i) {
      c.push_back(pb.curve.maturity[i]);
      c.push_back(pb.curve.rate[i]);
    }
    w.write<double>("curve", {static_cast<std::int64_t>(pb.curve.maturity.size()), 2}, c.data(),
                    {{"kind", "integrate.input"}, {"columns", {"maturity", "rate"}},
                     {"rate", "zero rate, linearly interpolated; the model uses its forward rate"}});
  }
  // The products and payments, the lives' laws and the basis: only where they are
  // not the spec's defaults (a default stream is the spec's input as before).
  if (products) {
    std::vector<double> v;
    for (const ig::Policy& p : pb.policies)
      for (double x : {static_cast<double>(p.product), p.term, p.deferment, ig::premium_term_of(p), p.benefit, p.premium,
                       p.equivalence ? 1.0 : 0.0})
        v.push_back(x);
    w.write<double>("products", {static_cast<std::int64_t>(n), 7}, v.data(),
                    {{"kind", "integrate.input"},
                     {"columns", {"product", "term", "deferment", "premium_term", "benefit", "premium", "equivalence"}},
                     {"dims", {"policy", "column"}},
                     {"products", {"spouse pension", "life annuity", "term insurance", "pure endowment",
                                   "endowment insurance"}},
                     {"units", "years; per year (benefit of annuities and pensions, premium); sums"}});
  }
  if (lives) {
    std::vector<std::int32_t> v;
    for (const ig::Policy& p : pb.policies) {
      v.push_back(p.insured);
      v.push_back(p.spouse);
    }
    w.write<std::int32_t>("lives", {static_cast<std::int64_t>(n), 2}, v.data(),
                          {{"kind", "integrate.input"}, {"columns", {"insured", "spouse"}}, {"dims", {"policy", "column"}},
                           {"meaning", "index of each life's mortality record"}});
  }
  bool default_laws = pb.laws.size() == 2;
  for (std::size_t i = 0; i < pb.laws.size() && default_laws; ++i) {
    const ig::MortalityLaw d = ig::default_laws()[i];
    default_laws = !pb.laws[i].table && pb.laws[i].A == d.A && pb.laws[i].B == d.B && pb.laws[i].C == d.C;
  }
  if (!default_laws)
    for (const ig::MortalityLaw& m : pb.laws) {
      if (!m.table) {
        double c[3] = {m.A, m.B, m.C};
        w.write<double>("mortality", {3}, c,
                        {{"kind", "integrate.input"}, {"law", "gompertz-makeham"}, {"name", m.name},
                         {"columns", {"A", "B", "C"}}, {"meaning", "mu(age) = A + 10^(B + C age)"}});
      } else {
        std::vector<double> v;
        for (std::size_t i = 0; i < m.ages.size(); ++i) {
          v.push_back(m.ages[i]);
          v.push_back(m.values[i]);
        }
        w.write<double>("mortality", {static_cast<std::int64_t>(m.ages.size()), 2}, v.data(),
                        {{"kind", "integrate.input"}, {"law", "table"}, {"name", m.name}, {"source", m.source},
                         {"columns", {"age", m.q ? "q" : "mu"}}, {"dims", {"row", "column"}},
                         {"meaning", "constant force within each year of age; from q: mu = -ln(1 - q)"}});
      }
    }
  if (pb.spouse.marriage_table) {
    std::vector<double> v;
    for (std::size_t i = 0; i < pb.spouse.marriage_age.size(); ++i) {
      v.push_back(pb.spouse.marriage_age[i]);
      v.push_back(pb.spouse.marriage_prob[i]);
    }
    w.write<double>("marriage", {static_cast<std::int64_t>(pb.spouse.marriage_age.size()), 2}, v.data(),
                    {{"kind", "integrate.input"}, {"law", "table"}, {"columns", {"age", "probability"}},
                     {"dims", {"row", "column"}}, {"meaning", "linearly interpolated, flat beyond the ends"}});
  }
  if (pb.spouse.age_table) {
    std::vector<double> v;
    for (std::size_t i = 0; i < pb.spouse.age_diff.size(); ++i) {
      v.push_back(pb.spouse.age_diff[i]);
      v.push_back(pb.spouse.age_density[i]);
    }
    w.write<double>("spouse_age", {static_cast<std::int64_t>(pb.spouse.age_diff.size()), 2}, v.data(),
                    {{"kind", "integrate.input"}, {"law", "table"}, {"columns", {"difference", "density"}},
                     {"dims", {"row", "column"}},
                     {"meaning", "density of the spouse's age minus the insured's, linearly interpolated, 0 beyond"}});
  } else if (pb.spouse.mean != 0 || pb.spouse.sd != 3) {
    double v[2] = {pb.spouse.mean, pb.spouse.sd};
    w.write<double>("spouse_age", {2}, v,
                    {{"kind", "integrate.input"}, {"law", "normal"}, {"columns", {"mean", "sd"}},
                     {"meaning", "the spouse's age minus the insured's: normal"}});
  }
  if (!labels.empty()) w.write(make_labels("policy_label", labels, "policy", "name"));
  w.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"integrate", "Pension and life insurance policies, their basis and RK4 steps for integrate",
                             run_integrate}};

}  // namespace
}  // namespace numpipe
