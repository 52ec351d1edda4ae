# price at short maturities: the time grid graded towards each maturity damps the
# payoff's kink (docs/price.md, "Accuracy of the user's contracts"), so time converges
# at second order there too, for the price and the Greeks. SABR with nu > 0 and
# rho != 0 (the modified Craig-Sneyd step), T = 0.02 and 0.1 years, strikes at and
# about the money (s0 1, on a node), a fixed 96 x 48 space grid, numT 41, 81, 161:
# the observed order log2(|P41 - P81| / |P81 - P161|) of price, delta, gamma and vega
# must be at least 1.8 at every strike (a scheme whose kink is left undamped, or whose
# coefficients lag a step, shows order 1 or less).
require_python
cat >check.py <<'EOF'
import subprocess, sys
sys.path.insert(0, sys.argv[1] + "/share/python")
import numpy as np
import numpipe

QUANTITIES = ("price", "delta", "gamma", "vega")
bad = []
for maturity in ("0.02", "0.1"):
    runs = {}
    for steps in (41, 81, 161):
        g = subprocess.run(["gen-input", "price", "--s0", "1", "--alpha", "0.25", "--beta", "0.7", "--nu", "0.5",
                            "--rho", "-0.4", "--strikes", "0.95,1,1.05", "--maturities", maturity, "--num-x", "96",
                            "--num-y", "48", "--num-t", str(steps)], capture_output=True, check=True)
        subprocess.run(["price", "-q", "--backend", "cpu", "--greeks", "-o", "out.nps"], input=g.stdout, check=True)
        out = numpipe.read("out.nps")
        runs[steps] = {q: np.asarray(out[q], dtype=float).ravel() for q in QUANTITIES}
    for q in QUANTITIES:
        order = np.log2(np.abs(runs[41][q] - runs[81][q]) / np.abs(runs[81][q] - runs[161][q]))
        print("T %s %-5s observed order in time %s" % (maturity, q, np.round(order, 2)))
        if not np.all(order >= 1.8):
            bad.append("T %s %s: order %s" % (maturity, q, order))
if bad:
    sys.exit("time order below 1.8: " + "; ".join(bad))
EOF
"$PY" check.py "$SRC" || fail "time convergence at short maturities (above)"
rm -f check.py out.nps
no_leftovers .
