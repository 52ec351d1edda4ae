// gen-input price: LocVolCalib problems (FinPar data sets, custom sizes, sweeps).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/cli.hpp"
#include "common/strings.hpp"
#include "common/text_table.hpp"
#include "generator.hpp"
#include "output.hpp"
#include "kernels/price/io.hpp"
#include "kernels/price/price.hpp"
#include "kernels/price/units.hpp"

namespace numpipe {
namespace {

// FinPar's data sets (its small/medium/large input files; xl is ours).
price::Params dataset(const std::string& name) {
  price::Params p;
  p.s0 = 0.03;
  p.t = 5.0;
  p.alpha = 0.2;
  p.nu = 0.6;
  p.beta = 0.5;
  if (name == "small") { p.outer = 16; p.num_x = 32; p.num_y = 256; p.num_t = 256; }
  else if (name == "medium") { p.outer = 128; p.num_x = 256; p.num_y = 32; p.num_t = 64; }
  else if (name == "large") { p.outer = 256; p.num_x = 256; p.num_y = 256; p.num_t = 64; }
  else if (name == "xl") { p.outer = 4096; p.num_x = 256; p.num_y = 256; p.num_t = 256; }
  else fail_input("--dataset must be small, medium, large or xl, got '" + name + "'");
  return p;
}

double parse_number(const std::string& key, const std::string& text, const std::string& where) {
  return decimal_number(text, where + key);
}

std::int64_t parse_size(const std::string& key, const std::string& text, const std::string& where) {
  double v = parse_number(key, text, where);
  if (!(v >= 0 && v <= 9.0e15 && v == std::floor(v))) fail_input(where + key + " must be a whole number, got '" + text + "'");
  return static_cast<std::int64_t>(v);
}

void set_field(price::Params& p, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "dataset") p = dataset(value);
  else if (key == "outer") p.outer = parse_size(key, value, where);
  else if (key == "num_x" || key == "num-x") p.num_x = parse_size(key, value, where);
  else if (key == "num_y" || key == "num-y") p.num_y = parse_size(key, value, where);
  else if (key == "num_t" || key == "num-t") p.num_t = parse_size(key, value, where);
  else if (key == "s0") p.s0 = parse_number(key, value, where);
  else if (key == "t") p.t = parse_number(key, value, where);
  else if (key == "alpha") p.alpha = parse_number(key, value, where);
  else if (key == "nu") p.nu = parse_number(key, value, where);
  else if (key == "beta") p.beta = parse_number(key, value, where);
  else if (key == "rho") p.rho = parse_number(key, value, where);
  else fail_input(where + "unknown key '" + key + "' (keys: dataset outer num_x num_y num_t s0 t alpha nu beta rho)");
}

// --sweep FILE: one problem per line, "key=value" pairs applied on top of the
// base problem (the data set and options); '#' starts a comment.
std::vector<price::Params> read_sweep(const std::string& path, const price::Params& base) {
  // The text and the problems within the memory limit (exit 3 naming the line reached).
  const TextBudget budget;
  const std::string text = read_text_file(path);
  std::vector<price::Params> out;
  for (std::size_t at = 0, n = 1; at < text.size(); ++n) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
    std::istringstream ss(line);
    price::Params p = base;
    bool any = false;
    const std::string where = "--sweep " + path + ":" + std::to_string(n) + ": ";
    for (std::string tok; ss >> tok;) {
      auto eq = tok.find('=');
      if (eq == std::string::npos || eq == 0) fail_input(where + "expected key=value, got '" + tok + "'");
      set_field(p, tok.substr(0, eq), tok.substr(eq + 1), where);
      any = true;
    }
    if (!any) continue;
    try {
      price::validate(p);
    } catch (const Error& e) {
      fail_input(where + e.what());
    }
    out.push_back(p);
    budget.check(static_cast<double>(text.size()) + 2.0 * sizeof(price::Params) * out.size(), path, static_cast<long>(n));
  }
  if (out.empty()) fail_input("--sweep " + path + ": no parameter sets in the file");
  return out;
}

