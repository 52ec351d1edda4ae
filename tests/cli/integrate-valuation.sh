# What a valuation needs out: --cash-flows (record cash_flow, [policy, year, 2]: the
# expected benefits paid and premiums received by year) and --duration (records duration
# and reserve_rate_derivative), held against an independent reference written here from
# the textbook definitions (Dickson, Hardy and Waters, "Actuarial Mathematics for Life
# Contingent Risks", chs. 4-7; the Standard Ultimate Survival Model's Makeham law
# mu = A + B c^x, A = 0.00022, B = 2.7e-6, c = 1.124, i = 5 %):
#   expected benefit of a sum S on death in year y (paid at its end, --frequency 1):
#     S (y p_x - (y+1) p_x) at y + 1; at the moment of death (continuous): the same in year y;
#   a premium or annuity of P a year paid continuously: P int_y^(y+1) t p_x dt;
#   discrete (--frequency M): P/M (t p_x) at its dates t;
# and, with annual payments, the discounted expected flows sum to the reserve at time 0
# (zero with equivalence premiums: to 1e-8 of the benefits' value). Durations against
# -(1/V) dV/dr of the textbook annuity (int t v^t t p_x dt / int v^t t p_x dt) and
# against the finite differences of runs at shifted rates (--rate, a shifted curve),
# the premium held (Richardson's extrapolation of two shifts). The default output keeps
# its bits without the options.
require_python
export PYTHONPATH="$SRC/share/python"
"$PY" - <<'PY' || fail "the valuation comparison failed"
import math, subprocess
import numpy as np
import numpipe

A, B, c = 0.00022, 2.7e-6, 1.124
delta = math.log(1.05)
law = ["--mortality", "insured=gm:%r,%r,%r" % (A, math.log10(B), math.log10(c))]
failures = []

def survival(age, t):  # t p_age: exp(-(A t + B c^age (c^t - 1) / ln c))
    t = np.asarray(t, dtype=float)
    return np.exp(-(A * t + B * c**age * (c**t - 1.0) / math.log(c)))

gl_x, gl_w = np.polynomial.legendre.leggauss(20)
def integral(f, a, b):  # Gauss-Legendre on [a, b]
    t = 0.5 * (b - a) * gl_x + 0.5 * (b + a)
    return float(0.5 * (b - a) * np.sum(gl_w * f(t)))

def run(gen, args, rate=delta, name="in"):
    subprocess.run(["gen-input", "integrate", "-o", name + ".nps", "--rate", repr(rate)] + gen + law, check=True)
    subprocess.run(["integrate", "-i", name + ".nps", "-o", name + "-out.nps"] + args, check=True)
    return numpipe.read(name + "-out.nps")

def check(name, got, want, tol):
    got, want = np.asarray(got, float), np.asarray(want, float)
    scale = np.max(np.abs(want))
    worst = float(np.max(np.abs(got - want))) / scale
    print(f"{name}: worst {worst:.2e} of the largest ({scale:.6g})")
    if not worst <= tol:
        failures.append(f"{name}: off by {worst:.3e} (tolerance {tol:g})")

# 1. Endowment insurance at 45, 20 years, 100000, annual premiums in advance and the sum
#    on death at the end of the year of death (--frequency 1), equivalence premium.
x, n, S = 45, 20, 100000.0
out = run(["--product", "endowment", "--x", str(x), "--term", str(n), "--benefit", repr(S), "--premium", "equivalence"],
          ["--frequency", "1", "--cash-flows", "--duration"], name="endow")
P = float(out["premium"][0])
cf = out["cash_flow"][0]
if cf.shape != (121, 2) or out.attrs["cash_flow"].get("columns") != ["benefit", "premium"]:
    failures.append(f"cash_flow shape {cf.shape} or columns {out.attrs['cash_flow'].get('columns')}")
ben, prem = np.zeros(121), np.zeros(121)
for y in range(n):
    prem[y] += P * survival(x, y)
    ben[y + 1] += S * (survival(x, y) - survival(x, y + 1))
ben[n] += S * survival(x, n)
check("endowment benefits by year", cf[:, 0], ben, 1e-12)
check("endowment premiums by year", cf[:, 1], prem, 1e-12)
v = 1.05 ** -np.arange(121.0)
pv_b, pv_p = float(np.sum(v * cf[:, 0])), float(np.sum(v * cf[:, 1]))
print(f"endowment: premium {P:.6f}; discounted flows: benefits {pv_b:.6f}, premiums {pv_p:.6f}")
if not abs(pv_b - pv_p) <= 1e-8 * pv_b:
    failures.append(f"endowment: discounted benefits {pv_b!r} and premiums {pv_p!r} differ by more than 1e-8")

