#include "text_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include <sys/stat.h>

#include "data_files.hpp"
#include "error.hpp"
#include "memory.hpp"
#include "stream.hpp"
#include "strings.hpp"

namespace numpipe {

bool parse_number(const std::string& field, double& value) {
  const char* first = field.data();
  const char* last = field.data() + field.size();
  if (first != last && *first == '+') {
    ++first;
    if (first != last && (*first == '+' || *first == '-')) return false;
  }
  if (first == last) return false;
  // std::from_chars: exact (correctly rounded), and never reads the C locale's decimal point.
  auto [end, ec] = std::from_chars(first, last, value);
  if (end != last) return false;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves value untouched on overflow/underflow; strtod gives ±inf or 0.
    value = std::strtod(std::string(first, last).c_str(), nullptr);
    return true;
  }
  return ec == std::errc();
}

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// A field or column name as a message quotes it: whole up to 60 characters, else its
// start and its length (a line of megabytes is not echoed to the terminal).
std::string quote_field(const std::string& text) {
  if (text.size() <= 60) return "'" + text + "'";
  return "'" + text.substr(0, 40) + "...' (" + std::to_string(text.size()) + " characters)";
}

struct RawRow {
  std::vector<std::string> fields;
  int line = 0;
};

// Splits the text into rows of fields with the line each row starts on.
class Splitter {
 public:
  Splitter(const std::string& text, const std::string& source) : text_(text), source_(source) {
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // UTF-8 byte-order mark
  }

  // The next row that is not blank or a comment; false at the end.
  bool next(RawRow& row) {
    while (pos_ < text_.size()) {
      row.fields.clear();
      row.line = line_;
      if (!separator_) choose_separator();
      split_row(row.fields);
      if (!row.fields.empty()) return true;
    }
    return false;
  }

  char separator() const { return separator_ ? separator_ : ' '; }

 private:
  std::string where(int line) const { return source_ + ":" + std::to_string(line) + ": "; }

  // Looks at the row starting at pos_ (outside quotes, before any comment).
  void choose_separator() {
    bool quoted = false, comma = false, semicolon = false, tab = false, content = false;
    for (std::size_t i = pos_; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '"') quoted = !quoted;
      if (quoted) continue;
      if (c == '\n' || c == '#') break;
      comma |= c == ',';
      semicolon |= c == ';';
      tab |= c == '\t';
      content |= !is_blank(c);
    }
    if (!content) return;  // a blank or comment line: decide on a later one
    separator_ = comma ? ',' : semicolon ? ';' : tab ? '\t' : ' ';
  }

  // Reads one physical row (more than one line when a quoted field holds line
  // breaks) from pos_ into fields; leaves fields empty for a blank or comment line.
  void split_row(std::vector<std::string>& fields) {
    const char sep = separator();
    const int start_line = line_;
    std::string field;
    bool field_started = false, any_content = false;
    auto end_field = [&] {
      if (sep != ' ') {
        while (!field.empty() && is_blank(field.back()) && !quoted_tail_) field.pop_back();
        fields.push_back(field);
      } else if (field_started) {
        fields.push_back(field);
      }
      field.clear();
      field_started = false;
      quoted_tail_ = false;
    };
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++pos_;
        ++line_;
        break;
      }
      if (c == '#') {  // a comment: skip to the end of the line
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n')) {
        ++pos_;
        continue;
      }
      if (sep == ' ' ? is_blank(c) : c == sep) {
        if (sep != ' ') any_content = true;
        if (sep != ' ' || field_started) end_field();
        ++pos_;
        continue;
      }
      if (is_blank(c) && (!field_started || quoted_tail_)) {  // blanks around a delimited field
        ++pos_;
        continue;
      }
      if (quoted_tail_)
        fail_input(where(line_) + "text after a closing quote: " + quote_field(field) + " then '" + std::string(1, c) + "'");
      any_content = true;
      if (c == '"' && !field_started) {
        read_quoted(field, start_line);
        field_started = true;
        quoted_tail_ = true;
        continue;
      }
      field.push_back(c);
      field_started = true;
      ++pos_;
    }
    if (any_content) end_field();
    quoted_tail_ = false;
  }

  // pos_ at an opening quote: appends the field's content, leaves pos_ after the closing quote.
  void read_quoted(std::string& field, int start_line) {
    ++pos_;
    while (true) {
      if (pos_ >= text_.size()) fail_input(where(start_line) + "a quoted field is not closed");
      const char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          field.push_back('"');
          pos_ += 2;
          continue;
        }
        ++pos_;
        return;
      }
      if (c == '\n') ++line_;
      if (!(c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n')) field.push_back(c);
      ++pos_;
    }
  }

  const std::string& text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  int line_ = 1;
  char separator_ = 0;
  bool quoted_tail_ = false;  // the current field was quoted: only blanks and a separator may follow
};

