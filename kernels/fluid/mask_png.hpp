// The PNG obstacle mask reader (scene.hpp's read_png_mask) on an open file, so
// that it can also be fed from memory (fmemopen: the fuzz target).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace numpipe::fluid {

// Sides of the largest image accepted (each way); the message of a larger one names it.
constexpr std::uint32_t kPngMaskMaxSide = 65536;

// Reads the PNG in `file` (from its start) as read_png_mask does; `label` names it
// in messages ("--obstacle png:FILE: ..."). The image is decoded a row at a time:
// only the rows and columns the grid samples are looked at, and what is held is one
// row and the nx x ny mask, whatever the image's size. Does not close `file`.
std::vector<std::uint8_t> read_png_mask_from(std::FILE* file, const std::string& label, int nx, int ny);

}  // namespace numpipe::fluid
