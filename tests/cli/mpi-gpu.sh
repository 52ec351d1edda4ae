# Batch tools under MPI on the GPU: 2 and 4 ranks sharing one GPU (or spread over
# a node's GPUs) give the one-process CUDA output bit for bit.
require_gpu
require_mpi
cuda_same_under_mpi() {  # cuda_same_under_mpi NAME INPUT TOOL ARGS...
  local name=$1 input=$2
  shift 2
  "$@" --backend cuda -i "$input" -o "$name-one.nps"
  for n in 2 4; do
    $MPIRUN -np $n "$@" --backend cuda -i "$input" -o "$name-$n.nps" || fail "$name under $n ranks failed"
    verify "$name-$n.nps" "$name-one.nps" > v.txt || { cat v.txt; fail "$name: $n ranks on the GPU differ from one process"; }
  done
}
if command -v price > /dev/null; then
  gen-input price --dataset small -o price.nps
  cuda_same_under_mpi price price.nps price
fi
if command -v integrate > /dev/null; then
  gen-input integrate --portfolio 9 --seed 2 --steps 2,2,2 -o pf.nps
  cuda_same_under_mpi integrate pf.nps integrate
fi
if command -v mle-fit > /dev/null; then
  gen-input mle --series 3 --length 1500 --seed 4 -o series.nps
  cuda_same_under_mpi mle series.nps mle-fit --window 200 --step 1
fi
true
