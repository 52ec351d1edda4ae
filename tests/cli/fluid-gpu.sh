# fluid-step on the GPU against the CPU backend (the reference), and the GPU's
# own determinism. Both backends are built without FMA contraction and compute
# every cell with the same operations in the same order, so they are expected
# to agree bit for bit; the stated tolerance is that: --rtol 0.
require_gpu
P="--diff 0.0001 --visc 0.0001"
gen-input fluid --n 256 -o s.nps
fluid-step --steps 20 $P --backend cpu -i s.nps -o cpu.nps
fluid-step --steps 20 $P --backend cuda -i s.nps -o gpu.nps
verify gpu.nps cpu.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ after 20 steps at N=256"

# Run to run on the GPU, and a run split in two on the GPU.
fluid-step --steps 20 $P --backend cuda -i s.nps -o gpu2.nps
verify gpu2.nps gpu.nps --rtol 0 --ignore diagnostics || fail "two CUDA runs differ"
fluid-step --steps 8 $P --backend cuda -i s.nps | fluid-step --steps 12 $P --backend cuda -o split.nps
verify split.nps gpu.nps --rtol 0 --ignore diagnostics || fail "CUDA 8+12 steps differ from 20"

# Odd N (tiles that do not divide the grid), random fields, both schemes, fp64.
gen-input fluid --n 203 --scene random --seed 4 -o r.nps
for scheme in seed stam; do
  fluid-step --steps 6 $P --scheme $scheme --backend cpu -i r.nps -o rc.nps
  fluid-step --steps 6 $P --scheme $scheme --backend cuda -i r.nps -o rg.nps
  verify rg.nps rc.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ: $scheme scheme, N=203"
done
fluid-step --steps 6 $P --iters 7 --precision fp64 --backend cpu -i r.nps -o r64c.nps
fluid-step --steps 6 $P --iters 7 --precision fp64 --backend cuda -i r.nps -o r64g.nps
verify r64g.nps r64c.nps --rtol 0 --ignore diagnostics || fail "CPU and CUDA differ in fp64 with 7 iterations"

# Every tile of the temporally blocked passes (NUMPIPE_FLUID_TILE; the default is
# one of them) against the CPU, bit for bit: the react scene (injection on the
# first step: generated initial guesses, add_source inside the passes, react's
# maxima from the passes) at even N, random fields at odd N (unaligned rows).
# Both sizes have inner and edge tiles for every tile.
gen-input fluid --n 300 -o t300.nps
gen-input fluid --n 301 --scene random --seed 9 -o t301.nps
fluid-step --steps 5 $P --backend cpu -i t300.nps -o t300c.nps
fluid-step --steps 3 $P --backend cpu -i t301.nps -o t301c.nps
for tile in r7x8 r10x8 r7x8a r5x8 r7x16 r10x16 r7x4 s5x10 s10x16; do
  NUMPIPE_FLUID_TILE=$tile fluid-step --steps 5 $P --backend cuda -i t300.nps -o t300g.nps
  verify t300g.nps t300c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tile $tile: CPU and CUDA differ (react, N=300)"
  NUMPIPE_FLUID_TILE=$tile fluid-step --steps 3 $P --backend cuda -i t301.nps -o t301g.nps
  verify t301g.nps t301c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tile $tile: CPU and CUDA differ (random, N=301)"
done
expect_exit 2 "unknown tile" -- env NUMPIPE_FLUID_TILE=nope fluid-step --steps 1 --backend cuda -i t300.nps -o x.nps

# react's decision on the device matches the CPU's counts.
inspect --json gpu.nps > g.json
inspect --json cpu.nps > c.json
[ "$(grep -o '"density_injections": [0-9]*' g.json)" = "$(grep -o '"density_injections": [0-9]*' c.json)" ] ||
  fail "react's density injections differ between CPU and CUDA"
[ "$(grep -o '"velocity_injections": [0-9]*' g.json)" = "$(grep -o '"velocity_injections": [0-9]*' c.json)" ] ||
  fail "react's velocity injections differ between CPU and CUDA"