// ---- --from-text FILE: a quote table -------------------------------------------------
// Read by the common text-table reader (CSV or blank-separated, '#' comments; a
// header is required): columns named strike, maturity, type (call/put, c/p, or
// +1/-1), optionally a quote (price, or implied_vol/vol) and weight, in any order,
// names case-insensitive.

// The quotes of the table on the base problem's parameters: maturities from the
// table (the grid's t = the longest), one contract per row.
// The grid's sizes for the user's contracts: those the options did not give, from the
// tolerance (price.hpp size_for_tolerance).
struct Sizing {
  double tolerance = price::kDefaultTolerance;
  bool x = true, y = true, t = true;
};
void size_contracts(price::Problem& pr, const Sizing& sizing) {
  pr.p.grid = price::GridKind::sinh;
  pr.tolerance = sizing.tolerance;
  price::size_for_tolerance(pr.p, sizing.tolerance, sizing.x, sizing.y, sizing.t);
  pr.p.num_t = std::max<std::int64_t>(pr.p.num_t, static_cast<std::int64_t>(pr.maturities.size()) + 1);
}

price::Problem quotes_problem(const std::string& path, price::Params p, bool t_given, double steps_per_year,
                              const Sizing& sizing) {
  TextTableOptions options;
  options.header = TextTableOptions::Header::present;
  const TextTable t = read_text_table(path, options);
  std::vector<std::string> lower = t.names;
  for (std::string& n : lower) std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  auto column = [&](std::initializer_list<const char*> keys, bool required) -> long {
    for (const char* key : keys)
      for (std::size_t c = 0; c < lower.size(); ++c)
        if (lower[c] == key) return static_cast<long>(c);
    if (required) {
      std::string have;
      for (const auto& n : t.names) have += (have.empty() ? "" : ", ") + n;
      fail_input(t.source + ": no column '" + *keys.begin() + "' (columns: " + have + "; want strike, maturity, type "
                 "and optionally price or implied_vol, and weight)");
    }
    return -1;
  };
  const long c_strike = column({"strike", "k"}, true), c_maturity = column({"maturity", "t", "expiry"}, true);
  const long c_type = column({"type", "option"}, true);
  const long c_price = column({"price", "quote"}, false), c_vol = column({"implied_vol", "vol", "iv"}, false);
  const long c_weight = column({"weight"}, false);
  if (c_price >= 0 && c_vol >= 0) fail_input(t.source + ": both a price and an implied_vol column: keep one");
  price::Problem pr;
  pr.quote_kind = c_price >= 0 ? price::QuoteKind::price : c_vol >= 0 ? price::QuoteKind::implied_vol
                                                                      : price::QuoteKind::none;
  const long c_quote = c_price >= 0 ? c_price : c_vol;
  auto where = [&](std::size_t r) { return t.where(r); };
  const std::vector<double> strikes = t.numbers(c_strike), maturities = t.numbers(c_maturity);
  const std::vector<double> quotes = c_quote >= 0 ? t.numbers(c_quote) : std::vector<double>(t.size(), std::nan(""));
  const std::vector<double> weights = c_weight >= 0 ? t.numbers(c_weight) : std::vector<double>(t.size(), 1.0);
  const std::vector<std::string> types = t.strings(c_type);
  for (std::size_t r = 0; r < t.size(); ++r) {
    price::Quote q;
    q.strike = strikes[r];
    q.maturity = maturities[r];
    std::string type = types[r];
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
    if (type == "call" || type == "c" || type == "1" || type == "+1") q.put = false;
    else if (type == "put" || type == "p" || type == "-1") q.put = true;
    else fail_input(where(r) + "type must be call or put, got '" + types[r] + "'");
    q.quote = quotes[r];
    q.weight = weights[r];
    if (q.maturity <= 0) fail_input(where(r) + "maturity must be > 0, got " + t.rows[r][c_maturity]);
    if (t_given && q.maturity > p.t)
      fail_input(where(r) + "maturity " + t.rows[r][c_maturity] + " lies beyond the grid's time axis, which ends at t = " +
                 std::to_string(p.t) + " (-t/--maturity)");
    pr.quotes.push_back(q);
  }
  std::vector<double> ms;
  for (const price::Quote& q : pr.quotes) ms.push_back(q.maturity);
  std::sort(ms.begin(), ms.end());
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  if (!t_given) p.t = ms.back();
  if (ms.back() != p.t) ms.push_back(p.t);  // the grid reaches t
  pr.maturities = ms.size() > 1 ? ms : std::vector<double>{};
  p.outer = static_cast<std::int64_t>(pr.quotes.size());
  if (steps_per_year > 0) p.num_t = static_cast<std::int64_t>(std::ceil(steps_per_year * p.t - 1e-9)) + 1;
  pr.p = p;
  size_contracts(pr, sizing);
  p = pr.p;
  price::validate(p);
  std::vector<std::int64_t> levels;
  price::time_grid(p, pr.maturities, &levels);
  price::check_contracts(pr, where);
  return pr;
}

