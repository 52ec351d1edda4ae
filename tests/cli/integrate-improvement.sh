# Mortality improvement: a base table of q_x (the example life table) improved by yearly
# factors AI_x, q_x(year) = q_x(base) (1 - AI_x)^(year - base year), for a life aged x in the
# valuation year Y (the cohort: age x + k in the year Y + k), against a reference from the
# definitions: k p_x = prod_{j<k} (1 - q_{x+j}(Y + j)), a-due = sum_k v^k k p_x, and, the
# force constant within each year of age and calendar year, a-bar = sum_k v^k k p_x
# (1 - e^-(delta + mu_k)) / (delta + mu_k), mu_k = -ln(1 - q_{x+k}(Y + k)); the reserve at
# every year within 1e-8 of the largest. A policies table's year column gives each policy
# its valuation year; bad uses are refused.
require_python
T="$SRC/share/examples/integrate-life-table.csv"
"$PY" -c "
print('age,ai')
for a in range(0, 121): print(f'{a},{0.025 if a < 70 else 0.015 if a < 95 else 0.005}')" > ai.csv
export PYTHONPATH="$SRC/share/python"
"$PY" - "$T" <<'PY' || fail "the improved mortality's comparison failed"
import math, subprocess, sys
import numpipe
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "cli"))
from integrate_reference import Checks, run as run_tools
table = sys.argv[1]
q = {}
for line in open(table):
    if line[0] in "#a":
        continue
    f = line.strip().split(",")
    q[int(float(f[0]))] = float(f[1])  # q_female
ai = {int(l.split(",")[0]): float(l.split(",")[1]) for l in open("ai.csv").read().split()[1:]}
delta, base = 0.04, 2020
v = math.exp(-delta)

def q_at(age, year):
    return q[min(age, 119)] * (1 - ai[min(age, 119)]) ** (year - base)

def annuities(x, Y):
    h = 120 - x
    due, bar = {}, {}
    for y in range(h):
        p, a_due, a_bar = 1.0, 0.0, 0.0
        for k in range(h - y):
            qk = q_at(x + y + k, Y + y + k)
            mu = -math.log1p(-qk)
            a_due += v ** k * p
            a_bar += v ** k * p * (1 - math.exp(-(delta + mu))) / (delta + mu)
            p *= 1 - qk
        due[y], bar[y] = a_due, a_bar
    return due, bar

checks = Checks()
compare = checks.compare
failures = checks.failures

def run(x, Y, integrate_args):
    return run_tools(["--product", "annuity", "--x", str(x), "--rate", repr(delta), "--mortality-table",
                      table + ":q_female", "--improvement", "insured=ai.csv", "--base-year", str(base),
                      "--valuation-year", str(Y)], integrate_args)[0]

for x, Y in ((40, 2020), (65, 2031), (85, 2050)):
    due, bar = annuities(x, Y)
    compare(f"improved annuity-due x {x} in {Y}", run(x, Y, ["--frequency", "1"]), due)
    compare(f"improved continuous annuity x {x} in {Y}", run(x, Y, []), bar)
checks.finish()
PY
# A policies table's year column: each policy valued in its own year.
printf 'x,product,year\n65,annuity,2025\n65,annuity,2035\n' > years.csv
gen-input integrate --from-text years.csv --mortality-table "$T:q_female" --improvement insured=ai.csv --base-year 2020 -o years.nps
integrate -i years.nps -o years-r.nps
for y in 2025 2035; do
  gen-input integrate --product annuity --x 65 --mortality-table "$T:q_female" --improvement insured=ai.csv \
    --base-year 2020 --valuation-year $y | integrate -o y$y.nps
done
"$PY" -c "
import sys, numpy as np, numpipe
m = numpipe.read('years-r.nps')['reserve']
a, b = numpipe.read('y2025.nps')['reserve'][0], numpipe.read('y2035.nps')['reserve'][0]
sys.exit(0 if np.array_equal(m[0], a, equal_nan=True) and np.array_equal(m[1], b, equal_nan=True) and b[0] > a[0] else 1)" ||
  fail "the year column differs from --valuation-year"
# Refused: no base year, a law that is not a q table, a year before the base, the spouse pension.
expect_exit 2 '--improvement needs --base-year' -- gen-input integrate --product annuity --mortality-table "$T:q_female" --improvement insured=ai.csv -o /dev/null
expect_exit 2 'must be a table of q_x' -- gen-input integrate --product annuity --improvement insured=ai.csv --base-year 2020 -o /dev/null
expect_exit 2 'the valuation year 2010 is before the base year 2020' -- gen-input integrate --product annuity --mortality-table "$T:q_female" \
  --improvement insured=ai.csv --base-year 2020 --valuation-year 2010 -o /dev/null
expect_exit 2 'not the spouse pension' -- gen-input integrate --mortality-table "$T:q_female" --improvement insured=ai.csv --base-year 2020 -o /dev/null
printf 'age,ai\n60,1.5\n' > badai.csv
expect_exit 2 'AI_x must be in [0, 1)' -- gen-input integrate --product annuity --mortality-table "$T:q_female" --improvement insured=badai.csv --base-year 2020 -o /dev/null
