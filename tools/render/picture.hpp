// render's picture of a field: the field's pixels on a palette canvas with its
// title, a colour bar and, optionally, axes in grid coordinates (render.cpp).
#pragma once
#include <string>

#include "render/canvas.hpp"
#include "render/field.hpp"

namespace numpipe::render {

struct Style {
  double lo = 0, hi = 1;
  int width = 0, height = 0;  // the field's drawing area
  bool colorbar = true, axes = false, origin_lower = true;
  std::string title;           // "" : the field's name, units, step and time
  bool bare = false;           // the field's pixels only
  int min_width = 0;           // the canvas's least width (the widest title of an animation)
};

// The title drawn above a field: `fixed`, or the field's name, units, step and time.
std::string title_of(const Field& f, const std::string& fixed);

// The field drawn in the style.
Canvas compose(const Field& f, const Style& st);

}  // namespace numpipe::render
