#!/usr/bin/python3
"""Work-precision of price's user contracts against QuantLib's FdSabrVanillaEngine.

A chain of contracts (puts below s0, calls at and above it) under SABR is priced
by numpipe (`gen-input price --tolerance TOL | price`, CPU or CUDA) at several
tolerances and by QuantLib's engine at several grids, on the same machine, both
timed as wall time of the whole pricing of the chain (numpipe: the tool's process;
QuantLib: one engine solve per contract, as it prices one contract a solve). The
error is the largest absolute difference to a reference: QuantLib's engine on its
two finest grids, extrapolated (Richardson, second order).

    bench/price-work-precision.py [--quick] [--backend cpu|cuda] [--threads N] [--plot FILE]

--quick: 2 maturities x 3 strikes and smaller grids (a check that it runs).
Prints one table row per run (markdown) and, with --plot, draws error against time
(matplotlib). QuantLib runs single-threaded; give numpipe --threads 1 for the same
cores, or the machine's count to show what it does with them.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import QuantLib as ql

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "share", "python"))
import numpy as np  # noqa: E402
import numpipe  # noqa: E402

MODEL = dict(alpha=0.25, beta=0.7, nu=0.5, rho=-0.4)


def quantlib_chain(days, strikes, grid):
    today = ql.Date(1, 1, 2024)
    ql.Settings.instance().evaluationDate = today
    rates = ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, ql.Actual365Fixed()))
    out = np.zeros((len(days), len(strikes)))
    for a, d in enumerate(days):
        for k, strike in enumerate(strikes):
            put = strike < 1
            option = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Put if put else ql.Option.Call, strike),
                                      ql.EuropeanExercise(today + d))
            option.setPricingEngine(ql.FdSabrVanillaEngine(1.0, MODEL["alpha"], MODEL["beta"], MODEL["nu"],
                                                           MODEL["rho"], rates, grid[0], grid[1], grid[2], 2))
            out[a, k] = option.NPV()
    return out


def numpipe_chain(bin_dir, days, strikes, tolerance, backend, threads):
    mats = ",".join(repr(d / 365.0) for d in days)
    base = [os.path.join(bin_dir, "gen-input"), "price", "--s0", "1", "--tolerance", repr(tolerance),
            "--maturities", mats] + sum([["--" + k, str(v)] for k, v in MODEL.items()], [])
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for option, ks in (("put", [k for k in strikes if k < 1]), ("call", [k for k in strikes if k >= 1])):
            path = os.path.join(tmp, option + ".in")
            subprocess.run(base + ["--strikes", ",".join(map(repr, ks)), "--option", option, "-o", path], check=True)
            files.append(path)
        start = time.perf_counter()
        outs = []
        for path in files:
            out = path + ".nps"
            subprocess.run([os.path.join(bin_dir, "price"), "-q", "--backend", backend, "--threads", str(threads),
                            "-i", path, "-o", out], check=True, stderr=subprocess.DEVNULL)
            outs.append(out)
        seconds = time.perf_counter() - start
        prices = np.concatenate([np.asarray(numpipe.read(o)["price"]).reshape(len(days), -1) for o in outs], axis=1)
        estimate = max(float(np.max(numpipe.read(o)["price_error"])) for o in outs)
    return prices, seconds, estimate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build-cpu", "bin"))
    ap.add_argument("--plot")
    args = ap.parse_args()
    if args.quick:
        days, strikes = [91, 1826], [0.8, 1.0, 1.25]
        ql_grids, ref_grids, tols = [(25, 100, 12), (50, 200, 25)], [(50, 200, 25), (100, 400, 50)], [2e-5, 5e-6]
    else:
        days = [91, 183, 365, 730, 1826]
        strikes = list(np.round(np.linspace(0.8, 1.25, 20), 6))
        ql_grids = [(25, 100, 12), (50, 200, 25), (100, 400, 50), (200, 800, 100)]
        ref_grids = [(200, 800, 100), (400, 1600, 200)]
        tols = [4e-5, 2e-5, 1e-5, 5e-6, 2.5e-6]
    coarse, fine = (quantlib_chain(days, strikes, g) for g in ref_grids)
    reference = fine + (fine - coarse) / 3
    rows = []
    for tol in tols:
        prices, seconds, estimate = numpipe_chain(args.bin, days, strikes, tol, args.backend, args.threads)
        rows.append(("numpipe " + args.backend, "--tolerance %g" % tol, seconds, float(np.max(np.abs(prices - reference))),
                     estimate))
    for g in ql_grids:
        start = time.perf_counter()
        prices = quantlib_chain(days, strikes, g)
        rows.append(("QuantLib", "t %d, F %d, v %d" % g, time.perf_counter() - start,
                     float(np.max(np.abs(prices - reference))), float("nan")))
    print("%d contracts (%d maturities x %d strikes), s0 1, alpha %g, beta %g, nu %g, rho %g; numpipe threads %d"
          % (len(days) * len(strikes), len(days), len(strikes), MODEL["alpha"], MODEL["beta"], MODEL["nu"],
             MODEL["rho"], args.threads))
    print("| pricer | setting | seconds | max error | largest price_error |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.3f | %.2e | %.2e |" % r)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for name in dict.fromkeys(r[0] for r in rows):
            pts = [(r[2], r[3]) for r in rows if r[0] == name]
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=name)
        ax.set_xlabel("seconds for the chain")
        ax.set_ylabel("largest price error (per unit s0)")
        ax.set_title("work-precision, %d contracts" % (len(days) * len(strikes)))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)


if __name__ == "__main__":
    main()
