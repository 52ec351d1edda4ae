// render's outputs: PNG (libpng, palette images), animated GIF (giflib,
// optional at build time) and MP4 (H.264 by the ffmpeg program on PATH, fed raw
// frames through a pipe). Each writes atomically: nothing is left on failure.
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include "common/stream.hpp"
#include "render/canvas.hpp"

namespace numpipe::render {

void write_png(OutputFile& out, const Canvas& canvas, const Palette& palette);

bool gif_built();
// Bad input (exit 2) naming the package when this build has no GIF support.
void require_gif();
class GifWriter {
 public:
  // Frames of width x height at `fps` frames per second, looping forever.
  GifWriter(OutputFile& out, int width, int height, const Palette& palette, double fps);
  ~GifWriter();
  void add(const Canvas& frame);
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Bad input (exit 2) naming the package when ffmpeg is not on PATH.
void require_ffmpeg();
class Mp4Writer {
 public:
  Mp4Writer(const std::string& path, int width, int height, const Palette& palette, double fps);
  ~Mp4Writer();
  void add(const Canvas& frame);
  void finish();  // waits for ffmpeg, renames the result into place

 private:
  std::string path_, temp_;
  int width_, height_;
  const Palette& palette_;
  std::FILE* pipe_ = nullptr;
  bool done_ = false;
};

}  // namespace numpipe::render
