// libFuzzer target for the PNG obstacle-mask reader (kernels/fluid/mask_png.cpp,
// gen-input fluid --obstacle png:FILE).
//
// Byte 0 picks the grid: nx = 1 + 4 * (b & 15), ny = 1 + 4 * (b >> 4).
// Byte 1, bit 0 set: every chunk's CRC is recomputed before reading, so that
// mutations reach the chunk contents instead of stopping at the CRC check.
// The rest is the PNG file, read from memory (fmemopen).
//
// The reader may refuse an input only with numpipe::Error; any other exception, a
// crash, a sanitizer report, a timeout or running out of memory (libFuzzer's
// -rss_limit_mb) is a finding: a crafted header must cost neither memory nor time.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "common/error.hpp"
#include "kernels/fluid/mask_png.hpp"

namespace {
std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | std::uint32_t(p[3]);
}

void fix_crcs(std::vector<unsigned char>& png) {
  for (std::size_t at = 8; at + 12 <= png.size();) {
    const std::size_t length = be32(&png[at]);
    if (length > png.size() - at - 12) return;
    const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, &png[at + 4], static_cast<uInt>(length + 4)));
    unsigned char* out = &png[at + 8 + length];
    out[0] = static_cast<unsigned char>(crc >> 24), out[1] = static_cast<unsigned char>(crc >> 16);
    out[2] = static_cast<unsigned char>(crc >> 8), out[3] = static_cast<unsigned char>(crc);
    at += length + 12;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int nx = 1 + 4 * (data[0] & 15), ny = 1 + 4 * (data[0] >> 4);
  std::vector<unsigned char> png(data + 2, data + size);
  if (data[1] & 1) fix_crcs(png);
  std::FILE* file = fmemopen(png.empty() ? nullptr : png.data(), png.size(), "rb");
  if (!file) return 0;  // fmemopen refuses an empty buffer on some C libraries
  try {
    const std::vector<std::uint8_t> mask = numpipe::fluid::read_png_mask_from(file, "fuzz.png", nx, ny);
    if (mask.size() != static_cast<std::size_t>(nx + 2) * static_cast<std::size_t>(ny + 2)) std::abort();
    for (std::uint8_t v : mask)
      if (v > 1) std::abort();
  } catch (const numpipe::Error& e) {
    if (e.code() != numpipe::ExitCode::bad_input && e.code() != numpipe::ExitCode::resource) {
      std::fprintf(stderr, "numpipe::Error with unexpected code %d: %s\n", static_cast<int>(e.code()), e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  std::fclose(file);
  return 0;
}
