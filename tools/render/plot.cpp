#include "render/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "common/strings.hpp"

namespace numpipe::render {
namespace {

using exporter::Dataset;
using exporter::Variable;

struct Source {
  const Variable* v = nullptr;
  std::size_t column = 0;
  std::string name;
};

std::string available(const Dataset& ds) {
  std::string s;
  for (const auto& v : ds.variables) {
    if (v.is_table()) {
      for (const auto& c : v.columns) s += (s.empty() ? "" : ", ") + c;
    } else {
      s += (s.empty() ? "" : ", ") + v.name;
    }
  }
  return s;
}

Source find_source(const Dataset& ds, const std::string& name, const std::string& option) {
  if (const Variable* v = ds.variable(name)) {
    if (!v->is_table()) return {v, 0, name};
    if (v->columns.size() == 1) return {v, 0, v->columns[0]};
    std::string cols;
    for (const auto& c : v->columns) cols += (cols.empty() ? "" : ", ") + c;
    fail_input(option + ": '" + name + "' is a table; name its columns (" + cols + ")");
  }
  const auto dot = name.find('.');
  for (const auto& v : ds.variables) {
    for (std::size_t c = 0; c < v.columns.size(); ++c) {
      if (v.columns[c] == name) return {&v, c, name};
      if (dot != std::string::npos && name.substr(0, dot) == v.name && name.substr(dot + 1) == v.columns[c])
        return {&v, c, v.columns[c]};
    }
  }
  fail_input(option + ": no record or column '" + name + "' (have: " + available(ds) + ")");
}

// Looks like a date or time stamp: sorting the text sorts the times.
bool date_like(const std::string& s) {
  if (s.size() < 4) return false;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '/' || c == 'T' || c == ' ' ||
          c == '.' || c == 'Z'))
      return false;
  return true;
}

}  // namespace

int series_color(std::size_t i, std::size_t n) {
  if (n <= static_cast<std::size_t>(kSeriesColors)) return kSeries0 + static_cast<int>(i);
  // Many lines (policies, series): a gradient through the colour map, clear of its lightest end.
  const double t = 0.85 * static_cast<double>(i) / static_cast<double>(n - 1);
  return kMap0 + static_cast<int>(std::lround(t * (kMapLevels - 1)));
}

