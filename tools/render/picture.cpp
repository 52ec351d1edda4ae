#include "render/picture.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>


namespace numpipe::render {

namespace {
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

}  // namespace

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

}  // namespace numpipe::render
