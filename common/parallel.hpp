// The process group numpipe runs in: MPI ranks when the tools are started by
// mpirun/srun and numpipe was built with MPI, else one process. The MPI layer
// lives here once; a tool sees only its items (batch tools) or its block.
//
// The pattern of a batch tool (DESIGN.md "Beyond one GPU and one machine"):
//   auto& group = par::world();
//   auto records = group.read_input(cli);            // rank 0 reads, everyone gets the records
//   par::Range mine = par::split_evenly(n, group.size(), group.rank());
//   ... compute items [mine.begin, mine.end) ...
//   auto all = group.gather_concat(partial);         // rank 0: every rank's items, in rank order
//   if (group.is_root()) write the output stream;
// Any rank's error ends every rank with its exit code (run_tool calls
// par::abort_all), and no output is left behind.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "stream.hpp"

namespace numpipe {
class Cli;
}

namespace numpipe::par {

struct Range {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

// Item range of part `index` of `parts`: sizes differ by at most one, the first
// n % parts parts get the extra item. Independent of anything but (n, parts, index).
Range split_evenly(std::size_t n, int parts, int index);

class Group {
 public:
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  int local_rank() const { return local_rank_; }  // rank among the processes of this node
  int local_size() const { return local_size_; }
  bool distributed() const { return size_ > 1; }

  // Rank 0 reads the tool's input stream; every rank gets the same records.
  std::vector<Record> read_input(const Cli& cli);
  // Every rank gets rank 0's records (serialised as a stream).
  void broadcast(std::vector<Record>& records);
  void broadcast(std::string& bytes);
  // Rank 0 gets every rank's bytes in rank order; other ranks get an empty vector.
  std::vector<std::string> gather(const std::string& mine);
  // Rank 0 gets the concatenation, in rank order, of every rank's values.
  template <class T>
  std::vector<T> gather_concat(const std::vector<T>& mine) {
    std::string bytes(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(T));
    std::vector<std::string> parts = gather(bytes);
    std::vector<T> all;
    for (const auto& p : parts) {
      std::size_t old = all.size();
      all.resize(old + p.size() / sizeof(T));
      if (!p.empty()) std::memcpy(all.data() + old, p.data(), p.size());
    }
    return all;
  }
  void barrier();

 private:
  friend Group& world();
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

// The world group; initialises MPI on first use when launched by an MPI starter.
Group& world();
// True when this numpipe was built with MPI.
bool built_with_mpi();
// Ends every rank with `code` after removing temporary outputs (MPI_Abort); a
// single process just returns.
void abort_all(int code);

// The CUDA device a rank uses when the user gave none: node-local rank modulo
// the device count, so that ranks spread over a node's GPUs.
int default_device_for_rank(int requested, bool requested_explicitly, int device_count);

}  // namespace numpipe::par
