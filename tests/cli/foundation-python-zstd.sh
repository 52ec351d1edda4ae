# numpipe.py's python-zstandard reader and its libzstd (ctypes) reader agree on a stream
# of many payload frames (decoded whole by python-zstandard, as they state their size)
# and on every damage to it: truncated anywhere, a bit flipped anywhere, a frame stating
# a size other than the one it holds: the same arrays, or the same FormatError.
require_python
"$PY" -c 'import zstandard' 2> /dev/null || { echo "SKIP: python3-zstandard not installed"; exit 77; }
export PYTHONPATH="$SRC/share/python"
gen-input array --shape 700000 --fill uniform --seed 2 -o m.nps      # 5.6 MB: 6 payload frames
gen-input array --name y --shape 3,5 --fill linspace -o small.nps
cat m.nps small.nps > two.nps                                         # streams one after the other
"$PY" - <<'PYEOF' || fail "python-zstandard and libzstd disagree"
import os, random, numpy as np, numpipe

def outcome(data, backend):
    open("case.nps", "wb").write(data)
    os.environ["NUMPIPE_PY_ZSTD"] = backend
    try:
        s = numpipe.read("case.nps")
        return [(name, a.dtype.str, a.shape, a.tobytes()) for name, a, attrs in s.records]
    except numpipe.FormatError as e:
        return "refuse " + str(e)

data = open("m.nps", "rb").read()
whole = numpipe.read("m.nps")["x"]
assert whole.shape == (700000,) and whole.min() >= 0 and whole.max() < 1
for path in ("m.nps", "two.nps"):
    a, b = outcome(open(path, "rb").read(), "zstandard"), outcome(open(path, "rb").read(), "libzstd")
    assert a == b and not isinstance(a, str), path
    assert np.array_equal(np.frombuffer(a[0][3], "<f8"), whole)

rng = random.Random(7)
cases = [data[:n] for n in rng.sample(range(len(data)), 30)] + [data[:-1], data[:-4]]
for _ in range(30):
    b = bytearray(data)
    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    cases.append(bytes(b))
# A payload frame stating 1 MiB + 4 KiB: libzstd refuses it when it ends short.
import zstandard
at = 0
while True:  # the first frame that states its size (after the record's header frame)
    at = data.index(b"\x28\xb5\x2f\xfd", at + 1)
    params = zstandard.get_frame_parameters(data[at:at + 18])
    if params.content_size < zstandard.CONTENTSIZE_UNKNOWN:
        break
end = at + zstandard.frame_header_size(data[at:at + 18])
lie = bytearray(data); lie[end - 4:end] = (params.content_size + 4096).to_bytes(4, "little")
cases.append(bytes(lie))
refused = 0
for i, case in enumerate(cases):
    a, b = outcome(case, "zstandard"), outcome(case, "libzstd")
    assert a == b, (i, str(a)[:200], str(b)[:200])
    refused += isinstance(a, str)
assert refused >= len(cases) - 3, refused   # nearly every damage is refused (a flip in a JSON header's text may not be)
print("cases", len(cases), "refused", refused)
PYEOF
no_leftovers .
