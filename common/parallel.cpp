#include "parallel.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>
#include <cstring>

#include "cli.hpp"
#include "signals.hpp"

#ifdef NUMPIPE_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#endif

namespace numpipe::par {

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
