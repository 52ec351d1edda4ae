# ns-step with bodies under MPI (CPU): 1 to 4 ranks give the one-process output
# stream byte for byte - the fields, the snapshots (written by every rank together),
# the forces on the bodies - for a 3-D sphere and box in a free stream and a 2-D
# cylinder, over decompositions along every axis.
require_mpi
require_tool ns-step
export OMP_NUM_THREADS=1
gen-input ns --n 30,20,14 --box 3,2,1.4 --bc x=periodic,y=freeslip --re 80 --c 5 \
  --body sphere:1,1,0.7,0.3 --body box:1.8,0.3,0.2,2.1,0.8,0.9 --free-stream 1,0.1,0 --fringe 0.6 -o s.nps
mkdir -p one
(cd one && ns-step -i ../s.nps --steps 4 --diag-every 2 --snapshot-every 2 --snapshot-fields vx,vorticity_magnitude \
  --backend cpu -o out.nps)
# the same command line (it travels in the attrs): the same bytes
for n in 1 2 3 4; do
  rm -rf r && mkdir r
  (cd r && $MPIRUN -np $n ns-step -i ../s.nps --steps 4 --diag-every 2 --snapshot-every 2 \
    --snapshot-fields vx,vorticity_magnitude --backend cpu -o out.nps) || fail "$n ranks failed"
  cmp r/out.nps one/out.nps || fail "$n ranks: the stream differs from one process"
done
# decompositions along every axis: the same values
for d in "2 2,1,1" "3 1,3,1" "4 1,2,2" "4 2,1,2" "3 1,1,3"; do
  set -- $d
  $MPIRUN -np $1 ns-step -i s.nps --steps 4 --diag-every 2 --snapshot-every 2 --snapshot-fields vx,vorticity_magnitude \
    --backend cpu --dims $2 -o dims.nps || fail "--dims $2 under $1 ranks failed"
  verify dims.nps one/out.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--dims $2 under $1 ranks differs"; }
done
gen-input ns --n 64,40,1 --box 6.4,4,1 --re 100 --c 8 --body cylinder:1.6,2,0.4 --free-stream 1,0,0 -o c.nps
(cd one && ns-step -i ../c.nps --steps 6 --diag-every 2 --snapshot-every 3 --snapshot-fields vorticity_z \
  --backend cpu -o c.nps)
for n in 2 3 4; do
  rm -rf r && mkdir r
  (cd r && $MPIRUN -np $n ns-step -i ../c.nps --steps 6 --diag-every 2 --snapshot-every 3 --snapshot-fields vorticity_z \
    --backend cpu -o c.nps) || fail "the cylinder under $n ranks failed"
  cmp r/c.nps one/c.nps || fail "the cylinder under $n ranks: the stream differs from one process"
done
no_leftovers .
