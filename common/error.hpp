// Errors as values the user can act on: every failure carries the exit code of
// DESIGN.md and a message "what went wrong: the value that caused it".
#pragma once
#include <stdexcept>
#include <string>

namespace numpipe {

enum class ExitCode : int {
  ok = 0,
  verify_failed = 1,  // verify: streams differ beyond tolerance
  bad_input = 2,      // bad usage or bad input
  resource = 3,       // out of memory, no device, I/O failure
  internal = 4,       // a bug: please report
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Shorthands for the common cases.
[[noreturn]] inline void fail_input(const std::string& message) { throw Error(ExitCode::bad_input, message); }
[[noreturn]] inline void fail_resource(const std::string& message) { throw Error(ExitCode::resource, message); }
[[noreturn]] inline void fail_internal(const std::string& message) { throw Error(ExitCode::internal, message); }

}  // namespace numpipe
