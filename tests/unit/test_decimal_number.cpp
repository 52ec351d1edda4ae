// Units for the one reader of floating-point words (common/strings.hpp is_decimal_number,
// decimal_number): decimal only, the value correctly rounded, every other word refused
// with a message naming it; and its users: every double option of every tool
// (common/cli.cpp), finite_number, the simple text rows (common/text_table.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/strings.hpp"
#include "common/text_table.hpp"
#include "test_util.hpp"

using namespace numpipe;
using test::Argv;

namespace {
// The same double, bit for bit (-0 is not 0).
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

double value_of(const char* word) {
  double v = 12345;  // not any expected value
  REQUIRE_MESSAGE(is_decimal_number(word, &v), word);
  return v;
}
}  // namespace

TEST_CASE("is_decimal_number takes a sign, digits with an optional point and an exponent, and reads them exactly") {
  struct Case {
    const char* word;
    double value;  // the C++ literal: the compiler rounds it correctly
  };
  const Case cases[] = {
      {"1e-3", 1e-3},
      {"-0.5", -0.5},
      {".5", 0.5},
      {"5.", 5.0},
      {"+2", 2.0},
      {"0", 0.0},
      {"-0", -0.0},
      {"007", 7.0},
      {"0.1", 0.1},
      {"1E+2", 100.0},
      {"2.5e-0", 2.5},
      {"-.25E1", -2.5},
      // round to nearest, ties to even: 2^53 + 1 is halfway between two doubles
      {"9007199254740993", 9007199254740992.0},
      // a classic hard case for hand-written readers (the boundary of the normal range)
      {"2.2250738585072011e-308", 2.2250738585072011e-308},
      {"123456789012345678901234567890", 123456789012345678901234567890.0},
      {"4.9e-324", std::numeric_limits<double>::denorm_min()},
  };
  for (const Case& c : cases) {
    CHECK_MESSAGE(is_decimal_number(c.word), c.word);
    CHECK_MESSAGE(same_bits(value_of(c.word), c.value), c.word, " read as ", exact_text(value_of(c.word)));
    CHECK_MESSAGE(same_bits(decimal_number(c.word, "--x"), c.value), c.word);
  }
  // Beyond the range of a double: a decimal word, read as strtod reads it (underflow: 0),
  // and decimal_number refuses an overflow rather than hand on an infinity.
  CHECK(same_bits(value_of("1e-400"), 0.0));
  CHECK(same_bits(value_of("-1e-400"), -0.0));
  CHECK(value_of("1e999") == std::numeric_limits<double>::infinity());
  CHECK(value_of("-1e999") == -std::numeric_limits<double>::infinity());
  CHECK(test::bad_input([] { decimal_number("1e999", "--rate"); }) ==
        "--rate: 1e999 is beyond the range of a double (about 1.8e308)");
}

TEST_CASE("is_decimal_number refuses hexadecimal, inf, nan, blanks and every other surprise") {
  for (const char* no : {"0x1p3", "0X10", "0x10", "-0x1p-4", "0x", "inf", "-inf", "+inf", "INF", "infinity", "nan",
                         "NaN", "nan(1)", " 1", "1 ", "\t1", "1\n", "1e", "1e+", "1E-", "e5", "", "-", "+", ".", "-.",
                         "--1", "+-1", "-+1", "1.2.3", "1,5", "1_000", "1'000", "0.5garbage", "1e5x", "1x", "1e2.5",
                         "\xD9\xA1" /* Arabic-Indic digit one */}) {
    double v = 12345;
    CHECK_MESSAGE(!is_decimal_number(no, &v), "'", no, "'");
    CHECK_MESSAGE(v == 12345, "'", no, "': the value is left alone");
    CHECK_MESSAGE(test::bad_input([&] { decimal_number(no, "--x"); }) != "", "'", no, "'");
  }
  // A word with a NUL inside is not read up to the NUL.
  CHECK(!is_decimal_number(std::string("1\0" "5", 3)));
}

TEST_CASE("decimal_number names what it reads and the word, as the integer rule does") {
  // A number in another notation: "expected a decimal number" (cf. "expected a decimal integer").
  CHECK(test::bad_input([] { decimal_number("0x1p3", "--rate"); }) == "--rate: expected a decimal number, got 0x1p3");
  CHECK(test::bad_input([] { decimal_number("inf", "--rate"); }) == "--rate: expected a decimal number, got inf");
  CHECK(test::bad_input([] { decimal_number("nan", "--rate"); }) == "--rate: expected a decimal number, got nan");
  CHECK(test::bad_input([] { decimal_number(" 1", "--rate"); }) == "--rate: expected a decimal number, got  1");
  // Anything else is no number at all.
  CHECK(test::bad_input([] { decimal_number("0.5garbage", "--rate"); }) == "--rate must be a number, got '0.5garbage'");
  CHECK(test::bad_input([] { decimal_number("1 ", "--rate"); }) == "--rate must be a number, got '1 '");
  CHECK(test::bad_input([] { decimal_number("", "--rate"); }) == "--rate must be a number, got ''");
  CHECK(test::bad_input([] { decimal_number("--1", "--rate"); }) == "--rate must be a number, got '--1'");
}

