// ns-step's run in the stream: the state's records read into a Problem (its
// parameters, bodies and free stream from the attrs), the working set, the checks
// of the input and the result, and the tables written beside the state (the
// diagnostics, the forces on the bodies), with the work model of a step, so that
// each is unit-testable.
#pragma once
#include <string>
#include <vector>

#include "common/device.hpp"
#include "common/stream.hpp"
#include "ns.hpp"

namespace numpipe::ns {

// The state's records (rho, vx, vy, vz and the mask 'solid') as a Problem; the
// converted records' payloads are released. input_attrs: rho's attrs. Exit 2 names
// what is missing or wrong.
Problem read_state(std::vector<Record>& records, json& input_attrs);
// A restart from a snapshot (ns-step --from-snapshot STEP): the filter keeps the
// records snap_rho, snap_vx, snap_vy, snap_vz of that step (one of each) and the mask
// 'solid'; snapshot_as_state then names them as a state (rho, ..., attrs kind ns.state,
// t the snapshot's time), so that read_state reads them. Exit 2 when the input holds no
// such snapshot or only some of its fields.
RecordFilter snapshot_records(long long step);
void snapshot_as_state(std::vector<Record>& records, long long step);

// The bodies (attrs.bodies, a record 'solid') and the free stream (attrs.free_stream) of a state.
void read_bodies(const std::vector<Record>& records, const Record& r0, Problem& pr);

// The working set (docs/ns.md "Memory") from rho's header, before any payload is read.
void require_ns_memory(const RecordHeader& rho, Backend backend, bool fp32, int device);

// The model divides by rho: a state with rho <= 0 (or NaN) somewhere is refused (exit 2).
void require_positive_density(const Problem& pr);
// An explicit --dt above the stability estimate: the message (empty: within it).
std::string unstable_dt_message(const Problem& pr, const RunOptions& o);
// This rank's first non-finite value of a result, named by its point in the whole grid (empty: none).
std::string first_non_finite_point(const Result& res);

// The diagnostics rows as one table [rows, kDiagColumns].
std::vector<double> diagnostics_table(const Result& res);
// The forces on the bodies as tables [rows, 4] of t, Fx, Fy, Fz: the total over the
// bodies (summed in body order), and body b's alone.
std::vector<double> body_force_total(const std::vector<ForceRow>& forces, std::size_t bodies);
std::vector<double> body_force_of(const std::vector<ForceRow>& forces, std::size_t body);

// The work of a step, for the profile and the timing line: flops per point per
// sub-step of the right-hand side and update (counted from rhs(): about 190 at order 4,
// 120 at order 2), bytes a step moves at the least (3 sub-steps of
// bytes_per_point_substep).
double flops_per_point_substep(int order);
double bytes_per_step(double points, bool fp32);

}  // namespace numpipe::ns
