#include "render/vector.hpp"

#include <cmath>
#include <exception>

#include "common/error.hpp"
#include "render/text.hpp"

#ifdef NUMPIPE_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#endif

namespace numpipe::render {

bool documents_built() {
#ifdef NUMPIPE_HAVE_CAIRO
  return outline_face() != nullptr;
#else
  return false;
#endif
}

void require_documents(const std::string& output) {
  if (!documents_built())
    fail_input("-o " + output + ": this render was built without Cairo and the DejaVu font (Debian libcairo2-dev and "
               "fonts-dejavu-core; install them and rebuild), so it writes PNG, GIF, MP4 and SVG plots only");
}

#ifdef NUMPIPE_HAVE_CAIRO
namespace {

// Cairo's output callback: the bytes go to the output file; an error thrown by
// the file is kept and rethrown once Cairo has returned (never through C code).
struct Sink {
  OutputFile& out;
  std::exception_ptr error;
  static cairo_status_t write(void* closure, const unsigned char* data, unsigned int length) {
    auto* s = static_cast<Sink*>(closure);
    if (s->error) return CAIRO_STATUS_WRITE_ERROR;
    try {
      s->out.write(data, length);
    } catch (...) {
      s->error = std::current_exception();
      return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
  }
};

cairo_surface_t* document(Sink& sink, DocumentFormat format, double w, double h) {
  return format == DocumentFormat::pdf ? cairo_pdf_surface_create_for_stream(Sink::write, &sink, w, h)
                                       : cairo_svg_surface_create_for_stream(Sink::write, &sink, w, h);
}

// Finishes the document and commits the file, or fails with what went wrong.
void finish(cairo_t* cr, cairo_surface_t* surface, Sink& sink) {
  const cairo_status_t drawn = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  if (sink.error) std::rethrow_exception(sink.error);
  if (drawn != CAIRO_STATUS_SUCCESS || status != CAIRO_STATUS_SUCCESS)
    throw Error(ExitCode::internal, std::string("cairo: ") + cairo_status_to_string(drawn != CAIRO_STATUS_SUCCESS ? drawn : status));
  sink.out.commit();
}

void set_color(cairo_t* cr, const Palette& palette, int index) {
  const Rgb c = palette.colors[index & 0xff];
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

// The plot's painter on a Cairo context: 12 pt DejaVu Sans, lines in points.
class CairoPainter : public Painter {
 public:
  CairoPainter(cairo_t* cr, const Palette& palette) : cr_(cr), palette_(palette) {
    cairo_set_font_face(cr_, outline_face());
    cairo_set_font_size(cr_, 12);
    cairo_font_extents(cr_, &font_);
  }
  void line(double x0, double y0, double x1, double y1, int color, double width) override {
    set_color(cr_, palette_, color);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_stroke(cr_);
  }
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, int color, double width) override {
    if (xs.empty()) return;
    set_color(cr_, palette_, color);
    cairo_set_line_width(cr_, width);
    cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
    cairo_move_to(cr_, xs[0], ys[0]);
    for (std::size_t i = 1; i < xs.size(); ++i) cairo_line_to(cr_, xs[i], ys[i]);
    cairo_stroke(cr_);
  }
  void rect(double x, double y, double w, double h, int fill, int stroke) override {
    cairo_rectangle(cr_, x, y, w, h);
    if (fill >= 0) {
      set_color(cr_, palette_, fill);
      stroke >= 0 ? cairo_fill_preserve(cr_) : cairo_fill(cr_);
    }
    if (stroke >= 0) {
      set_color(cr_, palette_, stroke);
      cairo_set_line_width(cr_, 1);
      cairo_stroke(cr_);
    }
  }
  void text(double x, double y, const std::string& s, int color, int align, bool vertical) override {
    const double w = text_width(s), shift = align == 1 ? -w / 2 : align == 2 ? -w : 0;
    set_color(cr_, palette_, color);
    cairo_save(cr_);
    cairo_translate(cr_, x, y);
    if (vertical) cairo_rotate(cr_, -M_PI / 2);  // reads upward from (x, y)
    cairo_move_to(cr_, shift, font_.ascent);
    cairo_show_text(cr_, s.c_str());
    cairo_restore(cr_);
  }
  double text_width(const std::string& s) const override {
    cairo_text_extents_t te;
    cairo_text_extents(cr_, s.c_str(), &te);
    return te.x_advance;
  }
  double text_height() const override { return font_.ascent + font_.descent; }

 private:
  cairo_t* cr_;
  const Palette& palette_;
  cairo_font_extents_t font_{};
};

}  // namespace

void write_canvas_document(OutputFile& out, const Canvas& canvas, const Palette& palette, DocumentFormat format) {
  const int w = canvas.width(), h = canvas.height();
  cairo_surface_t* image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  if (cairo_surface_status(image) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(image);
    fail_resource("cairo: cannot make a " + std::to_string(w) + " x " + std::to_string(h) + " image");
  }
  cairo_surface_flush(image);
  unsigned char* data = cairo_image_surface_get_data(image);
  const int stride = cairo_image_surface_get_stride(image);
  for (int y = 0; y < h; ++y) {
    auto* row = reinterpret_cast<std::uint32_t*>(data + static_cast<std::size_t>(y) * stride);
    for (int x = 0; x < w; ++x) {
      const Rgb c = palette.colors[canvas.at(x, y)];
      row[x] = (std::uint32_t{c.r} << 16) | (std::uint32_t{c.g} << 8) | c.b;
    }
  }
  cairo_surface_mark_dirty(image);
  Sink sink{out, nullptr};
  cairo_surface_t* surface = document(sink, format, w, h);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_surface(cr, image, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);  // cells stay sharp when zoomed
  cairo_paint(cr);
  cairo_surface_destroy(image);
  finish(cr, surface, sink);
}

void write_plot_pdf(OutputFile& out, const Plot& plot, const Palette& palette, double width, double height) {
  Sink sink{out, nullptr};
  cairo_surface_t* surface = document(sink, DocumentFormat::pdf, width, height);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  CairoPainter painter(cr, palette);
  draw_plot(plot, painter, width, height);
  finish(cr, surface, sink);
}

#else

void write_canvas_document(OutputFile&, const Canvas&, const Palette&, DocumentFormat) { require_documents("a document"); }
void write_plot_pdf(OutputFile&, const Plot&, const Palette&, double, double) { require_documents("a PDF"); }

#endif

}  // namespace numpipe::render
