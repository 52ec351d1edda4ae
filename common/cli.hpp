// The command-line conventions of DESIGN.md, once for every tool:
//   -i/--input, -o/--output, --backend, --device, --threads, --profile, -q,
//   --max-bytes, --help (with an example pipeline), --help-all (with the tuning
//   options), --version;
// exit codes and "TOOL: message" errors through run_tool().
#pragma once
#include <cxxopts.hpp>
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device.hpp"
#include "stream.hpp"

namespace numpipe {

// Which of the shared option groups a tool takes.
enum CommonOptions : unsigned {
  kInput = 1u << 0,    // -i/--input FILE (default stdin), --max-bytes
  kOutput = 1u << 1,   // -o/--output FILE (default stdout)
  kCompute = 1u << 2,  // --backend, --device, --threads
  kProfile = 1u << 3,  // --profile FILE
  kMultiDevice = 1u << 4,  // --devices LIST|all
  kMpi = 1u << 5,      // runs under mpirun/srun as one job (others refuse to run on several ranks)
  kNotStream = 1u << 6,  // with kOutput: the output is not a numpipe stream (a picture, a table): no --compress
  kTextInput = 1u << 7,  // reads text tables: --max-bytes bounds what a table may hold (text_table.hpp)
  kNoProgressLine = 1u << 8,  // shows no progress line: -q is accepted and says so
};

const char* numpipe_version();  // "0.1.0"
const char* numpipe_commit();   // git describe at configure time, or "unknown"

struct ToolSpec {
  std::string name;      // "verify"
  std::string summary;   // one line: what it does
  std::string usage;     // positional part of the usage line, e.g. "[A] [B]"
  std::string example;   // an example pipeline for --help (also in the man page's EXAMPLES)
  std::string output;    // what -o writes, e.g. "the prices (a stream)"; empty: "the output stream"
  std::string quiet;     // what -q does; empty: "No progress line on stderr" (kNoProgressLine: that there is none)

  ToolSpec(std::string name_, std::string summary_, std::string usage_, std::string example_,
           std::string output_ = "", std::string quiet_ = "")
      : name(std::move(name_)), summary(std::move(summary_)), usage(std::move(usage_)),
        example(std::move(example_)), output(std::move(output_)), quiet(std::move(quiet_)) {}
};

// An option declared once (Cli::option): bound to its variable, with its checks,
// which Cli::parse() applies before any work. Messages name the option:
// "--steps must be >= 0, got -1".
class DeclaredOption {
 public:
  explicit DeclaredOption(std::string name) : name_(std::move(name)) {}
  virtual ~DeclaredOption() = default;
  const std::string& name() const { return name_; }
  // The words the value may be (one_of), for completion and the man page; empty: any.
  const std::vector<std::string>& choices() const { return choices_; }
  // Reads the parsed value into the variable and checks it (bad input: exit 2).
  virtual void take(const cxxopts::ParseResult& result) = 0;

 protected:
  std::string name_;
  std::vector<std::string> choices_;
};

namespace cli_detail {
std::string show(double x);  // a number as a message shows it: "0.5", "-1", "1e-08"
[[noreturn]] void refuse(const std::string& message);
}  // namespace cli_detail

// cli.option("steps", &o.steps, "Steps to run", "K").min(0): T is int, std::int64_t,
// double, std::string, or std::optional of one (no default: set only when given); a
// repeatable option is a std::optional<std::vector<std::string>> (checked by check(f)).
template <class T>
class Option : public DeclaredOption {
 public:
  using Value = T;
  Option(std::string name, T* target) : DeclaredOption(std::move(name)), target_(target) {}
  Option(std::string name, std::optional<T>* target) : DeclaredOption(std::move(name)), maybe_(target) {}

  Option& min(T lo) { lo_ = lo; return *this; }  // the value >= lo (doubles: and finite)
  Option& range(T lo, T hi) { lo_ = lo; hi_ = hi; return *this; }  // lo <= value <= hi
  Option& positive() { positive_ = true; return *this; }  // > 0 (doubles: and finite)
  // Doubles are finite unless allow_infinite(); an option with no other check says
  // "--X must be finite".
  Option& allow_infinite() { finite_ = false; return *this; }
  // The value is one of these words ("--scheme must be fused or stam, got 'x'").
  Option& one_of(std::vector<std::string> words) { choices_ = std::move(words); return *this; }
  // A former word, accepted and read as its replacement (before one_of's check).
  Option& alias(std::string from, std::string to) { aliases_.emplace_back(std::move(from), std::move(to)); return *this; }
  // Any further check: a function that calls fail_input with its message.
  Option& check(std::function<void(const T&)> f) { checks_.push_back(std::move(f)); return *this; }

