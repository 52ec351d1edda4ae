# ns-step with bodies, a free stream and snapshots: CUDA against the CPU through the
# tools (label gpu): 3-D (a sphere and a box) and 2-D (a cylinder, the flat kernel).
require_gpu
gen-input ns --n 41,23,19 --box 4.1,2.3,1.9 --bc x=periodic,y=freeslip --re 80 --c 5 \
  --body sphere:1.2,1.1,0.9,0.37 --body box:2.2,0.3,0.2,2.6,0.9,1.1 --free-stream 1,0.1,0 --fringe 1 -o s.nps
for be in cpu cuda; do
  ns-step -i s.nps --steps 12 --diag-every 4 --snapshot-every 6 --snapshot-fields vx,q_criterion --backend $be -o s-$be.nps
done
verify s-cuda.nps s-cpu.nps --rtol 1e-12 --atol 1e-13
inspect s-cuda.nps | grep -q 'body_force_1  f8 \[4, 4\]' || fail "no per-body forces"
gen-input ns --n 96,64,1 --box 6,4,1 --re 100 --c 10 --body cylinder:1.5,2,0.3 --free-stream 1,0,0 -o c.nps
for be in cpu cuda; do
  ns-step -i c.nps --steps 20 --diag-every 5 --snapshot-every 10 --snapshot-fields vorticity_z --backend $be -o c-$be.nps
done
verify c-cuda.nps c-cpu.nps --rtol 1e-12 --atol 1e-13
ns-step -i c.nps --steps 20 --diag-every 5 --snapshot-every 10 --snapshot-fields vorticity_z --backend cuda -o c-again.nps
verify c-again.nps c-cuda.nps --rtol 0 --atol 0
