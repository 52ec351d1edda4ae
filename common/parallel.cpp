#include "parallel.hpp"

#include "units.hpp"

#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <functional>

#include <signal.h>
#include <sys/auxv.h>
#include <sys/types.h>
#include <unistd.h>
#include <cstring>
#include <optional>

#include "cli.hpp"
#include "signals.hpp"
#include "timeline.hpp"
#include "workers.hpp"

#ifdef NUMPIPE_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#endif

namespace numpipe::par {

// ---- OpenMP's idle threads spin briefly, then sleep ------------------------------------
// libgomp's threads spin for about 300,000 iterations (milliseconds) at every barrier
// and at the end of every parallel region before they sleep. On a machine whose cores
// other processes use too, those spins take the cores from the threads doing the work;
// sleeping at once (OMP_WAIT_POLICY=passive) costs a wake-up through the scheduler at
// every region instead, which behind busy processes can take a time slice each. Measured
// on a loaded 2-core machine (bench/busy-machine; same bits in every case): price
// --threads 2, one strike, 11-24 s spinning, 1-1.4 s passive, 1.2-1.3 s with 1,000 spins;
// fluid-step --threads 2, n = 128, 100 steps (many short regions) beside two busy loops,
// 55-59 s passive in one measurement (0.4-0.7 s in another, under less outside load),
// 0.6-1.0 s with 1,000 spins in every one. So 1,000 spins (tens of microseconds)
// then sleep. libgomp reads this from the environment once, when it is loaded, before
// any code of the tool runs; so when the user has set neither OMP_WAIT_POLICY nor
// GOMP_SPINCOUNT, the tool starts itself again, at once, with GOMP_SPINCOUNT=1000 (an
// exec of the same program with the same arguments, before main: nothing has been read
// or written yet). A user who wants otherwise sets either variable.
constexpr const char* kSpinCount = "1000";
namespace {
// True when the run can have one OpenMP thread only (no waits to shorten): one
// usable core, OMP_NUM_THREADS=1, or --threads 1.
bool single_threaded(int argc, char** argv) {
  if (sysconf(_SC_NPROCESSORS_ONLN) == 1) return true;
  if (const char* n = std::getenv("OMP_NUM_THREADS"); n && std::strcmp(n, "1") == 0) return true;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--threads=1") == 0 || (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
                                                     std::strcmp(argv[i + 1], "1") == 0))
      return true;
  return false;
}

void start_again_with_short_spins(int argc, char** argv, char**) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;  // the user's choice, or already done
  if (!argv || !argv[0] || getauxval(AT_SECURE)) return;  // no set-user-ID program re-executes itself
  if (single_threaded(argc, argv)) return;  // spares the exec (a few ms) where it changes nothing
  if (setenv("GOMP_SPINCOUNT", kSpinCount, 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT");  // no /proc: the run goes on with libgomp's default waits
}
// glibc calls .init_array entries with (argc, argv, envp), before main and before
// the program's own static constructors have finished; this runs in every tool.
__attribute__((section(".init_array"), used)) void (*start_again_entry)(int, char**, char**) = start_again_with_short_spins;
}  // namespace

Range split_evenly(std::size_t n, int parts, int index) {
  std::size_t p = static_cast<std::size_t>(std::max(parts, 1)), i = static_cast<std::size_t>(index);
  std::size_t base = n / p, extra = n % p;
  Range r;
  r.begin = i * base + std::min(i, extra);
  r.end = r.begin + base + (i < extra ? 1 : 0);
  return r;
}

bool built_with_mpi() {
#ifdef NUMPIPE_HAVE_MPI
  return true;
#else
  return false;
#endif
}

