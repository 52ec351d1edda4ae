#!/usr/bin/python3
"""bench/mle-garch-maxima.py: are rolling GARCH fits at the highest maximum?
For every STEP-th 250-day window of the returns (and the windows listed in
EXTRA), a refined optimum of the GARCH(1,1)-AEPD log-likelihood written from
the model's definition (tests/cli/mle_reference.py): Nelder-Mead from twelve
starts ((alpha, beta, omega as a share of the variance) x p in {1.2, 2}),
then Powell from the best. Prints, for each FIT.nps (mle-fit --model garch
--window 250 --step 1 on the same returns), the windows whose log-likelihood is
more than 1e-6 below that optimum, with the optimum's parameters. The optima are
kept in CACHE.json (computed once: about 6 s a window on one core).

Usage: bench/mle-garch-maxima.py RETURNS.nps STEP CACHE.json FIT.nps... [--extra 1193,1200]
(share/python and tests/cli on PYTHONPATH; NumPy and SciPy: Debian's /usr/bin/python3)
"""
import json
import math
import os
import sys

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(SRC, "share", "python"), os.path.join(SRC, "tests", "cli")]
import numpipe  # noqa: E402
from mle_reference import loglik  # noqa: E402

WINDOW = 250
STARTS = [(0.1, 0.8, 0.1), (0.05, 0.93, 0.02), (0.05, 0.15, 0.8), (0.3, 0.05, 0.65), (0.02, 0.97, 0.01),
          (0.15, 0.6, 0.25)]


def refined_optimum(win):
    from scipy.optimize import minimize
    m, v = win.mean(), np.var(win)

    def f(z):  # minus the log-likelihood, omega in logs
        mu, lo, al, be, a, p = z
        if not (lo > -50 and al >= 0 and be >= 0 and al + be < 1 and 0 < a < 1 and 0.3 < p < 20):
            return np.inf
        return -loglik(win, mu, math.exp(lo), al, be, a, p)

    best, best_x = -np.inf, None
    for al, be, om in STARTS:
        for p in (1.2, 2.0):
            st = np.array([m, math.log(om * v), al, be, 0.5, p])
            res = minimize(f, st, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-11, "maxiter": 20000})
            if -res.fun > best:
                best, best_x = -res.fun, res.x
    res = minimize(f, best_x, method="Powell", options={"xtol": 1e-12, "ftol": 1e-14, "maxiter": 20000})
    if -res.fun > best:
        best, best_x = -res.fun, res.x
    return best, [float(t) for t in best_x]


def main(argv):
    extra = []
    if "--extra" in argv:
        i = argv.index("--extra")
        extra = [int(t) for t in argv[i + 1].split(",") if t]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 5:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    x = numpipe.read(argv[1])["x"][0]
    step, cache_path, fits = int(argv[2]), argv[3], argv[4:]
    windows = len(x) - WINDOW + 1
    sample = sorted(set(range(0, windows, step)) | {k for k in extra if 0 <= k < windows})
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    for k in sample:
        if str(k) not in cache:
            cache[str(k)] = refined_optimum(x[k:k + WINDOW])
            json.dump(cache, open(cache_path, "w"))
    for path in fits:
        ll = numpipe.read(path)["loglik"][0]
        below = [(k, cache[str(k)][0] - ll[k], cache[str(k)][1]) for k in sample if cache[str(k)][0] - ll[k] > 1e-6]
        print(f"{path}: {len(sample)} windows, {len(below)} more than 1e-6 below a refined optimum")
        for k, gap, z in below:
            print(f"  window {k}: {gap:.4g} below (mu {z[0]:.4g}, omega {math.exp(z[1]):.3g}, alpha {z[2]:.4g}, "
                  f"beta {z[3]:.4g}, skew {z[4]:.4g}, p {z[5]:.4g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
