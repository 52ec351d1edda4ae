// Units for nps-export's pieces: numbers that read back bit for bit, RFC 4180
// fields, the dataset's axes, coordinates, labels and series, the table choice.
#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>

#include "common/labels.hpp"
#include "export/dataset.hpp"
#include "export/formats.hpp"

using namespace numpipe;
using namespace numpipe::exporter;

namespace {
Record doubles(const std::string& name, Shape shape, std::vector<double> v, json attrs = json::object()) {
  return Record::from<double>(name, std::move(shape), v.data(), std::move(attrs));
}
}  // namespace

TEST_CASE("numbers print in the shortest form that reads back to the same bits") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, 8);
    if (std::isnan(v)) continue;
    const std::string s = format_double(v);
    double back = 0;
    if (std::isinf(v)) {
      CHECK(s == (v > 0 ? "inf" : "-inf"));
      continue;
    }
    std::from_chars(s.data(), s.data() + s.size(), back);
    std::uint64_t back_bits;
    std::memcpy(&back_bits, &back, 8);
    CHECK(back_bits == bits);
  }
  CHECK(format_double(0.1) == "0.1");
  CHECK(format_double(1e-300) == "1e-300");
  CHECK(format_double(std::nan("")) == "nan");
  CHECK(format_double(-0.0) == "-0");
  const float f = 0.1f;
  CHECK(format_number(reinterpret_cast<const std::byte*>(&f), DType::f4) == "0.1");
  const std::int64_t big = (std::int64_t{1} << 62) + 1;
  CHECK(format_number(reinterpret_cast<const std::byte*>(&big), DType::i8) == "4611686018427387905");
  const std::uint8_t u = 200;
  CHECK(format_number(reinterpret_cast<const std::byte*>(&u), DType::u1) == "200");
}

TEST_CASE("CSV fields are quoted as RFC 4180 says") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field(" padded") == "\" padded\"");
  CHECK(csv_field("") == "");
}

