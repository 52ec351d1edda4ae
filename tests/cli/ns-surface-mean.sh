# ns-step --ref-area's time-averaged surface pressure (surface_pressure_mean) on the CPU:
# 1. it is the mean of the surface pressures of the states at the window's diagnostics
#    rows (each state restarted from its snapshot with --steps 0, its surface_pressure
#    read), over the rows body_coefficients' mean uses (attrs mean and window agree);
# 2. its pressure drag (attrs pressure_coefficients, the force integral's pressure term)
#    agrees with the textbook integral (1/2) int Cp cos(theta) dtheta over the rows'
#    angles within 5 % at D/h 16 (the two quadratures differ by 12.7, 3.4 and 1.3 % at
#    D/h 8, 16 and 32), and is part of the mean drag (between 40 % and 90 % of it);
# 3. the state is that of a run without --ref-area (sampling it changes nothing);
# 4. with --steps and a CFL time step the window is not known before the run: a note.
# tests/cli/ns-surface-mean-gpu.sh runs it with --backend cuda.
require_python
BACKEND=${NS_SURFACE_BACKEND:-cpu}
gen-input ns --n 192,128,1 --box 12,8,1 --re 40 --c 10 --body cylinder:4,4,0.5 --free-stream 1,0,0 --fringe 3 -o cyl.nps
run=(ns-step -i cyl.nps --backend "$BACKEND" --steps 400 --dt 0.003409090909 --diag-every 40 --snapshot-every 40 --snapshot-fields vorticity_z)
"${run[@]}" --ref-area 1 --spectrum-from 0.6 -q -o a.nps
"${run[@]}" -q -o plain.nps
verify a.nps plain.nps --rtol 0 --atol 0 --array rho --array vx --array vy --array body_force --array snap_vorticity_z > v.txt ||
  { cat v.txt; fail "sampling the surface changed the run"; }
! inspect a.nps | grep -q 'snap_rho' || fail "snap_rho written though --snapshot-fields asks vorticity_z only"
# the window's states, from a run that keeps them (same steps: the same states)
"${run[@]/vorticity_z/rho,vx,vy,vz}" -q -o snaps.nps
for s in 200 240 280 320 360 400; do
  ns-step -i snaps.nps --backend "$BACKEND" --from-snapshot $s --steps 0 --ref-area 1 -q -o s$s.nps
done
PYTHONPATH="$SRC/share/python:$SRC/tests/cli" PYTHONDONTWRITEBYTECODE=1 "$PY" - <<'PYEOF'
import math
import numpy as np
from stream_records import by_name
recs = by_name("a.nps")
m, ma = recs["surface_pressure_mean"]
c, ca = recs["body_coefficients"]
w, mean = ma["window"], ca["mean"]
# rows at steps 200..400 (t >= 0.6 with dt 0.0034): six
assert w["rows"] == 6 and mean["rows"] == 6 and w["from"] == 0.6 == mean["from"], (w, mean)
assert w["first"] == mean["first"] and w["last"] == mean["last"], (w, mean)
sel = c[:, 0] >= 0.6
assert abs(mean["Cd"] - c[sel, 1].mean()) <= 1e-14 * abs(mean["Cd"]), (mean["Cd"], c[sel, 1].mean())
states = [by_name("s%d.nps" % s)["surface_pressure"][0] for s in range(200, 401, 40)]
for s in states:
    assert np.array_equal(s[:, :5], m[:, :5]), "the surface points differ"
avg = sum(s[:, 5] for s in states) / len(states)
err = np.max(np.abs(avg - m[:, 5]))
assert err <= 1e-12 * np.max(np.abs(m[:, 5])), err
# the pressure drag: the attrs' sum over the crossings against the integral over the angle
th = np.radians(m[:, 4])
f = m[:, 5] * np.cos(th)
th2, f2 = np.append(th, th[0] + 2 * math.pi), np.append(f, f[0])
cdp = 0.5 * getattr(np, "trapezoid", getattr(np, "trapz", None))(f2, th2)  # NumPy 2 renamed trapz
pc = ma["pressure_coefficients"]["Cd"]
assert abs(cdp - pc) <= 0.05 * abs(pc), (cdp, pc)
assert 0.4 * mean["Cd"] < pc < 0.9 * mean["Cd"], (pc, mean["Cd"])
print("mean Cp of %d rows: max difference from the states' mean %.2e; pressure Cd %.4f (integral over the angle %.4f), mean Cd %.4f"
      % (w["rows"], err, pc, cdp, mean["Cd"]))
PYEOF
ns-step -i cyl.nps --backend "$BACKEND" --steps 20 --diag-every 5 --ref-area 1 -o cfl.nps 2> err.txt
grep -q "no surface_pressure_mean" err.txt || fail "no note without a window: $(cat err.txt)"
! inspect cfl.nps | grep -q surface_pressure_mean || fail "surface_pressure_mean without a window"
