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

#include "common/cli.hpp"
#include "common/strings.hpp"
#include "export/dataset.hpp"
#include "render/canvas.hpp"
#include "render/encode.hpp"
#include "render/field.hpp"
#include "render/picture.hpp"
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
  const std::vector<std::string> ends = split_fields(text, ':');
  if (ends.size() != 2 || ends[0].empty() || ends[1].empty()) fail_input(option + " must be LO:HI, got '" + text + "'");
  const double lo = decimal_number(ends[0], option), hi = decimal_number(ends[1], option);
  if (!(hi > lo)) fail_input(option + " needs finite LO < HI, got '" + text + "'");
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

std::string frame_name(const std::string& pattern, int k) {
  char buf[4096];
  std::snprintf(buf, sizeof buf, pattern.c_str(), k);
  return buf;
}

// The options, declared once with their checks (run(), step 1); the values that
// need parsing are kept parsed (size, value range, the field request's parts).
struct RenderOptions {
  std::string array = "d", origin = "lower";
  std::optional<std::string> derive, speed, slice, cmap, value_range, limits, size_text, title, plot, x, xlabel, ylabel, removed;
  std::optional<int> scale;
  double fps = 10;
  bool interior = false, no_colorbar = false, axes = false, frames = false, log_y = false;
  std::optional<std::pair<int, int>> size;
  std::optional<std::pair<double, double>> fixed;
  FieldRequest rq;

  void declare(Cli& cli) {
    cli.option("array", &array, "Record to draw (the last of that name; every snapshot for an animation)", "NAME", "Field");
    cli.option("derive", &derive,
               "Draw a field derived from the velocity (u, v or vx, vy, vz): speed, vorticity (2-D) or "
               "vorticity_magnitude (3-D)",
               "F", "Field")
        .one_of({"speed", "vorticity", "vorticity_magnitude"});
    cli.option("speed", &speed, "Draw |(U, V)| of two named records", "U,V", "Field").check([this](const std::string& s) {
      const auto comma = s.find(',');
      if (comma == std::string::npos || comma == 0 || comma + 1 == s.size()) fail_input("--speed must be U,V, got '" + s + "'");
      rq.speed_u = s.substr(0, comma);
      rq.speed_v = s.substr(comma + 1);
    });
    cli.option("slice", &slice, "For 3-D arrays: AXIS:INDEX, the axis by number or name (default 0:middle)", "A:I", "Field")
        .check([this](const std::string& s) { parse_slice(s); });
    cli.flag("interior", &interior, "Leave out the outermost cell layer (the boundary layer of fluid-step's arrays)", "Field");
    cli.option("cmap", &cmap, "viridis, inferno, gray or coolwarm (default: coolwarm for vorticity, else viridis)", "MAP",
               "Picture")
        .one_of({"viridis", "inferno", "gray", "coolwarm"});
    cli.option("value-range", &value_range, "Values at the ends of the colour map (default: min:max over every frame)",
               "LO:HI", "Picture");
    cli.option("limits", &limits, "Same as --value-range", "LO:HI", "Picture");
    cli.option("scale", &scale, "Integer magnification (default: enough to draw a small grid at least 512 pixels wide)",
               "K", "Picture")
        .range(1, 64);
    cli.option("size", &size_text, "The field's drawing area in pixels, W or WxH (plots: the whole picture)", "WxH",
               "Picture")
        .check([this](const std::string& s) { size = parse_size(s); });
    cli.flag("no-colorbar", &no_colorbar, "Only the field's pixels: no colour bar and no title", "Picture");
    cli.flag("axes", &axes, "Ticks and labels in grid coordinates", "Picture");
    cli.option("title", &title, "Title (default: the field, its units, step and time)", "TEXT", "Picture");
    cli.option("origin", &origin, "lower (first index upward, as a y axis) or upper (row 0 at the top)", "O", "Picture")
        .one_of({"lower", "upper"});
    cli.flag("frames", &frames, "Every snapshot as a numbered PNG; -o is a printf pattern such as f-%03d.png", "Animation");
    cli.option("fps", &fps, "Frames per second of a GIF or MP4", "N", "Animation").allow_infinite().check([](double v) {
      if (!(v > 0 && v <= 100)) fail_input("--fps must be in (0, 100], got " + std::to_string(v));
    });
    cli.option("plot", &plot, "Line plot of records or table columns (one line per row of 2-D data)", "Y,...", "Plot");
    cli.option("x", &x, "With --plot: the record or column for x (default: the axis's coordinate, labels or index)", "X",
               "Plot");
    cli.flag("log-y", &log_y, "With --plot: logarithmic y axis", "Plot");
    cli.option("xlabel", &xlabel, "With --plot: x axis label", "TEXT", "Plot");
    cli.option("ylabel", &ylabel, "With --plot: y axis label", "TEXT", "Plot");
    // One meaning per option name across the tools: --range is element indices (verify).
    cli.option("range", &removed, "", "LO:HI", "Removed").check([](const std::string& r) {
      fail_input("--range is now --value-range LO:HI (the values at the ends of the colour map): --range " + r +
                 " -> --value-range " + r);
    });
  }

