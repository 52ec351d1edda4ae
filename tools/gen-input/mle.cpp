// gen-input mle: series for mle-fit (kind mle.series, array x [series, length]).
//   --dist aepd: draws from the asymmetric exponential power distribution by
//     inverse transform (spec): with probability s_l/(s_l+s_r) a left draw
//     theta - s_l G^(1/p), else theta + s_r G^(1/p), G ~ Gamma(1/p, 1), from
//     numpipe::Rng (std::mt19937_64 with documented conversions, common/random.hpp).
//     Series are drawn one after another from one generator seeded by --seed.
//   --from-text FILE: a user's own series, one per column (whitespace or CSV,
//     an optional header line), optionally turned into returns.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "common/random.hpp"
#include "generator.hpp"

namespace numpipe {
namespace {

std::string trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t\r\"");
  if (a == std::string::npos) return "";
  std::size_t b = s.find_last_not_of(" \t\r\"");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  if (line.find(',') != std::string::npos || line.find(';') != std::string::npos) {
    const char sep = line.find(',') != std::string::npos ? ',' : ';';
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, sep);) out.push_back(trim(f));
    if (!line.empty() && line.back() == sep) out.push_back("");
  } else {
    std::stringstream ss(line);
    for (std::string f; ss >> f;) out.push_back(f);
  }
  return out;
}

bool parse_double(const std::string& f, double& v) {
  if (f.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtod(f.c_str(), &end);
  return *end == '\0';
}

struct Table {
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
};

Table read_text(const std::string& path, const std::string& column_spec) {
  std::ifstream in(path);
  if (!in) fail_input("--from-text: cannot open '" + path + "': " + std::strerror(errno));
  Table t;
  std::vector<std::size_t> pick;  // chosen column indices
  bool have_header = false, first = true;
  std::size_t width = 0;
  std::string line;
  for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
    const std::string tl = trim(line);
    if (tl.empty() || tl[0] == '#') continue;
    std::vector<std::string> f = split_fields(line);
    if (first) {
      first = false;
      width = f.size();
      double v;
      bool numeric = true;
      for (const auto& s : f) numeric = numeric && parse_double(s, v);
      if (!numeric) {
        have_header = true;
        t.names = f;
      } else {
        for (std::size_t c = 0; c < width; ++c) t.names.push_back("column" + std::to_string(c + 1));
      }
      if (column_spec.empty()) {
        for (std::size_t c = 0; c < width; ++c) pick.push_back(c);
      } else {
        std::stringstream ss(column_spec);
        for (std::string item; std::getline(ss, item, ',');) {
          std::size_t idx = width;
          for (std::size_t c = 0; c < width; ++c)
            if (t.names[c] == item) idx = c;
          if (idx == width) {
            char* end = nullptr;
            long v = std::strtol(item.c_str(), &end, 10);
            if (!item.empty() && !*end && v >= 1 && static_cast<std::size_t>(v) <= width) idx = static_cast<std::size_t>(v - 1);
          }
          if (idx == width)
            fail_input("--columns: no column '" + item + "' in '" + path + "' (columns: " + std::to_string(width) + ")");
          pick.push_back(idx);
        }
      }
      t.columns.resize(pick.size());
      std::vector<std::string> chosen;
      for (std::size_t c : pick) chosen.push_back(t.names[c]);
      t.names = chosen;
      if (have_header) continue;
    }
    if (f.size() != width)
      fail_input("--from-text '" + path + "' line " + std::to_string(lineno) + ": expected " + std::to_string(width) +
                 " fields, got " + std::to_string(f.size()));
    for (std::size_t k = 0; k < pick.size(); ++k) {
      double v;
      const std::string& s = f[pick[k]];
      if (!parse_double(s, v) || !std::isfinite(v))
        fail_input("--from-text '" + path + "' line " + std::to_string(lineno) + ", column '" + t.names[k] +
                   "': not a finite number: '" + s + "'");
      t.columns[k].push_back(v);
    }
  }
  if (t.columns.empty() || t.columns[0].empty()) fail_input("--from-text '" + path + "' holds no data rows");
  return t;
}

