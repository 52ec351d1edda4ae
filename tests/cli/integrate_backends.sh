# Shared by integrate's GPU tests (sourced): backends_agree FILE ATOL [INTEGRATE_ARGS...]
# holds the CUDA backend's output for FILE within 1e-13 relative (or ATOL) of the CPU
# backend's, and the same bits run to run and over the device list 0,0 (which splits
# the work as two devices would); it leaves the CUDA output in gpu.nps.
backends_agree() {
  local f=$1 atol=$2
  shift 2
  integrate -i "$f" "$@" --backend cpu -o cpu.nps
  integrate -i "$f" "$@" --backend cuda -o gpu.nps
  verify gpu.nps cpu.nps --rtol 1e-13 --atol "$atol" || fail "$f $*: CUDA and CPU differ"
  integrate -i "$f" "$@" --backend cuda | verify --against gpu.nps --rtol 0 --atol 0 || fail "$f $*: CUDA not reproducible"
  integrate -i "$f" "$@" --backend cuda --devices 0,0 | verify --against gpu.nps --rtol 0 --atol 0 ||
    fail "$f $*: --devices 0,0 changed the bits"
}
