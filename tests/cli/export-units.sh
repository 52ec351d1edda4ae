# Units from the tools that know them to the files users open: every workload's
# NetCDF has `units` on every numeric variable and coordinate, a snapshot series'
# global attributes are the last record's (the state the file holds), mle-fit's
# dates are a CF time coordinate with a calendar, every record the tools write in
# their common modes carries units (tests/cli/units-missing.py), mle-fit's estimates
# take the series' units (a series in K: theta K, omega K2), the CSV header carries
# "name [units]", numpipe.to_xarray names what nps-export names (the same
# dimensions, coordinates and units), VTK field data holds the units.
# Skips (saying so) without python3-netcdf4 or a NetCDF build; the to_xarray part
# without python3-xarray.
require_python
for t in fluid-step ns-step price integrate mle-fit; do require_tool $t; done
"$PY" -c 'import netCDF4' 2>/dev/null || { echo "SKIP: python3-netcdf4 not installed"; exit 77; }
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
gen-input array --shape 2 -o tiny.nps
rc=0; nps-export -i tiny.nps -o probe.nc 2> probe.err || rc=$?
if [ "$rc" = 2 ] && grep -q "built without NetCDF" probe.err; then echo "SKIP: this build has no NetCDF"; exit 77; fi

gen-input fluid --n 16 | fluid-step --steps 20 --snapshot-every 10 -o fluid.nps
gen-input ns --n 12 | ns-step --steps 4 --snapshot-every 2 -o ns.nps
gen-input price --dataset small | price -o price.nps
gen-input integrate --portfolio 3 --seed 1 --steps 2,2,2 | integrate -o integrate.nps
gen-input mle --from-text "$SRC/share/ref/mle-prices.csv" --columns close --returns log |
  mle-fit --window 250 --step 100 --quantiles 0.01 -o mle.nps
for w in fluid ns price integrate mle; do
  nps-export -q -i $w.nps -o $w.nc
  nps-export -q -i $w.nps -o $w.csv
done

"$PY" - <<'PY' || fail "units, times or global attributes missing from the NetCDF files"
import netCDF4, numpy as np, numpipe
for w in ["fluid", "ns", "price", "integrate", "mle"]:
    ds = netCDF4.Dataset(w + ".nc")
    numeric = [n for n, v in ds.variables.items() if v.dtype != str]
    assert numeric, w
    missing = [n for n in numeric if "units" not in ds[n].ncattrs()]
    assert not missing, (w, "no units on", missing)
    # The records say the same: attrs["units"] is an object of UDUNITS strings.
    for name, _, attrs in numpipe.records(w + ".nps"):
        if attrs.get("kind") != "labels":
            assert isinstance(attrs.get("units"), dict), (w, name, attrs.get("units"))
    ds.close()

# fluid: nondimensional, the time coordinate of the snapshots, global attrs from the last record.
f = netCDF4.Dataset("fluid.nc")
assert f["d"].units == "1" and f["u"].units == "1" and f["x"].units == "1" and f["time"].units == "1"
assert f["time"].standard_name == "time" and f["time"].axis == "T" and list(f["step"][:]) == [10, 20]
assert f["step"].units == "1"
assert "step" not in f["snap_d"].ncattrs() and "time" not in f["snap_d"].ncattrs(), f["snap_d"].ncattrs()
f.close()
n = netCDF4.Dataset("ns.nc")
assert n.step == 4, ("global step of the state, not of the first snapshot", n.step)
assert list(n["step"][:]) == [2, 4] and n["rho"].units == "1" and n["z"].units == "1"
assert n["diagnostics_kinetic_energy"].units == "1"
n.close()
# price and integrate: money in units 1 (CF has no currency), maturities and years in years.
assert netCDF4.Dataset("price.nc")["price"].units == "1"
i = netCDF4.Dataset("integrate.nc")
assert i["reserve"].units == "1" and i["policies_x"].units == "year" and i["steps_h1"].units == "year-1"
i.close()
# mle-fit: the windows' dates as a CF time coordinate with a calendar.
m = netCDF4.Dataset("mle.nc")
date = m["date"]
assert date.dtype == np.float64 and date.units == "days since 1970-01-01 00:00:00", date
assert date.calendar == "proleptic_gregorian" and date.standard_name == "time"
assert "date" in m["theta"].coordinates.split()
dates = netCDF4.num2date(date[:], date.units, date.calendar)
labels = [bytes(row).rstrip(b"\0").decode() for n, a, _ in numpipe.records("mle.nps") if n == "window_label" for row in a]
assert len(labels) == len(dates) > 3, (len(labels), len(dates))
for text, d in zip(labels, dates):  # the window's last date, as the CSV has it
    assert "%04d-%02d-%02d" % (d.year, d.month, d.day) == text, (text, d)
