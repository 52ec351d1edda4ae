// ns-step's internals shared by the backends, the stream I/O (io.hpp) and the tests;
// the interface is ns.hpp.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "ns.hpp"

namespace numpipe::ns {

// Snapshot field names: the state's and the derived ones (model.hpp kDerivedNames).
bool is_snapshot_field(const std::string& name);

// A snapshot of block g at (step, t), its fields still to add (names, data).
inline BlockFields snapshot_of(const Geometry& g, long long step, double t, bool fp32) {
  BlockFields b;
  b.step = step;
  b.t = t;
  b.fp32 = fp32;
  for (int a = 0; a < 3; ++a) b.offset[a] = g.offset[a], b.n[a] = g.n[a];
  return b;
}

// Bytes a fused sub-step must move per point (read Phi and Q, write Phi and Q).
inline double bytes_per_point_substep(bool fp32) { return (fp32 ? 4.0 : 8.0) * 4 * kVars; }

// The diagnostics row from line sums and maxima (host side, fixed order).
DiagRow finish_diagnostics(const Geometry& g, const Params& p, long long step, double t, const std::vector<double>& line_sums,
                           const std::vector<double>& line_max_div, const std::vector<double>& line_max_speed);

// When the run ends and writes snapshots and diagnostics.
StepPlan step_plan(const RunOptions& o);

// The dt of the next step from the options (fixed, or CFL from the current max |v|).
double choose_dt(const Geometry& g, const Params& p, const RunOptions& o, double max_speed);

// The decomposition the solvers use under MPI (dims per axis), for messages.
std::array<int, 3> mpi_dims_used();

}  // namespace numpipe::ns
