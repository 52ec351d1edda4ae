#!/usr/bin/python3
"""The smile picture of docs/price.md: implied volatility against strike, one line
per maturity for a model (price --implied-vol on a strike grid, records strike,
maturity, implied_vol [M, S]) and the quotes of a calibration (price --calibrate:
strike, maturity, quote [Q]) as dots. Writes a PNG with NumPy and zlib only (for
machines without matplotlib).

    price-smile.py MODEL.nps CALIBRATION.nps OUT.png
"""
import os
import struct
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import numpipe  # noqa: E402

# A 5x7 bitmap font: the characters the labels use.
GLYPHS = {
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    ".": "00000 00000 00000 00000 00000 01100 01100", "-": "00000 00000 00000 11111 00000 00000 00000",
    "=": "00000 00000 11111 00000 11111 00000 00000", " ": "00000 00000 00000 00000 00000 00000 00000",
    ",": "00000 00000 00000 00000 01100 00100 01000", "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000", ":": "00000 01100 01100 00000 01100 01100 00000",
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11100 10010 10001 10001 10001 10010 11100",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "I": "01110 00100 00100 00100 00100 00100 01110", "K": "10001 10010 10100 11000 10100 10010 10001",
    "L": "10000 10000 10000 10000 10000 10000 11111", "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 11001 10101 10011 10001 10001 10001", "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000", "Q": "01110 10001 10001 10001 10101 10010 01101",
    "R": "11110 10001 10001 11110 10100 10010 10001", "S": "01111 10000 10000 01110 00001 00001 11110",
    "T": "11111 00100 00100 00100 00100 00100 00100", "U": "10001 10001 10001 10001 10001 10001 01110",
    "V": "10001 10001 10001 10001 10001 01010 00100", "Y": "10001 10001 01010 00100 00100 00100 00100",
    "H": "10001 10001 10001 11111 10001 10001 10001", "W": "10001 10001 10001 10101 10101 10101 01010",
    "G": "01110 10001 10000 10111 10001 10001 01111", "X": "10001 10001 01010 00100 01010 10001 10001",
}
COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75)]


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = np.full((h, w, 3), 255, dtype=np.uint8)

    def dot(self, x, y, colour, r=1):
        x, y = int(round(x)), int(round(y))
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                if dx * dx + dy * dy <= r * r + r and 0 <= x + dx < self.w and 0 <= y + dy < self.h:
                    self.px[y + dy, x + dx] = colour

    def line(self, x0, y0, x1, y1, colour, r=1):
        n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        for t in np.linspace(0, 1, 2 * n):
            self.dot(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, colour, r)

    def text(self, x, y, s, colour=(0, 0, 0), scale=2, anchor="left"):
        x, y = int(round(x)), int(round(y))
        width = len(s) * 6 * scale
        if anchor == "centre":
            x -= width // 2
        elif anchor == "right":
            x -= width
        for k, ch in enumerate(s.upper()):
            rows = GLYPHS.get(ch, GLYPHS[" "]).split()
            for r, row in enumerate(rows):
                for c, bit in enumerate(row):
                    if bit == "1":
                        x0, y0 = x + (k * 6 + c) * scale, y + r * scale
                        self.px[max(y0, 0):y0 + scale, max(x0, 0):x0 + scale] = colour

    def png(self, path):
        raw = b"".join(b"\x00" + self.px[y].tobytes() for y in range(self.h))
        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)) +
                    chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def ticks(lo, hi, n=6):
    step = (hi - lo) / n
    mag = 10 ** np.floor(np.log10(step))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= step), default=10 * mag)
    return [t for t in np.arange(np.ceil(lo / step) * step, hi + 1e-12, step)], step


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model = numpipe.read(sys.argv[1])
    cal = numpipe.read(sys.argv[2])
    strikes, maturities, vols = model["strike"], np.atleast_1d(model["maturity"]), np.atleast_2d(model["implied_vol"])
    q_strike, q_maturity, q_vol = cal["strike"], cal["maturity"], cal["quote"]
    fitted = cal["calibrated"]
    w, h, left, right, top, bottom = 900, 560, 90, 190, 50, 70
    c = Canvas(w, h)
    xlo, xhi = float(min(strikes.min(), q_strike.min())), float(max(strikes.max(), q_strike.max()))
    finite = np.concatenate([vols[np.isfinite(vols)], q_vol[np.isfinite(q_vol)]])
    ylo, yhi = float(finite.min()), float(finite.max())
    pad = 0.06 * (yhi - ylo)
    ylo, yhi = ylo - pad, yhi + pad
    X = lambda v: left + (v - xlo) / (xhi - xlo) * (w - left - right)
    Y = lambda v: h - bottom - (v - ylo) / (yhi - ylo) * (h - top - bottom)
    grey = (200, 200, 200)
    xt, xs = ticks(xlo, xhi)
    yt, ys = ticks(ylo, yhi)
    for t in xt:
        c.line(X(t), top, X(t), h - bottom, grey, 0)
        c.text(X(t), h - bottom + 10, f"{t:.{max(0, -int(np.floor(np.log10(xs))))}f}", anchor="centre")
    for t in yt:
        c.line(left, Y(t), w - right, Y(t), grey, 0)
        c.text(left - 8, Y(t) - 7, f"{t:.{max(0, -int(np.floor(np.log10(ys))))}f}", anchor="right")
    c.line(left, h - bottom, w - right, h - bottom, (0, 0, 0), 0)
    c.line(left, top, left, h - bottom, (0, 0, 0), 0)
    c.text((left + w - right) // 2, h - 30, "STRIKE", anchor="centre")
    c.text(left, 14, "IMPLIED VOL: MODEL (LINES), QUOTES (DOTS)", scale=2)
    for m, t in enumerate(maturities):
        colour = COLOURS[m % len(COLOURS)]
        v = vols[m]
        for k in range(len(strikes) - 1):
            if np.isfinite(v[k]) and np.isfinite(v[k + 1]):
                c.line(X(strikes[k]), Y(v[k]), X(strikes[k + 1]), Y(v[k + 1]), colour, 1)
        sel = np.isclose(q_maturity, t)
        for ks, vs in zip(q_strike[sel], q_vol[sel]):
            c.dot(X(ks), Y(vs), (0, 0, 0), 4)
            c.dot(X(ks), Y(vs), colour, 3)
        c.line(w - right + 20, top + 20 + 24 * m + 7, w - right + 50, top + 20 + 24 * m + 7, colour, 1)
        c.text(w - right + 58, top + 20 + 24 * m, f"T={t:g}")
    names = next((a.get("parameters") for n, _, a in numpipe.records(sys.argv[2]) if n == "calibrated"), None)
    names = names or ["p%d" % k for k in range(len(fitted))]
    text = [f"{n}={v:.3f}" for n, v in zip(names, fitted)]
    for k, s in enumerate(["FIT:"] + text):
        c.text(w - right + 20, top + 20 + 24 * (len(maturities) + 1 + k), s)
    c.png(sys.argv[3])


if __name__ == "__main__":
    main()
