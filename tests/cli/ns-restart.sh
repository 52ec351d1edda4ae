# ns-step restarted from any snapshot, or continued from its final state, reproduces
# the run that went on, bit for bit: the state, the snapshots after the restart, and
# the diagnostics, forces and coefficients at every row both runs have (a restart
# takes its first row at its start). A cylinder in a free stream, the dt from --cfl,
# ending at --t-end with snapshots and diagnostics by steps and by time.
# ns-restart-gpu.sh runs this with NS_RESTART_BACKEND=cuda.
be=${NS_RESTART_BACKEND:-cpu}
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --body cylinder:1.5,2.05,0.3 --free-stream 1,0,0 --fringe 1 -o cyl.nps
run=(--backend "$be" --cfl 0.5 --diag-every 3 --snapshot-every 5 --ref-area 0.6)

# --t-end with bodies and snapshots: the run ends at 0.6 exactly, snapshots and rows on the way
ns-step -i cyl.nps --t-end 0.6 "${run[@]}" -o full.nps
inspect --json full.nps > full.json
grep -qE '"t": 0.6([,}]|$)' full.json || fail "--t-end 0.6 with a body did not end at t = 0.6"
for snap in 5 10 15; do
  ns-step -i full.nps --from-snapshot $snap --t-end 0.6 "${run[@]}" -o "re$snap.nps"
done
# the final state continued (--steps from --steps) is the longer run
ns-step -i cyl.nps --steps 9 "${run[@]}" -o first.nps
ns-step -i first.nps --steps 8 "${run[@]}" -o cont.nps
ns-step -i cyl.nps --steps 17 "${run[@]}" -o long.nps
# and snapshots and diagnostics by time: restarted from a snapshot by time
ns-step -i cyl.nps --t-end 0.5 --backend "$be" --cfl 0.5 --diag-dt 0.05 --snapshot-dt 0.1 --ref-area 0.6 -o bytime.nps
step_at=$(inspect --json bytime.nps | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
print([r["attrs"]["step"] for r in d if r["name"] == "snap_rho"][1])')
ns-step -i bytime.nps --from-snapshot "$step_at" --t-end 0.5 --backend "$be" --cfl 0.5 --diag-dt 0.05 --snapshot-dt 0.1 \
  --ref-area 0.6 -o bytime-re.nps

require_python
"$PY" - "$be" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRC"] + "/share/python")
import numpipe, numpy as np

def load(path):
    recs = list(numpipe.records(path))
    final = {n: a for n, a, _ in recs if not n.startswith("snap_")}
    snaps = {}
    for n, a, at in recs:
        if n.startswith("snap_"):
            snaps[(n, at["step"])] = (a, at["time"])
    attrs = {n: at for n, _, at in recs}
    return final, snaps, attrs

def same(a, b, what):
    assert a.shape == b.shape and a.dtype == b.dtype, (what, a.shape, b.shape)
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), (what, "differs", np.max(np.abs(a - b)))

def compare(restart, whole, start_step):
    fr, sr, ar = load(restart)
    fw, sw, aw = load(whole)
    for v in ("rho", "vx", "vy", "vz"):
        same(fr[v], fw[v], restart + ": " + v)
    assert ar["rho"]["t"] == aw["rho"]["t"] and ar["rho"]["step"] == aw["rho"]["step"], (ar["rho"]["t"], aw["rho"]["t"])
    later = [k for k in sw if k[1] > start_step]
    assert later and sorted(later) == sorted(k for k in sr), (restart, sorted(sr), sorted(later))
    for k in later:
        same(sr[k][0], sw[k][0], restart + ": " + str(k))
        assert sr[k][1] == sw[k][1], k
    # rows at the same step (diagnostics) or time (forces, coefficients): the same bits
    d_r, d_w = fr["diagnostics"], fw["diagnostics"]
    assert d_r[0, 0] == start_step
    common = [s for s in d_r[:, 0] if s in set(d_w[:, 0])]
    assert len(common) >= 2, (restart, d_r[:, 0], d_w[:, 0])
    for s in common:
        same(d_r[d_r[:, 0] == s], d_w[d_w[:, 0] == s], restart + ": diagnostics at step %d" % s)
    for name in ("body_force", "body_coefficients"):
        r, w = fr[name], fw[name]
        ts = [t for t in r[:, 0] if t in set(w[:, 0])]
        assert len(ts) == len(common), (name, ts)
        for t in ts:
            same(r[r[:, 0] == t], w[w[:, 0] == t], "%s: %s at t=%r" % (restart, name, t))
    same(fr["surface_pressure"], fw["surface_pressure"], restart + ": surface_pressure")

for snap in (5, 10, 15):
    compare("re%d.nps" % snap, "full.nps", snap)
compare("cont.nps", "long.nps", 9)
_, s, _ = load("bytime.nps")
compare("bytime-re.nps", "bytime.nps", sorted(k[1] for k in s if k[0] == "snap_rho")[1])
print("ns-restart (%s): snapshots at 5, 10, 15, the final state, snapshots by time: the same bits" % sys.argv[1])
PYEOF

# fp32: the snapshots hold the run's float values, so a restart is exact too
ns-step -i cyl.nps --steps 12 --precision fp32 "${run[@]}" -o f32.nps
ns-step -i f32.nps --from-snapshot 5 --steps 7 --precision fp32 "${run[@]}" -o f32-re.nps
verify f32-re.nps f32.nps --rtol 0 --atol 0 --array rho --array vx --array vy --array vz ||
  fail "fp32: the restart from step 5 differs"

# a restart from a step without a snapshot, or from a snapshot without the state's fields: exit 2
expect_exit 2 "holds no snapshot of step 7" -- ns-step -i full.nps --from-snapshot 7 --backend "$be" -o x.nps
ns-step -i cyl.nps --steps 4 --snapshot-every 2 --snapshot-fields rho,vorticity_z --backend "$be" -o vort.nps
expect_exit 2 "lacks snap_vx" -- ns-step -i vort.nps --from-snapshot 2 --backend "$be" -o x.nps
expect_exit 2 "--from-snapshot must be >= 0" -- ns-step -i full.nps --from-snapshot -1 -o x.nps
no_leftovers
