// The installed reference data, found by every reader: an input file that is not
// where the user names it, and that names reference data as the examples do
// ("share/ref/mle-prices.csv", the path in a clone, or "policies.csv"), is read
// from the reference-data folder: $NUMPIPE_DATA when set, else the install's
// PREFIX/share/numpipe/ref, found from the program's own place (/proc/self/exe),
// so that the documented examples run after `cmake --install` from any folder.
#pragma once
#include <string>

namespace numpipe {

// The folder of installed reference data: $NUMPIPE_DATA when set and not empty,
// else PREFIX/share/numpipe/ref next to the running program's PREFIX/bin
// (empty when the program's place cannot be read).
std::string reference_data_dir();

// The file to open for reading `path`: `path` itself when it exists (or cannot be
// looked up: "-", absolute, or starting with ./ or ../); else, when the reference-data
// folder holds it (after a leading "share/ref/"), that copy; else `path`.
std::string find_input_file(const std::string& path);

// For a message about `path` that could not be opened: where it was looked for,
// "; looked for it in /here/share/ref/x.csv and in the reference data
// /usr/share/numpipe/ref/x.csv (NUMPIPE_DATA=FOLDER names another)", or "" when
// `path` is not looked up in the reference data.
std::string where_input_was_looked_for(const std::string& path);

}  // namespace numpipe
