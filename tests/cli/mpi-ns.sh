# ns-step under MPI (CPU backend): a 3-D Cartesian decomposition with two ghost
# layers exchanged every RK sub-step gives the one-process fields and diagnostics
# bit for bit, for 1..4 ranks, uneven splits, periodic, no-slip and mixed
# boundaries, both orders, fp32, CFL steps, and decompositions along every axis.
require_mpi
require_tool ns-step
export OMP_NUM_THREADS=1
# periodic, order 4, dt from --cfl (a max over ranks), diagnostics every step
gen-input ns --n 12,10,8 --init random --bc periodic --re 50 --c 4 --seed 3 -o per.nps
ns-step -i per.nps --steps 3 --diag-every 1 --backend cpu -o per-one.nps
same_under_mpi per-one.nps ns-step -i per.nps --steps 3 --diag-every 1 --backend cpu
# no-slip on every axis, order 2, fixed dt
gen-input ns --n 16,12,10 --init random --bc noslip --re 40 --c 3 --seed 4 -o ns.nps
ns-step -i ns.nps --steps 3 --dt 0.005 --order 2 --diag-every 2 --backend cpu -o ns-one.nps
same_under_mpi ns-one.nps ns-step -i ns.nps --steps 3 --dt 0.005 --order 2 --diag-every 2 --backend cpu
# mixed walls with a Kolmogorov forcing (its table follows the block's y offset)
gen-input ns --n 13,11,10 --init random --bc x=periodic,y=noslip,z=freeslip --re 60 --c 4 --kolmogorov 0.5,2 --seed 5 -o mix.nps
ns-step -i mix.nps --steps 3 --diag-every 1 --backend cpu -o mix-one.nps
same_under_mpi mix-one.nps ns-step -i mix.nps --steps 3 --diag-every 1 --backend cpu
# decompositions along y and z, uneven splits (13/3, 11/3, 10/3), every axis split at once
for d in "2 1,1,2" "3 1,3,1" "3 1,1,3" "3 3,1,1" "4 1,2,2" "4 2,1,2" "4 2,2,1"; do
  set -- $d
  $MPIRUN -np $1 ns-step -i mix.nps --steps 3 --diag-every 1 --backend cpu --dims $2 --timing -o dims.nps 2> dims.txt ||
    { cat dims.txt; fail "--dims $2 under $1 ranks failed"; }
  grep -q "decomposition ${2//,/x}" dims.txt || fail "--dims $2 not used: $(cat dims.txt)"
  verify dims.nps mix-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--dims $2 differs from one process"; }
done
# the halos exchanged before the whole block is updated (no overlap): the same bits
$MPIRUN -np 3 ns-step -i mix.nps --steps 3 --diag-every 1 --backend cpu --no-overlap -o mix-seq.nps
verify mix-seq.nps mix-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--no-overlap under 3 ranks differs"; }
# order 2 and fp32 on the mixed case, 3 and 4 ranks
ns-step -i mix.nps --steps 2 --order 2 --precision fp32 --backend cpu -o mix32-one.nps
for n in 3 4; do
  $MPIRUN -np $n ns-step -i mix.nps --steps 2 --order 2 --precision fp32 --backend cpu -o mix32-$n.nps
  verify mix32-$n.nps mix32-one.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "fp32 order 2 under $n ranks differs"; }
done
# Failures end every rank with exit 2 and leave no output: bad input, a grid too
# small for the decomposition, --dims that do not match the rank count.
rc=0
gen-input ns --n 12,10,8 --init random --seed 3 | head -c 3000 > bad.nps || true
$MPIRUN -np 2 ns-step -i bad.nps --steps 2 --backend cpu -o bad-out.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "bad input under 2 ranks: exit $rc ($(cat err.txt))"
[ -e bad-out.nps ] && fail "bad input under MPI left output"
rc=0
$MPIRUN -np 2 ns-step -i per.nps --steps 2 --backend cpu --dims 1,1,3 -o bad-out.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "--dims 1,1,3 under 2 ranks: exit $rc"
grep -q "needs 3 ranks" err.txt || fail "--dims message: $(cat err.txt)"
rc=0
$MPIRUN -np 4 ns-step -i per.nps --steps 2 --backend cpu --dims 1,1,4 -o bad-out.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "8 points over 4 ranks: exit $rc"
grep -q "too small" err.txt || fail "block size message: $(cat err.txt)"
[ -e bad-out.nps ] && fail "a failed MPI run left output"
no_leftovers .
true
