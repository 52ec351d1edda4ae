// gen-input array: a generic named array (zeros, ones, linspace, uniform or
// normal random numbers) for tests, examples and users' own experiments, or a
// user's own text table (--from-text: CSV or whitespace columns, named columns,
// a label column such as dates kept as a labels record).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/random.hpp"
#include "common/text_table.hpp"
#include "generator.hpp"

namespace numpipe {
namespace {

Shape parse_shape(const std::string& text) {
  Shape shape;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    try {
      std::size_t used = 0;
      long long v = std::stoll(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      shape.push_back(v);
    } catch (const std::exception&) {
      fail_input("--shape must be non-negative integers separated by commas, got '" + text + "'");
    }
  }
  if (shape.empty()) fail_input("--shape is empty");
  element_count(shape);  // rejects overflow
  return shape;
}

template <class T>
void fill(Record& r, const std::string& how, std::uint64_t seed, double lo, double hi) {
  T* v = r.data<T>();
  std::size_t n = r.size();
  Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    double x;
    if (how == "zeros") x = 0;
    else if (how == "ones") x = 1;
    else if (how == "linspace") x = n > 1 ? lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(n - 1) : lo;
    else if (how == "uniform") x = rng.uniform(lo, hi);
    else if (how == "normal") x = rng.normal();
    else fail_input("--fill must be zeros, ones, linspace, uniform or normal, got '" + how + "'");
    if constexpr (std::is_integral_v<T>) x = std::floor(x);
    // Refuse what the dtype cannot hold (a cast would be undefined or infinite).
    // 2^63 and 2^64 are exact doubles: the bounds are compared without rounding.
    const double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
    const double above = std::is_integral_v<T> ? std::ldexp(1.0, std::numeric_limits<T>::digits)
                                               : static_cast<double>(std::numeric_limits<T>::max());
    if (!(x >= lowest && (std::is_integral_v<T> ? x < above : x <= above)))
      fail_input("--fill " + how + " gives " + value_text(x) + " at element " + std::to_string(i) + ", which dtype " +
                 dtype_name(dtype_of<T>()) + " cannot hold: choose --lo and --hi within its range, or another --dtype");
    v[i] = static_cast<T>(x);
  }
}

// --from-text: the chosen numeric columns as one table [rows, columns] (attrs
// `columns`) or one 1-D record per column (--layout columns), and the label
// column as the labels record `row_label` (labels_of "row").
void write_from_text(const Cli& cli, OutputFile& out) {
  for (const char* generated : {"shape", "fill", "lo", "hi", "seed"})
    if (cli.has(generated)) fail_input(std::string("--") + generated + " makes numbers; with --from-text the file gives them");
  const std::string path = cli.get<std::string>("from-text"), layout = cli.get<std::string>("layout"),
                    header = cli.get<std::string>("header"), name = cli.get<std::string>("name");
  auto dtype = parse_dtype(cli.get<std::string>("dtype"));
  if (dtype != DType::f8 && dtype != DType::f4)
    fail_input("--dtype with --from-text must be f8 or f4 (numbers from text are not rounded to integers), got '" +
               cli.get<std::string>("dtype") + "'");
  if (layout != "table" && layout != "columns") fail_input("--layout must be table or columns, got '" + layout + "'");
  TextTableOptions options;
  if (header == "yes") options.header = TextTableOptions::Header::present;
  else if (header == "no") options.header = TextTableOptions::Header::absent;
  else if (header != "auto") fail_input("--header must be auto, yes or no, got '" + header + "'");
  const TextTable table = read_text_table(path, options);

  // The label column: --labels, else the first column that is not all numbers
  // and not taken by --columns.
  std::optional<std::size_t> label_column;
  if (cli.has("labels")) label_column = table.column(cli.get<std::string>("labels"), "--labels");
  std::vector<std::size_t> picked;
  if (cli.has("columns")) {
    picked = table.columns_of(cli.get<std::string>("columns"), "--columns");
    for (std::size_t c = 0; c < table.columns() && !cli.has("labels") && !label_column; ++c)
      if (std::find(picked.begin(), picked.end(), c) == picked.end() && !table.is_numeric(c)) label_column = c;
  } else {
    for (std::size_t c = 0; c < table.columns(); ++c) {
      if (label_column == c) continue;
      if (table.is_numeric(c)) picked.push_back(c);
      else if (!label_column && !cli.has("labels")) label_column = c;
      else picked.push_back(c);  // numbers() below names the offending field
    }
  }
  if (picked.empty()) fail_input("--from-text " + path + ": no numeric columns to take (columns: " + std::to_string(table.columns()) + ")");
  for (std::size_t c : picked)
    if (label_column == c) fail_input("--columns and --labels both take column '" + table.names[c] + "'");

  const std::size_t rows = table.size(), k = picked.size();
  std::vector<std::string> names;
  std::vector<std::vector<double>> values;
  for (std::size_t c : picked) {
    names.push_back(table.names[c]);
    values.push_back(table.numbers(c, cli.has("allow-nonfinite")));
  }
  json attrs = {{"kind", cli.get<std::string>("kind")}, {"source", path == "-" ? "stdin" : path}};
  if (label_column) attrs["labels"] = table.names[*label_column];
  StreamWriter writer(out);
  auto emit = [&](const std::string& record_name, const Shape& shape, const std::vector<double>& v, json a) {
    Record r = Record::make(record_name, *dtype, shape, cli.stamp(std::move(a)));
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (*dtype == DType::f8) r.data<double>()[i] = v[i];
      else r.data<float>()[i] = static_cast<float>(v[i]);
    }
    writer.write(r);
  };
  if (layout == "table") {
    std::vector<double> flat(rows * k);
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t i = 0; i < rows; ++i) flat[i * k + j] = values[j][i];
    json a = attrs;
    a["columns"] = names;
    a["dims"] = {"row", "column"};
    emit(name, Shape{static_cast<std::int64_t>(rows), static_cast<std::int64_t>(k)}, flat, a);
  } else {
    for (std::size_t j = 0; j < k; ++j) {
      if (names[j].empty()) fail_input("--layout columns: column " + std::to_string(picked[j] + 1) + " of " + path + " has no name");
      json a = attrs;
      a["dims"] = {"row"};
      a["column"] = names[j];
      emit(names[j], Shape{static_cast<std::int64_t>(rows)}, values[j], a);
    }
  }
  if (label_column) writer.write(make_labels("row_label", table.strings(*label_column), "row", table.names[*label_column]));
  writer.finish();
  out.commit();
}

