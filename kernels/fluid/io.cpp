#include "io.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "tuning.hpp"

namespace numpipe::fluid {

double attr_number(const json& attrs, const char* group, const char* key, double fallback) {
  if (attrs.contains(group) && attrs[group].is_object() && attrs[group].contains(key) && attrs[group][key].is_number())
    return attrs[group][key].get<double>();
  return fallback;
}

std::int64_t input_step(const StateInput& in) {
  return in.attrs.contains("step") && in.attrs["step"].is_number_integer() ? in.attrs["step"].get<std::int64_t>() : 0;
}

double input_time(const StateInput& in, double dt) {
  if (in.attrs.contains("time") && in.attrs["time"].is_number()) return in.attrs["time"].get<double>();
  return static_cast<double>(input_step(in)) * dt;
}

std::string input_forcing(const StateInput& in) {
  std::string forcing = "react";
  if (in.attrs.contains("forcing") && in.attrs["forcing"].is_object() && in.attrs["forcing"].contains("type") &&
      in.attrs["forcing"]["type"].is_string())
    forcing = in.attrs["forcing"]["type"].get<std::string>();
  if (forcing != "react" && forcing != "none") fail_input("input attrs: forcing type must be react or none, got '" + forcing + "'");
  return forcing;
}

// d0, u0 and v0 are the solver's work buffers (Stam's *_prev), cleared at the start of
// every step (react's zeroing; Stam's demo clears them every frame likewise), so a
// density put there is never injected: an emitter record says what is added every step.
void refuse_discarded_sources(const StateInput& in, Forcing forcing) {
  if (forcing != Forcing::none || input_step(in) != 0) return;
  static const char* const emitter[3] = {"source_d", "source_u", "source_v"};
  for (int k = 3; k < 6; ++k) {
    const Record& r = *in.records[static_cast<std::size_t>(k)];
    const std::size_t w = static_cast<std::size_t>(in.nx) + 2;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double x = r.value_as_double(i);
      if (x == 0) continue;
      std::ostringstream value;
      value << x;
      fail_input(std::string("'") + kFieldNames[k] + "' holds " + value.str() + " at [" + std::to_string(i / w) + ", " +
                 std::to_string(i % w) + "] in a state at step 0, but d0, u0 and v0 are the solver's work buffers, " +
                 "cleared at the start of every step (with --forcing none nothing is injected from them): give what " +
                 "should be added every step as a record " + emitter[k - 3] +
                 " (a rate per unit time; gen-input fluid --emit makes one), or set " + kFieldNames[k] + " to zero");
    }
  }
}

// The input records (until they are converted), the tool's copy of the state (6
// fields, kept for the final fetch) and the CPU solver's (6 fields, a scratch field, a
// window per thread); on the GPU the device holds the 6 fields and the scratch field.
void require_fluid_memory(const RecordHeader& d, Backend backend, const std::string& precision, int device) {
  const double cells = static_cast<double>(element_count(d.shape));
  const double in = static_cast<double>(dtype_size(d.dtype));
  const double s = precision.empty() ? in : precision == "fp64" ? 8.0 : 4.0;
  const std::string what = "a fluid state of shape " + shape_string(d.shape) + " (" +
                           std::to_string(static_cast<long long>(cells)) + " cells)";
  if (backend == Backend::cuda) {
    require_host_memory({what, cells, 6 * in + 6 * s, "cell"});
    require_device_memory(device, {what, cells, 7 * s, "cell", 64.0 * 1048576});
  } else {
    require_host_memory({what, cells, std::max(6 * in + 6 * s, 13 * s), "cell", 4.0 * 1048576 * omp_get_max_threads()});
  }
}

std::string scene_reason(const StateInput& in, const Scene& s, const SceneRecords& r) {
  if (in.nx != in.ny) return "a " + std::to_string(in.nx) + " x " + std::to_string(in.ny) + " grid";
  if (r.solid) return "an obstacle (record 'solid')";
  for (int k = 0; k < 4; ++k)
    if (r.src[k]) return std::string("an emitter (record '") + kSourceNames[k] + "')";
  if (r.t) return "a temperature field (record 'T')";
  if (!s.all_closed()) return "sides other than closed walls";
  if (s.length != 1.0) return "a domain length other than 1";
  if (s.buoyancy_a != 0 || s.buoyancy_b != 0) return "--buoyancy";
  if (s.vorticity != 0) return "--vorticity";
  if (tuning_from_environment().force_scene) return "NUMPIPE_FLUID_SCENE=1";
  return "";
}

json forcing_attrs(const Params& p) {
  return {{"type", p.forcing == Forcing::react ? "react" : "none"}, {"force", p.force}, {"source", p.source}};
}

void release_payloads(std::vector<Record>& records) {
  for (Record& r : records) r.payload = HostArray<std::byte>();
}

template <class T, class F, class S>
json StateOf<T, F, S>::step_params(const char* scheme) const {
  return {{"dt", p.dt},
          {"diff", p.diff},
          {"visc", p.visc},
          {"iters", p.iters},
          {"scheme", scheme},
          {"precision", sizeof(T) == 4 ? "fp32" : "fp64"}};
}

template <class T>
json PlainState<T>::params() const {
  json j = this->step_params(p.scheme == Scheme::seed ? "fused" : "stam");
  j["n"] = p.n;
  return j;
}

template <class T>
json SceneState<T>::params() const {
  json j = this->step_params("stam");
  j["nx"] = scene.nx;
  j["ny"] = scene.ny;
  j["buoyancy"] = {scene.buoyancy_a, scene.buoyancy_b};
  j["ambient"] = scene.ambient;
  j["vorticity"] = scene.vorticity;
  return j;
}

template struct StateOf<float, Fields<float>, Solver<float>>;
template struct StateOf<double, Fields<double>, Solver<double>>;
template struct StateOf<float, SceneFields<float>, SceneSolver<float>>;
template struct StateOf<double, SceneFields<double>, SceneSolver<double>>;
template struct PlainState<float>;
template struct PlainState<double>;
template struct SceneState<float>;
template struct SceneState<double>;

}  // namespace numpipe::fluid
