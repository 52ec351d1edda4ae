// Units for common/text_table: users' text tables (CSV with a header,
// whitespace columns, quoting, comments, labels) and their line-numbered errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/error.hpp"
#include "common/text_table.hpp"

using namespace numpipe;

namespace {
// The message of the error `f` throws, which must be of exit code `code` ("" when it does not throw).
template <class F>
std::string error_of(ExitCode code, F f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.code() == code);
    return e.what();
  }
  return "";
}
template <class F>
std::string input_error(F f) {
  return error_of(ExitCode::bad_input, f);
}
template <class F>
std::string resource_error(F f) {
  return error_of(ExitCode::resource, f);
}
}  // namespace

TEST_CASE("text table: CSV with a header and a date column") {
  const std::string text =
      "# daily closes\n"
      "date,close,volume\n"
      "2020-01-02, 100.5 ,1200\n"
      "\n"
      "2020-01-03,101.25,1300   # a comment\n"
      "2020-01-06,99,1e3\n";
  TextTable t = parse_text_table(text, "prices.csv");
  CHECK(t.has_header);
  CHECK(t.separator == ',');
  CHECK(t.names == std::vector<std::string>{"date", "close", "volume"});
  REQUIRE(t.size() == 3);
  CHECK(t.lines == std::vector<int>{3, 5, 6});
  CHECK(t.column("close", "--columns") == 1);
  CHECK(t.column("3", "--columns") == 2);
  CHECK(t.columns_of("volume,1", "--columns") == std::vector<std::size_t>{2, 0});
  CHECK_FALSE(t.is_numeric(0));
  CHECK(t.is_numeric(1));
  CHECK(t.numbers(1) == std::vector<double>{100.5, 101.25, 99});
  CHECK(t.numbers(2) == std::vector<double>{1200, 1300, 1000});
  CHECK(t.strings(0) == std::vector<std::string>{"2020-01-02", "2020-01-03", "2020-01-06"});
  CHECK(input_error([&] { t.numbers(0); }) == "prices.csv:3: column 'date': not a finite number: '2020-01-02'");
  CHECK(input_error([&] { t.column("open", "--columns"); }) ==
        "--columns: no column 'open' in prices.csv (columns: date, close, volume)");
  CHECK(input_error([&] { t.column("4", "--columns"); }).find("no column '4'") != std::string::npos);
  CHECK(input_error([&] { t.column("0", "--columns"); }).find("no column '0'") != std::string::npos);
  CHECK(t.where(2) == "prices.csv:6: ");
}

TEST_CASE("text table: whitespace columns without a header") {
  TextTable t = parse_text_table("  10 65 35\n\t5\t60   40  # second policy\n# end\n", "pol.txt");
  CHECK_FALSE(t.has_header);
  CHECK(t.separator == ' ');
  CHECK(t.names == std::vector<std::string>{"column1", "column2", "column3"});
  CHECK(t.numbers(0) == std::vector<double>{10, 5});
  CHECK(t.numbers(2) == std::vector<double>{35, 40});
  CHECK(t.lines == std::vector<int>{1, 2});
  // A whitespace table with a header line.
  TextTable h = parse_text_table("g r x\n10 65 35\n", "pol.txt");
  CHECK(h.has_header);
  CHECK(h.column("x", "--columns") == 2);
}

TEST_CASE("text table: label columns do not make a header") {
  // Text in the first row's date column, but text below it too: data, not a header.
  TextTable t = parse_text_table("2020-01-02;2\n2020-01-03;1,5\n", "semi.csv");
  CHECK(t.separator == ';');
  CHECK_FALSE(t.has_header);
  CHECK(t.strings(0) == std::vector<std::string>{"2020-01-02", "2020-01-03"});
  // "1,5" is not a number (no locale decimal commas): the error names it.
  CHECK(input_error([&] { t.numbers(1); }) == "semi.csv:2: column 'column2': not a finite number: '1,5'");
  // Forced readings.
  TextTableOptions present;
  present.header = TextTableOptions::Header::present;
  TextTable p = parse_text_table("1 2\n3 4\n", "n.txt", present);
  CHECK(p.names == std::vector<std::string>{"1", "2"});
  CHECK(p.numbers(0) == std::vector<double>{3});
  TextTableOptions absent;
  absent.header = TextTableOptions::Header::absent;
  TextTable a = parse_text_table("a,b\n3,4\n", "n.csv", absent);
  CHECK(a.size() == 2);
  CHECK(a.strings(0) == std::vector<std::string>{"a", "3"});
  // A one-row file of text is a header without data.
  CHECK(input_error([] { parse_text_table("date,close\n", "h.csv"); }) == "h.csv: no data rows (only the header line)");
}

