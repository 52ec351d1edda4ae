#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>

#include "common/device.hpp"

namespace numpipe::report {

namespace {

__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  int n = std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(ap, f);
  std::vsnprintf(big.data(), big.size(), f, ap);
  va_end(ap);
  big.resize(static_cast<std::size_t>(n));
  return big;
}

std::string optional_string(const json& a, const char* key, const std::string& where, const char* fallback = "unknown") {
  auto it = a.find(key);
  if (it == a.end() || it->is_null()) return fallback;
  if (!it->is_string()) fail_input(where + ": attrs \"" + key + "\" is not a string: " + it->dump());
  return it->get<std::string>();
}

std::string required_string(const json& a, const char* key, const std::string& where, const std::string& in = "attrs") {
  auto it = a.find(key);
  if (it == a.end()) fail_input(where + ": the profile record's " + in + " lack \"" + key + "\"");
  if (!it->is_string() || it->get<std::string>().empty())
    fail_input(where + ": " + in + " \"" + key + "\" is not a non-empty string: " + it->dump());
  return it->get<std::string>();
}

double optional_number(const json& a, const char* key, const std::string& where) {
  auto it = a.find(key);
  if (it == a.end() || it->is_null()) return 0;
  if (!it->is_number()) fail_input(where + ": device \"" + key + "\" is not a number: " + it->dump());
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) fail_input(where + ": device \"" + key + "\" is negative or not finite: " + it->dump());
  return v;
}

void derive_row(PhaseRow& p, double total_seconds, double peak_bw, double peak_compute) {
  p.share = total_seconds > 0 ? p.seconds / total_seconds : 0;
  p.gbs = p.gflops = p.pct_bandwidth = p.pct_compute = p.intensity = std::nullopt;
  if (p.seconds > 0 && p.bytes > 0) p.gbs = p.bytes / p.seconds / 1e9;
  if (p.seconds > 0 && p.flops > 0) p.gflops = p.flops / p.seconds / 1e9;
  if (p.gbs && peak_bw > 0) p.pct_bandwidth = 100.0 * *p.gbs / peak_bw;
  if (p.gflops && peak_compute > 0) p.pct_compute = 100.0 * *p.gflops / peak_compute;
  if (p.bytes > 0) p.intensity = p.flops / p.bytes;
}

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// ---- tables (text and markdown) ------------------------------------------------
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> left;  // per column: left-aligned (else right)
};

