# Select mortality against the Standard Select Survival Model (Dickson, Hardy and Waters,
# "Actuarial Mathematics for Life Contingent Risks" (AMLCR), 2nd ed., sec. 3.9: Makeham
# mu_x = A + B c^x, A = 0.00022, B = 2.7e-6, c = 1.124; select period 2 years with
# mu_[x]+s = 0.9^(2-s) mu_{x+s} for s < 2; i = 5%), by a reference written here from the
# definitions: the survival function of a life selected at [x] is
#   S(t) = exp(-int_0^t mu_[x]+s ds)
# with the integral by scipy's quad over each year of duration (the select period's end a
# break), and
#   a-due_[x]+y = sum_k v^k S(y+k)/S(y),  A_[x]+y = sum_k v^(k+1) (S(y+k) - S(y+k+1))/S(y),
#   a-bar_[x]+y = int_0^(h-y) e^(-delta s) S(y+s)/S(y) ds (Gauss-Legendre on each year),
# (h = 120 - x) at every year y of a policy issued now to a life selected now, within 1e-8
# of the largest reserve; then the same model given as a select table in CSV (AMLCR's
# layout: age at selection, q_[x], q_[x]+1, then the ultimate q_x) gives the same annual
# values, and the options' bad values are refused.
require_python
export PYTHONPATH="$SRC/share/python:$SRC/tests/cli"
"$PY" - <<'PY' || fail "the select mortality comparison failed"
import math
import numpy as np
from scipy import integrate as si
from integrate_reference import A, B, c, delta, makeham, Checks, run as run_tools

law = ["--mortality", makeham(), "--rate", repr(delta)]

def mu(age):
    return A + B * c ** age

def mu_select(x, s):  # the force of a life selected at x, s years on
    return (0.9 ** (2 - s) if s < 2 else 1.0) * mu(x + s)

def cumulative(x, h):  # H[k] = int_0^k mu_[x]+s ds at whole k = 0 .. ceil(h)
    n = int(math.ceil(h - 1e-12))
    H = [0.0]
    for k in range(n):
        H.append(H[-1] + si.quad(lambda s: mu_select(x, s), k, min(k + 1, h), epsabs=0, epsrel=1e-13)[0])
    return H

def S_at(x, H, t):  # S(t) for t inside a year: H[floor t] + int_floor^t
    k = int(math.floor(t))
    if t == k:
        return math.exp(-H[k])
    return math.exp(-(H[k] + si.quad(lambda s: mu_select(x, s), k, t, epsabs=0, epsrel=1e-13)[0]))

v = 1.05 ** -1
nodes, weights = np.polynomial.legendre.leggauss(16)

def references(x):
    h = 120.0 - x
    H = cumulative(x, h)
    S = [math.exp(-Hk) for Hk in H]
    n = len(S) - 1
    adue, ins, abar = {}, {}, {}
    # a-bar: per year of duration, Gauss-Legendre on e^(-delta t) S(t)
    year_int = []
    for k in range(n):
        b = min(k + 1.0, h)
        t = 0.5 * (b - k) * nodes + 0.5 * (b + k)
        f = [math.exp(-delta * tt) * S_at(x, H, tt) for tt in t]
        year_int.append(0.5 * (b - k) * float(np.dot(weights, f)))
    for y in range(int(h)):
        adue[y] = sum(v ** (k - y) * S[k] for k in range(y, n) if k < h - 1e-9) / S[y]
        ins[y] = sum(v ** (k + 1 - y) * (S[k] - S[k + 1]) for k in range(y, n)) / S[y]
        abar[y] = math.exp(delta * y) * sum(year_int[y:]) / S[y]
    return adue, ins, abar

checks = Checks()
compare = checks.compare
failures = checks.failures

def run(args, integrate_args, select):
    return run_tools(args + select, integrate_args)[0]

