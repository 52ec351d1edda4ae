# The Python reader refuses what the C++ reader refuses (nesting depth, UTF-8,
# dimension count), with FormatError naming the file; read() holds at most
# max_bytes in total; `numpipe.py dump` tells a failed write (exit 3) from a read.
require_python
NP="$PY $SRC/share/python/numpipe.py"
check() {  # check CASE 'message': both readers refuse with exit 2 and the message
  np-testcraft "$1" > "$2.nps"
  expect_exit 2 "$3" -- inspect "$2.nps"
  expect_exit 2 "numpipe.py: $2.nps: " -- $NP dump "$2.nps"
  grep -qF -- "$3" "$WORK/.stderr" || fail "numpipe.py: $(cat "$WORK/.stderr") lacks '$3'"
}
check deep-attrs:1500 deep1500 "the header of record 0 nests deeper than 64 levels"
check deep-attrs:100000 deep100000 "the header of record 0 nests deeper than 64 levels"
check deep-attrs:63 deep65 "the header of record 0 nests deeper than 64 levels"
check surrogate-name surrogate "the header of record 0 is not valid JSON"
check many-dims:1000000 dims1000000 "the shape of record 0 'x' has 1000000 dimensions, more than 32"
check many-dims:33 dims33 "the shape of record 0 'x' has 33 dimensions, more than 32"
# what both accept
for ok in deep-attrs:62 many-dims:32; do   # deep-attrs:N nests N + 2 levels
  np-testcraft $ok > ok.nps
  inspect ok.nps > /dev/null || fail "inspect refused $ok"
  $NP dump ok.nps > /dev/null || fail "numpipe.py refused $ok"
done
# FormatError (a ValueError), never RecursionError or NumPy's errors, with the file's name
np-testcraft deep-attrs:100000 > deep.nps
np-testcraft many-dims:1000000 > dims.nps
"$PY" - <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRC"] + "/share/python")
import numpipe
for path in ("deep.nps", "dims.nps"):
    try:
        numpipe.read(path)
    except numpipe.FormatError as e:
        assert str(e).startswith(path + ": "), e
    else:
        raise SystemExit("%s was read" % path)
PYEOF

# read() holds at most max_bytes in total (every record: later records of a name are
# kept for .all() and .series())
"$PY" - <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRC"] + "/share/python")
import numpy as np, numpipe

def refused_over(path, max_bytes, held):
    """read(path) with max_bytes refused, saying the limit, where it would hold `held` bytes."""
    try:
        numpipe.read(path, max_bytes=max_bytes)
    except numpipe.FormatError as e:
        assert "over the max_bytes limit of %d bytes" % max_bytes in str(e), e
    else:
        raise SystemExit("read() held %d bytes with max_bytes=%d" % (held, max_bytes))

numpipe.write("three.nps", {"a": np.zeros(1000), "b": np.zeros(1000), "c": np.zeros(1000)})
refused_over("three.nps", 20000, 24000)
assert len(numpipe.read("three.nps", max_bytes=30000)) == 3
# records() yields one at a time: each within max_bytes is fine
assert len(list(numpipe.records("three.nps", max_bytes=8000))) == 3
numpipe.write("same.nps", [("a", np.zeros(1000)), ("a", np.ones(1000))])
s = numpipe.read("same.nps", max_bytes=16000)
assert s["a"].sum() == 0, "read() must give the first record of a name"
assert s.series("a").shape == (2, 1000)
refused_over("same.nps", 10000, 16000)
PYEOF

# dump: a failed write is a write error (exit 3), not "cannot read input"
gen-input array --shape 1000 -o a.nps
expect_exit 3 "numpipe.py: cannot write standard output" -- bash -c "$NP dump --values a.nps > /dev/full"
