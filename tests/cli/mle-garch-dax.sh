# mle-fit --model garch on a real index: the DAX's 1860 daily closes of 1991-1998
# (R's datasets::EuStockMarkets, 1859 log returns), against R's fGarch and
# against references written here from the model's definition:
#  - the whole series: the log-likelihood within 0.01 of (or above) fGarch's
#    garchFit(~garch(1,1), cond.dist = "sged"), the parameters within fGarch's
#    standard errors of fGarch's (fGarch fits percent returns: its Hessian is
#    singular on raw ones; the mapping is docs/mle.md's), the standard errors
#    within 10% of a central-difference Hessian of the log-likelihood below;
#  - rolling 250-day windows, step 1 (1610 windows): 43 sampled windows (those
#    near an edge of the constraints among them, and four once missed) each at most 1e-6 below a
#    refined optimum found here (scipy: Nelder-Mead from five starts, then
#    Powell from the best).
# Needs R with fGarch (r-base-core, r-cran-fgarch) for the data and the
# reference, NumPy and SciPy: skipped without them.
require_python
if ! command -v Rscript >/dev/null || ! Rscript -e 'suppressMessages(library(fGarch))' >/dev/null 2>&1; then
  echo "SKIP: R with fGarch not found (apt-get install r-base-core r-cran-fgarch): the DAX data and garchFit"
  exit 77
fi
"$PY" -c 'import scipy' 2>/dev/null || { echo "SKIP: scipy absent (apt-get install python3-scipy)"; exit 77; }

Rscript - >fgarch.txt <<'REOF'
suppressMessages(library(fGarch))
dax <- as.numeric(EuStockMarkets[, "DAX"])
write.csv(data.frame(day = sprintf("%04d", seq_along(dax)), close = dax), "dax.csv", row.names = FALSE, quote = FALSE)
r <- 100 * diff(log(dax))
f <- garchFit(~garch(1, 1), data = r, cond.dist = "sged", trace = FALSE, algorithm = "lbfgsb")
cat(coef(f), -f@fit$llh, length(r), "\n")
cat(f@fit$se.coef, "\n")
REOF
gen-input mle --from-text dax.csv --columns close --returns log -o r.nps
mle-fit -i r.nps --model garch --stderr --quantiles 0.01 -o whole.nps
mle-fit -i r.nps --model garch --window 250 --step 1 --quantiles 0.01 --backtest -o roll.nps

"$PY" - "$SRC/share/python" <<'PYEOF'
import os, sys, math
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "cli"))
import numpipe, numpy as np
from scipy.optimize import minimize
from mle_reference import loglik, check_stderr

x = numpipe.read("r.nps")["x"][0]
assert len(x) == 1859

names = ["theta", "omega", "garch_alpha", "garch_beta", "skew", "p"]
w = numpipe.read("whole.nps")
est = np.array([w[k][0, 0] for k in names])
ll = w["loglik"][0, 0]
assert abs(loglik(x, *est) - ll) < 1e-8 * abs(ll), (loglik(x, *est), ll)

# fGarch on percent returns 100 r: mu and omega scale by 100 and 100^2, the
# log-likelihood by -n log 100; its skew xi: s_r / s_l = xi^2, left mass 1 / (1 + xi^2)
rows = [list(map(float, l.split())) for l in open("fgarch.txt") if l.strip()]
coef, ll_r, n_r, se_r = np.array(rows[0][:6]), rows[0][6], rows[0][7], np.array(rows[1])
assert n_r == len(x)
ll_r_raw = ll_r + n_r * math.log(100)
ours = est.copy()
ours[0] *= 100; ours[1] *= 100 ** 2; ours[4] = math.sqrt(1 / est[4] - 1)
print("loglik", ll, "fGarch", ll_r_raw); print("ours (fGarch's units)", ours); print("fGarch", coef, "se", se_r)
assert ll >= ll_r_raw - 0.01, (ll, ll_r_raw)
assert np.all(np.abs(ours - coef) <= se_r), (ours, coef, se_r)

# standard errors within 10% of a central-difference Hessian of the log-likelihood
check_stderr(x, est, w["stderr"][0, 0])

# rolling windows: each sampled window against a refined optimum found here
r = numpipe.read("roll.nps")
W = r["loglik"].shape[1]
assert W == len(x) - 250 + 1
al, be = r["garch_alpha"][0], r["garch_beta"][0]
near = np.where((al < 1e-4) | (be < 1e-4) | (al + be > 1 - 1e-4))[0]
# windows once missed: 1200 (chains of 64 windows: 0.099 below its maximum), 1193 (chunks of 4 with
# one warm search: 0.036 below the other interior maximum), 1100 and 1110 (0.17 below the corner
# omega = 0, alpha + beta = 1)
sample = sorted(set(np.linspace(0, W - 1, 32).astype(int).tolist()) | set(near[:: max(1, len(near) // 8)][:8].tolist())
                | {1100, 1110, 1193, 1200})
worst, below = -np.inf, []
for k in sample:
    win = x[k:k + 250]
    v0 = np.array([r[n][0, k] for n in names])
    l0 = r["loglik"][0, k]
    assert abs(loglik(win, *v0) - l0) < 1e-8 * abs(l0)
    def f(v):  # omega in logs
        mu, lo, al_, be_, a, p = v
        if not (lo > -50 and al_ >= 0 and be_ >= 0 and al_ + be_ < 1 and 0 < a < 1 and 0.3 < p < 20): return np.inf
        return -loglik(win, mu, math.exp(lo), al_, be_, a, p)
    s0 = v0.copy(); s0[1] = math.log(v0[1])
    inside = s0.copy(); P = min(v0[2] + v0[3], 0.99); sh = min(max(v0[2] / (v0[2] + v0[3]), 0.05), 0.95)
    inside[2], inside[3] = P * sh, P * (1 - sh)
    usual = s0.copy(); usual[1] = math.log(0.1 * np.var(win)); usual[2], usual[3] = 0.1, 0.8
    persistent = usual.copy(); persistent[1] = math.log(0.02 * np.var(win)); persistent[2], persistent[3] = 0.05, 0.93
    calm = usual.copy(); calm[1] = math.log(0.8 * np.var(win)); calm[2], calm[3] = 0.05, 0.15
    best, best_x = -np.inf, None
    for st in (s0, inside, usual, persistent, calm):
        res = minimize(f, st, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-11, "maxiter": 20000})
        if -res.fun > best: best, best_x = -res.fun, res.x
    res = minimize(f, best_x, method="Powell", options={"xtol": 1e-12, "ftol": 1e-14, "maxiter": 20000})
    best = max(best, -res.fun)
    worst = max(worst, best - l0)
    if best - l0 > 1e-6:
        below.append(f"window {k}: a refined optimum is {best - l0:.3g} higher ({dict(zip(names, v0))} against {best_x})")
print("rolling windows checked:", len(sample), "near an edge:", len(set(sample) & set(near.tolist())),
      "largest gain of a refined search:", worst)
assert not below, "\n".join(below)
assert len(sample) >= 40 and len(set(sample) & set(near.tolist())) > 0
q = r["quantiles"][0, :, 0]
assert np.all(np.isfinite(q)) and np.all(q < r["theta"][0])
PYEOF
