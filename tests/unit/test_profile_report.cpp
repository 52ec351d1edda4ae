// Units for profile-report: parsing profile records, the derived numbers (units,
// shares, percentages of peak, intensity), the comparison and baseline, the
// renderings (text, markdown, JSON, HTML/SVG), the calibration file merge.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/profile.hpp"
#include "profile-report/calibrate.hpp"
#include "profile-report/report.hpp"
#include "profile-report/store.hpp"

using namespace numpipe;
using namespace numpipe::report;

namespace {

struct P {
  const char* name;
  double s, b, f;
};

json device_json(const std::string& name, double bw, double f64, double f32) {
  return {{"kind", "cuda"},          {"index", 0},
          {"name", name},            {"multiprocessors", 132},
          {"memory_bytes", 80e9},    {"peak_bandwidth_gbs", bw},
          {"peak_fp64_gflops", f64}, {"peak_fp32_gflops", f32},
          {"peak_source", "datasheet"}};
}

Record profile(const std::vector<P>& phases, json device, json params, const std::string& tool = "t",
               const std::string& backend = "cuda") {
  json names = json::array();
  for (const auto& p : phases) names.push_back(p.name);
  json attrs = {{"kind", "profile"},  {"tool", tool},     {"version", "0.1.0"},         {"commit", "abc123"},
                {"command", "t -x"},  {"backend", backend}, {"device", std::move(device)}, {"params", std::move(params)},
                {"phases", names},    {"columns", {"seconds", "bytes", "flops"}},
                {"date", "2025-01-02T03:04:05Z"}, {"host", "h"}};
  Record r = Record::make("profile", DType::f8, {static_cast<std::int64_t>(phases.size()), 3}, attrs);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    r.data<double>()[3 * i] = phases[i].s;
    r.data<double>()[3 * i + 1] = phases[i].b;
    r.data<double>()[3 * i + 2] = phases[i].f;
  }
  return r;
}

Record gpu_record() {
  return profile({{"upload", 0.1, 2.5e9, 0}, {"compute", 0.2, 50e9, 100e9}, {"download", 0.2, 5e9, 0}},
                 device_json("Test GPU", 2000, 10000, 20000), {{"n", 1000}, {"precision", "fp32"}}, "gpu-tool");
}

Record cpu_record() {
  json d = device_json("Test CPU", 100, 200, 400);
  d["kind"] = "cpu";
  return profile({{"read", 0.5, 0, 0}, {"compute", 2.0, 50e9, 100e9}, {"write", 0.5, 10e9, 0}}, d, {{"n", 1000}},
                 "cpu-tool", "cpu");
}

Run derived(const Record& r, const std::string& precision = "") {
  Run run = parse_run(r, "test");
  derive(run, precision);
  return run;
}

std::string input_error(const Record& r) {
  try {
    parse_run(r, "where");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "";
}

std::vector<Record> records(Record a, std::optional<Record> b = std::nullopt) {
  std::vector<Record> v;
  v.push_back(std::move(a));
  if (b) v.push_back(std::move(*b));
  return v;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string temp_path(const char* stem) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/" + stem + "-" + std::to_string(getpid());
}

}  // namespace

TEST_CASE("median_of: the middle value, the mean of the two middle ones, in any order") {
  CHECK(median_of({}) == 0);
  CHECK(median_of({3.0}) == 3.0);
  CHECK(median_of({5.0, 1.0, 4.0}) == 4.0);
  CHECK(median_of({4.0, 1.0, 9.0, 2.0}) == 3.0);
  CHECK(median_of({2.0, 2.0, 7.0, 1.0, 8.0}) == 2.0);
}

