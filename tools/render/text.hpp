// render's text: DejaVu Sans rasterised by FreeType through Cairo, with grey
// anti-aliasing on the palette canvas, where the build found Cairo and the font
// (NUMPIPE_HAVE_CAIRO); else the built-in 5x7 bitmap font (ASCII only).
#pragma once
#include <cstdint>
#include <string>

#ifdef NUMPIPE_HAVE_CAIRO
#include <cairo.h>
#endif

namespace numpipe::render {

class Canvas;

// "DejaVu Sans (FreeType, Cairo)" or "the built-in 5x7 bitmap font": what draws text.
std::string font_description();
// The outline font's file, or "" when text is drawn with the bitmap font.
std::string outline_font_path();

// Text of size `scale` (1: small labels, 2: pictures of 360 pixels and more).
int text_width(const std::string& s, int scale);
int text_height(int scale);  // the line's height: ascender to descender
// Top-left at (x, y) (align 0 left, 1 centred on x, 2 right-aligned to x); vertical
// text reads bottom to top, (x, y) its bottom-left.
void draw_text(Canvas& canvas, int x, int y, const std::string& s, std::uint8_t color, int scale, int align, bool vertical);

#ifdef NUMPIPE_HAVE_CAIRO
// The outline font as a Cairo face (for PDF and SVG documents), or null.
cairo_font_face_t* outline_face();
#endif

}  // namespace numpipe::render
