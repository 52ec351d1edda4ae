// Units for the stream's framing and threads: large records split into frames of
// kFramePayloadBytes, compressed and decompressed on the worker threads (the bytes
// must not depend on the thread count), stored (uncompressed) frames that any zstd
// decoder reads, reading from a pipe, and the refusals of damaged frames.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <fcntl.h>
#include <poll.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>

#include "common/parallel.hpp"
#include "common/stream.hpp"
#include "common/workers.hpp"

using namespace numpipe;

namespace {

// A payload of doubles that is neither incompressible nor trivial: a smooth field
// with noise in its low bits.
std::vector<double> field(std::size_t n, unsigned seed) {
  std::vector<double> v(n);
  std::uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (std::size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    v[i] = std::sin(0.001 * static_cast<double>(i)) + static_cast<double>(s % 1000) * 1e-9;
  }
  return v;
}

std::string write_records(const std::vector<Record>& records, int level) {
  MemorySink sink;
  StreamWriter w(sink, level);
  for (const auto& r : records) w.write(r);
  w.finish();
  return sink.bytes;
}

std::vector<Record> read_records(const std::string& bytes, const RecordFilter& keep = {}) {
  MemorySource src(bytes.data(), bytes.size(), "test");
  StreamReader r(src);
  return r.read_records(keep);
}

std::string error_of(const std::string& bytes) {
  try {
    read_records(bytes);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "";
}

// The zstd frames of a stream: their compressed sizes, in order.
std::vector<std::size_t> frame_sizes(const std::string& bytes) {
  std::vector<std::size_t> sizes;
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t n = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
    REQUIRE(!ZSTD_isError(n));
    sizes.push_back(n);
    at += n;
  }
  return sizes;
}

// The size of the frame header at `at` (RFC 8878 3.1.1.1): magic, descriptor, window
// descriptor unless single-segment, dictionary id, content size.
std::size_t frame_header_size(const std::string& bytes, std::size_t at) {
  const unsigned fhd = static_cast<unsigned char>(bytes[at + 4]), fcs = fhd >> 6;
  const bool single = fhd & 0x20;
  const std::size_t dict[4] = {0, 1, 2, 4}, fcs_bytes[4] = {single ? 1u : 0u, 2, 4, 8};
  return 5 + (single ? 0 : 1) + dict[fhd & 3] + fcs_bytes[fcs];
}

// The whole stream decompressed by libzstd alone (every frame's checksum checked).
std::string plain_zstd_decompress(const std::string& bytes) {
  std::string out;
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::vector<char> buf(1 << 16);
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    const std::size_t r = ZSTD_decompressStream(d, &o, &in);
    REQUIRE_MESSAGE(!ZSTD_isError(r), ZSTD_getErrorName(r));
    out.append(buf.data(), o.pos);
  }
  ZSTD_freeDCtx(d);
  return out;
}

std::vector<Record> mixed_records() {
  std::vector<Record> rs;
  const std::vector<double> big = field(3 * kFramePayloadBytes / 8 + 12345, 1);  // 3 full frames and a short one
  rs.push_back(Record::from<double>("big", {static_cast<std::int64_t>(big.size())}, big.data(), {{"k", 1}}));
  const std::vector<double> small = field(1000, 2);
  rs.push_back(Record::from<double>("small", {1000}, small.data()));
  const std::vector<double> exact = field(kFramePayloadBytes / 8, 3);  // exactly one frame's worth: one frame
  rs.push_back(Record::from<double>("exact", {static_cast<std::int64_t>(exact.size())}, exact.data()));
  std::vector<float> f(2 * kFramePayloadBytes / 4 + 1, 0.5f);  // compresses to almost nothing
  rs.push_back(Record::from<float>("flat", {static_cast<std::int64_t>(f.size())}, f.data()));
  return rs;
}

// Records of one frame each, large enough to be compressed on the worker threads
// (64 KiB to 1 MiB of payload), more of them than a small pool has workers.
std::vector<Record> one_frame_records(int count) {
  std::vector<Record> rs;
  for (int k = 0; k < count; ++k) {
    const std::size_t n = (std::size_t(64) << 10) / 8 + static_cast<std::size_t>(k) * 9001;
    const std::vector<double> v = field(n, 100 + static_cast<unsigned>(k));
    rs.push_back(Record::from<double>("r" + std::to_string(k), {static_cast<std::int64_t>(n)}, v.data(), {{"k", k}}));
  }
  return rs;
}