# The endowment's duration against runs at shifted rates with the premium held: dV/dr
# at every year by Richardson's extrapolation of central differences at 2e-3 and 1e-3.
def shifted(d, gen, args, name):
    return run(gen, args, rate=delta + d, name=name)["reserve"][0]
gen = ["--product", "endowment", "--x", str(x), "--term", str(n), "--benefit", repr(S), "--premium", repr(P)]
def central(h):
    return (shifted(h, gen, ["--frequency", "1"], "up") - shifted(-h, gen, ["--frequency", "1"], "down")) / (2 * h)
fd = (4 * central(1e-3) - central(2e-3)) / 3
V = out["reserve"][0]
live = np.arange(0, n + 1)
check("endowment dV/dr against shifted runs", out["reserve_rate_derivative"][0][live], fd[live], 1e-7)
big = live[np.abs(V[live]) > 0.01 * np.max(np.abs(V[live]))]
check("endowment duration against shifted runs", out["duration"][0][big], -fd[big] / V[big], 1e-7)
if not np.isnan(out["duration"][0][0]):
    failures.append(f"duration at inception with an equivalence premium (reserve 0): {out['duration'][0][0]!r}, not NaN")

# 2. Term insurance at 40 for 25 years, sum on death at the moment of death and premiums
#    paid continuously (the default), equivalence premium: flows by year from quadrature.
x, n = 40, 25
out = run(["--product", "term", "--x", str(x), "--term", str(n), "--premium", "equivalence"], ["--cash-flows"], name="term")
P = float(out["premium"][0])
cf = out["cash_flow"][0]
ben, prem = np.zeros(121), np.zeros(121)
for y in range(n):
    ben[y] = survival(x, y) - survival(x, y + 1)
    prem[y] = P * integral(lambda t: survival(x, t), y, y + 1)
check("term insurance benefits by year (continuous)", cf[:, 0], ben, 1e-12)
check("term insurance premiums by year (continuous)", cf[:, 1], prem, 1e-9)
# discounted at the moment of payment (continuous): int e^(-delta t) (P - mu) t p_x dt = 0
mu = lambda t: A + B * c ** (x + t)
pv = sum(integral(lambda t: np.exp(-delta * t) * survival(x, t) * mu(t), y, y + 1) for y in range(n))
pp = sum(integral(lambda t: np.exp(-delta * t) * survival(x, t), y, y + 1) for y in range(n))
check("term insurance equivalence premium (textbook)", [P], [pv / pp], 1e-8)

# 3. A life annuity deferred 25 years at 40, paid monthly in arrears, premiums monthly in
#    arrears until the deferment (a given premium); and annually in arrears, where the
#    discounted flows sum to the reserve at time 0.
x, m, P = 40, 25, 0.35
for M in (12, 1):
    out = run(["--product", "annuity", "--x", str(x), "--deferment", str(m), "--premium", repr(P)],
              ["--frequency", str(M), "--timing", "arrears", "--cash-flows", "--duration"], name=f"ann{M}")
    cf = out["cash_flow"][0]
    ben, prem = np.zeros(121), np.zeros(121)
    for k in range(1, (120 - x - m) * M + 1):  # the annuity's dates m + k/M, up to 120 (none at 120)
        t = m + k / M
        if t < 120 - x - 1e-9:
            ben[int(math.floor(t + 1e-9))] += survival(x, t) / M
    for k in range(1, m * M + 1):  # the premiums' dates k/M up to the deferment
        t = k / M
        prem[int(math.floor(t + 1e-9))] += P / M * survival(x, t)
    check(f"deferred annuity, {M} a year, benefits by year", cf[:, 0], ben, 1e-12)
    check(f"deferred annuity, {M} a year, premiums by year", cf[:, 1], prem, 1e-12)
    if M == 1:
        pv = float(np.sum(v * (cf[:, 0] - cf[:, 1])))
        V0 = float(out["reserve0"][0])
        print(f"deferred annuity: reserve at 0 {V0:.12f}, discounted flows {pv:.12f}")
        if not abs(pv - V0) <= 1e-8 * abs(V0):
            failures.append(f"deferred annuity: discounted flows {pv!r} against the reserve {V0!r}")