TEST_CASE("the dataset: axes from attrs and kinds, coordinates, labels, series") {
  std::vector<Record> rs;
  rs.push_back(doubles("strike", {3}, {90, 100, 110}, {{"dims", {"strike"}}, {"units", "USD"}}));
  rs.push_back(doubles("price", {2, 3}, {1, 2, 3, 4, 5, 6}, {{"dims", {"maturity", "strike"}}, {"history", json::array({{{"tool", "price"}}})}}));
  rs.push_back(make_labels("strike_label", {"a", "b", "c"}, "strike", "name"));
  const json g = {{"dims", {"y", "x"}}, {"origin", {0.5, 1.0}}, {"spacing", {0.5, 2.0}}};
  for (int k = 0; k < 3; ++k)
    rs.push_back(doubles("snap_d", {2, 2}, {1.0 * k, 2, 3, 4}, {{"kind", "fluid.snapshot"}, {"time", 0.5 * k}, {"step", 10 * k}, {"grid", g}}));
  rs.push_back(doubles("diagnostics", {2, 2}, {0, 1, 10, 2}, {{"columns", {"step", "mass"}}}));
  Dataset ds = build_dataset(rs);
  REQUIRE(ds.axis("strike"));
  CHECK(ds.axis("strike")->coordinate == std::vector<double>{90, 100, 110});
  CHECK(ds.axis("strike")->units == "USD");
  CHECK(ds.axis("strike")->labels == std::vector<std::string>{"a", "b", "c"});
  CHECK(ds.axis("strike")->labels_name == "name");
  CHECK(ds.variable("strike")->coordinate);
  CHECK(ds.variable("price")->dims == std::vector<std::string>{"maturity", "strike"});
  CHECK(ds.axis("maturity")->coordinate.empty());
  const Variable* snap = ds.variable("snap_d");
  CHECK(snap->dims == std::vector<std::string>{"time", "y", "x"});
  CHECK(snap->gridded);
  CHECK(snap->rows() == 12);
  CHECK(snap->value(8, 0) == 2.0);  // third snapshot, first element
  CHECK(ds.axis("time")->coordinate == std::vector<double>{0, 0.5, 1.0});
  CHECK(ds.axis("x")->coordinate == std::vector<double>{1.0, 3.0});
  CHECK(ds.axis("y")->coordinate == std::vector<double>{0.5, 1.0});
  const Variable* diag = ds.variable("diagnostics");
  CHECK(diag->columns == std::vector<std::string>{"step", "mass"});
  CHECK(diag->dims == std::vector<std::string>{"diagnostics_row"});
  CHECK(diag->value(1, 1) == 2.0);
  CHECK(ds.history.size() == 1);  // the record with the longest history gives the file's attrs

  // The CSV table: price's [maturity, strike] holds the most records; the
  // snapshots (a field) and the diagnostics (other axes) are left out.
  TableChoice t = choose_table(ds, {});
  CHECK(t.dims == std::vector<std::string>{"maturity", "strike"});
  REQUIRE(t.variables.size() == 1);
  CHECK(t.variables[0]->name == "price");
  CHECK(t.left_out == std::vector<std::string>{"snap_d", "diagnostics"});  // the field first, named on stderr
  CHECK_THROWS_AS(choose_table(ds, {"price", "diagnostics"}), Error);
  CHECK(choose_table(ds, {"snap_d"}).dims == std::vector<std::string>{"time", "y", "x"});

  // An axis given two sizes: refused (strict), renamed (not strict).
  std::vector<Record> clash;
  clash.push_back(doubles("a", {2}, {1, 2}, {{"dims", {"k"}}}));
  clash.push_back(doubles("b", {3}, {1, 2, 3}, {{"dims", {"k"}}}));
  CHECK_THROWS_AS(build_dataset(clash), Error);
  Dataset lenient = build_dataset(clash, false);
  CHECK(lenient.variable("b")->dims == std::vector<std::string>{"k2"});
}

TEST_CASE("CSV headers: a table's columns keep their names unless one collides; two labels named alike") {
  const json fit = {{"kind", "mle.fit"}, {"windows", 2}};
  std::vector<Record> rs;
  rs.push_back(doubles("theta", {1, 2}, {1, 2}, fit));
  json se = fit;
  se["columns"] = {"theta", "p"};
  rs.push_back(doubles("stderr", {1, 2, 2}, {0.1, 0.2, 0.3, 0.4}, se));
  json bt = fit;
  bt["columns"] = {"n", "kupiec_lr"};
  rs.push_back(doubles("backtest", {1, 3, 2}, {1, 2, 3, 4, 5, 6}, bt));  // [series, level, column]: not by window
  rs.push_back(make_labels("window_label", {"d0", "d1"}, "window", "date"));
  json ex = fit;
  ex["dims"] = {"series", "time"};
  rs.push_back(doubles("exceedances", {1, 3}, {0, 1, 0}, ex));
  rs.push_back(make_labels("exceedance_label", {"e0", "e1", "e2"}, "exceedances", "date"));
  Dataset ds = build_dataset(rs);
  CHECK(ds.axis("window")->labels_name == "date");
  CHECK(ds.axis("time")->labels_name == "time_date");
  CHECK(ds.variable("backtest")->dims == std::vector<std::string>{"series", "backtest_row"});
  MemorySink out;
  write_csv(ds, choose_table(ds, {}), out);
  CHECK(out.bytes.substr(0, out.bytes.find('\n')) == "series,window,date,theta,stderr_theta,stderr_p");
  CHECK(out.bytes.find("0,1,d1,2,0.3,0.4\n") != std::string::npos);
  MemorySink b;
  write_csv(ds, choose_table(ds, {"backtest"}), b);
  CHECK(b.bytes.substr(0, b.bytes.find('\n')) == "series,backtest_row,n,kupiec_lr");
}
