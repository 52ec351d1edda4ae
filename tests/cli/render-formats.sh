# render writes the format its output's name asks for (PNG, SVG, PDF; GIF and MP4 in
# render-animate) and refuses any other name with exit 2, writing nothing; text is
# drawn by an outline font (°, and g q y reaching below the line); a rolling window's
# values are drawn at the window's last point.
command -v render > /dev/null || { echo "SKIP: render not built (no libpng)"; exit 77; }
require_python
require_tool mle-fit
export PYTHONPATH="$SRC/tests/cli${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
gen-input fluid --n 24 | fluid-step --steps 2 -o f.nps
gen-input array --name line --shape 40 --fill linspace -o line.nps

# Names render cannot write: refused, nothing left (never PNG bytes under another name).
for name in fig.jpg fig.jpeg fig.tiff fig dir.png/fig; do
  expect_exit 2 "render writes .png, .svg, .pdf, .gif or .mp4 pictures" -- render -i f.nps -o "$name"
  [ ! -e "$name" ] || fail "a refused -o $name was written"
done
expect_exit 2 "not .jpg" -- render -i line.nps --array line -o plot.jpg
render -i f.nps -o upper.PNG                      # the extension's case does not matter
[ "$(od -An -tx1 -N4 upper.PNG | tr -d ' \n')" = 89504e47 ] || fail "upper.PNG is not a PNG"

if ! render -i f.nps -o probe.pdf 2> err.txt; then
  grep -q "libcairo2-dev" err.txt || fail "-o *.pdf without Cairo does not say what to install: $(cat err.txt)"
  [ ! -e probe.pdf ] || fail "a refused PDF was written"
  echo "SKIP: render was built without Cairo and DejaVu Sans: no PDF or outline font to test"
  exit 77
fi
render -i f.nps --interior -o field.pdf
render -i f.nps --interior -o field.svg
render -i line.nps --array line --title "a line" -o plot.pdf
render -i line.nps --array line -o plot.svg
for f in field.pdf plot.pdf probe.pdf; do
  [ "$(head -c 5 "$f")" = "%PDF-" ] || fail "$f is not a PDF"
  tail -c 8 "$f" | grep -q "%%EOF" || fail "$f is not a complete PDF"
done
# A plot's PDF is drawn, not pasted: its title is text in a font the PDF names.
grep -aq "DejaVu" plot.pdf || fail "plot.pdf names no DejaVu font"

# Titles in the outline font: ° is not '?', g q y reach below a, c, o.
for t in aco gqy "°" "o" "?C" "°C"; do render -i f.nps --interior --title "$t" --no-colorbar -o "title-$t.png"; done
"$PY" - <<'PY' || fail "SVG, PDF or text are not what render promises"
import xml.etree.ElementTree as ET
from imagecheck import read_png
root = ET.parse("field.svg").getroot()
assert root.tag.endswith("svg") and float(root.get("width").rstrip("pt")) > 300, root.attrib
root = ET.parse("plot.svg").getroot()
assert any(e.tag.endswith("polyline") for e in root.iter()), "plot.svg has no line"

def ink(path):
    """Rows and columns of the title's dark pixels (above the field)."""
    w, h, rows, idx = read_png(path)
    field_top = min(y for y in range(h) if any(v >= 16 for v in idx[y]))
    pts = [(x, y) for y in range(field_top) for x in range(w) if idx[y][x] in (1, 2, 3)]
    assert pts, path + ": no title"
    return pts

low = lambda p: max(y for x, y in ink(p))
assert low("title-gqy.png") >= low("title-aco.png") + 3, ("g q y do not reach below the line", low("title-gqy.png"), low("title-aco.png"))
assert low("title-°.png") <= low("title-o.png") - 3, "° is not drawn above the line (a '?' or a box?)"
assert ink("title-°C.png") != ink("title-?C.png"), "° is drawn as ?"
PY

# mle-fit's windows drawn at their last point: the 1% quantile of the window of
# points 0..99 lies above point 99 of the data line, the last above the last point.
gen-input mle --length 400 --seed 2 -o x.nps
mle-fit -i x.nps --window 100 --step 50 --quantiles 0.01 -o q.nps
cat x.nps q.nps | render --plot x,quantiles_0.01 -o rolling.svg
"$PY" - <<'PY' || fail "the windows' values are not drawn at their last points"
import xml.etree.ElementTree as ET
root = ET.parse("rolling.svg").getroot()
lines = [[float(p.split(",")[0]) for p in e.get("points").split()] for e in root.iter() if e.tag.endswith("polyline")]
data, quantile = lines[0], lines[1]
assert len(data) == 400 and len(quantile) == 7, (len(data), len(quantile))
assert abs(quantile[0] - data[99]) < 0.01 and abs(quantile[-1] - data[399]) < 0.01, (quantile[0], data[99], quantile[-1], data[399])
texts = [e.text for e in root.iter() if e.tag.endswith("text")]
assert "point" in texts, texts
PY
no_leftovers .
