// mle-fit's stream side (kernels/mle/io.hpp): the option parsers, the information
// criteria against their definitions, the scaling of extreme series and its exact
// undoing, the refusal of non-finite fits, the backtest table's layout, the time
// labels, and the fit records written to a stream and read back.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/labels.hpp"
#include "common/stream.hpp"
#include "kernels/mle/io.hpp"
#include "test_util.hpp"

using namespace numpipe;
using namespace numpipe::mle;
using namespace numpipe::test;

namespace {


// Estimates of `n` windows with every field the plain fit writes.
Estimates plain_estimates(std::size_t n) {
  Estimates e;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(i);
    e.theta.push_back(0.01 * d - 0.005);
    e.p.push_back(1.5 + 0.1 * d);
    e.p2.push_back(1.5 + 0.1 * d);
    e.s_l.push_back(0.02 + 0.001 * d);
    e.s_r.push_back(0.03 - 0.001 * d);
    e.loglik.push_back(-10.0 + d);
    e.skew.push_back(0.4 + 0.01 * d);
  }
  return e;
}

}  // namespace

TEST_CASE("mle io: --quantiles and --compare, and their bad values by name") {
  CHECK(parse_levels("").empty());
  CHECK(parse_levels("0.01,0.05,0.975") == std::vector<double>{0.01, 0.05, 0.975});
  for (const char* bad : {"0", "1", "-0.1", "0.5e-400"})
    CHECK(bad_input([&] { parse_levels(bad); }) ==
          std::string("--quantiles takes probabilities in (0, 1) separated by commas, got '") + bad + "'");
  // the words read by common/strings.hpp decimal_number: no number, or one in another notation
  for (const char* bad : {"x", "0.5e"})
    CHECK(bad_input([&] { parse_levels(bad); }) == std::string("--quantiles must be a number, got '") + bad + "'");
  for (const char* bad : {"nan", "0x1p-1", " 0.5"})
    CHECK(bad_input([&] { parse_levels(bad); }) == std::string("--quantiles: expected a decimal number, got ") + bad);
  CHECK(has(bad_input([&] { parse_levels("0.1,,0.2"); }), "got ''"));
  bool normal = true, student = true;
  parse_compare("", normal, student);
  CHECK_FALSE(normal);
  CHECK_FALSE(student);
  parse_compare("t", normal, student);
  CHECK_FALSE(normal);
  CHECK(student);
  parse_compare("normal,t", normal, student);
  CHECK(normal);
  CHECK(student);
  CHECK(bad_input([&] { parse_compare("normal,cauchy", normal, student); }) ==
        "--compare takes normal and t separated by commas, got 'cauchy'");
}

TEST_CASE("mle io: AIC and BIC by their definitions (Akaike 1974, Schwarz 1978)") {
  const std::vector<double> loglik = {-120.5, 3.25, 0};
  const std::vector<double> a = aic(loglik, 4), b = bic(loglik, 4, 500);
  REQUIRE(a.size() == 3);
  REQUIRE(b.size() == 3);
  CHECK(a[0] == 8 + 241);
  CHECK(a[1] == 8 - 6.5);
  CHECK(a[2] == 8);
  CHECK(b[0] == doctest::Approx(4 * 6.2146080984221914 + 241).epsilon(1e-15));  // ln 500
  CHECK(b[2] == doctest::Approx(4 * 6.2146080984221914).epsilon(1e-15));
  CHECK(std::isnan(aic({NAN}, 4)[0]));  // a window without a maximum stays NaN
}