TEST_CASE("text table: RFC 4180 quoting, tabs, BOM and CR LF") {
  const std::string text =
      "\xEF\xBB\xBF\"name\",\"value\"\r\n"
      "\"Smith, John\",1.5\r\n"
      "\"say \"\"hi\"\" # not a comment\",2\r\n"
      "\"two\nlines\" ,3\r\n"
      "plain,4\r\n";
  TextTable t = parse_text_table(text, "q.csv");
  CHECK(t.has_header);
  CHECK(t.names == std::vector<std::string>{"name", "value"});
  CHECK(t.strings(0) == std::vector<std::string>{"Smith, John", "say \"hi\" # not a comment", "two\nlines", "plain"});
  CHECK(t.numbers(1) == std::vector<double>{1.5, 2, 3, 4});
  CHECK(t.lines == std::vector<int>{2, 3, 4, 6});  // the quoted line break counts
  TextTable tabs = parse_text_table("a\tb\tc\n1\t\t3\n", "t.tsv");
  CHECK(tabs.separator == '\t');
  CHECK(tabs.strings(1) == std::vector<std::string>{""});
  CHECK(input_error([&] { tabs.numbers(1); }) == "t.tsv:2: column 'b': not a finite number: ''");
  // Empty trailing field in CSV.
  TextTable e = parse_text_table("x,y,\n1,2,\n", "e.csv");
  CHECK(e.columns() == 3);
  CHECK(e.names[2] == "");
}

TEST_CASE("text table: bad input names the line") {
  CHECK(input_error([] { parse_text_table("a,b\n1,2\n3\n", "r.csv"); }) == "r.csv:3: expected 2 fields, got 1");
  CHECK(input_error([] { parse_text_table("1 2\n\n3 4 5\n", "r.txt"); }) == "r.txt:3: expected 2 fields, got 3");
  CHECK(input_error([] { parse_text_table("a,b\n\"open,2\n", "u.csv"); }) == "u.csv:2: a quoted field is not closed");
  CHECK(input_error([] { parse_text_table("a,b\n\"x\"y,2\n", "t.csv"); }).rfind("t.csv:2: text after a closing quote", 0) == 0);
  CHECK(input_error([] { parse_text_table("# nothing\n\n", "c.txt"); }) == "c.txt: no data rows");
  CHECK(input_error([] { parse_text_table("", "empty.txt"); }) == "empty.txt: no data rows");
  CHECK(input_error([] { read_text_table("/nonexistent/x.csv"); }).rfind("cannot open '/nonexistent/x.csv'", 0) == 0);
  TextTable t = parse_text_table("v\n1\nnan\ninf\n", "n.csv");
  CHECK(input_error([&] { t.numbers(0); }) == "n.csv:3: column 'v': not a finite number: 'nan'");
  auto all = t.numbers(0, true);
  CHECK(all[0] == 1);
  CHECK(std::isnan(all[1]));
  CHECK(std::isinf(all[2]));
}

TEST_CASE("parse_number: whole fields, exact, locale-free") {
  double v = 0;
  CHECK(parse_number("0.1", v));
  CHECK(v == 0.1);
  CHECK(parse_number("+2.5e-3", v));
  CHECK(v == 2.5e-3);
  CHECK(parse_number("-7", v));
  CHECK(v == -7);
  CHECK(parse_number("1e400", v));
  CHECK(std::isinf(v));
  CHECK(parse_number("4.9406564584124654e-324", v));
  CHECK(v > 0);
  for (const char* bad : {"", "+", "++1", "+-1", "1.5x", "0x10", " 1", "1 ", "1,5", "--1", "e5"}) {
    INFO(bad);
    CHECK_FALSE(parse_number(bad, v));
  }
}

TEST_CASE("parse_number_rows keeps its form and messages") {
  auto rows = parse_number_rows("10 65 35 # one\n\n5 60 40\n", "pol.txt", 3, "g r x");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1] == std::vector<double>{5, 60, 40});
  CHECK(input_error([] { parse_number_rows("1 2\n", "pol.txt", 3, "g r x"); }) ==
        "pol.txt:1: want three numbers (g r x), got '1 2'");
}

