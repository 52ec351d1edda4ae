// ns-step's tuning knobs (tuning.hpp): the one place that reads them.
#include "tuning.hpp"

#include <cstdlib>
#include <string>

#include "common/cli.hpp"
#include "common/error.hpp"

namespace numpipe::ns {

bool Tuning::mpi_ipc_from_environment() {
  const char* env = std::getenv("NUMPIPE_MPI_IPC");
  return !env || std::string(env) != "0";
}

void Tuning::declare_tuning(Cli& cli) {
  cli.option("chunk", &chunk, "CUDA: x-planes per thread block (0: automatic)", "P", "Tuning").min(0);
  cli.option("kernel", &kernel,
             "CUDA: sub-step kernel variant: 4 the default (fp64: 6, fp32: 5); 0 32x8 tile, 1 32x8 with read-only "
             "loads, 2 32x16, 3 32x8 without a register cap, 5 32x16 with Q prefetched by cp.async, 6 32x16 "
             "shared-memory ring (planes and Q one plane ahead by cp.async, writes its own ghosts), 7 the ring with "
             "32x8 tiles, 8 one thread per point (what 2-D problems take)",
             "V", "Tuning")
      .check([](int k) {
        if (k < 0 || k > 8) fail_input("--kernel must be 0 to 8, got " + std::to_string(k));
      });
  cli.tuning_env("NUMPIPE_MPI_IPC=0", "under MPI on CUDA: no CUDA IPC between the ranks of a node");
  cli.tuning_env("NUMPIPE_MPI_GPU_AWARE=0", "under MPI on CUDA: no CUDA-aware MPI (halos through pinned host buffers)");
}

}  // namespace numpipe::ns
