#include "signals.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
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
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_and_reraise;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
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
