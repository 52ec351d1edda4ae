# ns-step --ref-area under MPI (CPU): body_coefficients (and the state, diagnostics, forces) of 2 and
# 3 ranks are those of one process bit for bit; surface_pressure is left out, with a note.
require_mpi
require_tool ns-step
export OMP_NUM_THREADS=1
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --body cylinder:1.5,2.05,0.3 --free-stream 1,0,0 --fringe 1 -o cyl.nps
ns-step -i cyl.nps --steps 30 --diag-every 1 --ref-area 0.6 --backend cpu -o one.nps
inspect one.nps | grep -q 'surface_pressure  f8' || fail "no surface_pressure in one process"
for n in 2 3; do
  $MPIRUN -np $n ns-step -i cyl.nps --steps 30 --diag-every 1 --ref-area 0.6 --backend cpu -o ranks$n.nps 2> err$n.txt ||
    fail "$n ranks failed: $(cat err$n.txt)"
  grep -q "surface_pressure is written by runs in one process only" err$n.txt || fail "$n ranks: no note: $(cat err$n.txt)"
  verify ranks$n.nps one.nps --rtol 0 --atol 0 --ignore surface_pressure > v$n.txt || { cat v$n.txt; fail "$n ranks differ"; }
  grep -q '^body_coefficients *ok' v$n.txt || fail "$n ranks: body_coefficients not compared: $(cat v$n.txt)"
  ! inspect ranks$n.nps | grep -q surface_pressure || fail "$n ranks wrote surface_pressure"
done
