# The scene path on the GPU against the CPU backend, bit for bit (both are
# built without FMA contraction and compute each cell by scene_model.hpp's
# formulas in the same order: the stated tolerance is 0), and the GPU's own
# determinism.
require_gpu
P="--diff 0.0001 --visc 0.0001"
S="--buoyancy 0.1,1 --vorticity 0.2 $P"
gen-input fluid --n 203,97 --length 2 --inflow left:0.5 --bc top=open --obstacle circle:0.6,0.45,0.12 \
  --obstacle box:1.3,0,1.4,0.2 --emit d=4@circle:0.25,0.3,0.05 --emit T=2@circle:0.25,0.3,0.05 \
  --emit v=0.5@box:1.6,0.5,1.7,0.6 -o scene.nps
fluid-step --steps 8 $S --backend cpu -i scene.nps -o cpu.nps
fluid-step --steps 8 $S --backend cuda -i scene.nps -o gpu.nps
verify gpu.nps cpu.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ on a scene"
fluid-step --steps 8 $S --backend cuda -i scene.nps -o gpu2.nps
verify gpu2.nps gpu.nps --rtol 0 --ignore diagnostics || fail "two CUDA runs of a scene differ"
fluid-step --steps 3 $S --backend cuda -i scene.nps | fluid-step --steps 5 $S --backend cuda -o split.nps
verify split.nps gpu.nps --rtol 0 --ignore diagnostics || fail "CUDA 3+5 steps of a scene differ from 8"
# fp64, periodic both ways with an obstacle across the corner
gen-input fluid --n 64,48 --scene random --seed 3 --bc all=periodic --obstacle circle:0,0,0.15 \
  --emit d=1@circle:0.5,0.4,0.1 --precision fp64 -o per.nps
fluid-step --steps 5 --vorticity 0.3 $P --backend cpu -i per.nps -o perc.nps
fluid-step --steps 5 --vorticity 0.3 $P --backend cuda -i per.nps -o perg.nps
verify perg.nps perc.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ: periodic, fp64"
# odd periodic sides (a neighbour of the same colour across the side)
gen-input fluid --n 63,47 --scene random --seed 5 --bc all=periodic --obstacle circle:0,0.4,0.1 -o odd.nps
fluid-step --steps 4 --vorticity 0.3 $P --backend cpu -i odd.nps -o oddc.nps
fluid-step --steps 4 --vorticity 0.3 $P --backend cuda -i odd.nps -o oddg.nps
verify oddg.nps oddc.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ: odd periodic sides"
# the react forcing on the scene path (NX x NY lattice), and the plain state
gen-input fluid --n 200,140 --scene react --bc x=open -o react.nps
fluid-step --steps 6 $P --backend cpu -i react.nps -o rc.nps
fluid-step --steps 6 $P --backend cuda -i react.nps -o rg.nps
verify rg.nps rc.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ: react forcing on a scene"
gen-input fluid --n 130 -o plain.nps
NUMPIPE_FLUID_SCENE=1 fluid-step --steps 4 --scheme stam $P --backend cuda -i plain.nps -o pg.nps
fluid-step --steps 4 --scheme stam $P --backend cpu -i plain.nps -o pc.nps
verify pg.nps pc.nps --rtol 0 --ignore diagnostics || fail "the GPU's scene path differs from the fused stam step"
