# The cylinder's wake in README.md and docs/ns.md is what its commands draw: a
# landscape picture of the 384 x 192 grid with a colour bar (tests/cli/pictures.py,
# at 40 of the 60000 steps: the full run takes about an hour of CPU).
command -v render > /dev/null || { echo "SKIP: render not built (no libpng)"; exit 77; }
require_python
for t in ns-step; do require_tool $t; done
gen-input array --name a --shape 2,2 -o a.nps
if ! render -i a.nps --array a -o probe.pdf 2> /dev/null; then
  echo "SKIP: render was built without Cairo and DejaVu Sans (libcairo2-dev, fonts-dejavu-core): the pictures are drawn with them"
  exit 77
fi
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
"$PY" "$SRC/tests/cli/pictures.py" check "$SRC" ns-cylinder-vorticity || fail "pictures differ from what their commands draw (above)"
