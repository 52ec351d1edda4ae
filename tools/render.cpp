// render: a PNG of a 2-D array of a numpipe stream (or a 2-D slice of a 3-D one),
// or of the speed |(u, v)| of two arrays, through a perceptual colour map; every
// record of a name as numbered frames. libpng does the encoding.
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "common/cli.hpp"

namespace numpipe {
namespace {

struct Rgb {
  unsigned char r, g, b;
};

// Colour maps as anchor colours at equal steps, interpolated linearly: viridis
// and inferno (matplotlib's perceptually uniform maps, van der Walt and Smith,
// 2015; ten evenly spaced samples each) and gray.
const Rgb kViridis[] = {{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x4a, 0x89}, {0x31, 0x68, 0x8e},
                        {0x26, 0x82, 0x8e}, {0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6d, 0xcd, 0x59},
                        {0xb4, 0xde, 0x2c}, {0xfd, 0xe7, 0x25}};
const Rgb kInferno[] = {{0x00, 0x00, 0x04}, {0x1b, 0x0c, 0x41}, {0x4a, 0x0c, 0x6b}, {0x78, 0x1c, 0x6d},
                        {0xa5, 0x2c, 0x60}, {0xcf, 0x44, 0x46}, {0xed, 0x69, 0x25}, {0xfb, 0x9b, 0x06},
                        {0xf7, 0xd1, 0x3d}, {0xfc, 0xff, 0xa4}};
const Rgb kGray[] = {{0, 0, 0}, {255, 255, 255}};
const Rgb kNaN = {255, 0, 255};

struct Colormap {
  const Rgb* anchors;
  int count;
  Rgb at(double t) const {  // t in [0, 1]
    if (std::isnan(t)) return kNaN;
    t = std::clamp(t, 0.0, 1.0) * (count - 1);
    const int i = std::min(static_cast<int>(t), count - 2);
    const double f = t - i;
    auto mix = [&](unsigned char a, unsigned char b) {
      return static_cast<unsigned char>(std::lround(a + (b - a) * f));
    };
    return {mix(anchors[i].r, anchors[i + 1].r), mix(anchors[i].g, anchors[i + 1].g), mix(anchors[i].b, anchors[i + 1].b)};
  }
};

// A 2-D image of doubles, row 0 first.
struct Image {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> v;
};

struct Slice {
  int axis = -1;
  std::int64_t index = -1;  // -1: the middle
};

Image image_of(const Record& r, const Slice& slice) {
  Image im;
  if (r.size() == 0) fail_input("record '" + r.name + "' is empty: shape " + shape_string(r.shape));
  if (r.shape.size() == 2) {
    if (slice.axis >= 0) fail_input("--slice applies to 3-D arrays; '" + r.name + "' has shape " + shape_string(r.shape));
    im.rows = r.shape[0];
    im.cols = r.shape[1];
    im.v.resize(r.size());
    for (std::size_t i = 0; i < im.v.size(); ++i) im.v[i] = r.value_as_double(i);
    return im;
  }
  if (r.shape.size() != 3)
    fail_input("render draws 2-D arrays or slices of 3-D ones; '" + r.name + "' has shape " + shape_string(r.shape));
  const int axis = slice.axis < 0 ? 0 : slice.axis;
  const std::int64_t extent = r.shape[static_cast<std::size_t>(axis)];
  const std::int64_t index = slice.index < 0 ? extent / 2 : slice.index;
  if (index >= extent)
    fail_input("--slice " + std::to_string(axis) + ":" + std::to_string(index) + " is outside '" + r.name + "' of shape " +
               shape_string(r.shape));
  const std::int64_t n0 = r.shape[0], n1 = r.shape[1], n2 = r.shape[2];
  im.rows = axis == 0 ? n1 : n0;
  im.cols = axis == 2 ? n1 : n2;
  im.v.resize(static_cast<std::size_t>(im.rows * im.cols));
  for (std::int64_t a = 0; a < im.rows; ++a)
    for (std::int64_t b = 0; b < im.cols; ++b) {
      std::int64_t i0 = 0, i1 = 0, i2 = 0;
      if (axis == 0) i0 = index, i1 = a, i2 = b;
      else if (axis == 1) i0 = a, i1 = index, i2 = b;
      else i0 = a, i1 = b, i2 = index;
      im.v[static_cast<std::size_t>(a * im.cols + b)] = r.value_as_double(static_cast<std::size_t>((i0 * n1 + i1) * n2 + i2));
    }
  return im;
}

void png_write_to(png_structp png, png_bytep data, png_size_t length) {
  static_cast<OutputFile*>(png_get_io_ptr(png))->write(data, length);
}
void png_flush_noop(png_structp) {}
[[noreturn]] void png_fail(png_structp, png_const_charp msg) { throw Error(ExitCode::internal, std::string("libpng: ") + msg); }
void png_warn(png_structp, png_const_charp) {}

void write_png(OutputFile& out, const Image& im, const Colormap& cm, double lo, double hi, bool origin_lower,
               int scale) {
  const std::int64_t W = im.cols * scale, H = im.rows * scale;
  if (W > 1000000 || H > 1000000) fail_input("image too large: " + std::to_string(W) + " x " + std::to_string(H) + " pixels");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, png_fail, png_warn);
  if (!png) fail_resource("libpng: cannot create a write struct");
  png_infop info = png_create_info_struct(png);
  struct Guard {
    png_structp* p;
    png_infop* i;
    ~Guard() { png_destroy_write_struct(p, i); }
  } guard{&png, &info};
  png_set_write_fn(png, &out, png_write_to, png_flush_noop);
  png_set_IHDR(png, info, static_cast<png_uint_32>(W), static_cast<png_uint_32>(H), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  std::vector<unsigned char> row(static_cast<std::size_t>(W) * 3);
  const double span = hi > lo ? hi - lo : 1.0;
  for (std::int64_t y = 0; y < H; ++y) {
    const std::int64_t src_row = origin_lower ? im.rows - 1 - y / scale : y / scale;
    for (std::int64_t x = 0; x < W; ++x) {
      const double v = im.v[static_cast<std::size_t>(src_row * im.cols + x / scale)];
      const Rgb c = cm.at(std::isnan(v) ? v : (v - lo) / span);
      row[static_cast<std::size_t>(3 * x)] = c.r;
      row[static_cast<std::size_t>(3 * x + 1)] = c.g;
      row[static_cast<std::size_t>(3 * x + 2)] = c.b;
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, info);
  out.commit();
}

std::string frame_name(const std::string& pattern, int k) {
  char buf[4096];
  std::snprintf(buf, sizeof buf, pattern.c_str(), k);
  return buf;
}

int run(int argc, char** argv) {
  Cli cli({"render", "Draw a 2-D array of a stream (or a slice of a 3-D one) as a PNG", "",
           "  gen-input fluid --n 512 | fluid-step --steps 50 | render --array d -o density.png\n"
           "  gen-input fluid --n 256 --scene vortex -o s.nps\n"
           "  fluid-step --steps 100 --snapshot-every 10 -i s.nps | render --speed snap_u,snap_v --frames -o f-%03d.png",
           "the PNG image (with --frames, a pattern such as f-%03d.png for the numbered images)",
           "Accepted for symmetry with the other tools (render shows no progress line)"},
          kInput | kOutput);
  cli.add("Render")("array", "Record name to draw (the last record of that name)", cxxopts::value<std::string>()->default_value("d"), "NAME")(
      "speed", "Draw |(U, V)| of two records of the same shape instead", cxxopts::value<std::string>(), "U,V")(
      "slice", "For 3-D arrays: AXIS:INDEX (default 0:middle)", cxxopts::value<std::string>(), "A:I")(
      "cmap", "viridis, inferno or gray", cxxopts::value<std::string>()->default_value("viridis"), "MAP")(
      "limits", "Values mapped to the ends of the colour map (default: min:max over the image(s))",
      cxxopts::value<std::string>(), "LO:HI")(
      "frames", "Draw every record of the name, numbered from 0; -o is a printf pattern such as f-%03d.png")(
      "interior", "Leave out the outermost cell layer (the boundary layer of fluid-step's arrays)")(
      "origin", "lower (first index upward, as a y axis) or upper (row 0 at the top)",
      cxxopts::value<std::string>()->default_value("lower"), "O")(
      "scale", "Integer magnification (nearest neighbour), 1..64", cxxopts::value<int>()->default_value("1"), "K");
  cli.add("Removed")("range", "", cxxopts::value<std::string>(), "LO:HI");
  cli.parse(argc, argv);
  // One meaning per option name across the tools: --range is element indices (verify).
  if (cli.has("range"))
    fail_input("--range is now --limits LO:HI (the values at the ends of the colour map): --range " +
               cli.get<std::string>("range") + " -> --limits " + cli.get<std::string>("range"));

  const std::string cmap_name = cli.get<std::string>("cmap");
  Colormap cm{kViridis, 10};
  if (cmap_name == "inferno") cm = {kInferno, 10};
  else if (cmap_name == "gray") cm = {kGray, 2};
  else if (cmap_name != "viridis") fail_input("--cmap must be viridis, inferno or gray, got '" + cmap_name + "'");
  const std::string origin = cli.get<std::string>("origin");
  if (origin != "lower" && origin != "upper") fail_input("--origin must be lower or upper, got '" + origin + "'");
  const int scale = cli.get<int>("scale");
  if (scale < 1 || scale > 64) fail_input("--scale must be in [1, 64], got " + std::to_string(scale));
  const bool frames = cli.has("frames");
  const std::string out_path = cli.output();
  if (out_path == "-" && frames) fail_input("--frames needs -o PATTERN (e.g. -o frame-%03d.png)");
  if (frames) {
    const auto pct = out_path.find('%');
    if (pct == std::string::npos || out_path.find('%', pct + 1) != std::string::npos ||
        out_path.find_first_of("diu", pct) == std::string::npos)
      fail_input("--frames needs one integer conversion in -o, such as frame-%03d.png; got '" + out_path + "'");
  }
  bool fixed_range = false;
  double lo = 0, hi = 1;
  if (cli.has("limits")) {
    const std::string r = cli.get<std::string>("limits");
    const auto colon = r.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument(r);
      std::size_t u1 = 0, u2 = 0;
      lo = std::stod(r.substr(0, colon), &u1);
      hi = std::stod(r.substr(colon + 1), &u2);
      if (u1 != colon || u2 != r.size() - colon - 1) throw std::invalid_argument(r);
    } catch (const std::exception&) {
      fail_input("--limits must be LO:HI, got '" + r + "'");
    }
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) fail_input("--limits needs finite LO < HI, got '" + r + "'");
    fixed_range = true;
  }
  Slice slice;
  if (cli.has("slice")) {
    const std::string s = cli.get<std::string>("slice");
    const auto colon = s.find(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument(s);
      std::size_t u1 = 0, u2 = 0;
      slice.axis = std::stoi(s.substr(0, colon), &u1);
      slice.index = std::stoll(s.substr(colon + 1), &u2);
      if (u1 != colon || u2 != s.size() - colon - 1 || slice.axis < 0 || slice.axis > 2 || slice.index < 0)
        throw std::invalid_argument(s);
    } catch (const std::exception&) {
      fail_input("--slice must be AXIS:INDEX with AXIS 0, 1 or 2 and INDEX >= 0, got '" + s + "'");
    }
  }
  std::string name_u = cli.get<std::string>("array"), name_v;
  const bool speed = cli.has("speed");
  if (speed) {
    const std::string s = cli.get<std::string>("speed");
    const auto comma = s.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == s.size()) fail_input("--speed must be U,V, got '" + s + "'");
    name_u = s.substr(0, comma);
    name_v = s.substr(comma + 1);
  }
  std::optional<OutputFile> single;  // refuses a terminal before the reading
  if (!frames) single.emplace(out_path);

