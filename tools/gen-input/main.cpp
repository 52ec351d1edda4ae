// gen-input WORKLOAD [options]: writes input streams for every workload.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "generator.hpp"

namespace numpipe {
std::vector<Generator>& generators() {
  static std::vector<Generator> all;
  return all;
}
}  // namespace numpipe

namespace {

void sort_generators() {
  auto& g = numpipe::generators();
  std::sort(g.begin(), g.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

void print_list() {
  for (const auto& g : numpipe::generators()) std::printf("%-10s %s\n", g.name.c_str(), g.summary.c_str());
}

void print_help() {
  std::printf(
      "gen-input - write input streams for numpipe's workloads\n"
      "Usage:\n"
      "  gen-input WORKLOAD [OPTIONS]   write a stream for WORKLOAD (see gen-input WORKLOAD --help)\n"
      "  gen-input list                 list the workloads\n"
      "  gen-input --version\n\n"
      "Workloads:\n");
  for (const auto& g : numpipe::generators()) std::printf("  %-10s %s\n", g.name.c_str(), g.summary.c_str());
  std::printf(
      "\nRandom data come from std::mt19937_64 seeded by --seed, with the conversions written\n"
      "out in common/random.hpp, so a seed gives the same stream on every machine.\n\n"
      "Example:\n  gen-input array --shape 1000 --fill normal --seed 7 | inspect\n"
      "\nExit codes: 0 success, 2 bad usage or input, 3 resource failure, 4 internal error.\n"
      "See man gen-input(1).\n");
}

}  // namespace

int main(int argc, char** argv) {
  sort_generators();
  return numpipe::run_tool("gen-input", [&]() -> int {
    if (argc < 2) {
      print_help();
      numpipe::fail_input("missing WORKLOAD (try gen-input list)");
    }
    std::string what = argv[1];
    if (what == "list") {
      print_list();
      return 0;
    }
    if (what == "-h" || what == "--help" || what == "help") {
      print_help();
      return 0;
    }
    if (what == "--version") {
      std::printf("gen-input (numpipe) %s commit %s\n", numpipe::numpipe_version(), numpipe::numpipe_commit());
      return 0;
    }
    for (const auto& g : numpipe::generators())
      if (g.name == what) {
        std::string prog = std::string(argv[0]) + " " + what;  // the history's command: the program as typed
        std::vector<char*> args;
        args.push_back(prog.data());
        for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
        return g.run(static_cast<int>(args.size()), args.data());
      }
    numpipe::fail_input("unknown workload '" + what + "' (try gen-input list)");
  });
}
