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
#include <memory>
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

  // Rank 0 reads the tool's input stream (the records `keep` keeps: every record
  // without a filter); every rank gets the same records.
  std::vector<Record> read_input(const Cli& cli, const RecordFilter& keep = {});
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


// ---- Cartesian decomposition (ns-step) ------------------------------------------
// A 3-D Cartesian process grid over the world (MPI_Dims_create + MPI_Cart_create,
// no reordering: cart rank == world rank, so Group::gather's rank order holds).
// Axes marked periodic wrap across the grid's ends. One process: dims 1,1,1.
class Cart3 {
 public:
  // dims_req[a] > 0 fixes the ranks along axis a (MPI_Dims_create fills the zeros).
  // Axes where allow[a] is false get one rank.
  Cart3(const int dims_req[3], const bool periodic[3], const bool allow[3]);
  ~Cart3();
  Cart3(const Cart3&) = delete;
  Cart3& operator=(const Cart3&) = delete;
  int dims[3] = {1, 1, 1};
  int coords[3] = {0, 0, 0};
  // Coordinates of another rank of the grid.
  void coords_of(int rank, int out[3]) const;
  // The neighbouring rank beyond side (0 low, 1 high) of axis, -1 where none.
  int neighbour(int axis, int side) const { return nb_[axis][side]; }
  // One face of a halo exchange: `send` goes to the neighbour beyond (axis, side),
  // and that neighbour's face toward this rank arrives in `recv`.
  struct Face {
    int axis, side;
    const void* send;
    void* recv;
    std::size_t bytes;
  };
  // Every face's message in flight at once (MPI_Irecv/MPI_Isend, then MPI_Waitall);
  // faces without a neighbour are skipped. Buffers may be device memory when
  // gpu_aware_mpi() is true. One process: a periodic self-neighbour's face is
  // copied (what goes out on one side comes back on the other).
  void exchange(const std::vector<Face>& faces);
  // The same in two halves, so that work can go on while the messages travel:
  // start_exchange posts them, finish_exchange waits for them (one at a time).
  void start_exchange(const std::vector<Face>& faces);
  void finish_exchange();

 private:
  int nb_[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  void* comm_ = nullptr;  // MPI_Comm when built with MPI
  struct Pending;
  std::unique_ptr<Pending> pending_;  // the requests of a started exchange
};

// True when the MPI library reports CUDA-aware support at run time (Open MPI's
// MPIX_Query_cuda_support), so device buffers may be passed to it; the
// environment variable NUMPIPE_MPI_GPU_AWARE=0 turns it off (staging through
// pinned host buffers instead).
bool gpu_aware_mpi();

// ---- one stream written by every rank together ----------------------------------
// A numpipe stream (stream.hpp's format) whose large 3-D records are held in blocks
// by the ranks (ns-step's decomposition): rank 0 writes the small records and every
// record's header; each rank compresses its share of a blocked record's payload into
// zstd frames of whole leading-axis planes (how many planes a frame holds depends on
// the record's shape only; the planes are first moved to the rank that compresses
// them), and rank 0 writes the frames in order, one rank's part at a time as it
// arrives. Readers see an ordinary stream (they decompress across frame boundaries);
// the bytes are the same for any rank count; no record passes whole through rank 0's
// memory, and the compression, the costly part, runs on every rank at once.
class StreamOut {
 public:
  // sink: the output on rank 0 (nullptr on the other ranks). level: as StreamWriter's
  // (kCompressionDefault: --compress, else NUMPIPE_ZSTD_LEVEL, else 1; kCompressionNone:
  // stored frames). Every frame states its size, so readers decode them in parallel.
  // Writing into an OutputFile is timed as the process phase "write output".
  explicit StreamOut(ByteSink* sink, int level = kCompressionDefault);
  ~StreamOut();
  StreamOut(const StreamOut&) = delete;
  StreamOut& operator=(const StreamOut&) = delete;
  // A record rank 0 holds, written by rank 0 (a no-op on the other ranks).
  void write(const std::string& name, DType dtype, const Shape& shape, const void* data, const json& attrs);
  template <class T>
  void write(const std::string& name, const Shape& shape, const T* data, const json& attrs) {
    write(name, dtype_of<T>(), shape, data, attrs);
  }
  // A 3-D record of `shape` of which this rank holds the block that starts at `offset`
  // with `count` points per axis (C order over the block). Every rank calls it, with
  // the same name, dtype, shape and attrs; the blocks cover the array without overlap.
  void write_blocks(const std::string& name, DType dtype, const Shape& shape, const json& attrs,
                    const std::int64_t offset[3], const std::int64_t count[3], const void* data);
  // The end record (rank 0).
  void finish();
  // This rank's blocked-record payload bytes (uncompressed) and wall time in write_blocks.
  std::uint64_t blocked_bytes() const { return blocked_bytes_; }
  double blocked_seconds() const { return blocked_seconds_; }
  // Bytes a frame of a blocked record holds at most (unless one plane is larger).
  static constexpr std::size_t kFrameBytes = std::size_t(4) << 20;
  // A workload's units (common/units.hpp), written into the attrs of every record after.
  void set_units(json table) { units_ = std::move(table); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t records_ = 0, blocked_bytes_ = 0;
  double blocked_seconds_ = 0;
  bool finished_ = false;
  json units_ = json::object();
};

// The maximum of x over every rank (MPI_Allreduce MPI_MAX: exact, order-free).
double max_all(double x);
// True when x is true on every rank.
bool all_ranks(bool x);

}  // namespace numpipe::par
