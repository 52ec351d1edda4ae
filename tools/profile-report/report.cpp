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

std::string speedup_string(const Run& r) { return r.speedup > 0 ? fmt("%.2fx", r.speedup) : "-"; }

Table comparison_table(const std::vector<Run>& runs) {
  Table t;
  t.header = {"run", "tool", "backend", "device", "precision", "params", "commit", "date", "total", "speed-up"};
  t.left = {false, true, true, true, true, true, true, true, false, false};
  for (const auto& r : runs)
    t.rows.push_back({std::to_string(r.number), r.tool, r.backend, r.device.name, r.precision, params_summary(r.params),
                      r.commit, r.date, format_seconds(r.total.seconds), speedup_string(r)});
  return t;
}

std::string run_title(const Run& r) {
  return "Run " + std::to_string(r.number) + ": " + r.tool + " (" + r.backend + ", " + r.device.name + ")";
}

std::string run_meta(const Run& r) {
  return "file " + r.file + " record " + std::to_string(r.record) + "; version " + r.version + ", commit " + r.commit +
         ", date " + r.date + ", host " + r.host;
}

// ---- SVG helpers -----------------------------------------------------------------
const char* const kRunColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                  "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
const char* run_color(std::size_t i) { return kRunColors[i % (sizeof kRunColors / sizeof kRunColors[0])]; }
const char* const kRoofColors[] = {"#333333", "#7a5c00", "#005f5f", "#5f005f"};
const char* roof_color(std::size_t i) { return kRoofColors[i % (sizeof kRoofColors / sizeof kRoofColors[0])]; }

std::string num(double v) { return fmt("%.2f", v); }

std::string tick_label(int k) {
  if (k >= -3 && k <= 4) {
    double v = std::pow(10.0, k);
    return k < 0 ? fmt("%.*f", -k, v) : fmt("%.0f", v);
  }
  return fmt("1e%d", k);
}

}  // namespace

// ---- formatting -------------------------------------------------------------------
std::string format_seconds(double s) {
  if (s == 0) return "0 s";
  if (s >= 1) return fmt("%.3f s", s);
  if (s >= 1e-3) return fmt("%.3f ms", s * 1e3);
  return fmt("%.3f us", s * 1e6);
}

std::string format_fixed(std::optional<double> v, int decimals) { return v ? fmt("%.*f", decimals, *v) : "-"; }

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0; show them as '?'.
        if (c < 0x20 && c != '\n' && c != '\t') out += '?';
        else out += static_cast<char>(c);
    }
  }
  return out;
}

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

void compare(std::vector<Run>& runs, std::size_t baseline) {
  if (baseline < 1 || baseline > runs.size())
    fail_input("--baseline " + std::to_string(baseline) + ": the runs are numbered 1 to " + std::to_string(runs.size()));
  double base = runs[baseline - 1].total.seconds;
  for (auto& r : runs) r.speedup = (base > 0 && r.total.seconds > 0) ? base / r.total.seconds : 0;
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
    out += "  params: " + params_summary(r.params, 200) + "\n";
    if (!r.command.empty()) out += "  command: " + r.command + "\n";
    out += "\n" + table_text(phase_table(r), "  ") + "\n";
  }
  out += "Comparison (speed-up relative to run " + std::to_string(baseline) + ")\n\n";
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
    out += "params: `" + params_summary(r.params, 200) + "`\n\n";
    out += table_markdown(phase_table(r)) + "\n";
  }
  out += "#### Comparison (speed-up relative to run " + std::to_string(baseline) + ")\n\n";
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
                    {"phases", phases},
                    {"total", row(r.total)},
                    {"speedup", r.speedup > 0 ? json(r.speedup) : json(nullptr)}});
  }
  return {{"baseline", baseline}, {"runs", list}};
}

std::string phase_bars_svg(const Run& run) {
  const double label_w = 170, bar_w = 420, row_h = 22, top = 10;
  const double width = label_w + bar_w + 170;
  const double height = top * 2 + row_h * static_cast<double>(std::max<std::size_t>(run.phases.size(), 1));
  double max_s = 0;
  for (const auto& p : run.phases) max_s = std::max(max_s, p.seconds);
  std::string s = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bars\" width=\"%.0f\" height=\"%.0f\" "
                      "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                      width, height, width, height);
  s += "<title>" + xml_escape("Phase times of run " + std::to_string(run.number)) + "</title>\n";
  double y = top;
  for (const auto& p : run.phases) {
    double w = max_s > 0 ? bar_w * p.seconds / max_s : 0;
    s += "<text x=\"" + num(label_w - 6) + "\" y=\"" + num(y + row_h * 0.68) + "\" text-anchor=\"end\">" +
         xml_escape(p.name) + "</text>\n";
    s += "<rect class=\"bar\" x=\"" + num(label_w) + "\" y=\"" + num(y + 3) + "\" width=\"" + num(std::max(w, 0.5)) +
         "\" height=\"" + num(row_h - 6) + "\" fill=\"" + run_color(run.number - 1) + "\"><title>" +
         xml_escape(p.name + ": " + format_seconds(p.seconds)) + "</title></rect>\n";
    s += "<text x=\"" + num(label_w + w + 6) + "\" y=\"" + num(y + row_h * 0.68) + "\">" +
         xml_escape(format_seconds(p.seconds) + " (" + fmt("%.1f%%", 100 * p.share) + ")") + "</text>\n";
    y += row_h;
  }
  return s + "</svg>\n";
}

