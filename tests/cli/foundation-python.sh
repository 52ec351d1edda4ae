# share/python/numpipe.py against the C++ tools, both ways: C++ writes and Python
# reads (checked against inspect --json and against values computed here), Python
# writes and verify/inspect read; concatenated streams; damaged inputs refused with
# numpipe.FormatError. Each check runs with python-zstandard where it is installed,
# with libzstd through ctypes and, where the zstd program exists, with the
# zstd-program fallback.
require_python

NP="$SRC/share/python/numpipe.py"
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1  # keep the source tree clean
"$PY" -c 'import numpipe' || fail "cannot import numpipe from $SRC/share/python"

backends=libzstd
"$PY" -c 'import zstandard' 2> /dev/null && backends="zstandard $backends"   # Debian: python3-zstandard
command -v zstd > /dev/null && backends="$backends cli"
echo "zstd backends tested: $backends"

# ---- helpers (Python on stdin, arguments after '-') ----------------------------------

# Damaged inputs are listed with `reject FILE 'message'` and checked in one Python run
# (NumPy takes a while to import): numpipe.records(FILE), from the path and from an
# open file, raises FormatError, a ValueError, naming FILE and containing the message.
cat > reject_check.py <<'PY'
import sys, numpipe
bad = 0
for line in open(sys.argv[1]):
    path, want = line.rstrip("\n").split("\t")
    for source in (path, open(path, "rb")):
        try:
            n = sum(1 for _ in numpipe.records(source))
            print("%s: accepted, %d records; expected FormatError '%s'" % (path, n, want)); bad += 1
        except numpipe.FormatError as e:
            msg = str(e)
            if not isinstance(e, ValueError) or want not in msg or not msg.startswith(path + ": "):
                print("%s: FormatError %r lacks %r" % (path, msg, want)); bad += 1
sys.exit(1 if bad else 0)
PY
reject() { printf '%s\t%s\n' "$1" "$2" >> rejects.txt; }
# dump_rejects FILE 'message': `numpipe.py dump` exits 2 naming the input and the problem.
dump_rejects() {
  expect_exit_stdin 2 "numpipe.py: stdin: " "$1" -- "$PY" "$NP" dump
  grep -qF -- "$2" "$WORK/.stderr" || fail "numpipe.py dump < $1: stderr lacks '$2': $(cat "$WORK/.stderr")"
  expect_exit 2 "numpipe.py: $1: " -- "$PY" "$NP" dump "$1"
  grep -qF -- "$2" "$WORK/.stderr" || fail "numpipe.py dump $1: stderr lacks '$2': $(cat "$WORK/.stderr")"
}

for backend in $backends; do
export NUMPIPE_PY_ZSTD=$backend
echo "== backend $backend"

# ---- 1. C++ writes, Python reads ------------------------------------------------------

# A random f4 array: values, dtype, shape, attrs and stats as inspect --json reports them.
gen-input array --shape 3,4 --dtype f4 --fill uniform --seed 3 -o a.nps
inspect --json --values 12 a.nps > a.json
"$PY" - <<'PY' || fail "python read of a.nps disagrees with inspect --json"
import json, numpy as np, numpipe
(ref,) = json.load(open("a.json"))
recs = list(numpipe.records("a.nps"))
assert len(recs) == 1, recs
name, a, attrs = recs[0]
assert name == ref["name"] == "x", name
assert a.dtype == np.dtype("<f4") and ref["dtype"] == "f4", a.dtype
assert list(a.shape) == ref["shape"] == [3, 4], a.shape
assert a.flags.c_contiguous and a.flags.writeable
assert attrs == ref["attrs"], (attrs, ref["attrs"])
assert attrs["seed"] == 3 and attrs["fill"] == "uniform" and attrs["history"][-1]["tool"] == "gen-input array"
flat = [float(v) for v in a.ravel()]
assert flat == ref["values"], (flat, ref["values"])           # f4 -> double is exact
s = ref["stats"]
assert min(flat) == s["min"] and max(flat) == s["max"], s
assert abs(sum(flat) / len(flat) - s["mean"]) <= 1e-15, s
assert all(0 <= v < 1 for v in flat) and len(set(flat)) == 12
d = numpipe.read("a.nps")
assert list(d) == ["x"] and np.array_equal(d["x"], a)
PY
"$PY" "$NP" dump a.nps > dump.txt
[ "$(cat dump.txt)" = "x f4 [3, 4]" ] || fail "numpipe.py dump: $(cat dump.txt)"
"$PY" "$NP" dump --attrs --values < a.nps > dump.txt
grep -q '"seed": 3' dump.txt || fail "numpipe.py dump --attrs from stdin: $(cat dump.txt)"