  const auto records = read_input(cli);
  std::vector<const Record*> us, vs;
  std::string names;
  for (const auto& r : records) {
    if (r.name == name_u) us.push_back(&r);
    if (speed && r.name == name_v) vs.push_back(&r);
    if (names.find(" " + r.name + ",") == std::string::npos) names += " " + r.name + ",";
  }
  if (!names.empty()) names.pop_back();
  if (us.empty()) fail_input("no record named '" + name_u + "' (records:" + names + ")");
  if (speed && vs.empty()) fail_input("no record named '" + name_v + "' (records:" + names + ")");
  if (speed && us.size() != vs.size())
    fail_input("--speed: " + std::to_string(us.size()) + " records '" + name_u + "' but " + std::to_string(vs.size()) + " '" + name_v + "'");
  if (!frames) {  // the last record of the name
    us.erase(us.begin(), us.end() - 1);
    if (speed) vs.erase(vs.begin(), vs.end() - 1);
  }

  std::vector<Image> images;
  for (std::size_t k = 0; k < us.size(); ++k) {
    Image im = image_of(*us[k], slice);
    if (speed) {
      if (vs[k]->shape != us[k]->shape)
        fail_input("--speed: '" + name_u + "' has shape " + shape_string(us[k]->shape) + " but '" + name_v + "' " +
                   shape_string(vs[k]->shape));
      const Image iv = image_of(*vs[k], slice);
      for (std::size_t i = 0; i < im.v.size(); ++i) im.v[i] = std::sqrt(im.v[i] * im.v[i] + iv.v[i] * iv.v[i]);
    }
    if (cli.has("interior")) {
      if (im.rows < 3 || im.cols < 3) fail_input("--interior: the image is only " + std::to_string(im.rows) + " x " + std::to_string(im.cols));
      Image c;
      c.rows = im.rows - 2;
      c.cols = im.cols - 2;
      c.v.resize(static_cast<std::size_t>(c.rows * c.cols));
      for (std::int64_t y = 0; y < c.rows; ++y)
        for (std::int64_t x = 0; x < c.cols; ++x)
          c.v[static_cast<std::size_t>(y * c.cols + x)] = im.v[static_cast<std::size_t>((y + 1) * im.cols + x + 1)];
      im = std::move(c);
    }
    images.push_back(std::move(im));
  }
  if (!fixed_range) {  // min:max over every image's finite values
    bool any = false;
    for (const auto& im : images)
      for (double v : im.v)
        if (std::isfinite(v)) {
          lo = any ? std::min(lo, v) : v;
          hi = any ? std::max(hi, v) : v;
          any = true;
        }
    if (!any) lo = 0, hi = 1;
  }
  for (std::size_t k = 0; k < images.size(); ++k) {
    if (!frames) {
      write_png(*single, images[k], cm, lo, hi, origin == "lower", scale);
      break;
    }
    OutputFile out(frame_name(out_path, static_cast<int>(k)));
    write_png(out, images[k], cm, lo, hi, origin == "lower", scale);
  }
  return 0;
}

}  // namespace
}  // namespace numpipe

int main(int argc, char** argv) {
  return numpipe::run_tool("render", [&] { return numpipe::run(argc, argv); });
}
