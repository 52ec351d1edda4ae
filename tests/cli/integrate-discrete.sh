# Discrete payments (--frequency M, --timing advance|arrears) against the Standard
# Ultimate Survival Model (Dickson, Hardy and Waters, "Actuarial Mathematics for Life
# Contingent Risks": Makeham mu = A + B c^x, A = 0.00022, B = 2.7e-6, c = 1.124, i = 5%):
# its published annual values to their printed digits (a-due at 60 = 14.9041, A at 60 =
# 0.29028), and an independent reference written here from the textbook definitions
#   a-due(M) = (1/M) sum_k v^(k/M) (k/M)p_x,   A(M) = sum_k v^((k+1)/M) ((k/M)p_x - ((k+1)/M)p_x)
# (survival from the integrated Makeham force, ages ending at 120; the reserve at a whole
# year is the value just before the sums due then are paid) within 1e-8 of the
# largest reserve at every year, and the equivalence premium within 1e-8 relative.
require_python
export PYTHONPATH="$SRC/share/python"
"$PY" - <<'PY' || fail "the discrete payments' comparison failed"
import math, subprocess
import numpy as np
import numpipe

A, B, c = 0.00022, 2.7e-6, 1.124
delta = math.log(1.05)
law = ["--mortality", "insured=gm:%r,%r,%r" % (A, math.log10(B), math.log10(c)), "--rate", repr(delta)]

def survival(age, t):  # t p_age under Makeham: exp(-(A t + B c^age (c^t - 1) / ln c))
    t = np.asarray(t, dtype=float)
    return np.exp(-(A * t + B * c**age * (c**t - 1.0) / math.log(c)))

def v(t):
    return 1.05 ** (-np.asarray(t, dtype=float))

def annuity(age, n, M, advance, start=0.0):
    """EPV at age `age` of 1/M paid at start + k/M (advance: k >= 0, arrears: k >= 1), from now
    (a sum due now counts: the reserve is the value just before it is paid) and before n."""
    k = np.arange(0 if advance else 1, int(round((n - start) * M)) + 1)
    t = start + k / M
    t = t[(t > -1e-9) & (t < n - 1e-9)]
    return float(np.sum(v(t) * survival(age, t)) / M)

def insurance(age, n, M):
    """EPV of 1 paid at the end of the 1/M period of death before n (n a multiple of 1/M)."""
    k = np.arange(0, int(round(n * M)))
    return float(np.sum(v((k + 1) / M) * (survival(age, k / M) - survival(age, (k + 1) / M))))

def run(args, integrate_args):
    subprocess.run(["gen-input", "integrate", "-o", "in.nps"] + args + law, check=True)
    subprocess.run(["integrate", "-i", "in.nps", "-o", "out.nps", *integrate_args], check=True)
    out = numpipe.read("out.nps")
    if "--frequency" in integrate_args:
        M = integrate_args[integrate_args.index("--frequency") + 1]
        if out.attrs["reserve"].get("frequency") != int(M):
            failures.append(f"attrs frequency {out.attrs['reserve'].get('frequency')!r}, asked {M}")
    return [float(r) for r in out["reserve"][0]], float(out["premium"][0])

failures = []
def compare(name, row, ref):
    scale = max(abs(r) for r in ref.values())
    worst = max(abs(row[y] - ref[y]) for y in ref) / scale
    print(f"{name}: year 0 {row[0]:.10f} (reference {ref[0]:.10f}), worst {worst:.2e} of the largest")
    if not worst <= 1e-8:
        failures.append(f"{name}: off by {worst:.3e} of its largest reserve")

# The textbook's printed values (annual, at 60).
row, _ = run(["--product", "annuity", "--x", "60", "--premium", "0"], ["--frequency", "1", "--timing", "advance"])
if round(row[0], 4) != 14.9041:
    failures.append(f"a-due at 60: {row[0]!r}, published 14.9041")
row_ins, _ = run(["--product", "term", "--x", "60", "--premium", "0"], ["--frequency", "1"])
if round(row_ins[0], 5) != 0.29028:
    failures.append(f"A at 60: {row_ins[0]!r}, published 0.29028")
