# ns-step with bodies under MPI on the GPU (labels mpi, gpu): 2 and 3 ranks sharing the
# device give the one-process CUDA stream byte for byte (fields, snapshots with a
# derived field, forces), with the halos through CUDA IPC and staged through the host.
require_mpi
require_gpu
require_tool ns-step
gen-input ns --n 30,22,16 --box 3,2.2,1.6 --bc x=periodic,y=freeslip --re 80 --c 5 \
  --body sphere:1,1.1,0.8,0.3 --body box:1.8,0.3,0.2,2.1,0.8,0.9 --free-stream 1,0.1,0 --fringe 0.6 -o s.nps
mkdir -p one
(cd one && ns-step -i ../s.nps --steps 4 --diag-every 2 --snapshot-every 2 --snapshot-fields vx,q_criterion \
  --backend cuda -o out.nps)
for n in 2 3; do
  for ipc in 1 0; do
    rm -rf r && mkdir r
    (cd r && NUMPIPE_MPI_IPC=$ipc $MPIRUN -np $n ns-step -i ../s.nps --steps 4 --diag-every 2 --snapshot-every 2 \
      --snapshot-fields vx,q_criterion --backend cuda -o out.nps) || fail "$n ranks (IPC $ipc) failed"
    cmp r/out.nps one/out.nps || fail "$n ranks (IPC $ipc): the stream differs from one GPU process"
  done
done
# against the CPU under MPI
$MPIRUN -np 2 ns-step -i s.nps --steps 4 --diag-every 2 --snapshot-every 2 --snapshot-fields vx,q_criterion \
  --backend cpu -o cpu.nps
verify one/out.nps cpu.nps --rtol 1e-12 --atol 1e-13
no_leftovers .