int run_array(int argc, char** argv) {
  Cli cli({"gen-input array", "Write one named array, or a text table's columns", "",
           "  gen-input array --name x --shape 3,4 --fill uniform --seed 1 | inspect\n"
           "  gen-input array --from-text share/ref/mle-prices.csv --columns close | inspect",
           "the array, or the table's columns (a stream)",
           "Accepted for symmetry with the other tools (gen-input array shows no progress line)"},
          kOutput);
  cli.add("Array")("name", "Array name", cxxopts::value<std::string>()->default_value("x"), "NAME")(
      "shape", "Shape, e.g. 1000 or 64,64", cxxopts::value<std::string>()->default_value("16"), "N[,M...]")(
      "dtype", "f8 f4 i8 i4 u8 u1", cxxopts::value<std::string>()->default_value("f8"), "T")(
      "fill", "zeros, ones, linspace, uniform (on [lo, hi)) or normal (standard)",
      cxxopts::value<std::string>()->default_value("uniform"), "HOW")(
      "lo", "Low end for linspace and uniform", cxxopts::value<double>()->default_value("0"), "X")(
      "hi", "High end for linspace and uniform", cxxopts::value<double>()->default_value("1"), "X")(
      "seed", "Random seed", cxxopts::value<std::uint64_t>()->default_value("1"), "S")(
      "kind", "The attrs' kind", cxxopts::value<std::string>()->default_value("array"), "KIND");
  cli.add("Text table")("from-text",
                        "Read numbers from a text table (CSV with a header line, or whitespace columns; - for stdin)",
                        cxxopts::value<std::string>(), "FILE")(
      "columns", "The columns to take, by header name or 1-based number (default: every numeric column)",
      cxxopts::value<std::string>(), "C,...")(
      "labels", "The label column (dates, names), kept as the labels record row_label (default: the first text column not taken by --columns)",
      cxxopts::value<std::string>(), "C")(
      "layout", "table: one [rows, columns] record named --name; columns: one 1-D record per column, named by its header",
      cxxopts::value<std::string>()->default_value("table"), "L")(
      "header", "Whether the first line names the columns: auto, yes or no",
      cxxopts::value<std::string>()->default_value("auto"), "H")(
      "allow-nonfinite", "Accept nan and inf in the table (refused by default)");
  cli.parse(argc, argv);
  if (cli.get<std::string>("name").empty()) fail_input("--name must not be empty");
  if (cli.has("from-text")) {
    OutputFile out(cli.output());  // refuse a terminal before reading
    write_from_text(cli, out);
    return 0;
  }
  for (const char* text_only : {"columns", "labels", "allow-nonfinite"})
    if (cli.has(text_only)) fail_input(std::string("--") + text_only + " needs --from-text");
  auto dtype = parse_dtype(cli.get<std::string>("dtype"));
  if (!dtype) fail_input("--dtype must be one of f8 f4 i8 i4 u8 u1, got '" + cli.get<std::string>("dtype") + "'");
  std::string how = cli.get<std::string>("fill");
  std::uint64_t seed = cli.get<std::uint64_t>("seed");
  double lo = cli.get<double>("lo"), hi = cli.get<double>("hi");
  if (!std::isfinite(lo) || !std::isfinite(hi)) fail_input("--lo and --hi must be finite");
  if (lo > hi) fail_input("--lo must not exceed --hi, got --lo " + std::to_string(lo) + " --hi " + std::to_string(hi));
  if (how == "normal" && (*dtype == DType::u1 || *dtype == DType::u8))
    fail_input(std::string("--fill normal gives negative values, which dtype ") + dtype_name(*dtype) +
               " cannot hold: use --fill uniform with --lo and --hi, or a signed --dtype");
  json attrs = {{"kind", cli.get<std::string>("kind")}, {"fill", how}, {"seed", seed}, {"lo", lo}, {"hi", hi}};
  OutputFile out(cli.output());  // refuse a terminal before doing the work
  const Shape shape = parse_shape(cli.get<std::string>("shape"));
  require_host_memory({"shape " + shape_string(shape), double(element_count(shape)), double(dtype_size(*dtype)),
                       "element"});
  Record r = Record::make(cli.get<std::string>("name"), *dtype, shape, cli.stamp(attrs));
  switch (*dtype) {
    case DType::f8: fill<double>(r, how, seed, lo, hi); break;
    case DType::f4: fill<float>(r, how, seed, lo, hi); break;
    case DType::i8: fill<std::int64_t>(r, how, seed, lo, hi); break;
    case DType::i4: fill<std::int32_t>(r, how, seed, lo, hi); break;
    case DType::u8: fill<std::uint64_t>(r, how, seed, lo, hi); break;
    case DType::u1: fill<std::uint8_t>(r, how, seed, lo, hi); break;
  }
  StreamWriter writer(out);
  writer.write(r);
  writer.finish();
  out.commit();
  return 0;
}

const RegisterGenerator reg{{"array", "one named array: zeros, ones, linspace, uniform or normal", run_array}};

}  // namespace
}  // namespace numpipe
