// mle-fit's tuning knobs as the tool declares them (tuning.hpp reads them).
#include "tuning.hpp"

#include "common/cli.hpp"

namespace numpipe::mle {

void declare_tuning(Cli& cli) {
  cli.tuning_env("NUMPIPE_MLE_GROUP=4|8", "CUDA: shapes per block of the grid kernels (default 8)");
  cli.tuning_env("NUMPIPE_MLE_PRESCREEN=0", "CUDA: evaluate every candidate exactly (no single-precision prescreen); "
                 "the same bits");
  cli.tuning_env("NUMPIPE_MLE_ESTIMATE_LANES=1|2|4|8|16|32",
                 "CUDA --refine/--stderr: threads per window of the estimate kernel (default: about 32 points a thread)");
}

}  // namespace numpipe::mle
