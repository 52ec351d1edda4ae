// Units for the common library: reproducible random numbers, the CLI
// conventions, backend selection, profile records.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "common/cli.hpp"
#include "common/dtype.hpp"
#include "common/labels.hpp"
#include "common/strings.hpp"
#include "common/profile.hpp"
#include "common/progress.hpp"
#include "common/random.hpp"
#include "common/workers.hpp"
#include "test_util.hpp"

using namespace numpipe;
using test::Argv;

TEST_CASE("Rng follows mt19937_64 exactly and converts portably") {
  // The C++ standard fixes mt19937_64's 10000th output for the default seed 5489.
  Rng r(5489);
  std::uint64_t x = 0;
  for (int i = 0; i < 10000; ++i) x = r.next_u64();
  CHECK(x == 9981545732273789042ULL);
  Rng a(7), b(7);
  for (int i = 0; i < 100; ++i) CHECK(a.uniform() == b.uniform());
  Rng u(1);
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double v = u.uniform();
    CHECK(v >= 0.0);
    CHECK(v < 1.0);
    sum += v;
  }
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.01));
  Rng g(2);
  sum = 0;
  for (int i = 0; i < n; ++i) {
    double v = g.normal();
    sum += v;
    sum2 += v * v;
  }
  CHECK(std::fabs(sum / n) < 0.01);          // mean 0 within ~4.5 standard errors
  CHECK(sum2 / n == doctest::Approx(1.0).epsilon(0.02));
  Rng k(3);
  for (int i = 0; i < 1000; ++i) {
    auto v = k.integer(-3, 3);
    CHECK(v >= -3);
    CHECK(v <= 3);
  }
  Rng gm(4);
  sum = 0;
  for (int i = 0; i < n; ++i) sum += gm.gamma(2.5);
  CHECK(sum / n == doctest::Approx(2.5).epsilon(0.02));  // Gamma(k, 1) has mean k
}

TEST_CASE("Cli: common options, defaults and bad usage") {
  Cli cli({"tooltest", "a test tool", "", "  tooltest | inspect"}, kInput | kOutput | kCompute | kProfile | kMultiDevice);
  cli.add("Own")("count", "a number", cxxopts::value<int>()->default_value("3"));
  Argv args({"tooltest", "-i", "in.nps", "--backend", "cpu", "--threads", "2", "--count", "5", "--devices", "0,2"});
  cli.parse(args.argc(), args.argv());
  CHECK(cli.input() == "in.nps");
  CHECK(cli.output() == "-");
  CHECK(cli.get<int>("count") == 5);
  CHECK(cli.backend() == Backend::cpu);
  CHECK(cli.threads() == 2);
  CHECK(cli.devices() == std::vector<int>{0, 2});
  CHECK(cli.profile_path().empty());
  CHECK(cli.command_line() == "tooltest -i in.nps --backend cpu --threads 2 --count 5 --devices 0,2");
  CHECK(cli.help().find("Example:\n  tooltest | inspect") != std::string::npos);
  json attrs = cli.stamp({{"kind", "x"}}, json{{"history", json::array({{{"tool", "gen-input"}}})}});
  REQUIRE(attrs["history"].size() == 2);
  CHECK(attrs["history"][0]["tool"] == "gen-input");
  CHECK(attrs["history"][1]["tool"] == "tooltest");
  CHECK(attrs["kind"] == "x");

  Cli bad({"tooltest", "", "", ""}, kCompute);
  Argv unknown({"tooltest", "--frobnicate"});
  try {
    bad.parse(unknown.argc(), unknown.argv());
    FAIL("unknown option accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()).find("see tooltest --help") != std::string::npos);
  }
  Cli neg({"tooltest", "", "", ""}, kCompute);
  Argv negative({"tooltest", "--threads", "-1"});
  CHECK_THROWS_AS(neg.parse(negative.argc(), negative.argv()), Error);
}

TEST_CASE("Cli reads --X as the short option -X (one-letter names of the workloads' documents)") {
  Cli cli({"tooltest", "", "", ""}, kOutput);
  cli.add()("n,size", "size", cxxopts::value<int>()->default_value("1"))("g,guarantee", "g", cxxopts::value<double>());
  Argv args({"tooltest", "--n", "64", "--g=2.5", "-o", "x.nps"});
  cli.parse(args.argc(), args.argv());
  CHECK(cli.get<int>("size") == 64);
  CHECK(cli.get<double>("guarantee") == 2.5);
  CHECK(cli.output() == "x.nps");
  CHECK(cli.command_line() == "tooltest --n 64 --g=2.5 -o x.nps");  // provenance keeps what the user typed
  Cli other({"tooltest", "", "", ""}, 0);
  Argv unknown({"tooltest", "--z", "1"});
  CHECK_THROWS_AS(other.parse(unknown.argc(), unknown.argv()), Error);
}

TEST_CASE("backend selection") {
  CHECK(resolve_backend("cpu") == Backend::cpu);
  CHECK_THROWS_AS(resolve_backend("gpu"), Error);
  if (cuda_device_count() == 0) {
    CHECK(resolve_backend("auto") == Backend::cpu);
    try {
      resolve_backend("cuda");
      FAIL("cuda accepted without a device");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::resource);
    }
  } else {
    CHECK(resolve_backend("auto") == Backend::cuda);
  }
}

