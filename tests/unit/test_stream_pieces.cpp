// Units for StreamWriter::write_in_pieces: a payload made piece by piece gives the
// stream write() gives for the same payload, byte for byte, at every size around
// the frame and piece boundaries, compressed and stored.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "common/stream.hpp"

using namespace numpipe;

namespace {
// A payload that is not all one byte (so that a misplaced piece shows).
std::vector<unsigned char> pattern(std::size_t n) {
  std::vector<unsigned char> v(n);
  std::uint64_t x = 88172645463325252ull;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<unsigned char>(x % 7);  // compressible, not constant
  }
  return v;
}

std::string whole(const std::vector<unsigned char>& payload, int level) {
  MemorySink sink;
  StreamWriter w(sink, level);
  w.write("x", DType::u1, Shape{static_cast<std::int64_t>(payload.size())}, payload.data(), json{{"k", 1}});
  w.finish();
  return sink.bytes;
}

std::string in_pieces(const std::vector<unsigned char>& payload, int level, std::vector<std::size_t>& pieces) {
  MemorySink sink;
  StreamWriter w(sink, level);
  std::uint64_t expected_offset = 0;
  w.write_in_pieces("x", DType::u1, Shape{static_cast<std::int64_t>(payload.size())}, json{{"k", 1}},
                    [&](std::uint64_t offset, std::size_t bytes, void* dst) {
                      CHECK(offset == expected_offset);  // in order, none skipped
                      expected_offset += bytes;
                      pieces.push_back(bytes);
                      std::memcpy(dst, payload.data() + offset, bytes);
                    });
  w.finish();
  CHECK(expected_offset == payload.size());
  return sink.bytes;
}
}  // namespace

TEST_CASE("write_in_pieces: the same bytes as write(), each piece at most kPieceBytes") {
  const std::size_t frame = kFramePayloadBytes, piece = StreamWriter::kPieceBytes;
  for (int level : {1, kCompressionNone}) {
    for (std::size_t n : {std::size_t(0), std::size_t(1000), frame, frame + 3, piece, piece + 1, 2 * piece + frame + 17}) {
      CAPTURE(level);
      CAPTURE(n);
      const auto payload = pattern(n);
      std::vector<std::size_t> pieces;
      CHECK(in_pieces(payload, level, pieces) == whole(payload, level));
      for (std::size_t p : pieces) CHECK(p <= piece);
      if (n > piece) CHECK(pieces.size() == (n + piece - 1) / piece);
    }
  }
}
