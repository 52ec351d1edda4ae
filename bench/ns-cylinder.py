#!/usr/bin/env python3
"""The numbers of a cylinder run of bench/ns-cylinder from ns-step's output stream.

    ns-cylinder.py OUT.nps --d D --span LZ --center CX,CY [--from T0]

Drag and lift coefficients Cd = Fx / (1/2 rho U^2 D Lz), Cl = Fy / (...) from the record
body_force (rho = 1, U the free stream's x component, from its attrs); from t >= T0 (default:
the second half of the run): the mean Cd, the lift's amplitude, the Strouhal number
St = f D / U of the lift (mean period between upward zero crossings, linearly
interpolated) and, from the final state, the recirculation length behind the cylinder
(where vx on the wake's centre line turns positive, from the rear surface, in D).
Prints one line of key=value pairs.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "share", "python"))
import numpy as np  # noqa: E402

import numpipe  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--d", type=float, required=True)
    ap.add_argument("--span", type=float, required=True)
    ap.add_argument("--center", required=True)
    ap.add_argument("--from", dest="t0", type=float, default=None)
    a = ap.parse_args()
    cx, cy = (float(v) for v in a.center.split(","))
    force = None
    state = {}
    attrs = {}
    for name, arr, at in numpipe.records(a.path):
        if name == "body_force":
            force, attrs = arr, at
        elif name in ("vx", "rho") and name not in state:
            state[name] = (arr, at)
    if force is None:
        sys.exit("ns-cylinder.py: no body_force record in %s" % a.path)
    u = attrs.get("free_stream", [1.0, 0.0, 0.0])[0]
    q = 0.5 * u * u * a.d * a.span
    t, cd, cl = force[:, 0], force[:, 1] / q, force[:, 2] / q
    t0 = a.t0 if a.t0 is not None else 0.5 * t[-1]
    w = t >= t0
    out = {"t_end": t[-1], "window": "%.1f-%.1f" % (t0, t[-1]), "cd_mean": cd[w].mean(), "cd_last": cd[-1],
           "cl_amplitude": 0.5 * (cl[w].max() - cl[w].min()), "cl_mean": cl[w].mean()}
    # the Strouhal number: upward zero crossings of Cl - mean
    c = cl[w] - cl[w].mean()
    tw = t[w]
    up = np.nonzero((c[:-1] < 0) & (c[1:] >= 0))[0]
    if len(up) >= 3 and out["cl_amplitude"] > 1e-3:
        tc = tw[up] - c[up] * (tw[up + 1] - tw[up]) / (c[up + 1] - c[up])
        period = (tc[-1] - tc[0]) / (len(tc) - 1)
        out["periods"] = len(tc) - 1
        out["st"] = a.d / (period * u)
    # steadiness: relative change of Cd over the last tenth of the run
    last = t >= 0.9 * t[-1]
    out["cd_drift"] = (cd[last].max() - cd[last].min()) / abs(cd[-1]) if last.any() else float("nan")
    # recirculation length: vx on the centre line behind the cylinder
    if "vx" in state:
        vx, at = state["vx"]
        sp = at["grid"]["spacing"]
        hx, hy = sp[0], sp[1]
        line = vx[:, :, 0]
        fy = cy / hy
        j = int(np.floor(fy))
        f = fy - j
        prof = line[:, j] * (1 - f) + line[:, (j + 1) % line.shape[1]] * f
        x = np.arange(line.shape[0]) * hx
        rear = cx + 0.5 * a.d
        behind = x > rear
        xs, ps = x[behind], prof[behind]
        neg = np.nonzero(ps < 0)[0]
        if len(neg):
            k = neg[0]
            while k + 1 < len(ps) and ps[k + 1] < 0:
                k += 1
            if k + 1 < len(ps):
                xz = xs[k] - ps[k] * (xs[k + 1] - xs[k]) / (ps[k + 1] - ps[k])
                out["recirculation"] = (xz - rear) / a.d
    print(" ".join("%s=%s" % (k, ("%.5g" % v) if isinstance(v, float) else v) for k, v in out.items()))


if __name__ == "__main__":
    main()
