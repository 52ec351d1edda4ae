// ns-step's interface: one problem (the state and its model parameters), the run
// options, and the two backends.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/host_vector.hpp"
#include "common/run.hpp"
#include "model.hpp"

namespace numpipe::ns {

// The model parameters a state carries (the attrs of gen-input ns).
struct Params {
  long long n[3] = {16, 16, 16};
  double box[3] = {6.283185307179586, 6.283185307179586, 6.283185307179586};
  Bc bc[3] = {Bc::periodic, Bc::periodic, Bc::periodic};
  double re = 100;          // Reynolds number: nu = 1/Re
  double c = 10;            // speed of sound
  double force[3] = {0, 0, 0};  // constant body force
  double kol_amp = 0;       // Kolmogorov forcing amplitude: f_x += A sin(2 pi K y / ly)
  int kol_k = 1;            // its wavenumber K
  // A free stream (gen-input --free-stream): a fringe at the downstream end of the
  // stream's (periodic) axis relaxes rho and v to (1, stream), so that the flow leaving
  // there comes back in at the upstream face as the undisturbed stream (bodies.hpp).
  bool free_stream = false;
  double stream[3] = {0, 0, 0};
  int fringe_axis = 0;
  double fringe_length = 0;    // the fringe is the last fringe_length of the axis
  double fringe_strength = 0;  // its largest relaxation rate sigma (1/time)
};

// Bodies in the flow (gen-input --body, --solid), at rest, no-slip (bodies.cpp).
struct Body {
  enum class Kind { cylinder, sphere, box, mask };
  Kind kind = Kind::sphere;
  double a[6] = {0, 0, 0, 0, 0, 0};  // cylinder: cx, cy, r; sphere: cx, cy, cz, r; box: x0, y0, z0, x1, y1, z1
  std::string spec;                  // as the user wrote it ("mask" for --solid)
};
struct Bodies {
  std::vector<Body> list;          // analytic bodies in the order given, then the mask's body if any
  std::vector<std::uint8_t> mask;  // --solid: 1 inside a body, C order over the grid (empty: none)
  bool any() const { return !list.empty(); }
};

// "cylinder:CX,CY,R" (axis along z), "sphere:CX,CY,CZ,R", "box:X0,Y0,Z0,X1,Y1,Z1":
// bad-input error (exit 2) naming the spec when it is not one.
Body parse_body(const std::string& spec);
// Bodies must lie inside the box along periodic axes, be larger than a grid cell, and
// leave some fluid: bad-input error naming the body.
void validate_bodies(const Params& p, const Bodies& b);

// Parses "x=periodic,y=noslip,z=freeslip" (or one name for all three axes).
// Bad-input error (exit 2) naming the item when it is not one.
void parse_bc(const std::string& spec, Bc out[3]);
std::string bc_spec(const Bc bc[3]);
Bc parse_bc_name(const std::string& name);  // bad-input error if unknown

// f_x of the Kolmogorov forcing per interior j of a block: A sin(2 pi K y_j / ly),
// y_j = (offset + j) h_y (zeros without forcing).
std::vector<double> kolmogorov_table(const Geometry& g, const Params& p);

// The single-block geometry of the whole box.
Geometry make_geometry(const Params& p);

struct Problem {
  Params params;
  Bodies bodies;
  std::array<HostVector<double>, kVars> fields;  // interior values, nx*ny*nz each, C order
  double t0 = 0;
  long long step0 = 0;
};

// Fields of this process's block (the whole grid in one process) handed to the
// snapshot writer: C order over the block, values of the run's precision.
struct BlockFields {
  long long step = 0;
  double t = 0;
  long long offset[3] = {0, 0, 0};  // the block's first point in the grid
  int n[3] = {0, 0, 0};             // its points per axis
  bool fp32 = false;                // float values (else double)
  std::vector<std::string> names;   // rho, vx, vy, vz, or a derived field's name
  std::vector<const void*> data;
};

// Snapshot field names: the state's and the derived ones (model.hpp kDerivedNames).
bool is_snapshot_field(const std::string& name);

// The run's plan (common/run.hpp: --steps or --t-end, the snapshots' and the
// diagnostics' times) and the solver's options.
struct RunOptions : StepPlan {
  double dt = 0;     // fixed time step; 0: from cfl
  double cfl = 0.5;
  int order = 4;     // 2 or 4
  bool fp32 = false;
  int device = 0;
  int chunk = 0;     // CUDA: planes per thread block along x (0: automatic)
  int kernel = 4;    // CUDA: sub-step kernel variant 0..7 (4: the default, 6 in fp64 and 5 in fp32; tools/ns-step.cpp)
  int dims[3] = {0, 0, 0};  // MPI: ranks per axis (0: MPI_Dims_create chooses)
  bool overlap = true;      // MPI: update the block's inner part while the halos travel
  // Snapshots (the plan's snapshot_every, snapshot_dt): the fields named in
  // snapshot_fields are handed to on_snapshot, on every rank (its block), in step order.
  std::vector<std::string> snapshot_fields;
  std::function<void(const BlockFields&)> on_snapshot;
  // Called after every step with the steps done and the time reached (progress
  // display; rank 0 only needs it).
  std::function<void(long long, double)> on_step;
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

// Bytes a fused sub-step must move per point (read Phi and Q, write Phi and Q).
inline double bytes_per_point_substep(bool fp32) { return (fp32 ? 4.0 : 8.0) * 4 * kVars; }

// The diagnostics row from line sums and maxima (host side, fixed order).
DiagRow finish_diagnostics(const Geometry& g, const Params& p, long long step, double t, const std::vector<double>& line_sums,
                           const std::vector<double>& line_max_div, const std::vector<double>& line_max_speed);

// When the run ends and writes snapshots and diagnostics (the backends' StepClock).
StepPlan step_plan(const RunOptions& o);

// The dt of the next step from the options (fixed, or CFL from the current max |v|).
double choose_dt(const Geometry& g, const Params& p, const RunOptions& o, double max_speed);

// Validates the problem (sizes, finite values, consistent bc): bad-input error with the value.
void validate(const Problem& pr, const RunOptions& o);

// The CPU backend. Under MPI (par::world().size() > 1) every rank calls it with the
// whole problem (rank 0's broadcast state): it runs the rank's block of a 3-D
// Cartesian decomposition with halo exchange; each rank's Result holds its block's
// final fields, rank 0's the diagnostics and forces, the same bits as one process.
Result solve_cpu(const Problem& pr, const RunOptions& o);
// The decomposition solve_cpu uses under MPI (dims per axis), for messages.
std::array<int, 3> mpi_dims_used();
#ifdef NUMPIPE_HAVE_CUDA
Result solve_cuda(const Problem& pr, const RunOptions& o);
#endif

}  // namespace numpipe::ns
