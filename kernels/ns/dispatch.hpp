// The backend as a value: ns-step's solve on the backend the user chose, the only
// place that knows whether this build has the CUDA backend.
#pragma once
#include "common/device.hpp"
#include "ns.hpp"

namespace numpipe::ns {

// The device of a CUDA run (under MPI one GPU per rank from the node-local rank,
// unless device_named: --device or --devices named one) set in o.device, and the
// device's (or the host's) description. Backend::cuda without CUDA: exit 3.
DeviceInfo prepare_backend(Backend backend, RunOptions& o, bool device_named);

// solve_cpu or solve_cuda.
Result solve(Backend backend, const Problem& pr, const RunOptions& o);

}  // namespace numpipe::ns
