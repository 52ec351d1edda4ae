#!/usr/bin/python3
"""The smile picture of docs/price.md: implied volatility against strike, one line
per maturity for a model (price --implied-vol on a strike grid, records strike,
maturity, implied_vol [M, S]) and the quotes of a calibration (price --calibrate:
strike, maturity, quote [Q]) as dots, with the fitted parameters. Drawn with
matplotlib (Debian python3-matplotlib); the format follows OUT's extension
(.png, .pdf, .svg).

    price-smile.py MODEL.nps CALIBRATION.nps OUT.png
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import numpipe  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("price-smile.py: needs matplotlib (Debian: apt-get install python3-matplotlib)")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model = numpipe.read(sys.argv[1])
    cal = numpipe.read(sys.argv[2])
    strikes, maturities, vols = model["strike"], np.atleast_1d(model["maturity"]), np.atleast_2d(model["implied_vol"])
    q_strike, q_maturity, q_vol = cal["strike"], cal["maturity"], cal["quote"]
    fitted = np.atleast_1d(cal["calibrated"])
    names = next((a.get("parameters") for n, _, a in numpipe.records(sys.argv[2]) if n == "calibrated"), None)
    names = names or ["p%d" % k for k in range(len(fitted))]

    fig, ax = plt.subplots(figsize=(9, 5.6), dpi=100)  # 900 x 560 pixels
    for m, t in enumerate(maturities):
        colour = "C%d" % (m % 10)
        ax.plot(strikes, vols[m], color=colour, linewidth=1.8, label="T = %g" % t)
        sel = np.isclose(q_maturity, t)
        ax.plot(q_strike[sel], q_vol[sel], "o", color=colour, markeredgecolor="black", markersize=6)
    ax.set_xlabel("strike")
    ax.set_ylabel("implied volatility")
    ax.set_title("implied volatility: the calibrated model (lines) and its quotes (dots)")
    ax.grid(True, color="0.88")
    ax.legend(title="maturity", loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    fit = "fit:\n" + "\n".join("%s = %.3f" % (n, v) for n, v in zip(names, fitted))
    ax.text(1.02, 0.0, fit, transform=ax.transAxes, va="bottom", ha="left", family="monospace")
    fig.tight_layout()
    fig.savefig(sys.argv[3])


if __name__ == "__main__":
    main()
