# integrate at its default settings against an independent reference written here
# from the textbook definitions (not from the kernels): the reserve of a life aged
# x + t is the expected present value of the future payments,
#   V(t) = int_t^n v(t,s) S(t,s) [mu(x+s) D + b(s) - P 1(s < premium term)] ds + v(t,n) S(t,n) E,
# with S the survival probability from the integrated force, v the discount factor
# from the integrated forward rate (a curve's: exp(-(s R(s) - t R(t))), R the linearly
# interpolated zero rate), by Gauss-Legendre quadrature on pieces between every break
# (whole years, deferment, premium term, term, table ages, curve maturities).
# Within 1e-8 of the largest reserve of each policy at every year, premiums within
# 1e-8 relative: Makeham (the Standard Ultimate Survival Model's law), a life table
# and the shipped yield curve. Then: 4th order by halving the steps; the steep
# law at 1 step a year (no oscillation, near the reference); the published scheme's
# warning; the spouse pension at its converged value, and with a term.
require_python
export PYTHONPATH="$SRC/share/python"
T=$SRC/share/examples/integrate-life-table.csv
CURVE=$SRC/share/ref/yield-curve.txt
"$PY" - "$T" "$CURVE" <<'PY' || fail "the reference comparison failed"
import math, subprocess, sys
import numpy as np
import numpipe

table_file, curve_file = sys.argv[1], sys.argv[2]
nodes, weights = np.polynomial.legendre.leggauss(16)
LN10 = math.log(10.0)
# The Standard Ultimate Survival Model: mu = A + B c^a, as A + 10^(log10 B + a log10 c).
SUSM = ("gm", 0.00022, math.log10(2.7e-6), math.log10(1.124))

def load_table(column):
    rows = [l.strip() for l in open(table_file) if l.strip() and not l.startswith("#")]
    head = rows[0].split(",")
    j = head.index(column)
    q = {int(float(r.split(",")[0])): float(r.split(",")[j]) for r in rows[1:]}
    return {a: -math.log(1.0 - q[a]) for a in q if a < 120}

def load_curve():
    pts = [tuple(map(float, l.split())) for l in open(curve_file) if l.strip() and not l.startswith("#")]
    return [p[0] for p in pts], [p[1] for p in pts]

def hazard(law, a0, a1):  # integral of mu over ages [a0, a1]
    if law[0] == "gm":
        _, A, B, C = law
        return A * (a1 - a0) + (10 ** (B + C * a1) - 10 ** (B + C * a0)) / (C * LN10)
    mu = law[1]
    h, a = 0.0, a0
    while a < a1 - 1e-15:
        k = math.floor(a + 1e-12)
        e = min(a1, k + 1)
        h += mu[min(k, 119)] * (e - a)
        a = e
    return h

def force(law, a):
    if law[0] == "gm":
        _, A, B, C = law
        return A + 10 ** (B + C * a)
    return law[1][min(int(math.floor(a)), 119)]

def make_discount(rate, curve):
    if curve is None:
        return lambda t, s: math.exp(-rate * (s - t))
    T, R = curve
    def zero(s):
        return float(np.interp(s, T, R))
    return lambda t, s: math.exp(-(s * zero(s) - t * zero(t)))

def reference(law, x, n, D, b, m, P, tp, E, disc, extra_breaks, t):
    """V(t) by Gauss-Legendre on pieces between the breaks."""
    cuts = {t, n}
    cuts |= {float(k) for k in range(int(math.ceil(t)), int(math.floor(n)) + 1)}
    cuts |= {c for c in [m, tp] + list(extra_breaks) if t < c < n}
    if law[0] == "table":
        cuts |= {k - x for k in range(int(math.ceil(x + t)), int(math.floor(x + n)) + 1)}
    cuts = sorted(c for c in cuts if t <= c <= n)
    total = 0.0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi - lo < 1e-13:
            continue
        for z, w in zip(nodes, weights):
            s = 0.5 * (hi - lo) * z + 0.5 * (hi + lo)
            pay = force(law, x + s) * D + (b if s >= m else 0.0) - (P if s < tp else 0.0)
            total += 0.5 * (hi - lo) * w * disc(t, s) * math.exp(-hazard(law, x + t, x + s)) * pay
    return total + disc(t, n) * math.exp(-hazard(law, x + t, x + n)) * E

def run(args, steps, rate_args, integrate_args=()):
    gen = ["gen-input", "integrate", "--steps", steps, "-o", "in.nps"] + args + rate_args
    subprocess.run(gen, check=True)
    subprocess.run(["integrate", "-i", "in.nps", "-o", "out.nps", *integrate_args], check=True)
    out = numpipe.read("out.nps")
    reserve = out["reserve"][0]
    row = {y: float(reserve[y]) for y in range(len(reserve))}
    return row, float(out["premium"][0]) if "premium" in out else 0.0

