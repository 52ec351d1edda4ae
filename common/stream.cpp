#include "stream.hpp"

#include "units.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <initializer_list>
#include <limits>
#include <memory>
#include <system_error>
#include <thread>

#include "data_files.hpp"
#include "dtype.hpp"
#include "signals.hpp"
#include "timeline.hpp"
#include "workers.hpp"

namespace numpipe {

// ---- dtypes ------------------------------------------------------------------------
std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f8: case DType::i8: case DType::u8: return 8;
    case DType::f4: case DType::i4: return 4;
    case DType::u1: return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f8: return "f8";
    case DType::f4: return "f4";
    case DType::i8: return "i8";
    case DType::i4: return "i4";
    case DType::u8: return "u8";
    case DType::u1: return "u1";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : {DType::f8, DType::f4, DType::i8, DType::i4, DType::u8, DType::u1})
    if (name == dtype_name(t)) return t;
  return std::nullopt;
}

std::uint64_t element_count(const Shape& shape) {
  std::uint64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) fail_input("negative size in shape " + shape_string(shape));
    if (d != 0 && n > static_cast<std::uint64_t>(INT64_MAX) / static_cast<std::uint64_t>(d))
      fail_input("shape " + shape_string(shape) + " has more than 2^63 elements");
    n *= static_cast<std::uint64_t>(d);
  }
  return n;
}

std::uint64_t payload_bytes(DType t, const Shape& shape) {
  std::uint64_t n = element_count(shape), s = dtype_size(t);
  if (n > static_cast<std::uint64_t>(INT64_MAX) / s)
    fail_input("shape " + shape_string(shape) + " of " + dtype_name(t) + " is more than 2^63 bytes");
  return n * s;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---- records -------------------------------------------------------------------------
Record Record::make(std::string name, DType dtype, Shape shape, json attrs) {
  Record r;
  r.name = std::move(name);
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.attrs = attrs.is_null() ? json::object() : std::move(attrs);
  std::uint64_t bytes = payload_bytes(dtype, r.shape);
  if (bytes > SIZE_MAX) fail_resource("record '" + r.name + "' is too large for this machine");
  r.payload = HostArray<std::byte>(static_cast<std::size_t>(bytes));
  return r;
}

void Record::check_dtype(DType wanted) const {
  if (dtype != wanted)
    fail_input("array '" + name + "' has dtype " + dtype_name(dtype) + ", expected " + dtype_name(wanted));
}

double Record::value_as_double(std::size_t i) const {
  return element_as_double(dtype, payload.data() + i * dtype_size(dtype));
}

// ---- sources and files -------------------------------------------------------------------
namespace {
// A pipe between two tools carries 64 KiB by default: one 1 MiB frame then costs
// each side 16 wake-ups. Ask for 1 MiB (Linux; the unprivileged limit,
// /proc/sys/fs/pipe-max-size); anything else is left as it is.
void widen_pipe(int fd) {
#ifdef F_SETPIPE_SZ
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) < (1 << 20)) fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
  (void)fd;
#endif
}
}  // namespace

std::size_t MemorySource::read(void* dst, std::size_t n) {
  std::size_t take = std::min(n, size_ - pos_);
  if (take) std::memcpy(dst, data_ + pos_, take);
  pos_ += take;
  return take;
}

InputFile::InputFile(const std::string& path) {
  if (path.empty() || path == "-") {
    file_ = stdin;
    label_ = "stdin";
    widen_pipe(STDIN_FILENO);
  } else {
    const std::string found = find_input_file(path);  // a clone's share/ref/... after an install
    file_ = std::fopen(found.c_str(), "rb");
    if (!file_) {
      const std::string why = std::strerror(errno);
      fail_input("cannot open input '" + path + "': " + why + where_input_was_looked_for(path));
    }
    owned_ = true;
    label_ = path;
    struct stat st;
    if (fstat(fileno(file_), &st) == 0 && S_ISDIR(st.st_mode)) {
      std::fclose(file_);
      file_ = nullptr;
      fail_input("input '" + path + "' is a folder, not a stream");
    }
  }
}

InputFile::~InputFile() {
  if (owned_ && file_) std::fclose(file_);
}

std::size_t InputFile::read(void* dst, std::size_t n) {
  std::size_t got = std::fread(dst, 1, n, file_);
  if (got < n && std::ferror(file_)) fail_resource("cannot read " + label_ + ": " + std::strerror(errno));
  return got;
}

namespace {
bool is_pipe_like(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}
}  // namespace

OutputFile::OutputFile(const std::string& path, bool binary) : path_(path) {
  if (path.empty() || path == "-") {
    if (binary && isatty(STDOUT_FILENO)) {
      // Open MPI gives each rank a pseudo-terminal as stdout, even when mpirun's own output is redirected.
      const bool mpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
      fail_input(mpi ? "refusing to write a binary stream to a terminal: under mpirun each rank's stdout is a "
                       "pseudo-terminal (Open MPI gives ranks one, even when mpirun's output is redirected): use -o FILE"
                     : "refusing to write a binary stream to a terminal: redirect stdout, pipe it into a tool, or use -o FILE");
    }
    file_ = stdout;
    is_stdout_ = true;
    flush_records_ = is_pipe_like(STDOUT_FILENO);
    label_ = "stdout";
    widen_pipe(STDOUT_FILENO);
    return;
  }
  label_ = path;
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket (/dev/null, a named pipe): nothing to make atomic,
    // and renaming over it would replace the device itself. Write to it directly.
    if (S_ISDIR(st.st_mode)) fail_input("output path '" + path + "' is a folder, not a file");
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) fail_input("cannot open output '" + path + "': " + std::strerror(errno));
    is_stream_ = true;
    flush_records_ = is_pipe_like(fileno(file_));
    return;
  }
  // A symbolic link to a file: replace the file it points to, not the link.
  std::string target = path;
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
  }
  path_ = target;
  replaces_file_ = stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  // The temporary file lives in the same folder so that rename() is atomic.
  std::string dir = ".", base = target;
  if (auto slash = target.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : target.substr(0, slash);
    base = target.substr(slash + 1);
  }
  if (base.empty()) fail_input("output path '" + path + "' names a folder, not a file");
  // Fail now, before any work, if the folder cannot take the file; the temporary
  // file itself is created at the first write, so that a run that fails (or an
  // MPI rank killed) before its output exists leaves nothing behind.
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    fail_input("cannot create output '" + path + "' (folder '" + dir + "'): " + std::strerror(errno));
  temp_template_ = (dir == "/" ? "" : dir) + "/." + base + ".tmp-XXXXXX";
  report_stale_temp_files(dir, base);
}

namespace {
// Closes fd on a detached thread: where it is the last reference to a replaced file,
// the kernel frees the file's pages there, beside the process's own teardown (the
// process still ends only when that thread has). Inline when no thread can start.
void release_in_background(int fd) {
  try {
    std::thread([fd] { close(fd); }).detach();
  } catch (const std::system_error&) {
    close(fd);
  }
}
}  // namespace

void OutputFile::open_temp() {
  const int fd = create_registered_temp(temp_template_, 0, &temp_path_);
  if (fd < 0) fail_input("cannot create output '" + label_ + "' (temporary file " + temp_template_ + "): " + std::strerror(errno));
  fchmod(fd, 0644 & ~current_umask());
  file_ = fdopen(fd, "wb");
  if (!file_) {
    close(fd);
    unlink(temp_path_.c_str());
    unregister_temp_file(temp_path_);
    fail_resource("cannot open output '" + label_ + "': " + std::strerror(errno));
  }
}

