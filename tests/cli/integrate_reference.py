"""Shared by integrate's CLI tests that hold the reserves to a reference from the
definitions: the Standard Ultimate Survival Model's law, run gen-input integrate and
integrate, and compare reserve rows. The tests put tests/cli on PYTHONPATH."""
import math
import subprocess

import numpipe

# The Standard Ultimate Survival Model (Dickson, Hardy and Waters, AMLCR, sec. 4.3; its
# select form sec. 3.9): Makeham mu_x = A + B c^x, at i = 5 % (the force delta).
A, B, c = 0.00022, 2.7e-6, 1.124
delta = math.log(1.05)


def makeham(life="insured"):
    """gen-input's --mortality value for the model's law on `life`."""
    return "%s=gm:%r,%r,%r" % (life, A, math.log10(B), math.log10(c))


def write_rates_by_year(path, ages, years, rate):
    """A table of improvement rates by age (rows) and calendar year (a column a year,
    named by it), rate(age, year) to 6 decimals; returns what it wrote as {age: [rates]}."""
    table = {a: [round(rate(a, y), 6) for y in years] for a in ages}
    with open(path, "w") as f:
        f.write("age," + ",".join(str(y) for y in years) + "\n")
        for a in ages:
            f.write(f"{a}," + ",".join(f"{r:.6f}" for r in table[a]) + "\n")
    return table


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