// A sink that counts what reaches it, and fails from its `fail_at`-th write on.
class CountingSink : public ByteSink {
 public:
  explicit CountingSink(int fail_at = -1) : fail_at_(fail_at) {}
  void write(const void* src, std::size_t n) override {
    std::lock_guard<std::mutex> lock(m_);
    if (fail_at_ >= 0 && writes_ >= fail_at_) fail_resource("test sink: disk full");
    ++writes_;
    bytes_.append(static_cast<const char*>(src), n);
  }
  void flush() override {
    std::lock_guard<std::mutex> lock(m_);
    ++flushes_;
  }
  std::string bytes() {
    std::lock_guard<std::mutex> lock(m_);
    return bytes_;
  }
  int flushes() {
    std::lock_guard<std::mutex> lock(m_);
    return flushes_;
  }

 private:
  std::mutex m_;
  int fail_at_, writes_ = 0, flushes_ = 0;
  std::string bytes_;
};

void check_same(const std::vector<Record>& a, const std::vector<Record>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].shape == b[i].shape);
    CHECK(a[i].attrs == b[i].attrs);
    REQUIRE(a[i].payload.bytes() == b[i].payload.bytes());
    CHECK(std::memcmp(a[i].payload.data(), b[i].payload.data(), a[i].payload.bytes()) == 0);
  }
}

}  // namespace

TEST_CASE("large records are split into frames of kFramePayloadBytes after a header frame") {
  WorkerPool::reset_io_for_testing(3);
  const auto rs = mixed_records();
  for (int level : {1, -5, kCompressionNone}) {
    CAPTURE(level);
    const std::string bytes = write_records(rs, level);
    // big: header frame + 4 payload frames; small: 1; exact: 1; flat: header + 3; end: 1.
    CHECK(frame_sizes(bytes).size() == 5 + 1 + 1 + 4 + 1);
    check_same(read_records(bytes), rs);
    // The decompressed bytes are the format of DESIGN.md, whatever the framing: plain
    // libzstd decodes the stream, and the magic starts it.
    const std::string raw = plain_zstd_decompress(bytes);
    CHECK(raw.compare(0, 8, std::string(kStreamMagic, 8)) == 0);
  }
}

TEST_CASE("the output bytes do not depend on the number of threads") {
  const auto rs = mixed_records();
  for (int level : {1, 3, kCompressionNone}) {
    CAPTURE(level);
    WorkerPool::reset_io_for_testing(1);
    const std::string one = write_records(rs, level);
    WorkerPool::reset_io_for_testing(5);
    const std::string five = write_records(rs, level);
    WorkerPool::reset_io_for_testing(16);
    const std::string sixteen = write_records(rs, level);
    CHECK(one == five);
    CHECK(one == sixteen);
    // and reading with any thread count gives the same records
    for (int t : {1, 2, 7}) {
      WorkerPool::reset_io_for_testing(t);
      check_same(read_records(one), rs);
    }
  }
}

