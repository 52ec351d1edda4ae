# fluid-step through the real tools: chaining, thread counts, schemes, snapshots.
P="--diff 0.0001 --visc 0.0001"
gen-input fluid --n 96 -o s0.nps
inspect --json s0.nps > s0.json
grep -q '"kind": "fluid.state"' s0.json || fail "gen-input fluid wrote no fluid.state"

# A run split in two equals one run, bit for bit (the diagnostics count react's
# injections per run, so they differ).
fluid-step --steps 6 $P -i s0.nps | fluid-step --steps 6 $P -o split.nps
fluid-step --steps 12 $P -i s0.nps -o whole.nps
verify split.nps whole.nps --rtol 0 --ignore diagnostics || fail "10+10 steps differ from 20"

# The same bits for 1, 2 and 4 threads.
for t in 1 2 4; do fluid-step --steps 5 $P --threads $t -i s0.nps -o t$t.nps; done
verify t1.nps t2.nps --rtol 0 || fail "1 and 2 threads differ"
verify t1.nps t4.nps --rtol 0 || fail "1 and 4 threads differ"

# The state moved: react injected density and velocity.
fluid-step --steps 1 -i s0.nps -o one.nps
verify one.nps s0.nps --rtol 0 --array d >/dev/null 2>&1 && fail "one step left d unchanged"
inspect --json one.nps > one.json
grep -q '"density_injections": 1' one.json || fail "react did not inject density on step 1"

# --scheme stam (the same velocity step, density advected by the final velocity) differs in d; fp64 runs and agrees with fp32 loosely.
fluid-step --steps 5 $P --scheme stam -i s0.nps -o stam.nps
verify stam.nps t1.nps --rtol 0 --array d >/dev/null 2>&1 && fail "stam and seed schemes give the same density"
fluid-step --steps 5 $P --precision fp64 -i s0.nps -o f64.nps
inspect f64.nps > f64.txt
grep -q 'd  f8' f64.txt || fail "--precision fp64 did not write f8 arrays"
verify t1.nps f64.nps --ignore-dtype --array d --rtol 1e-3 --atol 1e-3 || fail "fp32 and fp64 disagree"

# Other scenes run; snapshots come as snap_d/snap_u/snap_v records.
for scene in vortex plume random; do
  gen-input fluid --n 40 --scene $scene | fluid-step --steps 4 --snapshot-every 2 -o $scene.nps
  [ "$(inspect $scene.nps | grep -c 'snap_d ')" = 2 ] || fail "$scene: expected 2 snapshots"
done

# --help has an example pipeline; output is atomic.
fluid-step --help > help.txt
grep -q 'gen-input fluid' help.txt || fail "--help lacks the example"
no_leftovers .
