// Units for the hardening of the common library: the lazy reader (headers first,
// payloads read or passed over, the total bound), the memory budget, the
// non-finite checks, the option checks made before any work.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/finite.hpp"
#include "common/labels.hpp"
#include "common/memory.hpp"
#include "common/stream.hpp"
#include "test_util.hpp"

using namespace numpipe;
using test::Argv;

namespace {

template <class... R>
std::string stream_of(const R&... records) {  // Records are move-only: no initializer_list
  MemorySink sink;
  StreamWriter w(sink);
  (w.write(records), ...);
  w.finish();
  return sink.bytes;
}

Record ramp(const std::string& name, int n, double start) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = start + i;
  return Record::from<double>(name, {n}, v.data(), {{"kind", name + "-kind"}});
}

// The exit code and message of what f throws (ExitCode::ok when nothing).
template <class F>
std::pair<ExitCode, std::string> outcome(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::ok, ""};
}

struct EnvGuard {  // sets an environment variable for one test case
  std::string name;
  EnvGuard(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~EnvGuard() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("lazy reading: headers first, payloads read or passed over with their checks") {
  const std::string bytes = stream_of(ramp("a", 3, 0), ramp("b", 100000, 1), ramp("c", 2, 7));
  MemorySource src(bytes.data(), bytes.size(), "test");
  StreamReader reader(src);
  RecordHeader h;
  Record r;
  REQUIRE(reader.next_header(h));
  CHECK(h.name == "a");
  CHECK(h.index == 0);
  CHECK(h.bytes == 24);
  CHECK(h.attrs["kind"] == "a-kind");
  CHECK(h.label() == "record 0 'a'");
  reader.read_payload(std::move(h), r);
  CHECK(r.name == "a");
  CHECK(r.data<double>()[2] == 2);
  h = RecordHeader();
  REQUIRE(reader.next_header(h));
  CHECK(h.name == "b");
  CHECK(h.shape == Shape{100000});
  reader.skip_payload();
  h = RecordHeader();
  REQUIRE(reader.next_header(h));
  CHECK(h.name == "c");
  CHECK(h.index == 2);
  reader.read_payload(std::move(h), r);
  CHECK(r.data<double>()[1] == 8);
  h = RecordHeader();
  CHECK_FALSE(reader.next_header(h));

  // a header followed by the next header: the pending payload is passed over
  MemorySource src2(bytes.data(), bytes.size(), "test");
  StreamReader r2(src2);
  RecordHeader h2;
  REQUIRE(r2.next_header(h2));
  REQUIRE(r2.next_header(h2));
  CHECK(h2.name == "b");
  REQUIRE(r2.next_header(h2));
  CHECK(h2.name == "c");

  // a damaged payload that is passed over is still refused (its checksum is checked)
  std::string damaged = stream_of(ramp("a", 3, 0), ramp("b", 1000, 1));
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x5a);
  MemorySource src3(damaged.data(), damaged.size(), "damaged");
  StreamReader r3(src3);
  auto [code, message] = outcome([&] { r3.read_records([](const RecordHeader&) { return false; }); });
  CHECK(code == ExitCode::bad_input);
  CHECK(message.find("damaged: ") == 0);
}

TEST_CASE("read_records keeps what the filter keeps, within the total bound") {
  const std::string bytes = stream_of(ramp("a", 1000, 0), ramp("b", 1000, 1), ramp("a", 1000, 2));
  {
    MemorySource src(bytes.data(), bytes.size(), "test");
    StreamReader reader(src);
    auto kept = reader.read_records([](const RecordHeader& h) { return h.name == "a"; });
    REQUIRE(kept.size() == 2);
    CHECK(kept[1].data<double>()[0] == 2);
  }
  {  // 16000 bytes kept: within 16000, not within 15999
    ReadLimits limits;
    limits.max_bytes = 16000;
    MemorySource src(bytes.data(), bytes.size(), "test");
    StreamReader reader(src, limits);
    CHECK(reader.read_records([](const RecordHeader& h) { return h.name == "a"; }).size() == 2);
    limits.max_bytes = 15999;
    MemorySource src2(bytes.data(), bytes.size(), "test");
    StreamReader reader2(src2, limits);
    auto [code, message] = outcome([&] { reader2.read_records([](const RecordHeader& h) { return h.name == "a"; }); });
    CHECK(code == ExitCode::bad_input);
    CHECK(message.find("the records kept so far (1, 8000 bytes) and record 2 'a' (8000 bytes) are over the --max-bytes "
                       "limit of 15999 bytes") != std::string::npos);
  }
  {  // a filter may refuse the input from a header
    MemorySource src(bytes.data(), bytes.size(), "test");
    StreamReader reader(src);
    auto [code, message] = outcome([&] { reader.read_records(keep_names_once({"a"})); });
    CHECK(code == ExitCode::bad_input);
    CHECK(message == "the input holds two records 'a' (records 0 and 2): give one (for example, not two concatenated streams)");
  }
}

TEST_CASE("shapes of more than 32 dimensions are refused") {
  Shape ok(32, 1), over(33, 1);
  std::vector<double> one{1.0};
  const std::string good = stream_of(Record::from<double>("x", ok, one.data()));
  MemorySource src(good.data(), good.size(), "test");
  CHECK(StreamReader(src).read_all().size() == 1);
  const std::string bad = stream_of(Record::from<double>("x", over, one.data()));
  MemorySource src2(bad.data(), bad.size(), "test");
  StreamReader reader(src2);
  auto [code, message] = outcome([&] { reader.read_all(); });
  CHECK(code == ExitCode::bad_input);
  CHECK(message == "test: the shape of record 0 'x' has 33 dimensions, more than 32");
}

TEST_CASE("labels records recognised from their headers; attrs of another type are not labels") {
  RecordHeader h;
  h.dtype = DType::u1;
  h.shape = {3, 4};
  h.attrs = {{"kind", "labels"}, {"labels_of", "x"}};
  CHECK(is_labels(h));
  CHECK(labels_of(h.attrs) == "x");
  // a hostile stream's attrs: numbers where text is expected pass as "not labels" (a
  // filter that threw here would end the tool with exit 4, an internal error)
  h.attrs = {{"kind", 5}, {"labels_of", "x"}};
  CHECK_FALSE(is_labels(h));
  h.attrs = {{"kind", "labels"}, {"labels_of", 7}};
  CHECK(is_labels(h));
  CHECK(labels_of(h.attrs).empty());
  h.attrs = {{"kind", "labels"}};
  h.shape = {3};
  CHECK_FALSE(is_labels(h));
  h.shape = {3, 4};
  h.dtype = DType::f8;
  CHECK_FALSE(is_labels(h));
  std::vector<std::uint8_t> bytes(12, 0);
  Record r = Record::from<std::uint8_t>("x_label", {3, 4}, bytes.data(), {{"kind", true}});
  CHECK_FALSE(is_labels(r));  // json's value() would have thrown
  CHECK(is_labels(make_labels("x_label", {"a", "b"}, "x", "date")));
}

TEST_CASE("memory budget: NUMPIPE_MEMORY_LIMIT, the refusal's message") {
  CHECK(format_bytes(100) == "100 bytes");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(3.5 * 1073741824.0) == "3.5 GiB");
  {
    EnvGuard env("NUMPIPE_MEMORY_LIMIT", "1M");
    const HostMemory m = available_host_memory();
    CHECK(m.known);
    CHECK(m.bytes == 1048576);
    CHECK(m.source == "NUMPIPE_MEMORY_LIMIT=1M");
    CHECK_NOTHROW(require_host_memory({"a small problem", 1000, 1000, "item"}));
    auto [code, message] = outcome([] { require_host_memory({"n = 100", 1000, 2000, "cell", 1048576}); });
    CHECK(code == ExitCode::resource);
    CHECK(message == "not enough memory for n = 100: the run needs about 2.9 MiB (2000 bytes per cell and 1.0 MiB), "
                     "1.0 MiB available (NUMPIPE_MEMORY_LIMIT=1M); use a smaller problem, or a machine with more memory");
    CHECK(out_of_memory_message().find("1.0 MiB available now") != std::string::npos);
  }
  {
    EnvGuard env("NUMPIPE_MEMORY_LIMIT", "12x");
    CHECK(outcome([] { available_host_memory(); }).first == ExitCode::bad_input);
  }
  const HostMemory real = available_host_memory();  // /proc/meminfo is there on Linux
  CHECK(real.known);
  CHECK(real.bytes > 0);
}

