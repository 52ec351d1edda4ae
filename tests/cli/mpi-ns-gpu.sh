# ns-step's CUDA backend under MPI: ranks sharing the GPU (or spread over a node's
# GPUs) run their blocks with halos exchanged every RK sub-step, with and without
# the inner part computed while the halos travel, and give the one-process CUDA
# fields and diagnostics bit for bit; the same runs against the CPU backend under
# MPI within the CUDA-vs-CPU tolerance of ns-cuda-gpu.sh.
require_gpu
require_mpi
require_tool ns-step
export OMP_NUM_THREADS=2
# periodic (two ranks along an axis are each other's neighbour on both sides), CFL steps
gen-input ns --n 24,20,18 --init random --bc periodic --re 50 --c 4 --seed 3 -o per.nps
ns-step -i per.nps --steps 3 --diag-every 1 --backend cuda -o per-one.nps
for n in 2 3 4; do
  $MPIRUN -np $n ns-step -i per.nps --steps 3 --diag-every 1 --backend cuda -o per-$n.nps || fail "periodic under $n ranks failed"
  verify per-$n.nps per-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "periodic, $n ranks on the GPU differ from one process"; }
  $MPIRUN -np $n ns-step -i per.nps --steps 3 --diag-every 1 --backend cuda --no-overlap -o per-$n-seq.nps ||
    fail "periodic under $n ranks without overlap failed"
  verify per-$n-seq.nps per-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--no-overlap, $n ranks differ"; }
done
# the halos through host staging instead of CUDA IPC: the same bits
for n in 2 4; do
  NUMPIPE_MPI_IPC=0 $MPIRUN -np $n ns-step -i per.nps --steps 3 --diag-every 1 --backend cuda --timing -o per-$n-staged.nps 2> t.txt ||
    { cat t.txt; fail "host-staged halos under $n ranks failed"; }
  grep -q "halos host-staged" t.txt || fail "NUMPIPE_MPI_IPC=0 did not stage the halos: $(cat t.txt)"
  verify per-$n-staged.nps per-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "host-staged halos, $n ranks differ"; }
done
$MPIRUN -np 2 ns-step -i per.nps --steps 1 --backend cuda --timing -o /dev/null 2> t.txt
grep -q "halos cuda-ipc" t.txt || echo "note: CUDA IPC not used on this machine: $(grep halos t.txt)"
# the CPU backend under MPI agrees within the CUDA-vs-CPU tolerance
$MPIRUN -np 2 ns-step -i per.nps --steps 3 --diag-every 1 --backend cpu -o per-cpu-2.nps
verify per-2.nps per-cpu-2.nps --rtol 1e-12 --atol 1e-13 > v.txt || { cat v.txt; fail "CUDA and CPU under 2 ranks disagree"; }
# mixed walls with a Kolmogorov forcing, uneven splits along every axis, order 2 and 4
gen-input ns --n 13,11,10 --init random --bc x=periodic,y=noslip,z=freeslip --re 60 --c 4 --kolmogorov 0.5,2 --seed 5 -o mix.nps
for order in 4 2; do
  ns-step -i mix.nps --steps 3 --diag-every 1 --order $order --backend cuda -o mix-one.nps
  for d in "2 2,1,1" "2 1,1,2" "3 1,3,1" "3 1,1,3" "4 1,2,2" "4 2,2,1"; do
    set -- $d
    for ov in "" --no-overlap; do
      $MPIRUN -np $1 ns-step -i mix.nps --steps 3 --diag-every 1 --order $order --backend cuda --dims $2 $ov --timing \
        -o dims.nps 2> dims.txt || { cat dims.txt; fail "--dims $2 $ov under $1 ranks failed"; }
      grep -q "decomposition ${2//,/x}" dims.txt || fail "--dims $2 not used: $(cat dims.txt)"
      verify dims.nps mix-one.nps --rtol 0 --atol 0 > v.txt ||
        { cat v.txt; fail "order $order, --dims $2 $ov under $1 ranks differs from one GPU process"; }
    done
  done
done
# fp32, no-slip everywhere, fixed dt
gen-input ns --n 16,12,20 --init random --bc noslip --re 40 --c 3 --seed 4 -o ns.nps
ns-step -i ns.nps --steps 3 --dt 0.005 --precision fp32 --backend cuda -o ns32-one.nps
$MPIRUN -np 4 ns-step -i ns.nps --steps 3 --dt 0.005 --precision fp32 --backend cuda -o ns32-4.nps
verify ns32-4.nps ns32-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "fp32 no-slip under 4 ranks differs"; }
# a failure on the GPU path ends every rank with its code and leaves no output
rc=0
$MPIRUN -np 4 ns-step -i mix.nps --steps 2 --backend cuda --dims 1,1,4 -o bad-out.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "10 points over 4 ranks along z: exit $rc ($(cat err.txt))"
grep -q "too small" err.txt || fail "block size message: $(cat err.txt)"
[ -e bad-out.nps ] && fail "a failed MPI run on the GPU left output"
no_leftovers .
true