print(f"a-due(60) = {row[0]:.6f} (published 14.9041), A(60) = {row_ins[0]:.7f} (published 0.29028)")

# Whole-life annuities and insurances at a few ages, M = 1 and 12, both timings: every year.
for x in (30.0, 60.0, 85.0):
    h = 120.0 - x
    years = range(0, int(h))
    for M in (1, 12):
        for timing in ("advance", "arrears"):
            row, _ = run(["--product", "annuity", "--x", repr(x), "--premium", "0"],
                         ["--frequency", str(M), "--timing", timing])
            compare(f"annuity x {x} M {M} {timing}", row,
                    {y: annuity(x + y, h - y, M, timing == "advance", start=-y) for y in years})
        row, _ = run(["--product", "term", "--x", repr(x), "--premium", "0"], ["--frequency", str(M)])
        compare(f"insurance x {x} M {M}", row, {y: insurance(x + y, h - y, M) for y in years})

# A deferred annuity whose deferment is off the quarter grid, paid quarterly in arrears.
row, _ = run(["--product", "annuity", "--x", "50", "--deferment", "10.5", "--premium", "0"],
             ["--frequency", "4", "--timing", "arrears"])
compare("annuity 50 deferred 10.5, M 4 arrears", row,
        {y: annuity(50.0 + y, 70.0 - y, 4, False, start=10.5 - y) for y in range(0, 70)})

# A 20-year endowment at 45 for 50000, monthly premiums in advance by equivalence.
row, P = run(["--product", "endowment", "--x", "45", "--term", "20", "--benefit", "50000", "--premium", "equivalence"],
             ["--frequency", "12"])
def endowment(age, n):
    return insurance(age, n, 12) + float(v(n) * survival(age, n))
Pref = 50000 * endowment(45.0, 20.0) / annuity(45.0, 20.0, 12, True)
print(f"endowment 45/20 monthly premium (yearly) {P:.8f}, reference {Pref:.8f}")
if not abs(P - Pref) <= 1e-8 * Pref:
    failures.append(f"endowment premium {P!r}, reference {Pref!r}")
ref = {y: 50000 * endowment(45.0 + y, 20.0 - y) - Pref * annuity(45.0 + y, 20.0 - y, 12, True, start=-y)
       for y in range(20)}
ref[20] = 50000.0
compare("endowment 45/20 monthly, reserves", row, ref)

for f in failures:
    print("FAIL:", f)
raise SystemExit(1 if failures else 0)
PY
# Options refused where they do not apply, naming the option.
gen-input integrate --g 10 --r 65 --x 35 -o spouse.nps
expect_exit 2 '--frequency does not apply to the spouse pension' -- integrate -i spouse.nps --frequency 12 -o /dev/null
gen-input integrate --product term --x 40 --premium 0 -o single.nps
expect_exit 2 '--timing applies to annuities and premiums' -- integrate -i single.nps --frequency 4 --timing arrears -o /dev/null
expect_exit 2 '--timing applies to discrete payments' -- integrate -i single.nps --timing advance -o /dev/null
expect_exit 2 '--frequency must be 1, 2, 4, 12 or continuous' -- integrate -i single.nps --frequency 3 -o /dev/null
expect_exit 2 '--timing must be advance or arrears' -- integrate -i single.nps --frequency 1 --timing due -o /dev/null
expect_exit 2 '--frequency works in the default scheme' -- integrate -i single.nps --frequency 1 --faithful-gf820 -o /dev/null
# continuous stays the default: the same bits as without the option.
integrate -i single.nps -o a.nps --no-error-estimate
integrate -i single.nps -o b.nps --no-error-estimate --frequency continuous
"$PY" -c "
import sys, numpy as np, numpipe
a, b = numpipe.read('a.nps'), numpipe.read('b.nps')
sys.exit(0 if np.array_equal(a['reserve'], b['reserve'], equal_nan=True) else 1)" || fail "--frequency continuous differs from the default"
