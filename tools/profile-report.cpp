// profile-report: reads the profile records that tools append with --profile
// (one or more files, each a sequence of concatenated streams) and prints, per
// run, a table of phases (time, share, GB/s, GFLOP/s, % of the device's peaks,
// arithmetic intensity), then a comparison across runs; text, markdown, JSON,
// or one self-contained HTML file with an SVG roofline. --calibrate measures
// the device's peaks and stores them for later runs and reports.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "common/cli.hpp"
#include "profile-report/calibrate.hpp"
#include "profile-report/report.hpp"
#include "profile-report/store.hpp"

namespace numpipe {
namespace {

void print_rates(const std::string& label, const calibrate::Rates& r, const DeviceInfo& before) {
  auto was = [&](double old) {
    if (old <= 0) return std::string();
    char buf[96];
    std::snprintf(buf, sizeof buf, "   (was %.1f, %s)", old, before.peak_source.c_str());
    return std::string(buf);
  };
  std::printf("%s\n", label.c_str());
  std::printf("  copy bandwidth  %10.1f GB/s     %s\n", r.bandwidth_gbs, was(before.peak_bandwidth_gbs).c_str());
  std::printf("  fp64 FMA        %10.1f GFLOP/s  %s\n", r.fp64_gflops, was(before.peak_fp64_gflops).c_str());
  std::printf("  fp32 FMA        %10.1f GFLOP/s  %s\n", r.fp32_gflops, was(before.peak_fp32_gflops).c_str());
  std::printf("  method: %s\n", r.method.c_str());
}

// Stores a device's measured peaks, keeping stored ones that are higher, and says which
// were kept: a calibration that measures less than before (a busy machine) never lowers
// the roofs under which later runs are reported.
void store_peaks(const std::string& path, const std::string& name, const json& entry) {
  std::vector<std::string> kept;
  calibrate::store(path, name, entry, &kept);
  for (const auto& k : kept)
    std::printf("  kept the earlier, higher peak: %s (a lower measurement means other work was running)\n",
                k.c_str());
}

// The CPU's peaks measured while other processes run are low: say so, and record the load.
double warn_if_busy() {
  double load[1] = {0};
  if (getloadavg(load, 1) != 1) return -1;
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  if (load[0] > 0.5 * cpus)
    std::fprintf(stderr,
                 "profile-report: note: the machine is busy (load average %.1f on %u CPUs): the CPU's measured peaks "
                 "will be low; calibrate on an idle machine\n",
                 load[0], cpus);
  return load[0];
}

void run_calibration(const Cli& cli, bool quick) {
  std::string requested = cli.get<std::string>("backend");
  if (requested != "auto" && requested != "cpu" && requested != "cuda")
    fail_input("--backend must be auto, cpu or cuda, got '" + requested + "'");
  bool do_cuda = requested == "cuda" || (requested == "auto" && cuda_device_count() > 0);
  bool do_cpu = requested != "cuda";
  if (requested == "cuda" && !calibrate::cuda_built())
    fail_resource("--calibrate --backend cuda: no CUDA device: this numpipe was built without CUDA");
  if (requested == "cuda" && cuda_device_count() == 0)
    fail_resource("--calibrate --backend cuda: no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES)");
  if (requested == "auto" && !do_cuda)
    std::printf("no CUDA device%s: calibrating the CPU only\n",
                calibrate::cuda_built() ? " is visible" : " (this numpipe was built without CUDA)");
  const std::string path = calibration_path();
  const std::string date = calibrate::utc_now();
  if (do_cuda) {
    int index = cli.device();
    DeviceInfo before = query_cuda_device(index);
    std::fflush(stdout);
    calibrate::Rates r = calibrate::measure_cuda(index, quick);
    print_rates("cuda " + std::to_string(index) + ": " + before.name + " (" + std::to_string(before.multiprocessors) + " SMs)",
                r, before);
    store_peaks(path, before.name, calibrate::entry(r, "cuda", date));
  }
  if (do_cpu) {
    DeviceInfo before = query_host_cpu();
    std::fflush(stdout);
    double load = warn_if_busy();
    calibrate::Rates r = calibrate::measure_cpu(quick);
    print_rates("cpu: " + before.name + " (" + std::to_string(r.workers) + " threads)", r, before);
    json entry = calibrate::entry(r, "cpu", date);
    if (load >= 0) entry["load_average"] = load;
    store_peaks(path, before.name, entry);
  }
  std::printf("stored in %s (%s)\n", path.c_str(), date.c_str());
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  Cli cli({"profile-report",
           "Report profile records: per-phase rates against the device's peaks, a comparison of runs, a roofline",
           "[FILE...]",
           "  gen-input fluid --n 1024 -o in.nps\n"
           "  fluid-step --steps 100 --profile run.prof < in.nps > out.nps\n"
           "  fluid-step --steps 100 --backend cpu --profile run.prof < in.nps > out.nps\n"
           "  profile-report run.prof                       # tables and a CPU-vs-GPU comparison\n"
           "  profile-report --html -o report.html run.prof # one self-contained page with a roofline\n"
           "  profile-report --calibrate                    # measure this machine's peaks once",
           "the report (text, Markdown, JSON, or with --html a self-contained page)",
           "Accepted for symmetry with the other tools (profile-report shows no progress line)"},
          kInput | kOutput | kCompute | kNotStream);
  std::string format = "text";
  cli.option("format", &format, "text, markdown, json or html", "F", "Report").one_of({"text", "markdown", "json", "html"});
  std::optional<std::string> precision;
  cli.add("Report")(
      "html", "Same as --format html: one self-contained page with SVG charts");
  cli.option("precision", &precision,
             "fp64 or fp32: the peak the % of compute uses (default: each run's params, else fp64)", "P", "Report")
      .one_of({"fp64", "fp32"});
  cli.add("Report")(
      "baseline", "Run number (1-based, reading order) the speed-ups are relative to",
      cxxopts::value<std::size_t>()->default_value("1"), "N")(
      "use-calibration", "Take the peaks from the calibration file instead of those recorded with each run")(
      "files", "", cxxopts::value<std::vector<std::string>>());
  cli.add("Calibrate")("calibrate",
                       "Measure copy bandwidth and fp64/fp32 FMA rates of the CUDA device (--device N) and of the "
                       "CPU (--backend cpu|cuda picks one) and store them in the calibration file")(
      "quick", "With --calibrate: small sizes, a few seconds (tests)");
  cli.positional({"files"});
  cli.parse(argc, argv);

  if (cli.has("html")) format = "html";
  std::vector<std::string> files;
  if (cli.has("files")) files = cli.get<std::vector<std::string>>("files");

  if (cli.has("calibrate")) {
    run_calibration(cli, cli.has("quick"));
    if (files.empty()) return 0;
  } else if (cli.has("quick")) {
    fail_input("--quick goes with --calibrate");
  }

  if (files.empty()) {
    std::string in = cli.input();
    if (in == "-" && isatty(STDIN_FILENO))
      fail_input("no profile files: give FILE... (written by a tool's --profile FILE) or pipe one into stdin");
    files.push_back(in);
  }
  report::Options opt;
  if (precision) opt.precision = *precision;
  opt.baseline = cli.get<std::size_t>("baseline");
  opt.use_calibration = cli.has("use-calibration");
  opt.limits = cli.read_limits();

  OutputFile out(cli.output(), false);
  std::vector<report::Run> runs = report::load(files, opt);
  std::string text;
  if (format == "text") text = report::render_text(runs, opt.baseline);
  else if (format == "markdown") text = report::render_markdown(runs, opt.baseline);
  else if (format == "json") text = report::render_json(runs, opt.baseline).dump(2) + "\n";
  else text = report::render_html(runs, opt.baseline);
  out.write(text.data(), text.size());
  out.commit();
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("profile-report", [&] { return numpipe::run(argc, argv); });
}