# Every dtype, from a pipe, against values computed here: linspace is lo + (hi-lo)*i/(n-1),
# floored for the integer types.
cat > linspace_check.py <<'PY'
import sys, numpy as np, numpipe
dt = sys.argv[1]
want_dtype = {"f8": "<f8", "f4": "<f4", "i8": "<i8", "i4": "<i4", "u8": "<u8", "u1": "u1"}[dt]
recs = list(numpipe.records("-"))
assert len(recs) == 1
name, a, attrs = recs[0]
assert name == "v_" + dt and a.dtype == np.dtype(want_dtype) and a.shape == (2, 3, 7), (name, a.dtype, a.shape)
assert attrs["kind"] == "ramp" and attrs["lo"] == 0 and attrs["hi"] == 250, attrs
n = 42
x = 0.0 + (250.0 - 0.0) * np.arange(n, dtype=np.float64) / (n - 1)
want = (x if dt[0] == "f" else np.floor(x)).astype(want_dtype).reshape(2, 3, 7)
assert np.array_equal(a, want), (a, want)
assert a.ravel()[-1] == 250 and a.ravel()[0] == 0
PY
for dt in f8 f4 i8 i4 u8 u1; do
  gen-input array --name "v_$dt" --shape 2,3,7 --dtype "$dt" --fill linspace --lo 0 --hi 250 --kind ramp \
    | "$PY" linspace_check.py "$dt" || fail "python read of a linspace $dt array"
  gen-input array --name "d_$dt" --shape 2,3,7 --dtype "$dt" -o "d_$dt.nps"
done
"$PY" "$NP" dump d_f8.nps d_f4.nps d_i8.nps d_i4.nps d_u8.nps d_u1.nps > dump.txt
[ "$(cat dump.txt)" = "$(for dt in f8 f4 i8 i4 u8 u1; do echo "d_$dt $dt [2, 3, 7]"; done)" ] \
  || fail "numpipe.py dump of every dtype: $(cat dump.txt)"

# A large array through a pipe (many zstd blocks, payload decoded straight into the array).
gen-input array --shape 1000,1000 --fill linspace --lo -1 --hi 1 \
  | "$PY" -c '
import numpy as np, numpipe
a = numpipe.read("-")["x"]
n = a.size
assert a.shape == (1000, 1000) and np.array_equal(a.ravel(), -1.0 + 2.0 * np.arange(n) / (n - 1))
' || fail "large array from a pipe"

# ---- 2. Python writes, the C++ tools read ----------------------------------------------

"$PY" - <<'PY' || fail "python write"
import numpy as np, numpipe
rng = np.random.default_rng(5)
arrays = {
    "field": rng.standard_normal((16, 9)),                        # f8
    "single": rng.random(50).astype(np.float32),                  # f4
    "counts": np.arange(-20, 20, dtype=">i8").reshape(5, 8),      # big-endian -> <i8
    "index": np.arange(30, dtype=np.int32)[::3],                  # strided -> contiguous
    "mask": np.array([[True, False, True]]),                      # bool -> u1
    "bytes": np.arange(256, dtype=np.uint8),
    "big": np.array([2**64 - 1, 0, 12345], dtype=np.uint64),
    "small": np.arange(-3, 3, dtype=np.int16),                    # int16 -> i4 (exact)
    "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),  # C order on disk
}
numpipe.write("py.nps", arrays, attrs={"kind": "pytest", "units": "m", "n": np.int64(7)},
              attrs_by_name={"field": {"units": "K"}})
# Perturb one value of one array by 1e-3 relative: verify --rtol 1e-6 must fail.
arrays["field"] = arrays["field"].copy()
arrays["field"][3, 4] *= 1 + 1e-3
numpipe.write("py-perturbed.nps", arrays, attrs={"kind": "pytest", "units": "m", "n": 7},
              attrs_by_name={"field": {"units": "K"}})
# Refusals: no silent lossy conversion, no NaN in JSON attrs, no half-written file.
for bad in (np.array([1 + 2j]), np.array(["text"]), np.array([1.0], dtype=np.longdouble),
            np.array([None]), np.ma.masked_array([1.0], mask=[True])):
    try:
        numpipe.write("refused.nps", {"z": bad})
        raise SystemExit("accepted dtype %s" % bad.dtype)
    except ValueError as e:
        assert "'z'" in str(e), e
try:
    numpipe.write("refused.nps", {"z": [1.0]}, attrs={"bad": float("nan")})
    raise SystemExit("accepted NaN attrs")
except ValueError as e:
    assert "JSON" in str(e), e
try:
    numpipe.write("refused.nps", {"z": [1.0]}, attrs_by_name={"typo": {}})
    raise SystemExit("accepted attrs_by_name for an unknown record")
except ValueError:
    pass