# 4. A whole-life annuity at 60 paid continuously: its duration at 0 and at year 10 is the
#    textbook's int t v^t t p_x dt / int v^t t p_x dt (at 70 for year 10).
out = run(["--product", "annuity", "--x", "60", "--premium", "0"], ["--duration"], name="wl")
for year in (0, 10):
    age = 60 + year
    edges = np.arange(0.0, 120 - age + 1)
    num = sum(integral(lambda t: t * np.exp(-delta * t) * survival(age, t), a, a + 1) for a in edges[:-1])
    den = sum(integral(lambda t: np.exp(-delta * t) * survival(age, t), a, a + 1) for a in edges[:-1])
    check(f"whole-life annuity duration at year {year}", [out["duration"][0][year]], [num / den], 1e-7)

# 5. A spouse pension with a 10-year term and an equivalence premium on a yield curve:
#    dV/dr against runs on the curve shifted, the premium held; its cash flows: the
#    premiums (its insured's) and NaN benefits.
with open("curve.txt", "w") as f:
    f.write("0 0.02\n10 0.03\n30 0.035\n")
def curve_run(d, premium, args, name):
    with open(name + ".txt", "w") as f:
        f.write("".join(f"{T} {r + d!r}\n" for T, r in ((0, 0.02), (10, 0.03), (30, 0.035))))
    subprocess.run(["gen-input", "integrate", "-o", name + ".nps", "--product", "spouse", "--term", "10", "--premium",
                    premium, "--steps", "4,2,4", "--curve", name + ".txt"], check=True)
    subprocess.run(["integrate", "-i", name + ".nps", "-o", name + "-out.nps"] + args, check=True)
    return numpipe.read(name + "-out.nps")
out = curve_run(0.0, "equivalence", ["--cash-flows", "--duration"], "sp")
P = float(out["premium"][0])
def scentral(h):
    return (curve_run(h, repr(P), [], "spu")["reserve"][0] - curve_run(-h, repr(P), [], "spd")["reserve"][0]) / (2 * h)
fd = (4 * scentral(1e-3) - scentral(2e-3)) / 3
live = np.arange(0, 11)
check("spouse pension on a curve: dV/dr against shifted curves", out["reserve_rate_derivative"][0][live], fd[live], 1e-7)
cf = out["cash_flow"][0]
if not np.all(np.isnan(cf[:, 0])):
    failures.append("spouse pension: benefits' cash flows should be NaN (not computed)")
sp_x, tp = 35, min(10, 65 - 35)
prem = np.zeros(121)
for y in range(tp):  # continuous premium until the term (before retirement at 65); default law for the insured
    mu_f = lambda a: 0.0005 + 10 ** (5.728 - 10 + 0.038 * a)
    prem[y] = P * integral(lambda t: np.exp(-np.array([integral(lambda s: mu_f(sp_x + s), 0, tt) for tt in np.atleast_1d(t)])), y, y + 1)
check("spouse pension premiums by year", cf[:, 1], prem, 1e-9)

if failures:
    print("\n".join(failures))
    raise SystemExit(1)
PY
# Without the options the output is as before: the same bits, no new records.
gen-input integrate --portfolio 30 --seed 3 --product mixed --premium equivalence --steps 2,2,2 -o mixed.nps
integrate -i mixed.nps -o plain.nps
integrate -i mixed.nps --cash-flows --duration -o valued.nps
inspect plain.nps | grep -q '^record [0-9]*: cash_flow ' && fail "cash_flow written without --cash-flows"
inspect plain.nps | grep -q '^record [0-9]*: duration ' && fail "duration written without --duration"
inspect valued.nps | grep -q '^record [0-9]*: cash_flow  *f8 \[30, 121, 2\]' || fail "no cash_flow [30, 121, 2] with --cash-flows"
inspect valued.nps | grep -q '^record [0-9]*: duration  *f8 \[30, 121\]' || fail "no duration [30, 121] with --duration"
verify valued.nps plain.nps --rtol 0 --atol 0 --ignore cash_flow --ignore duration --ignore reserve_rate_derivative || fail "--cash-flows --duration changed the reserves"
# nps-export writes the cash flows as rows policy, year, benefit, premium.
nps-export -i valued.nps --records cash_flow --to csv -o cf.csv
head -1 cf.csv | grep -q '^policy,.*year,benefit.*,premium' || fail "cash_flow CSV header: $(head -1 cf.csv)"
[ "$(wc -l < cf.csv)" = $((30 * 121 + 1)) ] || fail "cash_flow CSV: $(wc -l < cf.csv) lines, expected $((30 * 121 + 1))"
# Same bits for any thread count.
integrate -i mixed.nps --cash-flows --duration --threads 1 | verify --against valued.nps --rtol 0 --atol 0 ||
  fail "--cash-flows --duration: other bits on 1 thread"
