// integrate: the tuning knobs (docs/tuning.md), read from the environment in one place.
// None changes a result's bits. Read where a solve starts (each time: the tests set
// them between solves); unset or empty is the default, another word exits 2
// ("NAME must be a or b, got 'VALUE'").
#pragma once
#include "common/env.hpp"

namespace numpipe {
class Cli;
}

namespace numpipe::integrate {

struct Tuning {
  // NUMPIPE_INTEGRATE_RESULT=host|device: where the CUDA table plan expands the
  // profile rows into the per-policy result (kernels/integrate/cuda.cu).
  enum class ResultPath { host, device };
  ResultPath result = ResultPath::host;
  // NUMPIPE_INTEGRATE_SPLIT=sequential|concurrent: a mixed problem's two parts on the
  // GPU one after the other or from two host threads at once.
  bool split_concurrent = false;
  // NUMPIPE_INTEGRATE_PAGES=early|late: threads that fault the result's pages in
  // while the others solve (early), or none (late).
  bool early_pages = true;
};

inline Tuning tuning_from_environment() {
  Tuning t;
  t.result = env_choice("NUMPIPE_INTEGRATE_RESULT", {"host", "device"}, "host") == "device"
                 ? Tuning::ResultPath::device
                 : Tuning::ResultPath::host;
  t.split_concurrent = env_choice("NUMPIPE_INTEGRATE_SPLIT", {"sequential", "concurrent"}, "sequential") == "concurrent";
  t.early_pages = env_choice("NUMPIPE_INTEGRATE_PAGES", {"early", "late"}, "early") == "early";
  return t;
}

// The knobs on integrate's Cli (listed by --help-all), in tuning.cpp.
void declare_tuning(Cli& cli);

}  // namespace numpipe::integrate
