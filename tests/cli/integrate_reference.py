"""Shared by integrate's CLI tests that hold the reserves to a reference from the
definitions: run gen-input integrate and integrate, and compare reserve rows."""
import subprocess

import numpipe


class Checks:
    """Failures collected over a test; `compare` holds a reserve row to a reference."""

    def __init__(self, tolerance=1e-8):
        self.tolerance = tolerance
        self.failures = []

    def compare(self, name, row, ref):
        """row: the tool's reserve by year; ref: {year: value}. Fails beyond tolerance x the largest."""
        scale = max(abs(r) for r in ref.values())
        worst = max(abs(row[y] - ref[y]) for y in ref) / scale
        print(f"{name}: year 0 {row[0]:.10f} (reference {ref[0]:.10f}), worst {worst:.2e} of the largest")
        if not worst <= self.tolerance:
            self.failures.append(f"{name}: off by {worst:.3e} of its largest reserve")

    def fail(self, message):
        self.failures.append(message)

    def finish(self):
        for f in self.failures:
            print("FAIL:", f)
        raise SystemExit(1 if self.failures else 0)


def run(gen_args, integrate_args):
    """gen-input integrate GEN_ARGS | integrate INTEGRATE_ARGS: the first policy's reserve
    row and premium (0 without a premium record)."""
    subprocess.run(["gen-input", "integrate", "-o", "in.nps", *gen_args], check=True)
    subprocess.run(["integrate", "-i", "in.nps", "-o", "out.nps", *integrate_args], check=True)
    out = numpipe.read("out.nps")
    premium = float(out["premium"][0]) if "premium" in out else 0.0
    return [float(r) for r in out["reserve"][0]], premium