TEST_CASE("derived numbers: units, shares, percentages of peak, intensity") {
  Run cpu = derived(cpu_record());
  REQUIRE(cpu.phases.size() == 3);
  CHECK(cpu.precision == "fp64");
  CHECK(cpu.precision_from == "default");
  const PhaseRow& read = cpu.phases[0];
  CHECK(read.share == doctest::Approx(0.5 / 3.0));
  CHECK(!read.gbs);
  CHECK(!read.gflops);
  CHECK(!read.pct_bandwidth);
  CHECK(!read.intensity);
  const PhaseRow& c = cpu.phases[1];
  CHECK(c.share == doctest::Approx(2.0 / 3.0));
  CHECK(*c.gbs == doctest::Approx(25.0));          // 50e9 B / 2 s = 25 GB/s
  CHECK(*c.gflops == doctest::Approx(50.0));       // 100e9 / 2 s = 50 GFLOP/s
  CHECK(*c.pct_bandwidth == doctest::Approx(25.0));  // of 100 GB/s
  CHECK(*c.pct_compute == doctest::Approx(25.0));    // of fp64 200 GFLOP/s
  CHECK(*c.intensity == doctest::Approx(2.0));
  const PhaseRow& w = cpu.phases[2];
  CHECK(*w.gbs == doctest::Approx(20.0));
  CHECK(*w.pct_bandwidth == doctest::Approx(20.0));
  CHECK(!w.gflops);
  CHECK(*w.intensity == doctest::Approx(0.0));
  CHECK(cpu.total.seconds == doctest::Approx(3.0));
  CHECK(cpu.total.share == doctest::Approx(1.0));
  CHECK(*cpu.total.gbs == doctest::Approx(20.0));
  CHECK(*cpu.total.gflops == doctest::Approx(100.0 / 3.0));
  CHECK(*cpu.total.pct_compute == doctest::Approx(100.0 / 6.0));
  CHECK(*cpu.total.intensity == doctest::Approx(100.0 / 60.0));

  Run gpu = derived(gpu_record());
  CHECK(gpu.precision == "fp32");
  CHECK(gpu.precision_from == "params");
  CHECK(*gpu.phases[0].pct_bandwidth == doctest::Approx(1.25));
  CHECK(*gpu.phases[1].gbs == doctest::Approx(250.0));
  CHECK(*gpu.phases[1].pct_bandwidth == doctest::Approx(12.5));
  CHECK(*gpu.phases[1].pct_compute == doctest::Approx(2.5));  // 500 of fp32 20000

  Run forced = derived(gpu_record(), "fp64");
  CHECK(forced.precision_from == "option");
  CHECK(*forced.phases[1].pct_compute == doctest::Approx(5.0));  // 500 of fp64 10000
}

TEST_CASE("unknown peaks and zero times leave the percentages and rates out") {
  json d = device_json("D", 0, 0, 0);
  Run r = derived(profile({{"a", 0, 10, 10}, {"b", 1, 1e9, 0}}, d, json::object()));
  CHECK(!r.phases[0].gbs);
  CHECK(!r.phases[0].gflops);
  CHECK(r.phases[0].share == 0);
  CHECK(*r.phases[0].intensity == doctest::Approx(1.0));
  CHECK(*r.phases[1].gbs == doctest::Approx(1.0));
  CHECK(!r.phases[1].pct_bandwidth);
  Run empty = derived(profile({}, d, json::object()));
  CHECK(empty.total.seconds == 0);
  CHECK(empty.total.share == 0);
}

