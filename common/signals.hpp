// Cleanup on signals: temporary output files registered here are removed when
// the process is ended by a catchable signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
// SIGUSR1, SIGUSR2, SIGPIPE), and the signal is then raised again so that the
// caller sees the usual death by that signal; an interrupted run leaves nothing
// half-written behind. A signal the process inherited as ignored (nohup, a
// shell's `trap '' PIPE`) stays ignored: with SIGPIPE ignored a write to a
// closed pipe fails with EPIPE, which the tool reports (exit 3). SIGKILL cannot
// be caught: report_stale_temp_files() lets the next run say what it left.
#pragma once
#include <string>
#include <sys/types.h>

namespace numpipe {
void install_signal_cleanup();
void register_temp_file(const std::string& path);
// Creates a file from the mkstemps() pattern `pattern` (its last `suffix_length`
// characters kept) and registers it, with the catchable signals held back in between,
// so that no signal can end the run with an unregistered file on disk. Returns the
// open descriptor (the path in *path) or -1 with errno set.
int create_registered_temp(const std::string& pattern, int suffix_length, std::string* path);
void unregister_temp_file(const std::string& path);
// Renames the registered temporary file `temp` to `final_path` in agreement with the
// signal handler: a catchable signal at any point of the commit, or after it, ends the
// run with no output at final_path (before the rename the temporary file is removed,
// after it the file renamed into place), so that a run ended by a signal never leaves
// an output behind. Returns 0, or rename's errno (the file is then still registered).
int rename_into_place(const std::string& temp, const std::string& final_path);
// Removes every registered temporary file, and every output renamed into place by this
// run, now (a failing MPI rank, before it ends without running destructors).
void remove_temp_files_now();
mode_t current_umask();

// The running tool's name for messages that are not errors ("price: note: ..."); run_tool sets it.
void set_tool_name(const std::string& name);
const std::string& tool_name();
// Notes on stderr every file of `folder` named like a temporary file of an output
// named `base` (".BASE.tmp-XXXXXX"): left by a run that was killed (SIGKILL, a
// power cut) or still being written by another run.
void report_stale_temp_files(const std::string& folder, const std::string& base);
}  // namespace numpipe
