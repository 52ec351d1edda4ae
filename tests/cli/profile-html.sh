# The HTML report: one self-contained file, well-formed XHTML (parsed strictly),
# with an inline SVG roofline (bandwidth and compute roofs, one point per phase
# that has bytes and flops) and SVG bar charts of phase times; rendered by
# headless Chromium when it is installed.

np-profile-craft cpu runs.prof
np-profile-craft gpu runs.prof
profile-report --html -o report.html runs.prof
no_leftovers .
profile-report --format html runs.prof | cmp - report.html || fail "--html and --format html differ"
grep -q "<script" report.html && fail "the report carries scripts"
grep -Eq "(src|href)=" report.html && fail "the report refers to external resources"

if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 - <<'PY' || fail "the HTML is not well formed or lacks the charts"
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

text = open("report.html", encoding="utf-8").read()
root = ET.fromstring(text.split("\n", 1)[1])  # after <!DOCTYPE html>
X, S = "{http://www.w3.org/1999/xhtml}", "{http://www.w3.org/2000/svg}"
assert root.tag == X + "html", root.tag
svgs = root.findall(".//" + S + "svg")
roof = [s for s in svgs if s.get("class") == "roofline"]
bars = [s for s in svgs if s.get("class") == "bars"]
assert len(roof) == 1 and len(bars) == 2, (len(roof), len(bars))
lines = roof[0].findall(".//" + S + "line")
bw = [l for l in lines if l.get("class") == "roof-bandwidth"]
comp = [l for l in lines if l.get("class") == "roof-compute"]
assert len(bw) == 2 and len(comp) == 2, (len(bw), len(comp))
points = [c for c in roof[0].iter() if c.get("class") == "point"]
assert [p.tag for p in points] == [S + "circle", S + "rect"], [p.tag for p in points]  # cpu circle, cuda square
titles = [c.find(S + "title").text for c in points]
assert titles == ["r1 compute (fake-tool, cpu): 2 flop/B, 50.00 GFLOP/s",
                  "r2 compute (fake-tool, cuda): 2 flop/B, 500.00 GFLOP/s"], titles
labels = [t.text for t in roof[0].iter(S + "text") if t.get("class") == "point-label"]
assert labels == ["r1 compute", "r2 compute"], labels
# The compute roof meets the bandwidth roof at the ridge point, and points lie
# under their roofs (smaller y is higher on the page).
for b, c in zip(bw, comp):
    assert abs(float(b.get("x2")) - float(c.get("x1"))) < 0.01 and abs(float(b.get("y2")) - float(c.get("y1"))) < 0.01
def centre_y(p):
    return float(p.get("cy")) if p.get("cy") else float(p.get("y")) + float(p.get("height")) / 2
for p, c in zip(points, comp):
    assert centre_y(p) > float(c.get("y1"))
rects = [r for s in bars for r in s.iter(S + "rect") if r.get("class") == "bar"]
assert len(rects) == 6, len(rects)
widths = [float(r.get("width")) for r in rects[:3]]
assert abs(widths[1] - 420) < 0.01 and abs(widths[0] - 105) < 0.01, widths  # 0.5 s and 2 s
tables = root.findall(".//" + X + "table")
assert len(tables) == 3, len(tables)

class Strict(HTMLParser):  # every element closed in order
    VOID = {"meta", "br", "img", "hr", "input", "link"}
    def __init__(self):
        super().__init__()
        self.stack = []
    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        pass
    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
        self.stack.pop()
p = Strict()
p.feed(text)
p.close()
assert not p.stack, p.stack
PY
fi

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --dump-dom "file://$PWD/report.html" > dom.html 2> chromium.log ||
    fail "chromium could not render the report: $(tail -5 chromium.log)"
  grep -q '<svg xmlns="http://www.w3.org/2000/svg" class="roofline"' dom.html || fail "no roofline SVG in chromium's DOM"
  grep -q 'class="roof-bandwidth"' dom.html || fail "no bandwidth roof in chromium's DOM"
  grep -q 'class="point"' dom.html || fail "no points in chromium's DOM"
else
  echo "note: chromium not installed; the headless rendering check is skipped"
fi
