#include "cli.hpp"

#include <omp.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <typeinfo>

#include "memory.hpp"
#include "parallel.hpp"
#include "signals.hpp"
#include "strings.hpp"
#include "text_table.hpp"
#include "timeline.hpp"
#include "workers.hpp"

namespace numpipe {

namespace {
// One word for a POSIX shell: as it is when no character in it is special, else
// in single quotes (a ' inside as '\'').
std::string quote_arg(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()[]{}~#!") == std::string::npos) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Ranks of the MPI job this process was started in (1 when not under mpirun/srun).
int launched_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* e = std::getenv(v)) return std::max(1, std::atoi(e));
  return 1;
}

// OMP_STACKSIZE's bytes (libgomp: a number with B, K, M or G, K by default), 0 when unset.
std::size_t omp_stack_bytes() {
  const char* e = std::getenv("OMP_STACKSIZE");
  if (!e) e = std::getenv("GOMP_STACKSIZE");
  if (!e) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(e, &end, 10);
  while (*end == ' ') ++end;
  switch (*end) {
    case 'b': case 'B': return v;
    case 'm': case 'M': return v << 20;
    case 'g': case 'G': return v << 30;
    default: return v << 10;
  }
}

extern "C" void* wait_for_release(void* flag) {
  auto* go = static_cast<std::atomic<bool>*>(flag);
  while (!go->load(std::memory_order_acquire)) usleep(1000);
  return nullptr;
}

// libgomp ends the process with exit 1 ("Thread creation failed") when it cannot
// start a team, before numpipe could say anything: start the team's threads here
// first (with libgomp's stack size), all alive at once, and report a failure as a
// resource error.
void require_threads(int threads) {
  if (threads <= 1) return;
  std::atomic<bool> go{false};
  std::vector<pthread_t> started;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (std::size_t stack = omp_stack_bytes()) pthread_attr_setstacksize(&attr, stack);
  int err = 0;
  for (int i = 1; i < threads && !err; ++i) {
    pthread_t t;
    err = pthread_create(&t, &attr, wait_for_release, &go);
    if (!err) started.push_back(t);
  }
  pthread_attr_destroy(&attr);
  go.store(true, std::memory_order_release);
  for (pthread_t t : started) pthread_join(t, nullptr);
  if (err)
    fail_resource("cannot start " + std::to_string(threads) + " threads: thread " + std::to_string(started.size() + 1) +
                  " failed (" + std::strerror(err) + "); use fewer --threads, or raise the limits (ulimit -u, ulimit -v)");
}

// --profile FILE: the file must be appendable (or creatable) before any work is done.
void check_profile_path(const std::string& path) {
  if (path.empty()) fail_input("--profile needs a file name");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail_input("--profile '" + path + "' is a folder, not a file");
    if (access(path.c_str(), W_OK) != 0)
      fail_input("cannot append to the --profile file '" + path + "': " + std::strerror(errno));
    return;
  }
  if (errno != ENOENT) fail_input("cannot use the --profile file '" + path + "': " + std::strerror(errno));
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    fail_input("cannot create the --profile file '" + path + "' (folder '" + dir + "'): " + std::strerror(errno));
}

// --devices: 'all' or a list of non-negative integers (checked before any work, whatever the backend).
std::vector<int> parse_device_list(const std::string& spec) {
  std::vector<int> list;
  if (spec == "all") return list;
  for (const std::string& item : split_fields(spec)) {
    try {
      std::size_t used = 0;
      int d = std::stoi(item, &used);
      if (used != item.size() || d < 0) throw std::invalid_argument(item);
      list.push_back(d);
    } catch (const std::exception&) {
      fail_input("--devices must be 'all' or a comma-separated list of device indices, got '" + spec + "'");
    }
  }
  if (list.empty()) fail_input("--devices must be 'all' or a comma-separated list of device indices, got '" + spec + "'");
  return list;
}