TEST_CASE("mle io: an extreme series is fitted scaled by a power of two, and put back exactly") {
  Params params;
  params.window = 4;
  params.grid.alpha = {1.0, 2.0};
  const std::vector<double> original = {1e200, -3e200, 2e199, 5e200, -1e199, 7e199,  // 2^665 * O(1): scaled
                                        0.1, -0.2, 0.05, 0.3, -0.15, 0.01};          // as it is
  std::vector<double> x = original;
  const Series s{x.data(), 2, 6};
  const std::vector<int> e = scale_series(x, s, params);
  REQUIRE(e.size() == 2);
  int expected = 0;
  std::frexp(5e200, &expected);
  CHECK(e[0] == expected);
  CHECK(e[1] == 0);
  for (int i = 0; i < 6; ++i) CHECK(x[i] == std::ldexp(original[i], -expected));  // exact: a power of two
  double big = 0;
  for (int i = 0; i < 6; ++i) big = std::max(big, std::fabs(x[i]));
  CHECK(big >= 0.5);
  CHECK(big < 1);
  for (int i = 6; i < 12; ++i) CHECK(x[i] == original[i]);

  const std::int64_t windows = 3;
  Estimates est = plain_estimates(2 * windows);
  const Estimates fitted = est;
  unscale(x, s, params, windows, e, 0, est);
  CHECK(x == original);
  for (std::size_t w = 0; w < 3; ++w) {
    CHECK(est.theta[w] == std::ldexp(fitted.theta[w], expected));
    CHECK(est.s_l[w] == std::ldexp(fitted.s_l[w], expected));
    CHECK(est.s_r[w] == std::ldexp(fitted.s_r[w], expected));
    CHECK(est.p[w] == fitted.p[w]);        // shapes do not scale
    CHECK(est.skew[w] == fitted.skew[w]);  // nor the skew
    // a density in x = 2^e y is 2^-e times y's: loglik - n e log 2 over the window's n points
    CHECK(est.loglik[w] == doctest::Approx(fitted.loglik[w] - 4.0 * expected * std::log(2.0)).epsilon(1e-14));
  }
  for (std::size_t w = 3; w < 6; ++w) {
    CHECK(est.theta[w] == fitted.theta[w]);
    CHECK(est.loglik[w] == fitted.loglik[w]);
  }
}

TEST_CASE("mle io: a fit that is not finite is refused by name, unless the window has no maximum") {
  std::vector<double> x(8, 0.0);
  const Series s{x.data(), 1, 8};
  Params params;
  params.window = 6;  // windows 0, 1, 2
  Estimates est = plain_estimates(3);
  std::vector<Degenerate> none(3, Degenerate::none);
  CHECK(bad_input([&] { require_finite_fits(s, params, 3, est, 0, none); }).empty());
  est.s_r[1] = INFINITY;
  const std::string m = bad_input([&] { require_finite_fits(s, params, 3, est, 0, none); });
  CHECK(m.rfind("s_r", 0) == 0);
  CHECK(has(m, "the window's fit is not finite"));
  std::vector<Degenerate> tied = none;
  tied[1] = Degenerate::ties;
  CHECK(bad_input([&] { require_finite_fits(s, params, 3, est, 0, tied); }).empty());
  est.s_r[1] = 0.02;
  est.quantiles = {0.1, NAN, 0.2};
  CHECK(has(bad_input([&] { require_finite_fits(s, params, 3, est, 1, none); }), "quantiles"));
}

TEST_CASE("mle io: the backtest table is [series][levels][columns] of each series' hits") {
  std::vector<double> x(2 * 7, 0.0);
  const Series s{x.data(), 2, 7};
  Params params;
  params.window = 3;  // 4 out-of-sample points a series
  const std::vector<double> levels = {0.05, 0.95};
  // hits [series][time][level]
  const std::vector<std::uint8_t> hits = {1, 0, 0, 0, 0, 1, 0, 0,   // series 0: level 0.05 once, 0.95 once
                                          1, 1, 1, 0, 0, 0, 0, 0};  // series 1: twice, once
  const std::vector<double> rows = backtest_rows(s, params, levels, hits);
  REQUIRE(rows.size() == std::size_t(2 * 2 * kBacktestColumns));
  auto row = [&](int series, int level) { return rows.data() + (series * 2 + level) * kBacktestColumns; };
  CHECK(row(0, 0)[0] == 0.05);
  CHECK(row(0, 1)[0] == 0.95);
  CHECK(row(1, 0)[1] == 4);  // n
  CHECK(row(0, 0)[2] == 1);  // exceedances
  CHECK(row(0, 1)[2] == 1);
  CHECK(row(1, 0)[2] == 2);
  CHECK(row(1, 1)[2] == 1);
  CHECK(row(1, 1)[9] == 0);  // no_forecast
  // Kupiec's LR (Kupiec 1995): -2 log[(1-q)^(n-x) q^x] + 2 log[(1-x/n)^(n-x) (x/n)^x]
  const double q = 0.05, n = 4, k = 2;
  const double lr = -2 * ((n - k) * std::log(1 - q) + k * std::log(q)) + 2 * ((n - k) * std::log(1 - k / n) + k * std::log(k / n));
  CHECK(row(1, 0)[3] == doctest::Approx(lr).epsilon(1e-12));
}

