// The backend as a value: ns-step's solver for the backend the user chose, the only
// place that knows whether this build has the CUDA backend.
#pragma once
#include <memory>

#include "common/device.hpp"
#include "ns.hpp"

namespace numpipe::ns {

// The device of a CUDA run (under MPI one GPU per rank from the node-local rank,
// unless device_named: --device or --devices named one) set in o.device, and the
// device's (or the host's) description. Backend::cuda without CUDA: exit 3.
DeviceInfo prepare_backend(Backend backend, RunOptions& o, bool device_named);

// make_cpu_solver or make_cuda_solver (ns.hpp), stepped by common/run.hpp's run_steps.
std::unique_ptr<Solver> make_solver(Backend backend, const Problem& pr, const RunOptions& o);

// A whole run without a progress line (ns.hpp run()): solve_cpu or solve_cuda.
Result solve(Backend backend, const Problem& pr, const RunOptions& o);

}  // namespace numpipe::ns
