// np-profile-craft CASE FILE: writes hand-made profile streams for the
// profile-report CLI tests. Good runs go through numpipe's own writer
// (make_profile_record + append_stream, so that CASE appends one stream to FILE
// as a tool's --profile does); bad cases are written with StreamWriter.
//
// Good runs (numbers chosen so that every derived value is exact):
//   cpu:  device "Test CPU" (bandwidth 100 GB/s, fp64 200, fp32 400 GFLOP/s),
//         params {n: 1000, precision: fp64}; phases
//           read     0.5 s   0 B       0 flop
//           compute  2.0 s   50e9 B    100e9 flop   -> 25 GB/s (25%), 50 GFLOP/s (25%), 2 flop/B
//           write    0.5 s   10e9 B    0 flop       -> 20 GB/s (20%), 0 flop/B
//         total 3 s, 60e9 B, 100e9 flop -> 20 GB/s, 33.33 GFLOP/s, 1.667 flop/B
//   gpu:  device "Test GPU" (100 SMs; bandwidth 2000 GB/s, fp64 10000, fp32 20000 GFLOP/s),
//         params {n: 1000, precision: fp32}; phases
//           upload   0.1 s   2.5e9 B   0            -> 25 GB/s (1.25%)
//           compute  0.2 s   50e9 B    100e9 flop   -> 250 GB/s (12.5%), 500 GFLOP/s (2.5% of fp32), 2 flop/B
//           download 0.2 s   5e9 B     0            -> 25 GB/s
//         total 0.5 s: speed-up 6x over the cpu run
//   nopeaks: like cpu but the device's peaks are unknown (0) and no precision in params.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "common/cli.hpp"
#include "common/profile.hpp"

using namespace numpipe;