assert m["theta"].units == "1" and m["quantiles"].units == "1" and m["level"].units == "1"
m.close()
PY

# Every record the tools write in their common modes carries units (units-missing.py
# lists each record, table column or parameter without them); gen-input array alone
# writes none (it does not know what its numbers measure).
gen-input price --dataset small -o price-in.nps
price -q -i price-in.nps --greeks --implied-vol -o price-greeks.nps 2> /dev/null
gen-input price --from-text "$SRC/share/examples/price-quotes.csv" -o quotes-in.nps
price -q -i quotes-in.nps --calibrate -o price-calibrate.nps
gen-input integrate --product annuity --x 40 --deferment 25 --premium equivalence --steps 2,2,2 -o annuity-in.nps
integrate -q -i annuity-in.nps --frequency 12 -o integrate-monthly.nps
gen-input mle --length 600 --series 2 --seed 3 -o mle-in.nps
mle-fit -q -i mle-in.nps --window 200 --step 100 --refine --stderr --compare normal,t --gof --quantiles 0.01,0.05 \
  --backtest -o mle-all.nps
mle-fit -q -i mle-in.nps --window 200 --step 100 --shapes 2 --refine --stderr -o mle-shapes2.nps
gen-input mle --from-text "$SRC/share/ref/mle-prices.csv" --columns close --returns log -o returns.nps
mle-fit -q -i returns.nps --window 250 --step 250 --model garch --stderr -o mle-garch.nps 2> /dev/null
gen-input fluid --n 32,16 --length 2 --inflow left:1 --obstacle circle:0.5,0.5,0.1 -o scene-in.nps
fluid-step -q -i scene-in.nps --steps 3 --snapshot-every 1 --vorticity 0.1 -o fluid-scene.nps
gen-input ns --n 12 -o ns-in.nps
ns-step -q -i ns-in.nps --t-end 0.05 --snapshot-dt 0.02 --diag-dt 0.01 \
  --snapshot-fields rho,vorticity_z,vorticity_magnitude,q_criterion -o ns-time.nps
gen-input ns --n 24,16,1 --box 6,4,1 --body cylinder:2,2,0.5 --free-stream 1,0,0 -o body-in.nps
ns-step -q -i body-in.nps --steps 2 --diag-every 1 -o ns-body.nps
inputs=(price-in.nps quotes-in.nps annuity-in.nps mle-in.nps returns.nps scene-in.nps ns-in.nps body-in.nps)
"$PY" "$SRC/tests/cli/units-missing.py" fluid.nps ns.nps price.nps integrate.nps mle.nps price-greeks.nps \
  price-calibrate.nps integrate-monthly.nps mle-all.nps mle-shapes2.nps mle-garch.nps fluid-scene.nps ns-time.nps \
  ns-body.nps "${inputs[@]}" > missing.txt || { cat missing.txt; fail "records without units (above)"; }

# A series in kelvin: mle-fit's estimates take its units, the pure numbers stay 1, a
# variance (GARCH's omega) the square.
"$PY" -c '
import numpy as np, numpipe
x = 280 + np.random.default_rng(5).standard_normal(600)
numpipe.write("kelvin.nps", {"x": x}, attrs_by_name={"x": {"units": "K"}})'
mle-fit -q -i kelvin.nps --window 200 --step 200 --refine --stderr --compare normal,t --gof -o kelvin-fit.nps
mle-fit -q -i kelvin.nps --model garch --stderr -o kelvin-garch.nps 2> /dev/null
for f in kelvin-fit kelvin-garch price-calibrate ns-time; do nps-export -q -i $f.nps -o $f.nc; done
"$PY" - <<'PY' || fail "units of mle-fit's, price --calibrate's or ns-step's records"
import netCDF4
k = netCDF4.Dataset("kelvin-fit.nc")
want = {"theta": "K", "s_l": "K", "p": "1", "stderr_theta": "K", "stderr_s_r": "K", "stderr_p": "1",
        "theta_ci_lower": "K", "theta_ci_upper": "K", "normal_mu": "K", "normal_sigma": "K", "t_mu": "K",
        "t_sigma": "K", "t_nu": "1", "loglik_normal": "1", "aic_t": "1", "ks": "1", "ad": "1"}
