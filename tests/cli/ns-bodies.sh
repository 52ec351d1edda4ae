# ns-step with bodies, a free stream, forces and snapshots (CPU): the records and
# their attrs, a run continued from its output, bad body specs refused (exit 2, the
# spec named), a mask from --solid, and Python reading the snapshot series.
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --body cylinder:1.5,2,0.3 --free-stream 1,0,0 --fringe 1 -o cyl.nps
inspect cyl.nps > in.txt
grep -q 'rho  f8 \[48, 32, 1\]' in.txt || fail "no rho: $(cat in.txt)"
ns-step -i cyl.nps --steps 12 --diag-every 3 --snapshot-every 4 \
  --snapshot-fields rho,vx,vorticity_z,vorticity_magnitude,q_criterion --backend cpu -o out.nps
inspect out.nps > out.txt
[ "$(grep -c 'snap_vx  f8 \[48, 32, 1\]' out.txt)" = 3 ] || fail "three snapshots of vx expected: $(cat out.txt)"
[ "$(grep -c 'snap_vorticity_z ' out.txt)" = 3 ] || fail "three snapshots of vorticity_z expected"
grep -q 'body_force  f8 \[5, 4\]' out.txt || fail "body_force is not 5 rows of t, Fx, Fy, Fz: $(cat out.txt)"
grep -q 'diagnostics  f8 \[5, 8\]' out.txt || fail "diagnostics rows: $(cat out.txt)"
# the same run on one thread: the same bytes (the snapshots included)
ns-step -i cyl.nps --steps 12 --diag-every 3 --snapshot-every 4 \
  --snapshot-fields rho,vx,vorticity_z,vorticity_magnitude,q_criterion --backend cpu --threads 1 -o out1.nps
verify out1.nps out.nps --rtol 0 --atol 0
# continued: 6 + 6 steps give the 12-step state (the body and stream travel in the attrs)
ns-step -i cyl.nps --steps 6 --dt 0.01 --backend cpu | ns-step --steps 6 --dt 0.01 --backend cpu -o two.nps
ns-step -i cyl.nps --steps 12 --dt 0.01 --backend cpu -o one.nps
verify two.nps one.nps --rtol 0 --atol 0 --ignore diagnostics --ignore body_force
# bad specs: exit 2, the spec named
expect_exit 2 "sphere:1,2,3" -- gen-input ns --n 16 --body sphere:1,2,3
expect_exit 2 "cone:1,1,1" -- gen-input ns --n 16 --body cone:1,1,1
expect_exit 2 "cylinder:1,1,-0.5" -- gen-input ns --n 16 --body cylinder:1,1,-0.5
expect_exit 2 "box:1,1,1,0,2,2" -- gen-input ns --n 16 --body box:1,1,1,0,2,2
expect_exit 2 "crosses the periodic faces" -- gen-input ns --n 16 --body sphere:0.1,3,3,0.5
expect_exit 2 "must be periodic" -- gen-input ns --n 16 --bc x=noslip --free-stream 1,0,0
expect_exit 2 "--fringe needs --free-stream" -- gen-input ns --n 16 --fringe 1
expect_exit 2 "unknown field 'vorticity'" -- ns-step -i cyl.nps --snapshot-fields vorticity
expect_exit 2 "--snapshot-every must be >= 0" -- ns-step -i cyl.nps --snapshot-every -1
# the body spec is read back by ns-step: a broken one in the attrs is refused there too
require_python
"$PY" - <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRC"] + "/share/python")
import numpipe, numpy as np
recs = list(numpipe.records("out.nps"))
snaps = [(a["step"], a["time"], a["kind"], a["grid"]) for n, _, a in recs if n == "snap_vx"]
assert [s[0] for s in snaps] == [4, 8, 12], snaps
assert all(k == "ns.snapshot" for _, _, k, _ in snaps)
assert snaps[0][1] > 0 and snaps[0][1] < snaps[1][1] < snaps[2][1]
g = snaps[0][3]
assert g["dims"] == ["x", "y", "z"] and abs(g["spacing"][0] - 0.125) < 1e-15, g
f, fa = next((a, at) for n, a, at in recs if n == "body_force")
assert fa["columns"] == ["t", "Fx", "Fy", "Fz"] and fa["reference_density"] == 1.0, fa
assert f.shape == (5, 4) and f[0, 0] == 0 and f[-1, 0] == snaps[-1][1]
assert f[-1, 1] > 0, "no drag"
assert abs(f[-1, 3]) < 1e-12 * abs(f[-1, 1]), "a z force on a 2-D cylinder"
# the vorticity snapshot is d vy/dx - d vx/dy of the vx, vy snapshot: check its sign pattern
w = next(a for n, a, _ in recs if n == "snap_vorticity_z")[:, :, 0]
assert w[12, 19] < 0 < w[12, 13], (w[12, 19], w[12, 13])   # above the cylinder clockwise, below anticlockwise
wm = next(a for n, a, _ in recs if n == "snap_vorticity_magnitude")[:, :, 0]
assert np.allclose(wm, np.abs(w), rtol=1e-14, atol=1e-14)
# a mask: the same cylinder voxelised, through --solid
h = 6 / 48
x = np.arange(48)[:, None] * h; y = np.arange(32)[None, :] * (4 / 32)
m = ((x - 1.5) ** 2 + (y - 2) ** 2 <= 0.3 ** 2).astype(np.uint8)[:, :, None]
numpipe.write("mask.nps", {"solid": m})
st = dict(numpipe.read("cyl.nps"))
attrs = next(a for n, _, a in numpipe.records("cyl.nps") if n == "rho")
attrs["bodies"] = [{"spec": "cylinder:1.5,2"}]
numpipe.write("badattr.nps", {k: st[k] for k in ("rho", "vx", "vy", "vz")}, attrs=attrs)
print("ns-bodies python: snapshots, forces, vorticity checked")
PYEOF
expect_exit 2 "cylinder:1.5,2" -- ns-step -i badattr.nps
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --solid mask.nps --free-stream 1,0,0 --fringe 1 -o masked.nps
inspect masked.nps | grep -q 'solid  u1 \[48, 32, 1\]' || fail "no solid record in the state"
ns-step -i masked.nps --steps 4 --diag-every 2 --backend cpu -o masked-out.nps
inspect masked-out.nps | grep -q 'body_force  f8 \[3, 4\]' || fail "no forces with a mask"
inspect masked-out.nps | grep -q 'solid  u1' || fail "the mask does not travel to the output"
expect_exit 2 "record solid has shape" -- gen-input ns --n 16 --solid mask.nps
no_leftovers .
