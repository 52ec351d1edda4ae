// render's line plots: 1-D data and time series (diagnostics columns, body
// forces, reserves by year, a parameter over rolling windows), several series
// in one plot, axes with ticks and labels, a legend; drawn once through a
// Painter into a PNG canvas or an SVG document.
#pragma once
#include <string>
#include <vector>

#include "export/dataset.hpp"
#include "render/canvas.hpp"

namespace numpipe::render {

struct Series {
  std::string name;
  std::vector<double> x, y;  // NaN in y breaks the line
};

struct Plot {
  std::vector<Series> series;
  std::vector<std::string> categories;  // non-empty: x holds positions in this list (dates), shown as tick labels
  std::string title, x_label, y_label;
  bool log_y = false;
  std::vector<std::string> notes;       // what was left out
};

struct PlotRequest {
  std::vector<std::string> names;  // records, or columns of table records ("kinetic_energy", "diagnostics.t")
  std::string x;                   // a record or column for x (default: the axis's coordinate, labels or index)
  std::string title, x_label, y_label;
  bool log_y = false;
  std::size_t max_lines = 24;      // lines of a 2-D record (one per row)
};

Plot make_plot(const exporter::Dataset& ds, const PlotRequest& request);

// Where text and lines go; implemented for the PNG canvas and for SVG.
class Painter {
 public:
  virtual ~Painter() = default;
  virtual void line(double x0, double y0, double x1, double y1, int color, double width) = 0;
  virtual void polyline(const std::vector<double>& xs, const std::vector<double>& ys, int color, double width) = 0;
  virtual void rect(double x, double y, double w, double h, int fill, int stroke) = 0;  // -1: none
  // align 0 left, 1 centre, 2 right; y is the text's top; vertical text reads upward from (x, y).
  virtual void text(double x, double y, const std::string& s, int color, int align, bool vertical = false) = 0;
  virtual double text_width(const std::string& s) const = 0;
  virtual double text_height() const = 0;
};

// Colour of series i of n: the categorical colours up to 10 series, else
// evenly spaced levels of the colour map.
int series_color(std::size_t i, std::size_t n);

void draw_plot(const Plot& plot, Painter& painter, double width, double height);

class CanvasPainter : public Painter {
 public:
  CanvasPainter(Canvas& canvas, int scale) : c_(canvas), s_(scale) {}
  void line(double x0, double y0, double x1, double y1, int color, double width) override;
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, int color, double width) override;
  void rect(double x, double y, double w, double h, int fill, int stroke) override;
  void text(double x, double y, const std::string& s, int color, int align, bool vertical) override;
  double text_width(const std::string& s) const override { return Canvas::text_width(s, s_); }
  double text_height() const override { return Canvas::text_height(s_); }

 private:
  Canvas& c_;
  int s_;
};

class SvgPainter : public Painter {
 public:
  SvgPainter(const Palette& palette, double width, double height);
  void line(double x0, double y0, double x1, double y1, int color, double width) override;
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, int color, double width) override;
  void rect(double x, double y, double w, double h, int fill, int stroke) override;
  void text(double x, double y, const std::string& s, int color, int align, bool vertical) override;
  double text_width(const std::string& s) const override;
  double text_height() const override { return 12; }
  std::string finish();

 private:
  std::string color(int index) const;
  const Palette& palette_;
  std::string body_;
  double width_, height_;
};

}  // namespace numpipe::render
