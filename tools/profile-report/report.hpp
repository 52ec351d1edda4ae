// profile-report's model: profile records read from files (concatenated
// streams), the derived numbers of each phase (rates, shares, percentages of
// the device's peaks, arithmetic intensity), the comparison across runs, and
// the four renderings (text, markdown, json, html with inline SVG charts).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/stream.hpp"
#include "common/strings.hpp"

namespace numpipe::report {

// One phase of one run with every derived number. Rates are absent (nullopt)
// when the phase took no time; the intensity when it moved no bytes; the
// percentages when the device's peak is unknown (0).
struct PhaseRow {
  std::string name;
  double seconds = 0, bytes = 0, flops = 0;
  double share = 0;                        // fraction of the run's total time, 0..1
  std::optional<double> gbs;               // bytes / seconds / 1e9
  std::optional<double> gflops;            // flops / seconds / 1e9
  std::optional<double> pct_bandwidth;     // 100 * gbs / peak_bandwidth_gbs
  std::optional<double> pct_compute;       // 100 * gflops / peak of the run's precision
  std::optional<double> intensity;         // flops / bytes (flop/B)
};

struct Device {
  std::string kind, name;
  int multiprocessors = 0;
  double memory_bytes = 0;
  double peak_bandwidth_gbs = 0, peak_fp64_gflops = 0, peak_fp32_gflops = 0;
  std::string peak_source;
};

struct Run {
  std::size_t number = 0;   // 1-based, in reading order over all files
  std::string file;         // where it came from
  std::size_t record = 0;   // index of the record in that file (0-based)
  std::string tool, version, commit, command, backend, date, host;
  Device device;
  json params = json::object();
  std::string precision;      // "fp64" or "fp32": the one whose peak the percentages use
  std::string precision_from; // "params", "option" or "default"
  std::vector<PhaseRow> phases;
  PhaseRow total;            // sums over phases (share 1); rates from the sums
  // The phases that are the process's, not the tool's (start-up, read input, cuda
  // start-up, write output, other): empty in profiles written before they were recorded.
  std::vector<std::string> process_phases;
  // Speed-ups compare runs of one tool on one problem only (problem_key: the
  // tool and its params less how it ran: backend, devices, threads, ranks,
  // precision, method, kernel variant).
  std::string problem_key;
  std::size_t problem = 0;       // 1-based number of the problem, in order of first appearance
  std::size_t baseline_run = 0;  // the run of the same problem the speed-up divides (0: none)
  double speedup = 0;            // baseline total / this total (0 when undefined)

  double peak_compute_gflops() const {
    return precision == "fp32" ? device.peak_fp32_gflops : device.peak_fp64_gflops;
  }
};

struct Options {
  std::string precision;       // "", "fp64" or "fp32": overrides the runs' params
  std::size_t baseline = 1;    // 1-based run number the speed-ups are relative to
  bool use_calibration = false;  // replace the recorded peaks by the calibration file's
  ReadLimits limits;
};

// Parses one profile record into a Run (without derived numbers); bad-input
// error (exit 2) naming `where` when it is not a well-formed profile record.
Run parse_run(const Record& r, const std::string& where);
// Fills the derived numbers of a run's phases and total.
void derive(Run& run, const std::string& precision_override);
// Reads every record of every file (concatenated streams), each must be a
// profile record; derives the numbers and the speed-ups. Exit 2 on bad files,
// on no runs at all, and on a baseline outside 1..runs.
std::vector<Run> load(const std::vector<std::string>& files, const Options& opt);
// Speed-ups within each problem (same tool, same problem): relative to run
// `baseline` (1-based) where it is a run of that problem, else to the problem's
// first run. Exit 2 when `baseline` is outside the runs. A problem run once has no speed-up.
void compare(std::vector<Run>& runs, std::size_t baseline);
// The problem key of a run's tool and params (see Run::problem_key).
std::string problem_key_of(const std::string& tool, const json& params);

// Short "key=value ..." summary of a run's params (for the comparison table).
std::string params_summary(const json& params, std::size_t max_chars = 60);

// Renderings. Each returns the complete document.
std::string render_text(const std::vector<Run>& runs, std::size_t baseline);
std::string render_markdown(const std::vector<Run>& runs, std::size_t baseline);
json render_json(const std::vector<Run>& runs, std::size_t baseline);
std::string render_html(const std::vector<Run>& runs, std::size_t baseline);

// Pieces of the HTML, exposed for tests.
// The roofline's layout: every text's box (as the SVG draws it, in the SVG's
// pixels, with a generous font-width estimate) so that tests can check that no
// two overlap and none leaves the picture; points whose label found no room.
struct TextBox {
  double x0, y0, x1, y1;
  std::string text;
};
struct RooflineLayout {
  double width = 0, height = 0;
  std::vector<TextBox> texts;
  std::vector<std::string> unlabelled;  // "r12 solve" of points drawn without a label
  std::string svg;
};
RooflineLayout roofline_layout(const std::vector<Run>& runs);
std::string roofline_svg(const std::vector<Run>& runs);
// The phase bars' text boxes likewise.
std::vector<TextBox> phase_bars_texts(const Run& run, double* width = nullptr);
// Estimated width in pixels of `s` in sans-serif at `font_px` (an upper bound for common fonts).
double text_width_px(const std::string& s, double font_px);
std::string phase_bars_svg(const Run& run);

// Number formatting shared by the renderings.
std::string format_seconds(double s);      // "1.234 s", "12.345 ms", "7.500 us"
std::string format_fixed(std::optional<double> v, int decimals);  // "-" when absent

}  // namespace numpipe::report