std::string table_text(const Table& t, const std::string& indent) {
  std::vector<std::size_t> w(t.header.size(), 0);
  auto width = [](const std::string& s) {  // UTF-8 code points
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (std::size_t c = 0; c < w.size(); ++c) {
    w[c] = width(t.header[c]);
    for (const auto& r : t.rows) w[c] = std::max(w[c], width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string s = indent;
    for (std::size_t c = 0; c < r.size(); ++c) {
      std::string pad(w[c] - width(r[c]), ' ');
      if (c) s += "  ";
      s += t.left[c] ? r[c] + (c + 1 < r.size() ? pad : "") : pad + r[c];
    }
    return s + "\n";
  };
  std::string out = line(t.header);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string table_markdown(const Table& t) {
  std::string out = "|";
  for (const auto& h : t.header) out += " " + md_cell(h) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < t.header.size(); ++c) out += t.left[c] ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (const auto& cell : r) out += " " + md_cell(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string html_table(const Table& t, const std::string& cls) {
  std::string out = "<table class=\"" + cls + "\">\n<thead><tr>";
  for (const auto& h : t.header) out += "<th>" + xml_escape(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    bool is_total = cls == "phases" && i + 1 == t.rows.size();
    out += is_total ? "<tr class=\"total\">" : "<tr>";
    for (std::size_t c = 0; c < t.rows[i].size(); ++c)
      out += std::string(t.left[c] ? "<td>" : "<td class=\"num\">") + xml_escape(t.rows[i][c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string pct(std::optional<double> v) { return v ? fmt("%.1f%%", *v) : "-"; }
std::string intensity_string(std::optional<double> v) { return v ? fmt("%.4g", *v) : "-"; }

std::vector<std::string> phase_cells(const PhaseRow& p) {
  return {p.name,
          format_seconds(p.seconds),
          fmt("%.1f%%", 100.0 * p.share),
          format_fixed(p.gbs, 2),
          format_fixed(p.gflops, 2),
          pct(p.pct_bandwidth),
          pct(p.pct_compute),
          intensity_string(p.intensity)};
}

Table phase_table(const Run& run) {
  Table t;
  t.header = {"phase", "time", "share", "GB/s", "GFLOP/s", "% peak BW", "% peak " + run.precision, "flop/B"};
  t.left = {true, false, false, false, false, false, false, false};
  for (const auto& p : run.phases) t.rows.push_back(phase_cells(p));
  t.rows.push_back(phase_cells(run.total));
  return t;
}

std::string device_line(const Device& d) {
  std::string units = d.kind == "cuda" ? "SMs" : d.kind == "cpu" ? "threads" : "units";
  std::string s = d.name;
  if (d.multiprocessors > 0) s += fmt(", %d %s", d.multiprocessors, units.c_str());
  if (d.memory_bytes > 0) s += fmt(", %.1f GiB", d.memory_bytes / 1073741824.0);
  return s;
}

std::string peak_value(double v, const char* unit) { return v > 0 ? fmt("%.1f %s", v, unit) : std::string("unknown"); }

std::string peaks_line(const Run& run) {
  const Device& d = run.device;
  return "peaks: bandwidth " + peak_value(d.peak_bandwidth_gbs, "GB/s") + ", fp64 " +
         peak_value(d.peak_fp64_gflops, "GFLOP/s") + ", fp32 " + peak_value(d.peak_fp32_gflops, "GFLOP/s") + " (" +
         (d.peak_source.empty() ? std::string("source unknown") : d.peak_source) + "); % of peak uses " +
         run.precision + " (" + run.precision_from + ")";
}

// A phase faster than the device's peak (above its roof on the roofline) means the peaks
// are wrong, most often a calibration measured on a busy machine: the report says so
// rather than drawing points above a roof. Empty when every phase is under its roof.
std::vector<std::string> phases_above_roof(const Run& run) {
  std::vector<std::string> above;
  for (const auto& p : run.phases) {
    std::string what;
    if (p.pct_bandwidth && *p.pct_bandwidth > 100.0) what = fmt("%.0f%% of peak bandwidth", *p.pct_bandwidth);
    if (p.pct_compute && *p.pct_compute > 100.0)
      what += (what.empty() ? "" : ", ") + fmt("%.0f%% of peak %s", *p.pct_compute, run.precision.c_str());
    if (!what.empty()) above.push_back(p.name + " at " + what);
  }
  return above;
}

std::string above_roof_line(const Run& run) {
  const auto above = phases_above_roof(run);
  if (above.empty()) return "";
  std::string list;
  for (const auto& a : above) list += (list.empty() ? "" : "; ") + a;
  return "above the roof: " + list + ": this run beat the peaks (" +
         (run.device.peak_source.empty() ? std::string("source unknown") : run.device.peak_source) +
         "), so they are too low (a calibration on a busy machine?); run profile-report --calibrate on an idle "
         "machine and report with --use-calibration";
}

// "wall 0.812 s: solve 35.2 ms (the tool's phases, 4.3%), around it 0.777 s (start-up
// 0.210 s, read input ...)"; empty for profiles without process phases.
std::string wall_line(const Run& r) {
  if (r.process_phases.empty()) return "";
  double around = 0;
  std::string parts;
  for (const auto& p : r.phases)
    if (std::find(r.process_phases.begin(), r.process_phases.end(), p.name) != r.process_phases.end()) {
      around += p.seconds;
      parts += (parts.empty() ? "" : ", ") + p.name + " " + format_seconds(p.seconds);
    }
  const double wall = r.total.seconds, solve = wall - around;
  return "wall " + format_seconds(wall) + ": solve " + format_seconds(solve) + " (the tool's phases, " +
         fmt("%.1f%%", wall > 0 ? 100.0 * solve / wall : 0.0) + "), around it " + format_seconds(around) + " (" + parts + ")";
}

std::string speedup_string(const Run& r) {
  if (r.speedup <= 0) return "-";
  return r.baseline_run == r.number ? std::string("1.00x (base)") : fmt("%.2fx vs r%zu", r.speedup, r.baseline_run);
}

Table comparison_table(const std::vector<Run>& runs) {
  Table t;
  t.header = {"run", "tool", "backend", "device", "precision", "problem", "params", "commit", "date", "total", "speed-up"};
  t.left = {false, true, true, true, true, false, true, true, true, false, false};
  for (const auto& r : runs)
    t.rows.push_back({std::to_string(r.number), r.tool, r.backend, r.device.name, r.precision, "P" + std::to_string(r.problem),
                      params_summary(r.params), r.commit, r.date, format_seconds(r.total.seconds), speedup_string(r)});
  return t;
}

const char* const kComparisonNote =
    "Speed-up: the total time of the problem's baseline run (its first run, or --baseline N where N runs that "
    "problem) over each run's; only runs of one tool on one problem (P1, P2, ...: the same params, whatever the "
    "backend, devices, threads, ranks, precision, method or kernel) are compared.";

std::string run_title(const Run& r) {
  return "Run " + std::to_string(r.number) + ": " + r.tool + " (" + r.backend + ", " + r.device.name + ")";
}

std::string run_meta(const Run& r) {
  return "file " + r.file + " record " + std::to_string(r.record) + "; version " + r.version + ", commit " + r.commit +
         ", date " + r.date + ", host " + r.host;
}

// ---- SVG helpers -----------------------------------------------------------------
// Runs are told apart by group: a colour per tool, a marker per backend (cuda
// squares, cpu circles, others diamonds; hollow markers once the ten colours are
// used), and each point's run number in its label.
const char* const kToolColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f00", "#333333"};
constexpr std::size_t kToolColorCount = sizeof kToolColors / sizeof kToolColors[0];
const char* const kRoofColors[] = {"#333333", "#7a5c00", "#005f5f", "#5f005f"};
const char* roof_color(std::size_t i) { return kRoofColors[i % (sizeof kRoofColors / sizeof kRoofColors[0])]; }

struct Style {
  std::string color;
  std::string shape;  // circle, square, diamond
  bool hollow = false;
};

// Tools in order of first appearance.
std::vector<std::string> tool_order(const std::vector<Run>& runs) {
  std::vector<std::string> tools;
  for (const auto& r : runs)
    if (std::find(tools.begin(), tools.end(), r.tool) == tools.end()) tools.push_back(r.tool);
  return tools;
}

Style style_of(const Run& r, const std::vector<std::string>& tools) {
  const auto t = static_cast<std::size_t>(std::find(tools.begin(), tools.end(), r.tool) - tools.begin());
  Style st;
  st.color = kToolColors[t % kToolColorCount];
  st.hollow = t >= kToolColorCount;
  st.shape = r.backend == "cuda" ? "square" : r.backend == "cpu" ? "circle" : "diamond";
  return st;
}

std::string num(double v) { return fmt("%.2f", v); }

std::string tick_label(int k) {
  if (k >= -3 && k <= 4) {
    double v = std::pow(10.0, k);
    return k < 0 ? fmt("%.*f", -k, v) : fmt("%.0f", v);
  }
  return fmt("1e%d", k);
}

// A marker of radius r at (x, y); `title` is its tooltip.
std::string marker(const Style& st, double x, double y, double r, const std::string& cls, const std::string& title) {
  const std::string paint = st.hollow ? "fill=\"#ffffff\" stroke=\"" + st.color + "\" stroke-width=\"2\""
                                      : "fill=\"" + st.color + "\" stroke=\"#ffffff\" stroke-width=\"0.8\"";
  const std::string cls_attr = cls.empty() ? "" : " class=\"" + cls + "\"";
  const std::string tip = title.empty() ? "/>" : "><title>" + xml_escape(title) + "</title>";
  if (st.shape == "circle")
    return "<circle" + cls_attr + " cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" " + paint + tip +
           (title.empty() ? "" : "</circle>") + "\n";
  if (st.shape == "square")
    return "<rect" + cls_attr + " x=\"" + num(x - r * 0.9) + "\" y=\"" + num(y - r * 0.9) + "\" width=\"" + num(1.8 * r) +
           "\" height=\"" + num(1.8 * r) + "\" " + paint + tip + (title.empty() ? "" : "</rect>") + "\n";
  return "<polygon" + cls_attr + " points=\"" + num(x) + "," + num(y - r * 1.2) + " " + num(x + r * 1.2) + "," + num(y) + " " +
         num(x) + "," + num(y + r * 1.2) + " " + num(x - r * 1.2) + "," + num(y) + "\" " + paint + tip +
         (title.empty() ? "" : "</polygon>") + "\n";
}

// "r3", "r3, r7", "r3-r5, r9", "r3 ... r90 (12 runs)".
std::string run_list(std::vector<std::size_t> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < numbers.size();) {
    std::size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    parts.push_back(j > i ? fmt("r%zu-r%zu", numbers[i], numbers[j]) : fmt("r%zu", numbers[i]));
    i = j + 1;
  }
  if (parts.size() > 3) return fmt("r%zu ... r%zu (%zu runs)", numbers.front(), numbers.back(), numbers.size());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

bool overlaps(const TextBox& a, const TextBox& b, double margin = 1.0) {
  return a.x0 < b.x1 + margin && b.x0 < a.x1 + margin && a.y0 < b.y1 + margin && b.y0 < a.y1 + margin;
}

// An SVG text whose box is `b`: start-anchored at b.x0, baseline near the box's bottom.
std::string text_at(const TextBox& b, double font_px, const std::string& cls, const std::string& fill = "#222222") {
  return "<text" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + " x=\"" + num(b.x0) + "\" y=\"" +
         num(b.y1 - 0.25 * font_px) + "\" font-size=\"" + num(font_px) + "\" fill=\"" + fill + "\">" + xml_escape(b.text) +
         "</text>\n";
}

TextBox box_at(double x0, double y0, const std::string& text, double font_px) {
  return {x0, y0, x0 + text_width_px(text, font_px), y0 + 1.25 * font_px, text};
}

// Shortens `s` with "..." to at most `width` pixels at font_px.
std::string fit_text(std::string s, double width, double font_px) {
  if (text_width_px(s, font_px) <= width) return s;
  while (!s.empty() && text_width_px(s + "...", font_px) > width) {
    s.pop_back();
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  }
  return s + "...";
}

}  // namespace

double text_width_px(const std::string& s, double font_px) {
  // Wide enough for DejaVu Sans and Liberation Sans, the usual sans-serif fonts
  // of Linux browsers: 0.72 em for capitals, wide letters and digits, 0.6 em else.
  double w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) continue;
    if (c == ' ' || c == '.' || c == ',' || c == ':' || c == 'i' || c == 'l' || c == '(' || c == ')' || c == '|' || c == '\'')
      w += 0.38;
    else if (std::isupper(c) || c == 'm' || c == 'w' || c == '%' || c == '@' || c >= 0x80)
      w += 1.0;
    else if (std::isdigit(c))
      w += 0.66;
    else
      w += 0.64;
  }
  return w * font_px;
}

// ---- formatting -------------------------------------------------------------------
std::string format_seconds(double s) {
  if (s == 0) return "0 s";
  if (s >= 1) return fmt("%.3f s", s);
  if (s >= 1e-3) return fmt("%.3f ms", s * 1e3);
  return fmt("%.3f us", s * 1e6);
}

std::string format_fixed(std::optional<double> v, int decimals) { return v ? fmt("%.*f", decimals, *v) : "-"; }

std::string params_summary(const json& params, std::size_t max_chars) {
  if (!params.is_object() || params.empty()) return "-";
  std::string s;
  for (auto it = params.begin(); it != params.end(); ++it) {
    std::string v;
    if (it->is_string()) v = it->get<std::string>();
    else if (it->is_number_float()) v = fmt("%.6g", it->get<double>());
    else v = it->dump();
    if (!s.empty()) s += " ";
    s += it.key() + "=" + v;
  }
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

// ---- parsing -----------------------------------------------------------------------
Run parse_run(const Record& r, const std::string& where) {
  if (r.name != "profile")
    fail_input(where + ": record '" + r.name +
               "' is not a profile record (profile files hold records named \"profile\", written by a tool's --profile)");
  if (r.dtype != DType::f8)
    fail_input(where + ": the profile record has dtype " + dtype_name(r.dtype) + ", expected f8");
  if (r.shape.size() != 2 || r.shape[1] != 3)
    fail_input(where + ": the profile record has shape " + shape_string(r.shape) +
               ", expected [phases, 3] (seconds, bytes, flops)");
  const json& a = r.attrs;
  if (auto k = a.find("kind"); k != a.end() && *k != "profile")
    fail_input(where + ": attrs \"kind\" is " + k->dump() + ", expected \"profile\"");
  if (auto c = a.find("columns"); c != a.end() && *c != json({"seconds", "bytes", "flops"}))
    fail_input(where + ": attrs \"columns\" is " + c->dump() + ", expected [\"seconds\",\"bytes\",\"flops\"]");
  Run run;
  run.tool = required_string(a, "tool", where);
  run.backend = required_string(a, "backend", where);
  run.version = optional_string(a, "version", where);
  run.commit = optional_string(a, "commit", where);
  run.command = optional_string(a, "command", where, "");
  run.date = optional_string(a, "date", where);
  run.host = optional_string(a, "host", where);

  auto dev = a.find("device");
  if (dev == a.end()) fail_input(where + ": the profile record's attrs lack \"device\"");
  if (!dev->is_object()) fail_input(where + ": attrs \"device\" is not a JSON object: " + dev->dump());
  Device& d = run.device;
  d.name = required_string(*dev, "name", where, "device");
  d.kind = optional_string(*dev, "kind", where, run.backend.c_str());
  d.peak_source = optional_string(*dev, "peak_source", where, "");
  d.multiprocessors = static_cast<int>(optional_number(*dev, "multiprocessors", where));
  d.memory_bytes = optional_number(*dev, "memory_bytes", where);
  d.peak_bandwidth_gbs = optional_number(*dev, "peak_bandwidth_gbs", where);
  d.peak_fp64_gflops = optional_number(*dev, "peak_fp64_gflops", where);
  d.peak_fp32_gflops = optional_number(*dev, "peak_fp32_gflops", where);

  if (auto p = a.find("params"); p != a.end() && !p->is_null()) {
    if (!p->is_object()) fail_input(where + ": attrs \"params\" is not a JSON object: " + p->dump());
    run.params = *p;
  }

  auto names = a.find("phases");
  if (names == a.end()) fail_input(where + ": the profile record's attrs lack \"phases\" (the phase names)");
  if (!names->is_array()) fail_input(where + ": attrs \"phases\" is not an array: " + names->dump());
  auto rows = static_cast<std::size_t>(r.shape[0]);
  if (names->size() != rows)
    fail_input(where + ": attrs \"phases\" names " + std::to_string(names->size()) +
               " phases but the record has shape " + shape_string(r.shape));
  const double* v = r.data<double>();
  static const char* const kColumns[] = {"seconds", "bytes", "flops"};
  for (std::size_t i = 0; i < rows; ++i) {
    const json& n = (*names)[i];
    if (!n.is_string()) fail_input(where + ": phase name " + std::to_string(i) + " is not a string: " + n.dump());
    PhaseRow p;
    p.name = n.get<std::string>();
    for (int c = 0; c < 3; ++c) {
      double x = v[3 * i + static_cast<std::size_t>(c)];
      if (!std::isfinite(x) || x < 0)
        fail_input(where + ": phase '" + p.name + "' has " + kColumns[c] + " " + fmt("%g", x) +
                   " (expected a finite number >= 0)");
    }
    p.seconds = v[3 * i];
    p.bytes = v[3 * i + 1];
    p.flops = v[3 * i + 2];
    run.phases.push_back(p);
  }
  if (auto pp = a.find("process_phases"); pp != a.end() && pp->is_array())
    for (const auto& n : *pp)
      if (n.is_string()) run.process_phases.push_back(n.get<std::string>());
  return run;
}

void derive(Run& run, const std::string& precision_override) {
  if (!precision_override.empty()) {
    run.precision = precision_override;
    run.precision_from = "option";
  } else if (auto it = run.params.find("precision");
             it != run.params.end() && it->is_string() && (*it == "fp32" || *it == "fp64")) {
    run.precision = it->get<std::string>();
    run.precision_from = "params";
  } else {
    run.precision = "fp64";
    run.precision_from = "default";
  }
  PhaseRow total;
  total.name = "total";
  for (const auto& p : run.phases) {
    total.seconds += p.seconds;
    total.bytes += p.bytes;
    total.flops += p.flops;
  }
  double peak_bw = run.device.peak_bandwidth_gbs, peak_c = run.peak_compute_gflops();
  for (auto& p : run.phases) derive_row(p, total.seconds, peak_bw, peak_c);
  derive_row(total, total.seconds, peak_bw, peak_c);
  run.total = total;
}

std::string problem_key_of(const std::string& tool, const json& params) {
  // Keys that say how a run ran, not what it computed.
  static const char* const kHow[] = {"backend", "device", "devices", "threads", "ranks", "precision", "method",
                                     "kernel", "kernels", "gpu_kernel", "gpu_group", "device_bytes", "variant", "chunk"};
  json p = params.is_object() ? params : json::object();
  for (const char* k : kHow) p.erase(k);
  return tool + " " + p.dump();
}

void compare(std::vector<Run>& runs, std::size_t baseline) {
  if (baseline < 1 || baseline > runs.size())
    fail_input("--baseline " + std::to_string(baseline) + ": the runs are numbered 1 to " + std::to_string(runs.size()));
  std::map<std::string, std::size_t> problem;  // key -> problem number
  std::map<std::size_t, std::vector<Run*>> members;
  for (auto& r : runs) {
    r.problem_key = problem_key_of(r.tool, r.params);
    auto it = problem.find(r.problem_key);
    if (it == problem.end()) it = problem.emplace(r.problem_key, problem.size() + 1).first;
    r.problem = it->second;
    members[r.problem].push_back(&r);
  }
  for (auto& [number, group] : members) {
    Run* base = group.front();
    for (Run* r : group)
      if (r->number == baseline) base = r;
    for (Run* r : group) {
      const bool defined = group.size() > 1 && base->total.seconds > 0 && r->total.seconds > 0;
      r->speedup = defined ? base->total.seconds / r->total.seconds : 0;
      r->baseline_run = defined ? base->number : 0;
    }
  }
}

std::vector<Run> load(const std::vector<std::string>& files, const Options& opt) {
  if (!opt.precision.empty() && opt.precision != "fp64" && opt.precision != "fp32")
    fail_input("--precision must be fp64 or fp32, got '" + opt.precision + "'");
  std::vector<Run> runs;
  for (const auto& path : files) {
    InputFile in(path);
    StreamReader reader(in, opt.limits);
    Record r;
    std::size_t index = 0;
    while (reader.next(r)) {
      Run run = parse_run(r, in.label() + ": record " + std::to_string(index));
      run.file = in.label();
      run.record = index++;
      if (opt.use_calibration) {
        DeviceInfo info;
        info.name = run.device.name;
        info.peak_bandwidth_gbs = run.device.peak_bandwidth_gbs;
        info.peak_fp64_gflops = run.device.peak_fp64_gflops;
        info.peak_fp32_gflops = run.device.peak_fp32_gflops;
        info.peak_source = run.device.peak_source;
        apply_calibration(info);
        run.device.peak_bandwidth_gbs = info.peak_bandwidth_gbs;
        run.device.peak_fp64_gflops = info.peak_fp64_gflops;
        run.device.peak_fp32_gflops = info.peak_fp32_gflops;
        run.device.peak_source = info.peak_source;
      }
      derive(run, opt.precision);
      run.number = runs.size() + 1;
      runs.push_back(std::move(run));
    }
    if (index == 0) fail_input(in.label() + ": holds no profile records");
  }
  if (runs.empty()) fail_input("no profile records to report");
  compare(runs, opt.baseline);
  return runs;
}

// ---- renderings ------------------------------------------------------------------------
std::string render_text(const std::vector<Run>& runs, std::size_t baseline) {
  std::string out;
  for (const auto& r : runs) {
    out += run_title(r) + "\n";
    out += "  " + run_meta(r) + "\n";
    out += "  device: " + device_line(r.device) + "\n";
    out += "  " + peaks_line(r) + "\n";
    if (!above_roof_line(r).empty()) out += "  " + above_roof_line(r) + "\n";
    if (!wall_line(r).empty()) out += "  " + wall_line(r) + "\n";
    out += "  params: " + params_summary(r.params, 200) + "\n";
    if (!r.command.empty()) out += "  command: " + r.command + "\n";
    out += "\n" + table_text(phase_table(r), "  ") + "\n";
  }
  (void)baseline;
  out += "Comparison\n  " + std::string(kComparisonNote) + "\n\n";
  out += table_text(comparison_table(runs), "  ");
  return out;
}

std::string render_markdown(const std::vector<Run>& runs, std::size_t baseline) {
  std::string out;
  for (const auto& r : runs) {
    out += "#### " + md_cell(run_title(r)) + "\n\n";
    out += md_cell(run_meta(r)) + "  \n";
    out += "device: " + md_cell(device_line(r.device)) + "  \n";
    out += md_cell(peaks_line(r)) + "  \n";
    if (!above_roof_line(r).empty()) out += "**" + md_cell(above_roof_line(r)) + "**  \n";
    if (!wall_line(r).empty()) out += md_cell(wall_line(r)) + "  \n";
    out += "params: `" + params_summary(r.params, 200) + "`\n\n";
    out += table_markdown(phase_table(r)) + "\n";
  }
  (void)baseline;
  out += "#### Comparison\n\n" + std::string(kComparisonNote) + "\n\n";
  out += table_markdown(comparison_table(runs));
  return out;
}

json render_json(const std::vector<Run>& runs, std::size_t baseline) {
  auto row = [](const PhaseRow& p) {
    return json{{"name", p.name},
                {"seconds", p.seconds},
                {"bytes", p.bytes},
                {"flops", p.flops},
                {"share", p.share},
                {"gb_per_s", opt_json(p.gbs)},
                {"gflop_per_s", opt_json(p.gflops)},
                {"pct_peak_bandwidth", opt_json(p.pct_bandwidth)},
                {"pct_peak_compute", opt_json(p.pct_compute)},
                {"intensity_flop_per_byte", opt_json(p.intensity)}};
  };
  json list = json::array();
  for (const auto& r : runs) {
    json phases = json::array();
    for (const auto& p : r.phases) phases.push_back(row(p));
    list.push_back({{"run", r.number},
                    {"file", r.file},
                    {"record", r.record},
                    {"tool", r.tool},
                    {"version", r.version},
                    {"commit", r.commit},
                    {"command", r.command},
                    {"backend", r.backend},
                    {"date", r.date},
                    {"host", r.host},
                    {"device",
                     {{"kind", r.device.kind},
                      {"name", r.device.name},
                      {"multiprocessors", r.device.multiprocessors},
                      {"memory_bytes", r.device.memory_bytes},
                      {"peak_bandwidth_gbs", r.device.peak_bandwidth_gbs},
                      {"peak_fp64_gflops", r.device.peak_fp64_gflops},
                      {"peak_fp32_gflops", r.device.peak_fp32_gflops},
                      {"peak_source", r.device.peak_source}}},
                    {"params", r.params},
                    {"precision", r.precision},
                    {"precision_from", r.precision_from},
                    {"peak_compute_gflops", r.peak_compute_gflops()},
                    {"above_roof", phases_above_roof(r)},
                    {"phases", phases},
                    {"total", row(r.total)},
                    {"problem", r.problem},
                    {"speedup_baseline", r.baseline_run > 0 ? json(r.baseline_run) : json(nullptr)},
                    {"speedup", r.speedup > 0 ? json(r.speedup) : json(nullptr)}});
  }
  return {{"baseline", baseline}, {"runs", list}};
}

// Phase bars: names right-aligned before the bars (as wide as the longest
// name needs), each bar's time and share after it; the picture is as wide as
// the longest bar plus its label, so nothing is clipped.
namespace {
struct BarsLayout {
  double width = 0, height = 0;
  std::vector<TextBox> texts;
  std::string svg;
};

BarsLayout bars_layout(const Run& run, const std::vector<std::string>& tools) {
  constexpr double font = 12, row_h = 22, top = 8, bar_w = 420, name_max = 260;
  BarsLayout L;
  double name_w = 40, value_w = 0;
  std::vector<std::string> names, values;
  for (const auto& p : run.phases) {
    names.push_back(fit_text(p.name, name_max, font));
    values.push_back(format_seconds(p.seconds) + " (" + fmt("%.1f%%", 100 * p.share) + ")");
    name_w = std::max(name_w, text_width_px(names.back(), font));
    value_w = std::max(value_w, text_width_px(values.back(), font));
  }
  const double x_bar = 8 + name_w + 8;
  L.width = x_bar + bar_w + 8 + value_w + 8;
  L.height = top * 2 + row_h * static_cast<double>(std::max<std::size_t>(run.phases.size(), 1));
  double max_s = 0;
  for (const auto& p : run.phases) max_s = std::max(max_s, p.seconds);
  const std::string color = style_of(run, tools).color;
  std::string& s = L.svg;
  s = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\" font-size=\"%.0f\" role=\"img\">\n",
          std::ceil(L.width), L.height, std::ceil(L.width), L.height, font);
  s += "<title>" + xml_escape("Phase times of run " + std::to_string(run.number)) + "</title>\n";
  double y = top;
  for (std::size_t i = 0; i < run.phases.size(); ++i) {
    const auto& p = run.phases[i];
    const double w = max_s > 0 ? bar_w * p.seconds / max_s : 0;
    const double text_y = y + (row_h - 1.25 * font) / 2;
    TextBox name = box_at(x_bar - 8 - text_width_px(names[i], font), text_y, names[i], font);
    TextBox value = box_at(x_bar + w + 8, text_y, values[i], font);
    s += text_at(name, font, "phase-name");
    s += "<rect class=\"bar\" x=\"" + num(x_bar) + "\" y=\"" + num(y + 3) + "\" width=\"" + num(std::max(w, 0.5)) +
         "\" height=\"" + num(row_h - 6) + "\" fill=\"" + color + "\"><title>" +
         xml_escape(p.name + ": " + format_seconds(p.seconds)) + "</title></rect>\n";
    s += text_at(value, font, "bar-value");
    L.texts.push_back(name);
    L.texts.push_back(value);
    y += row_h;
  }
  s += "</svg>\n";
  return L;
}
}  // namespace

std::vector<TextBox> phase_bars_texts(const Run& run, double* width) {
  BarsLayout L = bars_layout(run, {run.tool});
  if (width) *width = L.width;
  return L.texts;
}

std::string phase_bars_svg(const Run& run) { return bars_layout(run, {run.tool}).svg; }

RooflineLayout roofline_layout(const std::vector<Run>& runs) {
  RooflineLayout L;
  const std::vector<std::string> tools = tool_order(runs);
  struct Point {
    double x, y;  // intensity, GFLOP/s
    const Run* run;
    std::string phase;
  };
  struct Roof {
    std::string device;
    double bw = 0;
    std::map<std::string, double> peaks;  // precision -> GFLOP/s
  };
  std::vector<Point> points;
  std::vector<Roof> roofs;
  auto roof_of = [&](const Device& d) -> Roof& {
    for (auto& r : roofs)
      if (r.device == d.name && r.bw == d.peak_bandwidth_gbs) return r;
    roofs.push_back({d.name, d.peak_bandwidth_gbs, {}});
    return roofs.back();
  };
  for (const auto& r : runs) {
    Roof& roof = roof_of(r.device);
    if (r.peak_compute_gflops() > 0) roof.peaks[r.precision] = r.peak_compute_gflops();
    for (const auto& p : r.phases)
      if (p.intensity && *p.intensity > 0 && p.gflops && *p.gflops > 0) points.push_back({*p.intensity, *p.gflops, &r, p.name});
  }
  // Ranges in decades covering the points, the ridge points and the peaks.
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  auto cover_x = [&](double v) { xmin = std::min(xmin, v), xmax = std::max(xmax, v); };
  auto cover_y = [&](double v) { ymin = std::min(ymin, v), ymax = std::max(ymax, v); };
  for (const auto& p : points) cover_x(p.x), cover_y(p.y);
  for (const auto& r : roofs)
    for (const auto& [prec, peak] : r.peaks) {
      cover_y(peak);
      if (r.bw > 0) cover_x(peak / r.bw);
    }
  if (!(xmin <= xmax)) xmin = 0.01, xmax = 100;
  if (!(ymin <= ymax)) ymin = 1, ymax = 1e4;
  int lx0 = static_cast<int>(std::floor(std::log10(xmin))) - 1, lx1 = static_cast<int>(std::ceil(std::log10(xmax))) + 1;
  int ly0 = static_cast<int>(std::floor(std::log10(ymin))) - 1, ly1 = static_cast<int>(std::ceil(std::log10(ymax))) + 1;
  if (ly1 - ly0 < 4) ly0 = ly1 - 4;
  if (lx1 - lx0 < 4) lx0 = lx1 - 4;

  constexpr double ml = 74, mr = 16, mt = 16, plot_w = 820, plot_h = 470, axis_h = 50, font = 11, legend_font = 12;
  const double px0 = ml, px1 = ml + plot_w, py0 = mt, py1 = mt + plot_h;
  auto px = [&](double lx) { return ml + (lx - lx0) / (lx1 - lx0) * plot_w; };
  auto py = [&](double ly) { return mt + plot_h - (ly - ly0) / (ly1 - ly0) * plot_h; };
  L.width = ml + plot_w + mr;

  std::string s;  // the body; the header goes on last, when the height is known
  s += "<title>Roofline: arithmetic intensity against achieved GFLOP/s</title>\n";
  s += "<rect x=\"" + num(ml) + "\" y=\"" + num(mt) + "\" width=\"" + num(plot_w) + "\" height=\"" + num(plot_h) +
       "\" fill=\"#ffffff\" stroke=\"#999999\"/>\n";
  s += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
  for (int k = lx0 + 1; k < lx1; ++k)
    s += "<line x1=\"" + num(px(k)) + "\" y1=\"" + num(py0) + "\" x2=\"" + num(px(k)) + "\" y2=\"" + num(py1) + "\"/>\n";
  for (int k = ly0 + 1; k < ly1; ++k)
    s += "<line x1=\"" + num(px0) + "\" y1=\"" + num(py(k)) + "\" x2=\"" + num(px1) + "\" y2=\"" + num(py(k)) + "\"/>\n";
  s += "</g>\n<g class=\"ticks\">\n";
  for (int k = lx0; k <= lx1; ++k) {
    const std::string t = tick_label(k);
    TextBox b = box_at(px(k) - text_width_px(t, font) / 2, py1 + 4, t, font);
    if (k == lx1) b = box_at(px1 - text_width_px(t, font), py1 + 4, t, font);  // the last tick stays inside
    s += text_at(b, font, "tick");
    L.texts.push_back(b);
  }
  for (int k = ly0; k <= ly1; ++k) {
    const std::string t = tick_label(k);
    TextBox b = box_at(ml - 6 - text_width_px(t, font), py(k) - 0.62 * font, t, font);
    if (k == ly1) b = box_at(b.x0, py0 - 2, t, font);
    if (k == ly0) b = box_at(b.x0, py1 - 1.25 * font + 2, t, font);
    s += text_at(b, font, "tick");
    L.texts.push_back(b);
  }
  s += "</g>\n";
  {
    const std::string t = "arithmetic intensity (flop/byte)";
    TextBox b = box_at(ml + plot_w / 2 - text_width_px(t, 13) / 2, py1 + 22, t, 13);
    s += text_at(b, 13, "axis-label", "#000000");
    L.texts.push_back(b);
    // The vertical label: its box as the rotated text occupies it.
    const double w = text_width_px("GFLOP/s", 13);
    s += "<text class=\"axis-label\" x=\"0\" y=\"0\" font-size=\"13\" text-anchor=\"middle\" transform=\"translate(20 " +
         num(mt + plot_h / 2) + ") rotate(-90)\">GFLOP/s</text>\n";
    L.texts.push_back({20 - 13 * 0.95, mt + plot_h / 2 - w / 2, 20 + 13 * 0.3, mt + plot_h / 2 + w / 2, "GFLOP/s"});
  }

  // Roofs and their labels: each label placed inside the axes where it meets nothing placed before.
  std::vector<TextBox> taken;  // labels and markers placed so far (inside the axes)
  auto inside = [&](const TextBox& b) { return b.x0 >= px0 + 2 && b.x1 <= px1 - 2 && b.y0 >= py0 + 2 && b.y1 <= py1 - 2; };
  auto is_free = [&](const TextBox& b) {
    if (!inside(b)) return false;
    for (const auto& t : taken)
      if (overlaps(b, t)) return false;
    return true;
  };
  auto line = [&](const char* cls, double ax, double ay, double bx, double by, const char* color, const char* dash,
                  const std::string& title) {
    std::string l = "<line class=\"" + std::string(cls) + "\" x1=\"" + num(px(ax)) + "\" y1=\"" + num(py(ay)) +
                    "\" x2=\"" + num(px(bx)) + "\" y2=\"" + num(py(by)) + "\" stroke=\"" + color + "\" stroke-width=\"2\"";
    if (*dash) l += std::string(" stroke-dasharray=\"") + dash + "\"";
    return l + "><title>" + xml_escape(title) + "</title></line>\n";
  };
  std::string roof_labels;
  auto place_roof_label = [&](TextBox b, const char* color, double step) {
    for (int tries = 0; tries < 40 && !is_free(b); ++tries) b.y0 += step, b.y1 += step;
    if (!is_free(b)) return;  // no room: the legend names every roof anyway
    taken.push_back(b);
    L.texts.push_back(b);
    roof_labels += text_at(b, font, "roof-label", color);
  };
  s += "<g class=\"roofs\">\n";
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    const Roof& r = roofs[i];
    const char* color = roof_color(i);
    double ridge_max = -INFINITY;
    for (const auto& [prec, peak] : r.peaks) ridge_max = std::max(ridge_max, std::log10(peak));
    if (r.bw > 0) {
      const double lb = std::log10(r.bw);
      double xa = std::max<double>(lx0, ly0 - lb);
      double xb = std::min<double>(lx1, ly1 - lb);
      if (ridge_max > -INFINITY) xb = std::min(xb, ridge_max - lb);
      if (xa < xb)
        s += line("roof-bandwidth", xa, xa + lb, xb, xb + lb, color, "", r.device + ": bandwidth roof " + fmt("%.1f GB/s", r.bw));
      const std::string t = fmt("%.0f GB/s", r.bw);
      place_roof_label(box_at(px(xa) + 6, py(xa + lb) + 4, t, font), color, font * 1.3);
    }
    for (const auto& [prec, peak] : r.peaks) {
      const double lp = std::log10(peak);
      const double xa = r.bw > 0 ? std::max<double>(lx0, lp - std::log10(r.bw)) : lx0;
      s += line("roof-compute", xa, lp, lx1, lp, color, prec == "fp32" ? "6 4" : "",
                r.device + ": " + prec + " compute roof " + fmt("%.1f GFLOP/s", peak));
      const std::string t = prec + " " + fmt("%.0f GFLOP/s", peak);
      place_roof_label(box_at(px1 - 6 - text_width_px(t, font), py(lp) - 1.25 * font - 2, t, font), color, -font * 1.3);
    }
  }
  s += "</g>\n";

  // Points: markers first (labels keep clear of every marker), then one label per
  // cluster of points of one tool, backend and phase that lie within 9 pixels.
  struct Cluster {
    double x, y;  // pixels of the first point
    std::vector<std::size_t> runs;
    std::string phase, tool, backend;
  };
  std::vector<Cluster> clusters;
  std::string markers;
  for (const auto& p : points) {
    const double cx = px(std::log10(p.x)), cy = py(std::log10(p.y));
    const Style st = style_of(*p.run, tools);
    markers += marker(st, cx, cy, 4.5, "point",
                      "r" + std::to_string(p.run->number) + " " + p.phase + " (" + p.run->tool + ", " + p.run->backend +
                          "): " + fmt("%.4g flop/B, %.2f GFLOP/s", p.x, p.y));
    taken.push_back({cx - 5, cy - 5, cx + 5, cy + 5, ""});
    bool joined = false;
    for (auto& c : clusters)
      if (c.tool == p.run->tool && c.backend == p.run->backend && c.phase == p.phase && std::hypot(c.x - cx, c.y - cy) < 9) {
        c.runs.push_back(p.run->number);
        joined = true;
        break;
      }
    if (!joined) clusters.push_back({cx, cy, {p.run->number}, p.phase, p.run->tool, p.run->backend});
  }
  std::string labels, leaders;
  for (const auto& c : clusters) {
    const std::string text = run_list(c.runs) + " " + c.phase;
    const double w = text_width_px(text, font), h = 1.25 * font;
    bool placed = false;
    // Rings of candidate places around the point, nearest first; beyond the first, a leader line.
    for (double r : {7.0, 16.0, 30.0, 48.0, 70.0}) {
      const double offsets[8][2] = {{r, -h / 2},      {r, -h - r / 2}, {-w / 2, -h - r},     {-w - r, -h - r / 2},
                                    {-w - r, -h / 2}, {-w - r, r / 2}, {-w / 2, r},          {r, r / 2}};
      for (const auto& o : offsets) {
        TextBox b = box_at(c.x + o[0], c.y + o[1], text, font);
        if (!is_free(b)) continue;
        taken.push_back(b);
        L.texts.push_back(b);
        labels += text_at(b, font, "point-label");
        if (r > 7) {
          const double lx = std::clamp(c.x, b.x0, b.x1), ly = std::clamp(c.y, b.y0, b.y1);
          leaders += "<line class=\"leader\" x1=\"" + num(c.x) + "\" y1=\"" + num(c.y) + "\" x2=\"" + num(lx) + "\" y2=\"" +
                     num(ly) + "\" stroke=\"#aaaaaa\" stroke-width=\"0.8\"/>\n";
        }
        placed = true;
        break;
      }
      if (placed) break;
    }
    if (!placed) L.unlabelled.push_back(text + " (" + c.tool + ", " + c.backend + ")");
  }
  s += "<g class=\"points\">\n" + leaders + markers + "</g>\n<g class=\"labels\">\n" + labels + roof_labels + "</g>\n";

  // Legend below the axes: one row per tool and backend, then one per device's roofs.
  double y = py1 + axis_h;
  s += "<g class=\"legend\">\n";
  std::vector<std::pair<std::string, std::string>> groups;
  for (const auto& r : runs)
    if (std::find(groups.begin(), groups.end(), std::make_pair(r.tool, r.backend)) == groups.end())
      groups.push_back({r.tool, r.backend});
  const double legend_w = plot_w - 24;
  for (const auto& [tool, backend] : groups) {
    std::vector<std::size_t> numbers;
    std::string device;
    const Run* first = nullptr;
    for (const auto& r : runs)
      if (r.tool == tool && r.backend == backend) {
        numbers.push_back(r.number);
        if (!first) first = &r;
        if (device.empty()) device = r.device.name;
      }
    s += marker(style_of(*first, tools), ml + 7, y + 8, 5, "", "");
    const std::string t = fit_text(tool + ", " + backend + " (" + device + "): " + run_list(numbers), legend_w, legend_font);
    TextBox b = box_at(ml + 18, y + 1, t, legend_font);
    s += text_at(b, legend_font, "legend");
    L.texts.push_back(b);
    y += 19;
  }
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    s += "<line x1=\"" + num(ml) + "\" y1=\"" + num(y + 8) + "\" x2=\"" + num(ml + 14) + "\" y2=\"" + num(y + 8) +
         "\" stroke=\"" + roof_color(i) + "\" stroke-width=\"2\"/>\n";
    std::string peaks;
    for (const auto& [prec, peak] : roofs[i].peaks) peaks += ", " + prec + " " + fmt("%.0f GFLOP/s", peak);
    const std::string t = fit_text("roofs of " + roofs[i].device + ": " +
                                       (roofs[i].bw > 0 ? fmt("%.0f GB/s", roofs[i].bw) : std::string("bandwidth unknown")) +
                                       peaks + " (fp32 dashed)",
                                   legend_w, legend_font);
    TextBox b = box_at(ml + 18, y + 1, t, legend_font);
    s += text_at(b, legend_font, "legend");
    L.texts.push_back(b);
    y += 19;
  }
  s += "</g>\n";
  L.height = y + 8;
  L.svg = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" width=\"%.0f\" height=\"%.0f\" "
              "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" role=\"img\">\n",
              L.width, L.height, L.width, L.height) +
          s + "</svg>\n";
  return L;
}

std::string roofline_svg(const std::vector<Run>& runs) { return roofline_layout(runs).svg; }

std::string render_html(const std::vector<Run>& runs, std::size_t baseline) {
  std::string h =
      "<!DOCTYPE html>\n"
      "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<title>numpipe profile report</title>\n"
      "<style>\n"
      "body { font-family: sans-serif; margin: 2em; color: #222; max-width: 70em; }\n"
      "table { border-collapse: collapse; margin: 0.5em 0 1em 0; font-size: 0.9em; }\n"
      "th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; }\n"
      "th { background: #f0f0f0; }\n"
      "td.num { text-align: right; font-variant-numeric: tabular-nums; }\n"
      "tr.total td { font-weight: bold; }\n"
      "p.meta { color: #555; font-size: 0.85em; margin: 0.2em 0; }\n"
      "p.warn { color: #a00; font-size: 0.85em; margin: 0.2em 0; font-weight: bold; }\n"
      "svg text { font-family: sans-serif; }\n"
      "</style>\n</head>\n<body>\n<h1>numpipe profile report</h1>\n";
  h += "<p>" + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
       ". Rates are bytes moved and flops counted by each tool from its algorithm, over the phase's time; percentages "
       "are of the device's peak recorded with the run.</p>\n";
  const RooflineLayout roof = roofline_layout(runs);
  h += "<h2>Roofline</h2>\n" + roof.svg;
  if (!roof.unlabelled.empty()) {
    std::string list;
    for (const auto& u : roof.unlabelled) list += (list.empty() ? "" : "; ") + u;
    h += "<p class=\"meta\">Points drawn without a label (no room beside them): " + xml_escape(list) + ".</p>\n";
  }
  std::string off;
  for (const auto& r : runs)
    for (const auto& p : r.phases)
      if (!(p.intensity && *p.intensity > 0 && p.gflops && *p.gflops > 0))
        off += (off.empty() ? "" : ", ") + ("r" + std::to_string(r.number) + " " + p.name);
  if (!off.empty())
    h += "<p class=\"meta\">Not on the roofline (no bytes or no flops counted): " + xml_escape(off) + ".</p>\n";
  std::string above;
  for (const auto& r : runs)
    for (const auto& a : phases_above_roof(r)) above += (above.empty() ? "" : "; ") + ("r" + std::to_string(r.number) + " " + a);
  if (!above.empty())
    h += "<p class=\"warn\">Above the roof, so the peaks are too low (see each run below): " + xml_escape(above) +
         ".</p>\n";
  (void)baseline;
  h += "<h2>Comparison</h2>\n<p class=\"meta\">" + xml_escape(kComparisonNote) + "</p>\n" +
       html_table(comparison_table(runs), "comparison");
  const std::vector<std::string> tools = tool_order(runs);
  for (const auto& r : runs) {
    h += "<h2>" + xml_escape(run_title(r)) + "</h2>\n";
    h += "<p class=\"meta\">" + xml_escape(run_meta(r)) + "</p>\n";
    h += "<p class=\"meta\">device: " + xml_escape(device_line(r.device)) + "</p>\n";
    h += "<p class=\"meta\">" + xml_escape(peaks_line(r)) + "</p>\n";
    if (!above_roof_line(r).empty()) h += "<p class=\"warn\">" + xml_escape(above_roof_line(r)) + "</p>\n";
    if (!wall_line(r).empty()) h += "<p class=\"meta\">" + xml_escape(wall_line(r)) + "</p>\n";
    h += "<p class=\"meta\">params: <code>" + xml_escape(params_summary(r.params, 400)) + "</code></p>\n";
    if (!r.command.empty()) h += "<p class=\"meta\">command: <code>" + xml_escape(r.command) + "</code></p>\n";
    h += html_table(phase_table(r), "phases");
    h += bars_layout(r, tools).svg;
  }
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace numpipe::report