  void parse_slice(const std::string& s) {
    const auto colon = s.find(':');
    try {
      if (colon == std::string::npos || colon == 0) throw std::invalid_argument(s);
      rq.slice_axis = s.substr(0, colon);
      if (!decimal_digits(s.substr(colon + 1))) throw std::invalid_argument(s);
      rq.slice_index = std::stoll(s.substr(colon + 1));  // (beyond 63 bits: out of range)
      const bool number = rq.slice_axis.find_first_not_of("0123456789") == std::string::npos;
      if (number && rq.slice_axis != "0" && rq.slice_axis != "1" && rq.slice_axis != "2")
        throw std::invalid_argument(s);
    } catch (const std::exception&) {
      fail_input("--slice must be AXIS:INDEX with AXIS 0, 1, 2 or an axis name and INDEX >= 0, got '" + s + "'");
    }
  }

  // The checks across options and the output's name; returns the output's format.
  std::string check(const std::string& out_path) {
    const std::string format = output_format(out_path);
    const bool gif = format == "gif", mp4 = format == "mp4", svg = format == "svg", pdf = format == "pdf";
    if (frames && (svg || pdf)) fail_input("--frames writes PNG files: -o needs a pattern such as frame-%03d.png, got '" + out_path + "'");
    if (pdf) require_documents(out_path);
    if (scale && size) fail_input("--scale and --size exclude each other");
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
    if (value_range && limits) fail_input("--value-range and --limits are the same option: give one");
    if (value_range) fixed = parse_pair(*value_range, "--value-range");
    if (limits) fixed = parse_pair(*limits, "--limits");
    rq.array = array;
    rq.derive = derive.value_or("");
    if (speed && derive) fail_input("--speed and --derive exclude each other");
    rq.interior = interior;
    rq.series = frames || gif || mp4;
    return format;
  }
};

// A line plot (one picture: PNG, SVG or PDF) of the records or columns named.
void draw_line_plot(const exporter::Dataset& ds, const RenderOptions& o, const std::string& format, bool quiet,
                    OutputFile& out) {
  if (format == "gif" || format == "mp4" || o.frames) fail_input("a line plot is one picture: -o NAME.png, NAME.svg or NAME.pdf");
  PlotRequest pr;
  pr.names = o.plot ? split_items(*o.plot) : std::vector<std::string>{o.array};
  if (!o.plot && ds.variable(o.array)->is_table()) pr.names = ds.variable(o.array)->columns;
  pr.x = o.x.value_or("");
  pr.title = o.title.value_or("");
  pr.x_label = o.xlabel.value_or("");
  pr.y_label = o.ylabel.value_or("");
  pr.log_y = o.log_y;
  const Plot plot = make_plot(ds, pr);
  const auto& size = o.size;
  const int w = size ? size->first : 800, h = size && size->second ? size->second : (size ? size->first * 5 / 8 : 500);
  const Palette palette(colormap_named(o.cmap.value_or("viridis")));
  if (format == "svg") {
    SvgPainter painter(palette, w, h);
    draw_plot(plot, painter, w, h);
    const std::string doc = painter.finish();
    out.write(doc.data(), doc.size());
    out.commit();
  } else if (format == "pdf") {
    write_plot_pdf(out, plot, palette, w, h);
  } else {
    Canvas canvas(w, h);
    CanvasPainter painter(canvas, w >= 500 ? 2 : 1);
    draw_plot(plot, painter, w, h);
    write_png(out, canvas, palette);
  }
  if (!quiet)
    for (const auto& n : plot.notes) std::fprintf(stderr, "render: %s\n", n.c_str());
}