TEST_CASE("run_tool maps errors to exit codes") {
  CHECK(run_tool("t", [] { return 0; }) == 0);
  CHECK(run_tool("t", []() -> int { fail_input("bad"); }) == 2);
  CHECK(run_tool("t", []() -> int { fail_resource("no"); }) == 3);
  CHECK(run_tool("t", []() -> int { throw std::bad_alloc(); }) == 3);
  CHECK(run_tool("t", []() -> int { throw std::logic_error("bug"); }) == 4);
  CHECK(run_tool("t", [] { return 1; }) == 1);
}

TEST_CASE("profile records round-trip through an appended file") {
  char path[] = "/tmp/numpipe-profile-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::remove(path);
  Cli cli({"proftest", "", "", ""}, kCompute | kProfile);
  Argv args({"proftest", "--profile", path});
  cli.parse(args.argc(), args.argv());
  PhaseLog log;
  log.add("kernel", 0.5, 1e9, 2e9);
  log.time("host", 0, 0, [] {});
  DeviceInfo dev = query_host_cpu();
  write_profile_if_requested(cli, Backend::cpu, dev, {{"n", 10}}, log);
  write_profile_if_requested(cli, Backend::cpu, dev, {{"n", 20}}, log);
  auto recs = read_stream(path);
  REQUIRE(recs.size() == 2);  // two appended streams read as one sequence
  CHECK(recs[0].name == "profile");
  // The whole process: start-up, the tool's phases, the rest of the wall time.
  CHECK(recs[0].shape == Shape{4, 3});
  CHECK(recs[0].attrs["tool"] == "proftest");
  CHECK(recs[0].attrs["phases"] == json({"start-up", "kernel", "host", "other (host)"}));
  CHECK(recs[0].attrs["process_phases"] == json({"start-up", "other (host)"}));
  CHECK(recs[0].attrs["params"]["n"] == 10);
  CHECK(recs[1].attrs["params"]["n"] == 20);
  CHECK(recs[0].attrs["device"]["kind"] == "cpu");
  const double* v = recs[0].data<double>();
  CHECK(v[0] > 0);  // start-up
  CHECK(v[3] == 0.5);
  CHECK(v[4] == 1e9);
  CHECK(v[5] == 2e9);
  CHECK(v[6] >= 0);
  CHECK(recs[0].attrs["solve_seconds"].get<double>() == doctest::Approx(0.5 + v[6]));
  // The phases cover the wall time: "other (host)" is what the others leave (here none:
  // the logged 0.5 s never happened).
  double sum = 0;
  for (int i = 0; i < 4; ++i) sum += v[3 * i];
  CHECK(v[9] >= 0);
  CHECK(recs[0].attrs["wall_seconds"].get<double>() <= sum + 1e-12);
  std::remove(path);
}