import os
assert not os.path.exists("refused.nps")
# Python reads back what it wrote, exactly.
back = numpipe.read("py.nps")
assert list(back) == list(arrays)
for k, v in arrays.items():
    if k != "field":
        assert np.array_equal(back[k], np.asarray(v)), k
assert back["mask"].dtype == np.uint8 and back["small"].dtype == np.dtype("<i4") and back["counts"].dtype == np.dtype("<i8")
PY
no_leftovers .
verify py.nps py.nps > out.txt || fail "verify py.nps py.nps should pass: $(cat out.txt)"
grep -q 'verify: 9 arrays within tolerance' out.txt || fail "verify summary: $(cat out.txt)"
expect_exit 1 "" -- verify py-perturbed.nps py.nps --rtol 1e-6
grep -q '^field .*FAIL' "$WORK/.stdout" || fail "verify should name the perturbed array: $(cat "$WORK/.stdout")"
grep -q 'over=1 ' "$WORK/.stdout" || fail "exactly one element should be over: $(cat "$WORK/.stdout")"
verify py-perturbed.nps py.nps --rtol 2e-3 > /dev/null || fail "a 1e-3 perturbation is within rtol 2e-3"

# inspect sees the names, dtypes, shapes, attrs and values Python wrote.
inspect --json --values 256 py.nps > py.json
"$PY" - <<'PY' || fail "inspect --json of python output"
import json, numpy as np
recs = json.load(open("py.json"))
got = [(r["name"], r["dtype"], r["shape"]) for r in recs]
assert got == [("field", "f8", [16, 9]), ("single", "f4", [50]), ("counts", "i8", [5, 8]), ("index", "i4", [10]),
               ("mask", "u1", [1, 3]), ("bytes", "u1", [256]), ("big", "u8", [3]), ("small", "i4", [6]),
               ("fortran", "f8", [3, 4])], got
by = {r["name"]: r for r in recs}
assert by["field"]["attrs"]["units"] == "K" and by["single"]["attrs"]["units"] == "m"
for r in recs:
    a = r["attrs"]
    assert a["kind"] == "pytest" and a["n"] == 7, a
    assert a["history"][-1]["tool"] == "numpipe.py", a
assert by["counts"]["values"] == list(range(-20, 20))
assert by["index"]["values"] == list(range(0, 30, 3))
assert by["mask"]["values"] == [1, 0, 1]
assert by["bytes"]["values"] == list(range(256))
assert by["big"]["values"] == [float(2**64 - 1), 0, 12345]
assert by["fortran"]["values"] == list(np.arange(12.0))
assert by["counts"]["stats"]["min"] == -20 and by["counts"]["stats"]["max"] == 19
PY

# A pipe through all three: C++ generates, Python doubles the array, C++ verifies.
gen-input array --shape 40,25 --fill linspace --lo 0 --hi 1 -o lin.nps
gen-input array --shape 40,25 --fill linspace --lo 0 --hi 2 -o lin2.nps
gen-input array --shape 40,25 --fill linspace --lo 0 --hi 1 \
  | "$PY" -c '
import numpipe
name, a, attrs = next(numpipe.records("-"))
numpipe.write("-", {name: 2 * a}, attrs=attrs)
' | verify --against lin2.nps --rtol 1e-15 > out.txt || fail "C++ -> python -> verify pipe: $(cat out.txt)"
"$PY" -c 'import numpipe; numpipe.write("-", {"x": [1, 2, 3]})' | inspect --json --values 3 > out.txt
grep -q '"dtype": "i8"' out.txt || fail "python to stdout, inspect from stdin: $(cat out.txt)"
"$PY" -c 'import numpipe; numpipe.write("-", {"x": [1.0]})' | "$PY" "$NP" dump > out.txt
[ "$(cat out.txt)" = "x f8 [1]" ] || fail "python to stdout, python from stdin: $(cat out.txt)"

# ---- 3. Concatenated streams ------------------------------------------------------------

gen-input array --name first --shape 4 --fill linspace --lo 1 --hi 4 -o c1.nps
gen-input array --name second --shape 2,2 --dtype i4 --fill ones -o c2.nps
cat c1.nps c2.nps py.nps c1.nps > cat.nps
"$PY" - <<'PY' || fail "python read of concatenated streams"
import numpy as np, numpipe
names = [r.name for r in numpipe.records("cat.nps")]
assert names == ["first", "second", "field", "single", "counts", "index", "mask", "bytes", "big", "small",
                 "fortran", "first"], names