std::string roofline_svg(const std::vector<Run>& runs) {
  struct Point {
    double x, y;
    std::size_t run;
    std::string label;
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
      if (p.intensity && *p.intensity > 0 && p.gflops && *p.gflops > 0)
        points.push_back({*p.intensity, *p.gflops, r.number - 1, "r" + std::to_string(r.number) + " " + p.name});
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

  const double ml = 70, mr = 20, mt = 20, plot_w = 640, plot_h = 400, axis_h = 50, legend_row = 18;
  std::size_t legend_rows = runs.size() + roofs.size();
  const double width = ml + plot_w + mr;
  const double height = mt + plot_h + axis_h + legend_row * static_cast<double>(legend_rows) + 10;
  auto px = [&](double lx) { return ml + (lx - lx0) / (lx1 - lx0) * plot_w; };
  auto py = [&](double ly) { return mt + plot_h - (ly - ly0) / (ly1 - ly0) * plot_h; };

  std::string s = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" width=\"%.0f\" height=\"%.0f\" "
                      "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                      width, height, width, height);
  s += "<title>Roofline: arithmetic intensity against achieved GFLOP/s</title>\n";
  s += "<rect x=\"" + num(ml) + "\" y=\"" + num(mt) + "\" width=\"" + num(plot_w) + "\" height=\"" + num(plot_h) +
       "\" fill=\"#ffffff\" stroke=\"#999999\"/>\n";
  // Decade grid and tick labels.
  s += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
  for (int k = lx0 + 1; k < lx1; ++k)
    s += "<line x1=\"" + num(px(k)) + "\" y1=\"" + num(mt) + "\" x2=\"" + num(px(k)) + "\" y2=\"" + num(mt + plot_h) + "\"/>\n";
  for (int k = ly0 + 1; k < ly1; ++k)
    s += "<line x1=\"" + num(ml) + "\" y1=\"" + num(py(k)) + "\" x2=\"" + num(ml + plot_w) + "\" y2=\"" + num(py(k)) + "\"/>\n";
  s += "</g>\n<g class=\"ticks\" font-size=\"11\">\n";
  for (int k = lx0; k <= lx1; ++k)
    s += "<text x=\"" + num(px(k)) + "\" y=\"" + num(mt + plot_h + 16) + "\" text-anchor=\"middle\">" + tick_label(k) + "</text>\n";
  for (int k = ly0; k <= ly1; ++k)
    s += "<text x=\"" + num(ml - 6) + "\" y=\"" + num(py(k) + 4) + "\" text-anchor=\"end\">" + tick_label(k) + "</text>\n";
  s += "</g>\n";
  s += "<text x=\"" + num(ml + plot_w / 2) + "\" y=\"" + num(mt + plot_h + 36) +
       "\" text-anchor=\"middle\" font-size=\"13\">arithmetic intensity (flop/byte)</text>\n";
  s += "<text x=\"16\" y=\"" + num(mt + plot_h / 2) + "\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 16 " +
       num(mt + plot_h / 2) + ")\">GFLOP/s</text>\n";

  // Roofs: the bandwidth roof y = bw * x up to the highest ridge, then each compute roof.
  auto line = [&](const char* cls, double ax, double ay, double bx, double by, const char* color, const char* dash,
                  const std::string& title) {
    std::string l = "<line class=\"" + std::string(cls) + "\" x1=\"" + num(px(ax)) + "\" y1=\"" + num(py(ay)) +
                    "\" x2=\"" + num(px(bx)) + "\" y2=\"" + num(py(by)) + "\" stroke=\"" + color +
                    "\" stroke-width=\"2\"";
    if (*dash) l += std::string(" stroke-dasharray=\"") + dash + "\"";
    return l + "><title>" + xml_escape(title) + "</title></line>\n";
  };
  s += "<g class=\"roofs\">\n";
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    const Roof& r = roofs[i];
    const char* color = roof_color(i);
    double ridge_max = -INFINITY;
    for (const auto& [prec, peak] : r.peaks) ridge_max = std::max(ridge_max, std::log10(peak));
    if (r.bw > 0) {
      double lb = std::log10(r.bw);
      // y = lb + x, from the left edge (or where it enters the plot) to the highest ridge (or the right edge).
      double xa = std::max<double>(lx0, ly0 - lb);
      double xb = std::min<double>(lx1, ly1 - lb);
      if (ridge_max > -INFINITY) xb = std::min(xb, ridge_max - lb);
      if (xa < xb)
        s += line("roof-bandwidth", xa, xa + lb, xb, xb + lb, color, "",
                  r.device + ": bandwidth roof " + fmt("%.1f GB/s", r.bw));
      s += "<text class=\"roof-label\" font-size=\"11\" fill=\"" + std::string(color) + "\" x=\"" + num(px(xa) + 4) +
           "\" y=\"" + num(py(xa + lb) - 6) + "\">" + xml_escape(fmt("%.0f GB/s", r.bw)) + "</text>\n";
    }
    for (const auto& [prec, peak] : r.peaks) {
      double lp = std::log10(peak);
      double xa = r.bw > 0 ? std::max<double>(lx0, lp - std::log10(r.bw)) : lx0;
      s += line("roof-compute", xa, lp, lx1, lp, color, prec == "fp32" ? "6 4" : "",
                r.device + ": " + prec + " compute roof " + fmt("%.1f GFLOP/s", peak));
      s += "<text class=\"roof-label\" font-size=\"11\" fill=\"" + std::string(color) + "\" x=\"" +
           num(ml + plot_w - 4) + "\" y=\"" + num(py(lp) - 5) + "\" text-anchor=\"end\">" +
           xml_escape(prec + " " + fmt("%.0f GFLOP/s", peak)) + "</text>\n";
    }
  }
  s += "</g>\n<g class=\"points\" font-size=\"10\">\n";
  for (const auto& p : points) {
    double cx = px(std::log10(p.x)), cy = py(std::log10(p.y));
    s += "<circle class=\"point\" cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"4.5\" fill=\"" + run_color(p.run) +
         "\"><title>" + xml_escape(p.label + ": " + fmt("%.4g flop/B, %.2f GFLOP/s", p.x, p.y)) + "</title></circle>\n";
    s += "<text class=\"point-label\" x=\"" + num(cx + 7) + "\" y=\"" + num(cy - 5) + "\">" + xml_escape(p.label) + "</text>\n";
  }
  s += "</g>\n<g class=\"legend\" font-size=\"12\">\n";
  double y = mt + plot_h + axis_h;
  for (const auto& r : runs) {
    s += "<circle cx=\"" + num(ml + 6) + "\" cy=\"" + num(y + 8) + "\" r=\"5\" fill=\"" + run_color(r.number - 1) + "\"/>";
    s += "<text x=\"" + num(ml + 18) + "\" y=\"" + num(y + 12) + "\">" +
         xml_escape("r" + std::to_string(r.number) + ": " + r.tool + ", " + r.backend + ", " + r.device.name + ", " +
                    r.precision) +
         "</text>\n";
    y += legend_row;
  }
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    s += "<line x1=\"" + num(ml) + "\" y1=\"" + num(y + 8) + "\" x2=\"" + num(ml + 14) + "\" y2=\"" + num(y + 8) +
         "\" stroke=\"" + roof_color(i) + "\" stroke-width=\"2\"/>";
    std::string peaks;
    for (const auto& [prec, peak] : roofs[i].peaks) peaks += ", " + prec + " " + fmt("%.0f GFLOP/s", peak);
    s += "<text x=\"" + num(ml + 18) + "\" y=\"" + num(y + 12) + "\">" +
         xml_escape("roofs of " + roofs[i].device + ": " +
                    (roofs[i].bw > 0 ? fmt("%.0f GB/s", roofs[i].bw) : std::string("bandwidth unknown")) + peaks +
                    " (fp32 dashed)") +
         "</text>\n";
    y += legend_row;
  }
  return s + "</g>\n</svg>\n";
}

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
      "svg text { font-family: sans-serif; }\n"
      "</style>\n</head>\n<body>\n<h1>numpipe profile report</h1>\n";
  h += "<p>" + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
       ". Rates are bytes moved and flops counted by each tool from its algorithm, over the phase's time; percentages "
       "are of the device's peak recorded with the run.</p>\n";
  h += "<h2>Roofline</h2>\n" + roofline_svg(runs);
  std::string off;
  for (const auto& r : runs)
    for (const auto& p : r.phases)
      if (!(p.intensity && *p.intensity > 0 && p.gflops && *p.gflops > 0))
        off += (off.empty() ? "" : ", ") + ("r" + std::to_string(r.number) + " " + p.name);
  if (!off.empty())
    h += "<p class=\"meta\">Not on the roofline (no bytes or no flops counted): " + xml_escape(off) + ".</p>\n";
  h += "<h2>Comparison</h2>\n<p class=\"meta\">Speed-up: total time of run " + std::to_string(baseline) +
       " over each run's total time.</p>\n" + html_table(comparison_table(runs), "comparison");
  for (const auto& r : runs) {
    h += "<h2>" + xml_escape(run_title(r)) + "</h2>\n";
    h += "<p class=\"meta\">" + xml_escape(run_meta(r)) + "</p>\n";
    h += "<p class=\"meta\">device: " + xml_escape(device_line(r.device)) + "</p>\n";
    h += "<p class=\"meta\">" + xml_escape(peaks_line(r)) + "</p>\n";
    h += "<p class=\"meta\">params: <code>" + xml_escape(params_summary(r.params, 400)) + "</code></p>\n";
    if (!r.command.empty()) h += "<p class=\"meta\">command: <code>" + xml_escape(r.command) + "</code></p>\n";
    h += html_table(phase_table(r), "phases");
    h += phase_bars_svg(r);
  }
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace numpipe::report
