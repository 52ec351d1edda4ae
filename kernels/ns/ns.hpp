// ns-step's interface: one problem (the state and its model parameters), the run
// options, and the solver the run skeleton steps (common/run.hpp run_steps): made
// for the backend the user chose by dispatch.hpp's make_solver.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/host_vector.hpp"
#include "common/run.hpp"
#include "params.hpp"
#include "tuning.hpp"

namespace numpipe::ns {

struct Problem {
  Params params;
  Bodies bodies;
  std::array<HostVector<double>, kVars> fields;  // interior values, nx*ny*nz each, C order
  double t0 = 0;
  long long step0 = 0;
};

// Fields of this process's block (the whole grid in one process) at a snapshot:
// C order over the block, values of the run's precision.
struct BlockFields {
  long long step = 0;
  double t = 0;
  long long offset[3] = {0, 0, 0};  // the block's first point in the grid
  int n[3] = {0, 0, 0};             // its points per axis
  bool fp32 = false;                // float values (else double)
  std::vector<std::string> names;   // rho, vx, vy, vz, or a derived field's name
  std::vector<const void*> data;
};

// The run's plan (common/run.hpp: --steps or --t-end, the snapshots' and the
// diagnostics' times), the solver's options and its tuning knobs (tuning.hpp).
struct RunOptions : StepPlan, Tuning {
  double dt = 0;     // fixed time step; 0: from cfl
  double cfl = 0.5;
  int order = 4;     // 2 or 4
  bool fp32 = false;
  int device = 0;
  int dims[3] = {0, 0, 0};  // MPI: ranks per axis (0: MPI_Dims_create chooses)
  bool overlap = true;      // MPI: update the block's inner part while the halos travel
  std::vector<std::string> snapshot_fields;  // the fields a snapshot holds (is_snapshot_field)
  // solve(): where the run's snapshots go (every rank, its block, in step order).
  std::function<void(const BlockFields&)> on_snapshot;
};

// Forces on the bodies at one diagnostic step: t and, per body, Fx, Fy, Fz.
struct ForceRow {
  double t = 0;
  std::vector<double> f;  // 3 per body
};

// One diagnostics row.
inline constexpr int kDiagColumns = 8;
inline const char* const kDiagColumnNames[kDiagColumns] = {
    "step", "t", "kinetic_energy", "enstrophy", "dissipation", "max_div", "max_mach", "mass"};
struct DiagRow {
  double v[kDiagColumns];
};

struct Result {
  // The final state of this process's block (the whole grid in one process), C order
  // over the block (fp32 runs: exact float values); under MPI every rank keeps its own
  // block and the output is written by all ranks together (ns-step, par::StreamOut).
  std::array<HostVector<double>, kVars> fields;
  long long block_offset[3] = {0, 0, 0};
  int block_n[3] = {0, 0, 0};
  std::vector<DiagRow> diag;  // rank 0
  std::vector<ForceRow> forces;  // rank 0: at every diagnostics row, when there are bodies
  double t = 0;
  long long step = 0;
  double dt_last = 0;
  double max_dt = 0;      // largest dt used
  double stable_dt = 0;   // stability estimate at the start
  std::vector<double> step_seconds;  // wall time of each step (CUDA events on the GPU)
  double upload_seconds = 0, download_seconds = 0, diag_seconds = 0;
  // MPI, CUDA: per step, the host's wait for the packed faces, their copies and the
  // MPI messages (the exchange's cost not hidden behind the inner part)
  std::vector<double> exchange_seconds;
  std::string halo_path;  // MPI: how the halos travel ("cuda-ipc", "cuda-aware-mpi", "host-staged", "host")
};

// One run's solver: the state on its backend (under MPI this rank's block of a 3-D
// Cartesian decomposition with halo exchange, the same bits as one process), made
// with the first diagnostics row taken. Stepped by run_steps through Stepper below.
class Solver {
 public:
  virtual ~Solver() = default;
  // The dt the options ask for next: --dt, or the CFL step from the state's max |v|.
  virtual double next_dt() = 0;
  // One RK3 step of dt (queued, on a GPU).
  virtual void step(double dt) = 0;
  // A diagnostics row (rank 0) and the forces on the bodies, at this step and time.
  virtual void diagnose(long long step, double t) = 0;
  // The snapshot fields of this process's block (valid until the next call).
  virtual const BlockFields& snapshot(long long step, double t) = 0;
  // Of the steps queued, those finished (a GPU runs behind the host): the progress line.
  virtual long long steps_finished(long long queued) { return queued; }
  // After the last step: the final state, the rows and the timings.
  virtual Result finish(long long step, double t) = 0;
};

// common/run.hpp's stepper over a Solver (a dt chosen every step, diagnostics): the
// snapshots handed to `write`.
struct Stepper {
  Solver& solver;
  std::function<void(const BlockFields&)> write;
  // With `sample`: the block's snapshot fields after every diagnostics row at a time
  // from sample_from on (ns-step's time-averaged surface pressure).
  std::function<void(const BlockFields&)> sample;
  double sample_from = 0;
  double next_dt() { return solver.next_dt(); }
  void step(double dt) { solver.step(dt); }
  void diagnose(long long step, double t) {
    solver.diagnose(step, t);
    if (sample && t >= sample_from) sample(solver.snapshot(step, t));
  }
  void snapshot(long long step, double t) {
    const BlockFields& fields = solver.snapshot(step, t);
    if (write) write(fields);
  }
  long long steps_finished(long long queued) { return solver.steps_finished(queued); }
};

// A whole run of `solver` from the problem's step and time through run_steps (no
// progress line unless `progress` names the tool), snapshots to o.on_snapshot.
Result run(Solver& solver, const Problem& pr, const RunOptions& o, const std::string& progress = "");

// Validates the problem (sizes, finite values, consistent bc): bad-input error with the value.
void validate(const Problem& pr, const RunOptions& o);

// The backends' solvers (dispatch.hpp chooses), and their whole runs. The CUDA pair
// is defined only in a build with the CUDA backend (dispatch.cpp, the one place that
// knows): call it through dispatch.hpp's make_solver and solve, or from GPU tests.
std::unique_ptr<Solver> make_cpu_solver(const Problem& pr, const RunOptions& o);
Result solve_cpu(const Problem& pr, const RunOptions& o);
std::unique_ptr<Solver> make_cuda_solver(const Problem& pr, const RunOptions& o);
Result solve_cuda(const Problem& pr, const RunOptions& o);

}  // namespace numpipe::ns

#include "detail.hpp"  // the pieces the backends, the stream I/O and the tests share