failures = []
def check(name, law, law_args, rate_args, disc, breaks, x, product, term=None, deferment=0.0, premium_term=None,
          benefit=1.0, premium=None, steps="10,2,10"):
    args = ["--product", product, "--x", repr(x), "--benefit", repr(benefit)] + law_args
    if term is not None: args += ["--term", repr(term)]
    if deferment: args += ["--deferment", repr(deferment)]
    if premium_term is not None: args += ["--premium-term", repr(premium_term)]
    args += ["--premium", "equivalence" if premium is None else repr(premium)]
    row, P = run(args, steps, rate_args)
    horizon = 120.0 - x
    n = min(term if term is not None else 120.0, horizon)
    reaches = term is not None and term < horizon
    D = benefit if product in ("term", "endowment") else 0.0
    b = benefit if product == "annuity" else 0.0
    E = benefit if product in ("pure-endowment", "endowment") and reaches else 0.0
    tp = premium_term if premium_term is not None else (deferment if product == "annuity" else n)
    tp = min(tp, n)
    if premium is None:  # the equivalence premium from the reference
        vb = reference(law, x, n, D, b, deferment, 0.0, tp, E, disc, breaks, 0.0)
        vp = -reference(law, x, n, 0.0, 0.0, 1e9, 1.0, tp, 0.0, disc, breaks, 0.0)
        Pref = vb / vp
        if abs(P - Pref) > 1e-8 * abs(Pref):
            failures.append(f"{name}: premium {P!r}, reference {Pref!r}")
    else:
        Pref = premium
    ref = {y: reference(law, x, n, D, b, deferment, Pref, tp, E, disc, breaks, float(y))
           for y in range(0, int(math.floor(n - 1e-12)) + 1)}
    if reaches and n == math.floor(n):
        ref[int(n)] = E
    scale = max(abs(v) for v in ref.values())
    worst = max(abs(row[y] - ref[y]) / scale for y in ref)
    print(f"{name}: premium {P:.10g} (reference {Pref:.10g}), worst reserve difference {worst:.2e} of the largest")
    if not worst <= 1e-8:
        failures.append(f"{name}: reserve off by {worst:.3e} of its largest")
    return row, ref

flat = ["--rate", "0.05"]
law_susm = ["--mortality", "insured=gm:%r,%r,%r" % SUSM[1:]]
const = make_discount(0.05, None)
# Makeham (SUSM) at 5%.
check("SUSM whole-life annuity at 60", SUSM, law_susm, flat, const, [], 60.0, "annuity", premium=0.0)
check("SUSM deferred annuity 40+25, equivalence", SUSM, law_susm, flat, const, [], 40.0, "annuity", deferment=25.0)
check("SUSM term insurance 45, 20 years", SUSM, law_susm, flat, const, [], 45.0, "term", term=20.0)
check("SUSM endowment 45, 20 years, 50000", SUSM, law_susm, flat, const, [], 45.0, "endowment", term=20.0,
      benefit=50000.0)
check("SUSM pure endowment 50.5, 15.25 years", SUSM, law_susm, flat, const, [], 50.5, "pure-endowment", term=15.25,
      premium_term=10.0)
check("SUSM whole-life insurance 40", SUSM, law_susm, flat, const, [], 40.0, "term", premium=0.0)
check("SUSM annuity 64 deferred 1, equivalence", SUSM, law_susm, flat, const, [], 64.0, "annuity", deferment=1.0)
# A life table (the force constant within each year of age).
male = ("table", load_table("q_male"))
law_table = ["--mortality-table", f"insured={table_file}:q_male"]
check("table annuity 64 deferred 1, equivalence", male, law_table, flat, const, [], 64.0, "annuity", deferment=1.0)
check("table pure endowment 45.5, 20 years", male, law_table, flat, const, [], 45.5, "pure-endowment", term=20.0)
check("table endowment 30, 35 years", male, law_table, flat, const, [], 30.0, "endowment", term=35.0)
# The shipped yield curve (its maturities are breaks of the forward rate).
curve = load_curve()
cdisc = make_discount(None, curve)
crate = ["--curve", curve_file]
check("curve whole-life annuity at 60", SUSM, law_susm, crate, cdisc, curve[0], 60.0, "annuity", premium=0.0)
check("curve term insurance 50, 30 years", SUSM, law_susm, crate, cdisc, curve[0], 50.0, "term", term=30.0)
check("curve deferred annuity 45+20 on the table", male, law_table, crate, cdisc, curve[0], 45.0, "annuity",
      deferment=20.0)

# 4th order: the error of year 0 shrinks about 16 times as the steps double (an
# annuity deferred 1.5 years for 40 years, on Makeham: breaks off the whole years;
# ages below 80, where r + mu < kSteepForce: no steps added).
errs = []
for s in (2, 4, 8):
    args = ["--product", "annuity", "--x", "40", "--term", "40", "--deferment", "1.5", "--premium", "0"] + law_susm
    row, _ = run(args, f"{s},1,1", flat)
    errs.append(abs(row[0] - reference(SUSM, 40.0, 40.0, 0, 1.0, 1.5, 0, 0, 0, const, [], 0.0)))
