// Units for the stream's framing and threads: large records split into frames of
// kFramePayloadBytes, compressed and decompressed on the worker threads (the bytes
// must not depend on the thread count), stored (uncompressed) frames that any zstd
// decoder reads, reading from a pipe, and the refusals of damaged frames.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

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