TEST_CASE("the comparison: speed-ups only within one tool's problem") {
  // cpu_record and gpu_record run one problem (n=1000; precision is how it ran) of
  // different tools: first as one tool, then as two.
  Record cpu = cpu_record(), gpu = gpu_record();
  gpu.attrs["tool"] = "cpu-tool";
  std::vector<Run> runs = {derived(cpu), derived(gpu)};
  runs[0].number = 1;
  runs[1].number = 2;
  compare(runs, 1);
  CHECK(runs[0].problem == 1);
  CHECK(runs[1].problem == 1);
  CHECK(runs[0].speedup == doctest::Approx(1.0));
  CHECK(runs[0].baseline_run == 1);
  CHECK(runs[1].speedup == doctest::Approx(6.0));
  CHECK(runs[1].baseline_run == 1);
  compare(runs, 2);
  CHECK(runs[0].speedup == doctest::Approx(1.0 / 6.0));
  CHECK(runs[0].baseline_run == 2);
  CHECK_THROWS_AS(compare(runs, 3), Error);
  CHECK_THROWS_AS(compare(runs, 0), Error);

  std::string text = render_text(runs, 2);
  CHECK(contains(text, "Run 1: cpu-tool (cpu, Test CPU)"));
  CHECK(contains(text, "Run 2: cpu-tool (cuda, Test GPU)"));
  CHECK(contains(text, "only runs of one tool on one problem"));
  CHECK(contains(text, "0.17x vs r2"));
  CHECK(contains(text, "1.00x (base)"));
  CHECK(contains(text, "n=1000 precision=fp32"));

  std::string md = render_markdown(runs, 2);
  CHECK(contains(md, "| phase | time | share | GB/s | GFLOP/s | % peak BW | % peak fp64 | flop/B |"));
  CHECK(contains(md, "| compute | 2.000 s | 66.7% | 25.00 | 50.00 | 25.0% | 25.0% | 2 |"));
  CHECK(contains(md, "| compute | 200.000 ms | 40.0% | 250.00 | 500.00 | 12.5% | 2.5% | 2 |"));
  CHECK(contains(md, "| total | 3.000 s | 100.0% | 20.00 | 33.33 | 20.0% | 16.7% | 1.667 |"));
  CHECK(contains(md, "| 2 | cpu-tool | cuda | Test GPU | fp32 | P1 | n=1000 precision=fp32 | abc123 |"));

  json j = render_json(runs, 1);
  CHECK(j["baseline"] == 1);
  CHECK(j["runs"][1]["phases"][1]["gb_per_s"].get<double>() == doctest::Approx(250.0));
  CHECK(j["runs"][0]["phases"][0]["gb_per_s"].is_null());
  CHECK(j["runs"][0]["total"]["intensity_flop_per_byte"].get<double>() == doctest::Approx(100.0 / 60.0));

  // Two tools: nothing to compare. Another problem size of one tool: its own group.
  std::vector<Run> apart = {derived(cpu_record()), derived(gpu_record())};
  apart[0].number = 1;
  apart[1].number = 2;
  compare(apart, 1);
  CHECK(apart[0].speedup == 0);
  CHECK(apart[1].speedup == 0);
  CHECK(apart[1].problem == 2);
  CHECK(contains(render_text(apart, 1), "  -\n"));
  Record bigger = cpu_record();
  bigger.attrs["params"]["n"] = 2000;
  std::vector<Run> sizes = {derived(cpu_record()), derived(bigger), derived(cpu_record())};
  for (std::size_t i = 0; i < sizes.size(); ++i) sizes[i].number = i + 1;
  compare(sizes, 2);  // run 2 is its own problem's base; runs 1 and 3 compare with run 1
  CHECK(sizes[1].speedup == 0);
  CHECK(sizes[2].baseline_run == 1);
  CHECK(sizes[2].speedup == doctest::Approx(1.0));
  CHECK(problem_key_of("t", {{"n", 1}, {"backend", "cuda"}, {"devices", {0, 1}}, {"threads", 4}}) ==
        problem_key_of("t", {{"n", 1}}));
  CHECK(problem_key_of("t", {{"n", 1}}) != problem_key_of("u", {{"n", 1}}));
}

TEST_CASE("formatting of times and values") {
  CHECK(format_seconds(2) == "2.000 s");
  CHECK(format_seconds(0.0125) == "12.500 ms");
  CHECK(format_seconds(7.5e-6) == "7.500 us");
  CHECK(format_seconds(0) == "0 s");
  CHECK(format_fixed(std::nullopt, 2) == "-");
  CHECK(format_fixed(1.0 / 3.0, 2) == "0.33");
  CHECK(xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  CHECK(params_summary(json::object()) == "-");
  CHECK(params_summary({{"a", 1}, {"b", "x"}}) == "a=1 b=x");
  std::string long_one = params_summary({{"k", std::string(100, 'z')}}, 20);
  CHECK(long_one.size() == 20);
  CHECK(long_one.substr(17) == "...");
}

TEST_CASE("the roofline SVG has both roofs and one point per phase with flops and bytes") {
  std::vector<Run> runs = {derived(cpu_record()), derived(gpu_record())};
  runs[0].number = 1;
  runs[1].number = 2;
  compare(runs, 1);
  std::string svg = roofline_svg(runs);
  auto count = [&](const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = svg.find(part); at != std::string::npos; at = svg.find(part, at + 1)) ++n;
    return n;
  };
  CHECK(count("class=\"roof-bandwidth\"") == 2);  // one per device
  CHECK(count("class=\"roof-compute\"") == 2);    // cpu fp64, gpu fp32
  CHECK(count("class=\"point\"") == 2);   // the two compute phases (a cpu circle, a cuda square)
  CHECK(count("<circle class=\"point\"") == 1);
  CHECK(count("<rect class=\"point\"") == 1);
  CHECK(contains(svg, "r2 compute"));
  CHECK(contains(svg, "arithmetic intensity"));
  std::string html = render_html(runs, 1);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(contains(html, "class=\"roofline\""));
  CHECK(count("<svg") == 1);
  CHECK(contains(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\""));
  CHECK(!contains(html, "http://www.w3.org/2000/svg\" class=\"bars\" width=\"0\""));
  CHECK(!contains(html, "<script"));
  CHECK(!contains(html, "src="));
  CHECK(!contains(html, "href="));
}

