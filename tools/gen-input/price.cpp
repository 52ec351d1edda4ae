// gen-input price: LocVolCalib problems (FinPar data sets, custom sizes, sweeps).
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "common/cli.hpp"
#include "generator.hpp"
#include "kernels/price/price.hpp"

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
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  fail_input(where + key + " must be a number, got '" + text + "'");
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
  else fail_input(where + "unknown key '" + key + "' (keys: dataset outer num_x num_y num_t s0 t alpha nu beta)");
}

// --sweep FILE: one problem per line, "key=value" pairs applied on top of the
// base problem (the data set and options); '#' starts a comment.
std::vector<price::Params> read_sweep(const std::string& path, const price::Params& base) {
  std::ifstream in(path);
  if (!in) fail_input("--sweep: cannot open '" + path + "'");
  std::vector<price::Params> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
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
  }
  if (out.empty()) fail_input("--sweep " + path + ": no parameter sets in the file");
  return out;
}

int run_price(int argc, char** argv) {
  Cli cli({"gen-input price", "Write LocVolCalib problems (kind price.input)", "",
           "  gen-input price --dataset large | price | verify --text-ref share/ref/finpar-locvolcalib/large.output.data "
           "--array price --range 0:128 --rtol 1e-4",
           "the LocVolCalib problems for price",
           "Accepted for symmetry with the other tools (gen-input price shows no progress line)"},
          kOutput);
  cli.add("Problem")("dataset", "FinPar data set: small, medium, large, or xl (4096 strikes, numT 256)",
                     cxxopts::value<std::string>()->default_value("small"), "NAME")(
      "outer", "Strikes (strike o = 0.001*o)", cxxopts::value<std::string>(), "N")(
      "num-x", "Grid points along x", cxxopts::value<std::string>(), "N")(
      "num-y", "Grid points along y", cxxopts::value<std::string>(), "N")(
      "num-t", "Time points", cxxopts::value<std::string>(), "N")(
      "s0", "Spot", cxxopts::value<std::string>(), "X")("t,maturity", "Maturity t (years)", cxxopts::value<std::string>(), "X")(
      "alpha", "alpha", cxxopts::value<std::string>(), "X")("nu", "nu (volatility of Y)", cxxopts::value<std::string>(), "X")(
      "beta", "beta (local-volatility exponent)", cxxopts::value<std::string>(), "X")(
      "sweep", "Many problems: one line of key=value pairs per problem, on top of the options above",
      cxxopts::value<std::string>(), "FILE");
  cli.parse(argc, argv);
  price::Params base = dataset(cli.get<std::string>("dataset"));
  bool custom = false;
  for (const char* key : {"outer", "num-x", "num-y", "num-t", "s0", "maturity", "alpha", "nu", "beta"})
    custom = custom || cli.has(key);
  for (const char* key : {"outer", "num-x", "num-y", "num-t", "s0", "maturity", "alpha", "nu", "beta"})
    if (cli.has(key))
      set_field(base, std::string(key) == "maturity" ? "t" : key, cli.get<std::string>(key), std::string("--"));
  std::vector<price::Params> problems;
  if (cli.has("sweep")) problems = read_sweep(cli.get<std::string>("sweep"), base);
  else {
    price::validate(base);
    problems.push_back(base);
  }
  OutputFile out(cli.output());
  StreamWriter writer(out);
  for (std::size_t k = 0; k < problems.size(); ++k) {
    // the FinPar data set's name only when no option changed it
    const std::string name = cli.get<std::string>("dataset");
    json attrs = {{"dataset", cli.has("sweep") ? "sweep from " + name : custom ? "custom from " + name : name},
                  {"index", k}};
    writer.write(price::make_problem_record(problems[k], cli.stamp(attrs)));
  }
  writer.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"price", "LocVolCalib (FinPar) option-pricing problems", run_price}};

}  // namespace
}  // namespace numpipe
