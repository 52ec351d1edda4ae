// Tables of numbers in plain text, as users write them: columns separated by
// white space or commas, an optional header line (the first row, when none of
// its fields is a number: "g,r,x"), '#' starts a comment, blank lines are skipped.
#pragma once
#include <string>
#include <vector>

namespace numpipe {

// Every non-empty row must hold exactly `columns` numbers; bad input (exit 2)
// names the file, the line and the value: "LABEL:LINE: want 3 numbers (g r x), ...".
std::vector<std::vector<double>> parse_number_rows(const std::string& text, const std::string& label,
                                                   std::size_t columns, const std::string& column_names);

// The whole content of a text file; bad input when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace numpipe
