// The numpipe stream format (.nps), DESIGN.md "Stream format":
//
//   a sequence of zstd frames (content checksum on); decompressed:
//     "NUMPIPE\0"  u32 version (=1)
//     record*      u32 header_length, header (UTF-8 JSON), payload
//     end record   header {"end": true, "records": N}
//
// A record header is {"name", "dtype", "shape", "attrs"}; the payload is
// prod(shape) * sizeof(dtype) bytes, little-endian, C order. Several streams
// may be concatenated (`cat a.nps b.nps`): after an end record a reader accepts
// a new magic and goes on. Readers never seek and work on pipes.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "host_array.hpp"

namespace numpipe {

using json = nlohmann::json;

inline constexpr char kStreamMagic[8] = {'N', 'U', 'M', 'P', 'I', 'P', 'E', '\0'};
inline constexpr std::uint32_t kStreamVersion = 1;

// ---- element types -------------------------------------------------------------
enum class DType : std::uint8_t { f8, f4, i8, i4, u8, u1 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, double>) return DType::f8;
  else if constexpr (std::is_same_v<T, float>) return DType::f4;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::i8;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DType::i4;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return DType::u8;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::u1;
  else static_assert(sizeof(T) == 0, "no numpipe dtype for this type");
}

using Shape = std::vector<std::int64_t>;

// Element count of a shape; bad-input error on a negative size or on overflow of 2^63.
std::uint64_t element_count(const Shape& shape);
// Payload size in bytes, with the same checks.
std::uint64_t payload_bytes(DType t, const Shape& shape);
std::string shape_string(const Shape& shape);  // "[3, 4]"

// ---- records ---------------------------------------------------------------------
struct Record {
  std::string name;
  DType dtype = DType::f8;
  Shape shape;
  json attrs = json::object();
  HostArray<std::byte> payload;

  std::size_t size() const { return static_cast<std::size_t>(element_count(shape)); }

  // Typed view of the payload; bad-input error when the dtype is not T's.
  template <class T>
  const T* data() const {
    check_dtype(dtype_of<T>());
    return reinterpret_cast<const T*>(payload.data());
  }
  template <class T>
  T* data() {
    check_dtype(dtype_of<T>());
    return reinterpret_cast<T*>(payload.data());
  }
  // Element i converted to double, whatever the dtype (for verify, inspect, reports).
  double value_as_double(std::size_t i) const;
  // The whole array converted to T (any numeric dtype; integer -> float is exact up to 2^53).
  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> out(size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(value_as_double(i));
    return out;
  }
  // The values of to_vector into out[0, size()), on all threads (each value alone: the
  // same bits on any thread count); for a large record this is also the first touch
  // of `out`. T: float or double.
  template <class T>
  void convert_to(T* out) const;

  // Makes a record of the given type and shape with an uninitialised payload.
  static Record make(std::string name, DType dtype, Shape shape, json attrs = json::object());
  template <class T>
  static Record from(std::string name, Shape shape, const T* values, json attrs = json::object()) {
    Record r = make(std::move(name), dtype_of<T>(), std::move(shape), std::move(attrs));
    if (r.payload.bytes()) std::memcpy(r.payload.data(), values, r.payload.bytes());
    return r;
  }

 private:
  void check_dtype(DType wanted) const;
};

// ---- byte sources and sinks --------------------------------------------------------
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; fewer only at end of input.
  virtual std::size_t read(void* dst, std::size_t n) = 0;
  virtual const std::string& label() const = 0;  // for messages: "stdin", a path
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* src, std::size_t n) = 0;
  // A record is complete: hands what is buffered to a reader waiting downstream (a
  // pipe's), so that it need not wait for the next record.
  virtual void flush() {}
};

// Bytes held in memory (tests, the fuzzer, profile records).
class MemorySource : public ByteSource {
 public:
  MemorySource(const void* data, std::size_t size, std::string label = "memory")
      : data_(static_cast<const unsigned char*>(data)), size_(size), label_(std::move(label)) {}
  std::size_t read(void* dst, std::size_t n) override;
  const std::string& label() const override { return label_; }