TEST_CASE("mle io: the time labels of the series, or none; a wrong count is refused by name") {
  std::vector<double> x(5, 0.0);
  const Series s{x.data(), 1, 5};
  const std::vector<std::string> dates = {"d1", "d2", "d3", "d4", "d5"};
  const Record* xlabels = reinterpret_cast<const Record*>(1);
  {
    std::vector<Record> records;
    records.push_back(Record::from<double>("x", {5}, x.data()));
    CHECK(read_time_labels(records, s, &xlabels).empty());
    CHECK(xlabels == nullptr);
    records.push_back(make_labels("dates", dates, "x", "Date"));
    CHECK(read_time_labels(records, s, &xlabels) == dates);
    CHECK(xlabels == &records[1]);
  }
  std::vector<Record> short_labels;
  short_labels.push_back(make_labels("dates", {"d1", "d2", "d3", "d4"}, "x", "Date"));
  CHECK(bad_input([&] { read_time_labels(short_labels, s, &xlabels); }) ==
        "record 'dates': 4 labels for a series of length 5");
}

TEST_CASE("mle io: the fit records written to a stream and read back") {
  const std::vector<double> data = {0.1, -0.2, 0.05, 0.3, -0.15, 0.01};
  const Series s{data.data(), 1, 6};
  Params params;
  params.window = 4;  // windows starting at 0, 1, 2; 2 out-of-sample points
  params.grid.alpha = {1.0, 2.0};
  Estimates est = plain_estimates(3);
  est.quantiles = {-0.1, -0.11, -0.12};
  FinishOptions options;
  options.levels = {0.05};
  const std::vector<Degenerate> degenerate = {Degenerate::none, Degenerate::constant, Degenerate::none};
  const std::vector<std::uint8_t> hits = {1, 0};
  const std::vector<double> table = backtest_rows(s, params, options.levels, hits);
  const std::vector<std::string> dates = {"d1", "d2", "d3", "d4", "d5", "d6"};
  const Record xlabels = make_labels("dates", dates, "x", "Date");
  const json attrs = fit_attrs(s, params, false, "1,2", Backend::cpu, 1, 1, 0);
  MemorySink sink;
  {
    StreamWriter w(sink);
    write_fits(w, FitOutput{s, params, est, options, true, degenerate, hits, table, &xlabels, dates, attrs});
    w.finish();
  }
  MemorySource src(sink.bytes.data(), sink.bytes.size());
  const std::vector<Record> back = StreamReader(src).read_all();
  std::vector<std::string> names;
  for (const Record& r : back) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"start", "theta", "p", "s_l", "s_r", "loglik", "no_maximum", "skew", "aic",
                                          "bic", "quantiles", "exceedances", "backtest", "window_label",
                                          "exceedance_label"});
  auto find = [&](const std::string& name) -> const Record& {
    for (const Record& r : back)
      if (r.name == name) return r;
    FAIL("no record " << name);
    return back[0];
  };
  const Record& start = find("start");
  CHECK(start.shape == Shape{3});
  CHECK(start.data<std::int64_t>()[2] == 2);
  const Record& theta = find("theta");
  CHECK(theta.shape == Shape{1, 3});
  CHECK(theta.data<double>()[1] == est.theta[1]);
  CHECK(theta.attrs["kind"] == "mle.fit");
  CHECK(theta.attrs["windows"] == 3);
  CHECK(theta.attrs["no_maximum"]["all_equal"] == 1);
  CHECK(find("no_maximum").data<std::uint8_t>()[1] == 1);
  // AIC and BIC of the AEPD fit: k = 4 parameters, n = the window's 4 points
  for (int w = 0; w < 3; ++w) {
    CHECK(find("aic").data<double>()[w] == 8 - 2 * est.loglik[w]);
    CHECK(find("bic").data<double>()[w] == doctest::Approx(4 * std::log(4.0) - 2 * est.loglik[w]).epsilon(1e-15));
  }
  CHECK(find("aic").attrs["parameters"] == 4);
  const Record& quantiles = find("quantiles");
  CHECK(quantiles.shape == Shape{1, 3, 1});
  CHECK(quantiles.attrs["level_names"][0] == "0.05");
  const Record& exceed = find("exceedances");
  CHECK(exceed.shape == Shape{1, 2, 1});
  CHECK(exceed.attrs["first_index"] == 4);
  const Record& backtest = find("backtest");
  CHECK(backtest.shape == Shape{1, 1, kBacktestColumns});
  CHECK(backtest.data<double>()[2] == 1);  // one exceedance
  CHECK(backtest.attrs["columns"][3] == "kupiec_lr");
  // each window's last date; each out-of-sample point's date
  CHECK(read_labels(find("window_label")) == std::vector<std::string>{"d4", "d5", "d6"});
  CHECK(read_labels(find("exceedance_label")) == std::vector<std::string>{"d5", "d6"});
}
