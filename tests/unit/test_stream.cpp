// Units for the stream format: round trips of every dtype, many records, empty
// arrays, concatenated streams, size arithmetic past 4 GiB, and the reader's
// refusals (the CLI tests cover the same refusals through the tools).
#include <doctest/doctest.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

#include "common/stream.hpp"

using namespace numpipe;

namespace {

std::string write_to_memory(const std::vector<Record>& records, int level = kCompressionDefault) {
  MemorySink sink;
  StreamWriter w(sink, level);
  for (const auto& r : records) w.write(r);
  w.finish();
  return sink.bytes;
}

std::vector<Record> read_from_memory(const std::string& bytes, ReadLimits limits = {}) {
  MemorySource src(bytes.data(), bytes.size(), "test");
  StreamReader r(src, limits);
  return r.read_all();
}

template <class T>
void check_round_trip(const std::vector<T>& values) {
  std::vector<Record> in;
  in.push_back(Record::from<T>("v", {static_cast<std::int64_t>(values.size())}, values.data(), {{"unit", "m"}}));
  auto out = read_from_memory(write_to_memory(in));
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "v");
  CHECK(out[0].dtype == dtype_of<T>());
  CHECK(out[0].shape == Shape{static_cast<std::int64_t>(values.size())});
  CHECK(out[0].attrs["unit"] == "m");
  // Bit-exact: compare the bytes, so NaN payloads and -0.0 count too.
  CHECK(std::memcmp(out[0].data<T>(), values.data(), values.size() * sizeof(T)) == 0);
}