got = {n: k[n].units for n in want}
assert got == want, got
g = netCDF4.Dataset("kelvin-garch.nc")
want = {"theta": "K", "sigma": "K", "omega": "K2", "garch_alpha": "1", "s_l": "1", "p": "1", "stderr_mu": "K",
        "stderr_omega": "K2", "stderr_garch_beta": "1"}
got = {n: g[n].units for n in want}
assert got == want, got
c = netCDF4.Dataset("price-calibrate.nc")
assert c["calibrated"].units == "1" and c["calibration_log_alpha"].units == "1", c
assert c["calibration_log_rho"].units == "1" and c["maturity"].units == "year"
n = netCDF4.Dataset("ns-time.nc")
assert n["time"].units == "1" and n["diagnostics_t"].units == "1"  # the solver's time: a number, not seconds
assert n["snap_q_criterion"].units == "1" and n["snap_vorticity_magnitude"].units == "1"
PY

# CSV: the units follow each column's name in brackets.
[ "$(head -1 integrate.csv | cut -d, -f1-5)" = "policy,year,g [year],r [year],x [year]" ] ||
  fail "integrate's CSV header: $(head -1 integrate.csv)"
head -1 mle.csv | grep -q '^series,window,date,start \[1\],theta \[1\],' || fail "mle-fit's CSV header: $(head -1 mle.csv)"
head -1 fluid.csv | grep -q 'total_density \[1\]' || fail "fluid's CSV header: $(head -1 fluid.csv)"

# VTK: the units in each file's field data (VTK's ASCII strings: character codes, 0 after each).
nps-export -q -i fluid.nps -o fl.vti
"$PY" - <<'PY' || fail "no units in the VTK field data"
import re
text = open("fl.vti", "rb").read().split(b"<AppendedData")[0].decode()
m = re.search(r'<DataArray type="String" Name="units" NumberOfTuples="(\d+)" format="ascii">([^<]*)</DataArray>', text)
assert m, text
codes = [int(c) for c in m.group(2).split()]
strings = bytes(codes).split(b"\0")[:-1]
assert len(strings) == int(m.group(1)), strings
assert b"d=1" in strings and b"velocity=1" in strings, strings
PY

# numpipe.to_xarray: the layout of nps-export's file (the same names), the units, datetime64 dates.
if ! "$PY" -c 'import xarray' 2> /dev/null; then
  echo "SKIP (partly): no xarray (Debian: python3-xarray): to_xarray's names not compared"; exit 0
fi
"$PY" - <<'PY' || fail "to_xarray differs from nps-export --to netcdf"
import netCDF4, numpy as np, numpipe
for w in ["fluid", "ns", "price", "integrate", "mle"]:
    x = numpipe.to_xarray(w + ".nps")
    f = netCDF4.Dataset(w + ".nc")
    assert set(x.dims) == set(f.dimensions), (w, dict(x.dims), list(f.dimensions))
    assert set(x.variables) == set(f.variables), (w, sorted(x.variables), sorted(f.variables))
    for n in f.variables:
        assert x[n].dims == f[n].dimensions, (w, n, x[n].dims, f[n].dimensions)
        if "units" in f[n].ncattrs() and "since" not in f[n].units:
            assert x[n].attrs["units"] == f[n].units, (w, n)
    f.close()
m = numpipe.to_xarray(numpipe.read("mle.nps"))  # a Stream read before
first = [bytes(r).rstrip(b"\0").decode() for n, a, _ in numpipe.records("mle.nps") if n == "window_label" for r in a][0]
assert np.issubdtype(m["date"].dtype, np.datetime64) and str(m["date"].values[0])[:10] == first, (m["date"], first)
assert m["theta"].attrs["units"] == "1"
PY
