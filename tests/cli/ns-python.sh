# ns-step checked through Debian's NumPy: Taylor-Green decay through the tools,
# translation invariance with gen-input --shift, a non-finite field refused.
require_python
gen-input ns --n 64,64,1 --init taylor-green --re 100 --c 20 | ns-step --steps 400 --cfl 0.5 --diag-every 100 -o tg.nps
"$PY" - <<'PYEOF'
import sys, math
sys.path.insert(0, __import__("os").environ["SRC"] + "/share/python")
import numpipe
d = numpipe.read("tg.nps")["diagnostics"]
t, ke = d[-1, 1], d[-1, 2]
exact = 0.25 * math.exp(-4 * (1 / 100) * t)   # <|v|^2/2> = 1/4 exp(-4 nu k^2 t), k = 1
rel = ke / exact - 1
print(f"Taylor-Green t={t:.4f} KE={ke:.10f} exact={exact:.10f} rel={rel:.2e}")
assert t > 0.9 and abs(rel) < 1e-3, rel
PYEOF
gen-input ns --n 16,12,10 --init random --seed 4 | ns-step --steps 3 --dt 0.002 -o a.nps
gen-input ns --n 16,12,10 --init random --seed 4 --shift 3,5,7 | ns-step --steps 3 --dt 0.002 -o b.nps
"$PY" - <<'PYEOF'
import sys, os
sys.path.insert(0, os.environ["SRC"] + "/share/python")
import numpipe, numpy as np
a, b = numpipe.read("a.nps"), numpipe.read("b.nps")
for v in ("rho", "vx", "vy", "vz"):
    assert np.array_equal(np.roll(a[v], (3, 5, 7), axis=(0, 1, 2)), b[v]), v
print("translation invariance: exact")
st = numpipe.read("a.nps")
attrs = next(r for r in numpipe.records("a.nps") if r[0] == "rho")[2]
st = {k: st[k] for k in ("rho", "vx", "vy", "vz")}
st["vy"] = st["vy"].copy(); st["vy"][1, 2, 3] = np.inf
numpipe.write("inf.nps", st, attrs=attrs)
PYEOF
expect_exit 2 'field vy is not finite at flat index 143' -- ns-step -i inf.nps
