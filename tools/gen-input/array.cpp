// gen-input array: a generic named array (zeros, ones, linspace, uniform or
// normal random numbers) for tests, examples and users' own experiments.
#include <cmath>
#include <limits>
#include <sstream>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/memory.hpp"
#include "common/random.hpp"
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

int run_array(int argc, char** argv) {
  Cli cli({"gen-input array", "Write one named array", "",
           "  gen-input array --name x --shape 3,4 --fill uniform --seed 1 | inspect"},
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
  cli.parse(argc, argv);
  auto dtype = parse_dtype(cli.get<std::string>("dtype"));
  if (!dtype) fail_input("--dtype must be one of f8 f4 i8 i4 u8 u1, got '" + cli.get<std::string>("dtype") + "'");
  std::string how = cli.get<std::string>("fill");
  std::uint64_t seed = cli.get<std::uint64_t>("seed");
  double lo = cli.get<double>("lo"), hi = cli.get<double>("hi");
  if (!std::isfinite(lo) || !std::isfinite(hi)) fail_input("--lo and --hi must be finite");
  if (lo > hi) fail_input("--lo must not exceed --hi, got --lo " + std::to_string(lo) + " --hi " + std::to_string(hi));
  if (cli.get<std::string>("name").empty()) fail_input("--name must not be empty");
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