 private:
  const unsigned char* data_;
  std::size_t size_, pos_ = 0;
  std::string label_;
};

class MemorySink : public ByteSink {
 public:
  void write(const void* src, std::size_t n) override { bytes.append(static_cast<const char*>(src), n); }
  std::string bytes;
};

// Input: a path, or "-" for stdin. Sequential reads only.
class InputFile : public ByteSource {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile() override;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::size_t read(void* dst, std::size_t n) override;
  const std::string& label() const override { return label_; }

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::string label_;
};

// Output: a path, or "-" for stdout. A path is written through a temporary file
// in the same folder, renamed into place by commit(); destroyed without commit
// (an error, an exception) the temporary file is removed, so a failure never
// leaves a half-written result. A path that is a device or a FIFO (/dev/null,
// a named pipe) is written directly; a symbolic link's target file is replaced.
// Binary output to a terminal is refused.
class OutputFile : public ByteSink {
 public:
  explicit OutputFile(const std::string& path, bool binary = true);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(const void* src, std::size_t n) override;
  void flush() override;  // a pipe, FIFO or socket only (a file gains nothing from it)
  void commit();
  const std::string& label() const { return label_; }

 private:
  std::FILE* file_ = nullptr;
  bool is_stdout_ = false;
  bool is_stream_ = false;  // a device or FIFO, written in place
  bool committed_ = false;
  bool replaces_file_ = false;  // the path names an existing regular file
  bool flush_records_ = false;  // a pipe, FIFO or socket: each record handed on when complete
  std::uint64_t written_ = 0, written_back_ = 0;
  static constexpr std::uint64_t kWritebackChunk = std::uint64_t(64) << 20;
  std::string path_, temp_path_, temp_template_, label_;
  void open_temp();
  void start_writeback();
  [[noreturn]] void fail_write(int err) const;  // exit 3: "cannot write LABEL: the error"
};

// ---- reading ------------------------------------------------------------------------
struct ReadLimits {
  std::uint64_t max_bytes = 0;              // largest payload accepted; 0 = default_max_bytes()
  std::uint64_t max_header_bytes = 1u << 24;  // 16 MiB of JSON per record
  // Largest total of the payloads read_records() keeps; 0 = max_bytes (--max-bytes bounds
  // one record and the total a tool holds).
  std::uint64_t max_total_bytes = 0;
};
// Half of physical memory: a sane bound for one record held in RAM.
std::uint64_t default_max_bytes();

// A record's header, read before its payload (StreamReader::next_header): a tool
// decides from it whether it needs the payload, and how much memory its work
// will take, before anything large is allocated.
struct RecordHeader {
  std::string name;
  DType dtype = DType::f8;
  Shape shape;
  json attrs = json::object();
  std::uint64_t bytes = 0;  // the payload's size
  std::uint64_t index = 0;  // over every stream of the input, for messages
  std::string label() const;  // "record 3 'x'"
};

// Which records to keep: true keeps the record, false passes over its payload;
// the filter may also refuse the input (fail_input naming the record).
using RecordFilter = std::function<bool(const RecordHeader&)>;

