// render: pictures of a stream. A 2-D field (or a slice of a 3-D one, or a
// field derived from the velocity: speed, vorticity) as a PNG with a colour bar
// and optional axes; every snapshot of a series as an animated GIF, an MP4
// (through ffmpeg) or numbered PNG frames, with one colour range; 1-D data and
// time series as line plots (PNG, SVG or PDF). The pictures are drawn on a
// palette canvas (tools/render/canvas.hpp), text in DejaVu Sans through Cairo
// where the build found it (else a built-in bitmap font); PDF, and SVG of
// fields, through Cairo (tools/render/vector.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "common/cli.hpp"
#include "export/dataset.hpp"
#include "render/canvas.hpp"
#include "render/encode.hpp"
#include "render/field.hpp"
#include "render/plot.hpp"
#include "render/vector.hpp"

namespace numpipe {
namespace {

using namespace render;

// The format the output's name asks for: its extension, lower-cased ("png" for
// standard output); a name render cannot write is refused, never written as PNG.
std::string output_format(const std::string& path) {
  if (path == "-") return "png";
  const auto slash = path.find_last_of('/'), dot = path.find_last_of('.');
  std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot + 1);
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* known : {"png", "svg", "pdf", "gif", "mp4"})
    if (ext == known) return ext;
  fail_input("-o " + path + ": render writes .png, .svg, .pdf, .gif or .mp4 pictures" +
             (ext.empty() ? std::string(" (the name has no extension)") : ", not ." + ext));
}

std::pair<double, double> parse_pair(const std::string& text, const std::string& option) {
  const auto colon = text.find(':');
  double lo = 0, hi = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument(text);
    std::size_t u1 = 0, u2 = 0;
    lo = std::stod(text.substr(0, colon), &u1);
    hi = std::stod(text.substr(colon + 1), &u2);
    if (u1 != colon || u2 != text.size() - colon - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    fail_input(option + " must be LO:HI, got '" + text + "'");
  }
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) fail_input(option + " needs finite LO < HI, got '" + text + "'");
  return {lo, hi};
}

// --size W or WxH.
std::pair<int, int> parse_size(const std::string& text) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  const int n = std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra);
  if (!((n == 1 && w > 0) || (n == 3 && (x == 'x' || x == 'X') && w > 0 && h > 0)))
    fail_input("--size must be W or WxH in pixels, got '" + text + "'");
  if (w > 16000 || h > 16000) fail_input("--size: at most 16000 pixels a side, got '" + text + "'");
  return {w, n == 3 ? h : 0};
}

struct Style {
  double lo = 0, hi = 1;
  int width = 0, height = 0;  // the field's drawing area
  bool colorbar = true, axes = false, origin_lower = true;
  std::string title;           // "" : the field's name, units, step and time
  bool bare = false;           // the field's pixels only
  int min_width = 0;           // the canvas's least width (the widest title of an animation)
};

std::string title_of(const Field& f, const std::string& fixed) {
  if (!fixed.empty()) return fixed;
  std::string s = f.name;
  if (!f.units.empty()) s += " [" + f.units + "]";
  if (f.attrs.contains("step") && f.attrs["step"].is_number()) s += "   step " + f.attrs["step"].dump();
  for (const char* key : {"time", "t"})
    if (f.attrs.contains(key) && f.attrs[key].is_number()) {
      s += "   t = " + short_number(f.attrs[key].get<double>());
      break;
    }
  return s;
}

// Tick positions (pixels from the start) and labels along an axis of `n`
// samples drawn over `length` pixels, in the axis's coordinates.
std::vector<std::pair<double, std::string>> axis_ticks(const std::vector<double>& coord, double length, int max_ticks) {
  std::vector<std::pair<double, std::string>> out;
  if (coord.empty()) return out;
  const double a = coord.front(), b = coord.back(), n = static_cast<double>(coord.size());
  const double lo = std::min(a, b), hi = std::max(a, b);
  const auto ticks = nice_ticks(lo, hi, max_ticks);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double v : ticks) {
    const double index = b != a ? (v - a) / (b - a) * (n - 1) : 0;
    out.push_back({(index + 0.5) / n * length, tick_text(v, step)});
  }
  return out;
}

