# render's animations and pictures, read back by independent PNG and GIF readers
# (tests/cli/imagecheck.py): one GIF frame per snapshot with one colour range over
# the series; the colour bar (a gradient, labels beside it); small grids drawn at
# least 512 pixels; axes; MP4 through ffmpeg (frame count by ffprobe) and the
# exit-2 message without it; derived fields checked on flows with known vorticity.
command -v render > /dev/null || { echo "SKIP: render not built (no libpng)"; exit 77; }
require_python
require_tool fluid-step
export PYTHONPATH="$SRC/tests/cli:$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

gen-input fluid --n 30 | fluid-step --steps 12 --snapshot-every 3 -o run.nps   # 4 snapshots
gif_ok=1
render -i run.nps --interior --fps 4 -o run.gif 2> gif.err || gif_ok=0
if [ $gif_ok = 0 ]; then
  grep -q "built without GIF support" gif.err && grep -q "libgif-dev" gif.err || fail "render -o run.gif: $(cat gif.err)"
  echo "note: this build has no giflib; GIF checks skipped"
else
  # The same animation with the whole series' range given explicitly: the same bytes.
  range=$("$PY" -c '
import numpipe, numpy as np
d = [a[1:-1, 1:-1] for n, a, _ in numpipe.records("run.nps") if n == "snap_d"]
print("%r:%r" % (float(min(x.min() for x in d)), float(max(x.max() for x in d))))')
  render -i run.nps --interior --fps 4 --value-range "$range" -o fixed.gif
  cmp -s run.gif fixed.gif || fail "the default colour range is not min:max over the whole series"
  render -i run.nps --interior --fps 4 --array snap_d -o named.gif
  cmp -s run.gif named.gif || fail "--array d and --array snap_d animate different records"
fi

render -i run.nps --interior -o d.png                          # default: colour bar, title, upscaled
render -i run.nps --interior --no-colorbar -o bare.png         # the field's pixels only
render -i run.nps --interior --axes -o axes.png
render -i run.nps --interior --frames -o f-%d.png
"$PY" - "$gif_ok" <<'PY' || fail "pictures differ from what render promises"
import sys, numpipe, numpy as np
from imagecheck import read_png, gif_info
if sys.argv[1] == "1":
    w, h, frames, delays, loops = gif_info("run.gif")
    assert frames == 4 and loops and delays == [25] * 4, (frames, delays, loops)
    pw, ph, _, _ = read_png("f-0.png")
    assert (w, h) == (pw, ph), "a GIF frame is the same picture as a PNG frame"
# Bare: 30 interior cells drawn 18x = 540 pixels (at least 512), nothing else.
w, h, rows, idx = read_png("bare.png")
assert (w, h) == (540, 540), (w, h)
assert all(v >= 16 for line in idx for v in line), "bare image holds colours outside the map"
# Default: the same field plus a colour bar to its right: a vertical gradient of
# the map's levels from the top (high) to the bottom (low), labels beside it.
W, H, rows, idx = read_png("d.png")
assert W > w + 60 and H > h, (W, H)
bar_x = [x for x in range(w, W) if len({idx[y][x] for y in range(H // 4, 3 * H // 4)} - {0}) > 50]
assert bar_x, "no colour bar column"
col = [idx[y][bar_x[len(bar_x) // 2]] for y in range(H) if idx[y][bar_x[len(bar_x) // 2]] >= 16]
assert col[0] == 255 and col[-1] == 16 and col == sorted(col, reverse=True), (col[:3], col[-3:])
text = sum(1 for y in range(H) for x in range(max(bar_x) + 2, W) if idx[y][x] in (1, 2))
assert text > 200, "no tick labels or name beside the colour bar: %d dark pixels" % text
title = sum(1 for y in range(0, 40) for x in range(W) if idx[y][x] == 1)  # above the field
assert title > 50, "no title"
# Axes: tick labels below and to the left of the field.
aw, ah, _, aidx = read_png("axes.png")
assert aw > W and ah > H
assert sum(1 for y in range(ah - 70, ah) for x in range(aw) if aidx[y][x] in (1, 2)) > 100, "no x tick labels"
# Frames: four PNGs of one size, four different pictures.
frames = [read_png("f-%d.png" % k) for k in range(4)]
assert len({f[:2] for f in frames}) == 1, [f[:2] for f in frames]
assert len({str(f[3]) for f in frames}) == 4, "frames repeat"
PY
[ ! -e f-4.png ] || fail "more frames than snapshots"

# MP4 through ffmpeg; without it, exit 2 saying what to install.
mkdir -p nopath && ln -sf "$(command -v render)" nopath/render
expect_exit 2 "needs the ffmpeg program on PATH (Debian/Ubuntu: apt-get install ffmpeg)" -- env PATH="$PWD/nopath" render -i run.nps -o run.mp4
if command -v ffmpeg > /dev/null && command -v ffprobe > /dev/null; then
  render -i run.nps --interior --fps 5 -o run.mp4
  frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames,codec_name,width,height -of csv=p=0 run.mp4)
  case "$frames" in h264,*,4) ;; *) fail "run.mp4: expected 4 H.264 frames, ffprobe says '$frames'" ;; esac
else
  echo "note: no ffmpeg/ffprobe; MP4 check skipped"
fi

# Derived fields on flows whose vorticity is known: solid-body rotation
# u = -(y - yc), v = x - xc has vorticity 2 everywhere (the differences are exact
# on linear fields), speed |r|; in 3-D v = (0, 0, x) on a grid of spacing 0.5 has
# |curl v| = 1.
"$PY" - <<'PY'
import numpipe, numpy as np
n = 24
y, x = np.mgrid[0:n, 0:n] * 0.25
grid = {"dims": ["y", "x"], "origin": [0.0, 0.0], "spacing": [0.25, 0.25]}
numpipe.write("rot.nps", {"u": -(y - 3.0), "v": x - 3.0, "d": np.zeros((n, n))}, attrs={"kind": "fluid.state", "grid": grid})
X, Y, Z = np.meshgrid(np.arange(6) * 0.5, np.arange(7), np.arange(8), indexing="ij")
g3 = {"dims": ["x", "y", "z"], "origin": [0, 0, 0], "spacing": [0.5, 1.0, 1.0]}
numpipe.write("shear.nps", {"vx": 0 * X, "vy": 0 * X, "vz": X.copy()}, attrs={"kind": "ns.state", "grid": g3})
PY
render -i rot.nps --derive vorticity --value-range 0:4 --no-colorbar --cmap viridis -o w.png
render -i shear.nps --derive vorticity_magnitude --slice z:3 --value-range 0:2 --no-colorbar -o w3.png
render -i rot.nps --derive speed --no-colorbar -o s.png
"$PY" - <<'PY' || fail "derived fields are wrong"
from imagecheck import read_png
w, h, _, idx = read_png("w.png")
assert {v for line in idx for v in line} == {16 + round(0.5 * 239)}, "vorticity of solid-body rotation is not 2 everywhere"
w, h, _, idx = read_png("w3.png")
assert {v for line in idx for v in line} == {16 + round(0.5 * 239)}, "|curl (0, 0, x)| is not 1 everywhere"
assert (w, h) == (6 * 74, 7 * 74), (w, h)   # x across (6 points), y up (7), the longer side upscaled to >= 512
w, h, _, idx = read_png("s.png")
# speed = distance from (3, 3): fastest at (0, 0), the bottom-left corner (y upward), slowest near the centre
assert idx[h - 1][0] == 255, idx[h - 1][0]
low = min((v, x, y) for y, line in enumerate(idx) for x, v in enumerate(line))
assert low[0] == 16 and abs(low[1] - w / 2) < w / 8 and abs(low[2] - h / 2) < h / 8, low
PY

expect_exit 2 "--derive must be speed, vorticity or vorticity_magnitude, got 'curl'" -- render -i rot.nps --derive curl -o x.png
# checked before any input is read (stdin at its end: a check after reading would say so)
expect_exit 2 "--derive must be speed, vorticity or vorticity_magnitude, got 'curl'" -- render --derive curl -o x.png < /dev/null
expect_exit 2 "--derive vorticity is for 2-D flows" -- render -i shear.nps --derive vorticity -o x.png
gen-input array --name q --shape 4,4 -o q.nps
expect_exit 2 "--derive speed needs the velocity records" -- render -i q.nps --derive speed -o x.png
expect_exit 2 "--slice w:1: 'vz' has axes 0, 1, 2 (x, y, z)" -- render -i shear.nps --array vz --slice w:1 -o x.png
expect_exit 2 "--frames writes PNG files" -- render -i run.nps --frames -o x%d.gif
expect_exit 2 "--fps must be in (0, 100]" -- render -i run.nps --fps 0 -o x.gif
expect_exit 2 "--size must be W or WxH in pixels, got '12y'" -- render -i run.nps --size 12y -o x.png
expect_exit 2 "--scale and --size exclude each other" -- render -i run.nps --size 100 --scale 2 -o x.png
expect_exit 2 "render writes .png, .svg, .pdf, .gif or .mp4 pictures, not .jpg" -- render -i run.nps -o x.jpg
expect_exit 2 "--range is now --value-range LO:HI" -- render -i run.nps --range 0:1 -o x.png
expect_exit 2 "--value-range needs finite LO < HI, got '2:1'" -- render -i run.nps --value-range 2:1 -o x.png
expect_exit 2 "--cmap must be viridis, inferno, gray or coolwarm, got 'jet'" -- render -i run.nps --cmap jet -o x.png
[ ! -e x.png ] && [ ! -e x.gif ] || fail "a refused render left its output"
no_leftovers .
