// render's documents through Cairo: PDF of line plots (vectors and text) and
// PDF or SVG of field pictures (the palette canvas as an image, at its pixel
// size). Built where CMake found Cairo and the font (NUMPIPE_HAVE_CAIRO).
#pragma once
#include <string>

#include "common/stream.hpp"
#include "render/canvas.hpp"
#include "render/plot.hpp"

namespace numpipe::render {

bool documents_built();
// Bad input (exit 2) naming the packages when this build has no Cairo.
void require_documents(const std::string& output);

enum class DocumentFormat { pdf, svg };

// A picture drawn on the canvas, as a document of the canvas's size in pixels (1 px = 1 pt).
void write_canvas_document(OutputFile& out, const Canvas& canvas, const Palette& palette, DocumentFormat format);
// A line plot drawn with vectors and text in a PDF of width x height points.
void write_plot_pdf(OutputFile& out, const Plot& plot, const Palette& palette, double width, double height);

}  // namespace numpipe::render
