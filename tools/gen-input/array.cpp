// gen-input array: a generic named array (zeros, ones, linspace, uniform or
// normal random numbers) for tests, examples and users' own experiments, or a
// user's own text table (--from-text: CSV or whitespace columns, named columns,
// a label column such as dates kept as a labels record).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/random.hpp"
#include "common/text_table.hpp"
#include "common/strings.hpp"
#include "generator.hpp"
#include "output.hpp"

namespace numpipe {
namespace {

Shape parse_shape(const std::string& text) {
  if (text.empty()) fail_input("--shape is empty");
  Shape shape;
  for (const std::string& item : split_fields(text)) {
    try {
      std::size_t used = 0;
      long long v = std::stoll(item, &used);
      if (used != item.size() || v < 0) throw std::invalid_argument(item);
      shape.push_back(v);
    } catch (const std::exception&) {
      fail_input("--shape must be non-negative integers separated by commas, got '" + text + "'");
    }
  }
  element_count(shape);  // rejects overflow
  return shape;
}

// Refuses (bad input) a value that dtype T cannot hold (a cast would be undefined
// or infinite). 2^63 and 2^64 are exact doubles: the bounds are compared without rounding.
// `at` says where ("at element 7"), made only for the message.
template <class T, class Where>
void check_holds(double x, const std::string& how, Where at) {
  const double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  const double above = std::is_integral_v<T> ? std::ldexp(1.0, std::numeric_limits<T>::digits)
                                             : static_cast<double>(std::numeric_limits<T>::max());
  if (!(x >= lowest && (std::is_integral_v<T> ? x < above : x <= above)))
    fail_input("--fill " + how + " gives " + value_text(x) + at() + ", which dtype " + dtype_name(dtype_of<T>()) +
               " cannot hold: choose --lo and --hi within its range, or another --dtype");
}
template <class T>
void check_holds(double x, const std::string& how, const char* at) {
  check_holds<T>(x, how, [at] { return std::string(at); });
}
std::string at_element(std::size_t i) { return " at element " + std::to_string(i); }

// The fill's values for elements [first, first + count) of n, into v; `rng` goes on
// from the piece before (the same values as one pass over the whole array).
template <class T>
void fill(T* v, std::size_t first, std::size_t count, std::size_t n, const std::string& how, Rng& rng, double lo,
          double hi) {
  for (std::size_t i = first; i < first + count; ++i) {
    double x;
    if (how == "zeros") x = 0;
    else if (how == "ones") x = 1;
    else if (how == "linspace") x = n > 1 ? lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(n - 1) : lo;
    else if (how == "uniform") x = rng.uniform(lo, hi);
    else x = rng.normal();
    if constexpr (std::is_integral_v<T>) x = std::floor(x);
    check_holds<T>(x, how, [i] { return at_element(i); });
    v[i - first] = static_cast<T>(x);
  }
}

// Before anything is written (the array goes out in pieces): the values at the ends
// of the fill's range, so that a value the dtype cannot hold is refused up front
// (fill() checks every element again).
template <class T>
void check_fill_range(std::size_t n, const std::string& how, double lo, double hi) {
  if (n == 0) return;
  const double floor_lo = std::is_integral_v<T> ? std::floor(lo) : lo;
  if (how == "linspace") {
    check_holds<T>(floor_lo, how, [] { return at_element(0); });
    if (n > 1) check_holds<T>(std::is_integral_v<T> ? std::floor(hi) : hi, how, [n] { return at_element(n - 1); });
  } else if (how == "uniform") {
    check_holds<T>(floor_lo, how, " (its lowest value)");
    // [lo, hi): an integer dtype gets at most the largest integer below hi (lo when lo == hi).
    const double top = std::is_integral_v<T> ? std::max(floor_lo, std::ceil(hi) - 1) : hi;
    check_holds<T>(top, how, " (its highest value)");
  }
}

// The generated array, written in pieces (StreamWriter::write_in_pieces): memory is a
// piece, whatever the shape.
template <class T>
void write_filled(StreamWriter& writer, const std::string& name, const Shape& shape, const json& attrs,
                  const std::string& how, std::uint64_t seed, double lo, double hi) {
  const std::size_t n = static_cast<std::size_t>(element_count(shape));
  check_fill_range<T>(n, how, lo, hi);
  Rng rng(seed);
  writer.write_in_pieces(name, dtype_of<T>(), shape, attrs, [&](std::uint64_t offset, std::size_t bytes, void* dst) {
    fill<T>(static_cast<T*>(dst), static_cast<std::size_t>(offset / sizeof(T)), bytes / sizeof(T), n, how, rng, lo, hi);
  });
}

// --layout and --header: their words checked by Cli::parse (one_of), with or without --from-text.
struct TextLayout {
  std::string layout = "table", header = "auto";
};

// --from-text: the chosen numeric columns as one table [rows, columns] (attrs
// `columns`) or one 1-D record per column (--layout columns), and the label
// column as the labels record `row_label` (labels_of "row").
void write_from_text(const Cli& cli, const TextLayout& text, OutputFile& out) {
  for (const char* generated : {"shape", "fill", "lo", "hi", "seed"})
    if (cli.has(generated)) fail_input(std::string("--") + generated + " makes numbers; with --from-text the file gives them");
  const std::string path = cli.get<std::string>("from-text"), name = cli.get<std::string>("name");
  const std::string& layout = text.layout;
  auto dtype = parse_dtype(cli.get<std::string>("dtype"));
  if (dtype != DType::f8 && dtype != DType::f4)
    fail_input("--dtype with --from-text must be f8 or f4 (numbers from text are not rounded to integers), got '" +
               cli.get<std::string>("dtype") + "'");
  TextTableOptions options;
  if (text.header == "yes") options.header = TextTableOptions::Header::present;
  if (text.header == "no") options.header = TextTableOptions::Header::absent;
  const TextTable table = read_text_table(path, options);

  // The label column: --labels, else the first column not taken by --columns that
  // may hold labels (TextTable::is_label_column); every other column is data, and
  // numbers() below names its first bad cell.
  std::optional<std::size_t> label_column;
  if (cli.has("labels")) label_column = table.column(cli.get<std::string>("labels"), "--labels");
  std::vector<std::size_t> picked;
  if (cli.has("columns")) picked = table.columns_of(cli.get<std::string>("columns"), "--columns");
  for (std::size_t c = 0; c < table.columns() && !label_column; ++c)
    if (std::find(picked.begin(), picked.end(), c) == picked.end() && table.is_label_column(c)) label_column = c;
  if (!cli.has("columns"))
    for (std::size_t c = 0; c < table.columns(); ++c)
      if (label_column != c) picked.push_back(c);
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
  if (layout == "columns")  // before the first record
    for (std::size_t j = 0; j < k; ++j)
      if (names[j].empty()) fail_input("--layout columns: column " + std::to_string(picked[j] + 1) + " of " + path + " has no name");
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
      json a = attrs;
      a["dims"] = {"row"};
      a["column"] = names[j];
      emit(names[j], Shape{static_cast<std::int64_t>(rows)}, values[j], a);
    }
  }
  if (label_column) writer.write(make_labels("row_label", table.strings(*label_column), "row", table.names[*label_column]));
  finish_stream(writer, out);
}