class StreamReader {
 public:
  explicit StreamReader(ByteSource& in, ReadLimits limits = {});
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Reads the next record into `out` (whose old payload is released first, so a
  // consumer that goes record by record holds one at a time). Returns false once
  // the input ends after a complete stream. Throws bad-input errors (exit 2)
  // naming the problem.
  bool next(Record& out);
  // The lazy form: reads the next record's header (every check of the format but
  // the payload's); the payload then is read by read_payload() or passed over by
  // skip_payload(), which decompresses it through a small buffer (its checksum is
  // still verified) without holding it. A next_header() with a payload pending
  // skips it.
  bool next_header(RecordHeader& out);
  void read_payload(RecordHeader&& header, Record& out);
  void skip_payload();
  // Every remaining record the filter keeps (all without one), the others passed
  // over unread; refuses (exit 2) when the kept payloads would exceed
  // ReadLimits::max_total_bytes.
  std::vector<Record> read_records(const RecordFilter& keep);
  // Every remaining record (read_records without a filter).
  std::vector<Record> read_all();
  const std::string& label() const;  // the input's label: "stdin", a path

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a whole stream from a path or "-": the records `keep` keeps (all without one).
std::vector<Record> read_stream(const std::string& path, ReadLimits limits = {}, const RecordFilter& keep = {});

// ---- writing ------------------------------------------------------------------------
// Output compression: a zstd level (-7 to 22), or none: frames of stored (raw) zstd
// blocks, which every zstd reader reads, written and read at memory speed.
inline constexpr int kCompressionNone = 0;
// The writer's default: --compress (set_output_compression), else NUMPIPE_ZSTD_LEVEL,
// else 1 (floating-point payloads barely compress: speed matters more than ratio).
inline constexpr int kCompressionDefault = -1000;
// "none" (0), "fast" (zstd's --fast=5, level -5) or a level 1 to 19 (--compress);
// bad input (exit 2) naming `what` otherwise.
int parse_compression(const std::string& spec, const std::string& what);
// Sets the level that writers made with kCompressionDefault use (the common --compress option).
void set_output_compression(int level);
// The level kCompressionDefault stands for now.
int default_compression();

// Payload bytes per zstd frame of a large record: a record whose payload is larger
// is written as a frame holding its header, then frames of this many payload bytes
// (the last one shorter), compressed in parallel and decompressed in parallel. The
// frames depend only on the data and the level, never on the thread count.
inline constexpr std::size_t kFramePayloadBytes = std::size_t(1) << 20;

// Appends one complete zstd frame holding [a, a + na) then [b, b + nb) to `out`, with
// its content size stated (readers decode such frames on their worker threads) and
// the checksum on; level as StreamWriter's (kCompressionDefault, kCompressionNone for
// stored blocks). The bytes depend only on the data and the level. For writers that
// frame a stream themselves (par::StreamOut); safe on any thread.
void append_zstd_frame(std::string& out, int level, const void* a, std::size_t na, const void* b = nullptr,
                       std::size_t nb = 0);

class StreamWriter {
 public:
  // level: a zstd level, kCompressionNone, or kCompressionDefault.
  explicit StreamWriter(ByteSink& out, int level = kCompressionDefault);
  ~StreamWriter();
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  void write(const Record& r);
  void write(const std::string& name, DType dtype, const Shape& shape, const void* data, const json& attrs = json::object());
  template <class T>
  void write(const std::string& name, const Shape& shape, const T* data, const json& attrs = json::object()) {
    write(name, dtype_of<T>(), shape, data, attrs);
  }
  // Writes a record whose payload is made in pieces, so that memory is bounded by a
  // piece, not by the payload: fill(offset, bytes, dst) writes the payload's bytes
  // [offset, offset + bytes) to dst, called in order, piece after piece. The stream's
  // bytes are write()'s for the same payload (pieces are whole payload frames).
  using PieceFill = std::function<void(std::uint64_t offset, std::size_t bytes, void* dst)>;
  static constexpr std::size_t kPieceBytes = 16 * kFramePayloadBytes;
  void write_in_pieces(const std::string& name, DType dtype, const Shape& shape, const json& attrs,
                       const PieceFill& fill);
  // Writes the end record and flushes. The OutputFile is committed by its owner.
  void finish();
  std::uint64_t records_written() const { return records_; }
  // A workload's units (common/units.hpp), written into the attrs of every record after.
  void set_units(json table) { units_ = std::move(table); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t records_ = 0;
  bool finished_ = false;
  json units_ = json::object();
};

// Convenience: writes `records` as one complete stream to a path or "-", atomically.
void write_stream(const std::string& path, const std::vector<Record>& records);

}  // namespace numpipe
