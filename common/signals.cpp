#include "signals.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace numpipe {
namespace {

// Fixed storage: the handler may only touch async-signal-safe state.
constexpr int kMaxTemps = 16;
constexpr int kMaxPath = 4096;
char g_temp_paths[kMaxTemps][kMaxPath];
volatile sig_atomic_t g_temp_used[kMaxTemps];
std::mutex g_mutex;

extern "C" void cleanup_and_reraise(int sig) {
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_used[i]) unlink(g_temp_paths[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE}) {
      struct sigaction old;
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // inherited as ignored
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = cleanup_and_reraise;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  });
}

namespace {
std::string& tool_name_storage() {
  static std::string name = "numpipe";
  return name;
}
}  // namespace

void set_tool_name(const std::string& name) { tool_name_storage() = name; }
const std::string& tool_name() { return tool_name_storage(); }

void report_stale_temp_files(const std::string& folder, const std::string& base) {
  const std::string prefix = "." + base + ".tmp-";
  DIR* dir = opendir(folder.c_str());
  if (!dir) return;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    // mkstemp's pattern: the prefix and six characters
    if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string path = (folder == "/" ? "" : folder) + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    char when[32] = "";
    std::tm tm{};
    if (localtime_r(&st.st_mtime, &tm)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    std::fprintf(stderr,
                 "%s: note: '%s' (%lld bytes, %s) is the temporary file of a run that did not finish (killed, or "
                 "still writing '%s'); remove it once no run writes there\n",
                 tool_name().c_str(), path.c_str(), static_cast<long long>(st.st_size), when, base.c_str());
  }
  closedir(dir);
}

void register_temp_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (path.size() >= kMaxPath) return;
  for (int i = 0; i < kMaxTemps; ++i)
    if (!g_temp_used[i]) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      g_temp_used[i] = 1;
      return;
    }
}

void unregister_temp_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_used[i] && path == g_temp_paths[i]) {
      g_temp_used[i] = 0;
      return;
    }
}

void remove_temp_files_now() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_used[i]) {
      unlink(g_temp_paths[i]);
      g_temp_used[i] = 0;
    }
}

mode_t current_umask() {
  // umask() can only be read by setting it; restore at once (done once, at start-up).
  static const mode_t mask = [] {
    mode_t m = umask(022);
    umask(m);
    return m;
  }();
  return mask;
}

}  // namespace numpipe