Canvas compose(const Field& f, const Style& st) {
  const int W = st.width, H = st.height;
  auto pixel = [&](int px, int py) {
    const std::int64_t c = std::min<std::int64_t>(f.cols - 1, static_cast<std::int64_t>(px) * f.cols / W);
    std::int64_t r = std::min<std::int64_t>(f.rows - 1, static_cast<std::int64_t>(py) * f.rows / H);
    if (st.origin_lower) r = f.rows - 1 - r;
    return Palette::level(f.v[static_cast<std::size_t>(r * f.cols + c)], st.lo, st.hi);
  };
  if (st.bare) {
    Canvas c(W, H);
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) c.row(y)[x] = pixel(x, y);
    return c;
  }
  const int ts = std::max(W, H) >= 360 ? 2 : 1, th = Canvas::text_height(ts), pad = 4 * ts;
  const std::string title = title_of(f, st.title);
  // Colour bar: the ends' values and round values between them.
  std::vector<std::pair<double, std::string>> bar_ticks;
  int bar_label_w = 0;
  const std::string bar_name = f.name + (f.units.empty() ? "" : " [" + f.units + "]");
  if (st.colorbar) {
    // The ends' values; one within a billionth of the range of zero is 0 (not 3.5e-15).
    auto end_text = [&](double v) { return std::fabs(v) < 1e-9 * (st.hi - st.lo) ? std::string("0") : short_number(v); };
    bar_ticks.push_back({st.lo, end_text(st.lo)});
    bar_ticks.push_back({st.hi, end_text(st.hi)});
    const double min_gap = (st.hi - st.lo) * 1.6 * th / std::max(H, 1);
    const auto inner = nice_ticks(st.lo, st.hi, std::max(2, H / (3 * th)));
    const double step = inner.size() > 1 ? inner[1] - inner[0] : 1;
    for (double v : inner)
      if (v - st.lo > min_gap && st.hi - v > min_gap) bar_ticks.push_back({v, tick_text(v, step)});
    for (const auto& t : bar_ticks) bar_label_w = std::max(bar_label_w, Canvas::text_width(t.second, ts));
  }
  // Axes: tick labels below and to the left, the axes' names beside them.
  std::vector<std::pair<double, std::string>> xt, yt;
  int yt_w = 0;
  if (st.axes) {
    int xw = 0;
    for (double v : {f.x.front(), f.x.back()}) xw = std::max(xw, Canvas::text_width(tick_text(v, 0.1), ts));
    xt = axis_ticks(f.x, W, std::max(2, std::min(8, W / (xw + 3 * th))));
    yt = axis_ticks(f.y, H, std::max(2, std::min(8, H / (3 * th))));
    for (const auto& t : yt) yt_w = std::max(yt_w, Canvas::text_width(t.second, ts));
  }
  const int top = title.empty() ? pad : th + 3 * pad;
  const int left = pad + (st.axes ? th + 2 * pad + yt_w + pad : 0);
  const int bottom = pad + (st.axes ? 2 * pad + th + pad + th + pad : 0);
  const int bar_w = 3 * th, right = st.colorbar ? 3 * pad + bar_w + pad + bar_label_w + 2 * pad + th + pad : pad;
  const int cw = std::max(left + W + right, st.min_width), ch = top + H + bottom;
  Canvas c(cw, ch);
  for (int y = 0; y < H; ++y) {
    std::uint8_t* row = c.row(top + y) + left;
    for (int x = 0; x < W; ++x) row[x] = pixel(x, y);
  }
  if (!title.empty()) c.text(pad, pad + pad / 2, title, kBlack, ts);
  if (st.axes) {
    c.frame(left - 1, top - 1, W + 2, H + 2, kMid);
    for (const auto& [pos, text] : xt) {
      const int x = left + static_cast<int>(std::lround(pos));
      c.fill(x, top + H + 1, 1, pad, kMid);
      c.text(x, top + H + 2 * pad, text, kDark, ts, 1);
    }
    for (const auto& [pos, text] : yt) {
      const int y = st.origin_lower ? top + H - static_cast<int>(std::lround(pos)) : top + static_cast<int>(std::lround(pos));
      c.fill(left - 1 - pad, y, pad, 1, kMid);
      c.text(left - 2 * pad, y - th / 2, text, kDark, ts, 2);
    }
    c.text(left + W / 2, top + H + 3 * pad + th, f.x_name, kBlack, ts, 1);
    c.text(pad, top + H / 2 + Canvas::text_width(f.y_name, ts) / 2, f.y_name, kBlack, ts, 0, true);
  }
  if (st.colorbar) {
    const int bx = left + W + 3 * pad;
    for (int y = 0; y < H; ++y) {
      const double t = 1.0 - (y + 0.5) / H;
      c.fill(bx, top + y, bar_w, 1, Palette::level(st.lo + t * (st.hi - st.lo), st.lo, st.hi));
    }
    c.frame(bx - 1, top - 1, bar_w + 2, H + 2, kMid);
    for (const auto& [v, text] : bar_ticks) {
      const int y = top + static_cast<int>(std::lround((1.0 - (v - st.lo) / (st.hi - st.lo)) * (H - 1)));
      c.fill(bx + bar_w, y, pad, 1, kDark);
      const int ty = std::clamp(y - th / 2, 0, ch - th);
      c.text(bx + bar_w + pad + pad / 2, ty, text, kDark, ts);
    }
    const int name_x = bx + bar_w + pad + bar_label_w + 2 * pad;
    c.text(name_x, top + H / 2 + Canvas::text_width(bar_name, ts) / 2, bar_name, kBlack, ts, 0, true);
  }
  return c;
}