TEST_CASE("comma lists split into fields and items") {
  using V = std::vector<std::string>;
  CHECK(split_fields("a,,b") == V{"a", "", "b"});
  CHECK(split_fields("") == V{""});
  CHECK(split_fields("0.5,0.4,", ',') == V{"0.5", "0.4", ""});
  CHECK(split_fields("x:1:2", ':') == V{"x", "1", "2"});
  CHECK(split_items("a,,b,") == V{"a", "b"});
  CHECK(split_items(",").empty());
  CHECK(split_items("").empty());
}

TEST_CASE("decimal_integer: a sign and digits only; an option given 0x10 is refused naming it and the value") {
  for (const char* yes : {"0", "10", "007", "-3", "+3", "123456789012345678901"}) CHECK_MESSAGE(decimal_integer(yes), yes);
  for (const char* no : {"", "-", "+", "0x10", "0X1F", "-0x2", "1.0", "1e3", " 1", "1 ", "12abc", "١٢"})
    CHECK_MESSAGE(!decimal_integer(no), no);
  Cli cli({"tooltest", "", "", ""}, kCompute);
  long long steps = 1;
  cli.option("steps", &steps, "Steps", "N");
  Argv hex({"tooltest", "--steps", "0x10"});
  CHECK(test::bad_input([&] { cli.parse(hex.argc(), hex.argv()); }) == "--steps: expected a decimal integer, got 0x10");
}

TEST_CASE("value_of_word reads a word into its value and names the choices otherwise") {
  enum class Pick { a, b, c };
  CHECK(value_of_word<Pick>("--pick", "b", {{"a", Pick::a}, {"b", Pick::b}, {"c", Pick::c}}) == Pick::b);
  try {
    value_of_word<Pick>("--pick", "d", {{"a", Pick::a}, {"b", Pick::b}, {"c", Pick::c}});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()) == "--pick must be a, b or c, got 'd'");
  }
}

TEST_CASE("element_as_double reads each dtype's bytes as the value they hold") {
  auto bytes_of = [](auto v) {
    std::vector<std::byte> b(sizeof v + 1);
    std::memcpy(b.data() + 1, &v, sizeof v);  // unaligned on purpose
    return b;
  };
  CHECK(element_as_double(DType::f8, bytes_of(0.1).data() + 1) == 0.1);
  CHECK(element_as_double(DType::f4, bytes_of(0.1f).data() + 1) == static_cast<double>(0.1f));
  CHECK(element_as_double(DType::i8, bytes_of(std::int64_t{-(1LL << 40)}).data() + 1) == -std::ldexp(1.0, 40));
  CHECK(element_as_double(DType::i4, bytes_of(std::int32_t{-7}).data() + 1) == -7.0);
  CHECK(element_as_double(DType::u8, bytes_of(~std::uint64_t{0}).data() + 1) == std::ldexp(1.0, 64));
  CHECK(element_as_double(DType::u1, bytes_of(std::uint8_t{255}).data() + 1) == 255.0);
  for (DType t : {DType::f8, DType::f4, DType::i8, DType::i4, DType::u8, DType::u1})
    CHECK(visit_dtype(t, [](auto zero) { return sizeof zero; }) == dtype_size(t));
}

