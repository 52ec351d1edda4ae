# Scenes on the CPU's temporally blocked passes (a square box with closed sides:
# the fused solver's passes with the obstacle's runs and codes, the emitters and
# forces added as they read x0) against the scene path's own solver of one pass per
# half-sweep (NUMPIPE_FLUID_SCENE_TILES=0) byte for byte (cmp: the signs of zeros
# too; both runs write to stdout, so that their attrs, which hold the command
# line, are the same), for several thread counts and block cuts.
P="--diff 0.0001 --visc 0.0001"
kernels() {  # the kernels that ran (the diagnostics' attrs carry them with --repeat)
  inspect --json "$1" | grep -o '"kernels": "[^"]*"'
}

# N=250 in blocks of 64 columns (NUMPIPE_FLUID_CPU_WINDOW=16384), and with 4 blocks
# per thread also 3 strips of rows: obstacles across the blocks' borders, on the
# left, top and right walls and in the top right corner, over react's centre and
# lattice; emitters across block borders and beside an obstacle, negative rates too.
gen-input fluid --n 250 --scene react --obstacle box:0.2,0.3,0.3,0.46 --obstacle circle:0.5,0.5,0.05 \
  --obstacle box:0,0.52,0.05,0.6 --obstacle box:0.6,0.95,0.7,1 --obstacle circle:1,1,0.06 \
  --obstacle box:0.97,0.1,1,0.13 --obstacle box:0.24,0.62,0.28,0.7 --emit d=3@circle:0.6,0.6,0.04 \
  --emit u=-2@box:0,0.7,0.03,0.8 --emit v=1.5@box:0.3,0.44,0.33,0.5 --emit d=1@box:0.21,0.24,0.4,0.28 -o s.nps
NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 5 $P -i s.nps > rows.nps
fluid-step --steps 5 $P --repeat 1 -i s.nps -o b.nps
kernels b.nps | grep -q '"kernels": "scene path, blocked passes (fp32)' ||
  fail "the scene did not run on the blocked passes: $(kernels b.nps)"
NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 5 $P --repeat 1 -i s.nps -o r.nps
kernels r.nps | grep -q '"kernels": "scene path, rows' ||
  fail "NUMPIPE_FLUID_SCENE_TILES=0 did not run the scene path's rows: $(kernels r.nps)"
for t in 1 2 3; do
  for knobs in "" "NUMPIPE_FLUID_CPU_WINDOW=16384" "NUMPIPE_FLUID_CPU_WINDOW=16384 NUMPIPE_FLUID_CPU_BLOCKS=4"; do
    env $knobs OMP_NUM_THREADS=$t fluid-step --steps 5 $P -i s.nps > blocked.nps
    cmp -s blocked.nps rows.nps || fail "blocked passes ($t threads, $knobs) and the rows write different bytes"
  done
done
NUMPIPE_FLUID_CPU_WINDOW=16384 NUMPIPE_FLUID_CPU_BLOCKS=4 OMP_NUM_THREADS=3 fluid-step --steps 5 $P --repeat 1 -i s.nps -o b3.nps
kernels b3.nps | grep -q '3x4 blocks' || fail "expected 3 x 4 blocks: $(kernels b3.nps)"
# 2 + 3 steps, snapshots, 7 iterations (one pass) and 45 (several), no react
fluid-step --steps 2 $P -i s.nps | fluid-step --steps 3 $P -o split.nps
verify split.nps b.nps --rtol 0 --ignore diagnostics > /dev/null || fail "blocked: 2+3 steps of a scene differ from 5"
fluid-step --steps 4 --snapshot-every 2 $P -i s.nps > snapb.nps
NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 4 --snapshot-every 2 $P -i s.nps > snapr.nps
cmp -s snapb.nps snapr.nps || fail "blocked passes and the rows write different snapshots"
for it in "--iters 7" "--iters 45 --forcing none"; do
  NUMPIPE_FLUID_CPU_WINDOW=16384 fluid-step --steps 3 $P $it -i s.nps > itb.nps
  NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 3 $P $it -i s.nps > itr.nps
  cmp -s itb.nps itr.nps || fail "blocked passes and the rows differ ($it)"
done

# A temperature, buoyancy and confinement, fp32 and fp64, an odd N, a length other
# than 1 (1/h for N); obstacles along the bottom wall and in a corner.
gen-input fluid --n 151 --length 2 --scene react --obstacle circle:0.8,0.8,0.2 --obstacle box:0,0,0.3,0.1 \
  --obstacle box:0.5,0,1.6,0.05 --emit d=2@circle:1.4,1.4,0.1 --emit T=3@circle:1.3,0.4,0.1 \
  --emit u=1@box:1.2,0.3,1.4,0.5 --emit v=-1@box:1.2,0.3,1.4,0.5 --set T=1@box:0.4,0.2,0.8,0.5 -o t.nps
for prec in fp32 fp64; do
  S="--buoyancy 0.1,1 --vorticity 0.3 --precision $prec $P"
  NUMPIPE_FLUID_SCENE_TILES=0 fluid-step --steps 4 $S -i t.nps > tr.nps
  for t in 1 3; do
    NUMPIPE_FLUID_CPU_WINDOW=16384 OMP_NUM_THREADS=$t fluid-step --steps 4 $S -i t.nps > tb.nps
    cmp -s tb.nps tr.nps || fail "$prec, forces and a temperature, $t threads: blocked passes and the rows differ"
  done
done
# the comparison can fail: the same run with another confinement differs
fluid-step --steps 4 --buoyancy 0.1,1 --vorticity 0.31 --precision fp64 $P -i t.nps > other.nps
! cmp -s other.nps tr.nps || fail "a different confinement gave the same bytes"
no_leftovers .
