# Joint-life and last-survivor annuities on two independent lives (Dickson, Hardy and
# Waters, "Actuarial Mathematics for Life Contingent Risks", ch. 9) against a reference
# written here from the definitions: with S_x(t) = exp(-int_0^t mu_x(x + s) ds) (the
# insured: the Standard Ultimate Survival Model's Makeham law in closed form; the second
# life: the example life table, its force constant within each year of age),
#   joint life:    t p_xy = S_x(t) S_y(t),   last survivor: t p_xy-bar = S_x + S_y - S_x S_y,
#   a-due_xy(M) = (1/M) sum_k v^(k/M) (k/M)p_xy  (arrears: k >= 1), a-bar_xy = int e^(-delta t) t p_xy dt
# (Gauss-Legendre on each stretch between whole ages of either life). The reserve at year y
# is for both lives alive then: the joint annuity at (x + y, y2 + y), the last-survivor one
# a_x+y + a_y2+y - a_xy, just before the sums due that day are paid (an arrears annuity's
# include the sum due then, as for one life); every year up to the older life's 120, within 1e-8 of the largest;
# a last-survivor annuity deferred 10 years with level premiums while both are alive: its
# equivalence premium within 1e-8 relative.
require_python
export PYTHONPATH="$SRC/share/python:$SRC/tests/cli"
"$PY" - <<'PY' || fail "the two-life annuities' comparison failed"
import math, os, subprocess
import numpy as np
import numpipe
from integrate_reference import A, B, c, delta, makeham, Checks, run as run_tools

table = os.environ["SRC"] + "/share/examples/integrate-life-table.csv"
basis = ["--mortality", makeham(), "--mortality-table", "spouse=" + table + ":q_male", "--rate", repr(delta)]
ages, q = [], []
for line in open(table):
    if line.startswith("#") or line.startswith("age"):
        continue
    f = line.strip().split(",")
    ages.append(float(f[0])); q.append(float(f[2]))
force = {int(a): -math.log1p(-qq) for a, qq in zip(ages, q) if a < 120}

def H1(age, t):  # int_0^t of the Makeham force from `age`
    return A * t + B * c ** age * (c ** t - 1.0) / math.log(c)

def H2(age, t):  # the table's force, constant within each year of age (last row holds on)
    total, a, end = 0.0, age, age + t
    while a < end - 1e-15:
        nxt = min(math.floor(a) + 1.0, end)
        total += force[min(int(math.floor(a)), 119)] * (nxt - a)
        a = nxt
    return total

def joint(x, y, t):
    return math.exp(-H1(x, t) - H2(y, t))

def single1(x, t): return math.exp(-H1(x, t))
def single2(y, t): return math.exp(-H2(y, t))

def due(p, h, M, advance, start=0.0):
    k0 = 0 if advance else 1
    ts = [start + k / M for k in range(k0, int(round((h - start) * M)) + 1)]
    return sum(math.exp(-delta * t) * p(t) for t in ts if -1e-9 < t < h - 1e-9) / M

nodes, weights = np.polynomial.legendre.leggauss(20)
def bar(p, h, start, y2):  # int_start^h e^(-delta t) p(t) dt, pieces between whole ages of the table life
    cuts = sorted(set([start, h] + [k - (y2 - math.floor(y2)) for k in range(0, 122)]))
    cuts = [u for u in cuts if start <= u <= h]
    total = 0.0
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a < 1e-12:
            continue
        t = 0.5 * (b - a) * nodes + 0.5 * (b + a)
        total += 0.5 * (b - a) * sum(w * math.exp(-delta * tt) * p(tt) for w, tt in zip(weights, t))
    return total

checks = Checks()
compare = checks.compare
failures = checks.failures

def run(args, integrate_args):
    return run_tools(args + basis, integrate_args)

x, y2 = 60.0, 55.0
hj = 120.0 - max(x, y2)
def a_joint(xx, yy, M, advance, start=0.0):
    h = 120.0 - max(xx, yy)
    return due(lambda t: joint(xx, yy, t), h, M, advance, start)
