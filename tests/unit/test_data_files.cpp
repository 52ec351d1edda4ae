// Units for common/data_files: an input named as the examples name reference data
// (share/ref/..., or a bare name) is read from the reference-data folder when it is
// not where the user names it; the readers' messages say where it was looked for.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/data_files.hpp"
#include "common/error.hpp"
#include "common/stream.hpp"
#include "common/text_table.hpp"
#include "test_util.hpp"

using namespace numpipe;

namespace {

// A folder of reference data (NUMPIPE_DATA) and an empty working folder (the current
// directory while the fixture lives), both removed at the end.
struct DataFixture {
  std::string data, work, old_cwd;
  DataFixture() {
    char d[] = "/tmp/numpipe-data-XXXXXX";
    char w[] = "/tmp/numpipe-work-XXXXXX";
    REQUIRE(mkdtemp(d));
    REQUIRE(mkdtemp(w));
    data = d;
    work = w;
    std::ofstream(data + "/table.csv") << "a,b\n1,2\n3,4\n";
    REQUIRE(system(("mkdir -p " + data + "/sub").c_str()) == 0);
    std::ofstream(data + "/sub/deep.txt") << "7 8\n";
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd));
    old_cwd = cwd;
    REQUIRE(chdir(work.c_str()) == 0);
    setenv("NUMPIPE_DATA", data.c_str(), 1);
  }
  ~DataFixture() {
    unsetenv("NUMPIPE_DATA");
    if (chdir(old_cwd.c_str()) != 0) std::perror("chdir");
    if (system(("rm -rf " + data + " " + work).c_str()) != 0) std::perror("rm");
  }
};

}  // namespace

TEST_CASE("data files: share/ref/NAME and a bare NAME missing here are read from NUMPIPE_DATA") {
  DataFixture fx;
  CHECK(reference_data_dir() == fx.data);
  CHECK(find_input_file("share/ref/table.csv") == fx.data + "/table.csv");
  CHECK(find_input_file("table.csv") == fx.data + "/table.csv");
  CHECK(find_input_file("share/ref/sub/deep.txt") == fx.data + "/sub/deep.txt");
  CHECK(find_input_file("sub/deep.txt") == fx.data + "/sub/deep.txt");

  const TextTable t = read_text_table("share/ref/table.csv");
  CHECK(t.source == "share/ref/table.csv");  // messages name the file as the user did
  CHECK(t.numbers(t.column("b", "--columns")) == std::vector<double>{2, 4});
  CHECK(read_text_file("sub/deep.txt") == "7 8\n");
}

TEST_CASE("data files: a file where the user names it wins; ./, ../, absolute paths and stdin are never looked up") {
  DataFixture fx;
  std::ofstream("table.csv") << "a,b\n5,6\n";
  CHECK(find_input_file("table.csv") == "table.csv");
  CHECK(read_text_table("table.csv").rows.at(0).at(1) == "6");
  CHECK(find_input_file("./sub/deep.txt") == "./sub/deep.txt");
  CHECK(find_input_file("../sub/deep.txt") == "../sub/deep.txt");
  CHECK(find_input_file("/nonexistent/table.csv") == "/nonexistent/table.csv");
  CHECK(find_input_file("-") == "-");
  CHECK(find_input_file("missing.csv") == "missing.csv");  // in neither place: opened (and refused) as named
  CHECK(where_input_was_looked_for("table.csv").empty());  // it exists here
  CHECK(where_input_was_looked_for("./missing.csv").empty());
  CHECK(where_input_was_looked_for("/nonexistent/x.csv").empty());
}

TEST_CASE("data files: a missing input's message names both places it was looked for") {
  DataFixture fx;
  const std::string text = test::bad_input([] { read_text_table("share/ref/missing.csv"); });
  CHECK(text.rfind("cannot open 'share/ref/missing.csv': No such file or directory; looked for it in ", 0) == 0);
  CHECK(text.find(fx.work + "/share/ref/missing.csv") != std::string::npos);
  CHECK(text.find(fx.data + "/missing.csv (from NUMPIPE_DATA)") != std::string::npos);

  const std::string stream = test::bad_input([] { InputFile in("share/ref/missing.nps"); });
  CHECK(stream.rfind("cannot open input 'share/ref/missing.nps': No such file or directory; looked for it in ", 0) == 0);
  CHECK(stream.find(fx.data + "/missing.nps") != std::string::npos);

  // An absolute path is only where it is named: the message says nothing more.
  CHECK(test::bad_input([] { read_text_table("/nonexistent/x.csv"); }) ==
        "cannot open '/nonexistent/x.csv': No such file or directory");
}

TEST_CASE("data files: without NUMPIPE_DATA, the folder is PREFIX/share/numpipe/ref beside the program's PREFIX/bin") {
  unsetenv("NUMPIPE_DATA");
  const std::string dir = reference_data_dir();
  const std::string tail = "share/numpipe/ref";
  REQUIRE(dir.size() > tail.size());
  CHECK(dir.compare(dir.size() - tail.size(), tail.size(), tail) == 0);
  CHECK(dir[0] == '/');
  setenv("NUMPIPE_DATA", "", 1);  // empty: as if unset
  CHECK(reference_data_dir() == dir);
  unsetenv("NUMPIPE_DATA");
}