  void take(const cxxopts::ParseResult& result) override {
    if (!result.count(name_)) return;  // the default stays (bound), or nothing (optional)
    T v = result[name_].template as<T>();
    if constexpr (std::is_same_v<T, std::string>) {
      for (const auto& [from, to] : aliases_)
        if (v == from) v = to;
      if (!choices_.empty() && std::find(choices_.begin(), choices_.end(), v) == choices_.end()) {
        std::string words;
        for (std::size_t i = 0; i < choices_.size(); ++i)
          words += (i == 0 ? "" : i + 1 == choices_.size() ? " or " : ", ") + choices_[i];
        cli_detail::refuse("--" + name_ + " must be " + words + ", got '" + v + "'");
      }
    } else if constexpr (std::is_arithmetic_v<T>) {
      const bool is_float = std::is_floating_point_v<T>;
      const bool finite = !is_float || !finite_ || std::isfinite(static_cast<double>(v));
      const std::string fin = is_float && finite_ ? "finite and " : "";
      const std::string got = ", got " + cli_detail::show(static_cast<double>(v));
      if (positive_ && (!finite || !(v > T(0)))) cli_detail::refuse("--" + name_ + " must be positive" + (fin.empty() ? "" : " and finite") + got);
      if (lo_ && hi_ && (!finite || !(v >= *lo_ && v <= *hi_)))
        cli_detail::refuse("--" + name_ + " must be in [" + cli_detail::show(double(*lo_)) + ", " + cli_detail::show(double(*hi_)) + "]" + got);
      if (lo_ && !hi_ && (!finite || !(v >= *lo_))) cli_detail::refuse("--" + name_ + " must be " + fin + ">= " + cli_detail::show(double(*lo_)) + got);
      if (!finite) cli_detail::refuse("--" + name_ + " must be finite" + got);
    }
    for (const auto& f : checks_) f(v);
    if (target_) *target_ = std::move(v);
    else *maybe_ = std::move(v);
  }

 private:
  T* target_ = nullptr;
  std::optional<T>* maybe_ = nullptr;
  std::optional<T> lo_, hi_;
  bool positive_ = false, finite_ = true;
  std::vector<std::pair<std::string, std::string>> aliases_;
  std::vector<std::function<void(const T&)>> checks_;
};

class Cli {
 public:
  Cli(ToolSpec spec, unsigned common);

  // Adds options to cxxopts and notes each one's value type, so that parse() can read
  // every value strictly (the whole word a number, no empty word).
  class Adder {
   public:
    Adder(Cli& cli, cxxopts::OptionAdder inner) : cli_(cli), inner_(std::move(inner)) {}
    Adder& operator()(const std::string& opts, const std::string& desc,
                      const std::shared_ptr<const cxxopts::Value>& value = cxxopts::value<bool>(), std::string arg_help = "");

   private:
    Cli& cli_;
    cxxopts::OptionAdder inner_;
  };

  // Options declared once, bound to their variables, with their checks (applied by
  // parse(), before any work): cli.option("steps", &steps, "Steps to run", "K").min(0).
  // The variable's value is the default (shown by --help); a std::optional has none.
  // group: the --help section ("" the tool's own, "Tuning" listed by --help-all only).
  template <class T>
  Option<T>& option(const std::string& name, T* variable, const std::string& help, const std::string& arg = "N",
                    const std::string& group = "") {
    auto decl = std::make_unique<Option<T>>(name, variable);
    add(group)(name, help, cxxopts::value<T>()->default_value(default_text(*variable)), arg);
    return remember(std::move(decl));
  }
  template <class T>
  Option<T>& option(const std::string& name, std::optional<T>* variable, const std::string& help,
                    const std::string& arg = "N", const std::string& group = "") {
    auto decl = std::make_unique<Option<T>>(name, variable);
    add(group)(name, help, cxxopts::value<T>(), arg);
    return remember(std::move(decl));
  }
  // A flag (no value): true when given.
  void flag(const std::string& name, bool* variable, const std::string& help, const std::string& group = "");
  // The declared options, in order (completion, man page checks).
  const std::vector<std::unique_ptr<DeclaredOption>>& declared() const { return declared_; }