// Writes `text` to stdout in one write(2) where the pipe takes it (up to 64 KiB): a
// reader that stops at its first match (`tool --help | grep -q ...`) then cannot close
// the pipe between two writes of a help text longer than stdio's 4 KiB buffer.
void print_whole(const std::string& text) {
  flush_stdout();
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_resource(std::string("cannot write standard output: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

// The program words of argv[0]: a subcommand's Cli ("gen-input price") gets
// argv[0] = "PROGRAM price" from its dispatcher; PROGRAM is one word (quoted
// where needed), the subcommand words follow as words of their own.
std::string program_words(const std::string& argv0, const std::string& tool_name) {
  std::size_t sub_words = 0;
  for (char c : tool_name) sub_words += c == ' ';
  std::string program = argv0, rest;
  for (std::size_t k = 0; k < sub_words; ++k) {
    auto space = program.rfind(' ');
    if (space == std::string::npos) break;
    rest = " " + quote_arg(program.substr(space + 1)) + rest;
    program.resize(space);
  }
  return quote_arg(program) + rest;
}
// The words a common option's value may be (the tools' own options say theirs with .one_of).
std::string choices_of_common_option(const std::string& name) { return name == "backend" ? "auto cpu cuda" : ""; }
}  // namespace

int max_threads() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<int>(64 * std::max(1L, std::min(cores, 1L << 20)));
}

void flush_stdout() {
  std::cout.flush();
  const bool cpp_failed = !std::cout;
  errno = 0;
  const bool c_failed = std::fflush(stdout) != 0 || std::ferror(stdout);
  if (cpp_failed || c_failed) {
    const int err = errno;
    std::clearerr(stdout);
    std::cout.clear();
    fail_resource(std::string("cannot write standard output: ") +
                  (err ? std::strerror(err) : "the write failed (a full disk, or a closed pipe?)"));
  }
}

Cli::Cli(ToolSpec spec, unsigned common)
    : spec_(std::move(spec)), common_(common), options_(spec_.name, spec_.summary) {
  options_.custom_help("[OPTIONS]");
  if (!spec_.usage.empty()) options_.positional_help(spec_.usage);
  options_.set_width(100);
  auto g = add("Common");
  if (common_ & kInput) {
    g("i,input", "Read the input stream from FILE ('-': stdin)", cxxopts::value<std::string>()->default_value("-"), "FILE");
    g("max-bytes", "Refuse an input array larger than this many bytes, and arrays kept beyond it in total (default: half of RAM)",
      cxxopts::value<std::uint64_t>(), "N");
  }
  if ((common_ & kTextInput) && !(common_ & kInput))
    g("max-bytes", "Refuse a text table that would hold more than this many bytes in memory (default: half of RAM)",
      cxxopts::value<std::uint64_t>(), "N");
  if (common_ & kOutput) {
    g("o,output", "Write " + (spec_.output.empty() ? std::string("the output stream") : spec_.output) +
                      " to FILE ('-': stdout), renamed into place only when complete",
      cxxopts::value<std::string>()->default_value("-"), "FILE");
    if (!(common_ & kNotStream))
      g("compress", "Output compression: none (fastest: for local pipes and scratch files), fast, or a zstd level "
      "1 to 19 (default: 1, or NUMPIPE_ZSTD_LEVEL)", cxxopts::value<std::string>(), "C");
  }
  if (common_ & kCompute) {
    g("backend", "Backend: auto (CUDA if a device is present), cpu or cuda", cxxopts::value<std::string>()->default_value("auto"), "B");
    g("device", "CUDA device index", cxxopts::value<int>()->default_value("0"), "N");
    g("threads", "OpenMP threads for the CPU backend (0: all cores)", cxxopts::value<int>()->default_value("0"), "N");
  }
  if (common_ & kMultiDevice)
    g("devices", "Spread the work over CUDA devices: 'all' or a list such as 0,1", cxxopts::value<std::string>(), "LIST");
  if (common_ & kProfile)
    g("profile", "Append profile records (phase timings, bytes, flops) to FILE", cxxopts::value<std::string>(), "FILE");
  std::string quiet = spec_.quiet;
  if (quiet.empty())
    quiet = common_ & kNoProgressLine
                ? "Accepted for symmetry with the other tools (" + spec_.name + " shows no progress line)"
                : "No progress line on stderr";
  g("q,quiet", quiet);
  g("h,help", "Print this help and exit");
  g("version", "Print the version and exit");
}

namespace cli_detail {
std::string show(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}
void refuse(const std::string& message) { fail_input(message); }
}  // namespace cli_detail

namespace {
template <class T>
bool holds(const cxxopts::Value& v) {
  return typeid(v) == typeid(cxxopts::values::standard_value<T>);
}
// The option's name as cxxopts keys its values: the long name ("i,input": input).
std::string essential_name(const std::string& opts) {
  const auto comma = opts.find(',');
  return comma == std::string::npos ? opts : opts.substr(comma + 1);
}
bool is_listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
// "0x10", "-0X1f": hexadecimal, which cxxopts reads (0x10 as 16) or refuses (unsigned, 0X).
bool hexadecimal_integer(const std::string& word) {
  const std::size_t at = !word.empty() && (word[0] == '-' || word[0] == '+') ? 1 : 0;
  if (word.size() < at + 3 || word[at] != '0' || (word[at + 1] != 'x' && word[at + 1] != 'X')) return false;
  return std::all_of(word.begin() + at + 2, word.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}
// A double option's value in decimal (strings.hpp decimal_number): cxxopts reads a stream,
// which takes leading blanks (" 1") and a hexadecimal word's first digit ("0x1p3" as 0), and
// refuses "inf" with a message that names neither option nor rule. A list item by item.
void require_decimal(const std::string& name, const std::string& value, bool list) {
  if (!list) {
    decimal_number(value, "--" + name);
    return;
  }
  for (const std::string& item : split_fields(value))
    decimal_number(item.empty() ? value : item, "--" + name);  // an empty item: the whole list named
}
}  // namespace

Cli::Adder& Cli::Adder::operator()(const std::string& opts, const std::string& desc,
                                   const std::shared_ptr<const cxxopts::Value>& value, std::string arg_help) {
  const std::string name = essential_name(opts);
  const cxxopts::Value& v = *value;
  if (holds<double>(v) || holds<float>(v) || holds<std::vector<double>>(v) || holds<std::vector<float>>(v))
  {
    cli_.number_options_.push_back(name);
    if (opts.find(',') != std::string::npos) cli_.number_options_.push_back(opts.substr(0, opts.find(',')));
    if (holds<std::vector<double>>(v) || holds<std::vector<float>>(v)) {
      cli_.number_list_options_.push_back(name);
      if (opts.find(',') != std::string::npos) cli_.number_list_options_.push_back(opts.substr(0, opts.find(',')));
    }
  }
  if (!holds<bool>(v)) cli_.word_options_.push_back(name);
  if (holds<int>(v) || holds<long>(v) || holds<long long>(v) || holds<unsigned>(v) || holds<unsigned long>(v) ||
      holds<unsigned long long>(v)) {
    cli_.integer_options_.push_back(name);
    if (opts.find(',') != std::string::npos) cli_.integer_options_.push_back(opts.substr(0, opts.find(',')));
  }
  inner_(opts, desc, value, std::move(arg_help));
  return *this;
}

Cli::Adder Cli::add(const std::string& group) { return Adder(*this, options_.add_options(group)); }

Cli::Adder Cli::tuning() {
  if (!has_tuning_) {
    has_tuning_ = true;
    options_.add_options("Common")("help-all", "Print this help with the tuning options too, and exit");
  }
  return Adder(*this, options_.add_options("Tuning"));
}

void Cli::flag(const std::string& name, bool* variable, const std::string& help, const std::string& group) {
  add(group)(name, help);
  flags_.push_back(variable);
  flag_names_.push_back(name);
}

std::string Cli::default_text(double v) {
  std::ostringstream s;
  s << v;  // 0.1, 1e-05: as a user writes it
  if (std::stod(s.str()) != v) {
    s.str("");
    s.precision(17);
    s << v;
  }
  return s.str();
}

void Cli::name_bad_value(const std::vector<std::string>& words) const {
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-') continue;
    std::string name = w.substr(w[1] == '-' ? 2 : 1), value;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < words.size()) {
      value = words[i + 1];
    }
    const bool is_integer = std::find(integer_options_.begin(), integer_options_.end(), name) != integer_options_.end();
    const bool is_number = std::find(number_options_.begin(), number_options_.end(), name) != number_options_.end();
    if (!is_integer && !is_number) continue;
    if (value.empty()) fail_input("option --" + name + " is empty (--" + name + " must not be empty: give a value)");
    if (is_integer && hexadecimal_integer(value)) fail_not_decimal_integer("--" + name, value);
    if (is_integer && !decimal_integer(value)) fail_input("--" + name + " must be an integer, got '" + value + "'");
    if (is_number) require_decimal(name, value, is_listed(number_list_options_, name));
  }
}

