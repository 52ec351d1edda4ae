// Small text helpers shared by the tools: splitting the comma lists of options and
// specs ("a,b,c", "circle:0.5,0.4,0.1"), reading a word that names a value or a decimal
// integer or a decimal number, escaping text for XML, SVG and HTML.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>
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

// A number written in decimal: an optional sign, digits with an optional '.' (at least one
// digit: "5.", ".5"), an optional exponent e or E, an optional sign and digits ("1e-3").
// Nothing else: std::stod, strtod and cxxopts also read "0x1p3" (as 8), "inf", "nan" and
// leading blanks, which a user who meant a finite decimal value would not notice. With
// `value`, the double it names, correctly rounded (std::from_chars, which never reads the C
// locale's decimal point); beyond the range of a double: +-inf, below it: 0 or a subnormal
// (strtod's correctly rounded value).
inline bool is_decimal_number(const std::string& word, double* value = nullptr) {
  const char* const first = word.data();
  const char* const last = first + word.size();
  const char* p = first;
  auto digits = [&p, last] {
    const char* start = p;
    while (p != last && *p >= '0' && *p <= '9') ++p;
    return p - start;
  };
  if (p != last && (*p == '+' || *p == '-')) ++p;
  const char* const unsigned_part = p;
  auto mantissa_digits = digits();
  if (p != last && *p == '.') {
    ++p;
    mantissa_digits += digits();
  }
  if (mantissa_digits == 0) return false;
  if (p != last && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p != last && (*p == '+' || *p == '-')) ++p;
    if (digits() == 0) return false;
  }
  if (p != last) return false;
  if (!value) return true;
  // from_chars takes a '-' but no '+'.
  const char* const from = *first == '+' ? unsigned_part : first;
  const auto [end, ec] = std::from_chars(from, last, *value);
  if (ec == std::errc::result_out_of_range) *value = std::strtod(word.c_str(), nullptr);  // from_chars left it
  return end == last && (ec == std::errc() || ec == std::errc::result_out_of_range);
}

// A word that strtod reads whole, a number in some notation ("1.5", "0x1p3", "inf", "nan",
// " 1"): what a user meant as a number, whether or not in the form asked for; "0.5garbage",
// "x" and "" are none.
inline bool number_in_any_notation(const std::string& word) {
  char* end = nullptr;
  std::strtod(word.c_str(), &end);
  return !word.empty() && end == word.c_str() + word.size();
}

// Bad input naming WHAT ("--rate") and a word that is no decimal number, as the integer
// rule says it (fail_not_decimal_integer): a number in another notation
// (number_in_any_notation): "WHAT: expected a decimal number, got WORD"; any other word:
// "WHAT must be a number, got 'WORD'" ("0.5garbage", "x", "").
[[noreturn]] inline void fail_not_decimal_number(const std::string& what, const std::string& word) {
  if (number_in_any_notation(word)) fail_input(what + ": expected a decimal number, got " + word);
  fail_input(what + " must be a number, got '" + word + "'");
}

// The double that `word`, a decimal number (is_decimal_number), names; any other word, or
// one beyond the range of a double ("1e999"), is bad input naming WHAT ("--rate").
inline double decimal_number(const std::string& word, const std::string& what) {
  double v = 0;
  if (!is_decimal_number(word, &v)) fail_not_decimal_number(what, word);
  if (!std::isfinite(v)) fail_input(what + ": " + word + " is beyond the range of a double (about 1.8e308)");
  return v;
}

// The whole of text as a finite decimal number; else bad input: "WHAT must be a finite
// number, got 'TEXT'" (the parts of an option's value: --buoyancy's A).
inline double finite_number(const std::string& text, const std::string& what) {
  double x = 0;
  if (is_decimal_number(text, &x) && std::isfinite(x)) return x;
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

// An index or count written in digits only: a decimal integer without a sign
// (std::stoull and std::stoll also take " 5" and "+5", and stoull wraps "-1" around).
inline bool decimal_digits(const std::string& word) {
  return decimal_integer(word) && word[0] != '-' && word[0] != '+';
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