Plot make_plot(const Dataset& ds, const PlotRequest& rq) {
  Plot plot;
  plot.title = rq.title;
  plot.log_y = rq.log_y;
  if (rq.names.empty()) fail_input("--plot needs one or more record or column names");
  struct Pending {
    Series s;
    std::vector<std::string> labels;  // per point, for categorical x
  };
  std::vector<Pending> lines;
  std::set<std::string> x_axes;
  std::string units;
  bool same_units = true;
  for (const auto& name : rq.names) {
    const Source src = find_source(ds, name, "--plot");
    const Variable& v = *src.v;
    if (v.dims.empty() || v.dims.size() > 2)
      fail_input("--plot " + name + ": its record has " + std::to_string(v.dims.size()) +
                 " axes; a plot takes 1-D data, or one line per row of 2-D data");
    const std::string x_axis = v.dims.back();
    const auto n = static_cast<std::size_t>(v.shape.back());
    const std::size_t rows = v.dims.size() == 2 ? static_cast<std::size_t>(v.shape[0]) : 1;
    const exporter::Axis* xa = ds.axis(x_axis);
    const exporter::Axis* ra = v.dims.size() == 2 ? ds.axis(v.dims[0]) : nullptr;
    Source xs;
    if (!rq.x.empty()) {
      xs = find_source(ds, rq.x, "--x");
      if (xs.v->dims != v.dims && !(xs.v->dims.size() == 1 && xs.v->dims[0] == x_axis))
        fail_input("--x " + rq.x + " lies on other axes than '" + name + "' (" + x_axis + ")");
    }
    const std::string u = v.units == "1" ? std::string() : v.units;  // a pure number shows no unit
    if (lines.empty()) units = u;
    same_units = same_units && u == units;
    // A rolling window's values belong to its last point (mle-fit writes each
    // window's first point as `start` and its length as attrs `window`), as its date
    // labels say: drawn there, they line up with the data on the point axis.
    const Variable* start = ds.variable("start");
    const bool by_window_end = !xs.v && start && start->dims.size() == 1 && start->dims[0] == x_axis &&
                               start->shape[0] == static_cast<std::int64_t>(n) && v.attrs.contains("window") &&
                               v.attrs["window"].is_number_integer() && v.attrs["window"].get<std::int64_t>() > 0 &&
                               !(xa && (!xa->coordinate.empty() || !xa->labels.empty()));
    const double window_end = by_window_end ? v.attrs["window"].get<double>() - 1 : 0;
    const std::size_t shown = std::min(rows, rq.max_lines);
    if (shown < rows)
      plot.notes.push_back("--plot " + name + ": drew the first " + std::to_string(shown) + " of " + std::to_string(rows) +
                           " lines");
    for (std::size_t r = 0; r < shown; ++r) {
      Pending p;
      // One line per row: named by the row (its label, or "policy 3"); the record's name is the y label.
      const std::string row_name = ra && !ra->labels.empty() ? ra->labels[r] : v.dims[0] + " " + std::to_string(r);
      p.s.name = rows == 1 ? src.name : rq.names.size() == 1 ? row_name : src.name + " " + row_name;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t row = r * n + i;
        p.s.y.push_back(v.value(row, src.column));
        if (xs.v) p.s.x.push_back(xs.v->value(xs.v->dims.size() == 1 ? i : row, xs.column));
        else if (xa && xa->coordinate.size() == n) p.s.x.push_back(xa->coordinate[i]);
        else if (xa && xa->labels.size() == n) p.labels.push_back(xa->labels[i]);
        else if (by_window_end) p.s.x.push_back(start->value(i, 0) + window_end);
        else p.s.x.push_back(static_cast<double>(i));
      }
      lines.push_back(std::move(p));
    }
    x_axes.insert(xs.v ? rq.x
                       : by_window_end ? "point"
                       : (xa && xa->coordinate.empty() && !xa->labels.empty() ? xa->labels_name : x_axis));
  }
  // Labelled x (dates): one position per distinct label, in time order when they are dates.
  bool categorical = std::any_of(lines.begin(), lines.end(), [](const Pending& p) { return !p.labels.empty(); });
  if (categorical) {
    std::vector<std::string> all;
    std::set<std::string> seen;
    bool dates = true;
    for (const auto& p : lines)
      for (const auto& l : p.labels) {
        if (seen.insert(l).second) all.push_back(l);
        dates = dates && date_like(l);
      }
    if (dates) std::sort(all.begin(), all.end());
    std::map<std::string, double> position;
    for (std::size_t i = 0; i < all.size(); ++i) position[all[i]] = static_cast<double>(i);
    for (auto& p : lines)
      if (!p.labels.empty())
        for (const auto& l : p.labels) p.s.x.push_back(position[l]);
    plot.categories = all;
  }
  for (auto& p : lines) plot.series.push_back(std::move(p.s));
  plot.x_label = rq.x_label.empty() ? [&] {
    std::string s;
    for (const auto& a : x_axes) s += (s.empty() ? "" : ", ") + a;
    return s;
  }() : rq.x_label;
  if (!rq.y_label.empty()) plot.y_label = rq.y_label;
  else {
    plot.y_label = rq.names.size() == 1 ? rq.names[0] : "";
    if (same_units && !units.empty()) plot.y_label += (plot.y_label.empty() ? "" : " ") + ("[" + units + "]");
  }
  return plot;
}

