#include "signals.hpp"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

namespace numpipe {
namespace {

// Fixed storage: the handler may only touch async-signal-safe state. A slot
// holds a temporary output and, from its rename on, the path it was renamed to.
constexpr int kMaxTemps = 64;
constexpr int kCleanedUpSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE};
constexpr int kMaxPath = 4096;
enum SlotState : sig_atomic_t {
  kFree = 0,
  kTemp = 1,      // a temporary file: removed on a signal
  kRenaming = 2,  // being renamed into place: whichever of the two names exists is removed
  kPlaced = 3,    // renamed into place by this run: removed on a signal (the run then fails)
};
char g_temp_paths[kMaxTemps][kMaxPath];
char g_final_paths[kMaxTemps][kMaxPath];
volatile sig_atomic_t g_state[kMaxTemps];
std::mutex g_mutex;

// Removes what slot i names for a run that ends by a signal or fails. rename() is
// atomic: while it may be under way, the temporary name gone (ENOENT) means the
// rename happened, so the file is at its final path; otherwise the temporary file
// is removed and the rename, if it still comes, fails.
void remove_slot(int i) {
  switch (g_state[i]) {
    case kTemp: unlink(g_temp_paths[i]); break;
    case kRenaming:
      if (unlink(g_temp_paths[i]) != 0 && errno == ENOENT) unlink(g_final_paths[i]);
      break;
    case kPlaced: unlink(g_final_paths[i]); break;
    default: break;
  }
}

extern "C" void cleanup_and_reraise(int sig) {
  const int saved_errno = errno;
  for (int i = 0; i < kMaxTemps; ++i) remove_slot(i);
  errno = saved_errno;
  signal(sig, SIG_DFL);
  raise(sig);
}

int slot_of(const std::string& temp) {
  for (int i = 0; i < kMaxTemps; ++i)
    if ((g_state[i] == kTemp || g_state[i] == kRenaming) && temp == g_temp_paths[i]) return i;
  return -1;
}

}  // namespace

void install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kCleanedUpSignals) {
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
    if (g_state[i] == kFree) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the path is complete before the handler may read it
      g_state[i] = kTemp;
      return;
    }
}

int create_registered_temp(const std::string& pattern, int suffix_length, std::string* path) {
  sigset_t held, previous;
  sigemptyset(&held);
  for (int sig : kCleanedUpSignals) sigaddset(&held, sig);
  pthread_sigmask(SIG_BLOCK, &held, &previous);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = mkstemps(buf.data(), suffix_length);
  const int err = errno;
  if (fd >= 0) {
    *path = buf.data();
    register_temp_file(*path);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);  // a signal that came meanwhile is delivered here
  errno = err;
  return fd;
}

void unregister_temp_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (int i = slot_of(path); i >= 0) g_state[i] = kFree;
}

int rename_into_place(const std::string& temp, const std::string& final_path) {
  int slot = -1;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    slot = final_path.size() < kMaxPath ? slot_of(temp) : -1;
    if (slot >= 0) {
      std::memcpy(g_final_paths[slot], final_path.c_str(), final_path.size() + 1);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      g_state[slot] = kRenaming;
    }
  }
  const int err = std::rename(temp.c_str(), final_path.c_str()) == 0 ? 0 : errno;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (slot >= 0) g_state[slot] = err == 0 ? kPlaced : kTemp;
  return err;
}

void remove_temp_files_now() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kMaxTemps; ++i) {
    remove_slot(i);
    g_state[i] = kFree;
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
