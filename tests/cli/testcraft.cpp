// np-testcraft CASE: writes a deliberately malformed (or valid) stream to stdout,
// for the reader's bad-input tests. The decompressed bytes are built by hand and
// compressed as one zstd frame with its checksum, so each case breaks exactly one
// rule of the format.
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

std::string u32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

std::string magic(std::uint32_t version = 1) { return std::string("NUMPIPE\0", 8) + u32(version); }
std::string header(const std::string& json) { return u32(static_cast<std::uint32_t>(json.size())) + json; }
std::string payload_f8(int n) { return std::string(static_cast<std::size_t>(8 * n), '\x01'); }
std::string end(int n) { return header("{\"end\":true,\"records\":" + std::to_string(n) + "}"); }
std::string good_record() { return header(R"({"name":"x","dtype":"f8","shape":[2],"attrs":{}})") + payload_f8(2); }

std::string compress(const std::string& raw) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  std::size_t n = ZSTD_compress2(c, out.data(), out.size(), raw.data(), raw.size());
  ZSTD_freeCCtx(c);
  if (ZSTD_isError(n)) {
    std::fprintf(stderr, "np-testcraft: zstd failed\n");
    std::exit(4);
  }
  out.resize(n);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: np-testcraft CASE\n");
    return 2;
  }
  std::string c = argv[1], raw;
  bool raw_output = false;
  if (c == "valid") raw = magic() + good_record() + end(1);
  else if (c == "not-zstd") { raw = "this is plain text, not a numpipe stream\n"; raw_output = true; }
  else if (c == "bad-magic") raw = std::string("NUMPIPX\0", 8) + u32(1) + good_record() + end(1);
  else if (c == "bad-version") raw = magic(7) + good_record() + end(1);
  else if (c == "truncated-payload") raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[10],"attrs":{}})") + payload_f8(5);
  else if (c == "truncated-header") raw = magic() + u32(100) + "{\"name\":";
  else if (c == "header-not-json") raw = magic() + header("{name: x, this is not json") + end(0);
  else if (c == "header-not-object") raw = magic() + header("[1, 2, 3]") + end(0);
  else if (c == "missing-name") raw = magic() + header(R"({"dtype":"f8","shape":[2]})") + payload_f8(2) + end(1);
  else if (c == "missing-dtype") raw = magic() + header(R"({"name":"x","shape":[2]})") + payload_f8(2) + end(1);
  else if (c == "missing-shape") raw = magic() + header(R"({"name":"x","dtype":"f8"})") + payload_f8(2) + end(1);
  else if (c == "unknown-dtype") raw = magic() + header(R"({"name":"x","dtype":"c16","shape":[2]})") + payload_f8(4) + end(1);
  else if (c == "negative-shape") raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[-2]})") + end(1);
  else if (c == "overflow-shape")
    raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[4611686018427387904,4611686018427387904]})") + end(1);
  else if (c == "overflow-bytes") raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[4611686018427387904]})") + end(1);
  else if (c == "huge-shape") raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[1000000,1000000]})") + end(1);
  else if (c == "bad-attrs") raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[2],"attrs":[1]})") + payload_f8(2) + end(1);
  else if (c == "missing-end") raw = magic() + good_record();
  else if (c == "end-count") raw = magic() + good_record() + end(3);
  else if (c == "trailing-garbage") raw = magic() + good_record() + end(1) + "garbage after the end";
  else if (c == "two-streams") raw = magic() + good_record() + end(1) + magic() + good_record() + end(1);
  else if (c == "bad-checksum") {
    // A valid frame whose last byte (part of the content checksum) is flipped.
    std::string z = compress(magic() + good_record() + end(1));
    z.back() = static_cast<char>(z.back() ^ 0x5a);
    std::fwrite(z.data(), 1, z.size(), stdout);
    return 0;
  } else {
    std::fprintf(stderr, "np-testcraft: unknown case '%s'\n", c.c_str());
    return 2;
  }
  std::string out = raw_output ? raw : compress(raw);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