void draw_plot(const Plot& plot, Painter& p, double width, double height) {
  const double th = p.text_height(), gap = th * 0.6;
  // Data ranges (finite points; log scale: positive values).
  auto ty = [&](double y) { return plot.log_y ? (y > 0 ? std::log10(y) : NAN) : y; };
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& s : plot.series)
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double y = ty(s.y[i]);
      if (!std::isfinite(y) || !std::isfinite(s.x[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (!(x0 <= x1)) x0 = 0, x1 = 1;
  if (!(y0 <= y1)) y0 = 0, y1 = 1;
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (y1 == y0) {
    const double d = y0 == 0 ? 1 : std::fabs(y0) * 0.1;
    y0 -= d, y1 += d;
  }
  const double ypad = (y1 - y0) * 0.05;
  y0 -= ypad, y1 += ypad;
  if (plot.categories.empty()) {
    const double xpad = (x1 - x0) * 0.02;
    x0 -= xpad, x1 += xpad;
  } else {
    x0 -= 0.5, x1 += 0.5;
  }

  // Y ticks first: their widest label sets the left margin.
  std::vector<double> yt;
  std::vector<std::string> ytext;
  if (plot.log_y) {
    for (double k = std::ceil(y0); k <= std::floor(y1); k += 1) yt.push_back(k);
    if (yt.size() < 2) {  // less than a decade: round values, placed on the log scale
      yt.clear();
      for (double v : nice_ticks(std::pow(10.0, y0), std::pow(10.0, y1), 4))
        if (v > 0) yt.push_back(std::log10(v));
    }
    for (double k : yt) ytext.push_back(short_number(std::pow(10.0, k)));
  } else {
    yt = nice_ticks(y0, y1, std::max(2, static_cast<int>((height - 6 * th) / (th * 2.5))));
    const double step = yt.size() > 1 ? yt[1] - yt[0] : 1;
    for (double v : yt) ytext.push_back(tick_text(v, step));
  }
  double ytw = 0;
  for (const auto& s : ytext) ytw = std::max(ytw, p.text_width(s));

  // The legend's entries and box (more than one line).
  const std::size_t n = plot.series.size();
  std::vector<std::string> entries;
  const std::size_t listed = std::min<std::size_t>(n, 10);
  if (n > 1) {
    for (std::size_t k = 0; k < listed; ++k) entries.push_back(plot.series[k].name);
    if (listed < n) entries.push_back("... " + std::to_string(n - listed) + " more (to " + plot.series.back().name + ")");
  }
  double entry_w = 0;
  for (const auto& e : entries) entry_w = std::max(entry_w, p.text_width(e));
  const double row = th * 1.5, sample = th * 2;
  const double bw = entry_w + sample + gap * 3, bh = row * static_cast<double>(entries.size()) + gap;

  const double left = gap + (plot.y_label.empty() ? 0 : th + gap) + ytw + gap * 1.5;
  const double top = plot.title.empty() ? th : th * 2.5;
  const double bottom = th + gap * 2.5 + (plot.x_label.empty() ? 0 : th + gap);  // tick labels, the axis's name
  // Where the points land for a given right margin; the legend goes in the
  // corner of the axes that covers no point, else outside on the right.
  struct Frame {
    double right, pw, ph;
  };
  auto frame_for = [&](double right) { return Frame{right, width - left - right, height - top - bottom}; };
  auto points = [&](const Frame& f) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& s : plot.series)
      for (std::size_t i = 0; i < s.y.size(); ++i) {
        const double y = ty(s.y[i]);
        if (std::isfinite(y) && std::isfinite(s.x[i]))
          pts.push_back({left + (s.x[i] - x0) / (x1 - x0) * f.pw, top + f.ph - (y - y0) / (y1 - y0) * f.ph});
      }
    return pts;
  };
  Frame fr = frame_for(th * 1.5);
  double bx = 0, by = 0;
  if (!entries.empty()) {
    const auto pts = points(fr);
    const double xr = left + fr.pw - bw - gap, yb = top + fr.ph - bh - gap;
    const double corners[4][2] = {{xr, top + gap}, {left + gap, top + gap}, {xr, yb}, {left + gap, yb}};
    std::size_t best = 4;
    for (std::size_t c = 0; c < 4 && best == 4; ++c) {
      bool clear = xr >= left + gap && yb >= top + gap;
      for (const auto& [x, y] : pts)
        clear = clear && !(x >= corners[c][0] - gap && x <= corners[c][0] + bw + gap && y >= corners[c][1] - gap &&
                           y <= corners[c][1] + bh + gap);
      if (clear) best = c;
    }
    if (best < 4) {
      bx = corners[best][0], by = corners[best][1];
    } else {
      fr = frame_for(bw + gap * 2);
      bx = left + fr.pw + gap, by = top;
    }
  }
  const double pw = fr.pw, ph = fr.ph;
  if (pw < 40 || ph < 40) fail_input("the plot is too small for its labels and legend: give a larger --size");
  auto X = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto Y = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };

  p.rect(left, top, pw, ph, kWhite, -1);
  // Grid and y ticks.
  for (std::size_t i = 0; i < yt.size(); ++i) {
    const double y = Y(yt[i]);
    p.line(left, y, left + pw, y, kLight, 1);
    p.line(left - gap * 0.5, y, left, y, kMid, 1);
    p.text(left - gap, y - th / 2, ytext[i], kDark, 2);
  }
  // X ticks: numbers, or labels (dates) spaced so that they never overlap.
  if (plot.categories.empty()) {
    const double xtw = p.text_width(tick_text(x1, (x1 - x0) / 5)) + p.text_width("-0");
    const int target = std::max(2, static_cast<int>(pw / (xtw + 2 * th)));
    const auto xt = nice_ticks(x0, x1, std::min(target, 8));
    const double step = xt.size() > 1 ? xt[1] - xt[0] : 1;
    double last_end = -INFINITY;
    for (double v : xt) {
      const double x = X(v);
      const std::string s = tick_text(v, step);
      const double w = p.text_width(s);
      p.line(x, top, x, top + ph, kLight, 1);
      p.line(x, top + ph, x, top + ph + gap * 0.5, kMid, 1);
      if (x - w / 2 < last_end + th || x + w / 2 > width || x - w / 2 < 0) continue;
      p.text(x, top + ph + gap, s, kDark, 1);
      last_end = x + w / 2;
    }
  } else {
    double widest = 0;
    for (const auto& c : plot.categories) widest = std::max(widest, p.text_width(c));
    const double slot = pw / static_cast<double>(plot.categories.size());
    const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil((widest + 2 * th) / slot)));
    for (std::size_t i = 0; i < plot.categories.size(); i += every) {
      const double x = X(static_cast<double>(i));
      const double w = p.text_width(plot.categories[i]);
      p.line(x, top + ph, x, top + ph + gap * 0.5, kMid, 1);
      if (x - w / 2 < 0 || x + w / 2 > width) continue;
      p.text(x, top + ph + gap, plot.categories[i], kDark, 1);
    }
  }
  p.rect(left, top, pw, ph, -1, kMid);
  // Labels shortened to the room they have (never clipped by the picture's edge).
  auto fit = [&](std::string s, double room) {
    if (p.text_width(s) <= room) return s;
    while (!s.empty() && p.text_width(s + "...") > room) {
      s.pop_back();
      while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();  // whole code points
    }
    return s + "...";
  };
  if (!plot.x_label.empty()) p.text(left + pw / 2, top + ph + gap * 2 + th, fit(plot.x_label, pw), kBlack, 1);
  if (!plot.y_label.empty()) {
    const std::string yl = fit(plot.y_label, ph);
    p.text(gap, top + ph / 2 + p.text_width(yl) / 2, yl, kBlack, 0, true);
  }
  if (!plot.title.empty()) p.text(width / 2, th * 0.7, fit(plot.title, width - 2 * gap), kBlack, 1);

  // The lines, broken where a value is missing; lone points as small squares.
  for (std::size_t k = 0; k < n; ++k) {
    const Series& s = plot.series[k];
    const int color = series_color(k, n);
    std::vector<double> xs, ys;
    auto flush = [&] {
      if (xs.size() == 1) p.rect(xs[0] - 2, ys[0] - 2, 5, 5, color, -1);
      else if (xs.size() > 1) p.polyline(xs, ys, color, 2);
      xs.clear(), ys.clear();
    };
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double y = ty(s.y[i]);
      if (!std::isfinite(y) || !std::isfinite(s.x[i])) {
        flush();
        continue;
      }
      xs.push_back(X(s.x[i]));
      ys.push_back(Y(y));
    }
    flush();
  }
  if (!entries.empty()) {
    p.rect(bx, by, bw, bh, kWhite, kLight);
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const double y = by + gap / 2 + row * static_cast<double>(k);
      if (k < listed) p.line(bx + gap, y + th / 2, bx + gap + sample, y + th / 2, series_color(k, n), 2);
      p.text(bx + gap * 2 + sample, y, fit(entries[k], width - bx - gap * 3 - sample), kDark, 0);
    }
  }
}

