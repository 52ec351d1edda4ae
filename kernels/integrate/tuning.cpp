// integrate's tuning knobs as the tool declares them (tuning.hpp reads them).
#include "tuning.hpp"

#include "common/cli.hpp"

namespace numpipe::integrate {

void declare_tuning(Cli& cli) {
  cli.tuning_env("NUMPIPE_INTEGRATE_RESULT=host|device",
                 "CUDA table plan: how the result reaches the host (docs/integrate.md); the same bits");
  cli.tuning_env("NUMPIPE_INTEGRATE_SPLIT=concurrent|sequential",
                 "CUDA, plain policies mixed with life products: the two parts one after the other (default) "
                 "or at once from two host threads; the same bits");
  cli.tuning_env("NUMPIPE_INTEGRATE_PAGES=early|late",
                 "CUDA, a large result: its pages faulted beside the plan by a quarter of the threads (default) "
                 "or after the launches; the same bits");
}

}  // namespace numpipe::integrate