void Cli::check_values_strictly() const {
  for (const cxxopts::KeyValue& kv : result_.arguments()) {
    const std::string& name = kv.key();
    const bool positional = std::find(positional_names_.begin(), positional_names_.end(), name) != positional_names_.end();
    const bool word = std::find(word_options_.begin(), word_options_.end(), name) != word_options_.end();
    if (word && kv.value().empty()) {
      if (positional) fail_input("an argument is empty (see " + spec_.name + " --help)");
      fail_input("option --" + name + " is empty (--" + name + " must not be empty: give a value)");
    }
    // integers in decimal only (cxxopts has already refused what is no integer at all)
    if (std::find(integer_options_.begin(), integer_options_.end(), name) != integer_options_.end() &&
        !decimal_integer(kv.value()))
      fail_not_decimal_integer("--" + name, kv.value());
    // numbers in decimal only
    if (is_listed(number_options_, name)) require_decimal(name, kv.value(), is_listed(number_list_options_, name));
  }
}

void Cli::tuning_env(const std::string& name, const std::string& description) {
  tuning();  // --help-all lists them
  tuning_env_.emplace_back(name, description);
}

void Cli::exit_code(int code, const std::string& meaning) { exit_codes_.emplace_back(code, meaning); }

void Cli::positional(const std::vector<std::string>& names) {
  positional_names_.insert(positional_names_.end(), names.begin(), names.end());
  options_.parse_positional(names);
}

