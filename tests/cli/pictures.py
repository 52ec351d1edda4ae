#!/usr/bin/python3
"""Every picture README.md and docs/ show, redrawn by the commands printed beside
it (taken from the documents, so that a changed command is what runs).

  pictures.py check ROOT [NAME | --except NAME]  # redraw each (at the stated reduction) and compare
  pictures.py make ROOT [NAME]  # redraw at full size and write the committed pictures
  pictures.py compare NEW.png COMMITTED.png  # the "pixels" comparison of two pictures

`check` compares in one of three ways, stated per picture:
  pixels  the full command, pixel for pixel (palette indices) with the committed picture,
          text and frames within 1% of the pixels (FreeType versions differ a little);
  layout  the picture's size (within 4%) and its parts: a field's colour bar (a column
          running through the colour map from its top to its bottom end) at the same
          place, a plot's series each spanning the same part of the axes (within 2% of
          their width), landscape or portrait as committed; used where the full command is too slow for a 2-core CI
          machine without a GPU (the reduction is stated), or where the picture's bytes
          depend on the machine (a browser's screenshot, matplotlib);
Tools are taken from PATH."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagecheck import png_rows, read_png  # noqa: E402

# picture, where it is shown, the blocks that draw it (document, a text that picks the
# block), the file the commands write, the reductions for the check (literal
# replacements, with the reason), how the check compares.
PICTURES = [
    dict(picture="docs/fluid-density.png", shown=["README.md", "docs/fluid.md"],
         blocks=[("README.md", "--visc 0.00005 | render")], writes="density.png", check="pixels"),
    dict(picture="docs/fluid-smoke.png", shown=["README.md", "docs/fluid.md"],
         blocks=[("README.md", "-o smoke.png")], writes="smoke.png", check="pixels"),
    dict(picture="docs/fluid-tunnel.png", shown=["README.md", "docs/fluid.md"],
         blocks=[("README.md", "-o tunnel.png")], writes="tunnel.png", check="pixels"),
    dict(picture="docs/ns-cylinder-vorticity.png", shown=["README.md", "docs/ns.md"],
         blocks=[("README.md", "-o wake.png")], writes="wake.png", check="layout",
         reduce=[("--steps 60000", "--steps 40"), ("--snapshot-every 20000", "--snapshot-every 40")],
         why="60000 steps of a 384 x 192 grid: about an hour of CPU; the check runs 40 (the same grid, so the same picture size)"),
    dict(picture="docs/pictures/fluid-plume.png", shown=["README.md", "docs/render.md"],
         blocks=[("docs/render.md", "-o fluid-plume.png")], writes="fluid-plume.png", check="pixels"),
    dict(picture="docs/pictures/fluid-vorticity.png", shown=["docs/render.md"],
         blocks=[("docs/render.md", "-o fluid-vorticity.png")], writes="fluid-vorticity.png", check="pixels"),
    dict(picture="docs/pictures/ns-vorticity.png", shown=["README.md", "docs/render.md"],
         blocks=[("docs/render.md", "-o ns-vorticity.png")], writes="ns-vorticity.png", check="layout",
         reduce=[("--steps 300", "--steps 30")],
         why="300 steps of a 48^3 grid: minutes on 2 cores; the check runs 30 (the same grid)"),
    dict(picture="docs/pictures/ns-energy.png", shown=["docs/render.md"],
         blocks=[("docs/render.md", "-o ns-energy.png")], writes="ns-energy.png", check="layout",
         reduce=[("--steps 300", "--steps 30")], why="as ns-vorticity.png (one block draws both)"),
    dict(picture="docs/pictures/reserves.png", shown=["README.md", "docs/render.md"],
         blocks=[("docs/render.md", "-o reserves.png")], writes="reserves.png", check="pixels"),
    dict(picture="docs/pictures/rolling-var.png", shown=["README.md", "docs/render.md"],
         blocks=[("docs/render.md", "-o rolling-var.png")], writes="rolling-var.png", check="pixels"),
    dict(picture="docs/pictures/price-strikes.png", shown=["docs/render.md"],
         blocks=[("docs/render.md", "-o price-strikes.png")], writes="price-strikes.png", check="pixels"),
    dict(picture="docs/pictures/mle-var-band.png", shown=["docs/mle.md"],
         blocks=[("docs/render.md", "-o returns.nps"), ("docs/mle.md", "-o var-band.png")], writes="var-band.png",
         check="pixels"),
    dict(picture="docs/price-smile.png", shown=["docs/price.md"],
         blocks=[("docs/price.md", "--calibrate --fit"), ("docs/price.md", "price-smile.py")], writes="smile.png",
         check="layout", needs_python="matplotlib",
         reduce=[("--num-x 128 --num-y 64 --steps-per-year 32", "--num-x 64 --num-y 32 --steps-per-year 16")],
         why="a calibration on the full grid takes minutes on 2 cores; matplotlib's pixels depend on its version"),
    dict(picture="docs/ns-bodies-cd-h.png", shown=["docs/ns.md"],
         blocks=[("docs/ns.md", "--plot ns-bodies-cd-h.png")], writes="ns-bodies-cd-h.png", check="layout",
         needs_python="matplotlib"),
    dict(picture="docs/price-work-precision.png", shown=["docs/price.md"],
         blocks=[("docs/price.md", "--plot price-work-precision.png")], writes="price-work-precision.png",
         check="layout", needs_python="matplotlib, QuantLib",
         reduce=[("--threads 2,1", "--quick --threads 1")],
         why="QuantLib's engine takes minutes on the full chain; measured times: its size is what can be compared"),
    dict(picture="docs/pictures/profile-report.png", shown=["docs/profile.md"],
         blocks=[("docs/profile.md", "--screenshot=")], writes="profile-report.png", check="layout", needs="chromium",
         reduce=[("profile-report --calibrate --backend cpu", "profile-report --calibrate --quick --backend cpu")],
         why="a browser's screenshot of measured times: its size is what can be compared"),
]


def blocks_of(path):
    """The ```sh and ```text blocks of a Markdown file, in order."""
    out, inside = [], None
    for line in open(path, encoding="utf-8"):
        if inside is None and re.match(r"^```(sh|text)\s*$", line):
            inside = []
        elif inside is not None and line.startswith("```"):
            out.append("".join(inside))
            inside = None
        elif inside is not None:
            inside.append(line)
    return out


def commands(root, entry, reduced):
    text = ""
    for doc, anchor in entry["blocks"]:
        found = [b for b in blocks_of(os.path.join(root, doc)) if anchor in b]
        if len(found) != 1:
            raise SystemExit("%s: %d blocks contain %r (want 1)" % (doc, len(found), anchor))
        text += found[0]
    if reduced:
        for old, new in entry.get("reduce", []):
            if old not in text:
                raise SystemExit("%s: the reduction %r no longer applies to its commands" % (entry["picture"], old))
            text = text.replace(old, new)
    return text


_drawn = {}  # commands already run (one block draws two pictures) -> their folder


def draw(root, entry, reduced, work):
    script = commands(root, entry, reduced)
    if script in _drawn:
        work = _drawn[script]
    else:
        os.makedirs(work)
        for shared in ("share", "bench"):  # examples, and the benchmarks' scripts and results
            os.symlink(os.path.join(root, shared), os.path.join(work, shared))
        run(entry, script, work)
        _drawn[script] = work
    out = os.path.join(work, entry["writes"])
    if not os.path.isfile(out):
        raise SystemExit("%s: the commands did not write %s" % (entry["picture"], entry["writes"]))
    return out


def run(entry, script, work):
    r = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=work, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit("%s: its commands failed (exit %d):\n%s\n%s" % (entry["picture"], r.returncode, script,
                                                                       r.stderr[-2000:]))


def colour_bar(path):
    """The x of a colour bar: a column whose colour-map indices (16..255) fall from the
    map's top to its bottom over at least half of the picture's height; else None."""
    w, h, rows, idx = read_png(path)
    if idx is None:
        return None
    for x in range(w - 1, -1, -1):
        col = [idx[y][x] for y in range(h) if idx[y][x] >= 16]
        if len(col) > h // 2 and col[0] == 255 and col[-1] == 16 and col == sorted(col, reverse=True):
            return x
    return None


def series_extents(path):
    """Per line colour of a plot (the 10 categorical colours, palette 6..15), the x
    range of its pixels inside the axes' frame (grey index 3: the columns and rows
    that are mostly frame), so that a legend outside the axes does not count."""
    w, h, rows, idx = read_png(path)
    out = {}
    if idx is None:
        return out
    cols = [x for x in range(w) if sum(1 for y in range(h) if idx[y][x] == 3) > h // 3]
    frame_rows = [y for y in range(h) if sum(1 for v in idx[y] if v == 3) > w // 3]
    x0, x1 = (cols[0], cols[-1]) if len(cols) >= 2 else (0, w - 1)
    y0, y1 = (frame_rows[0], frame_rows[-1]) if len(frame_rows) >= 2 else (0, h - 1)
    for y in range(y0, y1 + 1):
        for x in range(x0, x1 + 1):
            v = idx[y][x]
            if 6 <= v <= 15:
                lo, hi, n = out.get(v, (x, x, 0))
                out[v] = (min(lo, x), max(hi, x), n + 1)
    # As fractions of the frame's width: a reduced run's tick labels may move the frame.
    span = max(x1 - x0, 1)
    return {k: ((v[0] - x0) / span, (v[1] - x0) / span) for k, v in out.items() if v[2] > 40}


def compare_layout(new, old):
    """Differences of size (within 4%: a reduced run's labels, such as the time in
    the title or the colour bar's end values, may be wider or narrower),
    orientation, colour bar and line extents (within 2% of the axes' width)."""
    wn, hn, _, _, _ = png_rows(new)
    wo, ho, _, _, _ = png_rows(old)
    bad = []
    if (wn > hn) != (wo > ho) or abs(wn - wo) > 0.04 * wo or abs(hn - ho) > 0.04 * ho:
        bad.append("size %dx%d, the committed picture is %dx%d (%s)" % (
            wn, hn, wo, ho, "landscape" if wo > ho else "portrait"))
        return bad
    bn, bo = colour_bar(new), colour_bar(old)
    if (bn is None) != (bo is None) or (bn is not None and abs(bn - bo) > 0.04 * wo):
        bad.append("colour bar at x=%s, in the committed picture at x=%s" % (bn, bo))
    en, eo = series_extents(new), series_extents(old)
    if bn is None and (en or eo):
        if set(en) != set(eo):
            bad.append("line colours %s, the committed picture has %s" % (sorted(en), sorted(eo)))
        for k in set(en) & set(eo):
            if abs(en[k][0] - eo[k][0]) > 0.02 or abs(en[k][1] - eo[k][1]) > 0.02:
                bad.append("the line of colour %d spans %.3f..%.3f of the axes' width, in the committed picture %.3f..%.3f" % (
                    k, en[k][0], en[k][1], eo[k][0], eo[k][1]))
    return bad


def compare_pixels(new, old):
    """Every pixel of the fields and lines (palette indices 5..255) the same, and where
    each lies; a pixel of text or frame (the greys 0..4) may hold another grey in 1%
    of the picture, as glyph rasterisation differs a little between FreeType versions."""
    wn, hn, cn, _, rn = png_rows(new)
    wo, ho, co, _, ro = png_rows(old)
    if (wn, hn, cn) != (wo, ho, co):
        return ["size %dx%d (colour type %d), the committed picture is %dx%d (colour type %d)" % (wn, hn, cn, wo, ho, co)]
    if cn != 3:
        return ["not a palette picture (colour type %d)" % cn]
    data, grey = 0, 0
    for a, b in zip(b"".join(rn), b"".join(ro)):
        if a != b:
            if a <= 4 and b <= 4:  # one grey for another: the edge of a glyph
                grey += 1
            else:
                data += 1
    bad = []
    if data:
        bad.append("%d of %d pixels of the data differ" % (data, wn * hn))
    if grey > wn * hn // 100:
        bad.append("%d of %d pixels of text and frames differ (more than 1%%)" % (grey, wn * hn))
    return bad


def available(entry):
    if "needs" in entry and not shutil.which(entry["needs"]):
        return "no %s" % entry["needs"]
    if "needs_python" in entry:
        if subprocess.run(["/usr/bin/python3", "-c", "import " + entry["needs_python"]],
                          stderr=subprocess.DEVNULL).returncode != 0:
            return "no python3-%s" % entry["needs_python"]
    return None


def shown_everywhere(root):
    """Every picture README.md and docs/*.md show is in PICTURES, each where it says."""
    bad, listed = [], {e["picture"]: e for e in PICTURES}
    docs = ["README.md"] + ["docs/" + f for f in sorted(os.listdir(os.path.join(root, "docs"))) if f.endswith(".md")]
    for doc in docs:
        for m in re.finditer(r"!\[[^\]]*\]\(([^)]+\.(?:png|svg|gif|jpg))\)", open(os.path.join(root, doc), encoding="utf-8").read()):
            path = os.path.normpath(os.path.join(os.path.dirname(doc), m.group(1)))
            if path not in listed:
                bad.append("%s shows %s, which no entry of tests/cli/pictures.py redraws" % (doc, path))
            elif doc not in listed[path]["shown"]:
                bad.append("%s shows %s; its entry does not list it" % (doc, path))
    return bad


def main():
    if sys.argv[1] == "compare":  # compare NEW.png COMMITTED.png: as a "pixels" check
        problems = compare_pixels(sys.argv[2], sys.argv[3])
        for p in problems:
            print("%s is not %s: %s" % (sys.argv[2], sys.argv[3], p))
        sys.exit(1 if problems else 0)
    mode, root = sys.argv[1], os.path.abspath(sys.argv[2])
    rest = sys.argv[3:]
    exclude = rest[1] if rest[:1] == ["--except"] and len(rest) == 2 else None
    only = set(rest[0].split(",")) if rest and not exclude else None  # NAME[,NAME...]
    bad = shown_everywhere(root) if mode == "check" and not only else []
    scratch = tempfile.mkdtemp()
    try:
        for n, e in enumerate(PICTURES):
            name = os.path.basename(e["picture"])
            if only and not only & {name, os.path.splitext(name)[0]}:
                continue
            if exclude and exclude in (name, os.path.splitext(name)[0]):
                continue
            missing = available(e)
            if missing:
                print("SKIP %s: %s" % (e["picture"], missing))
                continue
            reduced = mode == "check" and e["check"] == "layout"
            print("%s %s%s" % (mode, e["picture"], " (reduced: %s)" % e["why"] if reduced and "why" in e else ""),
                  flush=True)
            new = draw(root, e, reduced, os.path.join(scratch, str(n)))
            old = os.path.join(root, e["picture"])
            if mode == "make":
                shutil.copyfile(new, old)
                continue
            problems = (compare_pixels if e["check"] == "pixels" else compare_layout)(new, old)
            bad += ["%s is not what its command draws: %s" % (e["picture"], p) for p in problems]
    finally:
        shutil.rmtree(scratch)
    for b in bad:
        print(b)
    if bad:
        print("redraw with: share/examples/make-pictures NAME")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
