#include "stream.hpp"

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
#include <limits>

#include "signals.hpp"

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
  const std::byte* p = payload.data() + i * dtype_size(dtype);
  switch (dtype) {
    case DType::f8: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::f4: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::i8: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::i4: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::u8: { std::uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::u1: return static_cast<double>(std::to_integer<unsigned>(*p));
  }
  return 0.0;
}

// ---- sources and files -------------------------------------------------------------------
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
  } else {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) fail_input("cannot open input '" + path + "': " + std::strerror(errno));
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
    label_ = "stdout";
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

void OutputFile::open_temp() {
  std::vector<char> buf(temp_template_.begin(), temp_template_.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) fail_input("cannot create output '" + label_ + "' (temporary file " + temp_template_ + "): " + std::strerror(errno));
  temp_path_ = buf.data();
  register_temp_file(temp_path_);
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

void OutputFile::write(const void* src, std::size_t n) {
  if (!file_) open_temp();
  if (n && std::fwrite(src, 1, n, file_) != n)
    fail_resource("cannot write " + label_ + ": " + std::strerror(errno));
}

void OutputFile::commit() {
  if (committed_) return;
  if (is_stdout_) {
    if (std::fflush(stdout) != 0) fail_resource(std::string("cannot write stdout: ") + std::strerror(errno));
    committed_ = true;
    return;
  }
  if (is_stream_) {
    int err = std::fclose(file_) == 0 ? 0 : errno;
    file_ = nullptr;
    if (err) fail_resource("cannot write " + label_ + ": " + std::strerror(err));
    committed_ = true;
    return;
  }
  if (!file_) open_temp();  // an empty output is still an output
  bool ok = std::fflush(file_) == 0;
  int err = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok) {
    unlink(temp_path_.c_str());
    unregister_temp_file(temp_path_);
    fail_resource("cannot write " + label_ + ": " + std::strerror(err));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    err = errno;
    unlink(temp_path_.c_str());
    unregister_temp_file(temp_path_);
    fail_resource("cannot rename the finished output into place at '" + path_ + "': " + std::strerror(err));
  }
  unregister_temp_file(temp_path_);
  committed_ = true;
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

// Decompresses the input as one byte sequence, whatever its frame boundaries.
struct StreamReader::Impl {
  ByteSource& in;
  ReadLimits limits;
  ZSTD_DCtx* dctx = nullptr;
  std::vector<unsigned char> in_buf, out_buf;
  ZSTD_inBuffer zin{nullptr, 0, 0};
  std::size_t out_pos = 0, out_end = 0;
  bool input_eof = false;
  bool frame_open = false;        // inside a zstd frame that has not ended
  std::uint64_t decoded_bytes = 0;
  // Stream-level state.
  bool in_stream = false;         // magic read, end record not yet
  std::uint64_t records_in_stream = 0;
  std::uint64_t streams_done = 0;
  std::uint64_t record_index = 0; // over all streams, for messages

  Impl(ByteSource& f, ReadLimits l) : in(f), limits(l) {
    if (limits.max_bytes == 0) limits.max_bytes = default_max_bytes();
    dctx = ZSTD_createDCtx();
    if (!dctx) fail_resource("out of memory creating a zstd decoder");
    in_buf.resize(ZSTD_DStreamInSize());
    out_buf.resize(ZSTD_DStreamOutSize());
    zin.src = in_buf.data();
  }
  ~Impl() { ZSTD_freeDCtx(dctx); }

  [[noreturn]] void bad(const std::string& what) { fail_input(in.label() + ": " + what); }

  bool refill_input() {
    if (input_eof) return false;
    std::size_t got = in.read(in_buf.data(), in_buf.size());
    zin.size = got;
    zin.pos = 0;
    if (got == 0) input_eof = true;
    return got > 0;
  }

  // Decompresses into [dst, dst+n); returns the bytes produced (0 only at end of input).
  std::size_t decompress_some(unsigned char* dst, std::size_t n) {
    for (;;) {
      if (zin.pos == zin.size && !refill_input()) {
        if (frame_open) bad("truncated zstd frame: the input ends inside a compressed frame");
        return 0;
      }
      ZSTD_outBuffer zout{dst, n, 0};
      std::size_t ret = ZSTD_decompressStream(dctx, &zout, &zin);
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
      if (zout.pos > 0) return zout.pos;
    }
  }

  // After a frame's last content byte only its checksum may remain: consume it
  // now, so that a damaged frame is reported before its record is handed out.
  void settle_frame() {
    while (frame_open && out_pos == out_end) {
      std::size_t got = decompress_some(out_buf.data(), out_buf.size());
      out_pos = 0;
      out_end = got;
      if (got == 0) break;
    }
  }

  // Reads exactly n bytes unless the input ends first; returns bytes read.
  std::size_t read_bytes(void* dst_v, std::size_t n) {
    if (n == 0) return 0;  // an empty payload has no buffer: memcpy(nullptr, ..., 0) is undefined
    auto* dst = static_cast<unsigned char*>(dst_v);
    std::size_t done = 0;
    std::size_t staged = std::min(n, out_end - out_pos);
    std::memcpy(dst, out_buf.data() + out_pos, staged);
    out_pos += staged;
    done += staged;
    // Large reads decompress straight into the destination.
    while (n - done >= out_buf.size()) {
      std::size_t got = decompress_some(dst + done, n - done);
      if (got == 0) return done;
      done += got;
    }
    while (done < n) {
      std::size_t got = decompress_some(out_buf.data(), out_buf.size());
      if (got == 0) return done;
      out_pos = 0;
      out_end = got;
      std::size_t take = std::min(n - done, got);
      std::memcpy(dst + done, out_buf.data(), take);
      out_pos = take;
      done += take;
    }
    return done;
  }

  bool at_end_of_input() {
    if (out_pos < out_end) return false;
    std::size_t got = decompress_some(out_buf.data(), out_buf.size());
    out_pos = 0;
    out_end = got;
    return got == 0;
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
      if (header.is_discarded()) bad("the header of " + where() + " is not valid JSON");
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

  // Decompresses the pending payload through the staging buffer (so that its
  // frames' checksums are verified) without keeping it.
  void skip_payload() {
    if (!payload_pending) fail_internal("StreamReader::skip_payload without a pending record header");
    std::uint64_t left = pending_bytes;
    while (left > 0) {
      if (out_pos == out_end) {
        std::size_t got = decompress_some(out_buf.data(), out_buf.size());
        out_pos = 0;
        out_end = got;
        if (got == 0)
          bad("truncated payload in " + pending_label + ": expected " + human_bytes(pending_bytes) + ", got " +
              human_bytes(pending_bytes - left));
      }
      std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, out_end - out_pos));
      out_pos += take;
      left -= take;
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
  InputFile in(path);
  StreamReader reader(in, limits);
  return reader.read_records(keep);
}

// ---- writing ---------------------------------------------------------------------------
// One zstd frame per record (with its content checksum), so that a reader
// verifies each record before handing it out and a pipe consumer starts work
// as soon as a record is complete.
struct StreamWriter::Impl {
  ByteSink& out;
  ZSTD_CCtx* cctx = nullptr;
  std::vector<unsigned char> out_buf;
  bool magic_written = false;

  Impl(ByteSink& o, int level) : out(o) {
    if (level == 0) {
      level = 1;
      if (const char* env = std::getenv("NUMPIPE_ZSTD_LEVEL")) {
        char* end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (end == env || *end || v < -7 || v > 22)
          fail_input(std::string("NUMPIPE_ZSTD_LEVEL must be an integer in [-7, 22], got '") + env + "'");
        if (v != 0) level = static_cast<int>(v);
      }
    }
    cctx = ZSTD_createCCtx();
    if (!cctx) fail_resource("out of memory creating a zstd encoder");
    check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level));
    check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1));
    out_buf.resize(ZSTD_CStreamOutSize());
  }
  ~Impl() { ZSTD_freeCCtx(cctx); }

  static void check(std::size_t ret) {
    if (ZSTD_isError(ret)) fail_internal(std::string("zstd compression failed: ") + ZSTD_getErrorName(ret));
  }

  void feed(const void* src, std::size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer zin{src, n, 0};
    for (;;) {
      ZSTD_outBuffer zout{out_buf.data(), out_buf.size(), 0};
      std::size_t remaining = ZSTD_compressStream2(cctx, &zout, &zin, mode);
      check(remaining);
      out.write(out_buf.data(), zout.pos);
      bool done = mode == ZSTD_e_continue ? zin.pos == zin.size : remaining == 0;
      if (done) return;
    }
  }

  void write_frame(const json& header, const void* payload, std::size_t payload_len) {
    std::string text = header.dump();
    if (text.size() > 0xffffffffu) fail_input("record header too large");
    if (!magic_written) {
      unsigned char head[12];
      std::memcpy(head, kStreamMagic, 8);
      store_u32_le(head + 8, kStreamVersion);
      feed(head, sizeof head, ZSTD_e_continue);
      magic_written = true;
    }
    unsigned char len[4];
    store_u32_le(len, static_cast<std::uint32_t>(text.size()));
    feed(len, 4, ZSTD_e_continue);
    feed(text.data(), text.size(), ZSTD_e_continue);
    feed(payload, payload_len, ZSTD_e_end);
  }
};

StreamWriter::StreamWriter(ByteSink& out, int level) : impl_(std::make_unique<Impl>(out, level)) {}
StreamWriter::~StreamWriter() = default;

void StreamWriter::write(const std::string& name, DType dtype, const Shape& shape, const void* data, const json& attrs) {
  if (finished_) fail_internal("StreamWriter::write after finish()");
  if (!attrs.is_object()) fail_internal("attrs of record '" + name + "' must be a JSON object");
  std::uint64_t bytes = payload_bytes(dtype, shape);
  json header = {{"name", name}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"attrs", attrs}};
  impl_->write_frame(header, data, static_cast<std::size_t>(bytes));
  ++records_;
}

void StreamWriter::write(const Record& r) { write(r.name, r.dtype, r.shape, r.payload.data(), r.attrs); }

void StreamWriter::finish() {
  if (finished_) return;
  json end = {{"end", true}, {"records", records_}};
  impl_->write_frame(end, nullptr, 0);
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
