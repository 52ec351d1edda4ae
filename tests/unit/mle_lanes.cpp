// inference.hpp with the CUDA estimate kernel's order of the sums (8 lanes a
// window, combined by a butterfly; one division a point), run on the host,
// with exp, log, pow and lgamma perturbed as in mle_perturbed.cpp.
#define NUMPIPE_MLE_EMULATE_LANES 8
#define MLE_COPY_NS mle_lanes
#define MLE_COPY_FN estimate_window_lanes
#include "mle_copy.inc"
