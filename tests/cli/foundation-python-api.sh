# numpipe.read keeps every record reachable (attrs, repeated names in order) and
# still works as the dict {name: first array} earlier scripts use; __all__;
# to_xarray names dimensions and coordinates from the attrs and the workloads'
# tables, and says what to install without xarray.
require_python
export PYTHONPATH="$SRC/share/python"

# A snapshot series from fluid-step, and a stream with everything to_xarray reads.
gen-input fluid --n 16 --scene vortex | fluid-step --steps 12 --snapshot-every 4 -o run.nps
"$PY" - <<'EOF' || fail "numpipe.read / Stream"
import numpipe, numpy as np
run = numpipe.read("run.nps")
assert isinstance(run, dict)
# Existing callers: a dict from name to the first record's array.
assert run["d"].shape == (18, 18) and "snap_d" in run
assert list(run.keys())[:3] == ["snap_d", "snap_u", "snap_v"], list(run.keys())
# Attrs, every record, a series in order.
assert run.attrs["d"]["step"] == 12, run.attrs["d"]
assert run.counts()["snap_d"] == 3
steps = [a["step"] for a in run.series_attrs("snap_d")]
assert steps == [4, 8, 12], steps
frames = run.series("snap_d")
assert frames.shape == (3, 18, 18)
assert np.array_equal(frames[0], run["snap_d"]) and not np.array_equal(frames[0], frames[2])
assert np.array_equal(frames[2], run["d"])  # the last snapshot is the final state
assert [r.name for r in run.records] == [r.name for r in numpipe.records("run.nps")]
try:
    run.all("nothing")
    raise SystemExit("all() of a missing name did not raise KeyError")
except KeyError:
    pass
for name in numpipe.__all__:
    assert hasattr(numpipe, name), name
assert {"read", "records", "write", "Writer", "Stream", "to_xarray", "FormatError"} <= set(numpipe.__all__)
EOF

# Without xarray: a clear ImportError that says what to install.
"$PY" - <<'EOF' || fail "to_xarray without xarray"
import sys
sys.modules["xarray"] = None          # as if python3-xarray were not installed
import numpipe
try:
    numpipe.to_xarray("run.nps")
except ImportError as e:
    assert "python3-xarray" in str(e) and "pip install xarray" in str(e), str(e)
else:
    raise SystemExit("no ImportError")
EOF

if ! "$PY" -c 'import xarray' 2> /dev/null; then
  echo "SKIP (partly): no xarray (Debian: python3-xarray): to_xarray's Datasets not checked"; exit 0
fi

"$PY" - <<'EOF' || fail "to_xarray"
import numpy as np, numpipe
# Grid attrs, a snapshot series with times, a table with named columns, labels.
with numpipe.Writer("mixed.nps") as w:
    grid = {"dims": ["y", "x"], "origin": [0.5, 0.25], "spacing": [1.0, 0.5]}
    for k in range(3):
        w.write("snap_q", np.full((4, 5), float(k)), {"kind": "t.snapshot", "step": 10 * k, "time": 0.1 * k, "grid": grid})
    w.write("q", np.zeros((4, 5)), {"grid": grid, "units": "m"})
    w.write("table", np.arange(6.0).reshape(3, 2), {"columns": ["a", "b"]})
    w.write("window_label", np.frombuffer(b"2020-01-01" + b"2020-01-02" + b"2020-01-03", dtype=np.uint8).reshape(3, 10),
            {"kind": "labels", "labels_of": "window", "column": "date"})
    w.write("fit", np.arange(3.0).reshape(1, 3), {"kind": "mle.fit", "windows": 3})
ds = numpipe.to_xarray("mixed.nps")
assert ds["q"].dims == ("y", "x"), ds["q"].dims
assert np.allclose(ds["x"].values, [0.25, 0.75, 1.25, 1.75, 2.25]) and np.allclose(ds["y"].values, [0.5, 1.5, 2.5, 3.5])
assert ds["snap_q"].dims == ("time", "y", "x"), ds["snap_q"].dims
assert np.allclose(ds["time"].values, [0.0, 0.1, 0.2]) and list(ds["step"].values) == [0, 10, 20]
assert float(ds["snap_q"].sel(time=0.2).mean()) == 2.0
# nps-export's layout: a table's columns as variables NAME_COLUMN, dates as datetime64.
assert ds["table_a"].dims == ("table_row",) and list(ds["table_b"].values) == [1.0, 3.0, 5.0]
assert ds["fit"].dims == ("series", "window"), ds["fit"].dims
assert [str(d)[:10] for d in ds["date"].values] == ["2020-01-01", "2020-01-02", "2020-01-03"], ds["date"]
assert ds["q"].attrs["units"] == "m"
EOF

# The workloads' tables: strikes (price), years (integrate), windows and levels (mle-fit).
command -v price > /dev/null && gen-input price --dataset small | price --backend cpu -o prices.nps
command -v integrate > /dev/null && gen-input integrate --portfolio 2 --seed 1 --steps 2,2,2 | integrate --backend cpu -o reserves.nps
command -v mle-fit > /dev/null && gen-input mle --length 400 --seed 1 | mle-fit --window 100 --step 50 --quantiles 0.01,0.05 -o fits.nps
"$PY" - <<'EOF' || fail "to_xarray of the workloads' outputs"
import os, numpy as np, numpipe
if os.path.exists("prices.nps"):
    ds = numpipe.to_xarray("prices.nps")
    assert ds["price"].dims == ("strike",) and np.isclose(float(ds["strike"][5]), 0.005)
if os.path.exists("reserves.nps"):
    ds = numpipe.to_xarray("reserves.nps")
    assert ds["reserve"].dims == ("policy", "year") and int(ds["year"][-1]) == 120
    assert ds["reserve0"].dims == ("policy",)
if os.path.exists("fits.nps"):
    ds = numpipe.to_xarray("fits.nps")
    assert ds["p"].dims == ("series", "window"), ds["p"].dims
    assert ds["quantiles"].dims == ("series", "window", "level") and list(ds["level"].values) == [0.01, 0.05]
EOF
