// The command-line conventions of DESIGN.md, once for every tool:
//   -i/--input, -o/--output, --backend, --device, --threads, --profile, -q,
//   --max-bytes, --help (with an example pipeline), --help-all (with the tuning
//   options), --version;
// exit codes and "TOOL: message" errors through run_tool().
#pragma once
#include <cxxopts.hpp>
#include <functional>
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
};

const char* numpipe_version();  // "0.1.0"
const char* numpipe_commit();   // git describe at configure time, or "unknown"

struct ToolSpec {
  std::string name;      // "verify"
  std::string summary;   // one line: what it does
  std::string usage;     // positional part of the usage line, e.g. "[A] [B]"
  std::string example;   // an example pipeline for --help (also in the man page's EXAMPLES)
  std::string output;    // what -o writes, e.g. "the prices (a stream)"; empty: "the output stream"
  std::string quiet;     // what -q does; empty: "No progress line on stderr"

  ToolSpec(std::string name_, std::string summary_, std::string usage_, std::string example_,
           std::string output_ = "", std::string quiet_ = "")
      : name(std::move(name_)), summary(std::move(summary_)), usage(std::move(usage_)),
        example(std::move(example_)), output(std::move(output_)), quiet(std::move(quiet_)) {}
};

class Cli {
 public:
  Cli(ToolSpec spec, unsigned common);

  // Tool-specific options: cli.add()("n", "size", cxxopts::value<int>()->default_value("8"))
  cxxopts::OptionAdder add(const std::string& group = "");
  // Tuning options (kernel variants, block and chunk sizes): parsed like any other
  // option but listed only by --help-all, under "Tuning" (docs/DEVELOPING.md "Tuning").
  cxxopts::OptionAdder tuning();
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
  ToolSpec spec_;
  unsigned common_;
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