TEST_CASE("require_finite names the record, the index and the value") {
  std::vector<double> v(12, 1.0);
  CHECK(first_non_finite(v.data(), v.size()) == -1);
  CHECK_NOTHROW(require_finite(ExitCode::bad_input, "x", Shape{3, 4}, v.data(), "why"));
  v[9] = -std::numeric_limits<double>::infinity();
  v[11] = std::nan("");
  CHECK(first_non_finite(v.data(), v.size()) == 9);
  CHECK(index_in(Shape{3, 4}, 9) == "[2, 1]");
  CHECK(index_in(Shape{2, 3, 4}, 23) == "[1, 2, 3]");
  auto [code, message] = outcome([&] { require_finite(ExitCode::internal, "x", Shape{3, 4}, v.data(), "a bug"); });
  CHECK(code == ExitCode::internal);
  CHECK(message == "x[2, 1] is -inf: a bug");
  std::vector<float> f(3000000, 0.f);  // the parallel scan finds the lowest index
  f[2999999] = NAN;
  f[1234567] = INFINITY;
  CHECK(first_non_finite(f.data(), f.size()) == 1234567);
  // the largest finite values, subnormals and negative zero are finite; every kind of
  // non-finite value is found, the lowest index first, whatever block it falls in
  std::vector<double> d(5000001, -0.0);
  d[7] = std::numeric_limits<double>::max();
  d[8] = -std::numeric_limits<double>::max();
  d[9] = std::numeric_limits<double>::denorm_min();
  CHECK(first_non_finite(d.data(), d.size()) == -1);
  d[4999999] = -std::numeric_limits<double>::infinity();
  CHECK(first_non_finite(d.data(), d.size()) == 4999999);
  d[4096 * 700 + 4095] = std::nan("");
  d[4096 * 700 + 4094] = std::numeric_limits<double>::infinity();
  CHECK(first_non_finite(d.data(), d.size()) == 4096 * 700 + 4094);
  d[0] = -std::nan("");
  CHECK(first_non_finite(d.data(), d.size()) == 0);
  std::vector<float> g(4097, std::numeric_limits<float>::max());
  g[4096] = -INFINITY;
  CHECK(first_non_finite(g.data(), g.size()) == 4096);
}