#ifdef NUMPIPE_HAVE_MPI
namespace {
// MPI counts are ints: move large buffers in pieces of 1 GiB.
constexpr std::size_t kChunk = std::size_t(1) << 30;

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

void check_mpi(int status, const char* what) {
  if (status != MPI_SUCCESS) fail_resource(std::string("MPI error in ") + what);
}

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace
#endif

#ifdef NUMPIPE_HAVE_MPI
namespace {
std::vector<int>& local_pids() {
  static std::vector<int> pids;
  return pids;
}
}  // namespace
#endif

Group& world() {
  static Group group = [] {
    Group g;
#ifdef NUMPIPE_HAVE_MPI
    if (launched_by_mpi()) {
      int initialized = 0;
      MPI_Initialized(&initialized);
      if (!initialized) {
        int provided = 0;
        check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
        std::atexit(finalize_at_exit);
      }
      MPI_Comm_rank(MPI_COMM_WORLD, &g.rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &g.size_);
      MPI_Comm local;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g.rank_, MPI_INFO_NULL, &local);
      MPI_Comm_rank(local, &g.local_rank_);
      MPI_Comm_size(local, &g.local_size_);
      // the process ids of this node's ranks, for abort_all
      const int me = static_cast<int>(getpid());
      local_pids().assign(static_cast<std::size_t>(g.local_size_), 0);
      MPI_Allgather(&me, 1, MPI_INT, local_pids().data(), 1, MPI_INT, local);
      MPI_Comm_free(&local);
    }
#endif
    return g;
  }();
  return group;
}

