// inference.hpp with exp, log, pow and lgamma perturbed (mle_perturbed.hpp),
// summing each window in point order as the CPU backend does.
#define MLE_COPY_NS mle_perturbed
#define MLE_COPY_FN estimate_window_perturbed
#include "mle_copy.inc"