std::string Cli::help(bool all) const {
  std::vector<std::string> groups;
  // "Removed": options kept only to refuse them with a message naming their
  // replacement (render's --range); never listed.
  for (const auto& g : options_.groups())
    if ((all || g != "Tuning") && g != "Removed") groups.push_back(g);
  std::string h = options_.help(groups);
  if (all && !tuning_env_.empty()) {
    h += "\n Tuning (environment):\n";
    for (const auto& [name, text] : tuning_env_) h += "  " + name + "\n      " + text + "\n";
  }
  if (all && has_tuning_)
    h += "\nTuning options change how the work is scheduled, never the results' meaning; the defaults\n"
         "are chosen for the device. They exist for benchmarks (docs/DEVELOPING.md, \"Tuning\").\n";
  if (!spec_.example.empty()) h += "\nExample:\n" + spec_.example + "\n";
  std::vector<std::pair<int, std::string>> codes = {{0, "success"}};
  codes.insert(codes.end(), exit_codes_.begin(), exit_codes_.end());
  codes.emplace_back(2, "bad usage or bad input");
  codes.emplace_back(3, (common_ & kCompute) ? "resource failure (out of memory, no CUDA device, an I/O error)"
                                             : "resource failure (out of memory, an I/O error)");
  codes.emplace_back(4, "internal error");
  std::sort(codes.begin(), codes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  h += "\nExit codes:";
  for (std::size_t i = 0; i < codes.size(); ++i)
    h += (i ? ", " : " ") + std::to_string(codes[i].first) + " " + codes[i].second;
  // A subcommand ("gen-input price") is documented in its program's page.
  h += ".\nSee man " + spec_.name.substr(0, spec_.name.find(' ')) + "(1).\n";
  return h;
}

const cxxopts::ParseResult& Cli::parse(int argc, char** argv) {
  // --help-options (not listed): the declared options, one a line, "OPTION<TAB>GROUP<TAB>ARG<TAB>CHOICES<TAB>SHORT"
  // (OPTION --long, or -x where there is no long name; CHOICES the words of .one_of,
  // space-separated; SHORT the -x of an option with both), read by the shell completion and the
  // test that keeps the man pages' OPTIONS sections in step with the declarations.
  if (argc == 2 && std::string(argv[1]) == "--help-options") {
    std::string table;
    for (const auto& group : options_.groups()) {
      if (group == "Removed") continue;
      for (const auto& o : options_.group_help(group).options) {
        const std::string name = o.l.empty() ? "-" + o.s : "--" + o.l.front();
        if (!o.l.empty() && std::find(positional_names_.begin(), positional_names_.end(), o.l.front()) != positional_names_.end())
          continue;  // an argument (inspect's FILE...), not an option
        std::string choices = o.l.empty() ? "" : choices_of_common_option(o.l.front());
        for (const auto& decl : declared_)
          if (!o.l.empty() && decl->name() == o.l.front())
            for (const auto& word : decl->choices()) choices += (choices.empty() ? "" : " ") + word;
        table += name + "\t" + group + "\t" + (o.is_boolean ? "" : o.arg_help) + "\t" + choices + "\t" +
                 (o.l.empty() || o.s.empty() ? "" : "-" + o.s) + "\n";
      }
    }
    print_whole(table);
    std::exit(0);
  }
  install_signal_cleanup();
  command_line_ = argc > 0 ? program_words(argv[0], spec_.name) : spec_.name;
  for (int i = 1; i < argc; ++i) command_line_ += " " + quote_arg(argv[i]);
  // cxxopts knows one-letter names only as short options, but the workloads'
  // documents spell them --n, --g, --p: read --X as -X and --X=V as -X V.
  std::vector<std::string> words;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i > 0 && a.size() >= 3 && a[0] == '-' && a[1] == '-' && std::isalpha(static_cast<unsigned char>(a[2])) &&
        (a.size() == 3 || a[3] == '=')) {
      words.push_back(std::string("-") + a[2]);
      if (a.size() > 3) words.push_back(a.substr(4));
    } else {
      words.push_back(std::move(a));
    }
  }
  std::vector<char*> args;
  for (auto& w : words) args.push_back(w.data());
  try {
    result_ = options_.parse(static_cast<int>(args.size()), args.data());
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    name_bad_value(words);
    fail_input(std::string(e.what()) + " (see " + spec_.name + " --help)");
  } catch (const cxxopts::exceptions::exception& e) {
    fail_input(std::string(e.what()) + " (see " + spec_.name + " --help)");
  }
  if (result_.count("help") || (has_tuning_ && result_.count("help-all"))) {
    print_whole(help(has_tuning_ && result_.count("help-all")));
    std::exit(0);
  }
  if (result_.count("version")) {
    std::cout << spec_.name << " (numpipe) " << numpipe_version() << " commit " << numpipe_commit()
              << (built_with_cuda() ? " cuda" : " cpu-only") << "\n";
    flush_stdout();
    std::exit(0);
  }
  if (!result_.unmatched().empty()) fail_input("unexpected argument '" + result_.unmatched().front() + "' (see " + spec_.name + " --help)");
  check_values_strictly();
  // the declared options: their variables and checks, before any work
  for (std::size_t i = 0; i < flags_.size(); ++i) *flags_[i] = result_.count(flag_names_[i]) > 0;
  for (const auto& decl : declared_) decl->take(result_);
  if (!(common_ & kMpi) && launched_ranks() > 1)
    fail_input(spec_.name + " does not run under MPI: mpirun started " + std::to_string(launched_ranks()) +
               " copies of it; run it as one process");
  if (common_ & kCompute) {
    int t = get<int>("threads");
    if (t < 0) fail_input("--threads must be >= 0, got " + std::to_string(t));
    if (t > max_threads())
      fail_input("--threads " + std::to_string(t) + " is more than 64 threads per core (" +
                 std::to_string(max_threads() / 64) + " cores here: at most " + std::to_string(max_threads()) + ")");
    if (t == 0)
      if (const char* env = std::getenv("OMP_NUM_THREADS")) {
        const long long v = std::atoll(env);  // a list "8,2" counts by its first level
        if (v > max_threads())
          fail_input(std::string("OMP_NUM_THREADS=") + env + " is more than 64 threads per core (at most " +
                     std::to_string(max_threads()) + ")");
      }
    if (t > 0) omp_set_num_threads(t);
    require_threads(t > 0 ? t : omp_get_max_threads());
    const int d = get<int>("device");
    if (d < 0) fail_input("--device must be >= 0, got " + std::to_string(d));
  }
  if ((common_ & (kInput | kTextInput)) && has("max-bytes")) {
    const std::uint64_t limit = get<std::uint64_t>("max-bytes");
    if (limit == 0) fail_input("--max-bytes must be positive");
    set_text_table_max_bytes(limit);  // every text table this run reads
  }
  if ((common_ & kMultiDevice) && has("devices")) parse_device_list(get<std::string>("devices"));
  if ((common_ & kProfile) && has("profile")) check_profile_path(get<std::string>("profile"));
  const bool stream_out = (common_ & kOutput) && !(common_ & kNotStream);
  if (stream_out && has("compress")) set_output_compression(parse_compression(get<std::string>("compress"), "--compress"));
  if (common_ & (kInput | kOutput)) {  // the stream's knobs, checked before any work
    WorkerPool::default_size();
    if (stream_out && !has("compress")) default_compression();
  }
  // The CUDA context is made while the input is read (device.hpp, start_cuda_early).
  // Under MPI the rank picks its GPU later: nothing is started early there. Only the
  // solvers (kProfile): profile-report's --backend is for its rare --calibrate.
  if ((common_ & kCompute) && (common_ & kProfile) && get<std::string>("backend") != "cpu" && launched_ranks() <= 1) {
    std::vector<int> early = {get<int>("device")};
    if ((common_ & kMultiDevice) && has("devices")) {
      early = parse_device_list(get<std::string>("devices"));
      if (early.empty()) early = {-1};  // all
    }
    start_cuda_early(early);
  }
  timeline::mark_started();
  return result_;
}