void Group::broadcast(std::string& bytes) {
#ifdef NUMPIPE_HAVE_MPI
  if (size_ == 1) return;
  std::uint64_t n = bytes.size();
  check_mpi(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  bytes.resize(n);
  for (std::size_t off = 0; off < n; off += kChunk) {
    int count = static_cast<int>(std::min<std::size_t>(kChunk, n - off));
    check_mpi(MPI_Bcast(bytes.data() + off, count, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
  }
#else
  (void)bytes;
#endif
}

void Group::broadcast(std::vector<Record>& records) {
  if (size_ == 1) return;
  std::string bytes;
  if (is_root()) {
    MemorySink sink;
    StreamWriter writer(sink, 1);
    for (const auto& r : records) writer.write(r);
    writer.finish();
    bytes = std::move(sink.bytes);
  }
  broadcast(bytes);
  if (!is_root()) {
    MemorySource source(bytes.data(), bytes.size(), "rank 0's broadcast");
    ReadLimits limits;
    limits.max_bytes = UINT64_MAX;  // rank 0 applied the user's limit already
    limits.max_total_bytes = UINT64_MAX;
    StreamReader reader(source, limits);
    records = reader.read_all();
  }
}

std::vector<Record> Group::read_input(const Cli& cli, const RecordFilter& keep) {
  std::vector<Record> records;
  if (is_root()) records = read_input_stream(cli, keep);
  broadcast(records);
  return records;
}

std::vector<std::string> Group::gather(const std::string& mine) {
  std::vector<std::string> all;
#ifdef NUMPIPE_HAVE_MPI
  if (size_ > 1) {
    std::uint64_t n = mine.size();
    std::vector<std::uint64_t> sizes(is_root() ? size_ : 0);
    check_mpi(MPI_Gather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Gather");
    if (is_root()) {
      all.resize(size_);
      all[0] = mine;
      for (int r = 1; r < size_; ++r) {
        all[r].resize(sizes[r]);
        for (std::size_t off = 0; off < sizes[r]; off += kChunk) {
          int count = static_cast<int>(std::min<std::size_t>(kChunk, sizes[r] - off));
          check_mpi(MPI_Recv(all[r].data() + off, count, MPI_BYTE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        }
      }
    } else {
      for (std::size_t off = 0; off < mine.size(); off += kChunk) {
        int count = static_cast<int>(std::min<std::size_t>(kChunk, mine.size() - off));
        check_mpi(MPI_Send(mine.data() + off, count, MPI_BYTE, 0, 7, MPI_COMM_WORLD), "MPI_Send");
      }
    }
    return all;
  }
#endif
  all.push_back(mine);
  return all;
}

void Group::barrier() {
#ifdef NUMPIPE_HAVE_MPI
  if (size_ > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void abort_all(int code) {
#ifdef NUMPIPE_HAVE_MPI
  if (world().size() > 1) {
    remove_temp_files_now();
    std::fflush(stdout);
    std::fflush(stderr);
    // Not MPI_Abort: OpenMPI 4.1's mpirun was seen to hang or crash after it. A rank
    // that exits without MPI_Finalize makes mpirun end the others and return its
    // code; but mpirun was also seen (about 1 run in 8 on a loaded 2-core machine)
    // to hang while ending them. So this rank's node-mates are ended here too: a
    // detached child sends them SIGTERM (their handlers remove temporary outputs)
    // shortly after this rank has exited with its code, then SIGKILL. Ranks on
    // other nodes are still ended by mpirun.
    const pid_t me = getpid();
    if (fork() == 0) {
      setsid();
      usleep(200 * 1000);
      for (int pid : local_pids())
        if (pid > 0 && pid != me) kill(pid, SIGTERM);
      usleep(2000 * 1000);
      for (int pid : local_pids())
        if (pid > 0 && pid != me) kill(pid, SIGKILL);
      _exit(0);
    }
    _exit(code);
  }
#endif
  (void)code;
}

int default_device_for_rank(int requested, bool requested_explicitly, int device_count) {
  if (requested_explicitly || device_count <= 0 || world().size() == 1) return requested;
  return world().local_rank() % device_count;
}


// ---- Cartesian decomposition -------------------------------------------------------
Cart3::Cart3(const int dims_req[3], const bool periodic[3], const bool allow[3]) {
  const Group& g = world();
#ifdef NUMPIPE_HAVE_MPI
  if (g.size() > 1) {
    int d[3], per[3];
    for (int a = 0; a < 3; ++a) {
      d[a] = allow[a] ? std::max(dims_req[a], 0) : 1;
      per[a] = periodic[a] ? 1 : 0;
    }
    check_mpi(MPI_Dims_create(g.size(), 3, d), "MPI_Dims_create");
    auto* comm = new MPI_Comm;
    check_mpi(MPI_Cart_create(MPI_COMM_WORLD, 3, d, per, 0, comm), "MPI_Cart_create");
    comm_ = comm;
    for (int a = 0; a < 3; ++a) dims[a] = d[a];
    check_mpi(MPI_Cart_coords(*comm, g.rank(), 3, coords), "MPI_Cart_coords");
    for (int a = 0; a < 3; ++a) {
      int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
      check_mpi(MPI_Cart_shift(*comm, a, 1, &lo, &hi), "MPI_Cart_shift");
      nb_[a][0] = lo == MPI_PROC_NULL ? -1 : lo;
      nb_[a][1] = hi == MPI_PROC_NULL ? -1 : hi;
    }
    return;
  }
#endif
  (void)dims_req;
  (void)allow;
  for (int a = 0; a < 3; ++a) nb_[a][0] = nb_[a][1] = periodic[a] ? g.rank() : -1;
}

Cart3::~Cart3() {
#ifdef NUMPIPE_HAVE_MPI
  if (comm_) {
    auto* comm = static_cast<MPI_Comm*>(comm_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(comm);
    delete comm;
  }
#endif
}

void Cart3::coords_of(int rank, int out[3]) const {
#ifdef NUMPIPE_HAVE_MPI
  if (comm_) {
    check_mpi(MPI_Cart_coords(*static_cast<MPI_Comm*>(comm_), rank, 3, out), "MPI_Cart_coords");
    return;
  }
#endif
  (void)rank;
  out[0] = out[1] = out[2] = 0;
}

struct Cart3::Pending {
#ifdef NUMPIPE_HAVE_MPI
  std::vector<MPI_Request> requests;
#endif
};

void Cart3::start_exchange(const std::vector<Face>& faces) {
  if (pending_) fail_internal("Cart3::start_exchange: the previous exchange was not finished");
  pending_ = std::make_unique<Pending>();
#ifdef NUMPIPE_HAVE_MPI
  if (comm_) {
    MPI_Comm comm = *static_cast<MPI_Comm*>(comm_);
    std::vector<MPI_Request>& req = pending_->requests;
    req.reserve(2 * faces.size());
    // receives first, so that no message waits for its buffer; the tag names the
    // side the sender sent toward (two ranks may be each other's neighbour on both
    // sides of a periodic axis)
    for (const Face& f : faces) {
      const int nb = nb_[f.axis][f.side];
      if (nb < 0) continue;
      if (f.bytes > kChunk) fail_resource("halo face larger than 1 GiB");
      req.emplace_back();
      check_mpi(MPI_Irecv(f.recv, static_cast<int>(f.bytes), MPI_BYTE, nb, 200 + 2 * f.axis + (1 - f.side), comm, &req.back()),
                "MPI_Irecv");
    }
    for (const Face& f : faces) {
      const int nb = nb_[f.axis][f.side];
      if (nb < 0) continue;
      req.emplace_back();
      check_mpi(MPI_Isend(f.send, static_cast<int>(f.bytes), MPI_BYTE, nb, 200 + 2 * f.axis + f.side, comm, &req.back()),
                "MPI_Isend");
    }
    return;
  }
#endif
  for (const Face& f : faces)
    for (const Face& o : faces)
      if (o.axis == f.axis && o.side == 1 - f.side && nb_[f.axis][f.side] >= 0 && o.bytes == f.bytes && f.bytes > 0)
        std::memcpy(f.recv, o.send, f.bytes);
}

void Cart3::finish_exchange() {
  if (!pending_) fail_internal("Cart3::finish_exchange: no exchange was started");
#ifdef NUMPIPE_HAVE_MPI
  std::vector<MPI_Request>& req = pending_->requests;
  if (!req.empty())
    check_mpi(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
#endif
  pending_.reset();
}

void Cart3::exchange(const std::vector<Face>& faces) {
  start_exchange(faces);
  finish_exchange();
}

// ---- StreamOut -----------------------------------------------------------------------
namespace {
void store_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
}  // namespace

struct StreamOut::Impl {
  ByteSink* sink = nullptr;
  int level = 1;
  bool is_output = false;  // the tool's output: timed as the process phase "write output"
  bool magic_written = false;
  std::string frame;  // scratch for one compressed frame

  Impl(ByteSink* s, int lvl)
      : sink(s), level(lvl == kCompressionDefault ? default_compression() : lvl),
        is_output(dynamic_cast<OutputFile*>(s) != nullptr) {}
  // Appends one zstd frame holding [a, a + na) then [b, b + nb) to `out`.
  void compress(const void* a, std::size_t na, const void* b, std::size_t nb, std::string& out) const {
    append_zstd_frame(out, level, a, na, b, nb);
  }
  // Rank 0: a frame of [magic] u32 length, header, then `payload` (may be empty).
  void write_head(const json& header, const void* payload, std::size_t bytes) {
    const std::string text = header.dump();
    if (text.size() > 0xffffffffu) fail_input("record header too large");
    std::string head;
    if (!magic_written) {
      unsigned char m[12];
      std::memcpy(m, kStreamMagic, 8);
      store_u32(m + 8, kStreamVersion);
      head.append(reinterpret_cast<const char*>(m), 12);
      magic_written = true;
    }
    unsigned char len[4];
    store_u32(len, static_cast<std::uint32_t>(text.size()));
    head.append(reinterpret_cast<const char*>(len), 4);
    head += text;
    frame.clear();
    compress(head.data(), head.size(), payload, bytes, frame);
    sink->write(frame.data(), frame.size());
  }
};

StreamOut::StreamOut(ByteSink* sink, int level) : impl_(std::make_unique<Impl>(sink, level)) {
  if (world().is_root() && !sink) fail_internal("StreamOut: rank 0 needs the output");
}
StreamOut::~StreamOut() = default;

void StreamOut::write(const std::string& name, DType dtype, const Shape& shape, const void* data, const json& attrs) {
  if (finished_) fail_internal("StreamOut::write after finish()");
  if (!world().is_root()) return;
  std::optional<timeline::Scope> phase;
  if (impl_->is_output) phase.emplace("write output", static_cast<double>(payload_bytes(dtype, shape)));
  json header = {{"name", name}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"attrs", with_units(attrs, name, units_)}};
  impl_->write_head(header, data, static_cast<std::size_t>(payload_bytes(dtype, shape)));
  impl_->sink->flush();  // a complete record: handed on to a reader in a pipe
  ++records_;
}

void StreamOut::finish() {
  if (finished_) return;
  finished_ = true;
  if (!world().is_root()) return;
  std::optional<timeline::Scope> phase;
  if (impl_->is_output) phase.emplace("write output");
  json end = {{"end", true}, {"records", records_}};
  impl_->write_head(end, nullptr, 0);
  impl_->sink->flush();
}

void StreamOut::write_blocks(const std::string& name, DType dtype, const Shape& shape, const json& attrs,
                             const std::int64_t offset[3], const std::int64_t count[3], const void* data) {
  if (finished_) fail_internal("StreamOut::write_blocks after finish()");
  if (shape.size() != 3) fail_internal("StreamOut::write_blocks: record '" + name + "' is not 3-D");
  std::optional<timeline::Scope> phase;  // rank 0: the whole record, its gathering and compression included
  if (impl_->is_output) phase.emplace("write output", static_cast<double>(payload_bytes(dtype, shape)));
  const auto t0 = std::chrono::steady_clock::now();
  Group& g = world();
  const std::size_t es = dtype_size(dtype);
  const std::int64_t n0 = shape[0];
  const std::size_t plane = static_cast<std::size_t>(shape[1] * shape[2]) * es;
  const std::int64_t per_frame = plane == 0 ? 1 : std::max<std::int64_t>(1, static_cast<std::int64_t>(kFrameBytes / plane));
  const std::int64_t frames = (n0 + per_frame - 1) / per_frame;
  // the planes this rank compresses: the frames of split_evenly(frames, ranks, rank)
  auto planes_of = [&](int rank, std::int64_t& q0, std::int64_t& q1) {
    const Range fr = split_evenly(static_cast<std::size_t>(frames), g.size(), rank);
    q0 = std::min<std::int64_t>(n0, static_cast<std::int64_t>(fr.begin) * per_frame);
    q1 = std::min<std::int64_t>(n0, static_cast<std::int64_t>(fr.end) * per_frame);
  };
  std::int64_t q0 = 0, q1 = 0;
  planes_of(g.rank(), q0, q1);
  [[maybe_unused]] const std::size_t my_bytes = static_cast<std::size_t>(q1 - q0) * plane;  // (MPI only)
  blocked_bytes_ += static_cast<std::uint64_t>(count[0] * count[1] * count[2]) * es;

  // the planes [q0, q1) of the array, from every rank's block
  std::vector<char> mine;
  const char* planes = static_cast<const char*>(data);
  const bool whole = offset[0] == 0 && offset[1] == 0 && offset[2] == 0 && count[0] == shape[0] && count[1] == shape[1] &&
                     count[2] == shape[2];
  if (!whole) {
#ifdef NUMPIPE_HAVE_MPI
    std::vector<std::int64_t> blocks(static_cast<std::size_t>(6 * g.size()));
    std::int64_t me[6] = {offset[0], offset[1], offset[2], count[0], count[1], count[2]};
    check_mpi(MPI_Allgather(me, 6, MPI_INT64_T, blocks.data(), 6, MPI_INT64_T, MPI_COMM_WORLD), "MPI_Allgather");
    mine.assign(my_bytes, 0);
    std::vector<std::vector<char>> recv(static_cast<std::size_t>(g.size()));
    std::vector<MPI_Request> req;
    auto post = [&](bool send, void* buf, std::size_t bytes, int peer) {
      for (std::size_t off = 0; off < bytes; off += kChunk) {
        const int n = static_cast<int>(std::min(kChunk, bytes - off));
        req.emplace_back();
        char* p = static_cast<char*>(buf) + off;
        if (send) check_mpi(MPI_Isend(p, n, MPI_BYTE, peer, 300, MPI_COMM_WORLD, &req.back()), "MPI_Isend");
        else check_mpi(MPI_Irecv(p, n, MPI_BYTE, peer, 300, MPI_COMM_WORLD, &req.back()), "MPI_Irecv");
      }
    };
    // what rank s sends rank d: planes [max(o, d's q0), min(o + c, d's q1)) of its block,
    // a contiguous part of the block's C order
    auto overlap = [&](int s, std::int64_t d0, std::int64_t d1, std::int64_t& p0, std::int64_t& p1) {
      const std::int64_t* b = &blocks[static_cast<std::size_t>(6 * s)];
      p0 = std::max(b[0], d0);
      p1 = std::min(b[0] + b[3], d1);
      return p1 > p0 && b[4] > 0 && b[5] > 0;
    };
    for (int s = 0; s < g.size(); ++s) {
      std::int64_t p0, p1;
      if (s == g.rank() || !overlap(s, q0, q1, p0, p1)) continue;
      const std::int64_t* b = &blocks[static_cast<std::size_t>(6 * s)];
      recv[static_cast<std::size_t>(s)].resize(static_cast<std::size_t>((p1 - p0) * b[4] * b[5]) * es);
      post(false, recv[static_cast<std::size_t>(s)].data(), recv[static_cast<std::size_t>(s)].size(), s);
    }
    const std::size_t block_plane = static_cast<std::size_t>(count[1] * count[2]) * es;
    for (int d = 0; d < g.size(); ++d) {
      std::int64_t d0, d1, p0, p1;
      planes_of(d, d0, d1);
      if (d == g.rank() || !overlap(g.rank(), d0, d1, p0, p1)) continue;
      post(true, const_cast<char*>(static_cast<const char*>(data)) + static_cast<std::size_t>(p0 - offset[0]) * block_plane,
           static_cast<std::size_t>(p1 - p0) * block_plane, d);
    }
    // places rank s's planes [p0, p1) (its block's rows) into `mine`
    auto place = [&](int s, const char* src, std::int64_t p0, std::int64_t p1) {
      const std::int64_t* b = &blocks[static_cast<std::size_t>(6 * s)];
      const std::size_t srow = static_cast<std::size_t>(b[5]) * es;
      for (std::int64_t i = p0; i < p1; ++i)
        for (std::int64_t j = 0; j < b[4]; ++j)
          std::memcpy(mine.data() + static_cast<std::size_t>(i - q0) * plane +
                          static_cast<std::size_t>((b[1] + j) * shape[2] + b[2]) * es,
                      src + (static_cast<std::size_t>(i - p0) * static_cast<std::size_t>(b[4]) + static_cast<std::size_t>(j)) * srow,
                      srow);
    };
    std::int64_t p0, p1;
    if (overlap(g.rank(), q0, q1, p0, p1))
      place(g.rank(), static_cast<const char*>(data) + static_cast<std::size_t>(p0 - offset[0]) * block_plane, p0, p1);
    if (!req.empty()) check_mpi(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (int s = 0; s < g.size(); ++s)
      if (s != g.rank() && overlap(s, q0, q1, p0, p1)) place(s, recv[static_cast<std::size_t>(s)].data(), p0, p1);
    planes = mine.data();
#else
    fail_internal("StreamOut::write_blocks: a block that is not the whole array without MPI");
#endif
  }
  // this rank's frames (each frame on its own: the bytes do not depend on which thread
  // makes them)
  const std::int64_t nf = (q1 - q0 + per_frame - 1) / per_frame;
  auto make_frame = [&](std::size_t f, std::string& out) {
    const std::int64_t p = q0 + static_cast<std::int64_t>(f) * per_frame, pe = std::min(q1, p + per_frame);
    impl_->compress(planes + static_cast<std::size_t>(p - q0) * plane, static_cast<std::size_t>(pe - p) * plane, nullptr, 0,
                    out);
  };
  std::string part;  // the other ranks: their frames, sent to rank 0 together
  if (g.is_root()) {  // rank 0: the header, its frames written as they are made, then every other rank's as they arrive
    json header = {{"name", name}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"attrs", with_units(attrs, name, units_)}};
    impl_->write_head(header, nullptr, 0);
    ByteSink& sink = *impl_->sink;
    make_in_order<std::string>(
        WorkerPool::io(), static_cast<std::size_t>(nf),
        [&make_frame](std::size_t f, std::string& out) {
          out.clear();
          make_frame(f, out);
        },
        [&sink](const std::string& frame) { sink.write(frame.data(), frame.size()); });
    ++records_;
  } else {
    std::vector<std::string> pieces(static_cast<std::size_t>(nf));
    std::string error;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t f = 0; f < nf; ++f) {
        try {
          make_frame(static_cast<std::size_t>(f), pieces[static_cast<std::size_t>(f)]);
        } catch (const std::exception& e) {
#pragma omp critical(numpipe_stream_out)
          error = e.what();
        }
      }
    }
    if (!error.empty()) fail_internal(error);
    std::size_t total = 0;
    for (const std::string& x : pieces) total += x.size();
    part.reserve(total);
    for (std::string& x : pieces) {
      part += x;
      std::string().swap(x);
    }
  }
  std::vector<char>().swap(mine);
#ifdef NUMPIPE_HAVE_MPI
  if (g.size() > 1) {
    std::uint64_t n = part.size();
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(g.size()));
    check_mpi(MPI_Gather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Gather");
    constexpr std::size_t kPiece = std::size_t(64) << 20;
    if (g.is_root()) {
      std::string buf;
      for (int r = 1; r < g.size(); ++r)
        for (std::size_t off = 0; off < sizes[static_cast<std::size_t>(r)]; off += kPiece) {
          const std::size_t len = std::min(kPiece, static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]) - off);
          buf.resize(len);
          check_mpi(MPI_Recv(buf.data(), static_cast<int>(len), MPI_BYTE, r, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "MPI_Recv");
          impl_->sink->write(buf.data(), len);
        }
    } else {
      for (std::size_t off = 0; off < part.size(); off += kPiece) {
        const std::size_t len = std::min(kPiece, part.size() - off);
        check_mpi(MPI_Send(part.data() + off, static_cast<int>(len), MPI_BYTE, 0, 301, MPI_COMM_WORLD), "MPI_Send");
      }
    }
  }
#endif
  if (g.is_root()) impl_->sink->flush();  // the record is complete
  blocked_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool gpu_aware_mpi() {
  const char* env = std::getenv("NUMPIPE_MPI_GPU_AWARE");
  if (env && std::string(env) == "0") return false;
#if defined(NUMPIPE_HAVE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return world().size() > 1 && MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool all_ranks(bool x) {
#ifdef NUMPIPE_HAVE_MPI
  if (world().size() > 1) {
    int in = x ? 1 : 0, out = 0;
    check_mpi(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce");
    return out != 0;
  }
#endif
  return x;
}

double max_all(double x) {
#ifdef NUMPIPE_HAVE_MPI
  if (world().size() > 1) {
    double r = x;
    check_mpi(MPI_Allreduce(&x, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return r;
  }
#endif
  return x;
}

}  // namespace numpipe::par