std::string error_of(const std::string& bytes, ReadLimits limits = {}) {
  try {
    read_from_memory(bytes, limits);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  return "";
}

std::string compress(const std::string& raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  std::size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 1);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace

TEST_CASE("dtype names and sizes") {
  CHECK(dtype_size(DType::f8) == 8);
  CHECK(dtype_size(DType::f4) == 4);
  CHECK(dtype_size(DType::i8) == 8);
  CHECK(dtype_size(DType::i4) == 4);
  CHECK(dtype_size(DType::u8) == 8);
  CHECK(dtype_size(DType::u1) == 1);
  for (DType t : {DType::f8, DType::f4, DType::i8, DType::i4, DType::u8, DType::u1})
    CHECK(parse_dtype(dtype_name(t)) == t);
  CHECK_FALSE(parse_dtype("f2").has_value());
  CHECK_FALSE(parse_dtype("").has_value());
}

TEST_CASE("every dtype round-trips bit for bit") {
  check_round_trip<double>({0.0, -0.0, 1.5, -1e300, std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()});
  check_round_trip<float>({0.0f, -2.5f, 3.4e38f, std::numeric_limits<float>::quiet_NaN()});
  check_round_trip<std::int64_t>({0, -1, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
  check_round_trip<std::int32_t>({0, -7, std::numeric_limits<std::int32_t>::min()});
  check_round_trip<std::uint64_t>({0, std::numeric_limits<std::uint64_t>::max()});
  check_round_trip<std::uint8_t>({0, 1, 255});
}

TEST_CASE("many records, multi-dimensional shapes and empty arrays keep their order") {
  std::vector<Record> in;
  for (int k = 0; k < 300; ++k) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(k % 7) * 3);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = k * 1000 + static_cast<int>(i);
    in.push_back(Record::from<std::int32_t>("r" + std::to_string(k), {k % 7, 3}, v.data(), {{"k", k}}));
  }
  in.push_back(Record::make("empty", DType::f8, {0}));
  in.push_back(Record::make("empty2d", DType::f4, {4, 0}));
  in.push_back(Record::make("scalar", DType::f8, {}));  // a 0-d array holds one element
  *in.back().data<double>() = 42.0;
  auto out = read_from_memory(write_to_memory(in));
  REQUIRE(out.size() == in.size());
  for (std::size_t k = 0; k < 300; ++k) {
    CHECK(out[k].name == "r" + std::to_string(k));
    CHECK(out[k].attrs["k"] == static_cast<int>(k));
    CHECK(out[k].shape == Shape{static_cast<std::int64_t>(k % 7), 3});
    for (std::size_t i = 0; i < out[k].size(); ++i) CHECK(out[k].data<std::int32_t>()[i] == static_cast<int>(k * 1000 + i));
  }
  CHECK(out[300].size() == 0);
  CHECK(out[301].shape == Shape{4, 0});
  CHECK(out[301].size() == 0);
  CHECK(out[302].size() == 1);
  CHECK(*out[302].data<double>() == 42.0);
}

TEST_CASE("a large payload crosses zstd's buffer sizes intact") {
  std::vector<double> v(3'000'000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.001 * static_cast<double>(i)) * 1e3;
  std::vector<Record> in;
  in.push_back(Record::from<double>("big", {1000, 3000}, v.data()));
  in.push_back(Record::from<double>("tail", {3}, v.data()));
  for (int level : {1, 3}) {
    auto out = read_from_memory(write_to_memory(in, level));
    REQUIRE(out.size() == 2);
    CHECK(std::memcmp(out[0].data<double>(), v.data(), v.size() * 8) == 0);
    CHECK(out[1].data<double>()[2] == v[2]);
  }
}

TEST_CASE("size arithmetic beyond 4 GiB without allocating") {
  CHECK(element_count({65536, 65536, 2}) == 8589934592ULL);       // 2^33 elements
  CHECK(payload_bytes(DType::f8, {65536, 65536, 2}) == 68719476736ULL);  // 64 GiB
  CHECK(payload_bytes(DType::u1, {5000000000LL}) == 5000000000ULL);       // > 2^32
  CHECK(element_count({}) == 1);
  CHECK(element_count({0, 1LL << 62}) == 0);
  CHECK_THROWS_AS(element_count({1LL << 32, 1LL << 32}), Error);     // 2^64 elements
  CHECK_THROWS_AS(payload_bytes(DType::f8, {1LL << 61}), Error);      // 2^64 bytes
  CHECK(payload_bytes(DType::u1, {1LL << 62}) == (1ULL << 62));
  CHECK_THROWS_AS(element_count({-1}), Error);
  // A header announcing 64 GiB is refused by the limit before any allocation.
  std::string raw = std::string("NUMPIPE\0", 8) + std::string("\x01\0\0\0", 4);
  std::string h = R"({"name":"big","dtype":"f8","shape":[65536,65536,2]})";
  std::string len(4, '\0');
  for (int i = 0; i < 4; ++i) len[i] = static_cast<char>(h.size() >> (8 * i));
  ReadLimits small;
  small.max_bytes = 1 << 20;
  std::string msg = error_of(compress(raw + len + h), small);
  CHECK(msg.find("68719476736 bytes (64.0 GiB), over the --max-bytes limit") != std::string::npos);
}

TEST_CASE("concatenated streams read as one sequence of records") {
  std::vector<Record> a, b;
  double one = 1, two = 2;
  a.push_back(Record::from<double>("x", {1}, &one));
  b.push_back(Record::from<double>("y", {1}, &two));
  auto out = read_from_memory(write_to_memory(a) + write_to_memory(b));
  REQUIRE(out.size() == 2);
  CHECK(out[0].name == "x");
  CHECK(out[1].name == "y");
  CHECK(*out[1].data<double>() == 2);
}

TEST_CASE("the reader names what is wrong") {
  std::vector<Record> one;
  double v = 3;
  one.push_back(Record::from<double>("x", {1}, &v));
  std::string good = write_to_memory(one);
  CHECK(error_of("").find("empty input") != std::string::npos);
  CHECK(error_of("hello, world").find("not zstd-compressed") != std::string::npos);
  CHECK(error_of(compress("NUMPIPX")).find("bad magic") != std::string::npos);
  CHECK(error_of(good.substr(0, good.size() - 3)).find("truncated zstd frame") != std::string::npos);
  // Drop the end record's frame: a complete stream minus its end.
  std::vector<Record> none;
  std::string just_end = write_to_memory(none);  // magic + end record in one frame
  CHECK(error_of(compress(std::string("NUMPIPE\0", 8) + std::string("\x01\0\0\0", 4))).find("missing end record") !=
        std::string::npos);
  CHECK(read_from_memory(just_end).empty());
  // Deep nesting (found by the fuzzer: it overflowed the stack of dump()) is refused.
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  std::string h = R"({"name":"x","dtype":"f8","shape":)" + deep + "}";
  std::string len(4, '\0');
  for (int i = 0; i < 4; ++i) len[i] = static_cast<char>(h.size() >> (8 * i));
  std::string head = std::string("NUMPIPE\0", 8) + std::string("\x01\0\0\0", 4);
  CHECK(error_of(compress(head + len + h)).find("nests deeper than 64 levels") != std::string::npos);
  // 64 levels inside attrs are fine ("attrs" itself is level 2).
  std::string ok_attrs = R"({"name":"x","dtype":"f8","shape":[0],"attrs":{"a":)" + std::string(62, '[') + std::string(62, ']') + "}}";
  std::string ok_len(4, '\0');
  for (int i = 0; i < 4; ++i) ok_len[i] = static_cast<char>(ok_attrs.size() >> (8 * i));
  std::string end = R"({"end":true,"records":1})";
  std::string end_len(4, '\0');
  for (int i = 0; i < 4; ++i) end_len[i] = static_cast<char>(end.size() >> (8 * i));
  CHECK(read_from_memory(compress(head + ok_len + ok_attrs + end_len + end)).size() == 1);
  // A typed view of the wrong dtype is refused.
  auto out = read_from_memory(good);
  CHECK_THROWS_AS(out[0].data<float>(), Error);
  CHECK(out[0].to_vector<float>()[0] == 3.0f);
}

TEST_CASE("OutputFile renames into place on commit and leaves nothing otherwise") {
  char dir_template[] = "/tmp/numpipe-test-XXXXXX";
  REQUIRE(mkdtemp(dir_template));
  std::string dir = dir_template, path = dir + "/out.nps";
  auto count_files = [&] {
    int n = 0;
    for (const char* name : {"out.nps"}) n += access((dir + "/" + name).c_str(), F_OK) == 0;
    FILE* ls = popen(("ls -A " + dir + " | wc -l").c_str(), "r");
    int total = 0;
    REQUIRE(std::fscanf(ls, "%d", &total) == 1);
    pclose(ls);
    return std::make_pair(n, total);
  };
  {
    OutputFile out(path);
    out.write("abc", 3);
    CHECK(count_files() == std::make_pair(0, 1));  // only the temporary file
  }  // destroyed without commit
  CHECK(count_files() == std::make_pair(0, 0));
  {
    OutputFile out(path);
    out.write("abc", 3);
    out.commit();
  }
  CHECK(count_files() == std::make_pair(1, 1));
  std::ifstream f(path);
  std::string content;
  f >> content;
  CHECK(content == "abc");
  // over an existing file (its writeback started before the rename, the old file let go
  // on a thread): the new bytes in place, the old gone, nothing left beside them; a
  // reader that had the old file open still reads the old bytes
  {
    std::ifstream before(path);
    std::vector<char> big((std::size_t(64) << 20) + 4096);  // past one writeback chunk
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 23);
    {
      OutputFile out(path);
      out.write(big.data(), big.size() / 2);
      out.write(big.data() + big.size() / 2, big.size() - big.size() / 2);
      out.commit();
    }
    std::string old;
    before >> old;
    CHECK(old == "abc");
    std::ifstream after(path, std::ios::binary);
    std::vector<char> got((std::istreambuf_iterator<char>(after)), std::istreambuf_iterator<char>());
    CHECK(got == big);
    CHECK(count_files() == std::make_pair(1, 1));
  }
  std::remove(path.c_str());
  rmdir(dir.c_str());
  CHECK_THROWS_AS(OutputFile("/nonexistent-dir-for-numpipe/x.nps"), Error);
}
