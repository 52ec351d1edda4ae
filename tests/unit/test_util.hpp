// Helpers shared by unit tests: the message of a bad-input error, a variable of the
// environment set for one scope, a command line as argc and argv.
#pragma once
#include <stdlib.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

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

// A command line for Cli::parse, from its words (cxxopts wants char**):
// Argv a({"tool", "--steps", "3"}); cli.parse(a.argc(), a.argv()).
struct Argv {
  std::vector<std::string> words;
  std::vector<char*> ptrs;
  explicit Argv(std::vector<std::string> w) : words(std::move(w)) {
    for (auto& s : words) ptrs.push_back(s.data());
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
};

}  // namespace numpipe::test
