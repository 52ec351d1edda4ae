#include "render/canvas.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "render/text.hpp"

namespace numpipe::render {
namespace {

const Rgb kViridis[] = {{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x4a, 0x89}, {0x31, 0x68, 0x8e},
                        {0x26, 0x82, 0x8e}, {0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6d, 0xcd, 0x59},
                        {0xb4, 0xde, 0x2c}, {0xfd, 0xe7, 0x25}};
const Rgb kInferno[] = {{0x00, 0x00, 0x04}, {0x1b, 0x0c, 0x41}, {0x4a, 0x0c, 0x6b}, {0x78, 0x1c, 0x6d},
                        {0xa5, 0x2c, 0x60}, {0xcf, 0x44, 0x46}, {0xed, 0x69, 0x25}, {0xfb, 0x9b, 0x06},
                        {0xf7, 0xd1, 0x3d}, {0xfc, 0xff, 0xa4}};
const Rgb kGray[] = {{0, 0, 0}, {255, 255, 255}};
// Blue - light grey - red, after Moreland's diverging "cool to warm" map (2009).
const Rgb kCoolwarm[] = {{0x3b, 0x4c, 0xc0}, {0x8d, 0xb0, 0xfe}, {0xdd, 0xdd, 0xdd}, {0xf4, 0x9a, 0x7b}, {0xb4, 0x04, 0x26}};
// Categorical line colours: distinct in hue and lightness.
const Rgb kSeries[kSeriesColors] = {{0x1f, 0x77, 0xb4}, {0xd6, 0x27, 0x28}, {0x2c, 0xa0, 0x2c}, {0x94, 0x67, 0xbd},
                                    {0xff, 0x7f, 0x0e}, {0x8c, 0x56, 0x4b}, {0xe3, 0x77, 0xc2}, {0x17, 0xbe, 0xcf},
                                    {0xbc, 0xbd, 0x22}, {0x55, 0x55, 0x55}};

}  // namespace

Rgb Colormap::at(double t) const {
  t = std::clamp(t, 0.0, 1.0) * (count - 1);
  const int i = std::min(static_cast<int>(t), count - 2);
  const double f = t - i;
  auto mix = [&](std::uint8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(std::lround(a + (b - a) * f)); };
  return {mix(anchors[i].r, anchors[i + 1].r), mix(anchors[i].g, anchors[i + 1].g), mix(anchors[i].b, anchors[i + 1].b)};
}

Colormap colormap_named(const std::string& name) {
  if (name == "viridis") return {kViridis, 10};
  if (name == "inferno") return {kInferno, 10};
  if (name == "gray") return {kGray, 2};
  if (name == "coolwarm") return {kCoolwarm, 5};
  fail_input("--cmap must be viridis, inferno, gray or coolwarm, got '" + name + "'");
}

Palette::Palette(const Colormap& map) {
  colors[kWhite] = {255, 255, 255};
  colors[kBlack] = {0, 0, 0};
  colors[kDark] = {0x33, 0x33, 0x33};
  colors[kMid] = {0x99, 0x99, 0x99};
  colors[kLight] = {0xe4, 0xe4, 0xe4};
  colors[kNaN] = {255, 0, 255};
  for (int i = 0; i < kSeriesColors; ++i) colors[kSeries0 + i] = kSeries[i];
  for (int i = 0; i < kMapLevels; ++i) colors[kMap0 + i] = map.at(static_cast<double>(i) / (kMapLevels - 1));
}

std::uint8_t Palette::level(double v, double lo, double hi) {
  if (std::isnan(v)) return kNaN;
  const double t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  const long k = std::lround(std::clamp(t, 0.0, 1.0) * (kMapLevels - 1));
  return static_cast<std::uint8_t>(kMap0 + k);
}

Rgb Palette::series_color(int i) { return kSeries[((i % kSeriesColors) + kSeriesColors) % kSeriesColors]; }

Canvas::Canvas(int width, int height, std::uint8_t background)
    : width_(width), height_(height), pixels_(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), background) {
  if (width < 1 || height < 1 || width > 20000 || height > 20000)
    fail_input("image size " + std::to_string(width) + " x " + std::to_string(height) + " is outside 1..20000 pixels");
}

void Canvas::fill(int x, int y, int w, int h, std::uint8_t c) {
  const int x0 = std::max(x, 0), y0 = std::max(y, 0), x1 = std::min(x + w, width_), y1 = std::min(y + h, height_);
  for (int yy = y0; yy < y1; ++yy) std::fill(row(yy) + x0, row(yy) + std::max(x0, x1), c);
}

void Canvas::frame(int x, int y, int w, int h, std::uint8_t c) {
  fill(x, y, w, 1, c);
  fill(x, y + h - 1, w, 1, c);
  fill(x, y, 1, h, c);
  fill(x + w - 1, y, 1, h, c);
}

void Canvas::line(double x0, double y0, double x1, double y1, std::uint8_t c, int thickness) {
  // Steps of at most one pixel along the longer direction (a DDA); a square brush for thickness.
  const double dx = x1 - x0, dy = y1 - y0;
  const int steps = std::max(1, static_cast<int>(std::ceil(std::max(std::fabs(dx), std::fabs(dy)))));
  if (steps > 100000) return;  // off-canvas nonsense (a value far outside the axes)
  const int r0 = -(thickness - 1) / 2, r1 = thickness / 2;
  for (int i = 0; i <= steps; ++i) {
    const int x = static_cast<int>(std::lround(x0 + dx * i / steps)), y = static_cast<int>(std::lround(y0 + dy * i / steps));
    for (int a = r0; a <= r1; ++a)
      for (int b = r0; b <= r1; ++b) set(x + a, y + b, c);
  }
}

int Canvas::text_width(const std::string& s, int scale) { return render::text_width(s, scale); }
int Canvas::text_height(int scale) { return render::text_height(scale); }

void Canvas::text(int x, int y, const std::string& s, std::uint8_t c, int scale, int align, bool vertical) {
  draw_text(*this, x, y, s, c, scale, align, vertical);
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  const double raw = (hi - lo) / std::max(target, 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / p;
  const double step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
    const double v = k * step;
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return out;
}

std::string tick_text(double v, double step) {
  char buf[64];
  const double mag = std::max(std::fabs(v), std::fabs(step));
  if (mag >= 1e6 || (mag < 1e-3 && mag > 0)) {
    // As few significant digits as tell neighbouring ticks apart.
    const int digits = std::clamp(static_cast<int>(std::ceil(std::log10(mag / std::fabs(step)))) + 1, 1, 6);
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  } else {
    const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(std::fabs(step)) + 1e-9)), 0, 9);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}

std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace numpipe::render
