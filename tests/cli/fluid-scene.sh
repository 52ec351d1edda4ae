# fluid-step on scenes (obstacles, emitters, sides, NX x NY, forces) through the
# real tools: the plain scene path against the fused stam solver, thread counts,
# chaining, snapshots, masks from Python and from a PNG, the d0 explanation.
require_python
P="--diff 0.0001 --visc 0.0001"

# The scene path on a plain state (NUMPIPE_FLUID_SCENE=1) computes the fused
# stam solver's bits: every feature off (vorticity confinement included) is
# today's step.
gen-input fluid --n 72 -o plain.nps
fluid-step --scheme stam --steps 5 $P -i plain.nps -o fused.nps
NUMPIPE_FLUID_SCENE=1 fluid-step --scheme stam --vorticity 0 --steps 5 $P --profile general.prof -i plain.nps -o general.nps
verify fused.nps general.nps --rtol 0 --ignore diagnostics > /dev/null || fail "the scene path differs from the fused stam step"
# the kernels that ran are in the profile (the output's attrs carry them only with --repeat)
inspect --json general.prof > general.json
grep -q '"kernels": "scene path' general.json || fail "NUMPIPE_FLUID_SCENE=1 did not run the scene path"

# A scene with every feature: a wind tunnel 96 x 48 (length 2) with a cylinder,
# smoke and heat emitters, buoyancy, confinement, open top.
gen-input fluid --n 96,48 --length 2 --inflow left:0.5 --bc top=open --obstacle circle:0.6,0.5,0.12 \
  --emit d=4@circle:0.25,0.3,0.05 --emit T=2@circle:0.25,0.3,0.05 --set T=0.5@box:1.2,0.1,1.6,0.4 -o scene.nps
inspect scene.nps > scene.txt
grep -q 'd  f4 \[50, 98\]' scene.txt || fail "gen-input --n 96,48 did not write [50, 98] arrays"
for r in solid source_d source_T T; do grep -q "^record [0-9]*: $r " scene.txt || fail "gen-input wrote no record $r"; done
inspect --json scene.nps > scene.json
grep -q '"left": "inflow"' scene.json || fail "the box's sides are not in the attrs"
S="--buoyancy 0.1,1 --vorticity 0.2 $P"
# the default scheme for a scene is stam; --scheme fused (or its former name seed) is refused
expect_exit 2 "--scheme fused runs a plain square box only, and this run has a 96 x 48 grid" -- fluid-step --scheme seed -i scene.nps -o x.nps
for t in 1 3; do fluid-step --steps 6 $S --threads $t -i scene.nps -o t$t.nps; done
verify t1.nps t3.nps --rtol 0 > /dev/null || fail "the scene's bits depend on the thread count"
fluid-step --steps 3 $S -i scene.nps | fluid-step --steps 3 $S -o split.nps
verify split.nps t1.nps --rtol 0 --ignore diagnostics > /dev/null || fail "3+3 steps of a scene differ from 6"
# the obstacle's cells hold no flow and no smoke; the emitter added smoke
PYTHONPATH="$SRC/share/python" "$PY" - t1.nps <<'PYEOF' || fail "scene state check failed"
import sys, numpy as np, numpipe
d = numpipe.read(sys.argv[1])
s = d["solid"].astype(bool)
assert s.sum() > 20, s.sum()
for f in ("d", "u", "v", "T"):
    assert np.all(d[f][s] == 0), f
assert d["d"].sum() > 0.5, d["d"].sum()
assert d["u"][1:-1, 1:11].mean() > 0.3, d["u"][1:-1, 1:11].mean()   # the inflow came in
assert d["v"].max() > 0.1, d["v"].max()                               # the heat rose
PYEOF

# Snapshots of every field, with step, time and the grid.
fluid-step --steps 4 --snapshot-every 2 $S -i scene.nps -o snaps.nps
inspect snaps.nps > snaps.txt
for f in d u v T; do [ "$(grep -c "snap_$f " snaps.txt)" = 2 ] || fail "expected 2 snapshots of $f"; done
inspect --json snaps.nps > snaps.json
grep -q '"step": 4' snaps.json || fail "snapshots lack their step"
grep -q '"time": 0.4' snaps.json || fail "snapshots lack their time"
grep -q '"spacing": \[' snaps.json || fail "snapshots lack the grid"

# A mask from Python, put beside a state (streams concatenate), and from a PNG.
gen-input fluid --n 48,32 --scene empty --inflow left:1 -o base.nps
PYTHONPATH="$SRC/share/python" "$PY" - <<'PYEOF' || fail "python mask"
import numpy as np, numpipe, zlib, struct
solid = np.zeros((34, 50), np.uint8)
solid[12:20, 15:22] = 1
numpipe.write("mask.nps", {"solid": solid})
# a PNG (8-bit grey) of 48 x 32 pixels, dark where solid; image row 0 is the top
img = np.full((32, 48), 255, np.uint8)
img[32 - 20:32 - 12, 14:21] = 0
raw = b"".join(b"\x00" + row.tobytes() for row in img)
def chunk(t, data):
    return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 48, 32, 8, 0, 0, 0, 0)) + \
      chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open("mask.png", "wb").write(png)
PYEOF
cat base.nps mask.nps | fluid-step --steps 2 -o py.nps
inspect py.nps > py.txt
grep -q '^record [0-9]*: solid ' py.txt || fail "the Python mask did not travel"
if inspect --version > /dev/null && gen-input fluid --n 48,32 --inflow left:1 --obstacle png:mask.png -o png.nps 2> png.err; then
  PYTHONPATH="$SRC/share/python" "$PY" - <<'PYEOF' || fail "the PNG mask is not the drawn box"
import numpy as np, numpipe
s = numpipe.read("png.nps")["solid"]
want = np.zeros((34, 50), np.uint8); want[13:21, 15:22] = 1
assert (s == want).all(), np.argwhere(s != want)[:5]
PYEOF
else
  grep -q "reads no PNG images" png.err || fail "gen-input --obstacle png failed: $(cat png.err)"
fi

# A density put in d0 with --forcing none is discarded (d0 is a work buffer):
# refused with the way to an emitter, which is injected.
PYTHONPATH="$SRC/share/python" "$PY" - <<'PYEOF' || fail "python d0 state"
import numpy as np, numpipe
z = np.zeros((34, 34), np.float32)
d0 = z.copy(); d0[10:14, 10:14] = 2.0
numpipe.write("d0.nps", {"d": z, "u": z, "v": z, "d0": d0, "u0": z, "v0": z}, attrs={"kind": "fluid.state", "forcing": {"type": "none"}})
numpipe.write("emit.nps", {"d": z, "u": z, "v": z, "d0": z, "u0": z, "v0": z, "source_d": d0}, attrs={"kind": "fluid.state", "forcing": {"type": "none"}})
PYEOF
expect_exit 2 "'d0' holds 2 at [10, 10] in a state at step 0, but d0, u0 and v0 are the solver's work buffers" -- fluid-step --steps 3 -i d0.nps -o x.nps
fluid-step --steps 3 -i emit.nps -o emitted.nps
PYTHONPATH="$SRC/share/python" "$PY" - <<'PYEOF' || fail "the emitter did not inject 3 * dt * 32"
import numpy as np, numpipe
d = numpipe.read("emitted.nps")["d"]
assert abs(d[1:-1, 1:-1].sum() - 3 * 0.1 * 32) < 1e-4, d.sum()
PYEOF
[ ! -e x.nps ] || fail "a refused run left x.nps"
no_leftovers .