Cli array_cli(TextLayout& text) {
  Cli cli({"gen-input array", "Write one named array, or a text table's columns", "",
           "  gen-input array --name x --shape 3,4 --fill uniform --seed 1 | inspect\n"
           "  gen-input array --from-text share/ref/mle-prices.csv --columns close | inspect",
           "the array, or the table's columns (a stream)"},
          kOutput | kTextInput | kNoProgressLine);
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
      "labels", "The label column (dates, names), kept as the labels record row_label (default: the first column not taken by --columns that is text under a header such as date, or the first column, all text); any other column with text is an error",
      cxxopts::value<std::string>(), "C");
  cli.option("layout", &text.layout,
             "table: one [rows, columns] record named --name; columns: one 1-D record per column, named by its header",
             "L", "Text table")
      .one_of({"table", "columns"});
  cli.option("header", &text.header, "Whether the first line names the columns: auto, yes or no", "H", "Text table")
      .one_of({"auto", "yes", "no"});
  cli.add("Text table")("allow-nonfinite", "Accept nan and inf in the table (refused by default)");
  return cli;
}

// A generated array's fill: how, the range, the seed and the dtype, checked.
struct Fill {
  DType dtype = DType::f8;
  std::string how;
  std::uint64_t seed = 1;
  double lo = 0, hi = 1;
};

