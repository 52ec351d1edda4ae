// Tables in plain text, as users write them: CSV with a header line, or
// whitespace-separated columns; '#' starts a comment, blank lines are skipped.
// Every bad input (exit 2) names the file and the line: "FILE:LINE: ...".
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace numpipe {

// ---- the general reader -------------------------------------------------------------
//
// What it accepts (see docs/DEVELOPING.md, "Text tables"):
// - Separator: one for the whole file, from the first row that is not a comment:
//   ',' when it holds a comma outside quotes, else ';' when it holds a
//   semicolon, else a tab when it holds one, else runs of blanks.
// - Quoting (CSV, RFC 4180): a field that starts with '"' runs to the matching
//   '"', may hold separators, '#' and line breaks, and writes '"' as '""'.
//   Blanks around unquoted fields are dropped.
// - Comments: '#' outside quotes ends the line's content; a line with nothing
//   else is skipped, as is a blank line. A UTF-8 byte-order mark and CR LF line
//   ends (spreadsheets write both) are accepted.
// - Header: the first row names the columns when some column holds text there
//   and a number in the second row (or, in a one-row file, when every field is
//   text). Without a header the columns are named column1, column2, ...
//   TextTableOptions::header forces either reading.
// - Every row has as many fields as the first one.
// - Memory: the reader holds at most TextTableOptions::max_bytes (see TextBudget),
//   counting the text, its rows and the numbers a caller makes of each cell, and
//   refuses (exit 3) at the line where the table would hold more.
struct TextTableOptions {
  enum class Header { detect, present, absent };
  Header header = Header::detect;
  std::uint64_t max_bytes = 0;  // 0: default_max_bytes() (half of RAM), as --max-bytes
};

// What a text reader may hold: the least of `max_bytes` (0: default_max_bytes(),
// half of RAM, as for --max-bytes) and the available host memory (memory.hpp:
// NUMPIPE_MEMORY_LIMIT, the cgroup's limit, ulimit -v, MemAvailable). A reader
// counts what it holds as it reads, so that a file too large (or without end,
// such as /dev/zero) is refused before it is held, naming the line reached:
// "big.csv: at line 81234 the table would hold more than 256.0 MiB, the memory
// limit (NUMPIPE_MEMORY_LIMIT=256M); read a smaller table, or raise the limit".
// A run's --max-bytes for every text table it reads (Cli::parse sets it): a
// TextBudget or TextTableOptions without its own max_bytes takes it.
void set_text_table_max_bytes(std::uint64_t max_bytes);

class TextBudget {
 public:
  explicit TextBudget(std::uint64_t max_bytes = 0);
  std::uint64_t limit() const { return limit_; }
  // Resource error (exit 3) when `held` bytes exceed the limit.
  void check(double held, const std::string& source, long line) const {
    if (held > static_cast<double>(limit_)) refuse(source, line);
  }
  [[noreturn]] void refuse(const std::string& source, long line) const;

 private:
  std::uint64_t limit_ = 0;
  std::string bound_;  // what sets the limit: "--max-bytes", "NUMPIPE_MEMORY_LIMIT=256M", ...
};

struct TextTable {
  std::string source;                           // the file's name in messages ("prices.csv", "stdin")
  bool has_header = false;                      // the first row named the columns
  char separator = ' ';                         // ',' ';' '\t', or ' ' for runs of blanks
  std::vector<std::string> names;               // one per column: the header's text, or columnK
  std::vector<std::vector<std::string>> rows;   // the data rows' fields (unquoted), each names.size() long
  std::vector<int> lines;                       // the line (1-based) each data row starts on

  std::size_t columns() const { return names.size(); }
  std::size_t size() const { return rows.size(); }

  // The column named `key`: a header name (exact), else a 1-based column
  // number. Bad input otherwise: "OPTION: no column 'KEY' in FILE (columns: a, b, c)".
  std::size_t column(const std::string& key, const std::string& option) const;
  // Like column(), for a comma-separated list of keys ("close,volume" or "2,3").
  std::vector<std::size_t> columns_of(const std::string& keys, const std::string& option) const;

  // True when every data row's field in `column` is a number (finite or not).
  bool is_numeric(std::size_t column) const;
  // True when `column` may be the label column (dates, names) when none is named:
  // a column that holds a field that is not a number and either has a label's
  // header (date, time, datetime, timestamp, day, label, name, any case) or is the
  // table's first column and holds no number at all. Every other column is a
  // data column, whose bad cell numbers() names: a typo or an NA in a column of
  // prices is an error, never a reason to read the prices as labels.
  bool is_label_column(std::size_t column) const;

  // The column's numbers. Bad input names the row's line, the column and the
  // field: "FILE:LINE: column 'close': not a finite number: 'oops'" (non-finite
  // values such as nan or inf are refused unless allow_nonfinite).
  std::vector<double> numbers(std::size_t column, bool allow_nonfinite = false) const;
  // The column's fields as text (labels: dates, names).
  std::vector<std::string> strings(std::size_t column) const;

  // "FILE:LINE: " for data row `row`, to prefix a caller's own messages.
  std::string where(std::size_t row) const;
};

// Reads a table from text; `source` names it in messages. Bad input: ragged
// rows ("FILE:LINE: expected 3 fields, got 2"), an unclosed quote, text after a
// closing quote, no data rows ("FILE: no data rows"). Resource error (exit 3):
// the text and its rows beyond the options' TextBudget.
TextTable parse_text_table(const std::string& text, const std::string& source, const TextTableOptions& options = {});

// The same from a file; "-" reads standard input. The text counts against the
// budget as it is read.
TextTable read_text_table(const std::string& path, const TextTableOptions& options = {});

// One number written as text, whole (no trailing characters), independent of
// the C locale; a leading '+' is accepted. False when it is not a number.
bool parse_number(const std::string& field, double& value);

// ---- the simple form ----------------------------------------------------------------

// Every non-empty row must hold exactly `columns` numbers, separated by white
// space or commas, after an optional header line (the first row, one name per
// column and no number: "g,r,x"); bad input (exit 2) names the file, the line
// and the value: "LABEL:LINE: want 3 numbers (g r x), ...".
std::vector<std::vector<double>> parse_number_rows(const std::string& text, const std::string& label,
                                                   std::size_t columns, const std::string& column_names);

// The whole content of a text file ("-": standard input); bad input when it cannot
// be read; a resource error (exit 3) naming the line reached when the text would
// exceed TextBudget(max_bytes).
std::string read_text_file(const std::string& path, std::uint64_t max_bytes = 0);

}  // namespace numpipe