TEST_CASE("phase names and device names are escaped in the HTML") {
  json d = device_json("GPU <&>", 1000, 1000, 2000);
  std::vector<Run> runs = {derived(profile({{"a<b>&c", 1, 1e9, 1e9}}, d, {{"s", "<x>"}}))};
  runs[0].number = 1;
  compare(runs, 1);
  std::string html = render_html(runs, 1);
  CHECK(!contains(html, "a<b>"));
  CHECK(contains(html, "a&lt;b&gt;&amp;c"));
  CHECK(contains(html, "GPU &lt;&amp;&gt;"));
}

TEST_CASE("malformed profile records are refused with exit 2 and a message") {
  Record r = cpu_record();
  r.name = "x";
  CHECK(contains(input_error(r), "is not a profile record"));
  r = cpu_record();
  r.attrs.erase("tool");
  CHECK(contains(input_error(r), "lack \"tool\""));
  r = cpu_record();
  r.attrs.erase("device");
  CHECK(contains(input_error(r), "lack \"device\""));
  r = cpu_record();
  r.attrs["device"].erase("name");
  CHECK(contains(input_error(r), "lack \"name\""));
  r = cpu_record();
  r.attrs["phases"] = {"a"};
  CHECK(contains(input_error(r), "names 1 phases but the record has shape [3, 3]"));
  r = cpu_record();
  r.data<double>()[0] = -2;
  CHECK(contains(input_error(r), "phase 'read' has seconds -2"));
  r = cpu_record();
  r.attrs["kind"] = "other";
  CHECK(contains(input_error(r), "\"kind\""));
  Record shape = Record::make("profile", DType::f8, {2, 2}, cpu_record().attrs);
  CHECK(contains(input_error(shape), "expected [phases, 3]"));
  Record dtype = Record::make("profile", DType::f4, {3, 3}, cpu_record().attrs);
  CHECK(contains(input_error(dtype), "expected f8"));
}

