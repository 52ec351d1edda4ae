#!/usr/bin/python3
"""Calibration targets: option prices under SABR made by an independent pricer.

Prices a chain of contracts (puts below s0, calls at and above it) with QuantLib's
FdSabrVanillaEngine on two fine grids and extrapolates them (Richardson, second
order), at known alpha, beta, nu, rho, and writes them as a quote table for
`gen-input price --from-text` (strike, maturity, type, price), with the source, the
grids and the parameters in a header comment. tests/cli/price-calibrate-quantlib.sh
fits price to them at the default tolerance. QuantLib at these grids takes many
minutes for 100 contracts, hence a committed table rather than a test that prices.

    bench/price-calibration-quotes.py --alpha 0.25 --beta 0.7 --nu 0.5 --rho -0.4 \\
        [--days 91,183,365,547,1826] [--strikes 20] [--cache FILE.npz] -o share/ref/price/FILE.csv

--cache FILE: the engine's prices on the two grids are read from FILE (the .npz that
bench/price-work-precision.py --reference writes: the same contracts, grids and
model) when it holds them, else computed and written there.
"""
import argparse
import importlib.util
import multiprocessing
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# the engine's set-up and the cached two-grid reference of the work-precision script
spec = importlib.util.spec_from_file_location("work_precision", os.path.join(HERE, "price-work-precision.py"))
wp = importlib.util.module_from_spec(spec)
sys.modules["work_precision"] = wp  # the workers find its functions by this name
spec.loader.exec_module(wp)

REF_GRIDS = [(100, 400, 50), (200, 800, 100)]  # (time steps, F points, v points)


def main():
    ap = argparse.ArgumentParser()
    for name in ("alpha", "beta", "nu", "rho"):
        ap.add_argument("--" + name, type=float, required=True)
    # QuantLib's engine fails for maturities of about 700 to 900 days at some models:
    # 1.5 years (547 days) stands for 2
    ap.add_argument("--days", default="91,183,365,547,1826")
    ap.add_argument("--strikes", type=int, default=20, help="strikes evenly from 0.8 to 1.25")
    ap.add_argument("--cache")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    wp.MODEL.update(alpha=args.alpha, beta=args.beta, nu=args.nu, rho=args.rho)  # before the workers fork
    days = [int(d) for d in args.days.split(",")]
    strikes = list(np.round(np.linspace(0.8, 1.25, args.strikes), 6))
    with multiprocessing.Pool(args.workers) as pool:
        reference = wp.reference_prices(pool, args.cache, days, strikes, REF_GRIDS)
    failed = [(days[a], strikes[k]) for a in range(len(days)) for k in range(len(strikes)) if np.isnan(reference[a, k])]
    if len(failed) == reference.size:
        sys.exit("price-calibration-quotes: QuantLib's engine failed on every contract")
    with open(args.output, "w") as out:
        out.write("# SABR option prices by QuantLib %s's FdSabrVanillaEngine (Debian's quantlib-python), "
                  "extrapolated (Richardson, second order) from its grids (t %d, F %d, v %d) and (t %d, F %d, v %d)\n"
                  % ((wp.ql.__version__,) + REF_GRIDS[0] + REF_GRIDS[1]))
        out.write("# model: s0 1, alpha %r, beta %r, nu %r, rho %r, zero rates; maturity = days / 365 "
                  "(Actual/365 Fixed; days %s)\n" % (args.alpha, args.beta, args.nu, args.rho, args.days))
        out.write("# made by bench/price-calibration-quotes.py --alpha %r --beta %r --nu %r --rho %r --days %s "
                  "--strikes %d\n" % (args.alpha, args.beta, args.nu, args.rho, args.days, args.strikes))
        if failed:
            out.write("# left out: the engine failed on both grids (a NaN in its boundary's non-central chi-squared) "
                      "at days %s\n" % ",".join(sorted({str(d) for d, _ in failed}, key=int)))
        out.write("strike,maturity,type,price\n")
        for a, d in enumerate(days):
            for k, strike in enumerate(strikes):
                if np.isnan(reference[a, k]):
                    continue
                out.write("%r,%r,%s,%.10g\n" % (float(strike), d / 365.0, "put" if strike < 1 else "call",
                                               reference[a, k]))


if __name__ == "__main__":
    main()
