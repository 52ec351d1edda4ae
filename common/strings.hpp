// Small text helpers shared by the tools: splitting the comma lists of options and
// specs ("a,b,c", "circle:0.5,0.4,0.1"), reading a word that names a value or a decimal
// integer, escaping text for XML, SVG and HTML.
#pragma once
#include <cmath>
#include <exception>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"

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

// The whole of text as a finite number; else bad input: "WHAT must be a finite number,
// got 'TEXT'" (the parts of an option's value: --buoyancy's A).
inline double finite_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  fail_input(what + " must be a finite number, got '" + text + "'");
}

// An integer written in decimal: an optional sign, then digits only. cxxopts and std::stod
// also read "0x10", as 16, which a user who meant 10 (or typed 0 for o) would not notice.
inline bool decimal_integer(const std::string& word) {
  std::size_t at = word.size() > 1 && (word[0] == '-' || word[0] == '+') ? 1 : 0;
  if (at == word.size()) return false;
  for (; at < word.size(); ++at)
    if (word[at] < '0' || word[at] > '9') return false;
  return true;
}

// Bad input: "OPTION: expected a decimal integer, got WORD" (OPTION as "--steps").
[[noreturn]] inline void fail_not_decimal_integer(const std::string& option, const std::string& word) {
  fail_input(option + ": expected a decimal integer, got " + word);
}

// The value that `word` names in `choices` (word, value pairs); any other word is bad
// input: "--method must be adjoint or forward, got 'x'" (option "--method"). E is
// named: value_of_word<Method>("--method", text, {{"adjoint", Method::adjoint}, ...}).
template <class E>
E value_of_word(const std::string& option, const std::string& word,
                std::initializer_list<std::pair<const char*, E>> choices) {
  std::string words;
  std::size_t i = 0;
  for (const auto& [name, value] : choices) {
    if (word == name) return value;
    words += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(name);
    ++i;
  }
  fail_input(option + " must be " + words + ", got '" + word + "'");
}

// A number in messages and attrs with all 17 significant digits, so that the text
// names the exact double the user gave or the run computed ("0.10000000000000001").
inline std::string exact_text(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// Text made safe inside XML/SVG/HTML elements and quoted attributes. Control
// characters other than tab and line feed are not allowed in XML 1.0: shown as '?'.
inline std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t') out += '?';
        else out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace numpipe
