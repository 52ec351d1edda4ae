#include "tuning.hpp"

#include <algorithm>
#include <cstdlib>

namespace numpipe::fluid {
namespace {

const char* env(const char* name) { return std::getenv(name); }
std::string env_text(const char* name) {
  const char* e = env(name);
  return e ? e : "";
}
// A whole number (atoi), or fallback where unset or empty.
int env_int(const char* name, int fallback) {
  const char* e = env(name);
  return e && *e ? std::atoi(e) : fallback;
}

}  // namespace

Tuning tuning_from_environment() {
  Tuning t;
  t.cpu_isa = env_text("NUMPIPE_FLUID_CPU_ISA");
  t.cpu_gather_single = env_text("NUMPIPE_FLUID_CPU_GATHER") == "single";
  t.cpu_div = env_text("NUMPIPE_FLUID_CPU_DIV");
  t.cpu_advect = env_text("NUMPIPE_FLUID_CPU_ADVECT");
  if (const char* e = env("NUMPIPE_FLUID_CPU_WINDOW")) t.cpu_window_bytes = std::strtoull(e, nullptr, 10);
  t.cpu_blocks = std::clamp(env_int("NUMPIPE_FLUID_CPU_BLOCKS", 1), 1, 16);
  t.cpu_trapezoid = env_int("NUMPIPE_FLUID_CPU_TRAPEZOID", 1) != 0;
  t.cpu_advect_tile = std::max(0, env_int("NUMPIPE_FLUID_CPU_ADVECT_TILE", 0));
  t.cpu_huge = env_int("NUMPIPE_FLUID_CPU_HUGE", 1) != 0;
  t.cpu_pin = env_int("NUMPIPE_FLUID_CPU_PIN", 0) != 0;
  t.cpu_prefetch = std::clamp(env_int("NUMPIPE_FLUID_CPU_PREFETCH", 1), 0, 8);
  t.cpu_group = env_int("NUMPIPE_FLUID_CPU_GROUP", 4);  // clamped by the solver (its kMaxGroup)
  t.cpu_balance = env_int("NUMPIPE_FLUID_CPU_BALANCE", 1) != 0;
  t.cpu_aligned = env_int("NUMPIPE_FLUID_CPU_ALIGNED", 1) != 0;
  t.cpu_phases = env("NUMPIPE_FLUID_CPU_PHASES") != nullptr;
  t.scene_tiles = env_text("NUMPIPE_FLUID_SCENE_TILES") != "0";
  t.force_scene = env_text("NUMPIPE_FLUID_SCENE") == "1";
  t.cuda_graph = env("NUMPIPE_FLUID_NO_GRAPH") == nullptr;
  t.cuda_tile = env_text("NUMPIPE_FLUID_TILE");
  return t;
}

}  // namespace numpipe::fluid