TEST_CASE("options checked before any work: --threads, --device, --devices, --profile, MPI") {
  auto parse = [](unsigned common, std::vector<std::string> words) {
    return outcome([&] {
      Cli cli({"tooltest", "", "", ""}, common);
      Argv a(std::move(words));
      cli.parse(a.argc(), a.argv());
    });
  };
  const unsigned all = kInput | kOutput | kCompute | kProfile | kMultiDevice;
  const std::string over = std::to_string(max_threads() + 1);
  auto [code, message] = parse(all, {"tooltest", "--threads", over});
  CHECK(code == ExitCode::bad_input);
  CHECK(message.find("--threads " + over + " is more than 64 threads per core") == 0);
  CHECK(parse(all, {"tooltest", "--threads", "2"}).first == ExitCode::ok);
  CHECK(parse(all, {"tooltest", "--device", "-1"}).second == "--device must be >= 0, got -1");
  CHECK(parse(all, {"tooltest", "--devices", "bogus"}).first == ExitCode::bad_input);
  CHECK(parse(all, {"tooltest", "--devices", "0,1"}).first == ExitCode::ok);
  CHECK(parse(all, {"tooltest", "--profile", "/nonexistent/p.prof"}).second ==
        "cannot create the --profile file '/nonexistent/p.prof' (folder '/nonexistent'): No such file or directory");
  CHECK(parse(all, {"tooltest", "--profile", "/tmp"}).second == "--profile '/tmp' is a folder, not a file");
  {
    EnvGuard env("OMPI_COMM_WORLD_SIZE", "3");
    CHECK(parse(all, {"tooltest"}).second ==
          "tooltest does not run under MPI: mpirun started 3 copies of it; run it as one process");
    CHECK(parse(all | kMpi, {"tooltest"}).first == ExitCode::ok);
  }
  {
    EnvGuard env("OMP_NUM_THREADS", "100000000");
    CHECK(parse(all, {"tooltest"}).first == ExitCode::bad_input);
  }
}
