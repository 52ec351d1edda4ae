#include "render/text.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "render/canvas.hpp"
#include "render/font.hpp"

#ifdef NUMPIPE_HAVE_CAIRO
#include <cairo-ft.h>
#include <cairo.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#endif

namespace numpipe::render {
namespace {

#ifdef NUMPIPE_HAVE_CAIRO
// The palette's greys: text is anti-aliased by picking, for each partly covered
// pixel, the grey nearest to the text colour mixed with the grey under it.
int grey_of(std::uint8_t index) {
  switch (index) {
    case kWhite: return 255;
    case kBlack: return 0;
    case kDark: return 0x33;
    case kMid: return 0x99;
    case kLight: return 0xe4;
    default: return -1;
  }
}

std::uint8_t nearest_grey(double v) {
  std::uint8_t best = kWhite;
  for (std::uint8_t i : {kWhite, kBlack, kDark, kMid, kLight})
    if (std::fabs(grey_of(i) - v) < std::fabs(grey_of(best) - v)) best = i;
  return best;
}

// Puts a pixel of text colour `color` covering `a` (0..1) of the pixel at (x, y).
void cover(Canvas& c, int x, int y, std::uint8_t color, double a) {
  if (a <= 0 || x < 0 || y < 0 || x >= c.width() || y >= c.height()) return;
  const int under = grey_of(c.at(x, y)), over = grey_of(color);
  if (under < 0 || over < 0) {  // text on a colour, or coloured text: covered or not
    if (a >= 0.5) c.set(x, y, color);
    return;
  }
  c.set(x, y, a >= 0.95 ? color : nearest_grey(under + (over - under) * a));
}

#endif

int code_points(const std::string& s) {
  int n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// ---- the 5x7 bitmap font (ASCII; other characters as '?') ------------------------
int bitmap_width(const std::string& s, int scale) {
  const int n = code_points(s);
  return n > 0 ? (n * (kGlyphWidth + 1) - 1) * scale : 0;
}

void bitmap_text(Canvas& c, int x, int y, int pos, const std::string& s, std::uint8_t color, int scale, bool vertical) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    if ((ch & 0xC0) == 0x80) continue;  // continuation byte: drawn with its lead byte
    if (ch < 32 || ch > 126) ch = '?';  // outside ASCII: one '?' per code point
    const std::uint8_t* glyph = kFont[ch - 32];
    for (int gy = 0; gy < kGlyphHeight; ++gy)
      for (int gx = 0; gx < kGlyphWidth; ++gx)
        if (glyph[gy] & (1 << (kGlyphWidth - 1 - gx)))
          for (int a = 0; a < scale; ++a)
            for (int b = 0; b < scale; ++b) {
              if (vertical) c.set(x + gy * scale + b, y - (pos + gx * scale + a), color);
              else c.set(x + pos + gx * scale + a, y + gy * scale + b, color);
            }
    pos += (kGlyphWidth + 1) * scale;
  }
}

#ifdef NUMPIPE_HAVE_CAIRO
// DejaVu Sans (the file CMake found) loaded once through FreeType; null when it
// cannot be loaded where render runs (the bitmap font then draws the text).
struct OutlineFont {
  cairo_font_face_t* face = nullptr;
  cairo_t* measure = nullptr;  // a context for text extents

