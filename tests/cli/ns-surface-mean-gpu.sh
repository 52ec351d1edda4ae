# ns-step's time-averaged surface pressure on the GPU: the mean of the window's states'
# surface pressures, and the run's state unchanged by the sampling (tests/cli/ns-surface-mean.sh
# with --backend cuda).
require_gpu
NS_SURFACE_BACKEND=cuda
source "$SRC/tests/cli/ns-surface-mean.sh"
