# ns-step by physical time: --t-end ends the run at that time exactly (the last step
# shortened), --snapshot-dt and --diag-dt write by time; where the times coincide
# with whole steps the bits are those of the run by step count.
gen-input ns --n 12 --init taylor-green-3d --re 100 -o s0.nps

# A fixed --dt: --t-end 0.05 with --dt 0.01 is --steps 5, bit for bit.
ns-step --steps 5 --dt 0.01 -i s0.nps -o steps.nps
ns-step --t-end 0.05 --dt 0.01 -i s0.nps -o time.nps
verify steps.nps time.nps --rtol 0 || fail "--t-end 0.05 differs from --steps 5 with --dt 0.01"

# A CFL dt: the run ends at --t-end exactly, its last step shortened; the first steps
# are those of the run by count.
ns-step --t-end 0.1 --cfl 0.5 -i s0.nps -o cfl.nps
inspect --json cfl.nps > cfl.json
grep -qE '"t": 0.1([,}]|$)' cfl.json || fail "--t-end 0.1 did not end at t = 0.1"
steps=$(grep -o '"step": [0-9]*' cfl.json | head -1 | grep -o '[0-9]*$')
[ "$steps" -ge 2 ] || fail "--t-end 0.1 took $steps steps"
ns-step --steps $((steps - 1)) --cfl 0.5 -i s0.nps -o before.nps
t_before=$(inspect --json before.nps | grep -o '"t": [0-9.e-]*' | head -1 | grep -o '[0-9.e-]*$')
ns-step --steps 1 --dt "$(awk -v t="$t_before" 'BEGIN { printf "%.17g", 0.1 - t }')" -i before.nps -o last.nps
verify last.nps cfl.nps --rtol 1e-12 --atol 1e-15 --array rho --array vx --array vy --array vz ||
  fail "--t-end 0.1 is not the steps by CFL then one step to 0.1"

# Diagnostics and snapshots by time: with --dt 0.01, --diag-dt 0.02 is --diag-every 2 and
# --snapshot-dt 0.03 is --snapshot-every 3.
ns-step --steps 6 --dt 0.01 --diag-every 2 --snapshot-every 3 -i s0.nps -o e.nps
ns-step --t-end 0.06 --dt 0.01 --diag-dt 0.02 --snapshot-dt 0.03 -i s0.nps -o d.nps
# (the fields the same bits; the last row's t is 0.06 exactly, where six sums of 0.01 give 0.060000000000000005)
verify e.nps d.nps --rtol 0 --ignore diagnostics || fail "--diag-dt/--snapshot-dt differ from --diag-every/--snapshot-every"
verify e.nps d.nps --array diagnostics --rtol 1e-15 || fail "--diag-dt's rows differ from --diag-every's"
inspect d.nps --array diagnostics | grep -q '\[4, 8\]' || fail "--diag-dt 0.02 over 0.06: not 4 diagnostics rows"

expect_exit 2 "give --steps or --t-end, not both" -- ns-step --steps 3 --t-end 1 -i s0.nps -o x.nps
expect_exit 2 "--diag-dt must be finite and >= 0, got -0.5" -- ns-step --diag-dt -0.5 -i s0.nps -o x.nps
expect_exit 2 "--t-end must be a number, got '0.1x'" -- ns-step --t-end 0.1x -i s0.nps -o x.nps
no_leftovers
