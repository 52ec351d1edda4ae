// np-testcraft CASE: writes a deliberately malformed (or valid) stream to stdout,
// for the reader's bad-input tests. The decompressed bytes are built by hand and
// compressed as one zstd frame with its checksum, so each case breaks exactly one
// rule of the format.
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
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

// np-testcraft zeros NAME DTYPE SHAPE [COUNT [ATTRS]]: COUNT records (default 1) of
// zeros, compressed as they are made (1 MiB at a time), so that a stream holding
// gigabytes takes kilobytes and no memory to write (the memory-bound tests).
int zeros(int argc, char** argv) {
  const std::string name = argv[2], dtype = argv[3], shape = argv[4];
  const long count = argc > 5 ? std::atol(argv[5]) : 1;
  const std::string attrs = argc > 6 ? argv[6] : "{}";
  const std::size_t size = dtype == "u1" ? 1 : (dtype == "f4" || dtype == "i4") ? 4 : 8;
  unsigned long long bytes = size;
  std::string dims;
  for (std::size_t at = 0; at <= shape.size();) {
    std::size_t comma = shape.find(',', at);
    if (comma == std::string::npos) comma = shape.size();
    const unsigned long long d = std::stoull(shape.substr(at, comma - at));
    bytes *= d;
    dims += (dims.empty() ? "" : ",") + std::to_string(d);
    at = comma + 1;
  }
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_CStreamOutSize(), '\0');
  auto feed = [&](const void* src, std::size_t n, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{src, n, 0};
    for (;;) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      const std::size_t left = ZSTD_compressStream2(c, &o, &in, mode);
      if (ZSTD_isError(left)) std::exit(4);
      std::fwrite(out.data(), 1, o.pos, stdout);
      if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0) return;
    }
  };
  const std::string zero(1 << 20, '\0');
  const std::string head = magic();
  feed(head.data(), head.size(), ZSTD_e_continue);
  for (long r = 0; r < count; ++r) {
    const std::string h = header("{\"name\":\"" + name + "\",\"dtype\":\"" + dtype + "\",\"shape\":[" + dims +
                                 "],\"attrs\":" + attrs + "}");
    feed(h.data(), h.size(), ZSTD_e_continue);
    for (unsigned long long left = bytes; left > 0;) {
      const std::size_t n = left < zero.size() ? static_cast<std::size_t>(left) : zero.size();
      feed(zero.data(), n, ZSTD_e_continue);
      left -= n;
    }
    feed(nullptr, 0, ZSTD_e_end);
  }
  const std::string e = end(static_cast<int>(count));
  feed(e.data(), e.size(), ZSTD_e_end);
  ZSTD_freeCCtx(c);
  return 0;
}

// np-testcraft fill NAME DTYPE SHAPE VALUE [INDEX]: one f4 or f8 record of zeros with
// VALUE ("inf", "nan", "1e300") at flat INDEX (default 0): the non-finite inputs that
// gen-input refuses to write.
int fill(int argc, char** argv) {
  const std::string name = argv[2], dtype = argv[3], shape = argv[4];
  const double value = std::strtod(argv[5], nullptr);
  const unsigned long long index = argc > 6 ? std::stoull(argv[6]) : 0;
  unsigned long long count = 1;
  for (std::size_t at = 0; at <= shape.size();) {
    std::size_t comma = shape.find(',', at);
    if (comma == std::string::npos) comma = shape.size();
    count *= std::stoull(shape.substr(at, comma - at));
    at = comma + 1;
  }
  std::string values;
  for (unsigned long long i = 0; i < count; ++i) {
    const double v = i == index ? value : 0.0;
    const float f = static_cast<float>(v);
    if (dtype == "f4") values.append(reinterpret_cast<const char*>(&f), sizeof f);
    else values.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  const std::string out = compress(magic() + header("{\"name\":\"" + name + "\",\"dtype\":\"" + dtype +
                                                    "\",\"shape\":[" + shape + "],\"attrs\":{}}") + values + end(1));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 5 && std::string(argv[1]) == "zeros") return zeros(argc, argv);
  if (argc >= 6 && std::string(argv[1]) == "fill") return fill(argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: np-testcraft CASE | np-testcraft zeros NAME DTYPE SHAPE [COUNT [ATTRS]]\n");
    return 2;
  }
  std::string c = argv[1], raw;
  bool raw_output = false;
  // CASE:N forms: a header nesting N levels in its attrs, a shape of N dimensions of 1
  const auto colon = c.find(':');
  const int arg = colon == std::string::npos ? 0 : std::atoi(c.c_str() + colon + 1);
  if (colon != std::string::npos) c = c.substr(0, colon);
  if (c == "valid") raw = magic() + good_record() + end(1);
  else if (c == "deep-attrs")
    raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[2],"attrs":{"a":)" + std::string(arg, '[') +
                           std::string(arg, ']') + "}}") + payload_f8(2) + end(1);
  else if (c == "many-dims") {
    std::string dims = "1";
    for (int i = 1; i < arg; ++i) dims += ",1";
    raw = magic() + header(R"({"name":"x","dtype":"f8","shape":[)" + dims + "]}") + payload_f8(1) + end(1);
  } else if (c == "surrogate-name")
    raw = magic() + header(R"({"name":"x\ud800","dtype":"f8","shape":[2]})") + payload_f8(2) + end(1);
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
