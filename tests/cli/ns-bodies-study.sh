# bench/ns-bodies-study's analysis and the drag of a body on the CPU:
# 1. the analysis recovers a known order, limit and Mach part from synthetic runs
#    (f = f0 + K h^p on three grids, f = f_inc + K / c^2 on two sound speeds), says an
#    oscillating series is one (the finest value, half the range), carries a three-grid
#    estimate to a larger box by the boxes' difference on the finest common grid, and
#    counts a repeated case once (its last row);
# 2. a cylinder at Re 40 (D/h 8, 12 x 8 box, t = 15): the drag ns-step sums over the
#    surface agrees with the momentum balance over control volumes around the body
#    (bench/ns-bodies-cv.py, a different method on the same flow) within 3 %.
require_python
study=$SRC/bench/ns-bodies-study.py
head="case,body,re,dh,c,lx,ly,lz,xc,blockage,points,steps,dt,t_end,from,wall_s,cd,cl_amp,st,lr,cd_drift,cd_cv2,cd_cv3"
{
  echo "$head"
  # Cd = 1.5 + 9 h^2.5 and Lr = 2.3 - 2 h on D/h 8, 16, 32; c = 10 and 20 with Cd = 1.49 + 0.8 / c^2
  echo "g8,cylinder,40,8,10,16,12,1,5,0.0833,1,1,1,25,20,1,9.99,0,,9.99,0,,"  # repeated below: this row does not count
  "$PY" -c '
for dh in (16, 32):  # a larger box: Cd lower by 0.05 and 0.052
    h = 1.0 / dh
    print("b%d,cylinder,40,%d,10,24,18,1,5,0.0556,1,1,1,25,20,1,%.15g,0,,,0,," % (dh, dh, 1.5 + 9 * h ** 2.5 - (0.05 if dh == 16 else 0.052)))
for dh in (8, 16, 32):
    h = 1.0 / dh
    print("g%d,cylinder,40,%d,10,16,12,1,5,0.0833,1,1,1,25,20,1,%.15g,0,,%.15g,0,," % (dh, dh, 1.5 + 9 * h ** 2.5, 2.3 - 2 * h))
for c in (10, 20):
    print("m%d,cylinder,40,64,%d,16,10,1,5,0.1,1,1,1,25,20,1,%.15g,0,,,0,," % (c, c, 1.49 + 0.8 / c ** 2))
'
  # not monotone on three grids: no order
  echo "n8,sphere,100,8,10,8,4,4,3,0.049,1,1,1,20,15,1,1.20,0,,,0,,"
  echo "n16,sphere,100,16,10,8,4,4,3,0.049,1,1,1,20,15,1,1.18,0,,,0,,"
  echo "n32,sphere,100,32,10,8,4,4,3,0.049,1,1,1,20,15,1,1.19,0,,,0,,"
} >syn.csv
"$PY" "$study" syn.csv --json syn.json --md syn.md >/dev/null
"$PY" - <<'PYEOF'
import json
r = json.load(open("syn.json"))
g = {(s["body"], s["c"], s["box"]): s for s in r["grid"]}
assert g[("cylinder", 10, "16x12")]["dh"] == [8, 16, 32], g
cd = g[("cylinder", 10, "16x12")]["quantities"]["cd"]
assert abs(cd["order"] - 2.5) < 1e-9 and abs(cd["extrapolated"] - 1.5) < 1e-12, cd
assert abs(cd["gci"] - 1.25 * 9 * (16 ** -2.5 - 32 ** -2.5) / (2 ** 2.5 - 1)) < 1e-12, cd
lr = g[("cylinder", 10, "16x12")]["quantities"]["lr"]
assert abs(lr["order"] - 1) < 1e-9 and abs(lr["extrapolated"] - 2.3) < 1e-12, lr
sph = g[("sphere", 10, "8x4x4")]["quantities"]["cd"]
assert sph.get("note") == "oscillatory" and sph["order"] != sph["order"], sph
assert abs(sph["extrapolated"] - 1.19) < 1e-12 and abs(sph["gci"] - 0.01) < 1e-12 and abs(sph["apparent_order"] - 1) < 1e-9, sph
(car,) = [e for e in r["carried"] if e["quantity"] == "cd"]
assert car["box"] == "24x18" and abs(car["value"] - (1.5 - 0.052)) < 1e-12, car
assert abs(car["uncertainty"] - (cd["gci"] ** 2 + 0.002 ** 2) ** 0.5) < 1e-12, car
m = r["mach"][0]["quantities"]["cd"]
assert abs(m["incompressible"] - 1.49) < 1e-12 and abs(m["mach_part_at_c10"] - 0.008) < 1e-12, m
print("analysis: order 2.5 -> %.6f, limit %.9f; Mach limit %.9f" % (cd["order"], cd["extrapolated"], m["incompressible"]))
PYEOF
grep -q '| cylinder | 40 | 10 | 16x12 | 8/16/32 | cd | ' syn.md || fail "no grid series row in the markdown"

gen-input ns --n 96,64,1 --box 12,8,1 --re 40 --c 10 --body cylinder:4,4,0.5 --free-stream 1,0,0 --fringe 3 -o cyl.nps
ns-step -i cyl.nps --steps 2200 --dt 0.006818181818 --diag-every 25 -q -o out.nps
surface=$("$PY" "$SRC/bench/ns-cylinder.py" out.nps --d 1 --span 1 --center 4,4 | tr ' ' '\n' | sed -n 's/^cd_last=//p')
volume=$("$PY" "$SRC/bench/ns-bodies-cv.py" out.nps --center 4,4 --re 40 --c 10 --half 1.5,2,2.5)
echo "surface Cd $surface; control volumes: $volume"
for v in $volume; do
  awk -v s="$surface" -v c="${v#*=}" 'BEGIN { d = (c - s) / s; exit !(s > 1.4 && s < 2.2 && d < 0.03 && d > -0.03) }' ||
    fail "drag from the surface ($surface) and from the control volume ($v) differ by more than 3 %"
done