TEST_CASE("a record of at most one frame's payload is written as before: one frame, no stated size") {
  // The writer of earlier versions: header and payload through one streaming context.
  const std::vector<double> v = field(5000, 4);
  std::vector<Record> rs;
  rs.push_back(Record::from<double>("v", {5000}, v.data()));
  const std::string bytes = write_records(rs, 1);
  const auto sizes = frame_sizes(bytes);
  REQUIRE(sizes.size() == 2);
  CHECK(ZSTD_getFrameContentSize(bytes.data(), bytes.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
}

TEST_CASE("stored frames: what --compress none writes, checked by libzstd's own checksum") {
  WorkerPool::reset_io_for_testing(4);
  for (std::size_t n : {0ul, 1ul, 31ul, 32ul, 33ul, 1000ul, 131072ul / 8, 131072ul / 8 + 1, 3 * kFramePayloadBytes / 8 + 7}) {
    CAPTURE(n);
    const std::vector<double> v = field(n, 5);
    std::vector<Record> rs;
    rs.push_back(Record::from<double>("v", {static_cast<std::int64_t>(n)}, v.data()));
    const std::string bytes = write_records(rs, kCompressionNone);
    const std::string raw = plain_zstd_decompress(bytes);  // fails on a wrong XXH64 or block layout
    // Stored: the stream is the decompressed bytes plus a few bytes per frame and block.
    CHECK(bytes.size() < raw.size() + 64 + raw.size() / 10000);
    check_same(read_records(bytes), rs);
    // The first frame states its size (8 bytes) and is one segment.
    CHECK(ZSTD_getFrameContentSize(bytes.data(), bytes.size()) != ZSTD_CONTENTSIZE_UNKNOWN);
  }
}

TEST_CASE("NUMPIPE_ZSTD_LEVEL=0 and --compress none write stored frames; bad values are refused") {
  CHECK(parse_compression("none", "--compress") == kCompressionNone);
  CHECK(parse_compression("fast", "--compress") < 0);
  CHECK(parse_compression("7", "--compress") == 7);
  for (const char* bad : {"0", "20", "-1", "x", "", "3x"}) {
    CAPTURE(bad);
    try {
      parse_compression(bad, "--compress");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      CHECK(std::string(e.what()).find("--compress must be none, fast or a zstd level") != std::string::npos);
    }
  }
  const std::vector<double> v = field(100000, 6);
  std::vector<Record> rs;
  rs.push_back(Record::from<double>("v", {100000}, v.data()));
  setenv("NUMPIPE_ZSTD_LEVEL", "0", 1);
  const std::string env_none = write_records(rs, kCompressionDefault);
  setenv("NUMPIPE_ZSTD_LEVEL", "banana", 1);
  CHECK_THROWS_WITH_AS(write_records(rs, kCompressionDefault), doctest::Contains("NUMPIPE_ZSTD_LEVEL must be"), Error);
  unsetenv("NUMPIPE_ZSTD_LEVEL");
  CHECK(env_none == write_records(rs, kCompressionNone));
  set_output_compression(kCompressionNone);  // as --compress none does, over the environment
  setenv("NUMPIPE_ZSTD_LEVEL", "3", 1);
  CHECK(write_records(rs, kCompressionDefault) == env_none);
  unsetenv("NUMPIPE_ZSTD_LEVEL");
  set_output_compression(kCompressionDefault);
  CHECK(write_records(rs, kCompressionDefault) == write_records(rs, 1));
}

TEST_CASE("frames decoded in parallel from a pipe, straight into the payload") {
  WorkerPool::reset_io_for_testing(4);
  const auto rs = mixed_records();
  for (int level : {1, kCompressionNone}) {
    CAPTURE(level);
    const std::string bytes = write_records(rs, level);
    char dir[] = "/tmp/numpipe-frames-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string fifo = std::string(dir) + "/pipe";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // The writer trickles the stream in pieces of odd sizes, as a producer in a pipe does.
    std::thread producer([&] {
      FILE* f = std::fopen(fifo.c_str(), "wb");
      for (std::size_t at = 0; f && at < bytes.size(); at += 70001) {
        std::fwrite(bytes.data() + at, 1, std::min<std::size_t>(70001, bytes.size() - at), f);
        std::fflush(f);
      }
      if (f) std::fclose(f);
    });
    std::vector<Record> got;
    try {
      got = read_stream(fifo);
    } catch (...) {
      producer.join();
      throw;
    }
    producer.join();
    unlink(fifo.c_str());
    rmdir(dir);
    check_same(got, rs);
  }
}

TEST_CASE("lazy reading passes over split records, checking their frames") {
  WorkerPool::reset_io_for_testing(3);
  const auto rs = mixed_records();
  const std::string bytes = write_records(rs, 1);
  const auto kept = read_records(bytes, [](const RecordHeader& h) { return h.name == "small" || h.name == "flat"; });
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].name == "small");
  CHECK(kept[1].name == "flat");
  // A damaged payload frame of a record passed over is still refused.
  const auto sizes = frame_sizes(bytes);
  std::string damaged = bytes;
  const std::size_t third = sizes[0] + sizes[1] + sizes[2];  // the big record's second payload frame
  damaged[third + sizes[3] / 2] ^= 0x40;
  MemorySource src(damaged.data(), damaged.size(), "test");
  StreamReader reader(src);
  CHECK_THROWS_WITH_AS(reader.read_records([](const RecordHeader& h) { return h.name == "small"; }),
                       doctest::Contains("corrupt"), Error);
}