d = numpipe.read(open("cat.nps", "rb"))
assert np.array_equal(d["first"], [1.0, 2.0, 3.0, 4.0])
assert d["second"].dtype == np.dtype("<i4") and np.array_equal(d["second"], np.ones((2, 2)))
assert len(d) == 11
PY
np-testcraft two-streams > two.nps
[ "$("$PY" "$NP" dump two.nps | grep -c '^x f8 \[2\]$')" = 2 ] || fail "two-streams: two records"
[ "$("$PY" "$NP" dump < cat.nps | wc -l)" = 12 ] || fail "numpipe.py dump of cat.nps"

# ---- 4. Damaged inputs --------------------------------------------------------------------

# Truncated and corrupted real files.
: > rejects.txt
gen-input array --shape 5000 --fill normal -o big.nps
size=$(stat -c %s big.nps)
head -c $((size / 2)) big.nps > cut.nps
reject cut.nps "truncated zstd frame"
head -c $((size - 2)) big.nps > cut-checksum.nps
reject cut-checksum.nps "truncated zstd frame"
"$PY" - <<'PY'
data = bytearray(open("big.nps", "rb").read())
data[-1] ^= 0x5A                      # the frame's content checksum
open("bad-sum.nps", "wb").write(bytes(data))
data[-1] ^= 0x5A
data[2000] ^= 0xFF                    # inside the compressed payload
open("flipped.nps", "wb").write(bytes(data))
PY
reject bad-sum.nps "checksum mismatch"
reject flipped.nps "corrupt"
: > empty.nps
reject empty.nps "empty input"
(cat c1.nps; printf 'garbage after the stream') > tail.nps
reject tail.nps "garbage where a zstd frame should start"

# Malformed streams, each breaking one rule (the same messages as the C++ reader's).
check_case() { np-testcraft "$1" > "$1.nps"; reject "$1.nps" "$2"; }
each_malformed_stream check_case max_bytes
"$PY" reject_check.py rejects.txt || fail "python accepted or misreported damaged input (NUMPIPE_PY_ZSTD=$backend)"
dump_rejects cut.nps "truncated zstd frame"
dump_rejects bad-sum.nps "checksum mismatch"
dump_rejects bad-magic.nps "bad magic"
dump_rejects missing-end.nps "missing end record"
np-testcraft valid > ok.nps
[ "$("$PY" "$NP" dump ok.nps)" = "x f8 [2]" ] || fail "np-testcraft valid"

# max_bytes bounds one payload, as --max-bytes does for the tools.
gen-input array --shape 100 -o hundred.nps
"$PY" - <<'PY' || fail "max_bytes"
import numpipe
try:
    numpipe.read("hundred.nps", max_bytes=799)
    raise SystemExit("accepted 800 bytes with max_bytes=799")
except numpipe.FormatError as e:
    assert "over the max_bytes limit of 799 bytes" in str(e), e
assert numpipe.read("hundred.nps", max_bytes=800)["x"].shape == (100,)
PY

no_leftovers .
done
unset NUMPIPE_PY_ZSTD

# The default backend: python-zstandard where it imports, else libzstd through ctypes
# (a zstandard module that fails to import stands for a machine without it).
mkdir -p nozstandard && echo 'raise ImportError("not installed here")' > nozstandard/zstandard.py
if "$PY" -c 'import zstandard' 2> /dev/null; then
  NUMPIPE_PY_ZSTD= "$PY" -c 'import numpipe; print(numpipe.zstd_backend())' | grep -q '^python-zstandard ' ||
    fail "python-zstandard is installed but not the default backend"
fi
PYTHONPATH="$PWD/nozstandard:$PYTHONPATH" "$PY" -c 'import numpipe; print(numpipe.zstd_backend())' > out.txt
grep -q '^libzstd .*(ctypes)$' out.txt || fail "without python-zstandard the backend is $(cat out.txt), not libzstd"
PYTHONPATH="$PWD/nozstandard:$PYTHONPATH" NUMPIPE_PY_ZSTD=zstandard "$PY" -c 'import numpipe; numpipe.zstd_backend()' \
  2> out.txt && fail "NUMPIPE_PY_ZSTD=zstandard without the module was accepted"
grep -q "python3-zstandard" out.txt || fail "NUMPIPE_PY_ZSTD=zstandard without the module: $(cat out.txt)"

# numpipe.py's own command line.
expect_exit 2 "unknown command" -- "$PY" "$NP" frobnicate
"$PY" "$NP" --version > out.txt && grep -q '^numpipe.py .*NumPy' out.txt || fail "numpipe.py --version: $(cat out.txt)"
"$PY" "$NP" --help > out.txt && grep -q 'dump' out.txt || fail "numpipe.py --help"
# A closed pipe (dump | head) is not an error.
cat c1.nps c1.nps c1.nps > three.nps
"$PY" "$NP" dump --values three.nps | head -1 > out.txt || fail "numpipe.py dump | head"
expect_exit 2 "cannot read input" -- "$PY" "$NP" dump no-such-file.nps
