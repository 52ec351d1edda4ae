# Scenes on the GPU's temporally blocked tiles (a square box with closed sides:
# the obstacle's cell codes and the emitters inside the solves' passes) against
# the CPU backend bit for bit (verify --rtol 0), and against the GPU's scene path
# of one kernel per operation (NUMPIPE_FLUID_SCENE_TILES=0) byte for byte (cmp:
# the signs of zeros too; both runs write to stdout, so that their attrs, which
# hold the command line, are the same).
require_gpu
P="--diff 0.0001 --visc 0.0001"
kernels() {  # the kernels that ran (the diagnostics' attrs carry them with --repeat)
  inspect --json "$1" | grep -o '"kernels": "[^"]*"'
}

# N=500: the default tile (r7x8) writes 100 x 100 cells per tile, tile borders at
# cells 100, 200, 300, 400 (extended tiles 128 x 128 around them). Obstacles across
# the tile borders and a tile corner, on the left, top and right walls and in the
# top right corner (solid cells beside the boundary layer); emitters across tile
# borders, beside a wall and beside an obstacle, negative velocity rates too; the
# react forcing (its lattice also inside the obstacles).
gen-input fluid --n 500 --scene react --obstacle box:0.189,0.3,0.209,0.46 --obstacle circle:0.4,0.4,0.03 \
  --obstacle box:0,0.52,0.05,0.6 --obstacle box:0.6,0.95,0.7,1 --obstacle circle:1,1,0.06 \
  --obstacle box:0.97,0.1,1,0.13 --emit d=3@circle:0.6,0.6,0.04 --emit u=-2@box:0,0.7,0.03,0.8 \
  --emit v=1.5@box:0.39,0.44,0.41,0.5 --emit d=1@box:0.21,0.3,0.25,0.34 -o s500.nps
fluid-step --steps 5 $P --backend cpu -i s500.nps -o s500c.nps
fluid-step --steps 5 $P --backend cuda --repeat 1 -i s500.nps -o s500g.nps
kernels s500g.nps | grep -q '"kernels": "scene path, tile r7x8 (fp32)' ||
  fail "the scene did not run on the tiles: $(kernels s500g.nps)"
verify s500g.nps s500c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ on a scene (N=500)"
NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 5 $P --backend cuda --repeat 1 -i s500.nps -o s500k.nps
kernels s500k.nps | grep -q '"kernels": "scene path, one kernel per operation' ||
  fail "NUMPIPE_FLUID_SCENE_TILES=0 did not run one kernel per operation: $(kernels s500k.nps)"
fluid-step --steps 5 $P --backend cuda -i s500.nps > s500t.nps
NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 5 $P --backend cuda -i s500.nps > s500o.nps
cmp -s s500t.nps s500o.nps || fail "tiles and one kernel per operation write different bytes (N=500)"
# run to run, and 2 + 3 steps
fluid-step --steps 5 $P --backend cuda -i s500.nps > s500t2.nps
cmp -s s500t.nps s500t2.nps || fail "two runs of a scene on the tiles differ"
fluid-step --steps 2 $P --backend cuda -i s500.nps | fluid-step --steps 3 $P --backend cuda -o s500s.nps
verify s500s.nps s500t.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: 2+3 steps of a scene differ from 5"

# Every tile (NUMPIPE_FLUID_TILE: registers and shared-memory planes), 20 and 7
# iterations (several passes and one), --forcing none with the emitters only.
for tile in r7x8 r10x8 r5x8 r7x16 r7x4 s5x10 s10x16; do
  NUMPIPE_FLUID_TILE=$tile fluid-step --steps 5 $P --backend cuda -i s500.nps -o s500g.nps
  verify s500g.nps s500c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tile $tile: CPU and CUDA differ on a scene"
done
fluid-step --steps 4 $P --iters 7 --forcing none --backend cpu -i s500.nps -o n7c.nps
fluid-step --steps 4 $P --iters 7 --forcing none --backend cuda -i s500.nps -o n7g.nps
verify n7g.nps n7c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ (7 iterations, no react)"

# fp64 (the shared-memory planes' tile), and a domain length other than 1 (1/h for N)
gen-input fluid --n 300 --length 2 --scene react --obstacle circle:0.8,0.8,0.2 --obstacle box:0,0,0.3,0.1 \
  --emit d=2@circle:1.4,1.4,0.1 --emit u=1@box:1.2,0.3,1.4,0.5 --emit v=-1@box:1.2,0.3,1.4,0.5 --precision fp64 -o s64.nps
fluid-step --steps 4 $P --backend cpu -i s64.nps -o s64c.nps
fluid-step --steps 4 $P --backend cuda --repeat 1 -i s64.nps -o s64g.nps
kernels s64g.nps | grep -q '"kernels": "scene path, tile s5x6 (fp64)' || fail "fp64: not on the tiles: $(kernels s64g.nps)"
verify s64g.nps s64c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ on a scene (fp64)"
NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 4 $P --backend cuda -i s64.nps > s64o.nps
fluid-step --steps 4 $P --backend cuda -i s64.nps > s64t.nps
cmp -s s64t.nps s64o.nps || fail "fp64: tiles and one kernel per operation write different bytes"

