# profile-report's HTML as a browser lays it out: headless Chromium renders the
# page of a benchmark suite's worth of runs (96 crafted runs of six tools on two
# devices, and real CPU runs of price, integrate, mle-fit, fluid-step and
# ns-step) at 1400x1000; a script measures every SVG text's box in the page and
# the test checks that no two overlap and none leaves its picture, that every
# real run has a point on the roofline, and that the screenshot is a page.
# Skipped (77) without chromium.
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "SKIP: chromium not installed (apt-get install chromium)"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
export PYTHONPATH="$SRC/tests/cli${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

np-profile-craft many suite.prof
tools_run=""
if command -v price > /dev/null; then
  gen-input price --dataset small | price --backend cpu --profile real.prof > /dev/null; tools_run+=" price"; fi
if command -v integrate > /dev/null; then
  gen-input integrate --portfolio 50 --seed 1 --steps 2,2,2 | integrate --backend cpu --profile real.prof > /dev/null; tools_run+=" integrate"; fi
if command -v mle-fit > /dev/null; then
  gen-input mle --length 3000 --seed 2 | mle-fit --backend cpu --window 500 --profile real.prof > /dev/null; tools_run+=" mle-fit"; fi
if command -v fluid-step > /dev/null; then
  gen-input fluid --n 64 | fluid-step --backend cpu --steps 5 --profile real.prof > /dev/null; tools_run+=" fluid-step"; fi
if command -v ns-step > /dev/null; then
  gen-input ns --n 16 --init taylor-green-3d | ns-step --backend cpu --steps 2 --profile real.prof > /dev/null; tools_run+=" ns-step"; fi
files=(suite.prof)
[ -s real.prof ] && files+=(real.prof)
profile-report --html -o report.html "${files[@]}"
real_first=97   # the real runs follow the 96 crafted ones

# The page plus a measuring script (the report itself carries none).
/usr/bin/python3 - <<'PY'
page = open("report.html", encoding="utf-8").read()
script = """<script>
window.addEventListener('load', () => {
  const result = {svgs: 0, texts: 0, problems: [], points: []};
  for (const svg of document.querySelectorAll('svg')) {
    result.svgs++;
    const s = svg.getBoundingClientRect();
    const boxes = [];
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      boxes.push([r.left, r.top, r.right, r.bottom, t.textContent]);
      if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)
        result.problems.push('outside its picture: ' + t.textContent);
    }
    result.texts += boxes.length;
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]), h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
        if (w > 0.5 && h > 0.5) result.problems.push('overlap: "' + a[4] + '" and "' + b[4] + '"');
      }
  }
  for (const p of document.querySelectorAll('svg.roofline .point title')) result.points.push(p.textContent);
  const pre = document.createElement('pre');
  pre.id = 'layout-check';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""
open("measured.html", "w", encoding="utf-8").write(page.replace("</body>", script + "</body>"))
PY

run_chromium() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d)" --window-size=1400,1000 --hide-scrollbars "$@" 2>> chromium.log
}
run_chromium --dump-dom "file://$PWD/measured.html" > dom.html || fail "chromium could not render the page: $(tail -3 chromium.log)"
run_chromium --screenshot="$PWD/page.png" "file://$PWD/report.html" > /dev/null || fail "no screenshot: $(tail -3 chromium.log)"

/usr/bin/python3 - "$real_first" "$tools_run" <<'PY' || fail "the page as Chromium lays it out has problems"
import html, json, re, sys
from imagecheck import read_png
dom = open("dom.html", encoding="utf-8").read()
m = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
assert m, "the measuring script did not run"
r = json.loads(html.unescape(m.group(1)))
assert r["svgs"] >= 97 and r["texts"] > 500, (r["svgs"], r["texts"])
assert not r["problems"], "\n".join(r["problems"][:20])
first, tools = int(sys.argv[1]), sys.argv[2].split()
runs = {int(t.split()[0][1:]) for t in r["points"]}
for k in range(1, 97):
    assert k in runs, "crafted run %d has no point on the roofline" % k
for k, tool in enumerate(tools):
    assert first + k in runs, "the %s run (r%d) has no point on the roofline" % (tool, first + k)
w, h, rows, _ = read_png("page.png")
assert (w, h) == (1400, 1000), (w, h)
ink = sum(1 for line in rows for p in line if p != (255, 255, 255))
assert ink > 20000, "the screenshot is nearly blank: %d coloured pixels" % ink
PY
echo "measured in Chromium: $(grep -o '"texts":[0-9]*' dom.html) texts; real runs:$tools_run"
