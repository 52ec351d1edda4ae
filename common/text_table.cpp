#include "text_table.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "error.hpp"

namespace numpipe {

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
    // Columns are separated by white space or commas (a CSV as spreadsheets write it).
    for (char& c : line)
      if (c == ',' || c == '\r') c = ' ';
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string f; words >> f;) fields.push_back(f);
    if (fields.empty()) continue;
    const std::string where = label + ":" + std::to_string(lineno) + ": ";
    // A header: the first row, with as many fields as columns and no number among them.
    if (first_row) {
      first_row = false;
      bool any_number = false;
      for (const auto& f : fields) {
        char* end = nullptr;
        std::strtod(f.c_str(), &end);
        any_number = any_number || (end != f.c_str());
      }
      if (!any_number && fields.size() == columns) continue;
    }
    if (fields.size() != columns)
      fail_input(where + "want " + count + " numbers (" + column_names + "), got '" + line + "'");
    std::vector<double> row(columns);
    for (std::size_t j = 0; j < columns; ++j) {
      try {
        std::size_t used = 0;
        row[j] = std::stod(fields[j], &used);
        if (used != fields[j].size()) throw std::invalid_argument(fields[j]);
      } catch (const std::exception&) {
        fail_input(where + "not a number: '" + fields[j] + "'");
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_input("cannot open '" + path + "': " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace numpipe
