# The staged host-device copies (common/staging.hpp) and the layout conversions on
# the GPU, through the tools (label gpu): a state that goes up and comes back down
# with no steps must be the CPU backend's to the bit (the same wall nodes held at
# zero), in fp64 and fp32, with walls and periodic axes, at sizes of many staging
# pieces and of one; a few steps agree with the CPU as ns-cuda-gpu.sh states.
require_gpu
require_tool ns-step
# ns-step: 128 x 96 x 100 points (9.8 MB per field: two pieces of 8 MiB), walls on two axes.
gen-input ns --n 128,96,100 --init random --bc x=noslip,y=freeslip,z=periodic --re 100 --c 5 --seed 5 -o ns.nps
for prec in fp64 fp32; do
  ns-step -i ns.nps --steps 0 --precision $prec --backend cpu -o c0.nps
  ns-step -i ns.nps --steps 0 --precision $prec --backend cuda -o g0.nps
  verify g0.nps c0.nps --rtol 0 --atol 0 --ignore diagnostics || fail "ns-step $prec: up and down with no steps differs from the CPU"
done
ns-step -i ns.nps --steps 2 --backend cpu -o c2.nps
ns-step -i ns.nps --steps 2 --backend cuda -o g2.nps
verify g2.nps c2.nps --rtol 1e-12 --atol 1e-13 || fail "ns-step: 2 steps differ from the CPU"
NUMPIPE_IO_THREADS=1 ns-step -i ns.nps --steps 2 --backend cuda -o g2b.nps
verify g2b.nps g2.nps --rtol 0 --atol 0 || fail "ns-step: one I/O thread changes the result"
# a body in a free stream: the staged upload holds its solid nodes at rest (velocity
# zero, density kept) as the CPU's load does, also where the input says otherwise (vx = 1
# everywhere, written by the Python writer); 1.2 M points: two staging pieces
if [ -n "${PY:-}" ] && "$PY" -c 'import numpy' 2>/dev/null; then
  gen-input ns --n 128,96,100 --box 12.8,9.6,10 --re 100 --c 5 --body sphere:6.4,4.8,5,2 --free-stream 1,0,0 -o nb.nps
  PYTHONPATH="$SRC/share/python" PYTHONDONTWRITEBYTECODE=1 "$PY" - nb.nps nb1.nps <<'PY'
import sys, numpy, numpipe
recs = [(n, numpy.ones_like(a) if n == "vx" else a, at) for n, a, at in numpipe.records(sys.argv[1])]
numpipe.write(sys.argv[2], [(n, a) for n, a, _ in recs], attrs_by_name={n: at for n, _, at in recs}, stamp=False)
PY
  ns-step -i nb1.nps --steps 0 --backend cpu -o nbc.nps
  verify nbc.nps nb1.nps --rtol 0 --atol 0 --ignore diagnostics --ignore body_force > /dev/null &&
    fail "ns-step: the CPU kept the velocity inside the body (the case tests nothing)"
  ns-step -i nb1.nps --steps 0 --backend cuda -o nbg.nps
  verify nbg.nps nbc.nps --rtol 0 --atol 0 --ignore diagnostics --ignore body_force ||
    fail "ns-step: a body's solid nodes up and down differ from the CPU"
fi
# a grid smaller than one piece, odd sizes
gen-input ns --n 13,7,11 --init random --bc x=periodic,y=noslip,z=noflux --re 50 --c 4 --seed 2 -o small.nps
ns-step -i small.nps --steps 0 --backend cpu -o sc.nps
ns-step -i small.nps --steps 0 --backend cuda -o sg.nps
verify sg.nps sc.nps --rtol 0 --atol 0 --ignore diagnostics || fail "ns-step: a small state up and down differs from the CPU"

command -v fluid-step > /dev/null || return 0  # a build of some workloads only
# fluid-step: N = 2100 in f4 (17.7 MB per field: staged pieces), and in f8.
gen-input fluid --n 2100 --scene random --seed 3 -o f.nps
fluid-step -i f.nps --steps 0 --backend cpu -o fc0.nps
fluid-step -i f.nps --steps 0 --backend cuda -o fg0.nps
verify fg0.nps fc0.nps --rtol 0 --atol 0 --ignore diagnostics || fail "fluid-step: up and down differs from the CPU"
verify fg0.nps f.nps --rtol 0 --atol 0 --ignore diagnostics || fail "fluid-step --steps 0 changed the state"
fluid-step -i f.nps --steps 2 --backend cpu -o fc2.nps
fluid-step -i f.nps --steps 2 --backend cuda -o fg2.nps
verify fg2.nps fc2.nps --rtol 0 --ignore diagnostics || fail "fluid-step: 2 steps at N=2100 differ from the CPU"
fluid-step -i f.nps --steps 1 --precision fp64 --backend cpu -o fc64.nps
fluid-step -i f.nps --steps 1 --precision fp64 --backend cuda -o fg64.nps
verify fg64.nps fc64.nps --rtol 0 --ignore diagnostics || fail "fluid-step fp64: 1 step at N=2100 differs from the CPU"
# snapshots come down through the same copies
fluid-step -i f.nps --steps 2 --snapshot-every 1 --backend cuda -o fs.nps
fluid-step -i f.nps --steps 2 --snapshot-every 1 --backend cpu -o fsc.nps
verify fs.nps fsc.nps --rtol 0 --ignore diagnostics || fail "fluid-step: snapshots differ from the CPU"
