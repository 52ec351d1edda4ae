# render's line plots: PNG (pixels of each series' colour, read back by
# tests/cli/imagecheck.py) and SVG (parsed as XML: one polyline per series, ticks,
# labels, legend, every text inside the picture and no two texts overlapping);
# table columns against another column, one line per row of 2-D data, dates on
# the x axis from a labels record, a logarithmic y axis; bad input refused.
command -v render > /dev/null || { echo "SKIP: render not built (no libpng)"; exit 77; }
require_python
for t in ns-step integrate; do require_tool $t; done
export PYTHONPATH="$SRC/tests/cli:$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

gen-input ns --n 12 --init taylor-green-3d | ns-step --steps 12 --diag-every 2 -o ns.nps
render -i ns.nps --plot kinetic_energy,enstrophy --x t -o ke.png
render -i ns.nps --plot kinetic_energy,enstrophy --x t --title "Taylor-Green decay" -o ke.svg
render -i ns.nps --plot diagnostics.kinetic_energy --x t --log-y --size 600x400 -o ke-log.svg
gen-input integrate --portfolio 4 --seed 1 --steps 2,2,2 | integrate -o res.nps
render -i res.nps --plot reserve -o reserve.svg
gen-input array --name line --shape 50 --fill linspace --lo -1 --hi 2 -o line.nps
render -i line.nps --array line -o line.png           # 1-D data: a plot without --plot
# Dates on the x axis: a value per window labelled by its last date, and a
# series labelled by every date; positions line up by date.
"$PY" - <<'PY'
import numpipe, numpy as np
dates = ["2020-01-%02d" % d for d in range(1, 31)]
def labels(ls, of, column):
    w = max(map(len, ls))
    return np.array([list(s.encode().ljust(w, b"\0")) for s in ls], dtype=np.uint8), {"kind": "labels", "labels_of": of, "column": column}
with numpipe.Writer("dated.nps") as w:
    w.write("returns", np.sin(np.arange(30.0)), {"dims": ["day"]})
    a, at = labels(dates, "day", "date"); w.write("day_label", a, at)
    w.write("var", -np.ones(6), {"dims": ["window"]})
    a, at = labels(dates[4::5], "window", "date"); w.write("window_label", a, at)
PY
render -i dated.nps --plot returns,var -o dated.svg

"$PY" - <<'PY' || fail "plots differ from what render promises"
import re, xml.etree.ElementTree as ET
from imagecheck import read_png
NS = "{http://www.w3.org/2000/svg}"
# PNG: both series drawn in their own colours, well inside the picture.
w, h, rows, idx = read_png("ke.png")
assert (w, h) == (800, 500), (w, h)
blue = sum(1 for line in rows for p in line if p == (0x1f, 0x77, 0xb4))
red = sum(1 for line in rows for p in line if p == (0xd6, 0x27, 0x28))
assert blue > 500 and red > 500, (blue, red)
dark = sum(1 for line in idx for v in line if v in (1, 2))
assert dark > 1500, "too few text pixels for ticks and labels: %d" % dark
w, h, rows, idx = read_png("line.png")
assert sum(1 for line in idx for v in line if v == 6) > 700, "the 1-D line is missing"

def svg(path):
    root = ET.parse(path).getroot()
    W, H = float(root.get("width")), float(root.get("height"))
    texts = [(float(t.get("x")), float(t.get("y")), t.get("text-anchor"), t.text or "", t.get("transform")) for t in root.iter(NS + "text")]
    lines = root.findall(NS + "polyline")
    return W, H, texts, lines

def boxes(texts):  # 12 px sans-serif, at most 7.2 px a character, as render assumes
    out = []
    for x, y, anchor, s, transform in texts:
        if transform: continue
        w = 7.2 * len(s)
        x0 = x - (w / 2 if anchor == "middle" else w if anchor == "end" else 0)
        out.append((x0, y - 10, x0 + w, y + 2, s))
    return out

for path, series in (("ke.svg", 2), ("ke-log.svg", 1), ("reserve.svg", 4), ("dated.svg", 2)):
    W, H, texts, lines = svg(path)
    assert len(lines) >= series, (path, len(lines))
    b = boxes(texts)
    for x0, y0, x1, y1, s in b:
        assert x0 >= -0.5 and x1 <= W + 0.5 and y0 >= -0.5 and y1 <= H + 0.5, (path, "text outside the picture", s, x0, x1, W)
    for i in range(len(b)):
        for j in range(i + 1, len(b)):
            p, q = b[i], b[j]
            assert p[2] <= q[0] or q[2] <= p[0] or p[3] <= q[1] or q[3] <= p[1], (path, "texts overlap", p[4], q[4])
W, H, texts, lines = svg("ke.svg")
words = [t[3] for t in texts]
assert "Taylor-Green decay" in words and "t" in words and "kinetic_energy" in words and "enstrophy" in words, words
W, H, texts, lines = svg("ke-log.svg")
assert (W, H) == (600, 400) and any(re.fullmatch(r"0\.1\d*", t[3]) for t in texts), [t[3] for t in texts]
W, H, texts, lines = svg("reserve.svg")
assert {"policy 0", "policy 3"} <= {t[3] for t in texts}, "legend entries"
assert len(lines) == 4, "one line per policy, ending where the policy ends (NaN after)"
W, H, texts, lines = svg("dated.svg")
ticks = [t[3] for t in texts if t[3].startswith("2020-01-")]
assert len(ticks) >= 3 and ticks == sorted(ticks), ticks
# The window values (6 points at dates 5, 10, ..., 30) lie under the matching days of the daily series.
def xs(line): return [float(p.split(",")[0]) for p in line.get("points").split()]
daily, windows = xs(lines[0]), xs(lines[1])
assert len(daily) == 30 and len(windows) == 6
assert all(abs(windows[k] - daily[4 + 5 * k]) < 0.01 for k in range(6)), (windows, daily)
PY

expect_exit 2 "--plot: no record or column 'energy' (have: rho, vx, vy, vz, step, t, kinetic_energy" -- render -i ns.nps --plot energy -o x.png
expect_exit 2 "--plot: 'diagnostics' is a table; name its columns (step, t, kinetic_energy" -- render -i ns.nps --plot diagnostics -o x.png
expect_exit 2 "--plot rho: its record has 3 axes" -- render -i ns.nps --plot rho -o x.png
expect_exit 2 "--x reserve0 lies on other axes than 'reserve' (year)" -- render -i res.nps --plot reserve --x reserve0 -o x.png
expect_exit 2 "a line plot is one picture" -- render -i ns.nps --plot t -o x.gif
expect_exit 2 "--x goes with --plot" -- render -i ns.nps --array rho --x t -o x.png
expect_exit 2 "the plot is too small" -- render -i ns.nps --plot kinetic_energy --size 60x40 -o x.png
[ ! -e x.png ] || fail "a refused render left x.png"
no_leftovers .
