# A policy's own interest: a policies table's rate column names a constant rate or a yield
# curve's file. Each policy's reserve and premium are those of the same policy valued alone
# with that --rate or --curve (bit for bit: the same chain on the same steps), spouse
# pensions included; policies without one take the options' rate; --duration shifts every
# basis. One annuity is also checked against a reference from the definitions,
# a-bar = int_0^(120-x) e^(-r t) S(t) dt (Gauss-Legendre on each year, the default law
# mu(a) = 0.0005 + 10^(5.728 - 10 + 0.038 a) integrated in closed form), within 1e-8.
require_python
cat > pol.csv <<EOF
policy,product,x,term,premium,rate
a,annuity,40,,0,0.03
b,term,50,20,equivalence,0.06
c,endowment,45,20,equivalence,$SRC/share/ref/yield-curve.txt
d,spouse,35,,0,0.04
e,annuity,60,,0,
f,annuity,40,,0,0.03
EOF
gen-input integrate --from-text pol.csv --rate 0.045 --steps 4,2,4 -o mixed.nps
integrate -i mixed.nps -o mixed-r.nps
alone() {  # NAME PRODUCT X TERM PREMIUM INTEREST...
  local name=$1 product=$2 x=$3 term=$4 premium=$5; shift 5
  gen-input integrate --product "$product" --x "$x" ${term:+--term $term} --premium "$premium" --steps 4,2,4 "$@" -o "$name.nps"
  integrate -i "$name.nps" -o "$name-r.nps"
}
alone a annuity 40 "" 0 --rate 0.03
alone b term 50 20 equivalence --rate 0.06
alone c endowment 45 20 equivalence --curve "$SRC/share/ref/yield-curve.txt"
alone d spouse 35 "" 0 --rate 0.04
alone e annuity 60 "" 0 --rate 0.045
export PYTHONPATH="$SRC/share/python"
"$PY" - <<'PY' || fail "the policies' own rates differ from the policies valued alone"
import math, sys
import numpy as np
import numpipe
mixed = numpipe.read("mixed-r.nps")
bad = []
for i, name in enumerate("abcde"):
    alone = numpipe.read(name + "-r.nps")
    if not np.array_equal(mixed["reserve"][i], alone["reserve"][0], equal_nan=True):
        bad.append(f"policy {name}: reserve differs from the policy alone")
    if "premium" in alone and mixed["premium"][i] != alone["premium"][0]:
        bad.append(f"policy {name}: premium {mixed['premium'][i]!r} against {alone['premium'][0]!r}")
if not np.array_equal(mixed["reserve"][5], mixed["reserve"][0], equal_nan=True):
    bad.append("policies a and f (the same) differ")
# policy a from the definitions
def S(t):  # survival from 40 under 0.0005 + 10^(5.728 - 10 + 0.038 a)
    k = 0.038 * math.log(10)
    return np.exp(-(0.0005 * t + 10 ** (5.728 - 10 + 0.038 * 40) * (np.exp(k * t) - 1) / k))
n, w = np.polynomial.legendre.leggauss(20)
ref = sum(0.5 * float(np.dot(w, np.exp(-0.03 * (y + 0.5 + 0.5 * n)) * S(y + 0.5 + 0.5 * n))) for y in range(80))
got = float(mixed["reserve"][0][0])
print(f"policy a: {got:.10f}, reference {ref:.10f}")
if not abs(got - ref) <= 1e-8 * ref:
    bad.append(f"policy a: {got!r} against the reference {ref!r}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# --duration with the policies' own rates: each shifted as the policy alone would be.
integrate -i mixed.nps --duration -o mixed-d.nps
integrate -i a.nps --duration -o a-d.nps
"$PY" -c "
import sys, numpy as np, numpipe
m, a = numpipe.read('mixed-d.nps'), numpipe.read('a-d.nps')
sys.exit(0 if np.array_equal(m['duration'][0], a['duration'][0], equal_nan=True) else 1)" || fail "--duration with a policy's own rate"
# Bad rates, refused naming the row.
printf 'x,product,rate\n40,annuity,1.5\n' > bad1.csv
expect_exit 2 'rate must be a fraction in (-1, 1)' -- gen-input integrate --from-text bad1.csv -o /dev/null
printf 'x,product,rate\n40,annuity,nocurve.txt\n' > bad2.csv
expect_exit 2 'nocurve.txt' -- gen-input integrate --from-text bad2.csv -o /dev/null
