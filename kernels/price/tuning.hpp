// price: the CUDA backend's tuning knobs (docs/tuning.md), read from the environment in
// one place. None changes a price's bits except NUMPIPE_PRICE_FUSED=0 (the four kernels
// a step: the same values to rounding).
#pragma once
#include <string>

#include "common/env.hpp"

namespace numpipe::price {

struct Tuning {
  // The adjoint with the mixed term (rho != 0) as one kernel a batch of steps
  // (cuda_mcs.cu): off (the four kernels a step of cuda.cu), automatic (where the
  // device and the grid allow) or required (a resource error says why it cannot run).
  enum class Fused { off, automatic, required };
  bool graph = false;              // NUMPIPE_PRICE_GRAPH=1: each four-kernel pass as a captured CUDA graph
  Fused fused = Fused::automatic;  // NUMPIPE_PRICE_FUSED=0|1|auto
  int cluster = 0;                 // NUMPIPE_PRICE_CLUSTER=1|2|4|8|16: blocks a lane of the fused pass (0: automatic)
};

// The knobs of this process's environment. NUMPIPE_PRICE_GRAPH: "1" on, any other
// value off. NUMPIPE_PRICE_FUSED and NUMPIPE_PRICE_CLUSTER: unset or empty is the
// default; another word than those listed exits 2 ("NAME must be ..., got 'VALUE'").
inline Tuning tuning_from_environment() {
  Tuning t;
  t.graph = env_text("NUMPIPE_PRICE_GRAPH").value_or("") == "1";
  const std::string fused = env_choice("NUMPIPE_PRICE_FUSED", {"0", "1", "auto"}, "auto");
  t.fused = fused == "0" ? Tuning::Fused::off : fused == "1" ? Tuning::Fused::required : Tuning::Fused::automatic;
  t.cluster = std::stoi(env_choice("NUMPIPE_PRICE_CLUSTER", {"1", "2", "4", "8", "16"}, "0"));
  return t;
}

}  // namespace numpipe::price
