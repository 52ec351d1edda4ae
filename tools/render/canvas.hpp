// render's drawing surface: an image of palette indices (so PNG and GIF get
// the same pixels and a GIF needs no quantising), a palette with the colour
// map's levels and a few fixed colours, lines, rectangles and text
// (render/text.hpp: an outline font where the build has one), and "nice" axis ticks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace numpipe::render {

struct Rgb {
  std::uint8_t r, g, b;
};

// Palette indices.
enum : std::uint8_t {
  kWhite = 0,
  kBlack = 1,
  kDark = 2,    // axis text
  kMid = 3,     // frames, ticks
  kLight = 4,   // grid lines
  kNaN = 5,     // magenta: not a number
  kSeries0 = 6, // 10 categorical colours for line plots
  kMap0 = 16,   // the colour map's levels: kMap0 .. 255
};
inline constexpr int kSeriesColors = 10;
inline constexpr int kMapLevels = 256 - kMap0;

// A colour map as anchor colours at equal steps, interpolated linearly.
struct Colormap {
  const Rgb* anchors;
  int count;
  Rgb at(double t) const;  // t in [0, 1]
};
// viridis, inferno (matplotlib's perceptually uniform maps, van der Walt and
// Smith 2015, ten samples each), gray, or coolwarm-like "diverging" (blue,
// white, red; for signed fields such as vorticity). Bad input otherwise.
Colormap colormap_named(const std::string& name);

struct Palette {
  Rgb colors[256];
  explicit Palette(const Colormap& map);
  // The palette index of a value: kNaN for NaN, else kMap0 + the level of (v - lo) / (hi - lo).
  static std::uint8_t level(double v, double lo, double hi);
  static Rgb series_color(int i);  // the categorical colours
};

class Canvas {
 public:
  Canvas(int width, int height, std::uint8_t background = kWhite);
  int width() const { return width_; }
  int height() const { return height_; }
  std::uint8_t at(int x, int y) const { return pixels_[static_cast<std::size_t>(y) * width_ + x]; }
  const std::uint8_t* row(int y) const { return pixels_.data() + static_cast<std::size_t>(y) * width_; }
  std::uint8_t* row(int y) { return pixels_.data() + static_cast<std::size_t>(y) * width_; }

  void set(int x, int y, std::uint8_t c) {
    if (x >= 0 && y >= 0 && x < width_ && y < height_) pixels_[static_cast<std::size_t>(y) * width_ + x] = c;
  }
  void fill(int x, int y, int w, int h, std::uint8_t c);
  void frame(int x, int y, int w, int h, std::uint8_t c);  // a 1-pixel outline
  void line(double x0, double y0, double x1, double y1, std::uint8_t c, int thickness = 1);
  // Text with its top-left corner at (x, y) (align: 0 left, 1 centred on x, 2
  // right-aligned to x); vertical text reads bottom to top, (x, y) its bottom-left.
  void text(int x, int y, const std::string& s, std::uint8_t c, int scale, int align = 0, bool vertical = false);
  static int text_width(const std::string& s, int scale);
  static int text_height(int scale);

 private:
  int width_, height_;
  std::vector<std::uint8_t> pixels_;
};

// About `target` round values (1, 2 or 5 times a power of ten) within [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// Tick text with as many decimals as the ticks' step needs ("0.25", "1e+06").
std::string tick_text(double v, double step);
// A value for titles and colour-bar ends: 4 significant digits.
std::string short_number(double v);

}  // namespace numpipe::render
