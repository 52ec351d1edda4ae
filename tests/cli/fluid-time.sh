# fluid-step by physical time: --t-end ends the run at that time exactly (the last
# step shortened), --snapshot-dt writes snapshots by time; where the times coincide
# with whole steps the bits are those of the run by step count.
P="--diff 0.0001 --visc 0.0001"
gen-input fluid --n 32 -o s0.nps

# --t-end 1.0 with --dt 0.1 is --steps 10, bit for bit (the state and the diagnostics).
fluid-step --steps 10 $P -i s0.nps -o steps.nps
fluid-step --t-end 1.0 $P -i s0.nps -o time.nps
verify steps.nps time.nps --rtol 0 || fail "--t-end 1.0 differs from --steps 10"

# --t-end 1.05: ten steps of 0.1 and one of 0.05; the state's time is 1.05 exactly.
fluid-step --t-end 1.05 $P -i s0.nps -o short.nps
inspect --json short.nps > short.json
grep -qE '"time": 1.05([,}]|$)' short.json || fail "--t-end 1.05 did not end at time 1.05"
grep -qE '"step": 11([,}]|$)' short.json || fail "--t-end 1.05 did not take 11 steps"
# ... which is --steps 10 then one step of --dt 0.05
fluid-step --steps 1 --dt 0.05 $P -i steps.nps -o chained.nps
verify chained.nps short.nps --rtol 0 --ignore diagnostics || fail "--t-end 1.05 is not 10 steps then one of 0.05"
# the scene path likewise (a 32 x 24 grid)
gen-input fluid --n 32,24 --scene plume -o p0.nps
fluid-step --t-end 0.35 --dt 0.1 -i p0.nps -o p1.nps
fluid-step --steps 3 --dt 0.1 -i p0.nps | fluid-step --steps 1 --dt 0.05 -o p2.nps
verify p1.nps p2.nps --rtol 0 --ignore diagnostics || fail "scene: --t-end 0.35 is not 3 steps then one of 0.05"

# --t-end is where the run ends, from the input's time: a state at time 1.0 run to 1.5 takes 5 steps.
fluid-step --t-end 1.5 $P -i steps.nps -o on.nps
inspect --json on.nps > on.json
grep -qE '"step": 15([,}]|$)' on.json || fail "--t-end 1.5 from time 1.0 did not take 5 steps"

# --snapshot-dt 0.3 with --dt 0.1: snapshots at steps 3, 6, 9, the same as --snapshot-every 3.
fluid-step --steps 10 --snapshot-every 3 $P -i s0.nps -o se.nps
fluid-step --t-end 1.0 --snapshot-dt 0.3 $P -i s0.nps -o sd.nps
verify se.nps sd.nps --rtol 0 || fail "--snapshot-dt 0.3 differs from --snapshot-every 3"
inspect --json sd.nps > sd.json
[ "$(grep -c '"name": "snap_d"' sd.json)" = 3 ] || fail "--snapshot-dt 0.3 over 1.0 did not write 3 snapshots"
# a snapshot interval that is not a multiple of dt: after the step that passes it (0.25 -> step 3, 0.5 -> 5, 0.75 -> 8, 1.0 -> 10)
fluid-step --t-end 1.0 --snapshot-dt 0.25 $P -i s0.nps -o q.nps
inspect --json q.nps > q.json
for s in 3 5 8 10; do grep -qE "\"step\": $s([,}]|$)" q.json || fail "--snapshot-dt 0.25: no snapshot at step $s"; done

# Bad values.
expect_exit 2 "give --steps or --t-end, not both" -- fluid-step --steps 3 --t-end 1 -i s0.nps -o x.nps
expect_exit 2 "--t-end 0.5 is before the input state's time 1" -- fluid-step --t-end 0.5 -i steps.nps -o x.nps
expect_exit 2 "--snapshot-dt must be finite and >= 0, got -1" -- fluid-step --snapshot-dt -1 -i s0.nps -o x.nps
expect_exit 2 "--t-end must be a number, got '1s'" -- fluid-step --t-end 1s -i s0.nps -o x.nps
no_leftovers
