// Reading a NUMPIPE_* environment variable (a tuning knob, docs/tuning.md): its text,
// or one of a fixed set of words with the error every knob gives for another word.
#pragma once
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>

#include "error.hpp"

namespace numpipe {

// The variable's text, or nullopt where it is unset (an empty value is returned as "").
inline std::optional<std::string> env_text(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

// The variable's value where it is one of `choices`; `unset` where it is unset or
// empty; any other value exits 2: "NAME must be a, b or c, got 'VALUE'".
inline std::string env_choice(const char* name, std::initializer_list<const char*> choices, const char* unset) {
  const std::string value = env_text(name).value_or("");
  if (value.empty()) return unset;
  std::string listed;
  std::size_t i = 0;
  for (const char* choice : choices) {
    if (value == choice) return value;
    listed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choice);
    ++i;
  }
  fail_input(std::string(name) + " must be " + listed + ", got '" + value + "'");
}

}  // namespace numpipe
