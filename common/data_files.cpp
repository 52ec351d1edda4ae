#include "data_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

// Where the reference data lie as seen from the programs' folder (common/CMakeLists.txt
// derives it from the install layout: CMAKE_INSTALL_BINDIR and CMAKE_INSTALL_DATADIR).
#ifndef NUMPIPE_DATA_FROM_BIN
#define NUMPIPE_DATA_FROM_BIN "../share/numpipe/ref"
#endif

namespace numpipe {
namespace {

const char kCloneFolder[] = "share/ref/";  // where the examples name reference files (a clone's layout)

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string program_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  std::string exe(buf.data(), static_cast<std::size_t>(n));
  const auto slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

std::string current_dir() {
  std::vector<char> buf(4096);
  return getcwd(buf.data(), buf.size()) ? std::string(buf.data()) : std::string(".");
}

// A name the reference data may hold: relative, not "-", not explicitly here (./, ../).
bool may_be_reference_data(const std::string& path) {
  return !path.empty() && path != "-" && path[0] != '/' && !starts_with(path, "./") && !starts_with(path, "../");
}

// True when `path` is missing (rather than unreadable, which its own error says).
bool missing(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

// The reference-data copy of `path`, or "" when there is no reference-data folder.
std::string reference_copy(const std::string& path) {
  const std::string dir = reference_data_dir();
  if (dir.empty()) return "";
  const std::string name = starts_with(path, kCloneFolder) ? path.substr(sizeof(kCloneFolder) - 1) : path;
  return dir + "/" + name;
}

}  // namespace

std::string reference_data_dir() {
  if (const char* env = std::getenv("NUMPIPE_DATA"); env && *env) return env;
  const std::string relative = NUMPIPE_DATA_FROM_BIN;
  if (!relative.empty() && relative[0] == '/') return relative;
  const std::string bin = program_dir();
  if (bin.empty()) return "";
  const std::string dir = bin + "/" + relative;
  char* resolved = realpath(dir.c_str(), nullptr);  // PREFIX/share/numpipe/ref, not PREFIX/bin/../share/...
  if (!resolved) return dir;
  const std::string clean = resolved;
  std::free(resolved);
  return clean;
}

std::string find_input_file(const std::string& path) {
  if (!may_be_reference_data(path) || !missing(path)) return path;
  const std::string copy = reference_copy(path);
  return !copy.empty() && !missing(copy) ? copy : path;
}

std::string where_input_was_looked_for(const std::string& path) {
  if (!may_be_reference_data(path) || !missing(path)) return "";
  const std::string copy = reference_copy(path);
  const char* env = std::getenv("NUMPIPE_DATA");
  const bool from_env = env && *env;
  std::string where = "; looked for it in " + current_dir() + "/" + path;
  if (copy.empty()) return where + " only (the program's folder is unknown: NUMPIPE_DATA=FOLDER names the reference data)";
  where += " and in the reference data " + copy;
  return where + (from_env ? " (from NUMPIPE_DATA)" : " (NUMPIPE_DATA=FOLDER names another folder)");
}

}  // namespace numpipe
