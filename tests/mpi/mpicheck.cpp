// np-mpicheck: exercises the MPI layer the way a batch tool does. Rank 0 reads
// an array; each rank squares its share of the elements (split_evenly); rank 0
// gathers the shares in rank order and writes them. --fail-on-rank R makes rank
// R fail with a bad-input error after the input was read.
#include "common/cli.hpp"
#include "common/parallel.hpp"

int main(int argc, char** argv) {
  return numpipe::run_tool("np-mpicheck", [&] {
    using namespace numpipe;
    Cli cli({"np-mpicheck", "MPI layer check", "", "  mpirun -np 3 np-mpicheck < in.nps > out.nps"}, kInput | kOutput | kMpi);
    cli.add()("fail-on-rank", "Fail on this rank", cxxopts::value<int>()->default_value("-1"));
    cli.parse(argc, argv);
    auto& group = par::world();
    std::unique_ptr<OutputFile> out;
    if (group.is_root()) out = std::make_unique<OutputFile>(cli.output());
    auto records = group.read_input(cli);
    if (records.empty()) fail_input("no array in the input");
    std::vector<double> x = records[0].to_vector<double>();
    if (cli.get<int>("fail-on-rank") == group.rank()) fail_input("failing on purpose on rank " + std::to_string(group.rank()));
    par::Range mine = par::split_evenly(x.size(), group.size(), group.rank());
    std::vector<double> part;
    for (std::size_t i = mine.begin; i < mine.end; ++i) part.push_back(x[i] * x[i]);
    std::vector<double> all = group.gather_concat(part);
    if (group.is_root()) {
      StreamWriter w(*out);
      w.write<double>("squares", {static_cast<std::int64_t>(all.size())}, all.data(), {{"ranks", group.size()}});
      w.finish();
      out->commit();
    }
    return 0;
  });
}