ratios = [errs[0] / errs[1], errs[1] / errs[2]]
print("order: errors", errs, "ratios", ratios)
if not all(12 < q < 20 for q in ratios):
    failures.append(f"order: error ratios {ratios} are not about 16")

# A steep law at 1 step a year: whole-life insurance at 40 (SUSM), ages 116-119 near
# the reference (the aligned scheme shortens the steps the law is too steep for).
args = ["--product", "term", "--x", "40", "--premium", "0"] + law_susm
row, _ = run(args, "1,1,1", flat)
for y in range(76, 80):
    want = reference(SUSM, 40.0, 80.0, 1.0, 0, 0, 0, 0, 0, const, [], float(y))
    print(f"1 step a year, age {40 + y}: {row[y]:.6f} (reference {want:.6f})")
    if not abs(row[y] - want) < 2e-3:
        failures.append(f"1 step a year, age {40 + y}: {row[y]} vs {want}")

# The spouse pension at the default settings: within 1e-7 of its converged value.
row, _ = run(["--g", "10", "--r", "65", "--x", "35"], "10,2,10", [])
print(f"spouse pension g 10 r 65 x 35: {row[0]!r}")
if not abs(row[0] - 0.6183124634) < 1e-7:
    failures.append(f"spouse pension year 0: {row[0]!r}, converged 0.6183124634")
# Its term: a 10-year term pays only on death before it, so (Thiele's equation is
# linear) V_10(t) = V(t) - v^(10 - t) (10 - t)p_(35 + t) V(10) for t < 10, with
# the survival of the Danish women's law in closed form; 0 from the term on.
full = row
women = ("gm", 0.0005, 5.728 - 10.0, 0.038)
row, _ = run(["--g", "10", "--r", "65", "--x", "35", "--product", "spouse", "--term", "10"], "10,2,10", [])
for t in range(0, 10):
    want = full[t] - math.exp(-0.05 * (10 - t)) * math.exp(-hazard(women, 35.0 + t, 45.0)) * full[10]
    if not abs(row[t] - want) < 1e-7 * full[0]:
        failures.append(f"spouse pension with a 10-year term, year {t}: {row[t]!r}, want {want!r}")
print(f"spouse pension, 10-year term: year 0 {row[0]!r}, years 10-13 {[row[y] for y in range(10, 14)]}")
if any(row[y] != 0.0 for y in range(10, 86)) or not all(math.isnan(row[y]) for y in range(86, 121)):
    failures.append("spouse pension with a 10-year term: not 0 from year 10 to 85 and NaN after")

# --tolerance: the steps it picks give reserves within the tolerance of the reference
# (whole-life annuity at 60 on Makeham), and its estimate says so; the default run's
# estimate (Richardson, half the steps) is in attrs too.
for tol in (1e-5, 1e-9):
    subprocess.run(["gen-input", "integrate", "--product", "annuity", "--x", "60", "-o", "in.nps"] + law_susm,
                   check=True)
    subprocess.run(["integrate", "-i", "in.nps", "--tolerance", repr(tol), "-o", "out.nps"], check=True)
    out = numpipe.read("out.nps")
    a = out.attrs["reserve"]
    row = out["reserve"][0]
    ref = [reference(SUSM, 60.0, 60.0, 0, 1.0, 0, 0, 0, 0, const, [], float(y)) for y in range(60)]
    worst = max(abs(row[y] - ref[y]) for y in range(60)) / max(abs(v) for v in ref)
    print(f"--tolerance {tol}: {a['steps_per_year']} steps a year, estimate {a['error_estimate_relative']:.2e},"
          f" error {worst:.2e}")
    if not (a["error_estimate_relative"] <= tol and worst <= tol and a["tolerance"] == tol):
        failures.append(f"--tolerance {tol}: estimate {a['error_estimate_relative']}, error {worst}")
if not a["steps_per_year"] > 2:
    failures.append("--tolerance 1e-9 took the fewest steps")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
# The published scheme at 1 step a year on that law: said, not silent.
gen-input integrate --product term --x 40 --steps 1,1,1 --mortality insured=gm:0.00022,-5.568636235841013,0.05076631123304232 -o steep.nps
integrate -i steep.nps --faithful-gf820 -o /dev/null 2> warn.txt
grep -q "warning: policy 0: 1 step a year (h1) is beyond RK4's stability limit for the insured's force of mortality from age 118" warn.txt ||
  fail "no stability warning: $(cat warn.txt)"
integrate -i steep.nps -o /dev/null 2> quiet.txt
[ ! -s quiet.txt ] || fail "the default scheme warned: $(cat quiet.txt)"
expect_exit 2 'contradict' -- integrate -i steep.nps --faithful-gf820 --align-breaks -o /dev/null
no_leftovers .
