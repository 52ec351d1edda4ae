# nps-export --to vtk, read back by a small .vti parser written here in Python
# (XML header, appended raw blocks with UInt64 byte counts): extents, origin and
# spacing from the grid attrs, ns-step's [x, y, z] storage reordered to VTK's x
# fastest, the velocity vector, one file per snapshot plus the .pvd collection
# with its times; a failed export leaves no files behind.
require_python
require_tool fluid-step
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

cat > vti.py <<'PY'
import numpy as np, xml.etree.ElementTree as ET
TYPES = {"Float64": "<f8", "Float32": "<f4", "Int64": "<i8", "Int32": "<i4", "UInt64": "<u8", "UInt8": "u1"}
def read_vti(path):
    raw = open(path, "rb").read()
    start = raw.index(b'<AppendedData encoding="raw">')
    data = raw.index(b"_", start) + 1
    root = ET.fromstring(raw[:start].decode() + "</VTKFile>")
    assert root.get("type") == "ImageData" and root.get("header_type") == "UInt64" and root.get("byte_order") == "LittleEndian"
    image = root.find("ImageData")
    ext = [int(v) for v in image.get("WholeExtent").split()]
    n = (ext[1] - ext[0] + 1, ext[3] - ext[2] + 1, ext[5] - ext[4] + 1)
    out = {"n": n, "origin": [float(v) for v in image.get("Origin").split()],
           "spacing": [float(v) for v in image.get("Spacing").split()], "arrays": {}}
    time = image.find("FieldData/DataArray[@Name='TimeValue']")  # the field data also holds "units"
    if time is not None:
        out["time"] = float(time.text)
    for a in image.find("Piece").find("PointData").findall("DataArray"):
        off = data + int(a.get("offset"))
        size = int(np.frombuffer(raw, "<u8", 1, off)[0])
        comps = int(a.get("NumberOfComponents", "1"))
        v = np.frombuffer(raw, TYPES[a.get("type")], size // np.dtype(TYPES[a.get("type")]).itemsize, off + 8)
        assert v.size == n[0] * n[1] * n[2] * comps, (a.get("Name"), v.size, n, comps)
        # VTK order: x fastest, then y, then z -> array [z, y, x(, comp)]
        out["arrays"][a.get("Name")] = v.reshape((n[2], n[1], n[0]) + ((comps,) if comps > 1 else ()))
    return out
PY

# ns-like state [x, y, z] (z fastest) with a grid, and two snapshots.
"$PY" - <<'PY'
import numpipe, numpy as np
grid = {"dims": ["x", "y", "z"], "origin": [0.0, -1.0, 2.0], "spacing": [0.5, 0.25, 2.0]}
rng = np.random.default_rng(2)
f = {k: rng.standard_normal((3, 4, 5)) for k in ("rho", "vx", "vy", "vz")}
with numpipe.Writer("ns.nps") as w:
    for k in range(2):
        for name in ("vx", "vy", "vz"):
            w.write("snap_" + name, f[name] * (k + 1), {"kind": "ns.snapshot", "step": 5 * k, "time": 0.5 * k, "grid": grid})
    for name, a in f.items():
        w.write(name, a, {"kind": "ns.state", "grid": grid})
np.save("ns.npy", np.stack([f[k] for k in ("rho", "vx", "vy", "vz")]))
PY
nps-export -i ns.nps -o state.vti
nps-export -i ns.nps -o run.pvd
[ -f run_0000.vti ] && [ -f run_0001.vti ] && [ ! -e run_0002.vti ] || fail "expected run_0000.vti and run_0001.vti: $(ls)"

# fluid-step's own output: [y, x] fields, snapshots every 2 steps.
gen-input fluid --n 16 | fluid-step --steps 4 --snapshot-every 2 -o fl.nps
nps-export -i fl.nps -o fl.vti
nps-export -i fl.nps -o series/fl.pvd 2>/dev/null && fail "a missing folder should fail" || true
mkdir -p series && nps-export -i fl.nps -o series/fl.pvd

"$PY" - <<'PY' || fail "the VTK files differ from the streams"
import numpipe, numpy as np, xml.etree.ElementTree as ET
from vti import read_vti
ns = np.load("ns.npy")
s = read_vti("state.vti")
assert s["n"] == (3, 4, 5) and s["origin"] == [0.0, -1.0, 2.0] and s["spacing"] == [0.5, 0.25, 2.0], s
for i, name in enumerate(("rho", "vx", "vy", "vz")):
    # stored [x, y, z]; VTK arrays come back [z, y, x]
    assert np.array_equal(s["arrays"][name], ns[i].transpose(2, 1, 0)), name
vel = s["arrays"]["velocity"]
assert vel.shape == (5, 4, 3, 3) and np.array_equal(vel[..., 2], ns[3].transpose(2, 1, 0))

pvd = ET.parse("run.pvd").getroot()
sets = pvd.find("Collection").findall("DataSet")
assert [d.get("file") for d in sets] == ["run_0000.vti", "run_0001.vti"] and [float(d.get("timestep")) for d in sets] == [0.0, 0.5]
for k in range(2):
    r = read_vti("run_%04d.vti" % k)
    assert r["time"] == 0.5 * k and sorted(r["arrays"]) == ["velocity", "vx", "vy", "vz"], r["arrays"].keys()
    assert np.array_equal(r["arrays"]["vy"], (ns[2] * (k + 1)).transpose(2, 1, 0))

f = numpipe.read("fl.nps")
v = read_vti("fl.vti")
assert v["n"] == (18, 18, 1) and v["arrays"]["d"].dtype == f["d"].dtype
assert np.array_equal(v["arrays"]["d"][0], f["d"]) and np.array_equal(v["arrays"]["velocity"][0, :, :, 1], f["v"])
assert np.all(v["arrays"]["velocity"][..., 2] == 0), "2-D velocity has a zero z component"
sets = ET.parse("series/fl.pvd").getroot().find("Collection").findall("DataSet")
assert [d.get("file") for d in sets] == ["fl_0000.vti", "fl_0001.vti"], "collection entries are relative to the .pvd"
recs = [a for n, a, _ in numpipe.records("fl.nps") if n == "snap_d"]
assert np.array_equal(read_vti("series/fl_0001.vti")["arrays"]["d"][0], recs[1])
PY

expect_exit 2 "--to vtk: -o must end in .vti (one state) or .pvd (a time series), got 'x.vtk'" -- nps-export -i fl.nps --to vtk -o x.vtk
expect_exit 2 "--to vtk writes files" -- nps-export -i fl.nps --to vtk
gen-input array --shape 5 -o line.nps
expect_exit 2 "the stream holds no 2-D or 3-D field" -- nps-export -i line.nps -o x.vti
"$PY" -c '
import numpipe, numpy as np
with numpipe.Writer("snaps.nps") as w:
    for k in range(2): w.write("snap_d", np.zeros((3, 3)), {"kind": "fluid.snapshot", "step": k})'
expect_exit 2 "holds only snapshot series; write a collection with -o NAME.pvd" -- nps-export -i snaps.nps -o x.vti
[ ! -e x.vti ] || fail "a refused export left x.vti"
no_leftovers .
no_leftovers series