# Odd N (an odd row width: the inner tiles' unpaired loads), an emitter in the one
# inner tile (whose extended tile holds no obstacle cell), the obstacle in a corner.
gen-input fluid --n 301 --scene random --seed 7 --obstacle circle:0,0,0.1 --emit d=2@circle:0.5,0.5,0.05 \
  --emit v=1@box:0.45,0.4,0.55,0.45 -o s301.nps
fluid-step --steps 4 $P --backend cpu -i s301.nps -o s301c.nps
fluid-step --steps 4 $P --backend cuda -i s301.nps -o s301g.nps
verify s301g.nps s301c.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ on a scene (N=301)"

# Buoyant smoke with vorticity confinement in a closed box (the forces and the
# velocity's sources before the solves, a temperature field and its emitter, the
# ambient temperature), fp32 and fp64; buoyancy without a temperature field, and
# confinement alone.
gen-input fluid --n 256 --obstacle circle:0.5,0.6,0.1 --obstacle box:0,0,0.2,0.04 --emit d=4@circle:0.5,0.2,0.05 \
  --emit T=2@circle:0.5,0.2,0.05 --set T=0.5@box:0.1,0.3,0.3,0.5 -o smoke.nps
gen-input fluid --n 256 --obstacle circle:0.5,0.6,0.1 --emit d=4@circle:0.5,0.2,0.05 --emit T=2@circle:0.5,0.2,0.05 \
  --precision fp64 -o smoke64.nps
for f in smoke smoke64; do
  for S in "--buoyancy 0.1,1 --vorticity 0.2 --ambient 0.1" "--buoyancy 0.5,0" "--vorticity 0.3"; do
    fluid-step --steps 5 $S $P --backend cpu -i $f.nps -o fc.nps
    fluid-step --steps 5 $S $P --backend cuda --repeat 1 -i $f.nps -o fg.nps
    kernels fg.nps | grep -q '"kernels": "scene path, tile' || fail "$f $S: not on the tiles: $(kernels fg.nps)"
    verify fg.nps fc.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ: $f $S"
    fluid-step --steps 5 $S $P --backend cuda -i $f.nps > ft.nps
    NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 5 $S $P --backend cuda -i $f.nps > fo.nps
    cmp -s ft.nps fo.nps || fail "$f $S: tiles and one kernel per operation write different bytes"
  done
done
inspect smoke.nps | grep -q "^record [0-9]*: T " || fail "the smoke scene has no temperature field"

# Snapshots on the way (the state fetched between steps), and small boxes whose
# tiles are all edge tiles (N=24, and an odd N=25 with the obstacle on a wall).
fluid-step --steps 4 --vorticity 0.2 --buoyancy 0.1,1 --snapshot-every 2 $P --backend cpu -i smoke.nps -o snc.nps
fluid-step --steps 4 --vorticity 0.2 --buoyancy 0.1,1 --snapshot-every 2 $P --backend cuda -i smoke.nps -o sng.nps
verify sng.nps snc.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ with snapshots"
for n in 24 25; do
  gen-input fluid --n $n --scene random --seed $n --obstacle circle:0.5,0.5,0.2 --obstacle box:0.9,0,1,0.3 \
    --emit d=1@circle:0.2,0.8,0.1 --emit u=2@box:0.1,0.1,0.3,0.2 -o small$n.nps
  fluid-step --steps 5 $P --backend cpu -i small$n.nps -o smc.nps
  fluid-step --steps 5 $P --backend cuda -i small$n.nps > smt.nps
  NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 5 $P --backend cuda -i small$n.nps > smo.nps
  verify smt.nps smc.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: CPU and CUDA differ (N=$n)"
  cmp -s smt.nps smo.nps || fail "tiles and one kernel per operation write different bytes (N=$n)"
done

# A plain state on the scene path computes the fused stam solver's bits on the
# tiles too; scenes that do not fit them (NX != NY, an open side) keep one kernel
# per operation.
gen-input fluid --n 130 -o plain.nps
fluid-step --steps 4 --scheme stam $P --backend cuda -i plain.nps -o pf.nps
NUMPIPE_FLUID_SCENE=1 fluid-step --steps 4 --scheme stam $P --backend cuda -i plain.nps -o pt.nps
verify pt.nps pf.nps --rtol 0 --ignore diagnostics > /dev/null || fail "tiles: a plain state differs from the fused stam step"
gen-input fluid --n 130,128 --obstacle circle:0.5,0.5,0.1 -o wide.nps
fluid-step --steps 1 $P --backend cuda --repeat 1 -i wide.nps -o wide-out.nps
kernels wide-out.nps | grep -q '"kernels": "scene path, one kernel per operation' ||
  fail "a 130 x 128 scene did not keep one kernel per operation: $(kernels wide-out.nps)"
gen-input fluid --n 128 --bc top=open --obstacle circle:0.5,0.5,0.1 -o open.nps
fluid-step --steps 1 $P --backend cuda --repeat 1 -i open.nps -o open-out.nps
kernels open-out.nps | grep -q '"kernels": "scene path, one kernel per operation' ||
  fail "a scene with an open side did not keep one kernel per operation: $(kernels open-out.nps)"
