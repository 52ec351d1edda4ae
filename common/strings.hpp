// Splitting the comma lists of options and specs ("a,b,c", "circle:0.5,0.4,0.1").
#pragma once
#include <string>
#include <vector>

namespace numpipe {

// Every field between separators, empty ones kept: "a,,b" -> {"a", "", "b"}, "" -> {""}.
// For specs where a field's position matters and an empty one is an error to report.
inline std::vector<std::string> split_fields(const std::string& text, char sep = ',') {
  std::vector<std::string> out(1);
  for (char ch : text) {
    if (ch == sep) out.emplace_back();
    else out.back() += ch;
  }
  return out;
}

// The non-empty items of a list: "a,,b," -> {"a", "b"}, "" -> {}.
inline std::vector<std::string> split_items(const std::string& text, char sep = ',') {
  std::vector<std::string> out;
  for (std::string& item : split_fields(text, sep))
    if (!item.empty()) out.push_back(std::move(item));
  return out;
}

}  // namespace numpipe
