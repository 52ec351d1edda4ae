// An obstacle mask from a PNG image (gen-input fluid --obstacle png:FILE), read
// by libpng's simplified API as 8-bit grey + alpha.
#include <cstring>

#include "scene.hpp"

#ifdef NUMPIPE_FLUID_PNG
#include <png.h>
#endif

namespace numpipe::fluid {

std::vector<std::uint8_t> read_png_mask(const std::string& path, int nx, int ny) {
#ifdef NUMPIPE_FLUID_PNG
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    fail_input("--obstacle png:" + path + ": cannot read the image: " + image.message);
  image.format = PNG_FORMAT_GA;
  if (image.width == 0 || image.height == 0 || image.width > 65536 || image.height > 65536) {
    png_image_free(&image);
    fail_input("--obstacle png:" + path + ": the image is " + std::to_string(image.width) + " x " +
               std::to_string(image.height) + " pixels (1 to 65536 each way)");
  }
  std::vector<png_byte> pixels(static_cast<std::size_t>(PNG_IMAGE_SIZE(image)));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr))
    fail_input("--obstacle png:" + path + ": cannot decode the image: " + image.message);
  const std::size_t width = image.width, height = image.height;
  std::vector<std::uint8_t> solid(static_cast<std::size_t>(nx + 2) * static_cast<std::size_t>(ny + 2), 0);
  for (int j = 1; j <= ny; ++j)
    for (int i = 1; i <= nx; ++i) {
      // nearest pixel to the cell's centre; image row 0 is the top of the box (y = ny)
      const std::size_t px = std::min(width - 1, static_cast<std::size_t>((i - 0.5) * width / nx));
      const std::size_t py = std::min(height - 1, static_cast<std::size_t>((ny - j + 0.5) * height / ny));
      const png_byte* p = &pixels[2 * (py * width + px)];
      const bool dark = p[0] < 128, opaque = p[1] >= 128;
      solid[static_cast<std::size_t>(ix(i, j, nx + 2))] = dark && opaque ? 1 : 0;
    }
  return solid;
#else
  (void)nx;
  (void)ny;
  fail_input("--obstacle png:" + path + ": this build reads no PNG images (install libpng-dev and rebuild)");
#endif
}

}  // namespace numpipe::fluid
