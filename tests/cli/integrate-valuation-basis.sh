# --cash-flows and --duration on the everyday basis: select mortality, improvement by age
# and calendar year, joint-life and last-survivor annuities, held against a reference
# written here from the definitions (Dickson, Hardy and Waters, AMLCR, chs. 3, 7, 9): the
# Standard Select Survival Model (Makeham A = 0.00022, B = 2.7e-6, c = 1.124, select
# period 2 years, mu_[x]+s = 0.9^(2 - s) mu_x+s), t p_[x] = exp(-int_0^t mu_[x]+s ds) by
# Gauss-Legendre on each year; an improving table's k p_x = prod_j (1 - q_{x+j}(Y + j));
# two independent lives t p_xy = t p_x t p_y, the last survivor t p_x + t p_y - t p_xy
# (its premiums while both are alive). Expected flows by year: annual payments S(y), sums
# at the end of the year of death S(y) - S(y + 1), continuous streams int_y^(y+1) S(t) dt;
# with annual payments the discounted flows are the reserve at 0 (zero with an
# equivalence premium). dV/d delta of an annuity-due: -sum_k k v^k S(k).
require_python
T="$SRC/share/examples/integrate-life-table.csv"
export PYTHONPATH="$SRC/share/python:$SRC/tests/cli"
"$PY" - "$T" <<'PY' || fail "the valuation comparison on the everyday basis failed"
import math, subprocess, sys
import numpy as np
import numpipe
from integrate_reference import A, B, c, delta, makeham, write_rates_by_year
years = list(range(2021, 2041))
ai = write_rates_by_year("aiy.csv", range(0, 121), years, lambda a, y: 0.025 - 0.0005 * (y - 2021) - 0.0001 * (a // 10))
gl_x, gl_w = np.polynomial.legendre.leggauss(20)
failures = []

def integral(f, a, b):
    t = 0.5 * (b - a) * gl_x + 0.5 * (b + a)
    return float(0.5 * (b - a) * np.sum(gl_w * f(t)))

def mu_select(x, s):  # the Standard Select Survival Model at duration s after selection at x
    s = np.asarray(s, float)
    return np.where(s < 2, 0.9 ** (2 - s), 1.0) * (A + B * c ** (x + s))

def mu_ultimate(x, s):
    return A + B * c ** (x + np.asarray(s, float))

def survival(mu, x, t):  # exp(-int_0^t mu(x, s) ds), year by year
    whole = int(math.floor(t))
    total = sum(integral(lambda s: mu(x, s), k, k + 1) for k in range(whole))
    if t > whole:
        total += integral(lambda s: mu(x, s), whole, t)
    return math.exp(-total)

def run(gen, args, name):
    subprocess.run(["gen-input", "integrate", "-o", name + ".nps", "--rate", repr(delta)] + gen, check=True)
    subprocess.run(["integrate", "-i", name + ".nps", "-o", name + "-out.nps"] + args, check=True)
    return numpipe.read(name + "-out.nps")

def check(name, got, want, tol):
    got, want = np.asarray(got, float), np.asarray(want, float)
    worst = float(np.max(np.abs(got - want))) / float(np.max(np.abs(want)))
    print(f"{name}: worst {worst:.2e} of the largest")
    if not worst <= tol:
        failures.append(f"{name}: off by {worst:.3e} (tolerance {tol:g})")

v = math.exp(-delta) ** np.arange(121.0)
def discounted(name, cf, reserve0, scale):
    pv = float(np.sum(v * (cf[:, 0] - cf[:, 1])))
    print(f"{name}: discounted flows {pv:.12g}, reserve at 0 {reserve0:.12g}")
    if not abs(pv - reserve0) <= 1e-8 * scale:
        failures.append(f"{name}: discounted flows {pv!r} against the reserve at 0 {reserve0!r}")

# 1. Endowment insurance at [50] for 20 years, 100000, select, annual, equivalence premium.
x, n, S = 50, 20, 100000.0
out = run(["--product", "endowment", "--x", str(x), "--term", str(n), "--benefit", repr(S), "--premium", "equivalence",
           "--mortality", makeham(), "--select", "insured=2,0.9"], ["--frequency", "1", "--cash-flows"], "sel")
P, cf = float(out["premium"][0]), out["cash_flow"][0]
Sx = [survival(mu_select, x, k) for k in range(n + 1)]
ben, prem = np.zeros(121), np.zeros(121)
for y in range(n):
    prem[y] = P * Sx[y]
    ben[y + 1] = S * (Sx[y] - Sx[y + 1])
ben[n] += S * Sx[n]
check("select endowment benefits by year", cf[:, 0], ben, 1e-10)
check("select endowment premiums by year", cf[:, 1], prem, 1e-10)
discounted("select endowment", cf, float(out["reserve"][0][0]), S)

# 2. Term insurance at [40] for 15 years, select, continuous: flows by year from quadrature.
x, n = 40, 15
out = run(["--product", "term", "--x", str(x), "--term", str(n), "--premium", "0.004", "--mortality",
           makeham(), "--select", "insured=2,0.9"], ["--cash-flows"], "selc")
cf = out["cash_flow"][0]
ben, prem = np.zeros(121), np.zeros(121)
for y in range(n):
    ben[y] = survival(mu_select, x, y) - survival(mu_select, x, y + 1)
    prem[y] = 0.004 * integral(lambda t: np.array([survival(mu_select, x, u) for u in t]), y, y + 1)
check("select term insurance benefits by year (continuous)", cf[:, 0], ben, 1e-10)
check("select term insurance premiums by year (continuous)", cf[:, 1], prem, 1e-9)

# 3. An annuity-due at 65 in 2031 on an improving table (rates by age and calendar year,
#    base year 2020): flows, the discounted flows, and dV/d delta against the definition.
q = {}
for line in open(sys.argv[1]):
    if line[0] not in "#a":
        f = line.strip().split(",")
        q[int(float(f[0]))] = float(f[1])
def q_at(age, year):
    a, improved = min(age, 119), q[min(age, 119)]
    for j in range(2021, year + 1):
        improved *= 1 - ai[a][min(j, years[-1]) - years[0]]
    return improved
x, Y = 65, 2031
out = run(["--product", "annuity", "--x", str(x), "--mortality-table", sys.argv[1] + ":q_female", "--improvement-table",
           "insured=aiy.csv", "--base-year", "2020", "--valuation-year", str(Y)],
          ["--frequency", "1", "--cash-flows", "--duration"], "imp")
cf = out["cash_flow"][0]
Sk, p = np.zeros(121), 1.0
for k in range(120 - x):
    Sk[k] = p
    p *= 1 - q_at(x + k, Y + k)
check("improved annuity-due benefits by year", cf[:, 0], Sk, 1e-12)
discounted("improved annuity-due", cf, float(out["reserve"][0][0]), float(out["reserve"][0][0]))
k = np.arange(121.0)
check("improved annuity-due dV/d delta at 0", [out["reserve_rate_derivative"][0][0]], [-float(np.sum(k * v * Sk))], 1e-7)

# 4. Joint-life and last-survivor annuities-due on the insured [60] (select) and a
#    second life 55 on the ultimate law; a deferred last survivor with an equivalence premium.
two = ["--mortality", makeham(), "--select", "insured=2,0.9", "--mortality", makeham("spouse")]
Sx = np.array([survival(mu_select, 60, t) if t <= 60 else 0.0 for t in range(121)])
Sy = np.array([survival(mu_ultimate, 55, t) if t <= 65 else 0.0 for t in range(121)])
out = run(["--product", "joint-life", "--x", "60", "--second-age", "55"] + two, ["--frequency", "1", "--cash-flows", "--duration"], "jl")
want = Sx * Sy
want[60:] = 0.0
check("joint-life annuity-due benefits by year", out["cash_flow"][0][:, 0], want, 1e-10)
check("joint-life annuity-due dV/d delta at 0", [out["reserve_rate_derivative"][0][0]], [-float(np.sum(k * v * want))], 1e-7)
out = run(["--product", "last-survivor", "--x", "60", "--second-age", "55", "--deferment", "10", "--premium", "equivalence"] + two,
          ["--frequency", "1", "--cash-flows", "--duration"], "ls")
P, cf = float(out["premium"][0]), out["cash_flow"][0]
last = Sx + Sy - Sx * Sy
last[65:] = 0.0
last[:10] = 0.0
prem = np.zeros(121)
prem[:10] = P * (Sx * Sy)[:10]
check("deferred last-survivor annuity-due benefits by year", cf[:, 0], last, 1e-10)
check("deferred last-survivor premiums by year (both alive)", cf[:, 1], prem, 1e-10)
discounted("deferred last survivor", cf, float(out["reserve"][0][0]), float(np.sum(v * last)))
# continuous: int_y^(y+1) (t p_x + t p_y - t p_xy) dt
out = run(["--product", "last-survivor", "--x", "60", "--second-age", "55"] + two, ["--cash-flows"], "lsc")
def last_at(t):
    return np.array([survival(mu_select, 60, u) + survival(mu_ultimate, 55, u) -
                     survival(mu_select, 60, u) * survival(mu_ultimate, 55, u) if u <= 60 else survival(mu_ultimate, 55, u)
                     for u in t])
want = np.zeros(121)
for y in range(65):
    want[y] = integral(last_at, y, y + 1) if y != 60 else integral(last_at, 60, 60) + integral(last_at, 60, 61)
check("continuous last-survivor annuity benefits by year", out["cash_flow"][0][:, 0], want, 1e-9)

if failures:
    print("\n".join(failures))
    raise SystemExit(1)
PY
