// mle: the CUDA backend's tuning knobs (docs/tuning.md), read from the environment in
// one place. None changes a fit's bits.
#pragma once
#include <cstdlib>
#include <string>

#include "common/env.hpp"

namespace numpipe {
class Cli;
}

namespace numpipe::mle {

struct Tuning {
  int group = 8;           // NUMPIPE_MLE_GROUP=4|8: shapes per block of the rolling grid kernel
  bool prescreen = true;   // NUMPIPE_MLE_PRESCREEN=0: every candidate's S exactly (no single-precision prescreen)
  int estimate_lanes = 0;  // NUMPIPE_MLE_ESTIMATE_LANES=1|2|4|8|16|32: threads a window of the estimate kernel (0: automatic)
};

// The knobs of this process's environment, read as numbers (C's atoi: leading digits).
// NUMPIPE_MLE_GROUP: 4 where it reads 4, else 8. NUMPIPE_MLE_PRESCREEN: off where it
// reads 0 (an empty or non-numeric value too), else on. NUMPIPE_MLE_ESTIMATE_LANES,
// where set: another number than those listed exits 2 ("... must be 1, 2, 4, 8, 16 or
// 32, got 'VALUE'").
inline Tuning tuning_from_environment() {
  Tuning t;
  if (const auto group = env_text("NUMPIPE_MLE_GROUP")) t.group = std::atoi(group->c_str()) == 4 ? 4 : 8;
  if (const auto prescreen = env_text("NUMPIPE_MLE_PRESCREEN")) t.prescreen = std::atoi(prescreen->c_str()) != 0;
  if (const auto lanes = env_text("NUMPIPE_MLE_ESTIMATE_LANES")) {
    const int v = std::atoi(lanes->c_str());
    if (!(v == 1 || v == 2 || v == 4 || v == 8 || v == 16 || v == 32))
      fail_input("NUMPIPE_MLE_ESTIMATE_LANES must be 1, 2, 4, 8, 16 or 32, got '" + *lanes + "'");
    t.estimate_lanes = v;
  }
  return t;
}

// The knobs on mle-fit's Cli (listed by --help-all), in tuning.cpp.
void declare_tuning(Cli& cli);

}  // namespace numpipe::mle
