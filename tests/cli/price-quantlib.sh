# price at its default settings (gen-input price --strikes ... --maturities ..., no grid
# sizes: --tolerance 5e-6) against QuantLib's FdSabrVanillaEngine, an independent
# finite-difference SABR pricer (Debian's quantlib-python; skipped where absent);
# the observed order of convergence in space and in time with nu > 0 and rho != 0;
# no negative price where the earlier grid gave them.
require_python
"$PY" -c 'import QuantLib' 2>/dev/null || { echo "SKIP: QuantLib's Python module not found (apt-get install quantlib-python)"; exit 77; }

cat >check.py <<'EOF'
import math, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1] + "/share/python")
import numpy as np
import numpipe
import QuantLib as ql

def run(args, extra=()):
    """gen-input price ARGS | price EXTRA: the output stream and price's stderr."""
    g = subprocess.run(["gen-input", "price"] + args, capture_output=True, check=True)
    p = subprocess.run(["price", "-q", "-o", "out.nps"] + list(extra), input=g.stdout, capture_output=True)
    if p.returncode:
        sys.exit("price failed: " + p.stderr.decode())
    return numpipe.read("out.nps"), p.stderr.decode()

def model_args(m):
    return ["--s0", "1", "--alpha", str(m[0]), "--beta", str(m[1]), "--nu", str(m[2]), "--rho", str(m[3])]

def quantlib(m, strike, days, put, grid):
    today = ql.Date(1, 1, 2024)
    ql.Settings.instance().evaluationDate = today
    rates = ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, ql.Actual365Fixed()))
    option = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Put if put else ql.Option.Call, strike),
                              ql.EuropeanExercise(today + days))
    t_grid, f_grid, x_grid = grid
    option.setPricingEngine(ql.FdSabrVanillaEngine(1.0, m[0], m[1], m[2], m[3], rates, t_grid, f_grid, x_grid, 2))
    return option.NPV()

def converged(m, strike, days, put):
    # QuantLib's engine is second order: Richardson's extrapolation of two grids
    # (a 400-point grid alone is off by ~1e-4 at T = 5; the extrapolation by < 1e-5)
    a = quantlib(m, strike, days, put, (50, 200, 25))
    b = quantlib(m, strike, days, put, (100, 400, 50))
    return b + (b - a) / 3

def black(strike, t, vol, put):
    d1 = (-math.log(strike) + 0.5 * vol * vol * t) / (vol * math.sqrt(t))
    n = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
    call = n(d1) - strike * n(d1 - vol * math.sqrt(t))
    return call - (1 - strike) if put else call

def implied(price, strike, t, put):
    lo, hi = 1e-4, 3.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if black(strike, t, mid, put) < price else (lo, mid)
    return 0.5 * (lo + hi)

bad = []
# 1. accuracy at the default settings: SABR sets inside alpha 0.2-0.3, beta 0.5-1,
#    nu 0.3-0.6, rho -0.5..0.3 (QuantLib's engine takes beta < 1); strikes 0.8-1.25 (puts below the spot); T 0.25 and 5
#    years as whole days (QuantLib's dates)
days = [91, 1826]
strikes = [0.8, 1.0, 1.25]
for m in [(0.25, 0.7, 0.5, -0.4), (0.3, 0.5, 0.3, 0.3), (0.2, 0.95, 0.6, -0.5)]:
    mats = [d / 365.0 for d in days]
    out = {}
    for option in ("put", "call"):
        s, _ = run(model_args(m) + ["--strikes", ",".join(map(str, strikes)), "--maturities", ",".join(map(repr, mats)),
                                    "--option", option])
        out[option] = (np.asarray(s["price"]), np.asarray(s["price_error"]))
        if s.all("price")[0].attrs.get("bound_violations", -1) != 0:
            bad.append(f"{m} {option}: bound_violations is not 0")
    for a, d in enumerate(days):
        for k, strike in enumerate(strikes):
            put = strike < 1
            ours, est = (x[a, k] for x in out["put" if put else "call"])
            ref = converged(m, strike, d, put)
            t = d / 365.0
            line = f"{m} K {strike} T {t:.4f}: ours {ours:.8f} (price_error {est:.1e}), QuantLib {ref:.8f}, diff {ours - ref:.2e}"
            print(line)
            if not ours >= 0: bad.append(line + ": negative")
            if abs(ours - ref) > 1e-4: bad.append(line + ": more than 1e-4 from QuantLib")
            if ref > 1e-3:
                dv = implied(ours, strike, t, put) - implied(ref, strike, t, put)
                print(f"    implied vol diff {dv * 1e4:.3f} bp")
                if abs(dv) > 1e-4: bad.append(line + f": implied vol {dv * 1e4:.2f} bp from QuantLib's")

# 2. observed order >= 1.8 in space (numX, numY doubled, 400 steps) and in time (numT
#    doubled on 96 x 48 points), nu 0.5, rho -0.4, T 1
m = model_args((0.25, 0.7, 0.5, -0.4)) + ["--strikes", "0.9,1.1", "--maturities", "1"]
def order(grids):
    v = [np.asarray(run(m + g)[0]["price"]) for g in grids]
    return np.log2(np.abs((v[0] - v[1]) / (v[1] - v[2])))
space = order([["--num-x", str(n), "--num-y", str(n // 2), "--num-t", "401"] for n in (40, 80, 160)])
time = order([["--num-x", "96", "--num-y", "48", "--num-t", str(n)] for n in (21, 41, 81)])
print("observed order: space", space, "time", time)
if not (space >= 1.8).all(): bad.append(f"order in space {space} below 1.8")
if not (time >= 1.8).all(): bad.append(f"order in time {time} below 1.8")

# 3. far out of the money with rho -0.4: no price below zero (they were -3.5e-7 .. -6.6e-7)
s, err = run(model_args((0.25, 0.7, 0.5, -0.4)) + ["--strikes", "1.6,1.65,1.7", "--maturities", "0.25,5",
                                                     "--num-x", "128", "--num-y", "64", "--num-t", "321"])
v = np.asarray(s["price"])
print("far calls", v.ravel())
if not (v >= 0).all(): bad.append(f"negative prices {v.ravel()}")

if bad:
    sys.exit("\n".join(bad))
EOF
"$PY" check.py "$SRC" || fail "price against QuantLib (above)"
