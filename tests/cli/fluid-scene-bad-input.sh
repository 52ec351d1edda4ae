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
# Hostile PNG masks: crafted headers cost neither memory nor time beyond one image row.
"$PY" - <<'PYEOF'
import struct, zlib
def chunk(kind, data, length=None):
    return struct.pack(">I", len(data) if length is None else length) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
sig = b"\x89PNG\r\n\x1a\n"
def ihdr(w, h, depth=1, colour=0):
    return chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0))
# 48 bytes: a tEXt chunk declaring 2^31 - 1 bytes
open("text-bomb.png", "wb").write(sig + ihdr(16, 16, 8) + struct.pack(">I", 2**31 - 1) + b"tEXt" + b"Comment")
def bilevel(name, w, h, black_rows):
    # 1-bit grey: the first black_rows rows black, the rest white (a few hundred KB)
    z = zlib.compressobj(9)
    black, white = b"\0" + b"\0" * (w // 8), b"\0" + b"\xff" * (w // 8)
    data = b"".join(z.compress(black if r < black_rows else white) for r in range(h)) + z.flush()
    open(name, "wb").write(sig + ihdr(w, h) + chunk(b"IDAT", data) + chunk(b"IEND", b""))
bilevel("bomb.png", 65536, 32767, 8192)   # 2.1 G pixels: the top quarter black
bilevel("largest.png", 65536, 65536, 0)  # the largest image accepted, all white
open("too-wide.png", "wb").write(sig + ihdr(65537, 1) + chunk(b"IEND", b""))
PYEOF
# peak (lib.sh): the exit code and peak resident memory in MiB
read -r rc mib < <(NUMPIPE_MEMORY_LIMIT=256M peak gen-input fluid --n 16 --obstacle png:text-bomb.png -o out.nps)
[ "$rc" = 2 ] && [ "$mib" -lt 128 ] || fail "48-byte PNG with a 2 GiB tEXt chunk: exit $rc, peak $mib MiB: $(cat peak.err)"
grep -q "png:text-bomb.png: cannot read the image: the file ends inside a chunk" peak.err || fail "tEXt bomb: $(cat peak.err)"
read -r rc mib < <(NUMPIPE_MEMORY_LIMIT=256M peak gen-input fluid --n 16 --obstacle png:bomb.png -o bomb.nps)
[ "$rc" = 0 ] && [ "$mib" -lt 128 ] || fail "65536 x 32767 PNG: exit $rc, peak $mib MiB (the grid needs 16 x 16): $(cat peak.err)"
PYTHONPATH="$SRC/share/python" "$PY" - <<'PYEOF' || fail "the 65536 x 32767 mask is not its top quarter"
import numpy as np, numpipe
s = numpipe.read("bomb.nps")["solid"]
want = np.zeros((18, 18), np.uint8); want[13:17, 1:17] = 1   # [y, x]: cell rows 13..16 are the image's top quarter
assert (s == want).all(), s
PYEOF
read -r rc mib < <(peak gen-input fluid --n 16 --obstacle png:largest.png -o largest.nps)
[ "$rc" = 0 ] && [ "$mib" -lt 128 ] || fail "65536 x 65536 PNG (the largest stated): exit $rc, peak $mib MiB: $(cat peak.err)"
expect_exit 2 "--obstacle png:too-wide.png: the image is 65537 x 1 pixels (1 to 65536 each way)" -- gen-input fluid --obstacle png:too-wide.png
expect_exit 2 "--emit: FIELD must be d, u, v or T, got 'p' in 'p=1@circle:0.5,0.5,0.1'" -- gen-input fluid --emit p=1@circle:0.5,0.5,0.1
expect_exit 2 "--emit: expected FIELD=VALUE@SHAPE (FIELD d, u, v or T), got 'd=1'" -- gen-input fluid --emit d=1
expect_exit 2 "'source_d' must be >= 0 (a rate per unit time), got -2" -- gen-input fluid --emit d=-2@circle:0.5,0.5,0.1
expect_exit 2 "'source_d' must be 0 inside the obstacle" -- gen-input fluid --obstacle circle:0.5,0.5,0.2 --emit d=1@circle:0.5,0.5,0.1
expect_exit 2 "--set 'T=x@box:0,0,1,1' must be a finite number, got 'x'" -- gen-input fluid --set T=x@box:0,0,1,1
expect_exit 2 "the domain length (--length) must be finite and > 0, got 0" -- gen-input fluid --length 0 --bc x=open
# fluid-step's scene options
expect_exit 2 "--buoyancy must be A,B, got '3'" -- fluid-step --buoyancy 3 -i ok.nps -o out.nps
expect_exit 2 "--buoyancy's B must be a finite number, got 'x'" -- fluid-step --buoyancy 1,x -i ok.nps -o out.nps
expect_exit 2 "--vorticity must be finite and >= 0, got -1" -- fluid-step --vorticity -1 -i ok.nps -o out.nps
[ ! -e out.nps ] || fail "a refused run left out.nps"
no_leftovers .
