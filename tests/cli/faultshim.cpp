// A fault injector for the hardening tests, loaded with LD_PRELOAD (a test-only
// library; nothing in the tools knows of it). NP_FAULT_SIGNAL picks the moment a
// SIGINT reaches the process, around the rename that puts an output in place:
//   after-create         raised as soon as mkstemp()/mkstemps() has made the temporary file
//   before-rename        raised just before rename()
//   after-rename         raised just after a successful rename(), before it returns
//   async-after-rename   sent to the process (any thread may take it) after rename()
//   at-exit              raised by the last atexit handler, when the run has finished
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {
bool fault_is(const char* name) {
  const char* v = std::getenv("NP_FAULT_SIGNAL");
  return v && std::strcmp(v, name) == 0;
}
void raise_at_exit() { raise(SIGINT); }
// Registered before main: atexit handlers run last-registered first, so this one runs last.
[[maybe_unused]] const int registered = fault_is("at-exit") ? std::atexit(raise_at_exit) : 0;
}  // namespace

extern "C" int rename(const char* from, const char* to) {
  using Rename = int (*)(const char*, const char*);
  static const Rename real = reinterpret_cast<Rename>(dlsym(RTLD_NEXT, "rename"));
  if (fault_is("before-rename")) raise(SIGINT);
  const int rc = real(from, to);
  if (rc == 0 && fault_is("after-rename")) raise(SIGINT);
  if (rc == 0 && fault_is("async-after-rename")) {
    kill(getpid(), SIGINT);
    usleep(20000);  // time for whichever thread takes it
  }
  return rc;
}

// The temporary output exists from here on: a signal must not leave it behind.
extern "C" int mkstemps(char* pattern, int suffix_length) {
  using Make = int (*)(char*, int);
  static const Make real = reinterpret_cast<Make>(dlsym(RTLD_NEXT, "mkstemps"));
  const int fd = real(pattern, suffix_length);
  if (fd >= 0 && fault_is("after-create")) raise(SIGINT);
  return fd;
}

extern "C" int mkstemp(char* pattern) { return mkstemps(pattern, 0); }
