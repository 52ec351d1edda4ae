// Helpers shared by unit tests: the message of a bad-input error, a variable of the
// environment set for one scope.
#pragma once
#include <stdlib.h>

#include <functional>
#include <string>

#include "common/error.hpp"

namespace numpipe::test {

// The message of the bad-input error (exit 2) f throws; "" when it throws none, and
// the exit code with the message when it throws another error.
inline std::string bad_input(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() == ExitCode::bad_input) return e.what();
    return std::string("exit code ") + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
  }
  return "";
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Sets NAME to VALUE for one scope, then unsets it.
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~ScopedEnv() { unsetenv(name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

}  // namespace numpipe::test
