// gen-input integrate: policies (g, r, x) and step settings for `integrate`:
// one policy from options, a random portfolio, or a text table; optionally a
// yield curve table.
#include <fstream>
#include <sstream>

#include "common/cli.hpp"
#include "common/random.hpp"
#include "common/text_table.hpp"
#include "generator.hpp"
#include "kernels/integrate/integrate.hpp"

namespace numpipe {
namespace {

namespace ig = integrate;

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

// Text table: three numbers a line (g r x), '#' comments and blank lines skipped.
std::vector<ig::Policy> parse_policies(const std::string& text, const std::string& label) {
  std::vector<ig::Policy> out;
  for (const auto& row : parse_number_rows(text, label, 3, "g r x")) {
    ig::Policy p;
    p.g = row[0];
    p.r = row[1];
    p.x = row[2];
    out.push_back(p);
  }
  if (out.empty()) fail_input(label + ": no policies");
  return out;
}

int run_integrate(int argc, char** argv) {
  Cli cli({"gen-input integrate", "Write policies (g, r, x) and RK4 step settings for integrate", "",
           "  gen-input integrate --g 10 --r 65 --x 35 --steps 10,2,10 | integrate | inspect\n"
           "  gen-input integrate --portfolio 1000 --seed 7 --steps 2,2,2 | integrate -o reserve.nps",
           "the policies and step settings for integrate",
           "Accepted for symmetry with the other tools (gen-input integrate shows no progress line)"},
          kOutput);
  cli.add("Policies")("g,guarantee", "Guarantee years of the spouse pension (--g G also works)",
                      cxxopts::value<double>()->default_value("10"), "G")(
      "r,retirement", "Retirement age (--r R also works)", cxxopts::value<double>()->default_value("65"), "R")(
      "x,age", "Age of the insured now (--x X also works)", cxxopts::value<double>()->default_value("35"), "X")(
      "steps", "RK4 steps per year of the outer, middle and inner levels",
      cxxopts::value<std::string>()->default_value("10,2,10"), "H1,H2,H3")(
      "portfolio", "N random policies: x whole in [20, 70], r whole in [60, 70], g whole in [0, 15]",
      cxxopts::value<std::int64_t>(), "N")("seed", "Random seed for --portfolio",
                                            cxxopts::value<std::uint64_t>()->default_value("1"), "S")(
      "from-text",
      "Policies from a text or CSV file: three columns g r x (a header line such as g,r,x is skipped), '#' comments",
      cxxopts::value<std::string>(),
      "FILE")("curve", "Yield curve table: two columns maturity (years) and zero rate (fraction)",
              cxxopts::value<std::string>(), "FILE")(
      "rate", "Constant interest rate when there is no curve", cxxopts::value<double>()->default_value("0.05"), "R");
  cli.parse(argc, argv);  // --g --r --x work too (Cli reads --g as -g)
  if (cli.has("portfolio") && cli.has("from-text")) fail_input("--portfolio and --from-text exclude each other");
  std::vector<int> steps = parse_steps(cli.get<std::string>("steps"));

  ig::Problem pb;
  pb.rate = cli.get<double>("rate");
  json attrs = {{"kind", "integrate.input"}, {"rate", pb.rate}};
  if (cli.has("portfolio")) {
    std::int64_t n = cli.get<std::int64_t>("portfolio");
    if (n < 1 || n > 100000000) fail_input("--portfolio must be in [1, 100000000]: " + std::to_string(n));
    std::uint64_t seed = cli.get<std::uint64_t>("seed");
    Rng rng(seed);
    pb.policies.resize(static_cast<std::size_t>(n));
    for (auto& p : pb.policies) {
      p.x = static_cast<double>(rng.integer(20, 70));
      p.r = static_cast<double>(rng.integer(60, 70));
      p.g = static_cast<double>(rng.integer(0, 15));
    }
    attrs["portfolio"] = {{"n", n}, {"seed", seed}, {"x", "whole, uniform on [20, 70]"},
                          {"r", "whole, uniform on [60, 70]"}, {"g", "whole, uniform on [0, 15]"}};
  } else if (cli.has("from-text")) {
    std::string path = cli.get<std::string>("from-text");
    pb.policies = parse_policies(read_text_file(path), path);
    attrs["from_text"] = path;
  } else {
    ig::Policy p;
    p.g = cli.get<double>("guarantee");
    p.r = cli.get<double>("retirement");
    p.x = cli.get<double>("age");
    pb.policies.push_back(p);
  }
  for (auto& p : pb.policies) {
    p.h1 = steps[0];
    p.h2 = steps[1];
    p.h3 = steps[2];
  }
  if (cli.has("curve")) {
    std::string path = cli.get<std::string>("curve");
    pb.curve = ig::parse_curve_text(read_text_file(path), path);
  }
  ig::validate(pb);

  OutputFile out(cli.output());
  std::size_t n = pb.policies.size();
  std::vector<double> pol(3 * n);
  std::vector<std::int32_t> st(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    pol[3 * i] = pb.policies[i].g;
    pol[3 * i + 1] = pb.policies[i].r;
    pol[3 * i + 2] = pb.policies[i].x;
    st[3 * i] = pb.policies[i].h1;
    st[3 * i + 1] = pb.policies[i].h2;
    st[3 * i + 2] = pb.policies[i].h3;
  }
  StreamWriter w(out);
  json a = cli.stamp(attrs);
  a["columns"] = {"g", "r", "x"};
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
  w.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"integrate", "GF820 pension policies (g, r, x) and RK4 steps for integrate", run_integrate}};

}  // namespace
}  // namespace numpipe