OutputFile::~OutputFile() {
  if (is_stdout_) {
    std::fflush(stdout);
    return;
  }
  if (is_stream_) {
    if (file_) std::fclose(file_);
    return;
  }
  if (!committed_ && file_) {
    std::fclose(file_);
    unlink(temp_path_.c_str());
    unregister_temp_file(temp_path_);
  }
}

void OutputFile::fail_write(int err) const { fail_resource("cannot write " + label_ + ": " + std::strerror(err)); }

void OutputFile::flush() {
  if (!flush_records_ || !file_) return;
  if (std::fflush(file_) != 0) fail_write(errno);
}

void OutputFile::write(const void* src, std::size_t n) {
  if (!file_) open_temp();
  if (n && std::fwrite(src, 1, n, file_) != n)
    fail_write(errno);
  written_ += n;
  if (replaces_file_ && written_ - written_back_ >= kWritebackChunk) start_writeback();
}

// Renaming over an existing file makes ext4 (auto_da_alloc) start the new file's
// writeback inside rename(), so that a crash cannot leave it empty: measured 110-240 ms
// for 400 MB. When the output replaces a file, that same writeback is started here
// instead, a chunk at a time, while the rest of the output is still being made.
void OutputFile::start_writeback() {
#ifdef SYNC_FILE_RANGE_WRITE
  if (std::fflush(file_) != 0) fail_write(errno);
  // a hint: where it fails, rename() does the same work as before
  (void)sync_file_range(fileno(file_), static_cast<off_t>(written_back_), static_cast<off_t>(written_ - written_back_),
                        SYNC_FILE_RANGE_WRITE);
#endif
  written_back_ = written_;
}

void OutputFile::commit() {
  if (committed_) return;
  if (is_stdout_) {
    if (std::fflush(stdout) != 0) fail_write(errno);
    committed_ = true;
    return;
  }
  if (is_stream_) {
    int err = std::fclose(file_) == 0 ? 0 : errno;
    file_ = nullptr;
    if (err) fail_write(err);
    committed_ = true;
    return;
  }
  if (!file_) open_temp();  // an empty output is still an output
  if (replaces_file_ && written_ > written_back_) start_writeback();
  bool ok = std::fflush(file_) == 0;
  int err = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok) {
    unlink(temp_path_.c_str());
    unregister_temp_file(temp_path_);
    fail_write(err);
  }
  // The file being replaced, held open across the rename: its last reference then goes
  // on a thread of its own, which frees its pages while this process finishes (about
  // 70 ms for 400 MB, in the call that drops the last reference).
  const int replaced = replaces_file_ ? open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
  if ((err = rename_into_place(temp_path_, path_)) != 0) {
    if (replaced >= 0) close(replaced);
    unlink(temp_path_.c_str());
    unregister_temp_file(temp_path_);
    fail_resource("cannot rename the finished output into place at '" + path_ + "': " + std::strerror(err));
  }
  committed_ = true;
  if (replaced >= 0) release_in_background(replaced);
}

// ---- reading ---------------------------------------------------------------------------
std::uint64_t default_max_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t(8) << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
}

