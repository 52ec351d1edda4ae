// fluid's tuning knobs: environment variables that choose among variants of the
// same computation (the same bits), for tests and benchmarks (docs/tuning.md's
// fluid-step rows). Read in one place (tuning.cpp) each time a solver is made, so
// that a test may change them between solvers; values read as before (atoi).
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace numpipe::fluid {

struct Tuning {
  // the CPU's fused solver (cpu.cpp)
  std::string cpu_isa;                          // NUMPIPE_FLUID_CPU_ISA: avx512, avx2, generic ("": the widest there is)
  bool cpu_gather_single = false;               // NUMPIPE_FLUID_CPU_GATHER=single: one float per gather
  std::string cpu_div;                          // NUMPIPE_FLUID_CPU_DIV: reciprocal or divide ("": tried)
  std::string cpu_advect;                       // NUMPIPE_FLUID_CPU_ADVECT: gather or scalar ("": tried)
  std::optional<std::size_t> cpu_window_bytes;  // NUMPIPE_FLUID_CPU_WINDOW: a block's window in L2
  int cpu_blocks = 1;                           // NUMPIPE_FLUID_CPU_BLOCKS: blocks per thread, 1 to 16
  bool cpu_trapezoid = true;                    // NUMPIPE_FLUID_CPU_TRAPEZOID=0: rectangular blocks
  int cpu_advect_tile = 0;                      // NUMPIPE_FLUID_CPU_ADVECT_TILE: the advection's tile (0: none)
  bool cpu_huge = true;                         // NUMPIPE_FLUID_CPU_HUGE=0: no huge pages
  bool cpu_pin = false;                         // NUMPIPE_FLUID_CPU_PIN=1: threads pinned to cores
  int cpu_prefetch = 1;                         // NUMPIPE_FLUID_CPU_PREFETCH: rows ahead, 0 to 8
  int cpu_group = 4;                            // NUMPIPE_FLUID_CPU_GROUP: steps of the wavefront swept together
  bool cpu_balance = true;                      // NUMPIPE_FLUID_CPU_BALANCE=0: blocks not balanced
  bool cpu_aligned = true;                      // NUMPIPE_FLUID_CPU_ALIGNED=0: rows not aligned
  bool cpu_phases = false;                      // NUMPIPE_FLUID_CPU_PHASES (set): where a run's time went
  // both backends' scene path
  bool scene_tiles = true;   // NUMPIPE_FLUID_SCENE_TILES=0: a scene never on the fused solvers' blocks or tiles
  bool force_scene = false;  // NUMPIPE_FLUID_SCENE=1: a plain state on the scene path
  // the CUDA solvers
  bool cuda_graph = true;  // NUMPIPE_FLUID_NO_GRAPH (set): no CUDA graph for a step
  std::string cuda_tile;   // NUMPIPE_FLUID_TILE: the fp32 tile by name ("": the default)
};

// The knobs as the environment sets them now.
Tuning tuning_from_environment();

}  // namespace numpipe::fluid