Fill fill_of(const Cli& cli) {
  for (const char* text_only : {"columns", "labels", "layout", "header", "allow-nonfinite"})
    if (cli.has(text_only)) fail_input(std::string("--") + text_only + " needs --from-text");
  auto dtype = parse_dtype(cli.get<std::string>("dtype"));
  if (!dtype) fail_input("--dtype must be one of f8 f4 i8 i4 u8 u1, got '" + cli.get<std::string>("dtype") + "'");
  Fill f;
  f.dtype = *dtype;
  f.how = cli.get<std::string>("fill");
  f.seed = cli.get<std::uint64_t>("seed");
  f.lo = cli.get<double>("lo");
  f.hi = cli.get<double>("hi");
  if (!std::isfinite(f.lo) || !std::isfinite(f.hi)) fail_input("--lo and --hi must be finite");
  if (f.lo > f.hi) fail_input("--lo must not exceed --hi, got --lo " + std::to_string(f.lo) + " --hi " + std::to_string(f.hi));
  if (f.how == "normal" && (f.dtype == DType::u1 || f.dtype == DType::u8))
    fail_input(std::string("--fill normal gives negative values, which dtype ") + dtype_name(f.dtype) +
               " cannot hold: use --fill uniform with --lo and --hi, or a signed --dtype");
  if (f.how != "zeros" && f.how != "ones" && f.how != "linspace" && f.how != "uniform" && f.how != "normal")
    fail_input("--fill must be zeros, ones, linspace, uniform or normal, got '" + f.how + "'");
  return f;
}

// The array in the fill's dtype, in pieces.
void write_array(StreamWriter& writer, const std::string& name, const Shape& shape, const json& attrs, const Fill& f) {
  switch (f.dtype) {
    case DType::f8: write_filled<double>(writer, name, shape, attrs, f.how, f.seed, f.lo, f.hi); break;
    case DType::f4: write_filled<float>(writer, name, shape, attrs, f.how, f.seed, f.lo, f.hi); break;
    case DType::i8: write_filled<std::int64_t>(writer, name, shape, attrs, f.how, f.seed, f.lo, f.hi); break;
    case DType::i4: write_filled<std::int32_t>(writer, name, shape, attrs, f.how, f.seed, f.lo, f.hi); break;
    case DType::u8: write_filled<std::uint64_t>(writer, name, shape, attrs, f.how, f.seed, f.lo, f.hi); break;
    case DType::u1: write_filled<std::uint8_t>(writer, name, shape, attrs, f.how, f.seed, f.lo, f.hi); break;
  }
}

int run_array(int argc, char** argv) {
  // 1. The options.
  TextLayout text;
  Cli cli = array_cli(text);
  cli.parse(argc, argv);
  if (cli.get<std::string>("name").empty()) fail_input("--name must not be empty");

  // 2. A text table's columns (a terminal refused before reading).
  if (cli.has("from-text")) {
    OutputFile out(cli.output());
    write_from_text(cli, text, out);
    return 0;
  }

  // 3. Or a generated array: its fill checked, the output opened (a terminal refused
  //    before the work), the memory of one piece at a time (and the frames compressing).
  const Fill fill = fill_of(cli);
  const json attrs = {{"kind", cli.get<std::string>("kind")}, {"fill", fill.how}, {"seed", fill.seed},
                      {"lo", fill.lo}, {"hi", fill.hi}};
  OutputFile out(cli.output());
  const Shape shape = parse_shape(cli.get<std::string>("shape"));
  const std::uint64_t bytes = payload_bytes(fill.dtype, shape);
  require_host_memory({"shape " + shape_string(shape) + " (written in pieces of " +
                           format_bytes(double(StreamWriter::kPieceBytes)) + ")",
                       double(std::min<std::uint64_t>(bytes, StreamWriter::kPieceBytes)), 1.0, "byte"});

  // 4. The array, in pieces.
  StreamWriter writer(out);
  write_array(writer, cli.get<std::string>("name"), shape, cli.stamp(attrs), fill);
  return finish_stream(writer, out);
}

const RegisterGenerator reg{{"array", "one named array: zeros, ones, linspace, uniform or normal", run_array}};

}  // namespace
}  // namespace numpipe