// The fields' style: one colour range over every frame (min:max of the finite values;
// signed maps centred on 0) and one size, so that an animation keeps both.
Style field_style(const std::vector<Field>& fields, const RenderOptions& o, const std::string& cmap) {
  Style st;
  st.origin_lower = o.origin == "lower";
  if (o.fixed) {
    st.lo = o.fixed->first, st.hi = o.fixed->second;
  } else {
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
  if (o.size) {
    st.width = o.size->first;
    st.height = o.size->second ? o.size->second
                               : std::max(1, static_cast<int>(std::lround(static_cast<double>(o.size->first) * f0.rows / f0.cols)));
  } else {
    const std::int64_t longest = std::max(f0.rows, f0.cols);
    const std::int64_t k = o.scale ? *o.scale : (longest < 512 ? (511 + longest) / longest : 1);
    if (f0.cols * k > 16000 || f0.rows * k > 16000)
      fail_input("image too large: " + std::to_string(f0.cols * k) + " x " + std::to_string(f0.rows * k) +
                 " pixels (use --size)");
    st.width = static_cast<int>(f0.cols * k);
    st.height = static_cast<int>(f0.rows * k);
  }
  st.colorbar = !o.no_colorbar;
  st.axes = o.axes;
  st.title = o.title.value_or("");
  st.bare = !st.colorbar && !st.axes && !o.title;
  if (!st.bare) {  // every frame as wide as the widest title, so an animation keeps one size
    const int ts = std::max(st.width, st.height) >= 360 ? 2 : 1;
    for (const auto& f : fields) st.min_width = std::max(st.min_width, Canvas::text_width(title_of(f, st.title), ts) + 8 * ts);
  }
  return st;
}

// The fields drawn: numbered PNGs, an animation (GIF, MP4), or the last one as one picture.
void write_field_pictures(const std::vector<Field>& fields, const Style& st, const Palette& palette,
                          const std::string& format, const RenderOptions& o, const std::string& out_path,
                          std::optional<OutputFile>& single) {
  if (o.frames) {
    for (std::size_t k = 0; k < fields.size(); ++k) {
      OutputFile out(frame_name(out_path, static_cast<int>(k)));
      write_png(out, compose(fields[k], st), palette);
    }
  } else if (format == "gif") {
    const Canvas first = compose(fields[0], st);
    GifWriter w(*single, first.width(), first.height(), palette, o.fps);
    w.add(first);
    for (std::size_t k = 1; k < fields.size(); ++k) w.add(compose(fields[k], st));
    w.finish();
    single->commit();
  } else if (format == "mp4") {
    const Canvas first = compose(fields[0], st);
    Mp4Writer w(out_path, first.width(), first.height(), palette, o.fps);
    w.add(first);
    for (std::size_t k = 1; k < fields.size(); ++k) w.add(compose(fields[k], st));
    w.finish();
  } else if (format == "svg" || format == "pdf") {
    write_canvas_document(*single, compose(fields.back(), st), palette,
                          format == "pdf" ? DocumentFormat::pdf : DocumentFormat::svg);
  } else {
    write_png(*single, compose(fields.back(), st), palette);
  }
}

int run(int argc, char** argv) {
  Cli cli({"render", "Draw fields of a stream as images or animations, and 1-D data as line plots", "",
           "  gen-input fluid --n 64 | fluid-step --steps 50 | render --interior -o density.png\n"
           "  gen-input fluid --n 64 | fluid-step --steps 40 --snapshot-every 4 | render --interior -o run.gif\n"
           "  gen-input ns --n 16 --init taylor-green-3d | ns-step --steps 4 | render --derive vorticity_magnitude --slice z:8 --axes -o w.png\n"
           "  gen-input ns --n 16 --init taylor-green-3d | ns-step --steps 20 --diag-every 2 | render --plot kinetic_energy --x t -o ke.svg",
           "the picture (.png, .svg, .pdf) or animation (.gif, .mp4) that its extension names (other names are "
           "refused), or with --frames numbered PNGs by a pattern such as f-%03d.png,"},
          kInput | kOutput | kNotStream | kNoProgressLine);
  // 1. The options, declared once with their checks.
  RenderOptions o;
  o.declare(cli);
  // 2. Parse: every value checked; then the checks across options and the output's name.
  cli.parse(argc, argv);
  const std::string out_path = cli.output();
  const std::string format = o.check(out_path);

  // 3. Read: the output file made first (it refuses a terminal before the reading).
  std::optional<OutputFile> single;
  if (!o.frames && format != "mp4") single.emplace(out_path, format != "svg");  // SVG is text
  const auto records = read_input(cli);
  const exporter::Dataset ds = exporter::build_dataset(records, false);

  // 4. A line plot: asked for, or a 1-D record (or a table) named by --array.
  bool plot_mode = o.plot.has_value();
  if (!plot_mode && !o.derive && !o.speed) {
    const exporter::Variable* v = ds.variable(o.array);
    if (v && (v->is_table() || (v->dims.size() == 1 && v->records.size() == 1))) plot_mode = true;
  }
  for (const char* opt : {"x", "log-y", "xlabel", "ylabel"})
    if (cli.has(opt) && !plot_mode) fail_input(std::string("--") + opt + " goes with --plot");
  if (plot_mode) {
    draw_line_plot(ds, o, format, cli.quiet(), *single);
    return 0;
  }
  if (format == "svg") require_documents(out_path);  // a field's SVG is drawn by Cairo

  // 5. Fields: the frames, their style, the pictures.
  const std::vector<Field> fields = make_fields(ds, o.rq);
  const std::string cmap = o.cmap.value_or(o.rq.derive == "vorticity" ? "coolwarm" : "viridis");
  const Palette palette(colormap_named(cmap));
  write_field_pictures(fields, field_style(fields, o, cmap), palette, format, o, out_path, single);
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("render", [&] { return numpipe::run(argc, argv); });
}
