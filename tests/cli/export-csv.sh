# nps-export --to csv, read back by Python's csv module (an independent reader):
# every cell of mle-fit's, integrate's, ns-step's and a price-like table equals the
# stream's value bit for bit; coordinates, labels (RFC 4180 quoting of commas,
# quotes and line breaks), f4 and i8 values, nan and inf; the table choice and
# --records; bad usage refused.
require_python
for t in mle-fit integrate ns-step; do require_tool $t; done
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

# ---- tools' own outputs ----------------------------------------------------------
gen-input mle --length 1500 --series 2 --seed 3 | mle-fit --window 500 --step 250 --quantiles 0.01,0.05 -o fits.nps
nps-export -i fits.nps -o fits.csv
gen-input integrate --portfolio 3 --seed 1 --steps 2,2,2 | integrate -o res.nps
nps-export -i res.nps --records reserve -o reserve.csv
nps-export -i res.nps -q -o res-all.csv
gen-input ns --n 12 --init taylor-green-3d | ns-step --steps 6 --diag-every 2 -o ns.nps
nps-export -i ns.nps -o diag.csv 2> diag.err
# the fields on a grid are not a table: left out, and named on stderr (docs/export.md); -q: nothing
grep -qx "nps-export: left out the fields on a grid: rho, vx, vy, vz (export them with --to netcdf or --to vtk)" diag.err ||
  fail "the left-out fields are not named on stderr: $(cat diag.err)"
nps-export -q -i ns.nps -o diag-q.csv 2> diag-q.err
[ ! -s diag-q.err ] || fail "nps-export -q printed: $(cat diag-q.err)"
nps-export -i ns.nps --to csv > diag-stdout.csv
cmp diag.csv diag-stdout.csv || fail "CSV to stdout differs from -o"

# ---- a crafted price-like stream: coordinates, a [maturity, strike] grid, labels ----
"$PY" - <<'PY'
import numpipe, numpy as np
with numpipe.Writer("price.nps") as w:
    w.write("strike", np.array([90.0, 100.0, 110.0]), {"dims": ["strike"], "units": "USD"})
    w.write("maturity", np.array([0.25, 1.0], dtype=np.float32), {"dims": ["maturity"], "units": "years"})
    w.write("price", np.array([[10.5, 3.25, 0.1], [14.0, 7.5, 1e-300]]), {"kind": "price.result", "dims": ["maturity", "strike"]})
    w.write("delta", np.array([[0.9, 0.5, np.nan], [0.8, 0.55, 0.2]]), {"dims": ["maturity", "strike"]})
    w.write("count", np.array([[2**62 + 1, -3, 0], [1, 2, 3]], dtype=np.int64), {"dims": ["maturity", "strike"]})
    w.write("vega", np.array([[np.inf, -np.inf, 1.4e-45], [0.1, 0.2, 0.3]], dtype=np.float32), {"dims": ["maturity", "strike"]})
    labels = [b'call, "deep"', b"at\nthe money", b"put"]
    width = max(map(len, labels))
    w.write("option_type", np.array([list(l.ljust(width, b"\0")) for l in labels], dtype=np.uint8),
            {"kind": "labels", "labels_of": "strike", "column": "option type"})
    w.write("spot", np.array([100.0]), {})
PY
nps-export -i price.nps -o price.csv 2> price.err
grep -q "left out 'spot'" price.err || fail "the record on other axes is not named on stderr: $(cat price.err)"

"$PY" - <<'PY' || fail "CSV contents differ from the streams"
import csv, math, numpipe, numpy as np

def table(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]

def same(text, value):  # the text reads back to exactly the value
    if isinstance(value, (np.floating, float)):
        if math.isnan(value): return text == "nan"
        return type(value)(float(text)) == value and np.array(type(value)(float(text))).tobytes() == np.array(value).tobytes()
    return int(text) == int(value)

# mle-fit: series, window, start, every parameter, the quantiles.
head, rows = table("fits.csv")
f = numpipe.read("fits.nps")
per_window = ["theta", "p", "s_l", "s_r", "loglik", "no_maximum", "skew", "aic", "bic"]
# Each column's units in brackets (mle-fit's: the series' pure numbers).
assert head == ["series", "window", "start [1]"] + [n + " [1]" for n in per_window] + ["quantiles_0.01 [1]", "quantiles_0.05 [1]"], head
S, W = f["theta"].shape
assert len(rows) == S * W, (len(rows), S, W)
q = len(head) - 2
for r in rows:
    s, w = int(r[0]), int(r[1])
    assert same(r[2], f["start"][w])
    for k, name in enumerate(per_window):
        assert same(r[3 + k], f[name][s, w]), (name, r[3 + k], f[name][s, w])
    assert same(r[q], f["quantiles"][s, w, 0]) and same(r[q + 1], f["quantiles"][s, w, 1])

