# ns-step --ref-area under MPI (CPU): body_coefficients (with their means), surface_pressure
# (the final state's surface, gathered from the ranks' blocks) and surface_pressure_mean of
# 2 and 3 ranks are those of one process bit for bit, as are the state, diagnostics, forces.
require_mpi
require_tool ns-step
export OMP_NUM_THREADS=1
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --body cylinder:1.5,2.05,0.3 --free-stream 1,0,0 --fringe 1 -o cyl.nps
run=(ns-step -i cyl.nps --steps 30 --dt 0.008 --diag-every 1 --ref-area 0.6 --backend cpu)
"${run[@]}" -o one.nps
inspect one.nps | grep -q 'surface_pressure  f8' || fail "no surface_pressure in one process"
inspect one.nps | grep -q 'surface_pressure_mean  f8' || fail "no surface_pressure_mean in one process"
for n in 2 3; do
  $MPIRUN -np $n "${run[@]}" -o ranks$n.nps 2> err$n.txt || fail "$n ranks failed: $(cat err$n.txt)"
  verify ranks$n.nps one.nps --rtol 0 --atol 0 > v$n.txt || { cat v$n.txt; fail "$n ranks differ"; }
  for rec in body_coefficients surface_pressure surface_pressure_mean; do
    grep -q "^$rec *ok" v$n.txt || fail "$n ranks: $rec not compared: $(cat v$n.txt)"
  done
done