  // Tool-specific options: cli.add()("n", "size", cxxopts::value<int>()->default_value("8"))
  // (declared options above are the newer way: bound and checked in one statement)
  Adder add(const std::string& group = "");
  // Tuning options (kernel variants, block and chunk sizes): parsed like any other
  // option but listed only by --help-all, under "Tuning" (docs/DEVELOPING.md "Tuning").
  Adder tuning();
  // An environment variable the tool reads for tuning, listed by --help-all.
  void tuning_env(const std::string& name, const std::string& description);
  // An exit code besides 0, 2, 3 and 4 that this tool can return (verify: 1).
  void exit_code(int code, const std::string& meaning);
  void positional(const std::vector<std::string>& names);
  // Parses argv. Handles --help and --version (prints, exits 0). Bad usage: Error(bad_input).
  const cxxopts::ParseResult& parse(int argc, char** argv);
  const cxxopts::ParseResult& args() const { return result_; }
  bool has(const std::string& option) const { return result_.count(option) > 0; }
  template <class T>
  T get(const std::string& option) const {
    try {
      return result_[option].as<T>();
    } catch (const std::exception& e) {
      fail_input("option --" + option + ": " + e.what());
    }
  }

  // Common options, after parse().
  std::string input() const;
  std::string output() const;
  ReadLimits read_limits() const;
  Backend backend() const;   // resolves auto
  int device() const;
  std::vector<int> devices() const;  // --devices: "all" or "0,2"; defaults to {device()}
  int threads() const;       // 0: OpenMP's default
  std::string profile_path() const;
  bool quiet() const;
  const std::string& command_line() const { return command_line_; }
  const ToolSpec& spec() const { return spec_; }

  // Provenance: {"tool", "version", "commit", "command"}, where command is a shell
  // command (each word quoted where the shell needs it) that re-runs the step;
  // stamp() appends it to the
  // history carried over from the input's attrs and returns the output attrs.
  json provenance() const;
  json stamp(json attrs, const json& input_attrs = json()) const;

  // --help's text; with all, also the tuning options and environment variables (--help-all).
  std::string help(bool all = false) const;

 private:
  template <class O>
  O& remember(std::unique_ptr<O> decl) {
    O& ref = *decl;
    declared_.push_back(std::move(decl));
    return ref;
  }
  static std::string default_text(const std::string& v) { return v; }
  static std::string default_text(double v);
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  static std::string default_text(I v) { return std::to_string(v); }
  // Every given value read whole: numbers without trailing text, integers in decimal, no empty words.
  void check_values_strictly() const;
  // After cxxopts refused a value: names the option (an integer or a number) whose value is not one.
  void name_bad_value(const std::vector<std::string>& words) const;

  ToolSpec spec_;
  unsigned common_;
  std::vector<std::unique_ptr<DeclaredOption>> declared_;
  std::vector<bool*> flags_;
  std::vector<std::string> flag_names_;
  // The option names whose values are numbers (checked whole) and words (not empty).
  std::vector<std::string> number_options_, number_list_options_, word_options_, integer_options_, positional_names_;
  cxxopts::Options options_;
  cxxopts::ParseResult result_;
  std::string command_line_;
  bool has_tuning_ = false;
  std::vector<std::pair<std::string, std::string>> tuning_env_;
  std::vector<std::pair<int, std::string>> exit_codes_;
};

// Runs a tool's body: maps numpipe::Error to its exit code and "TOOL: message" on
// stderr, cxxopts errors to exit 2, std::bad_alloc to exit 3, anything else to 4;
// a failed write to stdout (a full disk, a closed pipe with SIGPIPE ignored) is
// exit 3 too.
int run_tool(const std::string& name, const std::function<int()>& body);

// Flushes stdout (C and C++ streams): resource error (exit 3) when a write failed.
void flush_stdout();

// The most OpenMP threads a tool accepts: 64 per online core.
int max_threads();

// Reads the records of the input named by the common options that `keep` keeps
// (every record without a filter; the others' payloads are passed over unread),
// within --max-bytes per record and in total (in this process; under MPI use
// par::world().read_input(cli), which reads on rank 0 only).
std::vector<Record> read_input(const Cli& cli, const RecordFilter& keep = {});
std::vector<Record> read_input_stream(const Cli& cli, const RecordFilter& keep = {});

// A filter keeping the records named in `names`, refusing (exit 2) a second
// record of one of them: for tools that take one state or one series.
RecordFilter keep_names_once(std::vector<std::string> names);

}  // namespace numpipe