sssm = law + ["--select", "insured=2,0.9"]
annual = {}
for x in (30.0, 60.0, 85.0):
    adue, ins, abar = references(x)
    row = run(["--product", "annuity", "--x", repr(x)], ["--frequency", "1"], sssm)
    compare(f"select annuity-due [{x:g}]", row, adue)
    annual[x] = (row, adue)
    row = run(["--product", "term", "--x", repr(x)], ["--frequency", "1"], sssm)
    compare(f"select insurance [{x:g}] (end of the year of death)", row, ins)
    row = run(["--product", "annuity", "--x", repr(x)], [], sssm)
    compare(f"select continuous annuity [{x:g}]", row, abar)
    if x == 60.0:
        print(f"a-due_[60] = {adue[0]:.6f}, A_[60] = {ins[0]:.6f} (reference); the ultimate a-due_60 = 14.9041")
        # selection lowers mortality: the select annuity exceeds the ultimate one
        ult = run(["--product", "annuity", "--x", "60"], ["--frequency", "1"], law)
        if not (adue[0] > ult[0] > 14.90405 and round(ult[0], 4) == 14.9041):
            failures.append(f"select {adue[0]} against ultimate {ult[0]}")

# The same model as a select table (q by year from the integrated forces).
with open("sssm.csv", "w") as f:
    f.write("age,q_sel0,q_sel1,q\n")
    for age in range(20, 121):
        q0 = 1 - math.exp(-si.quad(lambda s: mu_select(age, s), 0, 1, epsabs=0, epsrel=1e-13)[0])
        q1 = 1 - math.exp(-si.quad(lambda s: mu_select(age, s), 1, 2, epsabs=0, epsrel=1e-13)[0])
        qu = 1 - math.exp(-si.quad(mu, age, age + 1, epsabs=0, epsrel=1e-13)[0]) if age < 120 else 1.0
        f.write(f"{age},{q0!r},{q1!r},{qu!r}\n")
for x in (30.0, 60.0, 85.0):
    row = run(["--product", "annuity", "--x", repr(x)], ["--frequency", "1"],
              ["--rate", repr(delta), "--select-table", "insured=sssm.csv"])
    compare(f"select table annuity-due [{x:g}]", row, annual[x][1])

checks.finish()
PY
# Bad values, refused naming what is wrong.
expect_exit 2 '--select wants' -- gen-input integrate --product annuity --select insured=0,0.9 -o /dev/null
expect_exit 2 '--select wants' -- gen-input integrate --product annuity --select insured=2 -o /dev/null
expect_exit 2 "no mortality law named 'nobody'" -- gen-input integrate --product annuity --select nobody=2,0.9 -o /dev/null
expect_exit 2 'not the spouse pension' -- gen-input integrate --select insured=2,0.9 -o /dev/null
expect_exit 2 'is by whole age at selection' -- gen-input integrate --product annuity --x 60.5 --select-table sssm.csv -o /dev/null
printf 'age,q0,q1,q\n60,0.01,1.5,0.02\n' > badsel.csv
expect_exit 2 'select rates' -- gen-input integrate --product annuity --x 60 --select-table badsel.csv -o /dev/null
gen-input integrate --product annuity --x 60 --select insured=2,0.9 -o sel.nps
# A select factor of 1 is the ultimate law, bit for bit.
gen-input integrate --product endowment --x 40 --term 20 --premium equivalence --select insured=2,1 -o one.nps
gen-input integrate --product endowment --x 40 --term 20 --premium equivalence -o none.nps
integrate -i one.nps -o one-r.nps
integrate -i none.nps -o none-r.nps
"$PY" -c "
import sys, numpy as np, numpipe
a, b = numpipe.read('one-r.nps'), numpipe.read('none-r.nps')
sys.exit(0 if np.array_equal(a['reserve'], b['reserve'], equal_nan=True) else 1)" || fail "a select factor of 1 differs from the ultimate law"
