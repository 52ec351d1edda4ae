# One set of performance figures: README's Performance table is bench/results.md's
# summary (the same rows, without the raw-log column), and each workload's guide in
# docs/ quotes the numbers of its rows.
[ -n "${PY:-}" ] || { echo "SKIP: no python3"; exit 77; }
"$PY" - "$SRC" <<'PYEOF' || fail "performance figures disagree (above)"
import re, sys
src = sys.argv[1]

def table(path, marker=None):
    text = open(path, encoding="utf-8").read()
    if marker:
        text = text[text.index(marker):]
    rows, inside = [], False
    for line in text.split("\n"):
        if line.startswith("| workload | case | numpipe |"):
            inside = True
            continue
        if inside:
            if not line.startswith("|"):
                break
            if set(line) <= set("|-: "):
                continue
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows

summary = table(src + "/bench/results.md", "<!-- figures")
readme = table(src + "/README.md", "## Performance")
bad = []
if not summary:
    bad.append("bench/results.md has no summary table")
if [r[:6] for r in summary] != readme:
    bad.append("README.md's Performance table differs from bench/results.md's summary rows:")
    for r in summary:
        if r[:6] not in readme:
            bad.append("  in bench/results.md only: " + " | ".join(r[:6]))
    for r in readme:
        if r not in [s[:6] for s in summary]:
            bad.append("  in README.md only: " + " | ".join(r))
guides = {"price": "price.md", "integrate": "integrate.md", "mle-fit": "mle.md", "fluid-step": "fluid.md",
          "ns-step": "ns.md"}
for r in summary:
    guide = guides.get(r[0])
    if not guide:
        continue
    text = open(src + "/docs/" + guide, encoding="utf-8").read()
    perf = text[text.find("## Performance"):] if "## Performance" in text else text
    for number in re.findall(r"\d+(?:\.\d+)?", r[2]):
        if not re.search(r"(?<![\d.])" + re.escape(number) + r"(?![\d])", perf):
            bad.append("docs/%s does not quote %s (bench/results.md: %s, %s)" % (guide, number, r[1], r[2]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
