# ns-step --ref-area: body_coefficients beside body_force (whose columns do not change),
# against the forces by their definition; the Strouhal number's attrs (here too short a
# run: null with the reason); surface_pressure on the bodies' surfaces; 3-D's side
# coefficient and several bodies; the reference options' bad values (exit 2).
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --body cylinder:1.5,2.05,0.3 --free-stream 1,0,0 --fringe 1 -o cyl.nps
ns-step -i cyl.nps --steps 40 --diag-every 1 --backend cpu -o plain.nps
ns-step -i cyl.nps --steps 40 --diag-every 1 --backend cpu --ref-area 0.6 -o coef.nps
# the state and the forces are those of the run without coefficients
verify coef.nps plain.nps --rtol 0 --atol 0 --array rho --array vx --array body_force
gen-input ns --n 24,20,20 --box 4,2,2 --re 50 --c 5 --body sphere:1,1,1,0.4 --body box:2.4,0.6,0.6,2.8,1.4,1.4 \
  --free-stream 0.5,0,0 --fringe 0.8 -o two.nps
ns-step -i two.nps --steps 6 --diag-every 2 --backend cpu --ref-area 0.5 --ref-velocity 2 --ref-density 1.5 -o two-out.nps

require_python
PYTHONPATH="$SRC/share/python:$SRC/tests/cli" PYTHONDONTWRITEBYTECODE=1 "$PY" - <<'PYEOF'
import math
import numpy as np
from stream_records import by_name
recs = by_name("coef.nps")
f, fa = recs["body_force"]
c, ca = recs["body_coefficients"]
assert fa["columns"] == ["t", "Fx", "Fy", "Fz"], fa["columns"]
assert ca["columns"] == ["t", "Cd", "Cl"] and c.shape == (f.shape[0], 3), (ca["columns"], c.shape)
q = 0.5 * 1.0 * 1.0 ** 2 * 0.6 * 1.0   # rho_ref U^2 / 2 times D Lz
assert np.array_equal(c[:, 0], f[:, 0])
assert np.allclose(c[:, 1], f[:, 1] / q, rtol=1e-14, atol=0) and np.allclose(c[:, 2], f[:, 2] / q, rtol=1e-14, atol=1e-300)
assert ca["reference"]["velocity"] == 1.0 and ca["reference"]["length"] == 0.6, ca["reference"]
assert ca["units"]["Cd"] == "1" and ca["units"]["Cl"] == "1"
st = ca["strouhal"]
assert st["value"] is None and "two periods" in st["why"], st
d, da = recs["diagnostics"]
assert da["strouhal"]["all"] == st, da["strouhal"]
sp, sa = recs["surface_pressure"]
assert sa["columns"] == ["body", "x", "y", "z", "angle", "Cp"] and sp.shape[1] == 6
assert sa["units"]["angle"] == "degree" and sa["units"]["Cp"] == "1"
r = np.hypot(sp[:, 1] - 1.5, sp[:, 2] - 2.05)
assert np.allclose(r, 0.3, rtol=1e-9), r
assert np.all(np.diff(sp[:, 4]) >= 0) and sp[0, 4] > -180 and sp[-1, 4] <= 180
# the final state's own pressure: Cp = c^2 (rho - 1) / (U^2 / 2) near the front, from the fluid node next to it
rho = recs["rho"][0][:, :, 0]
front = sp[np.argmin(np.abs(sp[:, 4]))]
i, j = int(front[1] // 0.125), int(round(front[2] / 0.125))   # the fluid node upstream of it
assert abs(front[5] - 25 * (rho[i, j] - 1) / 0.5) < 0.3 * abs(front[5]) + 0.05, (front, rho[i, j])
assert front[5] > 0.3, front            # the stagnation point: pressure above the free stream's
back = sp[np.argmax(np.abs(sp[:, 4]))]
assert back[5] < front[5], (back, front)
# 3-D, two bodies: Cd, Cl, Cs each; the total's coefficients are the sum of the bodies'
t2 = by_name("two-out.nps")
c3, a3 = t2["body_coefficients"]
assert a3["columns"] == ["t", "Cd", "Cl", "Cs"], a3["columns"]
assert a3["reference"]["area"] == 0.5 and a3["reference"]["density"] == 1.5
assert abs(a3["reference"]["length"] - math.sqrt(4 * 0.5 / math.pi)) < 1e-15
f3 = t2["body_force"][0]
assert np.allclose(c3[:, 1:], f3[:, 1:] / (0.5 * 1.5 * 4 * 0.5), rtol=1e-14, atol=1e-300)
c0, c1 = t2["body_coefficients_0"][0], t2["body_coefficients_1"][0]
assert t2["body_coefficients_1"][1]["spec"] == "box:2.4,0.6,0.6,2.8,1.4,1.4"
assert np.allclose(c0[:, 1:] + c1[:, 1:], c3[:, 1:], rtol=1e-12, atol=1e-14)
s3 = t2["surface_pressure"][0]
assert set(s3[:, 0]) == {0.0, 1.0}
sph = s3[s3[:, 0] == 0]
assert np.allclose(np.sqrt(((sph[:, 1:4] - 1.0) ** 2).sum(axis=1)), 0.4, rtol=1e-6)
assert sph[:, 4].min() >= 0 and sph[:, 4].max() <= 180
print("ns-coefficients: Cd, Cl, Cs against the forces; surface pressure on the surfaces")
PYEOF

expect_exit 2 "--ref-velocity sets a reference of the force coefficients: give --ref-area too" -- \
  ns-step -i cyl.nps --steps 2 --ref-velocity 1 -o x.nps
expect_exit 2 "--ref-area must be positive and finite, got -1" -- ns-step -i cyl.nps --steps 2 --ref-area -1 -o x.nps
expect_exit 2 "--ref-density must be positive and finite, got 0" -- ns-step -i cyl.nps --steps 2 --ref-area 1 --ref-density 0 -o x.nps
expect_exit 2 "ns-step: --spectrum-from: expected a decimal number, got inf" -- ns-step -i cyl.nps --steps 2 --ref-area 1 --spectrum-from inf -o x.nps
gen-input ns --n 12 -o free.nps
expect_exit 2 "the state has no bodies" -- ns-step -i free.nps --steps 2 --ref-area 1 -o x.nps
gen-input ns --n 16,16,1 --box 4,4,1 --body cylinder:2,2,0.5 -o still.nps
expect_exit 2 "no free stream to take the reference velocity from: give --ref-velocity" -- \
  ns-step -i still.nps --steps 2 --ref-area 1 -o x.nps
ns-step -i still.nps --steps 2 --ref-area 1 --ref-velocity 0.5 -o still-out.nps
inspect still-out.nps | grep -q 'body_coefficients  f8 \[2, 3\]' || fail "no coefficients with --ref-velocity"
no_leftovers
