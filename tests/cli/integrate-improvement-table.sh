# Mortality improvement by age and calendar year: a base table of q_x (the example life
# table, base year 2020) and rates AI(x, j) by age (rows) and calendar year (columns, the
# CMI and SOA MP scales' convention q_x(j) = q_x(j - 1) (1 - AI(x, j)), the last year's
# rates after it), for lives aged x in the valuation year Y whose cohort follows the
# diagonal (age x + k in the year Y + k). Reference from the definitions, not the kernels:
# q_x(Y) = q_x(2020) prod_{j=2021..Y} (1 - AI(x, min(j, last))), k p_x = prod (1 - q), a-due
# and, the force constant within each year of age and calendar year, a-bar; a last-survivor
# annuity on two improving lives (independent: a_xy-bar = a_x + a_y - a_xy). The reserve at
# every year within 1e-8 of the largest. A table whose rates are the same every year equals
# --improvement; the reader refuses bad tables, naming the line or the year.
require_python
T="$SRC/share/examples/integrate-life-table.csv"
export PYTHONPATH="$SRC/share/python:$SRC/tests/cli"
"$PY" - "$T" <<'PY' || fail "the improvement by calendar year's comparison failed"
import math, sys
from integrate_reference import Checks, run, write_rates_by_year
years = list(range(2018, 2046))
ai = write_rates_by_year("aiy.csv", range(20, 121), years, lambda a, y: max(0.0, 0.032 - 0.0007 * (y - 2018) - 0.0002 * (a // 5)))
table = sys.argv[1]
q = {"female": {}, "male": {}}
for line in open(table):
    if line[0] in "#a":
        continue
    f = line.strip().split(",")
    q["female"][int(float(f[0]))], q["male"][int(float(f[0]))] = float(f[1]), float(f[2])
delta, base = 0.04, 2020
v = math.exp(-delta)

def rate(age, year):  # ages the table lacks improve by 0; after its last year, the last year's rates
    return ai[age][min(year, years[-1]) - years[0]] if age in ai else 0.0

def q_at(sex, age, year):
    a = min(age, 119)
    improved = q[sex][a]
    for j in range(base + 1, year + 1):
        improved *= 1 - rate(a, j)
    return improved

def annuities(lives, Y):
    """Annuities on the joint status of the lives [(sex, age now)]: {year: value}."""
    h = 120 - max(x for _, x in lives)
    due, bar = {}, {}
    for y in range(h):
        p, a_due, a_bar = 1.0, 0.0, 0.0
        for k in range(h - y):
            mu = sum(-math.log1p(-q_at(s, x + y + k, Y + y + k)) for s, x in lives)
            a_due += v ** k * p
            a_bar += v ** k * p * (1 - math.exp(-(delta + mu))) / (delta + mu)
            p *= math.exp(-mu)
        due[y], bar[y] = a_due, a_bar
    return due, bar

checks = Checks()
basis = ["--rate", repr(delta), "--mortality-table", table + ":q_female", "--mortality-table",
         "spouse=" + table + ":q_male", "--improvement-table", "insured=aiy.csv", "--improvement-table",
         "spouse=aiy.csv", "--base-year", str(base)]
for x, Y in ((40, 2020), (65, 2031), (85, 2050)):
    due, bar = annuities([("female", x)], Y)
    single = ["--product", "annuity", "--x", str(x), "--valuation-year", str(Y)] + basis
    checks.compare(f"annuity-due x {x} in {Y}", run(single, ["--frequency", "1"])[0], due)
    checks.compare(f"continuous annuity x {x} in {Y}", run(single, [])[0], bar)
# Two improving lives, each on its own diagonal: a last survivor at 62 and 58 in 2024.
Y = 2024
a_x, a_y, a_xy = (annuities(l, Y)[0] for l in ([("female", 62)], [("male", 58)], [("female", 62), ("male", 58)]))
h = 120 - 62
last = {k: a_x[k] + a_y[k] - a_xy[k] for k in range(h)}
row = run(["--product", "last-survivor", "--x", "62", "--second-age", "58", "--valuation-year", str(Y)] + basis, ["--frequency", "1"])[0]
checks.compare(f"last-survivor annuity-due 62, 58 in {Y}", row, last)
checks.finish()
PY
# Rates the same every year (the table by share/examples/integrate-improvement-by-year.sh,
# one age band at a time): the same reserves as --improvement's rates by age (1e-12).
"$SRC/share/examples/integrate-improvement-by-year.sh" --ages 0:79 2021:2023=0.02 > flat.csv
"$SRC/share/examples/integrate-improvement-by-year.sh" --ages 80:120 2021:2023=0.01 | tail -n +2 >> flat.csv
"$PY" -c "
print('age,ai')
for a in range(0, 121): print(f'{a},{0.02 if a < 80 else 0.01}')" > ai.csv
for improve in "--improvement-table insured=flat.csv" "--improvement insured=ai.csv"; do
  gen-input integrate --product endowment --x 45 --term 30 --premium equivalence --mortality-table "$T:q_female" \
    $improve --base-year 2020 --valuation-year 2033 | integrate --frequency 12 -o "r${improve%% *}.nps"
done
verify r--improvement-table.nps r--improvement.nps --rtol 1e-12 --atol 1e-13 ||
  fail "improvement rates the same every year differ from --improvement"
# Bad tables and uses: named by line, column or year.
base=(gen-input integrate --product annuity --mortality-table "$T:q_female" --base-year 2020 -o /dev/null)
printf 'age,2021,2022\n60,0.01,1.5\n' > bad-rate.csv
expect_exit 2 'bad-rate.csv:2: age 60, year 2022: the improvement rate must be in [0, 1): 1.5' -- "${base[@]}" --improvement-table insured=bad-rate.csv
printf 'age,2021,next\n60,0.01,0.01\n' > bad-name.csv
expect_exit 2 "column 3 is named 'next': name each column after the first by its calendar year" -- "${base[@]}" --improvement-table insured=bad-name.csv
printf 'age,2021,2023\n60,0.01,0.01\n' > gap.csv
expect_exit 2 'years must increase by 1, got 2023 after 2021' -- "${base[@]}" --improvement-table insured=gap.csv
printf 'age,2023,2024\n60,0.01,0.01\n' > late.csv
expect_exit 2 'improvement rates start in 2023; the base year is 2020, so they must start in 2021 or before' -- "${base[@]}" --improvement-table insured=late.csv
printf 'age,2021\n60,0.01\n59,0.01\n' > order.csv
expect_exit 2 'order.csv:3: age 59: ages must increase, after 60' -- "${base[@]}" --improvement-table insured=order.csv
printf 'age,2021\n60,oops\n' > text.csv
expect_exit 2 "text.csv:2: column '2021': not a finite number: 'oops'" -- "${base[@]}" --improvement-table insured=text.csv
printf 'age\n60\n' > one.csv
expect_exit 2 'want the ages and one column per calendar year' -- "${base[@]}" --improvement-table insured=one.csv
expect_exit 2 'must be a table of q_x' -- gen-input integrate --product annuity --improvement-table insured=aiy.csv --base-year 2020 -o /dev/null
expect_exit 2 '--improvement-table needs --base-year' -- gen-input integrate --product annuity --mortality-table "$T:q_female" --improvement-table insured=aiy.csv -o /dev/null
expect_exit 2 'has improvement rates already' -- "${base[@]}" --improvement insured=ai.csv --improvement-table insured=aiy.csv
expect_exit 2 'has improvement rates by year already' -- "${base[@]}" --improvement-table insured=aiy.csv --improvement insured=ai.csv
expect_exit 2 'need a whole base year' -- gen-input integrate --product annuity --mortality-table "$T:q_female" --improvement-table insured=aiy.csv --base-year 2020.5 -o /dev/null
expect_exit 2 'the valuation year must be a whole year' -- "${base[@]}" --improvement-table insured=aiy.csv --valuation-year 2030.5
