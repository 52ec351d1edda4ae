# README's picture is what the command printed under it draws: the test runs that
# command, exactly as printed, and compares the pixels with docs/fluid-density.png
# (the field's exactly, text within 1% of the picture: FreeType versions differ).
require_tool fluid-step
require_tool render
[ -n "${PY:-}" ] || { echo "SKIP: no python3"; exit 77; }
gen-input array --name a --shape 2,2 -o a.nps
if ! render -i a.nps --array a -o probe.pdf 2> /dev/null; then
  echo "SKIP: render was built without Cairo and DejaVu Sans (libcairo2-dev, fonts-dejavu-core): the picture is drawn with them"
  exit 77
fi
rm -f a.nps probe.pdf
ln -s "$SRC/share" share
# The ```sh block that follows the image in README.md.
cmd=$(awk '/^!\[.*\]\(docs\/fluid-density\.png\)/ {seen=1; next}
           seen && /^```sh/ {inside=1; next}
           inside && /^```/ {exit}
           inside {print}' "$SRC/README.md")
[ -n "$cmd" ] || fail "README.md has no \`\`\`sh block after the picture docs/fluid-density.png"
echo "$cmd" | grep -q -- '-o density.png' || fail "README's picture command does not write density.png: $cmd"
bash -eo pipefail -c "$cmd" || fail "README's picture command failed: $cmd"
"$PY" "$SRC/tests/cli/pictures.py" compare density.png "$SRC/docs/fluid-density.png" ||
  fail "docs/fluid-density.png is not what README's command draws; redraw it: $cmd, then cp density.png docs/fluid-density.png"