TEST_CASE("damaged and truncated split records are refused with the reader's messages") {
  WorkerPool::reset_io_for_testing(4);
  const auto rs = mixed_records();
  for (int level : {1, kCompressionNone}) {
    CAPTURE(level);
    const std::string bytes = write_records(rs, level);
    const auto sizes = frame_sizes(bytes);
    const std::size_t payload1 = sizes[0] + sizes[1];  // the big record's second payload frame
    // a flipped content byte: the checksum (stored frames) or the decoder (compressed) refuses it
    std::string flipped = bytes;
    flipped[payload1 + sizes[2] / 2] ^= 0x01;
    CHECK(error_of(flipped).find("corrupt") != std::string::npos);
    // a flipped checksum byte
    std::string sum = bytes;
    sum[payload1 + sizes[2] - 1] ^= 0x80;
    CHECK(error_of(sum).find("checksum mismatch") != std::string::npos);
    // cut inside a payload frame, and at a frame boundary inside the payload
    CHECK(error_of(bytes.substr(0, payload1 + sizes[2] / 2)).find("truncated zstd frame") != std::string::npos);
    CHECK(error_of(bytes.substr(0, payload1 + sizes[2])).find("truncated payload in record 0 'big'") != std::string::npos);
    // a reserved block type in a payload frame's first block header
    std::string reserved = bytes;
    const std::size_t header = frame_header_size(bytes, payload1);
    reserved[payload1 + header] = static_cast<char>(reserved[payload1 + header] | 0x06);
    CHECK(error_of(reserved).find("corrupt") != std::string::npos);
  }
  // a frame whose header claims more than it holds (stored: the stated size is checked)
  std::vector<Record> one;
  const std::vector<double> v = field(kFramePayloadBytes / 8 * 2, 7);
  one.push_back(Record::from<double>("v", {static_cast<std::int64_t>(v.size())}, v.data()));
  std::string bytes = write_records(one, kCompressionNone);
  const auto sizes = frame_sizes(bytes);
  std::string lying = bytes;
  lying[sizes[0] + 5] = static_cast<char>(lying[sizes[0] + 5] + 1);  // content size + 1
  CHECK(error_of(lying).find("corrupt") != std::string::npos);
}

