// gen-input array: a generic named array (zeros, ones, linspace, uniform or
// normal random numbers) for tests, examples and users' own experiments.
#include <cmath>
#include <sstream>

#include "common/cli.hpp"
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
    if constexpr (std::is_integral_v<T>) v[i] = static_cast<T>(std::floor(x));
    else v[i] = static_cast<T>(x);
  }
}

int run_array(int argc, char** argv) {
  Cli cli({"gen-input array", "Write one named array", "",
           "  gen-input array --name x --shape 3,4 --fill uniform --seed 1 | inspect",
           "the array (a stream of one record)"},
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
  json attrs = {{"kind", cli.get<std::string>("kind")}, {"fill", how}, {"seed", seed}, {"lo", lo}, {"hi", hi}};
  OutputFile out(cli.output());  // refuse a terminal before doing the work
  Record r = Record::make(cli.get<std::string>("name"), *dtype, parse_shape(cli.get<std::string>("shape")),
                          cli.stamp(attrs));
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