// A comma list of numbers, or A:B:N for N evenly spaced values from A to B.
std::vector<double> parse_list(const std::string& option, const std::string& text) {
  std::vector<double> out;
  const std::string where = "--";
  if (std::count(text.begin(), text.end(), ':') == 2 && text.find(',') == std::string::npos) {
    const auto c1 = text.find(':'), c2 = text.find(':', c1 + 1);
    const double a = parse_number(option, text.substr(0, c1), where), b = parse_number(option, text.substr(c1 + 1, c2 - c1 - 1), where);
    const std::int64_t n = parse_size(option, text.substr(c2 + 1), where);
    if (n < 1 || n > price::kMaxSide) fail_input("--" + option + " A:B:N needs 1 <= N <= " + std::to_string(price::kMaxSide) + ", got " + std::to_string(n));
    if (n == 1 && a != b) fail_input("--" + option + " A:B:1 needs A = B, got '" + text + "'");
    for (std::int64_t k = 0; k < n; ++k)
      out.push_back(k == n - 1 ? b : a + (b - a) * static_cast<double>(k) / static_cast<double>(n - 1));
    return out;
  }
  if (text.empty()) fail_input("--" + option + ": no values in '" + text + "'");
  for (const std::string& item : split_fields(text)) {
    if (item.empty()) fail_input("--" + option + ": empty item in '" + text + "'");
    out.push_back(parse_number(option, item, where));
  }
  return out;
}

