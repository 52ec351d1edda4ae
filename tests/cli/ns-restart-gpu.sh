# ns-step restarted from snapshots and continued from its final state on the GPU: the
# same bits as the run that went on (tests/cli/ns-restart.sh with --backend cuda).
require_gpu
NS_RESTART_BACKEND=cuda
source "$SRC/tests/cli/ns-restart.sh"