namespace {

std::string human_bytes(std::uint64_t b) {
  char buf[64];
  if (b >= (std::uint64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%llu bytes (%.1f GiB)", (unsigned long long)b, b / 1073741824.0);
  else if (b >= (1u << 20)) std::snprintf(buf, sizeof buf, "%llu bytes (%.1f MiB)", (unsigned long long)b, b / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%llu bytes", (unsigned long long)b);
  return buf;
}

// Headers are untrusted: deep nesting would overflow the stack of code that
// walks the JSON recursively (dump(), comparisons), so it is refused up front.
constexpr int kMaxHeaderDepth = 64;
// No array needs more dimensions (NumPy 1.x allows 32); the Python reader refuses the same.
constexpr int kMaxDims = 32;

// nlohmann::json refuses a number beyond a double's range (out_of_range 406, e.g. 1e400 or
// the integer 10**400) as it refuses malformed text; the message tells the two apart.
bool json_number_out_of_range(const std::string& text) {
  try {
    json parsed = json::parse(text);
    (void)parsed;
  } catch (const json::out_of_range& e) {
    return e.id == 406;
  } catch (const json::exception&) {
  }
  return false;
}

bool json_depth_exceeds(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// A JSON value for an error message, cut to a readable length.
std::string short_dump(const json& j) {
  std::string s = j.dump();
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

std::uint32_t load_u32_le(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

void store_u32_le(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

template <class T>
void Record::convert_to(T* out) const {
  const std::int64_t count = static_cast<std::int64_t>(size());
  auto convert = [count, out](const auto* s) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(s[i]);
  };
  if (dtype == dtype_of<T>()) {
    parallel_copy(out, payload.data(), payload.bytes());
  } else if (dtype == DType::f4) {
    convert(data<float>());
  } else if (dtype == DType::f8) {
    convert(data<double>());
  } else {
    for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(value_as_double(static_cast<std::size_t>(i)));
  }
}
template void Record::convert_to(float*) const;
template void Record::convert_to(double*) const;

// ---- zstd frames, parsed and written by hand ---------------------------------------------
// The stream's frames are independent: the reader finds where each ends from the
// frame and block headers (RFC 8878, sections 3.1.1.1 and 3.1.1.2) without decoding
// it, so that frames are decompressed in parallel even from a pipe; the writer makes
// frames of stored blocks itself for uncompressed output (--compress none).
namespace {

constexpr std::uint32_t kZstdMagic = 0xFD2FB528u;
constexpr std::size_t kZstdBlockMax = std::size_t(128) << 10;
// Frames decoded on the worker threads: those that say how much they hold, from
// 64 KiB (below, a job costs more than it saves) to 8 MiB (a buffer the reader may
// allocate from a frame header before checking its data: with workers + 2 frames in
// flight, a hostile stream of a few bytes can make it hold at most 18 x 8 MiB).
constexpr std::uint64_t kMinParallelFrame = std::uint64_t(64) << 10;
constexpr std::uint64_t kMaxParallelFrame = std::uint64_t(8) << 20;

std::uint64_t load_le(const unsigned char* p, int bytes) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (bytes == 8) {  // one load (the hash's inner loop)
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
#endif
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void store_le(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// XXH64 with seed 0, the content checksum of zstd frames (its low 32 bits), written
// from the xxHash specification (libzstd does not export its copy).
class Xxh64 {
 public:
  void update(const unsigned char* p, std::size_t n) {
    total_ += n;
    if (buffered_ + n < 32) {
      if (n) std::memcpy(buf_ + buffered_, p, n);
      buffered_ += n;
      return;
    }
    if (buffered_) {
      const std::size_t fill = 32 - buffered_;
      std::memcpy(buf_ + buffered_, p, fill);
      stripe(buf_);
      p += fill;
      n -= fill;
      buffered_ = 0;
    }
    for (; n >= 32; p += 32, n -= 32) stripe(p);
    if (n) std::memcpy(buf_, p, n);
    buffered_ = n;
  }
  std::uint64_t digest() const {
    std::uint64_t h;
    if (total_ >= 32) {
      h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
      for (std::uint64_t v : v_) h = (h ^ round(0, v)) * kP1 + kP4;
    } else {
      h = kP5;
    }
    h += total_;
    const unsigned char* p = buf_;
    std::size_t n = buffered_;
    for (; n >= 8; p += 8, n -= 8) h = rotl(h ^ round(0, load_le(p, 8)), 27) * kP1 + kP4;
    if (n >= 4) {
      h = rotl(h ^ (load_le(p, 4) * kP1), 23) * kP2 + kP3;
      p += 4;
      n -= 4;
    }
    for (; n > 0; ++p, --n) h = rotl(h ^ (*p * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
  }

 private:
  static constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                                 kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;
  static std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static std::uint64_t round(std::uint64_t acc, std::uint64_t input) { return rotl(acc + input * kP2, 31) * kP1; }
  void stripe(const unsigned char* p) {
    for (int i = 0; i < 4; ++i) v_[i] = round(v_[i], load_le(p + 8 * i, 8));
  }
  std::uint64_t v_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  unsigned char buf_[32] = {};
  std::size_t buffered_ = 0;
  std::uint64_t total_ = 0;
};

// A growable byte buffer that keeps its memory between uses (no zeroing, no page
// faults for the frames after the first).
struct ByteBuf {
  std::unique_ptr<unsigned char[]> data;
  std::size_t capacity = 0, size = 0;
  unsigned char* reserve(std::size_t n) {
    if (n > capacity) {
      std::size_t grown = std::max(n, capacity + capacity / 2);
      std::unique_ptr<unsigned char[]> fresh(new unsigned char[grown]);
      if (size) std::memcpy(fresh.get(), data.get(), size);
      data = std::move(fresh);
      capacity = grown;
    }
    return data.get();
  }
};

struct Span {
  const unsigned char* data;
  std::size_t size;
};

// One zstd frame of stored blocks holding the concatenation of `parts`: magic, a
// single-segment header with the 8-byte content size and the checksum flag, blocks
// of at most 128 KiB, the low 32 bits of XXH64.
void write_stored_frame(ByteBuf& out, std::initializer_list<Span> parts) {
  std::size_t content = 0;
  for (const Span& s : parts) content += s.size;
  const std::size_t blocks = std::max<std::size_t>(1, (content + kZstdBlockMax - 1) / kZstdBlockMax);
  unsigned char* p = out.reserve(4 + 1 + 8 + 3 * blocks + content + 4);
  store_le(p, kZstdMagic, 4);
  p[4] = 0xE4;  // FCS_Field_Size 8 bytes (0b11), Single_Segment, Content_Checksum
  store_le(p + 5, content, 8);
  std::size_t at = 13;
  Xxh64 hash;
  auto part = parts.begin();
  std::size_t part_pos = 0, left = content;
  do {
    const std::size_t block = std::min(left, kZstdBlockMax);
    left -= block;
    store_le(p + at, (std::uint64_t(block) << 3) | (left == 0 ? 1u : 0u), 3);  // Raw_Block (type 0)
    at += 3;
    for (std::size_t need = block; need > 0;) {
      while (part_pos == part->size) {
        ++part;
        part_pos = 0;
      }
      const std::size_t take = std::min(need, part->size - part_pos);
      std::memcpy(p + at, part->data + part_pos, take);
      hash.update(part->data + part_pos, take);
      part_pos += take;
      at += take;
      need -= take;
    }
  } while (left > 0);
  store_le(p + at, hash.digest() & 0xffffffffu, 4);
  out.size = at + 4;
}

// zstd contexts of the worker threads, made once per thread.
struct ThreadZstd {
  ZSTD_CCtx* c = nullptr;
  ZSTD_DCtx* d = nullptr;
  ~ThreadZstd() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
thread_local ThreadZstd tl_zstd;

ZSTD_CCtx* thread_cctx(int level) {
  if (!tl_zstd.c && !(tl_zstd.c = ZSTD_createCCtx())) fail_resource("out of memory creating a zstd encoder");
  ZSTD_CCtx_reset(tl_zstd.c, ZSTD_reset_session_and_parameters);
  for (auto [param, value] : {std::pair{ZSTD_c_compressionLevel, level}, std::pair{ZSTD_c_checksumFlag, 1}}) {
    const std::size_t r = ZSTD_CCtx_setParameter(tl_zstd.c, param, value);
    if (ZSTD_isError(r)) fail_internal(std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
  }
  return tl_zstd.c;
}

ZSTD_DCtx* thread_dctx() {
  if (!tl_zstd.d && !(tl_zstd.d = ZSTD_createDCtx())) fail_resource("out of memory creating a zstd decoder");
  return tl_zstd.d;
}

std::atomic<int> g_output_compression{kCompressionDefault};

}  // namespace

int parse_compression(const std::string& spec, const std::string& what) {
  if (spec == "none") return kCompressionNone;
  if (spec == "fast") return -5;
  char* end = nullptr;
  const long v = std::strtol(spec.c_str(), &end, 10);
  if (spec.empty() || *end || v < 1 || v > 19)
    fail_input(what + " must be none, fast or a zstd level from 1 to 19, got '" + spec + "'");
  return static_cast<int>(v);
}

void set_output_compression(int level) { g_output_compression.store(level); }

int default_compression() {
  const int set = g_output_compression.load();
  if (set != kCompressionDefault) return set;
  if (const char* env = std::getenv("NUMPIPE_ZSTD_LEVEL")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end == env || *end || v < -7 || v > 22)
      fail_input(std::string("NUMPIPE_ZSTD_LEVEL must be an integer in [-7, 22] (0: no compression), got '") + env + "'");
    return static_cast<int>(v);
  }
  return 1;
}

// Decompresses the input as one byte sequence, whatever its frame boundaries.
// Frames that state their content size (the payload frames of large records) are
// read whole and decompressed on the worker threads, straight into the record's
// payload where they fall inside it; the others go through one streaming decoder
// on the calling thread. Either way the bytes, and the errors, come in stream order.
struct StreamReader::Impl {
  ByteSource& in;
  ReadLimits limits;
  ZSTD_DCtx* dctx = nullptr;
  std::vector<unsigned char> in_buf, out_buf;
  std::size_t in_pos = 0, in_end = 0;  // unread input in in_buf
  std::size_t out_pos = 0, out_end = 0;
  bool input_eof = false;
  bool frame_open = false;        // the streaming decoder is inside a frame that has not ended
  std::uint64_t decoded_bytes = 0;
  // Stream-level state.
  bool in_stream = false;         // magic read, end record not yet
  std::uint64_t records_in_stream = 0;
  std::uint64_t streams_done = 0;
  std::uint64_t record_index = 0; // over all streams, for messages

  // Frames being decoded on the workers, in stream order.
  struct ParallelFrame {
    ByteBuf src, out;  // the compressed frame; its content when not decoded in place
  };
  struct Chunk {
    Job job;
    std::unique_ptr<ParallelFrame> frame;
    std::size_t size = 0, pos = 0;
    bool in_place = false;  // decoded straight into the caller's buffer
  };
  std::deque<Chunk> chunks;
  std::vector<std::unique_ptr<ParallelFrame>> spare;

  Impl(ByteSource& f, ReadLimits l) : in(f), limits(l) {
    if (limits.max_bytes == 0) limits.max_bytes = default_max_bytes();
    dctx = ZSTD_createDCtx();
    if (!dctx) fail_resource("out of memory creating a zstd decoder");
    in_buf.resize(ZSTD_DStreamInSize());
    out_buf.resize(ZSTD_DStreamOutSize());
  }
  ~Impl() {
    wait_all_quietly();
    ZSTD_freeDCtx(dctx);
  }

  [[noreturn]] void bad(const std::string& what) { fail_input(in.label() + ": " + what); }

  // Every job still running ends before its buffers (or the caller's) go away.
  void wait_all_quietly() noexcept {
    for (auto& c : chunks) {
      try {
        c.job.wait();
      } catch (...) {
      }
    }
    chunks.clear();
  }

  bool refill_input() {
    if (input_eof) return false;
    std::size_t got = in.read(in_buf.data(), in_buf.size());
    in_pos = 0;
    in_end = got;
    if (got == 0) input_eof = true;
    return got > 0;
  }

  // At least k unread bytes in in_buf (k small), reading no more than needed so that
  // a reader in a pipe never waits for bytes beyond the frame it decodes; false when
  // the input ends first.
  bool ensure_input(std::size_t k) {
    while (in_end - in_pos < k) {
      if (input_eof) return false;
      if (in_pos > 0) {
        std::memmove(in_buf.data(), in_buf.data() + in_pos, in_end - in_pos);
        in_end -= in_pos;
        in_pos = 0;
      }
      const std::size_t want = k - in_end;
      const std::size_t got = in.read(in_buf.data() + in_end, want);
      in_end += got;
      if (got < want) input_eof = true;
    }
    return true;
  }

  bool stream_exhausted() const { return input_eof && in_pos == in_end && !frame_open; }

  // The streaming decoder: decompresses into [dst, dst+n); returns the bytes produced,
  // 0 at the end of a frame that had no more to give or at the end of the input.
  std::size_t decompress_some(unsigned char* dst, std::size_t n) {
    for (;;) {
      if (in_pos == in_end && !refill_input()) {
        if (frame_open) bad("truncated zstd frame: the input ends inside a compressed frame");
        return 0;
      }
      ZSTD_inBuffer zin{in_buf.data(), in_end, in_pos};
      ZSTD_outBuffer zout{dst, n, 0};
      std::size_t ret = ZSTD_decompressStream(dctx, &zout, &zin);
      in_pos = zin.pos;
      if (ZSTD_isError(ret)) {
        ZSTD_ErrorCode code = ZSTD_getErrorCode(ret);
        if (code == ZSTD_error_prefix_unknown)
          bad(decoded_bytes == 0 ? "not a numpipe stream: the input is not zstd-compressed (bad magic)"
                                 : "corrupt data: garbage where a zstd frame should start");
        if (code == ZSTD_error_checksum_wrong) bad("corrupt data: zstd checksum mismatch (the stream was damaged)");
        bad(std::string("corrupt zstd data: ") + ZSTD_getErrorName(ret));
      }
      frame_open = ret != 0;
      decoded_bytes += zout.pos;
      if (zout.pos > 0 || !frame_open) return zout.pos;
    }
  }

  // The next frame's content size when it is one for the workers (a zstd frame
  // stating its size, without a dictionary, of a size worth a job); 0 otherwise.
  // Reads only the frame header (at most 18 bytes).
  struct FrameInfo {
    std::uint64_t content = 0;
    std::size_t header = 0;
    bool checksum = false;
  };
  FrameInfo peek_parallel_frame() {
    FrameInfo fi;
    if (!ensure_input(5)) return fi;
    const unsigned char* p = in_buf.data() + in_pos;
    if (load_le(p, 4) != kZstdMagic) return fi;
    const unsigned fhd = p[4], fcs_flag = fhd >> 6;
    const bool single = fhd & 0x20, reserved = fhd & 0x08, dictionary = fhd & 0x03;
    if (reserved || dictionary) return fi;
    const std::size_t fcs_bytes = fcs_flag == 0 ? (single ? 1 : 0) : std::size_t(1) << fcs_flag;
    if (fcs_bytes == 0) return fi;  // the size is not stated
    const std::size_t at = 5 + (single ? 0 : 1), header = at + fcs_bytes;
    if (!ensure_input(header)) return fi;
    p = in_buf.data() + in_pos;
    std::uint64_t content = load_le(p + at, static_cast<int>(fcs_bytes));
    if (fcs_bytes == 2) content += 256;
    if (content < kMinParallelFrame || content > kMaxParallelFrame) return fi;
    fi.content = content;
    fi.header = header;
    fi.checksum = fhd & 0x04;
    return fi;
  }

  // Reads the whole frame into f.src, block header by block header. False (the bytes
  // read put back in front of the input, for the streaming decoder to report) when
  // the input ends inside it or its blocks are not what a valid frame holds.
  bool take_frame(const FrameInfo& fi, ParallelFrame& f) {
    ByteBuf& s = f.src;
    s.size = 0;
    const std::uint64_t limit = fi.content + fi.content / 8 + 65536;  // zstd never expands data by more
    auto have = [&](std::size_t k) {
      if (k > limit) return false;
      unsigned char* p = s.reserve(k);
      while (s.size < k) {
        if (in_pos < in_end) {
          const std::size_t take = std::min(in_end - in_pos, k - s.size);
          std::memcpy(p + s.size, in_buf.data() + in_pos, take);
          in_pos += take;
          s.size += take;
          continue;
        }
        if (input_eof) return false;
        const std::size_t want = k - s.size, got = in.read(p + s.size, want);
        s.size += got;
        if (got < want) input_eof = true;
        if (got == 0) return false;
      }
      return true;
    };
    bool ok = have(fi.header);
    std::size_t pos = fi.header;
    while (ok) {
      if (!(ok = have(pos + 3))) break;
      const std::uint32_t block = static_cast<std::uint32_t>(load_le(s.data.get() + pos, 3));
      const unsigned type = (block >> 1) & 3;
      const std::size_t size = block >> 3;
      if (type == 3 || size > kZstdBlockMax) {
        ok = false;
        break;
      }
      pos += 3 + (type == 1 ? 1 : size);
      if (!(ok = have(pos))) break;
      if (block & 1) {
        if (fi.checksum) ok = have(pos += 4);
        break;
      }
    }
    if (ok) return true;
    // Hand the bytes back: the streaming decoder reports the damage as it always did.
    std::vector<unsigned char> rest(s.data.get(), s.data.get() + s.size);
    rest.insert(rest.end(), in_buf.begin() + static_cast<std::ptrdiff_t>(in_pos), in_buf.begin() + static_cast<std::ptrdiff_t>(in_end));
    if (rest.size() > in_buf.size()) in_buf.resize(rest.size());
    std::memcpy(in_buf.data(), rest.data(), rest.size());
    in_pos = 0;
    in_end = rest.size();
    return false;
  }

  // Queues the frames that hold bytes [done, n) of the caller's read, while they are
  // frames for the workers: frames wholly inside [0, n) are decoded into dst (when
  // there is one), others into their own buffer. False when none was queued.
  bool schedule(unsigned char* dst, std::size_t n, std::size_t done) {
    WorkerPool& pool = WorkerPool::io();
    // Each worker busy and two frames waiting: at most workers + 2 frames held (about
    // 2 MiB each for the writer's frames, at most 8 MiB out + its input for any frame).
    const std::size_t ahead = static_cast<std::size_t>(pool.size()) + 2;
    std::size_t at = done;
    bool queued = false;
    while (chunks.size() < ahead && at < n) {
      const FrameInfo fi = peek_parallel_frame();
      if (fi.content == 0) break;
      std::unique_ptr<ParallelFrame> f;
      if (spare.empty()) f = std::make_unique<ParallelFrame>();
      else {
        f = std::move(spare.back());
        spare.pop_back();
      }
      if (!take_frame(fi, *f)) {
        spare.push_back(std::move(f));
        break;
      }
      Chunk c;
      c.size = static_cast<std::size_t>(fi.content);
      c.in_place = dst && c.size <= n - at;
      unsigned char* target = c.in_place ? dst + at : f->out.reserve(c.size);
      const unsigned char* src = f->src.data.get();
      const std::size_t src_size = f->src.size, expect = c.size;
      c.job = pool.submit([this, target, src, src_size, expect] {
        const std::size_t r = ZSTD_decompressDCtx(thread_dctx(), target, expect, src, src_size);
        if (ZSTD_isError(r)) {
          if (ZSTD_getErrorCode(r) == ZSTD_error_checksum_wrong)
            bad("corrupt data: zstd checksum mismatch (the stream was damaged)");
          bad(std::string("corrupt zstd data: ") + ZSTD_getErrorName(r));
        }
        if (r != expect)
          bad("corrupt zstd data: a frame holds " + std::to_string(r) + " bytes, its header says " + std::to_string(expect));
      });
      c.frame = std::move(f);
      decoded_bytes += c.size;
      at += c.size;
      chunks.push_back(std::move(c));
      queued = true;
    }
    return queued;
  }

  // Reads exactly n bytes into dst (nullptr: passes over them) unless the input ends
  // first; returns the bytes read.
  std::size_t consume(unsigned char* dst, std::size_t n) {
    try {
      return consume_in_order(dst, n);
    } catch (...) {
      wait_all_quietly();  // no job may still write into dst, or into its buffers, once this unwinds
      throw;
    }
  }

  std::size_t consume_in_order(unsigned char* dst, std::size_t n) {
    if (n == 0) return 0;  // an empty payload has no buffer: memcpy(nullptr, ..., 0) is undefined
    std::size_t done = std::min(n, out_end - out_pos);
    if (dst && done) std::memcpy(dst, out_buf.data() + out_pos, done);
    out_pos += done;
    while (done < n) {
      if (!chunks.empty()) {
        Chunk& c = chunks.front();
        c.job.wait();
        if (c.in_place) {
          done += c.size;
          c.pos = c.size;
        } else {
          const std::size_t take = std::min(n - done, c.size - c.pos);
          if (dst) std::memcpy(dst + done, c.frame->out.data.get() + c.pos, take);
          c.pos += take;
          done += take;
        }
        if (c.pos == c.size) {
          spare.push_back(std::move(c.frame));
          chunks.pop_front();
        }
        continue;
      }
      if (!frame_open && schedule(dst, n, done)) continue;
      std::size_t got;
      if (dst && n - done >= out_buf.size()) {  // large reads decompress straight into the destination
        got = decompress_some(dst + done, n - done);
        done += got;
      } else {
        got = decompress_some(out_buf.data(), out_buf.size());
        out_pos = 0;
        out_end = got;
        const std::size_t take = std::min(n - done, got);
        if (dst && take) std::memcpy(dst + done, out_buf.data(), take);
        out_pos = take;
        done += take;
      }
      if (got == 0 && stream_exhausted()) return done;
    }
    return done;
  }

  std::size_t read_bytes(void* dst, std::size_t n) { return consume(static_cast<unsigned char*>(dst), n); }

  // After a frame's last content byte only its checksum may remain: consume it
  // now, so that a damaged frame is reported before its record is handed out.
  // (Frames decoded by the workers are checked whole before their bytes are used.)
  void settle_frame() {
    while (frame_open && out_pos == out_end) {
      std::size_t got = decompress_some(out_buf.data(), out_buf.size());
      out_pos = 0;
      out_end = got;
      if (got == 0 && stream_exhausted()) break;
    }
  }

  bool at_end_of_input() {
    if (out_pos < out_end || !chunks.empty()) return false;
    for (;;) {
      if (!frame_open && peek_parallel_frame().content > 0) return false;
      std::size_t got = decompress_some(out_buf.data(), out_buf.size());
      out_pos = 0;
      out_end = got;
      if (got > 0) return false;
      if (stream_exhausted()) return true;
    }
  }

  void read_magic() {
    unsigned char head[12];
    std::size_t got = read_bytes(head, sizeof head);
    if (got == 0 && streams_done == 0) bad("empty input: expected a numpipe stream");
    if (got < 8 || std::memcmp(head, kStreamMagic, 8) != 0)
      bad(streams_done ? "bad magic after an end record: trailing data is not a numpipe stream"
                       : "bad magic: not a numpipe stream (expected \"NUMPIPE\\0\")");
    if (got < 12) bad("truncated stream: the input ends inside the version field");
    std::uint32_t version = load_u32_le(head + 8);
    if (version != kStreamVersion)
      bad("unknown stream version " + std::to_string(version) + " (this numpipe reads version " +
          std::to_string(kStreamVersion) + ")");
    in_stream = true;
    records_in_stream = 0;
  }

  std::string where() const { return "record " + std::to_string(record_index); }

  // The record whose header was read and whose payload was not yet (next_header).
  bool payload_pending = false;
  std::uint64_t pending_bytes = 0;
  std::string pending_label;

  // Reads up to the next record's header; false at the end of the input. The
  // payload is then read by read_payload() or passed over by skip_payload().
  bool next_header(RecordHeader& out) {
    if (payload_pending) skip_payload();
    if (!in_stream) {
      if (streams_done > 0 && at_end_of_input()) return false;
      read_magic();
    }
    for (;;) {
      unsigned char len_bytes[4];
      std::size_t got = read_bytes(len_bytes, 4);
      if (got == 0) bad("missing end record: the stream stops after " + std::to_string(records_in_stream) +
                        " records (was the producer interrupted?)");
      if (got < 4) bad("truncated stream: the input ends inside the header length of " + where());
      std::uint32_t header_len = load_u32_le(len_bytes);
      if (header_len == 0) bad("empty header in " + where());
      if (header_len > limits.max_header_bytes)
        bad("header of " + where() + " is " + human_bytes(header_len) + ", over the limit of " +
            human_bytes(limits.max_header_bytes));
      std::string text(header_len, '\0');
      if (read_bytes(text.data(), header_len) < header_len)
        bad("truncated stream: the input ends inside the header of " + where());
      if (json_depth_exceeds(text, kMaxHeaderDepth))
        bad("the header of " + where() + " nests deeper than " + std::to_string(kMaxHeaderDepth) + " levels");
      json header = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (header.is_discarded())
        bad("the header of " + where() + (json_number_out_of_range(text) ? " holds a number beyond a double's range"
                                                                          : " is not valid JSON"));
      if (!header.is_object()) bad("the header of " + where() + " is not a JSON object");

      if (header.contains("end")) {
        if (header["end"] != true) bad("the end record of stream " + std::to_string(streams_done) + " has \"end\" != true");
        auto count = header.find("records");
        if (count == header.end() || !count->is_number_integer())
          bad("the end record has no integer \"records\" count");
        if (count->get<std::int64_t>() != static_cast<std::int64_t>(records_in_stream))
          bad("the end record counts " + short_dump(*count) + " records but the stream holds " +
              std::to_string(records_in_stream) + " (records lost or added)");
        settle_frame();
        in_stream = false;
        ++streams_done;
        if (at_end_of_input()) return false;
        read_magic();
        continue;
      }

      auto name = header.find("name");
      if (name == header.end() || !name->is_string()) bad("the header of " + where() + " has no string \"name\"");
      std::string rec_name = name->get<std::string>();
      std::string label = where() + " '" + rec_name + "'";
      auto dt = header.find("dtype");
      if (dt == header.end() || !dt->is_string()) bad("the header of " + label + " has no string \"dtype\"");
      auto dtype = parse_dtype(dt->get<std::string>());
      if (!dtype) bad("unknown dtype \"" + dt->get<std::string>() + "\" in " + label + " (known: f8 f4 i8 i4 u8 u1)");
      auto sh = header.find("shape");
      if (sh == header.end() || !sh->is_array()) bad("the header of " + label + " has no \"shape\" array");
      if (sh->size() > static_cast<std::size_t>(kMaxDims))
        bad("the shape of " + label + " has " + std::to_string(sh->size()) + " dimensions, more than " +
            std::to_string(kMaxDims));
      Shape shape;
      for (const auto& d : *sh) {
        if (!d.is_number_integer()) bad("the shape of " + label + " holds a non-integer: " + short_dump(*sh));
        if (d.is_number_unsigned() && d.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
          bad("the shape of " + label + " overflows: " + short_dump(*sh));
        std::int64_t v = d.get<std::int64_t>();
        if (v < 0) bad("the shape of " + label + " has a negative size: " + short_dump(*sh));
        shape.push_back(v);
      }
      // An empty array's other sizes still count (as in NumPy): [0, 2^62] of f8 is refused like [2^62] of f8.
      Shape nonzero_sizes;
      for (std::int64_t v : shape) if (v != 0) nonzero_sizes.push_back(v);
      try {
        (void)payload_bytes(*dtype, nonzero_sizes);
      } catch (const Error&) {
        bad("the shape of " + label + " overflows: " + short_dump(*sh));
      }
      std::uint64_t bytes;
      try {
        bytes = payload_bytes(*dtype, shape);
      } catch (const Error&) {
        bad("the shape of " + label + " overflows: " + short_dump(*sh));
      }
      if (bytes > limits.max_bytes)
        bad(label + " " + short_dump(*sh) + " needs " + human_bytes(bytes) + ", over the --max-bytes limit of " +
            human_bytes(limits.max_bytes) + "; raise --max-bytes if this is intended");
      json attrs = json::object();
      if (auto a = header.find("attrs"); a != header.end()) {
        if (!a->is_object()) bad("the \"attrs\" of " + label + " is not a JSON object");
        attrs = std::move(*a);
      }
      out.name = std::move(rec_name);
      out.dtype = *dtype;
      out.shape = std::move(shape);
      out.attrs = std::move(attrs);
      out.bytes = bytes;
      out.index = record_index;
      payload_pending = true;
      pending_bytes = bytes;
      pending_label = std::move(label);
      return true;
    }
  }

  void finish_record() {
    settle_frame();
    payload_pending = false;
    ++records_in_stream;
    ++record_index;
  }

  void read_payload(RecordHeader&& h, Record& out) {
    if (!payload_pending) fail_internal("StreamReader::read_payload without a pending record header");
    out.payload = HostArray<std::byte>();  // the previous payload goes before the next one is allocated
    HostArray<std::byte> payload(static_cast<std::size_t>(pending_bytes));
    std::size_t have = read_bytes(payload.data(), payload.bytes());
    if (have < pending_bytes)
      bad("truncated payload in " + pending_label + ": expected " + human_bytes(pending_bytes) + ", got " +
          human_bytes(have));
    finish_record();
    out.name = std::move(h.name);
    out.dtype = h.dtype;
    out.shape = std::move(h.shape);
    out.attrs = std::move(h.attrs);
    out.payload = std::move(payload);
  }

  // Decompresses the pending payload (so that its frames' checksums are verified)
  // without keeping it.
  void skip_payload() {
    if (!payload_pending) fail_internal("StreamReader::skip_payload without a pending record header");
    std::uint64_t left = pending_bytes;
    while (left > 0) {
      const std::size_t step = static_cast<std::size_t>(std::min<std::uint64_t>(left, std::uint64_t(1) << 30));
      const std::size_t got = consume(nullptr, step);
      left -= got;
      if (got < step)
        bad("truncated payload in " + pending_label + ": expected " + human_bytes(pending_bytes) + ", got " +
            human_bytes(pending_bytes - left));
    }
    finish_record();
  }
  bool next(Record& out) {
    RecordHeader h;
    if (!next_header(h)) return false;
    read_payload(std::move(h), out);
    return true;
  }
};

std::string RecordHeader::label() const { return "record " + std::to_string(index) + " '" + name + "'"; }

StreamReader::StreamReader(ByteSource& in, ReadLimits limits) : impl_(std::make_unique<Impl>(in, limits)) {}
StreamReader::~StreamReader() = default;
bool StreamReader::next(Record& out) { return impl_->next(out); }
bool StreamReader::next_header(RecordHeader& out) { return impl_->next_header(out); }
void StreamReader::read_payload(RecordHeader&& header, Record& out) { impl_->read_payload(std::move(header), out); }
void StreamReader::skip_payload() { impl_->skip_payload(); }
const std::string& StreamReader::label() const { return impl_->in.label(); }

std::vector<Record> StreamReader::read_all() { return read_records({}); }

std::vector<Record> StreamReader::read_records(const RecordFilter& keep) {
  std::uint64_t total = impl_->limits.max_total_bytes ? impl_->limits.max_total_bytes : impl_->limits.max_bytes;
  std::vector<Record> kept;
  std::uint64_t held = 0;
  RecordHeader h;
  while (next_header(h)) {
    if (keep && !keep(h)) {
      skip_payload();
      continue;
    }
    if (h.bytes > total - held)
      impl_->bad("the records kept so far (" + std::to_string(kept.size()) + ", " + human_bytes(held) + ") and " +
                 h.label() + " (" + human_bytes(h.bytes) + ") are over the --max-bytes limit of " + human_bytes(total) +
                 " on what a tool holds; raise --max-bytes if this is intended");
    held += h.bytes;
    kept.emplace_back();
    read_payload(std::move(h), kept.back());
    h = RecordHeader();
  }
  return kept;
}

std::vector<Record> read_stream(const std::string& path, ReadLimits limits, const RecordFilter& keep) {
  timeline::Scope phase("read input");
  InputFile in(path);
  StreamReader reader(in, limits);
  std::vector<Record> records = reader.read_records(keep);
  for (const Record& r : records) phase.add_bytes(static_cast<double>(r.payload.bytes()));
  return records;
}

// ---- writing ---------------------------------------------------------------------------
// A record whose payload fits in kFramePayloadBytes is one zstd frame (with its
// content checksum), so that a reader verifies each record before handing it out
// and a pipe consumer starts work as soon as a record is complete. A larger one is
// a frame holding its header, then its payload in frames of kFramePayloadBytes,
// compressed on the worker threads (each frame alone, so the bytes do not depend
// on the thread count) and written in order while the next ones compress.
//
// One-frame records are compressed on the worker threads too, several at once (a
// tool's nine 800 kB result records took 24 ms one after another): write() copies
// the record and returns; the frame goes out, in order, from the thread that finishes
// the frame at the head of the queue, and the sink is flushed whenever the queue runs
// dry (ByteSink::flush: a pipe's), so a consumer downstream gets each record as soon
// as it is compressed, not at the tool's next write. The frame is compressed by the
// same calls as on the calling thread: the same bytes. Small records (headers,
// scalars) are compressed at once: handing them over would cost more.
struct StreamWriter::Impl {
  static constexpr std::size_t kQueuedPayloadMin = std::size_t(64) << 10;
  ByteSink& out;
  int level = 1;
  bool stored = false;  // --compress none: frames of stored blocks
  ZSTD_CCtx* cctx = nullptr;
  std::vector<unsigned char> out_buf;
  ByteBuf frame_buf;
  bool magic_written = false;
  bool is_output = false;  // the tool's output: timed as the process phase "write output"

  // A one-frame record on its way: its content (stream magic where first, header
  // length, header, payload) and its frame.
  struct QueuedFrame {
    ByteBuf content, frame;
    std::size_t head_len = 0, text_len = 0;  // where the content's pieces end
    bool done = false;
    std::exception_ptr error;
  };
  std::mutex queue_m;
  std::condition_variable queue_cv;
  std::deque<std::unique_ptr<QueuedFrame>> queue;  // stream order
  std::vector<std::unique_ptr<QueuedFrame>> spare;
  bool emitting = false;                           // a thread is writing the queue's head
  std::exception_ptr failure;                      // the first error of a queued frame or of the sink

  Impl(ByteSink& o, int requested) : out(o) {
    level = requested == kCompressionDefault ? default_compression() : requested;
    stored = level == kCompressionNone;
    is_output = dynamic_cast<OutputFile*>(&o) != nullptr;
    if (!stored) {
      cctx = ZSTD_createCCtx();
      if (!cctx) fail_resource("out of memory creating a zstd encoder");
      check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level));
      check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1));
      out_buf.resize(ZSTD_CStreamOutSize());
    }
  }
  ~Impl() {
    // The queued frames' jobs use this object: every one ends first (an error that
    // unwinds the tool still leaves no worker writing into freed memory).
    std::unique_lock<std::mutex> lock(queue_m);
    wait_idle(lock);
    lock.unlock();
    ZSTD_freeCCtx(cctx);
  }

  // Under queue_m: waits until every queued frame is written (or failed).
  void wait_idle(std::unique_lock<std::mutex>& lock) {
    queue_cv.wait(lock, [&] { return queue.empty() && !emitting; });
  }

  static void check(std::size_t ret) {
    if (ZSTD_isError(ret)) fail_internal(std::string("zstd compression failed: ") + ZSTD_getErrorName(ret));
  }

  // Streams [src, src + n) through `c` into sink(bytes, count), as the calling
  // thread's frames are made (the queued ones go through the same calls).
  template <class Sink>
  static void feed(ZSTD_CCtx* c, std::vector<unsigned char>& buf, const void* src, std::size_t n, ZSTD_EndDirective mode,
                   Sink&& sink) {
    ZSTD_inBuffer zin{src, n, 0};
    for (;;) {
      ZSTD_outBuffer zout{buf.data(), buf.size(), 0};
      std::size_t remaining = ZSTD_compressStream2(c, &zout, &zin, mode);
      check(remaining);
      sink(buf.data(), zout.pos);
      bool done = mode == ZSTD_e_continue ? zin.pos == zin.size : remaining == 0;
      if (done) return;
    }
  }
  void feed(const void* src, std::size_t n, ZSTD_EndDirective mode) {
    feed(cctx, out_buf, src, n, mode, [this](const unsigned char* b, std::size_t k) { out.write(b, k); });
  }

  // Waits until every queued frame is written (or failed), then rethrows any error.
  void drain() {
    std::unique_lock<std::mutex> lock(queue_m);
    wait_idle(lock);
    if (failure) std::rethrow_exception(failure);
  }

  static void compress_queued(QueuedFrame& q, int lvl, bool raw) {
    const unsigned char* c = q.content.data.get();
    if (raw) {
      write_stored_frame(q.frame, {{c, q.content.size}});
      return;
    }
    // The pieces fed as the calling thread feeds them (a first call with ZSTD_e_end
    // would state the content size and change the frame's bytes).
    ZSTD_CCtx* z = thread_cctx(lvl);
    thread_local std::vector<unsigned char> buf(ZSTD_CStreamOutSize());
    q.frame.size = 0;
    auto append = [&q](const unsigned char* b, std::size_t k) {
      std::memcpy(q.frame.reserve(q.frame.size + k) + q.frame.size, b, k);
      q.frame.size += k;
    };
    const std::size_t payload_at = q.head_len + 4 + q.text_len;
    if (q.head_len) feed(z, buf, c, q.head_len, ZSTD_e_continue, append);
    feed(z, buf, c + q.head_len, 4, ZSTD_e_continue, append);
    feed(z, buf, c + q.head_len + 4, q.text_len, ZSTD_e_continue, append);
    feed(z, buf, c + payload_at, q.content.size - payload_at, ZSTD_e_end, append);
  }

  // A queued frame is made: writes the queue's head while it is done (whichever
  // thread gets here first does the writing; the others leave their frame to it),
  // then flushes the sink.
  void frame_made(QueuedFrame* q) {
    std::unique_lock<std::mutex> lock(queue_m);
    q->done = true;
    if (emitting) return;  // the thread writing now takes this frame too
    emitting = true;
    bool wrote = false;
    while (!queue.empty() && queue.front()->done) {
      std::unique_ptr<QueuedFrame> head = std::move(queue.front());
      queue.pop_front();
      const bool skip = failure != nullptr;  // after an error nothing more is written
      if (head->error && !failure) failure = head->error;
      lock.unlock();
      std::exception_ptr error;
      if (!skip && !head->error) {
        try {
          out.write(head->frame.data.get(), head->frame.size);
          wrote = true;
        } catch (...) {
          error = std::current_exception();
        }
      }
      lock.lock();
      if (error && !failure) failure = error;
      spare.push_back(std::move(head));
      if (queue.empty() && wrote && !failure) {
        lock.unlock();
        try {
          out.flush();
        } catch (...) {
          error = std::current_exception();
        }
        wrote = false;
        lock.lock();
        if (error && !failure) failure = error;
      }
    }
    emitting = false;
    queue_cv.notify_all();  // under the lock: a waiter may destroy this object as soon as it has it
  }

  void queue_frame(const unsigned char* head, std::size_t head_len, const unsigned char* len, const std::string& text,
                   const unsigned char* payload, std::size_t payload_len, WorkerPool& pool) {
    std::unique_ptr<QueuedFrame> q;
    {
      std::unique_lock<std::mutex> lock(queue_m);
      if (failure) std::rethrow_exception(failure);
      // At most a frame a worker, and two more, in flight (the memory stays bounded).
      const std::size_t window = static_cast<std::size_t>(pool.size()) + 2;
      queue_cv.wait(lock, [&] { return queue.size() < window || failure; });
      if (failure) std::rethrow_exception(failure);
      if (!spare.empty()) {
        q = std::move(spare.back());
        spare.pop_back();
      }
    }
    if (!q) q = std::make_unique<QueuedFrame>();
    q->done = false;
    q->error = nullptr;
    q->head_len = head_len;
    q->text_len = text.size();
    const std::size_t n = head_len + 4 + text.size() + payload_len;
    unsigned char* c = q->content.reserve(n);
    std::memcpy(c, head, head_len);
    std::memcpy(c + head_len, len, 4);
    std::memcpy(c + head_len + 4, text.data(), text.size());
    if (payload_len) std::memcpy(c + head_len + 4 + text.size(), payload, payload_len);
    q->content.size = n;
    QueuedFrame* raw_q = q.get();
    {
      std::lock_guard<std::mutex> lock(queue_m);
      queue.push_back(std::move(q));
    }
    const int lvl = level;
    const bool raw = stored;
    // Not under the lock: a pool without threads runs the job here.
    try {
      pool.submit([this, raw_q, lvl, raw] {
        try {
          compress_queued(*raw_q, lvl, raw);
        } catch (...) {
          raw_q->error = std::current_exception();
        }
        frame_made(raw_q);
      });
    } catch (...) {  // not queued (out of memory): the frame fails in its place, the writer with it
      raw_q->error = std::current_exception();
      frame_made(raw_q);
      drain();
    }
  }

  // payload_in_pieces: a split record's header frame only (write_in_pieces writes the payload frames).
  void write_frame(const json& header, const void* payload_v, std::size_t payload_len, bool payload_in_pieces = false) {
    const auto* payload = static_cast<const unsigned char*>(payload_v);
    std::string text = header.dump();
    if (text.size() > 0xffffffffu) fail_input("record header too large");
    unsigned char head[12];
    std::size_t head_len = 0;
    if (!magic_written) {
      std::memcpy(head, kStreamMagic, 8);
      store_u32_le(head + 8, kStreamVersion);
      head_len = 12;
      magic_written = true;
    }
    unsigned char len[4];
    store_u32_le(len, static_cast<std::uint32_t>(text.size()));
    const bool split = payload_len > kFramePayloadBytes;
    WorkerPool& pool = WorkerPool::io();
    if (!split && payload_len >= kQueuedPayloadMin && pool.size() > 1) {
      queue_frame(head, head_len, len, text, payload, payload_len, pool);
      return;
    }
    drain();  // the queued records go first
    const auto* text_bytes = reinterpret_cast<const unsigned char*>(text.data());
    if (stored) {
      write_stored_frame(frame_buf, {{head, head_len}, {len, 4}, {text_bytes, text.size()},
                                     {payload, split ? 0 : payload_len}});
      out.write(frame_buf.data.get(), frame_buf.size);
    } else {
      if (head_len) feed(head, head_len, ZSTD_e_continue);
      feed(len, 4, ZSTD_e_continue);
      if (split) {
        feed(text.data(), text.size(), ZSTD_e_end);
      } else {
        feed(text.data(), text.size(), ZSTD_e_continue);
        feed(payload, payload_len, ZSTD_e_end);
      }
    }
    if (split && !payload_in_pieces) write_payload_frames(payload, payload_len);
    out.flush();
  }

  void write_payload_frames(const unsigned char* payload, std::size_t bytes) {
    const std::size_t frames = (bytes + kFramePayloadBytes - 1) / kFramePayloadBytes;
    const int lvl = level;
    const bool raw = stored;
    make_in_order<ByteBuf>(
        WorkerPool::io(), frames,
        [payload, bytes, lvl, raw](std::size_t k, ByteBuf& dst) {
          const unsigned char* src = payload + k * kFramePayloadBytes;
          const std::size_t n = std::min(kFramePayloadBytes, bytes - k * kFramePayloadBytes);
          if (raw) {
            write_stored_frame(dst, {{src, n}});
            return;
          }
          const std::size_t cap = ZSTD_compressBound(n);
          const std::size_t got = ZSTD_compress2(thread_cctx(lvl), dst.reserve(cap), cap, src, n);
          check(got);
          dst.size = got;
        },
        [this](const ByteBuf& b) { out.write(b.data.get(), b.size); });
  }
};

void append_zstd_frame(std::string& out, int level, const void* a, std::size_t na, const void* b, std::size_t nb) {
  if (level == kCompressionDefault) level = default_compression();
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  if (level == kCompressionNone) {
    thread_local ByteBuf frame;
    write_stored_frame(frame, {{pa, na}, {pb, nb}});
    out.append(reinterpret_cast<const char*>(frame.data.get()), frame.size);
    return;
  }
  auto check = [](std::size_t ret) {
    if (ZSTD_isError(ret)) fail_internal(std::string("zstd compression failed: ") + ZSTD_getErrorName(ret));
  };
  ZSTD_CCtx* cctx = thread_cctx(level);
  check(ZSTD_CCtx_setPledgedSrcSize(cctx, na + nb));  // the frame states its size
  const std::size_t old = out.size();
  out.resize(old + ZSTD_compressBound(na + nb));
  ZSTD_outBuffer zout{out.data() + old, out.size() - old, 0};
  ZSTD_inBuffer za{a, na, 0}, zb{b, nb, 0};
  check(ZSTD_compressStream2(cctx, &zout, &za, ZSTD_e_continue));
  for (;;) {
    const std::size_t left = ZSTD_compressStream2(cctx, &zout, &zb, ZSTD_e_end);
    check(left);
    if (left == 0) break;
    if (zout.pos == zout.size) fail_internal("zstd frame larger than its bound");
  }
  out.resize(old + zout.pos);
}

StreamWriter::StreamWriter(ByteSink& out, int level) : impl_(std::make_unique<Impl>(out, level)) {}
StreamWriter::~StreamWriter() = default;

void StreamWriter::write(const std::string& name, DType dtype, const Shape& shape, const void* data, const json& attrs) {
  if (finished_) fail_internal("StreamWriter::write after finish()");
  if (!attrs.is_object()) fail_internal("attrs of record '" + name + "' must be a JSON object");
  std::uint64_t bytes = payload_bytes(dtype, shape);
  std::optional<timeline::Scope> phase;
  if (impl_->is_output) phase.emplace("write output", static_cast<double>(bytes));
  json header = {{"name", name}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"attrs", with_units(attrs, name, units_)}};
  impl_->write_frame(header, data, static_cast<std::size_t>(bytes));
  ++records_;
}

void StreamWriter::write(const Record& r) { write(r.name, r.dtype, r.shape, r.payload.data(), r.attrs); }

void StreamWriter::write_in_pieces(const std::string& name, DType dtype, const Shape& shape, const json& attrs,
                                   const PieceFill& fill) {
  const std::uint64_t bytes = payload_bytes(dtype, shape);
  if (bytes <= kPieceBytes) {  // one piece: as write()
    HostArray<std::byte> payload(static_cast<std::size_t>(bytes));
    if (bytes) fill(0, static_cast<std::size_t>(bytes), payload.data());
    write(name, dtype, shape, payload.data(), attrs);
    return;
  }
  if (finished_) fail_internal("StreamWriter::write_in_pieces after finish()");
  if (!attrs.is_object()) fail_internal("attrs of record '" + name + "' must be a JSON object");
  std::optional<timeline::Scope> phase;
  if (impl_->is_output) phase.emplace("write output", static_cast<double>(bytes));
  json header = {{"name", name}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"attrs", with_units(attrs, name, units_)}};
  impl_->write_frame(header, nullptr, static_cast<std::size_t>(bytes), /*payload_in_pieces=*/true);
  HostArray<unsigned char> piece(kPieceBytes);
  for (std::uint64_t at = 0; at < bytes; at += kPieceBytes) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPieceBytes, bytes - at));
    fill(at, n, piece.data());
    impl_->write_payload_frames(piece.data(), n);
  }
  impl_->out.flush();
  ++records_;
}

void StreamWriter::finish() {
  if (finished_) return;
  std::optional<timeline::Scope> phase;
  if (impl_->is_output) phase.emplace("write output");
  json end = {{"end", true}, {"records", records_}};
  impl_->write_frame(end, nullptr, 0);
  impl_->drain();
  finished_ = true;
}

void write_stream(const std::string& path, const std::vector<Record>& records) {
  OutputFile out(path);
  StreamWriter writer(out);
  for (const auto& r : records) writer.write(r);
  writer.finish();
  out.commit();
}

}  // namespace numpipe