// ---- painters ------------------------------------------------------------------------
void CanvasPainter::line(double x0, double y0, double x1, double y1, int color, double width) {
  c_.line(x0, y0, x1, y1, static_cast<std::uint8_t>(color), std::max(1, static_cast<int>(std::lround(width * s_ / 2.0))));
}

void CanvasPainter::polyline(const std::vector<double>& xs, const std::vector<double>& ys, int color, double width) {
  for (std::size_t i = 1; i < xs.size(); ++i) line(xs[i - 1], ys[i - 1], xs[i], ys[i], color, width);
}

void CanvasPainter::rect(double x, double y, double w, double h, int fill, int stroke) {
  const int xi = static_cast<int>(std::lround(x)), yi = static_cast<int>(std::lround(y));
  const int wi = static_cast<int>(std::lround(w)), hi = static_cast<int>(std::lround(h));
  if (fill >= 0) c_.fill(xi, yi, wi, hi, static_cast<std::uint8_t>(fill));
  if (stroke >= 0) c_.frame(xi, yi, wi, hi, static_cast<std::uint8_t>(stroke));
}

void CanvasPainter::text(double x, double y, const std::string& s, int color, int align, bool vertical) {
  c_.text(static_cast<int>(std::lround(x)), static_cast<int>(std::lround(y)), s, static_cast<std::uint8_t>(color), s_, align,
          vertical);
}