TEST_CASE("xml_escape makes text safe in elements and quoted attributes") {
  CHECK(xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  CHECK(xml_escape(std::string("line\nTab\t") + char(1) + "bell") == "line\nTab\t?bell");
  CHECK(xml_escape("plain") == "plain");
}

TEST_CASE("labels records carry text rows through a stream and back") {
  const std::vector<std::string> dates = {"2024-01-02", "2024-01-03", "", "2024-01-05 (\xc3\xa9t\xc3\xa9)"};
  Record r = make_labels("date", dates, "series rows", "Date");
  CHECK(is_labels(r));
  CHECK(r.shape == Shape{4, static_cast<std::int64_t>(dates[3].size())});
  MemorySink sink;
  {
    StreamWriter w(sink);
    w.write(r);
    w.finish();
  }
  MemorySource src(sink.bytes.data(), sink.bytes.size());
  auto back = StreamReader(src).read_all();
  REQUIRE(back.size() == 1);
  CHECK(read_labels(back[0]) == dates);
  CHECK(back[0].attrs["column"] == "Date");
  CHECK_THROWS(make_labels("x", {std::string("a\0b", 3)}, "rows", "c"));
  Record plain = Record::make("x", DType::u1, {2, 3});
  CHECK_FALSE(is_labels(plain));
  CHECK_THROWS(read_labels(plain));
}

TEST_CASE("Progress: the line says done/total in the tool's unit, percent, rate and time left") {
  Progress p("integrate", "policies", 100000, true);
  CHECK_FALSE(p.enabled());  // -q: nothing at all
  CHECK(p.line(41250, 10.0) == "integrate: 41250/100000 policies (41%), 4125 policies/s, 0:14 left");
  CHECK(p.line(0, 0.5) == "integrate: 0/100000 policies (0%)");
  CHECK(p.summary(100000, 43.3) == "integrate: 100000 policies in 43 s, 2309 policies/s");
  CHECK(p.summary(50, 2.0) == "integrate: 50 policies in 2.0 s, 25.0 policies/s, stopped at 50/100000");
  Progress steps("fluid-step", 4000, true);
  CHECK(steps.line(1000, 4000.0) == "fluid-step: 1000/4000 steps (25%), 0.25 steps/s, 3:20:00 left");
  CHECK(steps.summary(4000, 75.0) == "fluid-step: 4000 steps in 75 s (1:15), 53.3 steps/s");
  CHECK(format_rate(1.25e6) == "1.25M");
  CHECK(format_rate(45200) == "45.2k");
  CHECK(format_duration(59.6) == "1:00");
  // Not a terminal (ctest captures stderr): disabled, and the count stays untouched.
  if (!isatty(STDERR_FILENO)) {
    Progress off("t", "items", 10, false);
    CHECK_FALSE(off.enabled());
    off.advance(3);
    off.finish();
    CHECK(off.done() == 0);
  }
}

TEST_CASE("Cli: tuning options only under --help-all; exit codes as the tool has them") {
  Cli cli({"tooltest", "a test tool", "", "  tooltest | inspect", "the fits (a stream)"}, kInput | kOutput | kCompute);
  cli.add("Own")("count", "a number", cxxopts::value<int>()->default_value("3"));
  cli.tuning()("chunk", "rows per chunk", cxxopts::value<int>()->default_value("0"));
  cli.tuning_env("NUMPIPE_TOOLTEST_BLOCKS", "blocks per thread");
  Argv args({"tooltest", "--chunk", "16"});
  cli.parse(args.argc(), args.argv());
  CHECK(cli.get<int>("chunk") == 16);  // parsed like any option
  const std::string h = cli.help(), all = cli.help(true);
  CHECK(h.find("--count") != std::string::npos);
  CHECK(h.find("--chunk") == std::string::npos);
  CHECK(h.find("NUMPIPE_TOOLTEST_BLOCKS") == std::string::npos);
  CHECK(h.find("--help-all") != std::string::npos);
  CHECK(all.find("--chunk") != std::string::npos);
  CHECK(all.find("NUMPIPE_TOOLTEST_BLOCKS") != std::string::npos);
  CHECK(h.find("Write the fits (a stream) to FILE") != std::string::npos);
  CHECK(h.find("verification failed") == std::string::npos);  // only verify returns 1
  CHECK(h.find("Exit codes: 0 success, 2 bad usage or bad input, 3 resource failure") != std::string::npos);

  Cli verify({"verify", "", "", "", "", "Print only what fails"}, kInput);
  verify.exit_code(1, "the streams differ beyond tolerance");
  CHECK(verify.help().find("0 success, 1 the streams differ beyond tolerance, 2 bad usage") != std::string::npos);
  CHECK(verify.help().find("Print only what fails") != std::string::npos);
  CHECK(verify.help().find("--help-all") == std::string::npos);  // no tuning options: no --help-all
}

TEST_CASE("Cli: the recorded command is a shell command that re-runs the step") {
  Cli gen({"gen-input mle", "", "", ""}, kOutput);
  gen.add()("from-text", "", cxxopts::value<std::string>())("columns", "", cxxopts::value<std::string>());
  Argv args({"/opt/my tools/gen-input mle", "--from-text", "my prices.csv", "--columns", "it's"});
  gen.parse(args.argc(), args.argv());
  CHECK(gen.command_line() == "'/opt/my tools/gen-input' mle --from-text 'my prices.csv' --columns 'it'\\''s'");
  CHECK(gen.help().find("See man gen-input(1).") != std::string::npos);
  Cli plain({"gen-input mle", "", "", ""}, kOutput);
  Argv simple({"gen-input mle", "-o", "x.nps"});
  plain.parse(simple.argc(), simple.argv());
  CHECK(plain.command_line() == "gen-input mle -o x.nps");
}

TEST_CASE("touch_pages faults in every page of the range, and no other") {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), pages = 1200;  // over two 2 MiB jobs
  void* region = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(region != MAP_FAILED);
#ifdef MADV_NOHUGEPAGE
  madvise(region, pages * page, MADV_NOHUGEPAGE);  // so that a touch faults one page, not its neighbours
#endif
  char* base = static_cast<char*>(region);
  std::vector<unsigned char> resident(pages);
  auto in_core = [&] {
    REQUIRE(mincore(region, pages * page, resident.data()) == 0);
    std::vector<bool> r(pages);
    for (std::size_t i = 0; i < pages; ++i) r[i] = resident[i] & 1;
    return r;
  };
  REQUIRE(in_core() == std::vector<bool>(pages, false));
  // [first, last] byte ranges that start and end inside pages, and a one-byte range
  struct Range {
    std::size_t offset, bytes;
  };
  WorkerPool::reset_io_for_testing(3);
  std::vector<bool> expect(pages, false);
  for (Range r : {Range{5 * page + 100, 700 * page + 3}, Range{900 * page + page - 1, 1}, Range{1000 * page + 1, 150 * page}}) {
    touch_pages(base + r.offset, r.bytes);
    for (std::size_t i = r.offset / page; i <= (r.offset + r.bytes - 1) / page; ++i) expect[i] = true;
    CHECK(in_core() == expect);
  }
  touch_pages(base, 0);  // nothing
  CHECK(in_core() == expect);
  munmap(region, pages * page);
}

TEST_CASE("parallel_copy copies every byte, whatever the size and the thread count") {
  // Sizes whose share (size / shares) is a multiple of 64 with a remainder: 8192008 =
  // 16 x 512000 + 8, 21760008 = 17 x 1280000 + 8; and others around the share sizes.
  const std::size_t sizes[] = {0, 1, 1048575, 1048576, 1048577, 2097153, 3 * 1048576 + 7, 8192008, 8388608, 21760008, 17928072};
  std::vector<unsigned char> src(21760008 + 64), dst(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (int threads : {1, 3, 8, 16}) {
    WorkerPool::reset_io_for_testing(threads);
    for (std::size_t n : sizes) {
      CAPTURE(threads);
      CAPTURE(n);
      std::fill(dst.begin(), dst.end(), 0xAA);
      parallel_copy(dst.data() + 1, src.data() + 3, n);  // unaligned ends
      CHECK(std::memcmp(dst.data() + 1, src.data() + 3, n) == 0);
      CHECK(dst[0] == 0xAA);
      CHECK(dst[n + 1] == 0xAA);
    }
  }
}
