// An obstacle mask from a PNG image (gen-input fluid --obstacle png:FILE), read
// with libpng a row at a time: a mask needs only the pixels nearest the grid's
// cell centres, so an image far larger than the grid (or a decompression bomb
// declaring billions of pixels) costs one row of memory, never the whole image.
#include "mask_png.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

#include "common/memory.hpp"
#include "scene.hpp"

#ifdef NUMPIPE_FLUID_PNG
#include <png.h>
#endif

namespace numpipe::fluid {

namespace {
std::string where(const std::string& label) { return "--obstacle png:" + label; }
}  // namespace

#ifdef NUMPIPE_FLUID_PNG
namespace {

// Ancillary chunks a mask does not use: skipped unread (never allocated, never
// inflated), so that a text or profile chunk cannot cost memory or time.
constexpr png_byte kSkippedChunks[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0eXIf\0hIST\0pCAL\0sCAL\0sBIT\0tIME\0pHYs\0oFFs\0bKGD";
// The largest chunk libpng may allocate (its own default; the image data is
// streamed, never held as one chunk): a chunk declaring more is refused at its header.
constexpr png_alloc_size_t kChunkMallocMax = 8u << 20;

// The libpng structures of one read; libpng reports errors by longjmp to the
// point set in decode_rows, never by unwinding through its C frames.
struct PngRead {
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[256] = "";
  ~PngRead() {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
  }
};

extern "C" void on_png_error(png_structp png, png_const_charp message) {
  auto* read = static_cast<PngRead*>(png_get_error_ptr(png));
  std::snprintf(read->message, sizeof read->message, "%s", message);
  png_longjmp(png, 1);
}
extern "C" void on_png_warning(png_structp, png_const_charp) {}  // e.g. a bad CRC in a skipped chunk
extern "C" void on_png_read(png_structp png, png_bytep data, size_t length) {
  auto* file = static_cast<std::FILE*>(png_get_io_ptr(png));
  if (std::fread(data, 1, length, file) != length)
    png_error(png, std::ferror(file) ? "an input/output error" : "the file ends inside a chunk (cut short, or a chunk states more bytes than it holds)");
}

// Which pixels the grid samples: the nearest pixel to each cell's centre.
// column_of[i - 1]: image column of cell column i; rows: (image row, cell row j)
// sorted by image row (image row 0 is the top of the box, y = ny).
struct Sampling {
  std::vector<std::uint32_t> column_of;
  std::vector<std::pair<std::uint32_t, int>> rows;
  Sampling(std::size_t width, std::size_t height, int nx, int ny) : column_of(static_cast<std::size_t>(nx)) {
    for (int i = 1; i <= nx; ++i)
      column_of[static_cast<std::size_t>(i - 1)] =
          static_cast<std::uint32_t>(std::min(width - 1, static_cast<std::size_t>((i - 0.5) * width / nx)));
    rows.reserve(static_cast<std::size_t>(ny));
    for (int j = 1; j <= ny; ++j)
      rows.emplace_back(static_cast<std::uint32_t>(std::min(height - 1, static_cast<std::size_t>((ny - j + 0.5) * height / ny))), j);
    std::sort(rows.begin(), rows.end());
  }
};

// sRGB 8-bit value -> linear light (IEC 61966-2-1).
double srgb_to_linear(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }

// Solid: dark and opaque. Grey: value < 128. Colour: the luminance (Rec. 709
// weights, in linear light) is darker than sRGB grey 127.5, i.e. the pixel would
// be grey < 128 once converted to 8-bit sRGB grey.
struct Darkness {
  double linear[256];
  double threshold = srgb_to_linear(127.5 / 255);
  Darkness() {
    for (int v = 0; v < 256; ++v) linear[v] = srgb_to_linear(v / 255.0);
  }
  bool solid(const png_byte* p, int channels) const {
    const bool opaque = channels == 2 || channels == 4 ? p[channels - 1] >= 128 : true;
    if (channels <= 2) return opaque && p[0] < 128;
    return opaque && 0.2126 * linear[p[0]] + 0.7152 * linear[p[1]] + 0.0722 * linear[p[2]] < threshold;
  }
};

// Reads the image rows (every pass of an interlaced image) into `row` one at a
// time and sets the sampled cells of `solid`. Only plain data lives in this frame
// (libpng's errors longjmp here). False with read.message on an error.
bool decode_rows(PngRead& read, const Sampling& sampling, int nx, png_byte* row, std::uint8_t* solid) {
  static const Darkness darkness;
  png_structp png = read.png;
  png_infop info = read.info;
  if (setjmp(png_jmpbuf(png))) return false;
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int channels = png_get_channels(png, info);
  const bool interlaced = png_get_interlace_type(png, info) == PNG_INTERLACE_ADAM7;
  const std::size_t stride = static_cast<std::size_t>(nx) + 2;
  for (int pass = 0; pass < (interlaced ? 7 : 1); ++pass) {
    // Without libpng's interlace handling each pass comes as its own reduced rows.
    const png_uint_32 pass_rows = interlaced ? PNG_PASS_ROWS(height, pass) : height;
    const png_uint_32 pass_columns = interlaced ? PNG_PASS_COLS(width, pass) : width;
    if (pass_rows == 0 || pass_columns == 0) continue;  // libpng skips empty passes
    for (png_uint_32 y = 0; y < pass_rows; ++y) {
      png_read_row(png, row, nullptr);
      const png_uint_32 image_row = interlaced ? PNG_ROW_FROM_PASS_ROW(y, pass) : y;
      auto cells = std::equal_range(sampling.rows.begin(), sampling.rows.end(), std::make_pair(image_row, 0),
                                    [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto it = cells.first; it != cells.second; ++it)
        for (int i = 1; i <= nx; ++i) {
          const png_uint_32 column = sampling.column_of[static_cast<std::size_t>(i - 1)];
          if (interlaced && !PNG_COL_IN_INTERLACE_PASS(column, pass)) continue;
          const png_uint_32 x = interlaced ? (column - PNG_PASS_START_COL(pass)) >> PNG_PASS_COL_SHIFT(pass) : column;
          solid[static_cast<std::size_t>(it->second) * stride + static_cast<std::size_t>(i)] =
              darkness.solid(row + static_cast<std::size_t>(x) * static_cast<std::size_t>(channels), channels) ? 1 : 0;
        }
    }
  }
  // The rest (IEND, trailing chunks) is not needed: a mask is complete once every row is read.
  return true;
}

// Width and height from the IHDR chunk, read before libpng sees the file, so that
// an image beyond the sides accepted is refused naming them (libpng's own limit
// check says only "Invalid IHDR data").
void check_header(std::FILE* file, const std::string& label) {
  unsigned char head[24];
  const std::size_t got = std::fread(head, 1, sizeof head, file);
  if (got >= 8 && png_sig_cmp(head, 0, 8) != 0) fail_input(where(label) + ": not a PNG image (no PNG signature)");
  if (got < sizeof head || std::memcmp(head + 12, "IHDR", 4) != 0)
    fail_input(where(label) + ": cannot read the image: it ends or is damaged before its header (IHDR)");
  auto be32 = [](const unsigned char* p) {
    return std::uint64_t(p[0]) << 24 | std::uint64_t(p[1]) << 16 | std::uint64_t(p[2]) << 8 | std::uint64_t(p[3]);
  };
  const std::uint64_t width = be32(head + 16), height = be32(head + 20);
  if (width == 0 || height == 0 || width > kPngMaskMaxSide || height > kPngMaskMaxSide)
    fail_input(where(label) + ": the image is " + std::to_string(width) + " x " + std::to_string(height) +
               " pixels (1 to " + std::to_string(kPngMaskMaxSide) + " each way)");
  std::rewind(file);
}

}  // namespace

std::vector<std::uint8_t> read_png_mask_from(std::FILE* file, const std::string& label, int nx, int ny) {
  check_header(file, label);
  PngRead read;
  read.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &read, on_png_error, on_png_warning);
  if (read.png) read.info = png_create_info_struct(read.png);
  if (!read.png || !read.info) fail_resource(where(label) + ": cannot start libpng (out of memory)");
  // Bounds before any chunk is read: the sides accepted, and what one ancillary chunk may cost.
  png_set_user_limits(read.png, kPngMaskMaxSide, kPngMaskMaxSide);
  png_set_chunk_cache_max(read.png, 128);
  png_set_chunk_malloc_max(read.png, kChunkMallocMax);
  png_set_keep_unknown_chunks(read.png, PNG_HANDLE_CHUNK_NEVER, nullptr, 0);
  png_set_keep_unknown_chunks(read.png, PNG_HANDLE_CHUNK_NEVER, kSkippedChunks,
                              static_cast<int>(sizeof kSkippedChunks / 5));
  {
    png_structp png = read.png;
    png_infop info = read.info;
    if (setjmp(png_jmpbuf(png))) fail_input(where(label) + ": cannot read the image: " + read.message);
    png_set_read_fn(png, file, on_png_read);
    png_read_info(png, info);
    // 8 bits a channel: palette and low-depth grey expanded, tRNS made alpha, 16 bits cut to 8.
    png_set_expand(png);
    png_set_strip_16(png);
    png_read_update_info(png, info);
  }
  const std::size_t width = png_get_image_width(read.png, read.info), height = png_get_image_height(read.png, read.info);
  const std::size_t row_bytes = png_get_rowbytes(read.png, read.info);
  const double cells = (static_cast<double>(nx) + 2) * (static_cast<double>(ny) + 2);
  // What the read holds: the mask, the sampling tables, this row and libpng's two raw
  // rows (at most 8 bytes a pixel: 16-bit RGBA) -- not the decoded image.
  require_host_memory(MemoryEstimate{where(label) + " (" + std::to_string(width) + " x " + std::to_string(height) +
                                         " pixels, read a row at a time onto " + std::to_string(nx) + " x " +
                                         std::to_string(ny) + " cells)",
                                     cells, 1, "cell",
                                     static_cast<double>(row_bytes) + 2.0 * (8.0 * width + 1) + 4.0 * nx + 8.0 * ny});
  const Sampling sampling(width, height, nx, ny);
  std::vector<png_byte> row(row_bytes);
  std::vector<std::uint8_t> solid(static_cast<std::size_t>(nx + 2) * static_cast<std::size_t>(ny + 2), 0);
  if (!decode_rows(read, sampling, nx, row.data(), solid.data()))
    fail_input(where(label) + ": cannot decode the image: " + read.message);
  return solid;
}

std::vector<std::uint8_t> read_png_mask(const std::string& path, int nx, int ny) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) fail_input(where(path) + ": cannot read the image: " + std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{file};
  return read_png_mask_from(file, path, nx, ny);
}

#else
std::vector<std::uint8_t> read_png_mask_from(std::FILE*, const std::string& label, int, int) {
  fail_input(where(label) + ": this build reads no PNG images (install libpng-dev and rebuild)");
}
std::vector<std::uint8_t> read_png_mask(const std::string& path, int, int) {
  fail_input(where(path) + ": this build reads no PNG images (install libpng-dev and rebuild)");
}
#endif

}  // namespace numpipe::fluid