namespace {
std::string n2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}
}  // namespace

SvgPainter::SvgPainter(const Palette& palette, double width, double height) : palette_(palette), width_(width), height_(height) {}

std::string SvgPainter::color(int index) const {
  const Rgb c = palette_.colors[index & 0xff];
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

void SvgPainter::line(double x0, double y0, double x1, double y1, int c, double width) {
  body_ += "<line x1=\"" + n2(x0) + "\" y1=\"" + n2(y0) + "\" x2=\"" + n2(x1) + "\" y2=\"" + n2(y1) + "\" stroke=\"" +
           color(c) + "\" stroke-width=\"" + n2(width) + "\"/>\n";
}

void SvgPainter::polyline(const std::vector<double>& xs, const std::vector<double>& ys, int c, double width) {
  body_ += "<polyline fill=\"none\" stroke=\"" + color(c) + "\" stroke-width=\"" + n2(width) +
           "\" stroke-linejoin=\"round\" points=\"";
  for (std::size_t i = 0; i < xs.size(); ++i) body_ += (i ? " " : "") + n2(xs[i]) + "," + n2(ys[i]);
  body_ += "\"/>\n";
}

void SvgPainter::rect(double x, double y, double w, double h, int fill, int stroke) {
  body_ += "<rect x=\"" + n2(x) + "\" y=\"" + n2(y) + "\" width=\"" + n2(w) + "\" height=\"" + n2(h) + "\" fill=\"" +
           (fill >= 0 ? color(fill) : std::string("none")) + "\"" +
           (stroke >= 0 ? " stroke=\"" + color(stroke) + "\" stroke-width=\"1\"" : std::string()) + "/>\n";
}

void SvgPainter::text(double x, double y, const std::string& s, int c, int align, bool vertical) {
  const char* anchor = align == 1 ? "middle" : align == 2 ? "end" : "start";
  // y is the top of the text: the baseline lies about 0.8 em below it.
  if (vertical)
    body_ += "<text x=\"0\" y=\"0\" transform=\"translate(" + n2(x + 10) + " " + n2(y) + ") rotate(-90)\" fill=\"" + color(c) +
             "\" text-anchor=\"" + anchor + "\">" + xml_escape(s) + "</text>\n";
  else
    body_ += "<text x=\"" + n2(x) + "\" y=\"" + n2(y + 10) + "\" fill=\"" + color(c) + "\" text-anchor=\"" + anchor + "\">" +
             xml_escape(s) + "</text>\n";
}

double SvgPainter::text_width(const std::string& s) const {
  // 12 px sans-serif: about 0.6 em per character, a little more to stay clear.
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return 7.2 * static_cast<double>(n);
}

std::string SvgPainter::finish() {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + n2(width_) + "\" height=\"" + n2(height_) +
         "\" viewBox=\"0 0 " + n2(width_) + " " + n2(height_) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + body_ +
         "</svg>\n";
}

}  // namespace numpipe::render
