#!/usr/bin/python3
"""bench/mle-garch-compare.py: two runs of mle-fit --model garch on the same
windows, window by window: how far the new run's maximised log-likelihood is
below (or above) the reference run's, and how far its parameters and quantiles
moved. Exits 1 where any window of NEW is lower than REF's by more than TOL
(default 1e-9), or where a window finite in one run is NaN in the other.

Usage: bench/mle-garch-compare.py REF.nps NEW.nps [TOL]
(share/python on PYTHONPATH; NumPy: Debian's /usr/bin/python3)
"""
import sys

import numpy as np

import numpipe


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tol = float(argv[3]) if len(argv) > 3 else 1e-9
    ref, new = numpipe.read(argv[1]), numpipe.read(argv[2])
    a, b = np.asarray(ref["loglik"], float).ravel(), np.asarray(new["loglik"], float).ravel()
    if a.shape != b.shape:
        print(f"different window counts: {a.size} and {b.size}")
        return 1
    nan_moved = int(np.sum(np.isfinite(a) != np.isfinite(b)))
    both = np.isfinite(a) & np.isfinite(b)
    d = b[both] - a[both]
    lower = int(np.sum(d < -tol))
    worst = int(np.argmin(d)) if d.size else 0
    print(f"{a.size} windows: {int(np.sum(d == 0))} the same loglik bits, {int(np.sum(d > tol))} higher by > {tol:g}"
          f" (max {d.max() if d.size else 0:.3g}), {lower} lower by > {tol:g} (min {d.min() if d.size else 0:.3g},"
          f" window {np.flatnonzero(both)[worst] if d.size else -1}), NaN in one only: {nan_moved}")
    lows = d[d < -tol]
    if lows.size:
        edges = [tol, 1e-6, 1e-3, np.inf]
        counts = [int(np.sum((-lows > lo) & (-lows <= hi))) for lo, hi in zip(edges[:-1], edges[1:])]
        order = np.argsort(d)[: min(8, lows.size)]
        print(f"  lower by ({tol:g}, 1e-6]: {counts[0]}, (1e-6, 1e-3]: {counts[1]}, > 1e-3: {counts[2]}; the lowest: "
              + ", ".join(f"{np.flatnonzero(both)[i]} ({d[i]:.2g})" for i in order))
    for name in ("theta", "omega", "garch_alpha", "garch_beta", "p", "p1", "p2", "skew", "quantiles"):
        if name in ref and name in new:
            x, y = np.asarray(ref[name], float).ravel(), np.asarray(new[name], float).ravel()
            ok = np.isfinite(x) & np.isfinite(y)
            scale = np.maximum(np.abs(x[ok]), 1e-300)
            print(f"  {name}: max |change| {np.max(np.abs(y[ok] - x[ok])) if ok.any() else 0:.3g}"
                  f" (relative {np.max(np.abs(y[ok] - x[ok]) / scale) if ok.any() else 0:.3g})")
    return 1 if lower or nan_moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
