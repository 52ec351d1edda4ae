// gen-input's workload generators. Each workload adds one source file here that
// registers itself:
//
//   static const numpipe::RegisterGenerator reg{{"price", "LocVolCalib problems", run_price}};
//
// run(argc, argv) gets argv[0] = "gen-input price" and the options after the
// workload name; it parses them with a numpipe::Cli named "gen-input price" and
// writes one stream. It runs inside run_tool(), so errors map to exit codes.
#pragma once
#include <string>
#include <vector>

namespace numpipe {

struct Generator {
  std::string name;
  std::string summary;
  int (*run)(int argc, char** argv);
};

std::vector<Generator>& generators();

struct RegisterGenerator {
  explicit RegisterGenerator(Generator g) { generators().push_back(std::move(g)); }
};

}  // namespace numpipe