# integrate: policy, year, reserve (NaN past 120 - x as "nan").
head, rows = table("reserve.csv")
res = numpipe.read("res.nps")["reserve"]
assert head == ["policy", "year", "reserve [1]"], head
assert len(rows) == res.size
for r in rows:
    assert same(r[2], res[int(r[0]), int(r[1])]), r
assert any(r[2] == "nan" for r in rows), "no year past the policy's end"
head, rows = table("res-all.csv")
assert head[:5] == ["policy", "year", "g [year]", "r [year]", "x [year]"] and "reserve [1]" in head and "reserve0 [1]" in head, head

# ns-step diagnostics: one row per diagnostics step, every named column.
head, rows = table("diag.csv")
d = list(numpipe.records("ns.nps"))
diag = [a for n, a, _ in d if n == "diagnostics"][0]
cols = [at for n, _, at in d if n == "diagnostics"][0]["columns"]
assert head == ["diagnostics_row"] + [c + " [1]" for c in cols], head
assert [int(float(r[1])) for r in rows] == [0, 2, 4, 6]
for i, r in enumerate(rows):
    for j in range(len(cols)):
        assert same(r[1 + j], diag[i, j]), (i, j)

# price-like: maturity and strike coordinates (f4 printed as f4), labels quoted, i8 exact, specials.
head, rows = table("price.csv")
assert head == ["maturity [years]", "strike [USD]", "option type", "price", "delta", "count", "vega"], head
p = numpipe.read("price.nps")
assert len(rows) == 6
labels = ['call, "deep"', "at\nthe money", "put"]
for i, r in enumerate(rows):
    m, s = divmod(i, 3)
    assert r[0] == ("0.25" if m == 0 else "1") and same(r[0], np.float32(p["maturity"][m])), r[0]
    assert same(r[1], p["strike"][s]) and r[2] == labels[s], r
    assert same(r[3], p["price"][m, s]) and same(r[4], p["delta"][m, s]) and same(r[5], p["count"][m, s])
    assert same(r[6], p["vega"][m, s]), (r[6], p["vega"][m, s])
assert rows[0][5] == str(2**62 + 1) and rows[2][4] == "nan" and rows[0][6] == "inf" and rows[1][6] == "-inf"
assert rows[5][3] == "1e-300" and rows[2][6] == "1e-45" and rows[3][6] == "0.1", (rows[5][3], rows[2][6], rows[3][6])
# RFC 4180 on disk: the quote doubled, the comma and the line break inside quotes.
raw = open("price.csv", newline="").read()
assert '"call, ""deep"""' in raw and '"at\nthe money"' in raw, raw
PY

# --records: a choice of columns; records on axes no table holds together are refused.
nps-export -i price.nps --records price -o p1.csv
[ "$(head -1 p1.csv)" = "maturity [years],strike [USD],option type,price" ] || fail "--records price: header $(head -1 p1.csv)"
nps-export -i price.nps --records spot -o spot.csv
[ "$(cat spot.csv)" = "$(printf 'spot_dim0,spot\n0,100')" ] || fail "--records spot: $(cat spot.csv)"
expect_exit 2 "no one table holds both" -- nps-export -i price.nps --records price,spot -o x.csv
expect_exit 2 "--records: no record 'nope' in the stream (records: strike, maturity, price" -- nps-export -i price.nps --records nope -o x.csv
expect_exit 2 "say which format: --to csv|netcdf|vtk" -- nps-export -i price.nps
expect_exit 2 "cannot tell the format from 'x.txt'" -- nps-export -i price.nps -o x.txt
expect_exit 2 "--to must be csv, netcdf or vtk, got 'xls'" -- nps-export -i price.nps --to xls -o x.csv
expect_exit 2 "--deflate must be 0 to 9, got 12" -- nps-export -i price.nps --deflate 12 -o x.nc
expect_exit 2 "empty input" -- nps-export -i /dev/null -o x.csv
printf 'not a stream' > junk.nps
expect_exit 2 "junk.nps" -- nps-export -i junk.nps -o x.csv
# Records of one name that differ in shape cannot form a series.
gen-input array --name a --shape 3 -o a3.nps
gen-input array --name a --shape 4 -o a4.nps
cat a3.nps a4.nps > a34.nps
expect_exit 2 "records 'a' differ across the stream: f8 [3] and f8 [4]" -- nps-export -i a34.nps -o x.csv
# Two records giving one axis different sizes.
"$PY" -c '
import numpipe, numpy as np
numpipe.write("clash.nps", {"a": np.zeros(3), "b": np.zeros(4)}, attrs_by_name={"a": {"dims": ["k"]}, "b": {"dims": ["k"]}})'
expect_exit 2 "record 'b' gives axis 'k' 4 points but 'a' gave it 3" -- nps-export -i clash.nps -o x.csv
[ ! -e x.csv ] || fail "a refused export left x.csv"
no_leftovers .