TEST_CASE("text table: one rule for label columns; a bad cell in a data column is an error") {
  // A typo in a column of numbers: a data column with a bad cell, named by line and column.
  TextTable typo = parse_text_table("a,b\n1,2\n3,4\n5,0.5abc\n", "typo.csv");
  CHECK(!typo.is_label_column(0));
  CHECK(!typo.is_label_column(1));
  CHECK(input_error([&] { typo.numbers(1); }) == "typo.csv:4: column 'b': not a finite number: '0.5abc'");
  // A missing value (NA) in the first column of prices: still data, not labels.
  TextTable na = parse_text_table("DAX,SMI\n1628.75,1678.1\nNA,1688.5\n1613.63,1750.5\n", "na.csv");
  CHECK(!na.is_label_column(0));
  CHECK(input_error([&] { na.numbers(0); }) == "na.csv:3: column 'DAX': not a finite number: 'NA'");
  // The first column of dates (no number in it) holds labels; so does a text column by a label's name.
  TextTable dated = parse_text_table("day_of,close\n2020-01-02,1\n2020-01-03,2\n", "d.csv");
  CHECK(dated.is_label_column(0));
  CHECK(!dated.is_label_column(1));
  TextTable named = parse_text_table("close,Name\n1,x\n2,y\n", "n.csv");
  CHECK(named.is_label_column(1));
  CHECK(!named.is_label_column(0));
  // ...but a text column elsewhere, or a first column holding some numbers, does not.
  TextTable second = parse_text_table("close,ticker\n1,x\n2,y\n", "s.csv");
  CHECK(!second.is_label_column(1));
  TextTable mixed = parse_text_table("id,v\nA1,1\n2,2\n", "m.csv");
  CHECK(!mixed.is_label_column(0));
  // A numeric column with a label's name is data.
  TextTable numeric_date = parse_text_table("date,v\n20200102,1\n20200103,2\n", "nd.csv");
  CHECK(!numeric_date.is_label_column(0));
}

TEST_CASE("text table: memory bounded by --max-bytes, refused at the line reached") {
  std::string text = "a,b\n";
  for (int i = 0; i < 10000; ++i) text += std::to_string(i) + "," + std::to_string(2 * i) + "\n";
  TextTableOptions roomy;
  roomy.max_bytes = 64 << 20;
  CHECK(parse_text_table(text, "big.csv", roomy).size() == 10000);
  TextTableOptions tight;
  tight.max_bytes = 200000;  // the text (~110 kB) fits, its 10000 rows do not
  const std::string message = resource_error([&] { parse_text_table(text, "big.csv", tight); });
  CHECK(message.rfind("big.csv: at line ", 0) == 0);
  CHECK(message.find("the table would hold more than 195.3 KiB, the memory limit (--max-bytes)") != std::string::npos);
  const long line = std::stol(message.substr(std::strlen("big.csv: at line ")));
  CHECK(line > 100);
  CHECK(line < 10000);
  // A file is refused as its text grows past the limit, before it is all held.
  const std::string path = "text-budget-test.csv";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  TextTableOptions tiny;
  tiny.max_bytes = 50000;
  // The line reached: the one holding the text's 50001st byte.
  const long reached = 1 + static_cast<long>(std::count(text.begin(), text.begin() + 50000, '\n'));
  const std::string refused = resource_error([&] { read_text_table(path, tiny); });
  CHECK(refused.rfind("text-budget-test.csv: at line " + std::to_string(reached) + " ", 0) == 0);
  CHECK(refused.find("more than 48.8 KiB, the memory limit (--max-bytes)") != std::string::npos);
  CHECK(resource_error([&] { read_text_file(path, 50000); }) == refused);
  CHECK(read_text_file(path, 1 << 20) == text);
  std::remove(path.c_str());
}

TEST_CASE("text table: a long field is quoted by its start and its length") {
  const std::string field(5000, '7');
  TextTable t = parse_text_table("v\n1\n" + field + "x\n", "long.csv");
  CHECK(input_error([&] { t.numbers(0); }) ==
        "long.csv:3: column 'v': not a finite number: '" + std::string(40, '7') + "...' (5001 characters)");
}