def a_last(xx, yy, M, advance, start=0.0):
    return (due(lambda t: single1(xx, t), 120.0 - xx, M, advance, start) +
            due(lambda t: single2(yy, t), 120.0 - yy, M, advance, start) - a_joint(xx, yy, M, advance, start))
years = range(int(hj))
for M, timing in ((1, "advance"), (12, "advance"), (4, "arrears")):
    row, _ = run(["--product", "joint-life", "--x", "60", "--second-age", "55"], ["--frequency", str(M), "--timing", timing])
    compare(f"joint life 60/55 M {M} {timing}", row, {t: a_joint(x + t, y2 + t, M, timing == "advance", start=-t) for t in years})
    row, _ = run(["--product", "last-survivor", "--x", "60", "--second-age", "55"], ["--frequency", str(M), "--timing", timing])
    compare(f"last survivor 60/55 M {M} {timing}", row, {t: a_last(x + t, y2 + t, M, timing == "advance", start=-t) for t in years})

def bar_joint(xx, yy, start=0.0):
    return bar(lambda t: joint(xx, yy, t), 120.0 - max(xx, yy), start, yy)
def bar_last(xx, yy, start=0.0):
    return (bar(lambda t: single1(xx, t), 120.0 - xx, start, yy) + bar(lambda t: single2(yy, t), 120.0 - yy, start, yy)
            - bar_joint(xx, yy, start))
row, _ = run(["--product", "joint-life", "--x", "60", "--second-age", "55"], [])
compare("joint life 60/55 continuous", row, {t: bar_joint(x + t, y2 + t) for t in years})
row, _ = run(["--product", "last-survivor", "--x", "60", "--second-age", "55"], [])
compare("last survivor 60/55 continuous", row, {t: bar_last(x + t, y2 + t) for t in years})

# Deferred 10 years, premiums while both are alive until then: the equivalence premium.
row, P = run(["--product", "last-survivor", "--x", "50", "--second-age", "53", "--deferment", "10",
              "--premium", "equivalence"], [])
benefits = bar_last(50.0, 53.0, start=10.0)
premiums = bar(lambda t: joint(50.0, 53.0, t), 10.0, 0.0, 53.0)
Pref = benefits / premiums
print(f"last survivor 50/53 deferred 10: premium {P:.10f}, reference {Pref:.10f}; reserve at 0 {row[0]:.2e}")
if not abs(P - Pref) <= 1e-8 * Pref:
    failures.append(f"last-survivor premium {P!r}, reference {Pref!r}")
if not abs(row[0]) <= 1e-9 * benefits:
    failures.append(f"the equivalence premium leaves {row[0]!r} at inception")

checks.finish()
PY
# The second life's age is needed and checked.
expect_exit 2 "needs the second life's age now" -- gen-input integrate --product joint-life --x 60 -o /dev/null
expect_exit 2 "needs the second life's age now" -- gen-input integrate --product last-survivor --x 60 --second-age 130 -o /dev/null
expect_exit 2 'would never pay' -- gen-input integrate --product joint-life --x 60 --second-age 100 --deferment 25 -o /dev/null
gen-input integrate --product joint-life --x 60 --second-age 50 -o joint.nps
# Equal lives on one law: the last-survivor status's 2 a_x - a_xx.
gen-input integrate --product last-survivor --x 62 --second-age 62 --mortality spouse=gm:0.0005,-4.272,0.038 -o same.nps
gen-input integrate --product annuity --x 62 -o single.nps
gen-input integrate --product joint-life --x 62 --second-age 62 --mortality spouse=gm:0.0005,-4.272,0.038 -o both.nps
for f in same single both; do integrate -i $f.nps -o $f-r.nps; done
"$PY" -c "
import sys, numpipe
ls, a, j = (float(numpipe.read(f + '-r.nps')['reserve'][0][0]) for f in ('same', 'single', 'both'))
print(ls, 2 * a - j)
sys.exit(0 if abs(ls - (2 * a - j)) <= 1e-12 * ls and j < a < ls else 1)" || fail "last survivor of equal lives"
