#!/usr/bin/env python3
"""The drag of a steady 2-D body from a control volume around it, independent of the surface sum.

    ns-bodies-cv.py OUT.nps --center CX,CY --re RE --c C [--half A,...] [--d D]

ns-step's model, dv/dt = -(v . grad) v - grad p + nu lap v with p = c^2 (rho - 1), written
as a balance over the fluid between the body and a square of half side A around it
(steady flow, v = 0 on the body):
    F = -oint_outer (v (v . n) + p n - nu (grad v) n) dS + int_V v div v dV
(the momentum theorem, e.g. Batchelor, An Introduction to Fluid Dynamics, 1967, sec. 3.2,
for the model's non-conservative advection: (v . grad) v = div(v v) - v div v).
Faces by the trapezoidal rule on the nodes, derivatives by central differences, the volume
term over the fluid nodes. Prints cd_cv=... for each A (Cd = Fx / (1/2 U^2 D), U = 1, span 1).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "share", "python"))
import numpy as np  # noqa: E402

import numpipe  # noqa: E402


def trapezoid(values, h):
    return h * (values.sum() - 0.5 * (values[0] + values[-1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--center", required=True)
    ap.add_argument("--re", type=float, required=True)
    ap.add_argument("--c", type=float, required=True)
    ap.add_argument("--d", type=float, default=1.0)
    ap.add_argument("--half", default="1,2,3")
    a = ap.parse_args()
    cx, cy = (float(v) for v in a.center.split(","))
    f = {}
    for name, arr, at in numpipe.records(a.path):
        if name in ("rho", "vx", "vy") and name not in f:
            f[name] = (np.asarray(arr, dtype=float)[:, :, 0], at)
    rho, at = f["rho"]
    vx, vy = f["vx"][0], f["vy"][0]
    hx, hy = at["grid"]["spacing"][:2]
    nu, p = a.d / a.re, a.c ** 2 * (rho - 1.0)
    nx, ny = rho.shape
    # dvx/dx, dvx/dy and div v by central differences (periodic wrap; the square stays inside)
    dvx_dx = (np.roll(vx, -1, 0) - np.roll(vx, 1, 0)) / (2 * hx)
    dvx_dy = (np.roll(vx, -1, 1) - np.roll(vx, 1, 1)) / (2 * hy)
    div = dvx_dx + (np.roll(vy, -1, 1) - np.roll(vy, 1, 1)) / (2 * hy)
    out = []
    for half in (float(s) for s in a.half.split(",")):
        i0, i1 = int(round((cx - half) / hx)), int(round((cx + half) / hx))
        j0, j1 = int(round((cy - half) / hy)), int(round((cy + half) / hy))
        if i0 < 2 or j0 < 2 or i1 > nx - 3 or j1 > ny - 3:
            continue
        js, is_ = slice(j0, j1 + 1), slice(i0, i1 + 1)
        # x faces (n = +-x): vx vx + p - nu dvx/dx; y faces (n = +-y): vx vy - nu dvx/dy
        right = trapezoid(vx[i1, js] ** 2 + p[i1, js] - nu * dvx_dx[i1, js], hy)
        left = trapezoid(vx[i0, js] ** 2 + p[i0, js] - nu * dvx_dx[i0, js], hy)
        top = trapezoid(vx[is_, j1] * vy[is_, j1] - nu * dvx_dy[is_, j1], hx)
        bottom = trapezoid(vx[is_, j0] * vy[is_, j0] - nu * dvx_dy[is_, j0], hx)
        volume = (vx[is_, js] * div[is_, js]).sum() * hx * hy
        fx = -(right - left + top - bottom) + volume
        out.append("cd_cv%g=%.5g" % (half, fx / (0.5 * a.d)))
    print(" ".join(out))


if __name__ == "__main__":
    main()
