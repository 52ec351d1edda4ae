# nps-export --to netcdf, read back with python3-netcdf4 (and xarray where present):
# dimensions and coordinate variables from the grid attrs, the time axis of a
# snapshot series, labels as strings, table columns as variables, mle-fit's level
# dimension, units and long names, global attributes and history, zlib
# compression, values bit for bit. Skips when the build or Python lacks NetCDF.
require_python
require_tool mle-fit
"$PY" -c 'import netCDF4' 2>/dev/null || { echo "SKIP: python3-netcdf4 not installed"; exit 77; }
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
gen-input array --shape 2 -o tiny.nps
rc=0; nps-export -i tiny.nps -o probe.nc 2> probe.err || rc=$?
if [ "$rc" = 2 ] && grep -q "built without NetCDF" probe.err; then
  grep -q "libnetcdf-dev" probe.err || fail "the refusal does not name the package: $(cat probe.err)"
  echo "SKIP: this build has no NetCDF"; exit 77
fi
[ "$rc" = 0 ] || fail "nps-export -o probe.nc failed: $(cat probe.err)"

# A fluid-like run: three snapshots with time, step and grid attrs, the final
# state, a diagnostics table; labels of the y axis; f4 and f8.
"$PY" - <<'PY'
import numpipe, numpy as np
grid = {"dims": ["y", "x"], "origin": [0.5, 0.25], "spacing": [0.5, 0.25]}
rng = np.random.default_rng(1)
snaps = [rng.standard_normal((4, 6)).astype(np.float32) for _ in range(3)]
with numpipe.Writer("run.nps") as w:
    for k, s in enumerate(snaps):
        a = {"kind": "fluid.snapshot", "step": 10 * (k + 1), "time": 0.1 * (k + 1), "grid": grid, "units": "kg/m^3"}
        w.write("snap_d", s, a)
    w.write("d", snaps[-1].astype(np.float64), {"kind": "fluid.state", "grid": grid, "units": "kg/m^3",
            "description": "density", "history": [{"tool": "fluid-step", "command": "fluid-step --steps 30"}], "viscosity": 0.001})
    w.write("diagnostics", np.array([[0, 1.5], [10, 1.25]]), {"kind": "fluid.diagnostics", "columns": ["step", "total_density"]})
    w.write("y_names", np.array([list(s.ljust(3, b"\0")) for s in [b"a", b"bb", b"ccc", b"d,e"]], dtype=np.uint8),
            {"kind": "labels", "labels_of": "y", "column": "row name"})
PY
nps-export -i run.nps -o run.nc --deflate 4
gen-input mle --length 1500 --seed 3 | mle-fit --window 500 --step 250 --quantiles 0.01,0.05 -o fits.nps
nps-export -i fits.nps --to netcdf > fits.nc

"$PY" - <<'PY' || fail "the NetCDF files differ from the streams"
import numpipe, numpy as np, netCDF4
ds = netCDF4.Dataset("run.nc")
src = list(numpipe.records("run.nps"))
assert ds.file_format == "NETCDF4", ds.file_format
assert ds.Conventions == "CF-1.8"
assert "fluid-step --steps 30" in ds.history and "nps-export -i run.nps -o run.nc --deflate 4" in ds.history, ds.history
assert ds.kind == "fluid.state" and abs(ds.viscosity - 0.001) < 1e-18, ds.ncattrs()
assert dict((k, len(v)) for k, v in ds.dimensions.items()) == {"time": 3, "y": 4, "x": 6, "diagnostics_row": 2}, ds.dimensions
# Coordinates from the grid attrs and from the snapshots' time and step.
assert ds["x"][:].tolist() == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5] and ds["x"].axis == "X"
assert ds["y"][:].tolist() == [0.5, 1.0, 1.5, 2.0] and ds["y"].axis == "Y"
assert ds["time"][:].tolist() == [0.1 * (k + 1) for k in range(3)] and ds["time"].axis == "T" and ds["time"].standard_name == "time"
assert ds["step"][:].tolist() == [10, 20, 30] and ds["step"].dimensions == ("time",)
# The series and the final state, bit for bit, with units, long_name, auxiliary coordinates.
snap = ds["snap_d"]
assert snap.dimensions == ("time", "y", "x") and snap.dtype == np.float32 and snap.units == "kg/m^3"
want = np.stack([a for n, a, _ in src if n == "snap_d"])
assert np.array_equal(snap[:].data, want)
assert snap.filters()["zlib"] and snap.filters()["complevel"] == 4 and snap.chunking()[0] == 1, (snap.filters(), snap.chunking())
d = ds["d"]
assert d.dimensions == ("y", "x") and d.dtype == np.float64 and d.long_name == "density"
assert np.array_equal(d[:].data, [a for n, a, _ in src if n == "d"][0])
assert d.coordinates == "row_name", d.coordinates
assert "units" not in ds.ncattrs() and "description" not in ds.ncattrs(), "a variable's own attrs are not the file's"
# Labels as strings; the table's columns as variables.
names = [v for v in ds.variables if ds[v].dtype == str]
assert len(names) == 1 and list(ds[names[0]][:]) == ["a", "bb", "ccc", "d,e"], names
assert ds["diagnostics_total_density"][:].tolist() == [1.5, 1.25] and ds["diagnostics_step"].dimensions == ("diagnostics_row",)
ds.close()