std::string frame_name(const std::string& pattern, int k) {
  char buf[4096];
  std::snprintf(buf, sizeof buf, pattern.c_str(), k);
  return buf;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int run(int argc, char** argv) {
  Cli cli({"render", "Draw fields of a stream as images or animations, and 1-D data as line plots", "",
           "  gen-input fluid --n 64 | fluid-step --steps 50 | render --interior -o density.png\n"
           "  gen-input fluid --n 64 | fluid-step --steps 40 --snapshot-every 4 | render --interior -o run.gif\n"
           "  gen-input ns --n 16 --init taylor-green-3d | ns-step --steps 4 | render --derive vorticity_magnitude --slice z:8 --axes -o w.png\n"
           "  gen-input ns --n 16 --init taylor-green-3d | ns-step --steps 20 --diag-every 2 | render --plot kinetic_energy --x t -o ke.svg",
           "the picture (.png, .svg, .pdf) or animation (.gif, .mp4) that its extension names (other names are "
           "refused), or with --frames numbered PNGs by a pattern such as f-%03d.png,",
           "Accepted for symmetry with the other tools (render shows no progress line)"},
          kInput | kOutput | kNotStream);
  cli.add("Field")("array", "Record to draw (the last of that name; every snapshot for an animation)",
                   cxxopts::value<std::string>()->default_value("d"), "NAME")(
      "derive", "Draw a field derived from the velocity (u, v or vx, vy, vz): speed, vorticity (2-D) or "
                "vorticity_magnitude (3-D)",
      cxxopts::value<std::string>(), "F")(
      "speed", "Draw |(U, V)| of two named records", cxxopts::value<std::string>(), "U,V")(
      "slice", "For 3-D arrays: AXIS:INDEX, the axis by number or name (default 0:middle)", cxxopts::value<std::string>(),
      "A:I")("interior", "Leave out the outermost cell layer (the boundary layer of fluid-step's arrays)");
  cli.add("Picture")("cmap", "viridis, inferno, gray or coolwarm (default: coolwarm for vorticity, else viridis)",
                     cxxopts::value<std::string>(), "MAP")(
      "value-range", "Values at the ends of the colour map (default: min:max over every frame)",
      cxxopts::value<std::string>(), "LO:HI")("limits", "Same as --value-range", cxxopts::value<std::string>(), "LO:HI")(
      "scale", "Integer magnification (default: enough to draw a small grid at least 512 pixels wide)",
      cxxopts::value<int>(), "K")("size", "The field's drawing area in pixels, W or WxH (plots: the whole picture)",
                                  cxxopts::value<std::string>(), "WxH")(
      "no-colorbar", "Only the field's pixels: no colour bar and no title")("axes", "Ticks and labels in grid coordinates")(
      "title", "Title (default: the field, its units, step and time)", cxxopts::value<std::string>(), "TEXT")(
      "origin", "lower (first index upward, as a y axis) or upper (row 0 at the top)",
      cxxopts::value<std::string>()->default_value("lower"), "O");
  cli.add("Animation")("frames", "Every snapshot as a numbered PNG; -o is a printf pattern such as f-%03d.png")(
      "fps", "Frames per second of a GIF or MP4", cxxopts::value<double>()->default_value("10"), "N");
  cli.add("Plot")("plot", "Line plot of records or table columns (one line per row of 2-D data)",
                  cxxopts::value<std::string>(), "Y,...")(
      "x", "With --plot: the record or column for x (default: the axis's coordinate, labels or index)",
      cxxopts::value<std::string>(), "X")("log-y", "With --plot: logarithmic y axis")(
      "xlabel", "With --plot: x axis label", cxxopts::value<std::string>(), "TEXT")(
      "ylabel", "With --plot: y axis label", cxxopts::value<std::string>(), "TEXT");
  cli.add("Removed")("range", "", cxxopts::value<std::string>(), "LO:HI");
  cli.parse(argc, argv);
  // One meaning per option name across the tools: --range is element indices (verify).
  if (cli.has("range"))
    fail_input("--range is now --value-range LO:HI (the values at the ends of the colour map): --range " +
               cli.get<std::string>("range") + " -> --value-range " + cli.get<std::string>("range"));

  const std::string out_path = cli.output();
  const bool frames = cli.has("frames");
  const std::string format = output_format(out_path);
  const bool gif = format == "gif", mp4 = format == "mp4", svg = format == "svg", pdf = format == "pdf";
  if (frames && (svg || pdf)) fail_input("--frames writes PNG files: -o needs a pattern such as frame-%03d.png, got '" + out_path + "'");
  if (pdf) require_documents(out_path);
  const std::string origin = cli.get<std::string>("origin");
  if (origin != "lower" && origin != "upper") fail_input("--origin must be lower or upper, got '" + origin + "'");
  const double fps = cli.get<double>("fps");
  if (!(fps > 0 && fps <= 100)) fail_input("--fps must be in (0, 100], got " + std::to_string(fps));
  std::optional<std::pair<int, int>> size;
  if (cli.has("size")) size = parse_size(cli.get<std::string>("size"));
  if (cli.has("scale") && cli.has("size")) fail_input("--scale and --size exclude each other");
  int scale = 0;
  if (cli.has("scale")) {
    scale = cli.get<int>("scale");
    if (scale < 1 || scale > 64) fail_input("--scale must be in [1, 64], got " + std::to_string(scale));
  }
  if (frames) {
    if (out_path == "-") fail_input("--frames needs -o PATTERN (e.g. -o frame-%03d.png)");
    const auto pct = out_path.find('%');
    if (pct == std::string::npos || out_path.find('%', pct + 1) != std::string::npos ||
        out_path.find_first_of("diu", pct) == std::string::npos)
      fail_input("--frames needs one integer conversion in -o, such as frame-%03d.png; got '" + out_path + "'");
  }
  if ((gif || mp4) && frames) fail_input("--frames writes PNG files; -o " + out_path + " is already an animation");
  if (mp4) {
    require_ffmpeg();
    if (out_path == "-") fail_input("-o *.mp4 needs a file name");
  }
  if (gif) require_gif();
  std::string value_range;
  if (cli.has("value-range") && cli.has("limits")) fail_input("--value-range and --limits are the same option: give one");
  if (cli.has("value-range")) value_range = cli.get<std::string>("value-range");
  if (cli.has("limits")) value_range = cli.get<std::string>("limits");
  std::optional<std::pair<double, double>> fixed;
  if (!value_range.empty()) fixed = parse_pair(value_range, cli.has("limits") ? "--limits" : "--value-range");

  FieldRequest rq;
  rq.array = cli.get<std::string>("array");
  if (cli.has("derive")) rq.derive = cli.get<std::string>("derive");
  if (cli.has("speed")) {
    const std::string s = cli.get<std::string>("speed");
    const auto comma = s.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == s.size()) fail_input("--speed must be U,V, got '" + s + "'");
    rq.speed_u = s.substr(0, comma);
    rq.speed_v = s.substr(comma + 1);
  }
  if (cli.has("speed") && cli.has("derive")) fail_input("--speed and --derive exclude each other");
  if (cli.has("slice")) {
    const std::string s = cli.get<std::string>("slice");
    const auto colon = s.find(':');
    try {
      if (colon == std::string::npos || colon == 0) throw std::invalid_argument(s);
      std::size_t used = 0;
      rq.slice_axis = s.substr(0, colon);
      rq.slice_index = std::stoll(s.substr(colon + 1), &used);
      const bool number = rq.slice_axis.find_first_not_of("0123456789") == std::string::npos;
      if (used != s.size() - colon - 1 || rq.slice_index < 0 || (number && rq.slice_axis != "0" && rq.slice_axis != "1" && rq.slice_axis != "2"))
        throw std::invalid_argument(s);
    } catch (const std::exception&) {
      fail_input("--slice must be AXIS:INDEX with AXIS 0, 1, 2 or an axis name and INDEX >= 0, got '" + s + "'");
    }
  }
  rq.interior = cli.has("interior");
  rq.series = frames || gif || mp4;

  std::optional<OutputFile> single;  // refuses a terminal before the reading
  if (!frames && !mp4) single.emplace(out_path, !svg);  // SVG is text
  const auto records = read_input(cli);
  const exporter::Dataset ds = exporter::build_dataset(records, false);

  // ---- line plots ------------------------------------------------------------------
  bool plot_mode = cli.has("plot");
  if (!plot_mode && !cli.has("derive") && !cli.has("speed")) {
    // A 1-D record (or a table) named by --array is drawn as a plot.
    const exporter::Variable* v = ds.variable(rq.array);
    if (v && (v->is_table() || (v->dims.size() == 1 && v->records.size() == 1))) plot_mode = true;
  }
  for (const char* opt : {"x", "log-y", "xlabel", "ylabel"})
    if (cli.has(opt) && !plot_mode) fail_input(std::string("--") + opt + " goes with --plot");
  if (plot_mode) {
    if (gif || mp4 || frames) fail_input("a line plot is one picture: -o NAME.png, NAME.svg or NAME.pdf");
    PlotRequest pr;
    pr.names = cli.has("plot") ? split_list(cli.get<std::string>("plot")) : std::vector<std::string>{rq.array};
    if (!cli.has("plot") && ds.variable(rq.array)->is_table()) pr.names = ds.variable(rq.array)->columns;
    if (cli.has("x")) pr.x = cli.get<std::string>("x");
    if (cli.has("title")) pr.title = cli.get<std::string>("title");
    if (cli.has("xlabel")) pr.x_label = cli.get<std::string>("xlabel");
    if (cli.has("ylabel")) pr.y_label = cli.get<std::string>("ylabel");
    pr.log_y = cli.has("log-y");
    const Plot plot = make_plot(ds, pr);
    const int w = size ? size->first : 800, h = size && size->second ? size->second : (size ? size->first * 5 / 8 : 500);
    const Palette palette(colormap_named(cli.has("cmap") ? cli.get<std::string>("cmap") : "viridis"));
    if (svg) {
      SvgPainter painter(palette, w, h);
      draw_plot(plot, painter, w, h);
      const std::string doc = painter.finish();
      single->write(doc.data(), doc.size());
      single->commit();
    } else if (pdf) {
      write_plot_pdf(*single, plot, palette, w, h);
    } else {
      Canvas canvas(w, h);
      CanvasPainter painter(canvas, w >= 500 ? 2 : 1);
      draw_plot(plot, painter, w, h);
      write_png(*single, canvas, palette);
    }
    if (!cli.quiet())
      for (const auto& n : plot.notes) std::fprintf(stderr, "render: %s\n", n.c_str());
    return 0;
  }
  if (svg) require_documents(out_path);  // a field's SVG is drawn by Cairo

  // ---- fields ----------------------------------------------------------------------
  const std::vector<Field> fields = make_fields(ds, rq);
  const std::string cmap = cli.has("cmap") ? cli.get<std::string>("cmap") : rq.derive == "vorticity" ? "coolwarm" : "viridis";
  const Palette palette(colormap_named(cmap));
  Style st;
  st.origin_lower = origin == "lower";
  if (fixed) {
    st.lo = fixed->first, st.hi = fixed->second;
  } else {  // min:max over every frame's finite values; signed maps centred on 0
    bool any = false;
    for (const auto& f : fields)
      for (double v : f.v)
        if (std::isfinite(v)) {
          st.lo = any ? std::min(st.lo, v) : v;
          st.hi = any ? std::max(st.hi, v) : v;
          any = true;
        }
    if (!any) st.lo = 0, st.hi = 1;
    if (cmap == "coolwarm") {
      const double m = std::max(std::fabs(st.lo), std::fabs(st.hi));
      st.lo = -m, st.hi = m;
    }
    if (st.hi == st.lo) st.lo -= 0.5, st.hi += 0.5;
  }
  const Field& f0 = fields.front();
  if (size) {
    st.width = size->first;
    st.height = size->second ? size->second
                             : std::max(1, static_cast<int>(std::lround(static_cast<double>(size->first) * f0.rows / f0.cols)));
  } else {
    const std::int64_t longest = std::max(f0.rows, f0.cols);
    const std::int64_t k = scale ? scale : (longest < 512 ? (511 + longest) / longest : 1);
    if (f0.cols * k > 16000 || f0.rows * k > 16000)
      fail_input("image too large: " + std::to_string(f0.cols * k) + " x " + std::to_string(f0.rows * k) +
                 " pixels (use --size)");
    st.width = static_cast<int>(f0.cols * k);
    st.height = static_cast<int>(f0.rows * k);
  }
  st.colorbar = !cli.has("no-colorbar");
  st.axes = cli.has("axes");
  if (cli.has("title")) st.title = cli.get<std::string>("title");
  st.bare = !st.colorbar && !st.axes && !cli.has("title");
  if (!st.bare) {  // every frame as wide as the widest title, so an animation keeps one size
    const int ts = std::max(st.width, st.height) >= 360 ? 2 : 1;
    for (const auto& f : fields) st.min_width = std::max(st.min_width, Canvas::text_width(title_of(f, st.title), ts) + 8 * ts);
  }

  if (frames) {
    for (std::size_t k = 0; k < fields.size(); ++k) {
      OutputFile out(frame_name(out_path, static_cast<int>(k)));
      write_png(out, compose(fields[k], st), palette);
    }
  } else if (gif) {
    const Canvas first = compose(fields[0], st);
    GifWriter w(*single, first.width(), first.height(), palette, fps);
    w.add(first);
    for (std::size_t k = 1; k < fields.size(); ++k) w.add(compose(fields[k], st));
    w.finish();
    single->commit();
  } else if (mp4) {
    const Canvas first = compose(fields[0], st);
    Mp4Writer w(out_path, first.width(), first.height(), palette, fps);
    w.add(first);
    for (std::size_t k = 1; k < fields.size(); ++k) w.add(compose(fields[k], st));
    w.finish();
  } else if (svg || pdf) {
    write_canvas_document(*single, compose(fields.back(), st), palette, pdf ? DocumentFormat::pdf : DocumentFormat::svg);
  } else {
    write_png(*single, compose(fields.back(), st), palette);
  }
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("render", [&] { return numpipe::run(argc, argv); });
}
