#include "render/encode.hpp"

#include <png.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef NUMPIPE_HAVE_GIF
#include <gif_lib.h>
#endif

#include "common/signals.hpp"

namespace numpipe::render {
namespace {

void png_write_to(png_structp png, png_bytep data, png_size_t length) {
  static_cast<OutputFile*>(png_get_io_ptr(png))->write(data, length);
}
void png_flush_noop(png_structp) {}
[[noreturn]] void png_fail(png_structp, png_const_charp msg) { throw Error(ExitCode::internal, std::string("libpng: ") + msg); }
void png_warn(png_structp, png_const_charp) {}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool on_path(const char* program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path;
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (dir.empty()) dir = ".";
    if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

void write_png(OutputFile& out, const Canvas& canvas, const Palette& palette) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, png_fail, png_warn);
  if (!png) fail_resource("libpng: cannot create a write struct");
  png_infop info = png_create_info_struct(png);
  struct Guard {
    png_structp* p;
    png_infop* i;
    ~Guard() { png_destroy_write_struct(p, i); }
  } guard{&png, &info};
  png_set_write_fn(png, &out, png_write_to, png_flush_noop);
  png_set_IHDR(png, info, static_cast<png_uint_32>(canvas.width()), static_cast<png_uint_32>(canvas.height()), 8,
               PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_color colors[256];
  for (int i = 0; i < 256; ++i) colors[i] = {palette.colors[i].r, palette.colors[i].g, palette.colors[i].b};
  png_set_PLTE(png, info, colors, 256);
  png_set_compression_level(png, 9);  // pictures kept in a repository: small beats fast
  png_write_info(png, info);
  for (int y = 0; y < canvas.height(); ++y) png_write_row(png, const_cast<png_bytep>(canvas.row(y)));
  png_write_end(png, info);
  out.commit();
}

#ifdef NUMPIPE_HAVE_GIF
struct GifWriter::Impl {
  GifFileType* gif = nullptr;
  int width = 0, height = 0, delay = 10;
  static int write_fn(GifFileType* g, const GifByteType* data, int n) {
    static_cast<OutputFile*>(g->UserData)->write(data, static_cast<std::size_t>(n));
    return n;
  }
  void check(int status, const char* what) {
    if (status == GIF_ERROR) fail_internal(std::string("giflib: ") + what + ": " + GifErrorString(gif->Error));
  }
};

bool gif_built() { return true; }

GifWriter::GifWriter(OutputFile& out, int width, int height, const Palette& palette, double fps) : impl_(new Impl) {
  int error = 0;
  impl_->gif = EGifOpen(&out, Impl::write_fn, &error);
  if (!impl_->gif) fail_resource(std::string("giflib: cannot start a GIF: ") + GifErrorString(error));
  impl_->width = width;
  impl_->height = height;
  impl_->delay = std::max(2, static_cast<int>(std::lround(100.0 / fps)));  // centiseconds; browsers slow anything under 2
  GifColorType colors[256];
  for (int i = 0; i < 256; ++i) colors[i] = {palette.colors[i].r, palette.colors[i].g, palette.colors[i].b};
  ColorMapObject* map = GifMakeMapObject(256, colors);
  EGifSetGifVersion(impl_->gif, true);
  const int status = EGifPutScreenDesc(impl_->gif, width, height, 8, kWhite, map);
  GifFreeMapObject(map);
  impl_->check(status, "screen");
  // Loop forever (the NETSCAPE2.0 application extension).
  impl_->check(EGifPutExtensionLeader(impl_->gif, APPLICATION_EXT_FUNC_CODE), "loop");
  impl_->check(EGifPutExtensionBlock(impl_->gif, 11, "NETSCAPE2.0"), "loop");
  const unsigned char loop[3] = {1, 0, 0};
  impl_->check(EGifPutExtensionBlock(impl_->gif, 3, loop), "loop");
  impl_->check(EGifPutExtensionTrailer(impl_->gif), "loop");
}

GifWriter::~GifWriter() {
  if (impl_->gif) {
    int error = 0;
    EGifCloseFile(impl_->gif, &error);
  }
}

void GifWriter::add(const Canvas& frame) {
  GraphicsControlBlock gcb{};
  gcb.DisposalMode = DISPOSE_DO_NOT;
  gcb.UserInputFlag = false;
  gcb.DelayTime = impl_->delay;
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  GifByteType ext[4];
  EGifGCBToExtension(&gcb, ext);
  impl_->check(EGifPutExtension(impl_->gif, GRAPHICS_EXT_FUNC_CODE, 4, ext), "frame delay");
  impl_->check(EGifPutImageDesc(impl_->gif, 0, 0, impl_->width, impl_->height, false, nullptr), "frame");
  for (int y = 0; y < frame.height(); ++y)
    impl_->check(EGifPutLine(impl_->gif, const_cast<GifPixelType*>(frame.row(y)), frame.width()), "frame rows");
}

void GifWriter::finish() {
  int error = 0;
  GifFileType* g = impl_->gif;
  impl_->gif = nullptr;
  if (EGifCloseFile(g, &error) == GIF_ERROR) fail_internal(std::string("giflib: closing: ") + GifErrorString(error));
}
void require_gif() {}
#else
struct GifWriter::Impl {};
bool gif_built() { return false; }
void require_gif() {
  fail_input("-o *.gif: this render was built without GIF support; install giflib (Debian/Ubuntu: apt-get install "
             "libgif-dev) and rebuild, or write PNG frames with --frames -o frame-%03d.png");
}
GifWriter::GifWriter(OutputFile&, int, int, const Palette&, double) { require_gif(); }
GifWriter::~GifWriter() = default;
void GifWriter::add(const Canvas&) {}
void GifWriter::finish() {}
#endif

void require_ffmpeg() {
  if (!on_path("ffmpeg"))
    fail_input("-o *.mp4 needs the ffmpeg program on PATH (Debian/Ubuntu: apt-get install ffmpeg); "
               "-o NAME.gif needs nothing else");
}

Mp4Writer::Mp4Writer(const std::string& path, int width, int height, const Palette& palette, double fps)
    : path_(path), width_(width + (width & 1)), height_(height + (height & 1)), palette_(palette) {
  require_ffmpeg();
  const std::string dir = path.find('/') != std::string::npos ? path.substr(0, path.find_last_of('/')) : ".";
  std::string pattern = dir + "/.tmp-render-XXXXXX.mp4";
  const int fd = create_registered_temp(pattern, 4, &temp_);
  if (fd < 0) fail_input("cannot create output '" + path + "' (temporary file in " + dir + "): " + std::strerror(errno));
  close(fd);
  // H.264 in yuv420p (what players expect) needs even sizes: the frames are padded with background.
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", fps);
  const std::string command = "ffmpeg -hide_banner -loglevel error -nostdin -y -f rawvideo -pix_fmt rgb24 -s " +
                              std::to_string(width_) + "x" + std::to_string(height_) + " -r " + rate +
                              " -i - -c:v libx264 -pix_fmt yuv420p -crf 18 -movflags +faststart " + shell_quote(temp_);
  std::signal(SIGPIPE, SIG_IGN);  // a dead ffmpeg shows as a write error, not a killed render
  pipe_ = popen(command.c_str(), "w");
  if (!pipe_) fail_resource(std::string("cannot start ffmpeg: ") + std::strerror(errno));
}

Mp4Writer::~Mp4Writer() {
  if (pipe_) pclose(pipe_);
  if (!done_ && !temp_.empty()) {
    std::remove(temp_.c_str());
    unregister_temp_file(temp_);
  }
}

void Mp4Writer::add(const Canvas& frame) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width_) * 3, 255);
  for (int y = 0; y < height_; ++y) {
    std::fill(rgb.begin(), rgb.end(), 255);
    if (y < frame.height())
      for (int x = 0; x < frame.width(); ++x) {
        const Rgb c = palette_.colors[frame.at(x, y)];
        rgb[3 * static_cast<std::size_t>(x)] = c.r;
        rgb[3 * static_cast<std::size_t>(x) + 1] = c.g;
        rgb[3 * static_cast<std::size_t>(x) + 2] = c.b;
      }
    if (std::fwrite(rgb.data(), 1, rgb.size(), pipe_) != rgb.size())
      fail_resource("ffmpeg stopped reading frames (see its message above)");
  }
}

void Mp4Writer::finish() {
  const int status = pclose(pipe_);
  pipe_ = nullptr;
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_resource("ffmpeg failed (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                  ") writing " + path_);
  struct stat st;
  if (stat(temp_.c_str(), &st) != 0 || st.st_size == 0) fail_resource("ffmpeg wrote nothing for " + path_);
  chmod(temp_.c_str(), 0644 & ~current_umask());
  // In agreement with the signal handler: a signal during or after the rename leaves no output.
  if (const int err = rename_into_place(temp_, path_); err != 0)
    fail_resource("cannot rename " + temp_ + " to " + path_ + ": " + std::strerror(err));
  done_ = true;
}

}  // namespace numpipe::render