std::string Cli::input() const { return (common_ & kInput) ? get<std::string>("input") : "-"; }
std::string Cli::output() const { return (common_ & kOutput) ? get<std::string>("output") : "-"; }

ReadLimits Cli::read_limits() const {
  ReadLimits l;
  if ((common_ & kInput) && has("max-bytes")) {
    l.max_bytes = get<std::uint64_t>("max-bytes");
    if (l.max_bytes == 0) fail_input("--max-bytes must be positive");
  }
  return l;
}

Backend Cli::backend() const { return resolve_backend((common_ & kCompute) ? get<std::string>("backend") : "cpu"); }
int Cli::device() const {
  int d = (common_ & kCompute) ? get<int>("device") : 0;
  if (d < 0) fail_input("--device must be >= 0, got " + std::to_string(d));
  return d;
}
int Cli::threads() const { return (common_ & kCompute) ? get<int>("threads") : 0; }
std::string Cli::profile_path() const { return ((common_ & kProfile) && has("profile")) ? get<std::string>("profile") : ""; }
bool Cli::quiet() const { return has("quiet"); }

std::vector<int> Cli::devices() const {
  if (!(common_ & kMultiDevice) || !has("devices")) return {device()};
  std::string spec = get<std::string>("devices");
  std::vector<int> list = parse_device_list(spec);
  if (spec == "all") {
    for (int i = 0; i < cuda_device_count(); ++i) list.push_back(i);
    if (list.empty()) fail_resource("--devices all: no CUDA device is visible");
  }
  return list;
}