namespace {

Record good(const std::string& which) {
  std::string tool = which == "other" ? "other-tool" : "fake-tool";
  Cli cli({tool, "test", "", ""}, kCompute | kProfile);
  std::string a0 = tool, a1 = "--threads", a2 = "1";
  char* argv[] = {a0.data(), a1.data(), a2.data()};
  cli.parse(3, argv);
  DeviceInfo dev;
  PhaseLog log;
  json params = {{"n", 1000}, {"precision", "fp64"}};
  Backend backend = Backend::cpu;
  if (which == "gpu") {
    backend = Backend::cuda;
    dev.kind = "cuda";
    dev.name = "Test GPU";
    dev.multiprocessors = 100;
    dev.memory_bytes = 80ull << 30;
    dev.peak_bandwidth_gbs = 2000;
    dev.peak_fp64_gflops = 10000;
    dev.peak_fp32_gflops = 20000;
    dev.peak_source = "datasheet";
    params["precision"] = "fp32";
    log.add("upload", 0.1, 2.5e9, 0);
    log.add("compute", 0.2, 50e9, 100e9);
    log.add("download", 0.2, 5e9, 0);
  } else {
    dev.kind = "cpu";
    dev.name = "Test CPU";
    dev.multiprocessors = 8;
    dev.memory_bytes = 16ull << 30;
    if (which == "cpu") {
      dev.peak_bandwidth_gbs = 100;
      dev.peak_fp64_gflops = 200;
      dev.peak_fp32_gflops = 400;
      dev.peak_source = "measured 2024-01-01T00:00:00Z";
    } else {
      params.erase("precision");
      dev.peak_source = "unknown";
    }
    log.add("read", 0.5, 0, 0);
    log.add("compute", 2.0, 50e9, 100e9);
    log.add("write", 0.5, 10e9, 0);
  }
  return make_profile_record(cli, backend, dev, params, log);
}

Record bad_base() {
  Record r = good("cpu");
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: np-profile-craft CASE FILE\n");
    return 2;
  }
  std::string c = argv[1], path = argv[2];
  try {
    if (c == "many") {  // a benchmark suite's worth: 6 tools, both backends, repeats, several problems
      const char* tools[] = {"price", "integrate", "mle-fit", "fluid-step", "ns-step", "profile-tool"};
      const char* phases[][3] = {{"setup", "solve", "device setup and copies"}, {"inner", "middle", "outer"},
                                 {"read", "grid kernels", "finish"},           {"steps", "upload", "download"},
                                 {"upload", "steps", "diagnostics"},            {"a", "b", "c"}};
      std::vector<Record> all;
      for (int k = 0; k < 96; ++k) {
        const int t = k % 6, size = k / 24;  // 4 problem sizes per tool, repeated runs on both backends
        const bool gpu = (k / 6) % 2 == 1;
        Cli cli({tools[t], "test", "", ""}, kCompute | kProfile);
        std::string a0 = tools[t];
        char* argv[] = {a0.data()};
        cli.parse(1, argv);
        DeviceInfo dev;
        dev.kind = gpu ? "cuda" : "cpu";
        dev.name = gpu ? "Test GPU" : "Test CPU";
        dev.peak_bandwidth_gbs = gpu ? 3000 : 150;
        dev.peak_fp64_gflops = gpu ? 50000 : 1500;
        dev.peak_fp32_gflops = gpu ? 60000 : 3000;
        dev.peak_source = "measured";
        PhaseLog log;
        const double n = std::pow(10.0, 6 + size) * (1 + 0.01 * (k % 5));
        const double speed = gpu ? 40.0 : 1.0;
        log.add(phases[t][0], 1e-3 * (1 + t), 8 * n, 0);
        log.add(phases[t][1], 1e-7 * n * (1 + t) / speed, 8 * n * (1 + t), n * std::pow(4.0, t - 2));
        log.add(phases[t][2], 2e-4, 8 * n / 3, n / 7);
        all.push_back(make_profile_record(cli, gpu ? Backend::cuda : Backend::cpu, dev,
                                          {{"n", std::pow(10, 6 + size)}, {"precision", k % 4 == 3 ? "fp32" : "fp64"}}, log));
      }
      for (auto& r : all) {  // one stream per run, as --profile appends them
        std::vector<Record> one;
        one.push_back(std::move(r));
        append_stream(path, one);
      }
      return 0;
    }
    if (c == "cpu" || c == "gpu" || c == "nopeaks" || c == "other") {
      std::vector<Record> one;
      one.push_back(good(c));
      append_stream(path, one);
      return 0;
    }
    std::vector<Record> recs;
    Record r = bad_base();
    if (c == "not-profile") {
      r.name = "x";
    } else if (c == "wrong-dtype") {
      Record f = Record::make("profile", DType::f4, {3, 3}, r.attrs);
      for (std::size_t i = 0; i < 9; ++i) f.data<float>()[i] = 1.0f;
      r = std::move(f);
    } else if (c == "wrong-shape") {
      Record f = Record::make("profile", DType::f8, {3, 4}, r.attrs);
      for (std::size_t i = 0; i < 12; ++i) f.data<double>()[i] = 1.0;
      r = std::move(f);
    } else if (c == "missing-tool") {
      r.attrs.erase("tool");
    } else if (c == "missing-backend") {
      r.attrs.erase("backend");
    } else if (c == "missing-device") {
      r.attrs.erase("device");
    } else if (c == "device-no-name") {
      r.attrs["device"].erase("name");
    } else if (c == "device-bad-peak") {
      r.attrs["device"]["peak_bandwidth_gbs"] = "fast";
    } else if (c == "missing-phases") {
      r.attrs.erase("phases");
    } else if (c == "phase-count") {
      r.attrs["phases"] = {"only-one"};
    } else if (c == "negative") {
      r.data<double>()[3] = -1.0;
    } else if (c == "nan") {
      r.data<double>()[4] = std::numeric_limits<double>::quiet_NaN();
    } else if (c == "params-not-object") {
      r.attrs["params"] = json::array({1, 2});
    } else if (c == "bad-columns") {
      r.attrs["columns"] = {"bytes", "seconds", "flops"};
    } else if (c == "empty-stream") {
      write_stream(path, std::vector<Record>());
      return 0;
    } else if (c == "mixed") {
      recs.push_back(good("cpu"));
      double v = 1;
      r = Record::from<double>("result", {1}, &v);
    } else {
      std::fprintf(stderr, "np-profile-craft: unknown case '%s'\n", c.c_str());
      return 2;
    }
    recs.push_back(std::move(r));
    write_stream(path, recs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "np-profile-craft: %s\n", e.what());
    return 4;
  }
  return 0;
}