bool all_text(const std::vector<std::string>& fields) {
  double v;
  for (const auto& f : fields)
    if (parse_number(f, v)) return false;
  return true;
}

}  // namespace

namespace {
std::uint64_t g_text_table_max_bytes = 0;  // --max-bytes of the run; 0: none given
}  // namespace

void set_text_table_max_bytes(std::uint64_t max_bytes) { g_text_table_max_bytes = max_bytes; }

TextBudget::TextBudget(std::uint64_t max_bytes) {
  if (max_bytes == 0) max_bytes = g_text_table_max_bytes;
  limit_ = max_bytes ? max_bytes : default_max_bytes();
  bound_ = max_bytes ? "--max-bytes" : "half of the machine's memory";
  const HostMemory m = available_host_memory();
  if (m.known && m.bytes < limit_) {
    limit_ = m.bytes;
    bound_ = m.source;
  }
}

void TextBudget::refuse(const std::string& source, long line) const {
  fail_resource(source + ": at line " + std::to_string(line) + " the table would hold more than " +
                format_bytes(static_cast<double>(limit_)) + ", the memory limit (" + bound_ +
                "); read a smaller table, or raise the limit");
}

namespace {

// What a data row costs while the table is read and used: its vector of fields and
// line number (twice: the rows' vectors grow by doubling), an allocation's header,
// and for each field its std::string (with its heap block past the short-string
// buffer) and the numbers callers make of a cell (at most three doubles: the
// column, a table, the record written).
double row_bytes(const std::vector<std::string>& fields) {
  double bytes = 2.0 * (sizeof(std::vector<std::string>) + sizeof(int)) + 16;
  for (const auto& f : fields)
    bytes += sizeof(std::string) + (f.size() > 15 ? f.size() + 1 + 16 : 0) + 3 * sizeof(double);
  return bytes;
}

TextTable parse_counted(const std::string& text, const std::string& source, const TextTableOptions& options,
                        const TextBudget& budget) {
  TextTable t;
  t.source = source;
  Splitter split(text, source);
  double held = static_cast<double>(text.capacity());
  RawRow row;
  while (split.next(row)) {
    held += row_bytes(row.fields);
    budget.check(held, source, row.line);
    // Every row has the first row's width (the header's, or the first data row's).
    if (!t.rows.empty() && row.fields.size() != t.rows[0].size())
      fail_input(source + ":" + std::to_string(row.line) + ": expected " + std::to_string(t.rows[0].size()) +
                 " fields, got " + std::to_string(row.fields.size()));
    t.rows.push_back(std::move(row.fields));
    t.lines.push_back(row.line);
    row.fields = {};
  }
  t.separator = split.separator();
  if (t.rows.empty()) fail_input(source + ": no data rows");

  const std::size_t width = t.rows[0].size();
  using H = TextTableOptions::Header;
  bool header = options.header == H::present;
  if (options.header == H::detect) {
    if (t.rows.size() == 1) {
      header = all_text(t.rows[0]);
    } else {
      double v;
      for (std::size_t c = 0; c < width; ++c) header |= !parse_number(t.rows[0][c], v) && parse_number(t.rows[1][c], v);
    }
  }
  t.has_header = header;
  if (header) {
    t.names = std::move(t.rows[0]);
    t.rows.erase(t.rows.begin());
    t.lines.erase(t.lines.begin());
  } else {
    for (std::size_t c = 0; c < width; ++c) t.names.push_back("column" + std::to_string(c + 1));
  }
  if (t.rows.empty()) fail_input(source + ": no data rows (only the header line)");
  return t;
}

// Reads the whole text of `path` ("-": stdin), counting it against the budget as it
// grows (its capacity, and the old buffer beside the new one while it grows).
std::string read_counted(const std::string& path, const TextBudget& budget) {
  const std::string source = path == "-" ? "stdin" : path;
  std::FILE* f = path == "-" ? stdin : std::fopen(find_input_file(path).c_str(), "rb");
  if (!f) {
    const std::string why = std::strerror(errno);
    fail_input("cannot open '" + path + "': " + why + where_input_was_looked_for(path));
  }
  struct Closer {
    std::FILE* f;
    ~Closer() {
      if (f != stdin) std::fclose(f);
    }
  } closer{f};
  const double limit = static_cast<double>(budget.limit());
  std::string text;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && static_cast<double>(st.st_size) + 1 <= limit)
    text.reserve(static_cast<std::size_t>(st.st_size) + 1);  // a file's size: read without growing
  std::vector<char> chunk(std::size_t(1) << 20);
  long lines = 1;
  for (;;) {
    const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    if (n == 0) break;
    const std::size_t want = text.size() + n;
    if (want > text.capacity()) {
      // Doubling, as far as the budget lets: the old buffer is held until the new one is filled.
      const double room = limit - static_cast<double>(text.capacity());
      if (static_cast<double>(want) > room) {  // the line where the text passes the limit
        const double fits = std::clamp(limit - static_cast<double>(text.size()), 0.0, static_cast<double>(n));
        budget.refuse(source, lines + static_cast<long>(std::count(chunk.data(), chunk.data() + static_cast<std::size_t>(fits), '\n')));
      }
      text.reserve(static_cast<std::size_t>(std::min(room, std::max<double>(want, 2.0 * text.capacity()))));
    }
    text.append(chunk.data(), n);
    lines += static_cast<long>(std::count(chunk.data(), chunk.data() + n, '\n'));
  }
  if (std::ferror(f)) fail_input("cannot read " + (path == "-" ? std::string("standard input") : "'" + path + "'") + ": " + std::strerror(errno));
  return text;
}

}  // namespace