int run_mle(int argc, char** argv) {
  Cli cli({"gen-input mle", "Series for mle-fit: AEPD draws or a user's own columns", "",
           "  gen-input mle --length 100000 --series 4 --p 1.5 --sl 1 --sr 2 --seed 7 | mle-fit --window 500 | inspect\n"
           "  gen-input mle --from-text share/ref/mle-prices.csv --columns close --returns log | mle-fit --window 250 --quantiles 0.01 -o var.nps",
           "the series for mle-fit"},
          kOutput);
  cli.add("Series")("length", "Points per series", cxxopts::value<std::int64_t>()->default_value("10000"), "L")(
      "series", "Number of series", cxxopts::value<std::int64_t>()->default_value("1"), "S")(
      "dist", "Distribution: aepd", cxxopts::value<std::string>()->default_value("aepd"), "D")(
      "theta", "Location", cxxopts::value<double>()->default_value("0"), "T")(
      "p,shape", "Shape p (> 0); also spelled --p", cxxopts::value<double>()->default_value("2"), "P")(
      "sl", "Left scale (> 0)", cxxopts::value<double>()->default_value("1"), "SL")(
      "sr", "Right scale (> 0)", cxxopts::value<double>()->default_value("1"), "SR")(
      "seed", "Random seed", cxxopts::value<std::uint64_t>()->default_value("1"), "N")(
      "from-text", "Read series from a text file: one per column, whitespace or CSV, optional header",
      cxxopts::value<std::string>(), "FILE")(
      "columns", "With --from-text: the columns to take, by header name or 1-based number (default: all)",
      cxxopts::value<std::string>()->default_value(""), "C,...")(
      "returns", "With --from-text: none, log (log(x[t]/x[t-1])) or simple (x[t]/x[t-1] - 1)",
      cxxopts::value<std::string>()->default_value("none"), "R");
  cli.parse(argc, argv);
  OutputFile out(cli.output());  // refuses a terminal before any work
  json attrs = {{"kind", "mle.series"}};
  std::int64_t S = 0, L = 0;
  std::vector<double> x;
  if (cli.has("from-text")) {
    const std::string path = cli.get<std::string>("from-text"), returns = cli.get<std::string>("returns");
    if (returns != "none" && returns != "log" && returns != "simple")
      fail_input("--returns must be none, log or simple, got '" + returns + "'");
    Table t = read_text(path, cli.get<std::string>("columns"));
    S = static_cast<std::int64_t>(t.columns.size());
    L = static_cast<std::int64_t>(t.columns[0].size()) - (returns == "none" ? 0 : 1);
    if (L < 1) fail_input("--from-text '" + path + "': too few rows for returns");
    x.resize(static_cast<std::size_t>(S * L));
    for (std::int64_t s = 0; s < S; ++s) {
      const auto& c = t.columns[static_cast<std::size_t>(s)];
      for (std::int64_t i = 0; i < L; ++i) {
        double v;
        if (returns == "none") {
          v = c[static_cast<std::size_t>(i)];
        } else {
          const double a = c[static_cast<std::size_t>(i)], b = c[static_cast<std::size_t>(i + 1)];
          if (returns == "log" && !(a > 0 && b > 0))
            fail_input("--returns log needs positive values: column '" + t.names[static_cast<std::size_t>(s)] + "' row " +
                       std::to_string(i + 1) + " holds " + std::to_string(a <= 0 ? a : b));
          if (returns == "simple" && a == 0)
            fail_input("--returns simple divides by zero: column '" + t.names[static_cast<std::size_t>(s)] + "' row " +
                       std::to_string(i + 1));
          v = returns == "log" ? std::log(b / a) : b / a - 1.0;
        }
        x[static_cast<std::size_t>(s * L + i)] = v;
      }
    }
    attrs["source"] = path;
    attrs["columns"] = t.names;
    attrs["returns"] = returns;
  } else {
    const std::string dist = cli.get<std::string>("dist");
    if (dist != "aepd") fail_input("--dist must be aepd, got '" + dist + "'");
    S = cli.get<std::int64_t>("series");
    L = cli.get<std::int64_t>("length");
    const double theta = cli.get<double>("theta"), p = cli.get<double>("shape"), sl = cli.get<double>("sl"),
                 sr = cli.get<double>("sr");
    const std::uint64_t seed = cli.get<std::uint64_t>("seed");
    if (S < 1) fail_input("--series must be >= 1, got " + std::to_string(S));
    if (L < 1) fail_input("--length must be >= 1, got " + std::to_string(L));
    if (!std::isfinite(theta)) fail_input("--theta must be finite");
    if (!(p > 0) || !std::isfinite(p)) fail_input("--p must be finite and > 0, got " + std::to_string(p));
    if (!(sl > 0) || !std::isfinite(sl)) fail_input("--sl must be finite and > 0, got " + std::to_string(sl));
    if (!(sr > 0) || !std::isfinite(sr)) fail_input("--sr must be finite and > 0, got " + std::to_string(sr));
    element_count(Shape{S, L});
    x.resize(static_cast<std::size_t>(S * L));
    Rng rng(seed);
    const double wl = sl / (sl + sr), a = 1.0 / p;
    // Long series take seconds (about 10 million points a second): a progress line in points.
    Progress progress("gen-input", "points", x.size(), cli.quiet());
    std::size_t done = 0;
    for (double& v : x) {
      const bool left = rng.uniform() < wl;
      const double g = std::pow(rng.gamma(a), 1.0 / p);
      v = left ? theta - sl * g : theta + sr * g;
      if ((++done & 0xffff) == 0) progress.update(done);
    }
    progress.update(done);
    progress.finish();
    attrs.update({{"dist", dist}, {"theta", theta}, {"p", p}, {"s_l", sl}, {"s_r", sr}, {"seed", seed},
                  {"generator", "mt19937_64; uniform < s_l/(s_l+s_r) picks the left branch, then Gamma(1/p) (Marsaglia-Tsang)"}});
  }
  attrs["series"] = S;
  attrs["length"] = L;
  StreamWriter w(out);
  w.write("x", Shape{S, L}, x.data(), cli.stamp(attrs));
  w.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"mle", "series for mle-fit: AEPD draws, or columns of a text/CSV file", run_mle}};

}  // namespace
}  // namespace numpipe