Cli price_cli() {
  Cli cli({"gen-input price", "Write option-pricing problems (kind price.input): FinPar's LocVolCalib data sets, "
           "or the user's strikes, maturities and quote tables", "",
           "  gen-input price --dataset large | price | verify --text-ref share/ref/finpar-locvolcalib/large.output.data "
           "--array price --range 0:128 --rtol 1e-4",
           "the LocVolCalib problems for price",
           "Accepted for symmetry with the other tools (gen-input price shows no progress line)"},
          kOutput | kTextInput);
  cli.add("Problem")("dataset", "FinPar data set: small, medium, large, or xl (4096 strikes, numT 256)",
                     cxxopts::value<std::string>()->default_value("small"), "NAME")(
      "outer", "Strikes (strike o = 0.001*o)", cxxopts::value<std::string>(), "N")(
      "num-x", "Grid points along x", cxxopts::value<std::string>(), "N")(
      "num-y", "Grid points along y", cxxopts::value<std::string>(), "N")(
      "num-t", "Time points", cxxopts::value<std::string>(), "N")(
      "s0", "Spot", cxxopts::value<std::string>(), "X")("t,maturity", "Maturity t (years)", cxxopts::value<std::string>(), "X")(
      "alpha", "alpha", cxxopts::value<std::string>(), "X")("nu", "nu (volatility of Y)", cxxopts::value<std::string>(), "X")(
      "beta", "beta (local-volatility exponent)", cxxopts::value<std::string>(), "X")(
      "rho", "Correlation of the spot's and the volatility's Brownian motions, in (-1, 1) (default 0)",
      cxxopts::value<std::string>(), "R")(
      "sweep", "Many problems: one line of key=value pairs per problem, on top of the options above",
      cxxopts::value<std::string>(), "FILE");
  cli.add("Contracts")("strikes", "Strikes: a comma list, or A:B:N for N evenly spaced from A to B (default: "
                       "FinPar's 0.001*o for o < OUTER)", cxxopts::value<std::string>(), "LIST")(
      "option", "call or put (default call)", cxxopts::value<std::string>(), "TYPE")(
      "maturities", "Maturities in years, ascending comma list or A:B:N; the grid's time axis reaches the "
      "longest (replaces -t)", cxxopts::value<std::string>(), "LIST")(
      "steps-per-year", "Time steps per year over the longest maturity (replaces --num-t)",
      cxxopts::value<std::string>(), "N")(
      "tolerance", "The user's contracts: the absolute price error per unit of s0 to size the grid for, where "
      "--num-x, --num-y, --num-t or --steps-per-year do not (default 5e-6)", cxxopts::value<std::string>(), "TOL")(
      "from-text", "A quote table: a header naming the columns strike, maturity, type (call or put) and optionally "
      "price or implied_vol, and weight; one quote a line (replaces --strikes, --option, --maturities)",
      cxxopts::value<std::string>(), "FILE");
  return cli;
}

// The base problem: the data set, and the options that change it.
price::Params base_params(const Cli& cli) {
  price::Params base = dataset(cli.get<std::string>("dataset"));
  for (const char* key : {"outer", "num-x", "num-y", "num-t", "s0", "maturity", "alpha", "nu", "beta", "rho"})
    if (cli.has(key))
      set_field(base, std::string(key) == "maturity" ? "t" : key, cli.get<std::string>(key), std::string("--"));
  return base;
}

// The contracts every problem gets (the options' strikes, option type and
// maturities) and how the grid is sized for them.
struct Contracts {
  price::Problem shape;
  double steps_per_year = 0;
  Sizing sizing;

  // The contracts on one problem's parameters.
  price::Problem on(price::Params p) const {
    price::Problem pr = shape;
    if (pr.user_strikes) p.outer = static_cast<std::int64_t>(pr.strikes.size());
    if (!pr.maturities.empty()) p.t = pr.maturities.back();
    if (steps_per_year > 0) p.num_t = static_cast<std::int64_t>(std::ceil(steps_per_year * p.t - 1e-9)) + 1;
    if (pr.maturities.size() == 1) pr.maturities.clear();  // one maturity: t itself
    pr.p = p;
    if (pr.user_strikes) size_contracts(pr, sizing);  // FinPar's strikes keep FinPar's grid
    return pr;
  }
  // ... and checked (a message starting `where`).
  price::Problem checked(const price::Params& p, const std::string& where) const {
    price::Problem pr = on(p);
    try {
      price::validate(pr.p);
      std::vector<std::int64_t> levels;
      price::time_grid(pr.p, pr.maturities, &levels);
      price::check_contracts(pr, [](std::size_t) { return std::string(); });
    } catch (const Error& e) {
      fail_input(where + e.what());
    }
    return pr;
  }
};