namespace {
// Hand-made frames (RFC 8878) without checksums: stored frames, and frames of RLE
// blocks that state `fcs` as their size: a few bytes that take the reader's parallel
// path. The fuzz target starts from the same streams (tests/fuzz/corpus/e2e-rle-*,
// written by tests/fuzz/make-seeds.sh; checked below byte for byte).
std::string le(std::uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string stored_frame(const std::string& content) {
  std::string f = le(0xFD2FB528u, 4) + '\xE0' + le(content.size(), 8);
  std::size_t pos = 0;
  do {
    const std::size_t n = std::min<std::size_t>(131072, content.size() - pos);
    pos += n;
    f += le((std::uint64_t(n) << 3) | (pos == content.size() ? 1 : 0), 3) + content.substr(pos - n, n);
  } while (pos < content.size());
  return f;
}
std::string rle_frame(std::size_t size, char byte, std::uint64_t fcs, unsigned type = 1) {
  std::string f = le(0xFD2FB528u, 4) + '\xA0' + le(fcs, 4);
  for (std::size_t left = size; left > 0;) {
    const std::size_t n = std::min<std::size_t>(131072, left);
    left -= n;
    f += le((std::uint64_t(n) << 3) | (type << 1) | (left == 0 ? 1 : 0), 3) + byte;
  }
  return f;
}
// A u1 record's header frame (the stream's magic and version in front of the first).
// The fuzz target reads a record when (index + name length) % 4 is 0 or 3 and passes
// over it otherwise: "abc" first is read (in place, frame by frame), "a" first and
// "b" second are skipped.
std::string u1_header(const std::string& name, std::size_t n, bool first) {
  const std::string h = json({{"name", name}, {"dtype", "u1"}, {"shape", {n}}, {"attrs", json::object()}}).dump();
  return stored_frame((first ? std::string("NUMPIPE\0", 8) + le(1, 4) : std::string()) + le(h.size(), 4) + h);
}
std::string end_frame(int records) {
  const std::string e = json({{"end", true}, {"records", records}}).dump();
  return stored_frame(le(e.size(), 4) + e);
}

struct HandMade {
  const char* seed;  // tests/fuzz/corpus/<seed> is '\0' (the fuzz target's raw mode) + bytes
  std::string bytes;
};
std::vector<HandMade> hand_made_streams() {
  const std::string a64k = u1_header("a", 65536, true), abc64k = u1_header("abc", 65536, true);
  const std::string whole = u1_header("abc", 65536 * 3, true) + rle_frame(65536 * 3, 'A', 65536 * 3);
  return {
      {"e2e-rle-3x64k", u1_header("abc", 196608, true) + rle_frame(65536, 1, 65536) + rle_frame(65536, 2, 65536) +
                            rle_frame(65536, 3, 65536) + u1_header("b", 65536, false) + rle_frame(65536, 4, 65536) +
                            end_frame(2)},
      {"e2e-rle-64k", a64k + rle_frame(65536, 'A', 65536) + end_frame(1)},
      {"e2e-rle-lying-size", abc64k + rle_frame(65536, 'A', 65537) + end_frame(1)},  // one byte more than it holds
      {"e2e-rle-reserved-block", abc64k + rle_frame(65536, 'A', 65536, 3) + end_frame(1)},
      {"e2e-rle-truncated", whole.substr(0, whole.size() - 1)},                    // cut inside the frame
      {"e2e-rle-overlong", a64k + rle_frame(131072, 'A', 131072) + end_frame(1)},  // longer than the payload
  };
}
}  // namespace

TEST_CASE("hand-made frames that state their size: read in parallel, or refused as before") {
  WorkerPool::reset_io_for_testing(3);
  const auto streams = hand_made_streams();
  const auto rs = read_records(streams[0].bytes);
  REQUIRE(rs.size() == 2);
  REQUIRE(rs[0].payload.bytes() == 196608);
  const auto* a = reinterpret_cast<const unsigned char*>(rs[0].payload.data());
  CHECK(a[0] == 1);
  CHECK(a[65535] == 1);
  CHECK(a[65536] == 2);
  CHECK(a[196607] == 3);
  REQUIRE(rs[1].payload.bytes() == 65536);
  CHECK(reinterpret_cast<const unsigned char*>(rs[1].payload.data())[65535] == 4);
  const auto one = read_records(streams[1].bytes);
  REQUIRE(one.size() == 1);
  CHECK(reinterpret_cast<const unsigned char*>(one[0].payload.data())[65535] == 'A');
  CHECK(error_of(streams[2].bytes).find("corrupt zstd data") != std::string::npos);
  CHECK(error_of(streams[3].bytes).find("corrupt zstd data") != std::string::npos);
  CHECK(error_of(streams[4].bytes).find("truncated zstd frame") != std::string::npos);
  // the frame's tail is read as the next record's header length ("AAAA")
  CHECK(error_of(streams[5].bytes).find("header of record 1 is 1094795585 bytes") != std::string::npos);
}

TEST_CASE("the fuzz target's seeds for the parallel path are these streams") {
  const char* source = std::getenv("NUMPIPE_SOURCE_DIR");
  if (!source) return;  // run outside ctest: nothing to compare with
  for (const auto& s : hand_made_streams()) {
    CAPTURE(s.seed);
    const std::string path = std::string(source) + "/tests/fuzz/corpus/" + s.seed;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    REQUIRE(f != nullptr);
    std::string seed;
    char buf[4096];
    for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;) seed.append(buf, got);
    std::fclose(f);
    CHECK(seed == std::string(1, '\0') + s.bytes);
  }
}