TEST_CASE("finite_number reads decimal numbers only") {
  CHECK(finite_number("2.5", "--buoyancy's A") == 2.5);
  CHECK(finite_number("-1e-3", "--buoyancy's A") == -1e-3);
  for (const char* no : {"0x1p3", "inf", "nan", " 1", "1e999", "x"})
    CHECK_MESSAGE(test::bad_input([&] { finite_number(no, "--buoyancy's A"); }) ==
                      "--buoyancy's A must be a finite number, got '" + std::string(no) + "'",
                  no);
}

TEST_CASE("every double option of a tool takes decimal numbers only (Cli::parse)") {
  auto parse = [](std::vector<std::string> words, double* rate_out = nullptr, std::vector<double>* list_out = nullptr) {
    Cli cli({"tooltest", "", "", ""}, 0);
    double rate = 0.05;
    std::optional<double> shift;
    cli.option("rate", &rate, "Rate", "R");
    cli.option("shift", &shift, "Shift", "S");
    cli.add()("levels", "Levels", cxxopts::value<std::vector<double>>(), "L");
    words.insert(words.begin(), "tooltest");
    Argv a(words);
    return test::bad_input([&] {
      cli.parse(a.argc(), a.argv());
      if (rate_out) *rate_out = rate;
      if (list_out) *list_out = cli.get<std::vector<double>>("levels");
    });
  };
  double rate = 0;
  CHECK(parse({"--rate", "1e-3"}, &rate) == "");
  CHECK(rate == 1e-3);
  CHECK(parse({"--rate=.5"}, &rate) == "");
  CHECK(rate == 0.5);
  CHECK(parse({"--rate", "+2"}, &rate) == "");
  CHECK(rate == 2.0);
  CHECK(parse({"--rate", "0x1p-4"}) == "--rate: expected a decimal number, got 0x1p-4");
  CHECK(parse({"--rate=0x10"}) == "--rate: expected a decimal number, got 0x10");
  CHECK(parse({"--rate", "inf"}) == "--rate: expected a decimal number, got inf");
  CHECK(parse({"--rate", "-nan"}) == "--rate: expected a decimal number, got -nan");
  CHECK(parse({"--rate", " 1"}) == "--rate: expected a decimal number, got  1");
  CHECK(parse({"--rate", "1e999"}) == "--rate: 1e999 is beyond the range of a double (about 1.8e308)");
  CHECK(parse({"--shift", "0x1p3"}) == "--shift: expected a decimal number, got 0x1p3");  // no default
  CHECK(parse({"--rate", "0.5garbage"}) == "--rate must be a number, got '0.5garbage'");
  // a list, item by item
  std::vector<double> levels;
  CHECK(parse({"--levels", "0.1,.5,1e-2"}, nullptr, &levels) == "");
  CHECK(levels == std::vector<double>{0.1, 0.5, 1e-2});
  CHECK(parse({"--levels", "0.1,0x1p-1"}) == "--levels: expected a decimal number, got 0x1p-1");
  CHECK(parse({"--levels", "0.1,inf"}) == "--levels: expected a decimal number, got inf");
  CHECK(parse({"--levels", "0.1,,2"}) == "--levels must be a number, got '0.1,,2'");
  CHECK(parse({"--rate", "1,5"}) == "--rate must be a number, got '1,5'");  // one number, not a list
  // the option that is wrong is named, not a good one before it
  CHECK(parse({"--levels", "0.1,0.2", "--rate", "inf"}) == "--rate: expected a decimal number, got inf");
  CHECK(parse({"--rate", "0.5", "--levels", "1,nan"}) == "--levels: expected a decimal number, got nan");
}

TEST_CASE("parse_number_rows reads a cell as the CSV reader does: hexadecimal is no number") {
  const auto rows = parse_number_rows("1 0.05\n2.5 -1e-3\n", "curve.txt", 2, "maturity rate");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1] == std::vector<double>{2.5, -1e-3});
  CHECK(test::bad_input([] { parse_number_rows("1 0.05\n2 0x1p-4\n", "curve.txt", 2, "maturity rate"); }) ==
        "curve.txt:2: not a number: '0x1p-4'");
  // the CSV reader's cells: hexadecimal is no number there either (std::from_chars)
  double v = 0;
  CHECK(!parse_number("0x1p3", v));
  CHECK(parse_number("1e-3", v));
  CHECK(v == 1e-3);
}

TEST_CASE("decimal_digits: an index in digits only") {
  for (const char* word : {"0", "7", "0012", "18446744073709551615"}) CHECK(decimal_digits(word));
  for (const char* word : {"", "+5", "-1", " 5", "5 ", "0x10", "1.0", "1e3", "-"}) CHECK(!decimal_digits(word));
}