# mle-fit: the quantiles keep a level dimension with the probability levels.
f = netCDF4.Dataset("fits.nc")
src = numpipe.read("fits.nps")
q = f["quantiles"]
assert q.dimensions == ("series", "window", "level"), q.dimensions
assert f["level"][:].tolist() == [0.01, 0.05]
assert np.array_equal(q[:].data, src["quantiles"])
assert np.array_equal(f["theta"][:].data, src["theta"]) and np.array_equal(f["start"][:].data, src["start"])
f.close()

try:
    import xarray
except ImportError:
    xarray = None
if xarray is not None:  # a second reader
    x = xarray.open_dataset("run.nc")
    assert x["snap_d"].shape == (3, 4, 6) and float(x["x"][1]) == 0.5 and list(x["time"].values) == [0.1 * (k + 1) for k in range(3)]
    assert list(x["row_name"].values) == ["a", "bb", "ccc", "d,e"]
    x.close()
PY
expect_exit 2 "--records: no record 'zz' in the stream" -- nps-export -i run.nps --records zz -o x.nc
[ ! -e x.nc ] || fail "a refused export left x.nc"
no_leftovers .

# A full disk: exit 3 naming "No space left on device" at every fill level, never a
# crash in HDF5's clean-up, and no file left behind. A small tmpfs in a mount namespace
# of our own (as root, or in a user namespace where the kernel allows one).
gen-input array --shape 100000 --fill uniform -o full-in.nps
cat > full.sh <<'SH'
set -u
mkdir -p full
for kb in 4 8 16 24 48 64 128 200 300 400 550 700 800 900 1000 1200; do
  mount -t tmpfs -o size=${kb}k tmpfs full || { echo "cannot mount"; exit 1; }
  rc=0; nps-export -i full-in.nps --to netcdf -o full/out.nc 2> full.err || rc=$?
  left=$(ls -A full)
  umount full
  [ "$rc" = 3 ] || { echo "$kb KiB free: exit $rc (not 3): $(cat full.err)"; exit 1; }
  grep -q "No space left on device" full.err || { echo "$kb KiB free: the cause is not named: $(cat full.err)"; exit 1; }
  [ -z "$left" ] || { echo "$kb KiB free: left $left"; exit 1; }
done
echo ok
SH
ns=
if unshare --mount true 2> /dev/null; then ns="unshare --mount"
elif unshare --user --map-root-user --mount true 2> /dev/null; then ns="unshare --user --map-root-user --mount"; fi
if [ -n "$ns" ] && $ns bash -c 'mkdir -p probe && mount -t tmpfs -o size=64k tmpfs probe' 2> /dev/null; then
  out=$($ns bash full.sh 2>&1) || fail "nps-export on a full file system: $out"
else
  echo "note: cannot mount a small tmpfs here (needs root or user namespaces): the full-disk case is not tested" >&2
fi
no_leftovers .