TEST_CASE("records of one frame are compressed on the workers, in order, with the calling thread's bytes") {
  const auto rs = one_frame_records(11);
  for (int level : {1, -5, kCompressionNone}) {
    CAPTURE(level);
    WorkerPool::reset_io_for_testing(1);  // one thread: every frame made where write() is called
    const std::string here = write_records(rs, level);
    WorkerPool::reset_io_for_testing(3);
    const std::string queued = write_records(rs, level);
    CHECK(here == queued);
    CHECK(frame_sizes(queued).size() == rs.size() + 1);
    check_same(read_records(queued), rs);
    if (level != kCompressionNone)  // fed as a stream, as before: no stated size
      CHECK(ZSTD_getFrameContentSize(queued.data(), queued.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  }
}

TEST_CASE("a record compressed on a worker reaches the sink without waiting for the next write") {
  WorkerPool::reset_io_for_testing(4);
  const auto rs = one_frame_records(1);
  const std::string whole = write_records(rs, 1);
  const std::size_t first_frame = frame_sizes(whole).front();
  CountingSink sink;
  StreamWriter w(sink, 1);
  w.write(rs[0]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((sink.bytes().size() < first_frame || sink.flushes() == 0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(sink.bytes() == whole.substr(0, first_frame));
  CHECK(sink.flushes() >= 1);
  w.finish();
  CHECK(sink.bytes() == whole);
}

TEST_CASE("a sink's error while records are compressed on the workers comes back to the writer's caller") {
  WorkerPool::reset_io_for_testing(4);
  const auto rs = one_frame_records(10);
  for (int fail_at : {0, 3}) {
    CAPTURE(fail_at);
    CountingSink sink(fail_at);
    bool thrown = false;
    try {
      StreamWriter w(sink, 1);
      for (const auto& r : rs) w.write(r);
      w.finish();
    } catch (const Error& e) {
      thrown = true;
      CHECK(e.code() == ExitCode::resource);
      CHECK(std::string(e.what()).find("disk full") != std::string::npos);
    }
    CHECK(thrown);
    // nothing was written after the failure, and what was written is whole frames in order
    const std::string got = sink.bytes();
    const std::string whole = write_records(rs, 1);
    CHECK(whole.compare(0, got.size(), got) == 0);
  }
}

TEST_CASE("an output into a pipe hands on each record when it is complete") {
  WorkerPool::reset_io_for_testing(4);
  const std::vector<double> v = field(100, 9);  // a small record: it would sit in stdio's buffer
  std::vector<Record> rs;
  rs.push_back(Record::from<double>("small", {100}, v.data()));
  const Record& small = rs[0];
  const std::string whole = write_records(rs, 1);
  const std::size_t first_frame = frame_sizes(whole).front();
  char dir[] = "/tmp/numpipe-flush-XXXXXX";
  REQUIRE(mkdtemp(dir));
  const std::string fifo = std::string(dir) + "/pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::promise<std::string> first;
  std::thread reader([&] {
    const int fd = open(fifo.c_str(), O_RDONLY);
    std::string got;
    bool told = false;
    char buf[4096];
    for (;;) {  // read to the end (the writer never meets a closed pipe), telling the first frame on arrival
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20000) <= 0) break;
      const ssize_t k = read(fd, buf, sizeof buf);
      if (k <= 0) break;
      got.append(buf, static_cast<std::size_t>(k));
      if (!told && got.size() >= first_frame) {
        first.set_value(got);
        told = true;
      }
    }
    if (!told) first.set_value(got);
    close(fd);
  });
  auto arrived = first.get_future();
  {
    OutputFile out(fifo);
    StreamWriter w(out, 1);
    w.write(small);
    const bool in_time = arrived.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    CHECK(in_time);
    if (in_time) CHECK(arrived.get() == whole.substr(0, first_frame));
    w.finish();
    out.commit();
  }
  reader.join();
  unlink(fifo.c_str());
  rmdir(dir);
}

TEST_CASE("the MPI writer hands each record on when it is complete") {
  const std::vector<double> v = field(1000, 5);
  std::vector<Record> rs;
  rs.push_back(Record::from<double>("a", {1000}, v.data(), {{"k", 1}}));
  CountingSink sink;
  par::StreamOut w(&sink, 1);  // one process: rank 0
  w.write(rs[0].name, rs[0].dtype, rs[0].shape, rs[0].payload.data(), rs[0].attrs);
  CHECK(sink.flushes() == 1);
  CHECK(!sink.bytes().empty());
  w.finish();
  CHECK(sink.flushes() == 2);
  check_same(read_records(sink.bytes()), rs);
}
