# Bad scenes are refused with exit 2, the record, the cell and the value named, and no output.
require_python
gen-input fluid --n 24 --scene empty -o ok.nps
arr() { gen-input array "$@"; }
with() { cat ok.nps "$@" > bad.nps; }

with <(arr --name solid --shape 26,25 --dtype u1 --fill zeros)
expect_exit 2 "shape of 'solid' is [26, 25], expected [26, 26] like 'd'" -- fluid-step -i bad.nps -o out.nps
with <(arr --name solid --shape 26,26 --dtype f4 --fill zeros)
expect_exit 2 "record 'solid' must be u1 (0 fluid, 1 solid), got f4" -- fluid-step -i bad.nps -o out.nps
with <(arr --name solid --shape 26,26 --dtype u1 --fill ones)
expect_exit 2 "'solid' must be 0 on the boundary layer (the sides are chosen by --bc), got 1 at [0, 0]" -- fluid-step -i bad.nps -o out.nps
gen-input fluid --n 24 --obstacle box:0,0,1,1 -o covered.nps 2> cov.err && fail "gen-input accepted an obstacle covering the box"
grep -q "'solid' covers every interior cell (24 x 24): no fluid is left" cov.err || fail "covering obstacle: $(cat cov.err)"
PYTHONPATH="$SRC/share/python" "$PY" - <<'PYEOF'
import numpy as np, numpipe
s = np.zeros((26, 26), np.uint8); s[3, 4] = 7
numpipe.write("seven.nps", {"solid": s})
src = np.zeros((26, 26), np.float32); src[5, 6] = -1.5
numpipe.write("neg.nps", {"source_d": src})
numpipe.write("negT.nps", {"source_T": src})
edge = np.zeros((26, 26), np.float32); edge[0, 3] = 2
numpipe.write("edge.nps", {"source_u": edge})
inside = np.zeros((26, 26), np.float32); inside[12, 12] = 1
numpipe.write("inside.nps", {"source_v": inside})
solid = np.zeros((26, 26), np.uint8); solid[10:15, 10:15] = 1
numpipe.write("solid.nps", {"solid": solid})
PYEOF
with seven.nps
expect_exit 2 "'solid' must hold 0 (fluid) or 1 (solid), got 7 at [3, 4]" -- fluid-step -i bad.nps -o out.nps
with neg.nps
expect_exit 2 "'source_d' must be >= 0 (a rate per unit time), got -1.5 at [5, 6]" -- fluid-step -i bad.nps -o out.nps
with negT.nps
expect_exit 2 "'source_T' must be >= 0 (a rate per unit time), got -1.5 at [5, 6]" -- fluid-step -i bad.nps -o out.nps
with edge.nps
expect_exit 2 "'source_u' must be 0 on the boundary layer, got 2 at [0, 3]" -- fluid-step -i bad.nps -o out.nps
with solid.nps inside.nps
expect_exit 2 "'source_v' must be 0 inside the obstacle, got 1 at [12, 12]" -- fluid-step -i bad.nps -o out.nps
with <(np-testcraft fill source_d f4 26,26 inf)   # non-finite (gen-input refuses to write it)
expect_exit 2 "non-finite value in 'source_d' at [0, 0]: inf" -- fluid-step -i bad.nps -o out.nps

# gen-input's scene options
expect_exit 2 "--n must be N or NX,NY, got '1,2,3'" -- gen-input fluid --n 1,2,3
expect_exit 2 "--n must be in [16, 32766], got 8" -- gen-input fluid --n 64,8
expect_exit 2 "--bc: the kind must be closed, open or periodic (inflow: --inflow SIDE:SPEED), got 'wall' in 'left=wall'" -- gen-input fluid --bc left=wall
expect_exit 2 "--bc: the side must be left, right, bottom, top, x, y or all, got 'north' in 'north=open'" -- gen-input fluid --bc north=open
expect_exit 2 "periodic sides come in pairs: left is periodic, right is closed" -- gen-input fluid --bc left=periodic
expect_exit 2 "--inflow: SPEED must be finite and > 0, got -1 in 'left:-1'" -- gen-input fluid --inflow left:-1
expect_exit 2 "--inflow: expected SIDE:SPEED with SIDE left, right, bottom or top, got 'up:1'" -- gen-input fluid --inflow up:1
expect_exit 2 "--obstacle: a shape is circle:X,Y,R or box:X0,Y0,X1,Y1 or png:FILE, got 'circle:1,2'" -- gen-input fluid --obstacle circle:1,2
expect_exit 2 "--obstacle 'circle:0.5,0.5,-1': the radius must be > 0" -- gen-input fluid --obstacle circle:0.5,0.5,-1
expect_exit 2 "--obstacle 'circle:5,5,0.1' covers no cell's centre" -- gen-input fluid --obstacle circle:5,5,0.1
expect_exit 2 "--obstacle png:nothere.png: cannot read the image" -- gen-input fluid --obstacle png:nothere.png
expect_exit 2 "--emit: FIELD must be d, u, v or T, got 'p' in 'p=1@circle:0.5,0.5,0.1'" -- gen-input fluid --emit p=1@circle:0.5,0.5,0.1
expect_exit 2 "--emit: expected FIELD=VALUE@SHAPE (FIELD d, u, v or T), got 'd=1'" -- gen-input fluid --emit d=1
expect_exit 2 "'source_d' must be >= 0 (a rate per unit time), got -2" -- gen-input fluid --emit d=-2@circle:0.5,0.5,0.1
expect_exit 2 "'source_d' must be 0 inside the obstacle" -- gen-input fluid --obstacle circle:0.5,0.5,0.2 --emit d=1@circle:0.5,0.5,0.1
expect_exit 2 "--set 'T=x@box:0,0,1,1': expected a finite number, got 'x'" -- gen-input fluid --set T=x@box:0,0,1,1
expect_exit 2 "the domain length (--length) must be finite and > 0, got 0" -- gen-input fluid --length 0 --bc x=open
# fluid-step's scene options
expect_exit 2 "--buoyancy must be A,B, got '3'" -- fluid-step --buoyancy 3 -i ok.nps -o out.nps
expect_exit 2 "--buoyancy's B must be a finite number, got 'x'" -- fluid-step --buoyancy 1,x -i ok.nps -o out.nps
expect_exit 2 "--vorticity must be finite and >= 0, got -1" -- fluid-step --vorticity -1 -i ok.nps -o out.nps
[ ! -e out.nps ] || fail "a refused run left out.nps"
no_leftovers .
