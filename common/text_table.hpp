// Tables in plain text, as users write them: CSV with a header line, or
// whitespace-separated columns; '#' starts a comment, blank lines are skipped.
// Every bad input (exit 2) names the file and the line: "FILE:LINE: ...".
#pragma once
#include <cstddef>
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
struct TextTableOptions {
  enum class Header { detect, present, absent };
  Header header = Header::detect;
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
// closing quote, no data rows ("FILE: no data rows").
TextTable parse_text_table(const std::string& text, const std::string& source, const TextTableOptions& options = {});

// The same from a file; "-" reads standard input.
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

// The whole content of a text file ("-": standard input); bad input when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace numpipe
