// ns-step's tuning knobs (docs/tuning.md): the CUDA sub-step kernel and its chunk, and
// the MPI halo paths. None changes a result's bits; the defaults are what the
// benchmarks measured best. The options are declared here and the environment is
// read here (tuning.cpp), nowhere else in the workload.
#pragma once

namespace numpipe {
class Cli;
}

namespace numpipe::ns {

struct Tuning {
  // --kernel: the CUDA sub-step kernel variant 0..8 (4: the default, 6 in fp64 and 5 in fp32)
  int kernel = 4;
  // --chunk: CUDA x-planes per thread block (0: automatic)
  int chunk = 0;
  // NUMPIPE_MPI_IPC=0: under MPI on CUDA no CUDA IPC between the ranks of a node.
  // (NUMPIPE_MPI_GPU_AWARE=0, no CUDA-aware MPI, is read by common/parallel.cpp.)
  bool mpi_ipc = mpi_ipc_from_environment();

  // --kernel, --chunk and the environment variables on the Cli (listed by --help-all).
  void declare_tuning(Cli& cli);
  static bool mpi_ipc_from_environment();
};

}  // namespace numpipe::ns
