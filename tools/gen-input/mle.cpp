// gen-input mle: series for mle-fit (kind mle.series, array x [series, length]).
//   --dist aepd: draws from the asymmetric exponential power distribution by
//     inverse transform (spec): with probability s_l/(s_l+s_r) a left draw
//     theta - s_l G^(1/p), else theta + s_r G^(1/p), G ~ Gamma(1/p, 1), from
//     numpipe::Rng (std::mt19937_64 with documented conversions, common/random.hpp).
//     Series are drawn one after another from one generator seeded by --seed.
//   --from-text FILE: a user's own series, one per column (common/text_table.hpp:
//     CSV or whitespace columns, an optional header line), optionally turned
//     into returns; a text column (dates) travels as the labels record x_label.
#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/progress.hpp"
#include "common/random.hpp"
#include "kernels/mle/units.hpp"
#include "common/text_table.hpp"
#include "generator.hpp"
#include "output.hpp"

namespace numpipe {
namespace {

// A label read as a date (and time): YYYY-MM-DD or YYYY/MM/DD, optionally
// followed by 'T' or a blank and HH:MM[:SS[.fraction]]. The key orders dates:
// days since 0000-03-01 (proleptic Gregorian, Richards' day-number formula)
// times 86400 plus the seconds. False when the text is no such date.
bool date_key(const std::string& text, double& key) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, consumed = 0;
  char sep1 = 0, sep2 = 0;
  if (std::sscanf(text.c_str(), "%4d%c%2d%c%2d%n", &y, &sep1, &mo, &sep2, &d, &consumed) != 5) return false;
  if (consumed != 10 || sep1 != sep2 || (sep1 != '-' && sep1 != '/')) return false;
  if (mo < 1 || mo > 12 || d < 1) return false;
  static const int days_in[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > days_in[mo - 1] || (mo == 2 && d == 29 && !leap)) return false;
  double seconds = 0;
  const std::string rest = text.substr(10);
  if (!rest.empty()) {
    if (rest[0] != 'T' && rest[0] != ' ') return false;
    int used = 0;
    if (std::sscanf(rest.c_str() + 1, "%2d:%2d%n", &h, &mi, &used) != 2 || used != 5) return false;
    if (h > 23 || mi > 59) return false;
    seconds = h * 3600.0 + mi * 60.0;
    const std::string tail = rest.substr(6);
    if (!tail.empty()) {
      double sec = 0;
      if (tail[0] != ':' || !parse_number(tail.substr(1), sec) || !(sec >= 0 && sec < 61)) return false;
      seconds += sec;
    }
  }
  const int a = mo <= 2 ? 1 : 0;  // months counted from March
  const long long yy = y - a, mm = mo + 12 * a - 3;
  const long long days = 365 * yy + yy / 4 - yy / 100 + yy / 400 + (153 * mm + 2) / 5 + d - 1;
  key = static_cast<double>(days) * 86400.0 + seconds;
  return true;
}

// The rows in date order when the label column holds dates (its first field
// reads as one: then every field must): strictly increasing dates are required;
// with `sort` the rows are put in date order (a stable sort, told on stderr).
// A date that repeats is refused either way. Returns the row order to read.
std::vector<std::size_t> date_order(const TextTable& table, std::optional<std::size_t> label_column, bool sort) {
  std::vector<std::size_t> order(table.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  if (!label_column || table.size() == 0) {
    if (sort) fail_input("--sort needs a date column (the label column, or --labels)");
    return order;
  }
  const std::string name = table.names[*label_column];
  const std::vector<std::string> text = table.strings(*label_column);
  std::vector<double> key(text.size());
  if (!date_key(text[0], key[0])) {
    if (sort) fail_input("--sort: the label column '" + name + "' does not hold dates (YYYY-MM-DD): '" + text[0] + "'");
    return order;  // labels that are not dates (names) carry no order
  }
  for (std::size_t i = 1; i < text.size(); ++i)
    if (!date_key(text[i], key[i]))
      fail_input(table.where(i) + "column '" + name + "': not a date (YYYY-MM-DD[ HH:MM[:SS]]): '" + text[i] + "'");
  auto line = [&](std::size_t row) { return std::to_string(table.lines[row]); };
  std::size_t unordered = 0;
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (key[i] == key[i - 1])
      fail_input(table.where(i) + "duplicated date '" + text[i] + "' in column '" + name + "' (also on line " +
                 line(i - 1) + ")");
    if (key[i] < key[i - 1]) {
      if (!sort)
        fail_input(table.where(i) + "date '" + text[i] + "' comes before '" + text[i - 1] + "' on line " + line(i - 1) +
                   ": rows must be in increasing date order (--sort puts them in order)");
      ++unordered;
    }
  }
  if (!sort) return order;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (key[order[i]] == key[order[i - 1]])
      fail_input(table.where(std::max(order[i], order[i - 1])) + "duplicated date '" + text[order[i]] + "' in column '" +
                 name + "' (also on line " + line(std::min(order[i], order[i - 1])) + ")");
  std::fprintf(stderr, "gen-input: --sort: %zu rows put in date order by column '%s' (%zu were out of order)\n",
               order.size(), name.c_str(), unordered);
  return order;
}

// The draws of a series, in order from one generator: n values into v.
using Draw = std::function<void(Rng& rng, double* v, std::size_t n)>;

// The drawn series x [S, L], written in pieces (memory a piece, whatever the length):
// first a pass that checks every value (require_finite's words: nothing half-written
// reaches a pipe), then, past one piece, the same draws again, piece by piece. Long series take seconds
// (about 10 million points a second): a progress line in points written.
void write_draws(StreamWriter& w, const Shape& shape, const json& attrs, const Draw& draw, std::uint64_t seed,
                 const std::string& too_large, bool quiet) {
  const std::size_t n = static_cast<std::size_t>(element_count(shape)), chunk = StreamWriter::kPieceBytes / sizeof(double);
  std::vector<double> block(std::min(n, chunk));
  Progress progress("gen-input", "points", n, quiet);
  Rng check(seed);
  for (std::size_t at = 0; at < n; at += chunk) {
    const std::size_t k = std::min(chunk, n - at);
    draw(check, block.data(), k);
    const std::int64_t bad = first_non_finite(block.data(), k);
    if (bad >= 0)
      throw Error(ExitCode::bad_input, "x" + index_in(shape, at + std::uint64_t(bad)) + " is " + value_text(block[std::size_t(bad)]) + ": " + too_large);
  }
  if (n <= chunk) {  // one piece: the checked draws are the series
    w.write("x", shape, block.data(), attrs);
    progress.update(n);
    progress.finish();
    return;
  }
  Rng rng(seed);
  w.write_in_pieces("x", DType::f8, shape, attrs, [&](std::uint64_t offset, std::size_t bytes, void* dst) {
    draw(rng, static_cast<double*>(dst), bytes / sizeof(double));
    progress.update(offset / sizeof(double) + bytes / sizeof(double));
  });
  progress.finish();
}

Cli mle_cli() {
  Cli cli({"gen-input mle", "Series for mle-fit: AEPD draws or a user's own columns", "",
           "  gen-input mle --length 100000 --series 4 --p 1.5 --sl 1 --sr 2 --seed 7 | mle-fit --window 500 | inspect\n"
           "  gen-input mle --from-text share/ref/mle-prices.csv --columns close --returns log | mle-fit --window 250 --quantiles 0.01 -o var.nps",
           "the series for mle-fit"},
          kOutput | kTextInput);
  cli.add("Series")("length", "Points per series", cxxopts::value<std::int64_t>()->default_value("10000"), "L")(
      "series", "Number of series", cxxopts::value<std::int64_t>()->default_value("1"), "S")(
      "dist", "Distribution: aepd", cxxopts::value<std::string>()->default_value("aepd"), "D")(
      "theta", "Location", cxxopts::value<double>()->default_value("0"), "T")(
      "p,shape", "Shape p (> 0); also spelled --p", cxxopts::value<double>()->default_value("2"), "P")(
      "p2", "Shape right of theta when it differs from the left one (default: --p)", cxxopts::value<double>(), "P2")(
      "sl", "Left scale (> 0)", cxxopts::value<double>()->default_value("1"), "SL")(
      "sr", "Right scale (> 0)", cxxopts::value<double>()->default_value("1"), "SR")(
      "seed", "Random seed", cxxopts::value<std::uint64_t>()->default_value("1"), "N")(
      "from-text", "Read series from a text file: one per column, whitespace or CSV, optional header",
      cxxopts::value<std::string>(), "FILE")(
      "columns", "With --from-text: the columns to take, by header name or 1-based number (default: every numeric one)",
      cxxopts::value<std::string>()->default_value(""), "C,...")(
      "labels", "With --from-text: the label column (dates), kept as the labels record x_label (default: the first "
                "column not taken by --columns that is text under a header such as date, or the first column, all text)",
      cxxopts::value<std::string>(), "C")(
      "returns", "With --from-text: none, log (log(x[t]/x[t-1])) or simple (x[t]/x[t-1] - 1)",
      cxxopts::value<std::string>()->default_value("none"), "R")(
      "sort", "With --from-text: put the rows in date order (by the label column) instead of refusing rows out of "
              "order; says so on stderr (duplicated dates are refused either way)");
  return cli;
}

// The series x [S, L]: drawn (from a seed, piece by piece as written) or read.
struct Series {
  json attrs = {{"kind", "mle.series"}};
  std::int64_t series = 0, length = 0;
  Draw draw;               // drawn: the draws...
  std::uint64_t seed = 0;  // ... from this seed
  std::vector<double> x;   // read
  std::optional<Record> labels;
  Shape shape() const { return {series, length}; }
};

// --from-text FILE: the columns picked (or the returns of them), in date order.
Series read_series(const Cli& cli) {
  Series s;
  const std::string path = cli.get<std::string>("from-text"), returns = cli.get<std::string>("returns");
  if (returns != "none" && returns != "log" && returns != "simple")
    fail_input("--returns must be none, log or simple, got '" + returns + "'");
  const TextTable table = read_text_table(path);
  // the label column: --labels, else the first text column not taken by --columns
  std::optional<std::size_t> label_column;
  if (cli.has("labels")) label_column = table.column(cli.get<std::string>("labels"), "--labels");
  std::vector<std::size_t> picked;
  const std::string column_spec = cli.get<std::string>("columns");
  if (!column_spec.empty()) {
    picked = table.columns_of(column_spec, "--columns");
    for (std::size_t c = 0; c < table.columns() && !label_column; ++c)
      if (std::find(picked.begin(), picked.end(), c) == picked.end() && table.is_label_column(c)) label_column = c;
  } else {
    for (std::size_t c = 0; c < table.columns(); ++c) {
      if (label_column == c) continue;
      if (table.is_label_column(c) && !label_column && !cli.has("labels")) label_column = c;
      else picked.push_back(c);  // numbers() below names a field that is not a number
    }
  }
  if (picked.empty()) fail_input("--from-text " + path + ": no numeric column to take");
  // rows in strictly increasing date order (or sorted with --sort)
  const std::vector<std::size_t> order = date_order(table, label_column, cli.has("sort"));
  for (std::size_t c : picked)
    if (label_column == c) fail_input("--columns and --labels both take column '" + table.names[c] + "'");
  s.series = static_cast<std::int64_t>(picked.size());
  const std::int64_t rows = static_cast<std::int64_t>(table.size());
  s.length = rows - (returns == "none" ? 0 : 1);
  if (s.length < 1) fail_input("--from-text " + path + ": too few rows for returns");
  s.x.resize(static_cast<std::size_t>(s.series * s.length));
  std::vector<std::string> names;
  for (std::int64_t si = 0; si < s.series; ++si) {
    const std::size_t c = picked[static_cast<std::size_t>(si)];
    names.push_back(table.names[c]);
    const std::vector<double> read = table.numbers(c);
    std::vector<double> col(read.size());
    for (std::size_t r = 0; r < read.size(); ++r) col[r] = read[order[r]];
    for (std::int64_t i = 0; i < s.length; ++i) {
      double v;
      if (returns == "none") {
        v = col[static_cast<std::size_t>(i)];
      } else {
        const double a = col[static_cast<std::size_t>(i)], b = col[static_cast<std::size_t>(i + 1)];
        if (returns == "log" && !(a > 0 && b > 0))
          fail_input(table.where(order[static_cast<std::size_t>(a <= 0 ? i : i + 1)]) + "--returns log needs positive values: column '" +
                     table.names[c] + "' holds " + std::to_string(a <= 0 ? a : b));
        if (returns == "simple" && a == 0)
          fail_input(table.where(order[static_cast<std::size_t>(i)]) + "--returns simple divides by zero: column '" +
                     table.names[c] + "'");
        v = returns == "log" ? std::log(b / a) : b / a - 1.0;
      }
      s.x[static_cast<std::size_t>(si * s.length + i)] = v;
    }
  }
  s.attrs["source"] = path;
  s.attrs["columns"] = names;
  s.attrs["returns"] = returns;
  if (cli.has("sort")) s.attrs["sorted"] = "rows put in date order by the label column";
  if (label_column) {
    // a return belongs to the later of its two rows
    const std::vector<std::string> read = table.strings(*label_column);
    std::vector<std::string> text(read.size());
    for (std::size_t r = 0; r < read.size(); ++r) text[r] = read[order[r]];
    if (returns != "none") text.erase(text.begin());
    s.labels = make_labels("x_label", text, "x", table.names[*label_column]);
    s.attrs["labels"] = table.names[*label_column];
  }
  return s;
}

// --dist aepd: the draws of each series in turn, from --seed.
Series drawn_series(const Cli& cli) {
  for (const char* text_only : {"columns", "labels", "returns", "sort"})
    if (cli.has(text_only)) fail_input(std::string("--") + text_only + " needs --from-text");
  Series s;
  const std::string dist = cli.get<std::string>("dist");
  if (dist != "aepd") fail_input("--dist must be aepd, got '" + dist + "'");
  s.series = cli.get<std::int64_t>("series");
  s.length = cli.get<std::int64_t>("length");
  const double theta = cli.get<double>("theta"), p = cli.get<double>("shape"), sl = cli.get<double>("sl"),
               sr = cli.get<double>("sr");
  const double p2 = cli.has("p2") ? cli.get<double>("p2") : p;
  const std::uint64_t seed = cli.get<std::uint64_t>("seed");
  if (s.series < 1) fail_input("--series must be >= 1, got " + std::to_string(s.series));
  if (s.length < 1) fail_input("--length must be >= 1, got " + std::to_string(s.length));
  if (!std::isfinite(theta)) fail_input("--theta must be finite");
  if (!(p > 0) || !std::isfinite(p)) fail_input("--p must be finite and > 0, got " + std::to_string(p));
  if (!(p2 > 0) || !std::isfinite(p2)) fail_input("--p2 must be finite and > 0, got " + std::to_string(p2));
  if (!(sl > 0) || !std::isfinite(sl)) fail_input("--sl must be finite and > 0, got " + std::to_string(sl));
  if (!(sr > 0) || !std::isfinite(sr)) fail_input("--sr must be finite and > 0, got " + std::to_string(sr));
  element_count(s.shape());
  // the left branch's mass: s_l/(s_l+s_r) with one shape; with two,
  // s_l Gamma(1+1/p) / (s_l Gamma(1+1/p) + s_r Gamma(1+1/p2)) (kernels/mle/inference.hpp)
  const double gl = sl * std::tgamma(1.0 + 1.0 / p), gr = sr * std::tgamma(1.0 + 1.0 / p2);
  const double wl = p2 == p ? sl / (sl + sr) : gl / (gl + gr);
  s.draw = [=](Rng& rng, double* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      const bool left = rng.uniform() < wl;
      const double q = left ? p : p2;
      const double g = std::pow(rng.gamma(1.0 / q), 1.0 / q);
      v[i] = left ? theta - sl * g : theta + sr * g;
    }
  };
  s.seed = seed;
  s.attrs.update({{"dist", dist}, {"theta", theta}, {"p", p}, {"s_l", sl}, {"s_r", sr}, {"seed", seed},
                  {"generator", "mt19937_64; a uniform below the left mass picks the left branch, then Gamma(1/p) "
                                "(Marsaglia-Tsang)"}});
  if (cli.has("p2")) s.attrs["p2"] = p2;
  return s;
}

int run_mle(int argc, char** argv) {
  // 1. The options; a terminal refused before any work.
  Cli cli = mle_cli();
  cli.parse(argc, argv);
  OutputFile out(cli.output());

  // 2. The series: read, or drawn.
  Series s = cli.has("from-text") ? read_series(cli) : drawn_series(cli);
  s.attrs["series"] = s.series;
  s.attrs["length"] = s.length;

  // 3. The records, every value checked before the first byte is written.
  const char* const too_large = "the scales or the data give values beyond the range of doubles";
  StreamWriter w(out);
  w.set_units(mle::units());
  if (s.draw) {
    write_draws(w, s.shape(), cli.stamp(s.attrs), s.draw, s.seed, too_large, cli.quiet());
  } else {
    require_finite(ExitCode::bad_input, "x", s.shape(), s.x.data(), too_large);
    w.write("x", s.shape(), s.x.data(), cli.stamp(s.attrs));
  }
  if (s.labels) w.write(*s.labels);
  return finish_stream(w, out);
}

const RegisterGenerator reg{{"mle", "series for mle-fit: AEPD draws, or columns of a text/CSV file", run_mle}};

}  // namespace
}  // namespace numpipe