TEST_CASE("load reads concatenated streams from several files, in order") {
  std::string a = temp_path("np-prof-a"), b = temp_path("np-prof-b");
  std::remove(a.c_str());
  append_stream(a, records(cpu_record()));
  append_stream(a, records(gpu_record()));  // a second stream after the first
  write_stream(b, records(gpu_record(), cpu_record()));
  Options opt;
  opt.baseline = 2;
  std::vector<Run> runs = load({a, b}, opt);
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].tool == "cpu-tool");
  CHECK(runs[1].tool == "gpu-tool");
  CHECK(runs[2].tool == "gpu-tool");
  CHECK(runs[3].number == 4);
  CHECK(runs[3].file == b);
  CHECK(runs[3].record == 1);
  CHECK(runs[0].baseline_run == 1);  // cpu-tool (runs 1 and 4): run 2 is not its run, so its first run is the base
  CHECK(runs[3].baseline_run == 1);
  CHECK(runs[2].speedup == doctest::Approx(1.0));  // gpu-tool's second run against run 2 (the baseline)
  CHECK(runs[2].baseline_run == 2);
  opt.baseline = 5;
  CHECK_THROWS_AS(load({a}, opt), Error);
  opt.baseline = 1;
  opt.precision = "fp16";
  CHECK_THROWS_AS(load({a}, opt), Error);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST_CASE("the calibration file: merged by device name, read back by apply_calibration") {
  std::string dir = temp_path("np-cal"), path = dir + "/sub/calibration.json";
  std::string cmd = "rm -rf '" + dir + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  calibrate::Rates r;
  r.bandwidth_gbs = 123;
  r.fp64_gflops = 456;
  r.fp32_gflops = 789;
  r.method = "test";
  calibrate::store(path, "Device A", calibrate::entry(r, "cuda", "2025-01-01T00:00:00Z"));
  r.bandwidth_gbs = 1;
  json all = calibrate::store(path, "Device B", calibrate::entry(r, "cpu", "2025-01-02T00:00:00Z"));
  CHECK(all.size() == 2);
  CHECK(all["Device A"]["peak_bandwidth_gbs"] == 123.0);
  setenv("NUMPIPE_CALIBRATION", path.c_str(), 1);
  DeviceInfo info;
  info.name = "Device A";
  apply_calibration(info);
  CHECK(info.peak_bandwidth_gbs == 123.0);
  CHECK(info.peak_fp32_gflops == 789.0);
  CHECK(info.peak_source == "measured 2025-01-01T00:00:00Z");
  unsetenv("NUMPIPE_CALIBRATION");
  {
    std::ofstream bad(path);
    bad << "[1, 2]";
  }
  CHECK_THROWS_AS(calibrate::store(path, "Device C", calibrate::entry(r, "cpu", "x")), Error);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

TEST_CASE("roofline and bar labels never overlap and stay inside their pictures, for any number of runs") {
  const char* tools[] = {"price", "integrate", "mle-fit", "fluid-step", "ns-step", "a-long-tool-name"};
  for (int count : {1, 2, 7, 30, 96}) {
    std::vector<Run> runs;
    for (int k = 0; k < count; ++k) {
      const bool gpu = (k / 6) % 2;
      json d = device_json(gpu ? "NVIDIA H100 80GB HBM3" : "Intel(R) Xeon(R) Processor", gpu ? 2810 : 160,
                           gpu ? 33400 : 1200, gpu ? 51000 : 2400);
      const double n = std::pow(10.0, 5 + (k / 12) % 4) * (1 + 0.013 * k);
      Record r = profile({{"setup and a long phase name that goes on", 1e-3, 8 * n, 0},
                          {"solve", 1e-8 * n * (1 + k % 6), 8 * n * (1 + k % 3), n * std::pow(3.0, k % 6 - 2)},
                          {"write", 2e-4, 8 * n / 3, n / 7}},
                         d, {{"n", n}}, tools[k % 6], gpu ? "cuda" : "cpu");
      runs.push_back(derived(r));
      runs.back().number = static_cast<std::size_t>(k + 1);
    }
    compare(runs, 1);
    const RooflineLayout L = roofline_layout(runs);
    INFO("runs: " << count);
    REQUIRE(!L.texts.empty());
    for (const auto& b : L.texts) {
      INFO(b.text);
      CHECK(b.x0 >= 0);
      CHECK(b.y0 >= 0);
      CHECK(b.x1 <= L.width);
      CHECK(b.y1 <= L.height);
    }
    for (std::size_t i = 0; i < L.texts.size(); ++i)
      for (std::size_t j = i + 1; j < L.texts.size(); ++j) {
        const TextBox &a = L.texts[i], &b = L.texts[j];
        const bool apart = a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0;
        INFO(a.text << " | " << b.text);
        CHECK(apart);
      }
    // Every run has a point; every point a label or a mention under the chart.
    for (const auto& r : runs) CHECK(contains(L.svg, "<title>r" + std::to_string(r.number) + " solve ("));
    std::size_t labelled = 0;
    for (const auto& b : L.texts) labelled += contains(b.text, " solve") || contains(b.text, " write");
    CHECK(labelled + L.unlabelled.size() > 0);
    // The bars: names and values inside the picture, apart.
    double width = 0;
    const auto bars = phase_bars_texts(runs.back(), &width);
    for (const auto& b : bars) {
      CHECK(b.x0 >= 0);
      CHECK(b.x1 <= width);
    }
    CHECK(bars[1].x0 > bars[0].x1);  // the first phase's value after its name
  }
  // Tools get distinct colours, backends distinct markers.
  std::vector<Run> two = {derived(cpu_record()), derived(gpu_record())};
  two[0].number = 1;
  two[1].number = 2;
  compare(two, 1);
  const std::string svg = roofline_svg(two);
  CHECK(contains(svg, "<circle class=\"point\" cx="));
  CHECK(contains(svg, "<rect class=\"point\" x="));
  CHECK(contains(svg, "fill=\"#1f77b4\""));
  CHECK(contains(svg, "fill=\"#d62728\""));
}

TEST_CASE("text widths are estimated generously") {
  CHECK(text_width_px("r12 solve", 11) > 9 * 0.55 * 11);
  CHECK(text_width_px("MW", 10) >= 20);
  CHECK(text_width_px("", 12) == 0);
}
