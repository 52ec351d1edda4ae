// libFuzzer target for numpipe's text-table reader (common/text_table.cpp): users'
// CSV and whitespace tables, as gen-input's --from-text, --curve, --mortality-table
// and --from-text quote tables read them.
//
// The first input byte picks the options; the rest is the text:
//   bits 0-1  the header: detect, present, absent (3: detect)
//   bit 2     a small memory budget (64 KiB), so that the refusal at the line
//             reached (exit 3) is exercised; else 16 MiB
// Every column then goes through what callers do with it: is_label_column,
// is_numeric, numbers (finite and not), strings, where; and the text through
// parse_number_rows (the simple form) for 1 to 3 columns.
//
// The reader may refuse an input only with numpipe::Error of exit 2 (bad input)
// or 3 (over the budget); any other exception, a crash, or a sanitizer report is
// a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.hpp"
#include "common/text_table.hpp"

namespace {

template <class F>
void expect_clean(F f) {
  try {
    f();
  } catch (const numpipe::Error& e) {
    if (e.code() != numpipe::ExitCode::bad_input && e.code() != numpipe::ExitCode::resource) {
      std::fprintf(stderr, "numpipe::Error with unexpected code %d: %s\n", static_cast<int>(e.code()), e.what());
      std::abort();
    }
  }
}

void use_table(const numpipe::TextTable& t) {
  if (t.names.size() != t.columns() || t.lines.size() != t.size() || t.size() == 0) std::abort();
  for (std::size_t r = 0; r < t.size(); ++r) {
    if (t.rows[r].size() != t.columns()) std::abort();
    if (r && t.lines[r] <= t.lines[r - 1]) std::abort();  // rows in line order
    (void)t.where(r);
  }
  for (std::size_t c = 0; c < t.columns(); ++c) {
    (void)t.is_label_column(c);
    const bool numeric = t.is_numeric(c);
    expect_clean([&] { (void)t.numbers(c); });
    if (numeric && t.numbers(c, true).size() != t.size()) std::abort();
    if (t.strings(c).size() != t.size()) std::abort();
  }
  expect_clean([&] { (void)t.columns_of("1," + std::to_string(t.columns()), "--columns"); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const unsigned mode = size ? data[0] : 0;
  const std::string text(reinterpret_cast<const char*>(data) + (size ? 1 : 0), size ? size - 1 : 0);
  numpipe::TextTableOptions options;
  using H = numpipe::TextTableOptions::Header;
  const unsigned header = mode & 3;
  options.header = header == 1 ? H::present : header == 2 ? H::absent : H::detect;
  options.max_bytes = (mode & 4) ? std::uint64_t(64) << 10 : std::uint64_t(16) << 20;
  expect_clean([&] { use_table(numpipe::parse_text_table(text, "fuzz.csv", options)); });
  for (std::size_t columns = 1; columns <= 3; ++columns)
    expect_clean([&] {
      for (const auto& row : numpipe::parse_number_rows(text, "fuzz.txt", columns, "a b c"))
        if (row.size() != columns) std::abort();
    });
  return 0;
}
