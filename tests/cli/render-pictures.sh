# Every picture README.md and docs/ show is what the commands printed beside it
# draw: tests/cli/pictures.py takes the commands from the documents, runs them
# (at the reduction it states where the full run is too slow for CI) and compares
# with the committed picture, and fails on a picture it does not know.
command -v render > /dev/null || { echo "SKIP: render not built (no libpng)"; exit 77; }
require_python
for t in fluid-step ns-step mle-fit integrate price inspect; do require_tool $t; done
gen-input array --name a --shape 2,2 -o a.nps
if ! render -i a.nps --array a -o probe.pdf 2> /dev/null; then
  echo "SKIP: render was built without Cairo and DejaVu Sans (libcairo2-dev, fonts-dejavu-core): the pictures are drawn with them"
  exit 77
fi
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
# The cylinder's wake has its own test (render-picture-wake).
"$PY" "$SRC/tests/cli/pictures.py" check "$SRC" --except ns-cylinder-vorticity || fail "pictures differ from what their commands draw (above)"
