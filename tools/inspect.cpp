// inspect: prints a stream's records (name, dtype, shape, attrs, min/max/mean,
// NaN count), like Madagascar's sfin/sfattr; --json for scripts; --devices
// lists the compute devices numpipe sees.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/cli.hpp"

namespace numpipe {
namespace {

struct Stats {
  std::size_t count = 0, nans = 0, infs = 0, finite = 0;
  double min = 0, max = 0, mean = 0;
};

Stats stats_of(const Record& r) {
  Stats s;
  s.count = r.size();
  double sum = 0;  // fixed order: the same bits for the same input
  bool first = true;
  for (std::size_t i = 0; i < s.count; ++i) {
    double v = r.value_as_double(i);
    if (std::isnan(v)) { ++s.nans; continue; }
    if (std::isinf(v)) { ++s.infs; }
    if (first) { s.min = s.max = v; first = false; }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    if (std::isfinite(v)) { sum += v; ++s.finite; }
  }
  s.mean = s.finite ? sum / static_cast<double>(s.finite) : NAN;
  return s;
}

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

void print_devices(bool as_json) {
  json list = json::array();
  for (int d = 0; d < cuda_device_count(); ++d) list.push_back(query_cuda_device(d).to_json());
  list.push_back(query_host_cpu().to_json());
  if (as_json) {
    std::printf("%s\n", list.dump(2).c_str());
    return;
  }
  for (const auto& d : list)
    std::printf("%s %d  %s  %d %s  %.1f GiB  peak %.0f GB/s, fp64 %.0f GFLOP/s, fp32 %.0f GFLOP/s (%s)\n",
                d["kind"].get<std::string>().c_str(), d["index"].get<int>(), d["name"].get<std::string>().c_str(),
                d["multiprocessors"].get<int>(), d["kind"] == "cuda" ? "SMs" : "threads",
                d["memory_bytes"].get<double>() / 1073741824.0, d["peak_bandwidth_gbs"].get<double>(),
                d["peak_fp64_gflops"].get<double>(), d["peak_fp32_gflops"].get<double>(),
                d["peak_source"].get<std::string>().c_str());
}

int run(int argc, char** argv) {
  Cli cli({"inspect", "Print the records of numpipe streams", "[FILE...]",
           "  gen-input array --shape 3,4 --fill normal | inspect\n"
           "  gen-input ns --n 16 | ns-step --steps 20 --diag-every 5 -o run.nps\n"
           "  inspect run.nps --array diagnostics --values 8\n"
           "  inspect --json run.nps > records.json"},
          kInput | kNoProgressLine);
  cli.add("Inspect")("json", "Print JSON (one array of records per input) for scripts")(
      "values", "Also print the first N values of each array", cxxopts::value<std::size_t>()->default_value("0"), "N")(
      "attrs", "Print attrs in full, indented (default: one line, shortened)")(
      "no-stats", "Skip min/max/mean (faster on huge arrays)")(
      "array", "Print only the records of this name (repeatable); a name in no input is an error",
      cxxopts::value<std::vector<std::string>>(), "NAME")(
      "devices", "List the compute devices (CUDA devices and the CPU) and exit")(
      "files", "", cxxopts::value<std::vector<std::string>>());
  cli.positional({"files"});
  cli.parse(argc, argv);
  bool as_json = cli.has("json");
  if (cli.has("devices")) {
    print_devices(as_json);
    return 0;
  }
  std::vector<std::string> files = cli.has("files") ? cli.get<std::vector<std::string>>("files")
                                                    : std::vector<std::string>{cli.input()};
  std::size_t show_values = cli.get<std::size_t>("values");
  bool full_attrs = cli.has("attrs"), with_stats = !cli.has("no-stats");
  const std::vector<std::string> only = cli.has("array") ? cli.get<std::vector<std::string>>("array") : std::vector<std::string>{};
  std::vector<std::string> seen;  // names read, for the message when --array names none of them
  std::vector<bool> found(only.size(), false);
  json all = json::array();
  for (const std::string& path : files) {
    InputFile in(path);
    StreamReader reader(in, cli.read_limits());
    // One record at a time (the previous payload goes before the next is read);
    // without statistics or values the payloads are passed over unread.
    Record r;
    RecordHeader h;
    const bool need_payload = with_stats || show_values > 0;
    json file_records = json::array();
    if (!as_json && files.size() > 1) std::printf("== %s\n", in.label().c_str());
    for (std::size_t index = 0; reader.next_header(h); ++index) {
      const std::uint64_t bytes = h.bytes;
      if (!only.empty()) {
        if (std::find(seen.begin(), seen.end(), h.name) == seen.end()) seen.push_back(h.name);
        auto it = std::find(only.begin(), only.end(), h.name);
        if (it == only.end()) {  // not asked for: its payload is passed over unread
          reader.skip_payload();
          h = RecordHeader();
          continue;
        }
        found[static_cast<std::size_t>(it - only.begin())] = true;
      }
      if (need_payload) {
        reader.read_payload(std::move(h), r);
      } else {
        reader.skip_payload();
        r.name = std::move(h.name);
        r.dtype = h.dtype;
        r.shape = std::move(h.shape);
        r.attrs = std::move(h.attrs);
      }
      h = RecordHeader();
      Stats s = with_stats ? stats_of(r) : Stats{};
      if (as_json) {
        json j = {{"index", index}, {"name", r.name}, {"dtype", dtype_name(r.dtype)}, {"shape", r.shape},
                  {"bytes", bytes}, {"attrs", r.attrs}};
        if (with_stats)
          j["stats"] = {{"count", s.count}, {"nan", s.nans}, {"inf", s.infs}, {"min", number(s.min)},
                        {"max", number(s.max)}, {"mean", number(s.mean)}};
        if (show_values) {
          json v = json::array();
          for (std::size_t i = 0; i < std::min(show_values, r.size()); ++i) v.push_back(number(r.value_as_double(i)));
          j["values"] = v;
        }
        file_records.push_back(std::move(j));
        continue;
      }
      std::printf("record %zu: %s  %s %s  (%llu bytes)\n", index, r.name.c_str(), dtype_name(r.dtype),
                  shape_string(r.shape).c_str(), static_cast<unsigned long long>(bytes));
      if (with_stats && s.count)
        std::printf("  min %.10g  max %.10g  mean %.10g  nan %zu  inf %zu\n", s.min, s.max, s.mean, s.nans, s.infs);
      std::string attrs = full_attrs ? r.attrs.dump(2) : r.attrs.dump();
      if (!full_attrs && attrs.size() > 160) attrs = attrs.substr(0, 157) + "...";
      std::printf("  attrs %s\n", attrs.c_str());
      if (show_values) {
        std::printf("  values");
        for (std::size_t i = 0; i < std::min(show_values, r.size()); ++i) std::printf(" %.17g", r.value_as_double(i));
        std::printf("\n");
      }
    }
    if (as_json) all.push_back(std::move(file_records));
  }
  for (std::size_t k = 0; k < only.size(); ++k)
    if (!found[k]) {
      std::string names;
      for (const auto& n : seen) names += (names.empty() ? "" : ", ") + n;
      fail_input("--array " + only[k] + ": no record of that name (records: " + (names.empty() ? "none" : names) + ")");
    }
  if (as_json) std::printf("%s\n", (files.size() == 1 ? all[0] : all).dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("inspect", [&] { return numpipe::run(argc, argv); });
}