TextTable parse_text_table(const std::string& text, const std::string& source, const TextTableOptions& options) {
  return parse_counted(text, source, options, TextBudget(options.max_bytes));
}

TextTable read_text_table(const std::string& path, const TextTableOptions& options) {
  const TextBudget budget(options.max_bytes);
  return parse_counted(read_counted(path, budget), path == "-" ? "stdin" : path, options, budget);
}

std::string TextTable::where(std::size_t row) const { return source + ":" + std::to_string(lines.at(row)) + ": "; }

std::size_t TextTable::column(const std::string& key, const std::string& option) const {
  for (std::size_t c = 0; c < names.size(); ++c)
    if (names[c] == key) return c;
  double number;
  if (parse_number(key, number) && number >= 1 && number <= static_cast<double>(names.size()) &&
      number == std::floor(number))
    return static_cast<std::size_t>(number) - 1;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  fail_input(option + ": no column '" + key + "' in " + source + " (columns: " + list + ")");
}

std::vector<std::size_t> TextTable::columns_of(const std::string& keys, const std::string& option) const {
  if (keys.empty()) fail_input(option + ": no columns named");
  std::vector<std::size_t> out;
  for (const std::string& key : split_fields(keys)) out.push_back(column(key, option));
  return out;
}

bool TextTable::is_numeric(std::size_t c) const {
  double v;
  for (const auto& row : rows)
    if (!parse_number(row.at(c), v)) return false;
  return true;
}

bool TextTable::is_label_column(std::size_t c) const {
  double v;
  std::size_t numbers_seen = 0;
  for (const auto& row : rows) numbers_seen += parse_number(row.at(c), v) ? 1 : 0;
  if (numbers_seen == rows.size()) return false;  // all numbers: data
  std::string name = names.at(c);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const char* label : {"date", "time", "datetime", "timestamp", "day", "label", "name"})
    if (name == label) return true;
  return c == 0 && numbers_seen == 0;
}

std::vector<double> TextTable::numbers(std::size_t c, bool allow_nonfinite) const {
  std::vector<double> out(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::string& f = rows[r].at(c);
    if (!parse_number(f, out[r]) || (!allow_nonfinite && !std::isfinite(out[r])))
      fail_input(where(r) + "column " + quote_field(names[c]) + ": not a " + (allow_nonfinite ? "" : "finite ") +
                 "number: " + quote_field(f));
  }
  return out;
}

std::vector<std::string> TextTable::strings(std::size_t c) const {
  std::vector<std::string> out(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) out[r] = rows[r].at(c);
  return out;
}

std::vector<std::vector<double>> parse_number_rows(const std::string& text, const std::string& label,
                                                   std::size_t columns, const std::string& column_names) {
  static const char* kCount[] = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};
  const std::string count = columns < 10 ? kCount[columns] : std::to_string(columns);
  std::vector<std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  bool first_row = true;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    // Commas separate columns as white space does (a CSV as spreadsheets write it).
    for (char& c : line)
      if (c == ',' || c == '\r') c = ' ';
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string f; words >> f;) fields.push_back(f);
    if (fields.empty()) continue;
    const std::string where = label + ":" + std::to_string(lineno) + ": ";
    // A header: the first row, one name per column and no number among them ("g,r,x").
    if (first_row) {
      first_row = false;
      bool any_number = false;
      for (const auto& f : fields) {
        double v = 0;
        any_number = any_number || parse_number(f, v);
      }
      if (!any_number && fields.size() == columns) continue;
    }
    if (fields.size() != columns)
      fail_input(where + "want " + count + " numbers (" + column_names + "), got " + quote_field(line));
    std::vector<double> row(columns);
    // a cell as the CSV reader reads one (parse_number), by the rule that found the header:
    // "0x1p3" is no number in either (std::stod read it as 8)
    for (std::size_t j = 0; j < columns; ++j)
      if (!parse_number(fields[j], row[j])) fail_input(where + "not a number: " + quote_field(fields[j]));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  return read_counted(path, TextBudget(max_bytes));
}

}  // namespace numpipe
