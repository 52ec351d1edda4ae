// The PNG obstacle-mask reader (kernels/fluid/mask_png.cpp): images made here (zlib
// and the PNG layout, not libpng's writer) read back as the nearest-pixel masks the
// documentation states, interlaced or not, in every colour type used here.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "kernels/fluid/mask_png.hpp"

namespace {
using Bytes = std::vector<unsigned char>;
using Pixel = std::function<Bytes(std::uint32_t, std::uint32_t)>;  // one pixel's samples, 8 bits each

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
}
void chunk(Bytes& png, const char* kind, const Bytes& data) {
  put32(png, static_cast<std::uint32_t>(data.size()));
  Bytes body(kind, kind + 4);
  body.insert(body.end(), data.begin(), data.end());
  png.insert(png.end(), body.begin(), body.end());
  put32(png, static_cast<std::uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size()))));
}

// An 8-bit PNG of colour type `colour`, Adam7-interlaced or not.
Bytes make_png(std::uint32_t w, std::uint32_t h, int colour, bool interlaced, const Pixel& pixel, const Bytes& plte = {}) {
  struct Pass { std::uint32_t x0, y0, dx, dy; };
  const std::vector<Pass> passes = interlaced ? std::vector<Pass>{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                                                  {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
                                              : std::vector<Pass>{{0, 0, 1, 1}};
  Bytes raw;
  for (const Pass& p : passes) {
    if (p.x0 >= w || p.y0 >= h) continue;
    for (std::uint32_t y = p.y0; y < h; y += p.dy) {
      raw.push_back(0);  // filter: none
      for (std::uint32_t x = p.x0; x < w; x += p.dx) {
        const Bytes s = pixel(x, y);
        raw.insert(raw.end(), s.begin(), s.end());
      }
    }
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  Bytes z(size);
  REQUIRE(compress(z.data(), &size, raw.data(), static_cast<uLong>(raw.size())) == Z_OK);
  z.resize(size);
  Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, ihdr;
  put32(ihdr, w), put32(ihdr, h);
  for (int v : {8, colour, 0, 0, interlaced ? 1 : 0}) ihdr.push_back(static_cast<unsigned char>(v));
  chunk(png, "IHDR", ihdr);
  if (!plte.empty()) chunk(png, "PLTE", plte);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", {});
  return png;
}

std::vector<std::uint8_t> read(Bytes png, int nx, int ny) {
  std::FILE* f = fmemopen(png.data(), png.size(), "rb");
  REQUIRE(f);
  struct Close { std::FILE* f; ~Close() { std::fclose(f); } } close{f};
  return numpipe::fluid::read_png_mask_from(f, "test.png", nx, ny);
}

// The documented rule: cell (i, j) takes the pixel nearest its centre, image row 0 at the top.
std::vector<std::uint8_t> expected(std::uint32_t w, std::uint32_t h, int nx, int ny,
                                   const std::function<bool(std::uint32_t, std::uint32_t)>& solid) {
  std::vector<std::uint8_t> m(static_cast<std::size_t>(nx + 2) * static_cast<std::size_t>(ny + 2), 0);
  for (int j = 1; j <= ny; ++j)
    for (int i = 1; i <= nx; ++i) {
      const auto px = std::min<std::size_t>(w - 1, static_cast<std::size_t>((i - 0.5) * w / nx));
      const auto py = std::min<std::size_t>(h - 1, static_cast<std::size_t>((ny - j + 0.5) * h / ny));
      m[static_cast<std::size_t>(j) * static_cast<std::size_t>(nx + 2) + static_cast<std::size_t>(i)] =
          solid(static_cast<std::uint32_t>(px), static_cast<std::uint32_t>(py)) ? 1 : 0;
    }
  return m;
}
}  // namespace

TEST_CASE("a grey mask is the nearest pixel of each cell, interlaced or not, larger or smaller than the grid") {
  auto dark = [](std::uint32_t x, std::uint32_t y) { return (x * 7 + y * 3) % 5 < 2; };
  auto grey = [&](std::uint32_t x, std::uint32_t y) { return Bytes{static_cast<unsigned char>(dark(x, y) ? 40 : 200)}; };
  for (const std::array<int, 4>& c : {std::array<int, 4>{37, 23, 16, 16}, {5, 3, 16, 20}, {64, 64, 64, 64}, {9, 100, 17, 31}}) {
    const int w = c[0], h = c[1], nx = c[2], ny = c[3];
    CAPTURE(w);
    CAPTURE(h);
    CAPTURE(nx);
    CAPTURE(ny);
    const auto want = expected(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h), nx, ny, dark);
    CHECK(read(make_png(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h), 0, false, grey), nx, ny) == want);
    CHECK(read(make_png(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h), 0, true, grey), nx, ny) == want);
  }
}

TEST_CASE("colour, alpha and palette pixels: solid where dark (luminance below half grey) and opaque") {
  // columns: red (dark: luminance 0.21), green (light: 0.72), blue (dark), grey 100 transparent (fluid)
  const std::vector<Bytes> rgba = {{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {100, 100, 100, 0}};
  auto column = [](std::uint32_t x, std::uint32_t) { return x == 0 || x == 2; };
  const auto want = expected(4, 2, 16, 16, column);
  CHECK(read(make_png(4, 2, 6, false, [&](std::uint32_t x, std::uint32_t) { return rgba[x]; }), 16, 16) == want);
  CHECK(read(make_png(4, 2, 6, true, [&](std::uint32_t x, std::uint32_t) { return rgba[x]; }), 16, 16) == want);
  auto rgb = [&](std::uint32_t x, std::uint32_t) { return x == 3 ? Bytes{230, 230, 230} : Bytes(rgba[x].begin(), rgba[x].begin() + 3); };
  CHECK(read(make_png(4, 2, 2, false, rgb), 16, 16) == want);
  auto ga = [&](std::uint32_t x, std::uint32_t) { return Bytes{static_cast<unsigned char>(x % 2 ? 250 : 10), 255}; };
  CHECK(read(make_png(4, 2, 4, true, ga), 16, 16) == want);
  const Bytes plte = {0, 0, 0, 255, 255, 255};
  auto index = [](std::uint32_t x, std::uint32_t) { return Bytes{static_cast<unsigned char>(x % 2)}; };
  CHECK(read(make_png(4, 2, 3, false, index, plte), 16, 16) == want);
}

TEST_CASE("crafted headers are refused with the limit named, before any pixel is decoded") {
  Bytes huge = make_png(2, 2, 0, false, [](std::uint32_t, std::uint32_t) { return Bytes{0}; });
  huge[16] = 0, huge[17] = 1, huge[18] = 0, huge[19] = 1;  // width 65537
  CHECK_THROWS_WITH(read(huge, 16, 16), doctest::Contains("the image is 65537 x 2 pixels (1 to 65536 each way)"));
  Bytes cut = make_png(8, 8, 0, false, [](std::uint32_t, std::uint32_t) { return Bytes{0}; });
  cut.resize(cut.size() - 20);
  CHECK_THROWS_AS(read(cut, 16, 16), numpipe::Error);
}