Contracts contracts_of(const Cli& cli) {
  Contracts c;
  if (cli.has("strikes")) {
    if (cli.has("outer")) fail_input("give --strikes or --outer, not both (--strikes sets the count)");
    c.shape.strikes = parse_list("strikes", cli.get<std::string>("strikes"));
    c.shape.user_strikes = true;
  }
  if (cli.has("option")) {
    const std::string o = cli.get<std::string>("option");
    if (o != "call" && o != "put") fail_input("--option must be call or put, got '" + o + "'");
    c.shape.put = o == "put";
  }
  if (cli.has("maturities")) {
    if (cli.has("maturity")) fail_input("give --maturities or -t/--maturity, not both");
    c.shape.maturities = parse_list("maturities", cli.get<std::string>("maturities"));
  }
  if (cli.has("steps-per-year")) {
    if (cli.has("num-t")) fail_input("give --steps-per-year or --num-t, not both");
    c.steps_per_year = parse_number("steps-per-year", cli.get<std::string>("steps-per-year"), "--");
    if (!(c.steps_per_year > 0 && c.steps_per_year <= 1e6))
      fail_input("--steps-per-year must be in (0, 1e6], got " + cli.get<std::string>("steps-per-year"));
  }
  c.sizing.x = !cli.has("num-x");
  c.sizing.y = !cli.has("num-y");
  c.sizing.t = !cli.has("num-t") && !cli.has("steps-per-year");
  if (cli.has("tolerance")) {
    if (!cli.has("strikes") && !cli.has("from-text"))
      fail_input("--tolerance sizes the grid of the user's contracts (--strikes or --from-text); FinPar's data sets "
                 "keep their grids");
    c.sizing.tolerance = parse_number("tolerance", cli.get<std::string>("tolerance"), "--");
    price::Params probe;
    price::size_for_tolerance(probe, c.sizing.tolerance, false, false, false);  // checks the range
  }
  return c;
}

// The attrs' data set: FinPar's name only when no option changed it.
std::string dataset_label(const Cli& cli) {
  bool custom = false;
  for (const char* key : {"outer", "num-x", "num-y", "num-t", "s0", "maturity", "alpha", "nu", "beta", "rho",
                          "strikes", "option", "maturities", "steps-per-year", "from-text"})
    custom = custom || cli.has(key);
  const std::string name = cli.get<std::string>("dataset");
  return cli.has("sweep") ? "sweep from " + name : custom ? "custom from " + name : name;
}

int run_price(int argc, char** argv) {
  // 1. The options.
  Cli cli = price_cli();
  cli.parse(argc, argv);

  // 2. The base problem and the contracts every problem gets.
  const price::Params base = base_params(cli);
  const Contracts contracts = contracts_of(cli);

  // 3. The problems, each checked before a byte is written: a quote table's, the
  //    base's, or a sweep's. A sweep's are made again as they are written, so that
  //    memory is one problem (its strikes), not the sweep.
  std::vector<price::Problem> held;
  std::vector<price::Params> sweep;
  const std::string sweep_path = cli.has("sweep") ? cli.get<std::string>("sweep") : "";
  if (cli.has("from-text")) {
    for (const char* key : {"strikes", "option", "maturities", "outer", "sweep"})
      if (cli.has(key)) fail_input(std::string("--from-text gives the contracts: drop --") + key);
    held.push_back(quotes_problem(cli.get<std::string>("from-text"), base, cli.has("maturity"),
                                  contracts.steps_per_year, contracts.sizing));
  } else if (cli.has("sweep")) {
    sweep = read_sweep(sweep_path, base);
    for (std::size_t k = 0; k < sweep.size(); ++k)
      contracts.checked(sweep[k], "--sweep " + sweep_path + ": parameter set " + std::to_string(k + 1) + ": ");
  } else {
    held.push_back(contracts.checked(base, ""));
  }

  // 4. The records, problem by problem.
  OutputFile out(cli.output());
  StreamWriter writer(out);
  writer.set_units(price::units());
  const std::string dataset = dataset_label(cli);
  for (std::size_t k = 0; k < held.size() + sweep.size(); ++k) {
    const json attrs = cli.stamp({{"dataset", dataset}, {"index", k}});
    const price::Problem problem = held.empty() ? contracts.on(sweep[k]) : held[k];
    for (const Record& r : price::problem_records(problem, attrs)) writer.write(r);
  }
  return finish_stream(writer, out);
}

const RegisterGenerator reg{{"price", "option-pricing problems (FinPar's LocVolCalib, the user's contracts, quote tables)", run_price}};

}  // namespace
}  // namespace numpipe
