// fluid-step's run in the stream: the input state's step, time and forcing, the
// checks of what it holds, the working set, and the two paths' states (the fused
// step's plain square state, a scene) as the stepping loop and the writer see them:
// their solver, attrs, snapshots, finite checks and the traffic per cell and step.
#pragma once
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "common/finite.hpp"
#include "common/stream.hpp"
#include "dispatch.hpp"
#include "fluid.hpp"
#include "scene.hpp"
#include "state_io.hpp"

namespace numpipe::fluid {

// attrs[group][key] where it is a number, else fallback.
double attr_number(const json& attrs, const char* group, const char* key, double fallback);
// The input state's step (attrs "step", else 0) and time (attrs "time", else step * dt).
std::int64_t input_step(const StateInput& in);
double input_time(const StateInput& in, double dt);
// The forcing of the input's attrs ("react" where it names none); exit 2 on another word.
std::string input_forcing(const StateInput& in);
// A state at step 0 whose d0, u0 or v0 hold values that --forcing none would discard:
// refused (exit 2), saying how to give an emitter instead.
void refuse_discarded_sources(const StateInput& in, Forcing forcing);
// The working set (docs/fluid.md "Memory") from the header of record 'd', before any
// payload is read; precision "" : the input's.
void require_fluid_memory(const RecordHeader& d, Backend backend, const std::string& precision, int device);
// Why a state needs the scene path (empty: it does not).
std::string scene_reason(const StateInput& in, const Scene& s, const SceneRecords& r);
// The flops a step does per cell, for the profile's rate (an estimate: docs/fluid.md).
inline constexpr double kFlopsPerCellStep = 800.0;
// The forcing as the output's attrs say it.
json forcing_attrs(const Params& p);
// The input's payloads, once converted (the records stay: the scene's refer to them).
void release_payloads(std::vector<Record>& records);

// Every field written must be finite (diagnose() checks d, u, v; this names the record and the cell).
template <class T>
void require_finite_field(const std::string& name, const Shape& shape, const FieldVector<T>& f, std::int64_t step) {
  if (f.empty()) return;
  require_finite(ExitCode::bad_input, name, shape, f.data(),
                 "the state became non-finite by step " + std::to_string(step) + " (try a smaller --dt)");
}
template <class F>
void require_finite_fields(const F& f, const Shape& shape, const std::string& prefix, bool all_six, std::int64_t step) {
  require_finite_field(prefix + "d", shape, f.d, step);
  require_finite_field(prefix + "u", shape, f.u, step);
  require_finite_field(prefix + "v", shape, f.v, step);
  if (!all_six) return;
  require_finite_field(prefix + "d0", shape, f.d0, step);
  require_finite_field(prefix + "u0", shape, f.u0, step);
  require_finite_field(prefix + "v0", shape, f.v0, step);
}

// What both states hold: the step's parameters and the fields; their solver type.
template <class T, class Fields_, class Solver_>
struct StateOf {
  using FieldsT = Fields_;
  using SolverT = Solver_;
  Params p;
  FieldsT fields;
  explicit StateOf(const Params& p_) : p(p_) {}
  // params()'s words of the step (the box's are the state's own).
  json step_params(const char* scheme) const;
  // A snapshot's attrs: the box's size (size), the step, the time and the grid.
  static json snapshot_attrs_of(json size, std::int64_t step, double time, json grid) {
    size["kind"] = "fluid.snapshot";
    size["step"] = step;
    size["time"] = time;
    size["grid"] = std::move(grid);
    return size;
  }
};

// The fused step's plain square state.
template <class T>
struct PlainState : StateOf<T, Fields<T>, Solver<T>> {
  using Base = StateOf<T, Fields<T>, Solver<T>>;
  using typename Base::FieldsT;
  using typename Base::SolverT;
  using Base::fields;
  using Base::p;
  PlainState(const Params& p_, const StateInput& in, std::vector<Record>& input) : Base(p_) {
    fields = load_fields<T>(in);
    release_payloads(input);
  }
  std::unique_ptr<SolverT> make(Backend b, const Params& q, const FieldsT& f, int device) const {
    return make_solver<T>(b, q, f, device);
  }
  Shape shape() const { return Shape{p.n + 2, p.n + 2}; }
  double cells() const { return static_cast<double>(p.n) * p.n; }
  double state_bytes() const { return 6.0 * static_cast<double>(fields.cells()) * sizeof(T); }
  double bytes_per_cell_step(bool cuda) const { return fluid::bytes_per_cell_step(p, sizeof(T), cuda); }
  long long steps_per_call(bool) const { return INT_MAX; }
  json grid() const {
    Scene square;
    square.nx = square.ny = p.n;
    return grid_attrs(square);
  }
  json params() const;
  json snapshot_attrs(std::int64_t step, double time) const {
    return Base::snapshot_attrs_of({{"n", p.n}}, step, time, grid());
  }
  void require_finite(const std::string& prefix, bool all_six, std::int64_t step) const {
    require_finite_fields(fields, shape(), prefix, all_six, step);
  }
  void write(StreamWriter& w, const json& attrs, const std::string& prefix, bool all_six) const {
    write_fields(w, fields, attrs, prefix, all_six);
  }
  Diagnostics diagnose() const { return fluid::diagnose(fields); }
  void state_attrs(json& attrs) const { attrs["n"] = p.n; }
};

// A scene: Stam's step with the scene's obstacle, emitters, sides and forces.
template <class T>
struct SceneState : StateOf<T, SceneFields<T>, SceneSolver<T>> {
  using Base = StateOf<T, SceneFields<T>, SceneSolver<T>>;
  using typename Base::FieldsT;
  using typename Base::SolverT;
  using Base::fields;
  using Base::p;
  Scene scene;
  const SceneRecords& records;
  SceneState(const Params& p_, const StateInput& in, std::vector<Record>& input, const SceneRecords& r, const Scene& s)
      : Base(p_), scene(s), records(r) {
    fields = load_scene_fields<T>(in, records);
    release_payloads(input);  // (records' pointers stay valid: only their payloads go)
    validate_scene(scene, fields);
  }
  std::unique_ptr<SolverT> make(Backend b, const Params& q, const FieldsT& f, int device) const {
    return make_solver<T>(b, q, scene, f, device);
  }
  Shape shape() const { return Shape{scene.ny + 2, scene.nx + 2}; }
  double cells() const { return static_cast<double>(scene.nx) * scene.ny; }
  double state_bytes() const {
    return (fields.temperature() ? 7.0 : 6.0) * static_cast<double>(fields.cells()) * sizeof(T);
  }
  double bytes_per_cell_step(bool) const {
    int sources = 0;
    for (const Record* r : records.src) sources += r != nullptr;
    return scene_bytes_per_cell_step(p, scene, records.solid != nullptr, sources, fields.temperature(),
                                     static_cast<int>(sizeof(T)));
  }
  // The CPU reports every step (no cost); the GPU every snapshot or at the end, so
  // that no step waits for the host.
  long long steps_per_call(bool cuda) const { return cuda ? INT_MAX : 1; }
  json grid() const { return grid_attrs(scene); }
  json params() const;
  json snapshot_attrs(std::int64_t step, double time) const {
    return Base::snapshot_attrs_of({{"nx", scene.nx}, {"ny", scene.ny}}, step, time, grid());
  }
  void require_finite(const std::string& prefix, bool all_six, std::int64_t step) const {
    require_finite_fields(fields, shape(), prefix, all_six, step);
    require_finite_field(prefix + "T", shape(), fields.t, step);
  }
  void write(StreamWriter& w, const json& attrs, const std::string& prefix, bool all_six) const {
    write_scene_fields(w, fields, attrs, prefix, all_six);
  }
  Diagnostics diagnose() const { return diagnose_scene(scene, fields); }
  void state_attrs(json& attrs) const {
    attrs.erase("n");
    attrs["nx"] = scene.nx;
    attrs["ny"] = scene.ny;
    attrs["box"] = scene_attrs(scene);
  }
};

}  // namespace numpipe::fluid