json Cli::provenance() const {
  return {{"tool", spec_.name}, {"version", numpipe_version()}, {"commit", numpipe_commit()}, {"command", command_line_}};
}

json Cli::stamp(json attrs, const json& input_attrs) const {
  if (attrs.is_null()) attrs = json::object();
  json history = json::array();
  if (input_attrs.is_object() && input_attrs.contains("history") && input_attrs["history"].is_array())
    history = input_attrs["history"];
  history.push_back(provenance());
  attrs["history"] = std::move(history);
  return attrs;
}

namespace {
// Under MPI a failing rank ends every rank with its exit code; alone, it returns it.
int failed(const std::string& name, int code, const std::string& message) {
  const auto& group = par::world();
  if (group.distributed())
    std::fprintf(stderr, "%s: rank %d: %s\n", name.c_str(), group.rank(), message.c_str());
  else
    std::fprintf(stderr, "%s: %s\n", name.c_str(), message.c_str());
  par::abort_all(code);
  return code;
}
}  // namespace

int run_tool(const std::string& name, const std::function<int()>& body) {
  set_tool_name(name);
  struct EndEarlyStart {
    ~EndEarlyStart() { end_cuda_early(); }
  } end_early_start;  // however the body ends
  try {
    const int code = body();
    flush_stdout();  // what the tool printed must have reached its reader
    return code;
  } catch (const Error& e) {
    return failed(name, static_cast<int>(e.code()), e.what());
  } catch (const cxxopts::exceptions::exception& e) {
    return failed(name, static_cast<int>(ExitCode::bad_input), std::string(e.what()) + " (see " + name + " --help)");
  } catch (const std::bad_alloc&) {
    return failed(name, static_cast<int>(ExitCode::resource), out_of_memory_message());
  } catch (const std::exception& e) {
    return failed(name, static_cast<int>(ExitCode::internal), std::string("internal error: ") + e.what() + " (please report this)");
  }
}

std::vector<Record> read_input_stream(const Cli& cli, const RecordFilter& keep) {
  return read_stream(cli.input(), cli.read_limits(), keep);
}
std::vector<Record> read_input(const Cli& cli, const RecordFilter& keep) { return read_input_stream(cli, keep); }

RecordFilter keep_names_once(std::vector<std::string> names) {
  auto seen = std::make_shared<std::map<std::string, std::uint64_t>>();
  return [names = std::move(names), seen](const RecordHeader& h) {
    if (std::find(names.begin(), names.end(), h.name) == names.end()) return false;
    auto [it, fresh] = seen->emplace(h.name, h.index);
    if (!fresh)
      fail_input("the input holds two records '" + h.name + "' (records " + std::to_string(it->second) + " and " +
                 std::to_string(h.index) + "): give one (for example, not two concatenated streams)");
    return true;
  };
}

}  // namespace numpipe