  OutlineFont() {
    FT_Library library = nullptr;
    FT_Face ft = nullptr;
    if (FT_Init_FreeType(&library) != 0) return;
    if (FT_New_Face(library, NUMPIPE_RENDER_FONT, 0, &ft) != 0) return;
    face = cairo_ft_font_face_create_for_ft_face(ft, 0);
    static cairo_user_data_key_t key;  // the FreeType face lives as long as Cairo's
    cairo_font_face_set_user_data(face, &key, ft, [](void* f) { FT_Done_Face(static_cast<FT_Face>(f)); });
    cairo_surface_t* scratch = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
    measure = cairo_create(scratch);
    cairo_surface_destroy(scratch);
  }
  bool ok() const {
    return face && cairo_font_face_status(face) == CAIRO_STATUS_SUCCESS && measure &&
           cairo_status(measure) == CAIRO_STATUS_SUCCESS;
  }
  // Pixels per em: 12 for labels (scale 1), 18 for large pictures (scale 2).
  static double em(int scale) { return 6.0 * scale + 6.0; }
  void use(cairo_t* cr, int scale) const {
    cairo_set_font_face(cr, face);
    cairo_set_font_size(cr, em(scale));
    cairo_font_options_t* o = cairo_font_options_create();
    cairo_font_options_set_antialias(o, CAIRO_ANTIALIAS_GRAY);
    cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_SLIGHT);
    cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_ON);
    cairo_set_font_options(cr, o);
    cairo_font_options_destroy(o);
  }
  double ascent(int scale) const {
    use(measure, scale);
    cairo_font_extents_t fe;
    cairo_font_extents(measure, &fe);
    return fe.ascent;
  }
  int height(int scale) const {
    use(measure, scale);
    cairo_font_extents_t fe;
    cairo_font_extents(measure, &fe);
    return static_cast<int>(std::ceil(fe.ascent + fe.descent));
  }
  int width(const std::string& s, int scale) const {
    if (s.empty()) return 0;
    use(measure, scale);
    cairo_text_extents_t te;
    cairo_text_extents(measure, s.c_str(), &te);
    return static_cast<int>(std::ceil(te.x_advance));
  }
};

// Built once, kept for the run (Cairo caches the face).
const OutlineFont* outline() {
  static const OutlineFont* font = [] {
    auto* f = new OutlineFont();
    return f->ok() ? f : nullptr;
  }();
  return font;
}

void outline_text(const OutlineFont& font, Canvas& c, int x, int y, int pos, const std::string& s, std::uint8_t color,
                  int scale, bool vertical) {
  const int margin = 2, w = font.width(s, scale) + 2 * margin, h = font.height(scale) + margin;
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_A8, w, h);
  cairo_t* cr = cairo_create(surface);
  font.use(cr, scale);
  cairo_move_to(cr, margin, font.ascent(scale));
  cairo_show_text(cr, s.c_str());
  cairo_surface_flush(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  if (data && cairo_status(cr) == CAIRO_STATUS_SUCCESS)
    for (int gy = 0; gy < h; ++gy)
      for (int gx = 0; gx < w; ++gx) {
        const double a = data[gy * stride + gx] / 255.0;
        const int tx = pos + gx - margin;
        if (vertical) cover(c, x + gy, y - tx, color, a);
        else cover(c, x + tx, y + gy, color, a);
      }
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
}
#endif

}  // namespace

#ifdef NUMPIPE_HAVE_CAIRO
cairo_font_face_t* outline_face() { return outline() ? outline()->face : nullptr; }
#endif

std::string outline_font_path() {
#ifdef NUMPIPE_HAVE_CAIRO
  if (outline()) return NUMPIPE_RENDER_FONT;
#endif
  return "";
}

std::string font_description() {
  return outline_font_path().empty() ? "the built-in 5x7 bitmap font" : "DejaVu Sans (FreeType, Cairo)";
}

int text_width(const std::string& s, int scale) {
#ifdef NUMPIPE_HAVE_CAIRO
  if (const OutlineFont* f = outline()) return f->width(s, scale);
#endif
  return bitmap_width(s, scale);
}

int text_height(int scale) {
#ifdef NUMPIPE_HAVE_CAIRO
  if (const OutlineFont* f = outline()) return f->height(scale);
#endif
  return kGlyphHeight * scale;
}

void draw_text(Canvas& c, int x, int y, const std::string& s, std::uint8_t color, int scale, int align, bool vertical) {
  const int w = text_width(s, scale);
  const int pos = align == 1 ? -w / 2 : align == 2 ? -w : 0;
#ifdef NUMPIPE_HAVE_CAIRO
  if (const OutlineFont* f = outline()) return outline_text(*f, c, x, y, pos, s, color, scale, vertical);
#endif
  bitmap_text(c, x, y, pos, s, color, scale, vertical);
}

}  // namespace numpipe::render
