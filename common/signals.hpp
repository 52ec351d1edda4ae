// Cleanup on signals: temporary output files registered here are removed when
// the process is interrupted (SIGINT, SIGTERM, SIGHUP), so that an interrupted
// run leaves nothing half-written behind.
#pragma once
#include <string>
#include <sys/types.h>

namespace numpipe {
void install_signal_cleanup();
void register_temp_file(const std::string& path);
void unregister_temp_file(const std::string& path);
// Removes every registered temporary file now (before MPI_Abort, which runs no destructors).
void remove_temp_files_now();
mode_t current_umask();
}  // namespace numpipe
