# mle-fit's inference through the real tools: standard errors, information
# criteria, normal and Student-t comparison, goodness of fit, the VaR backtest
# recomputed independently in NumPy, dates carried from a CSV to every window,
# two shapes, and the same bits for any thread count.
require_python
gen-input mle --from-text "$SRC/share/ref/mle-prices.csv" --columns close --returns log -o r.nps
inspect r.nps | grep -q 'x_label  u1 \[1200, 10\]' || fail "gen-input mle: the dates should travel as x_label"
mle-fit -i r.nps --window 250 --step 3 --alpha-grid 0.6:2.5:20 --quantiles 0.01,0.05,0.95 --stderr --backtest \
  --compare normal,t --gof --backend cpu -o fit.nps
"$PY" - "$SRC/share/python" fit.nps r.nps "$SRC/share/ref/mle-prices.csv" <<'PYEOF'
import sys, math
sys.path.insert(0, sys.argv[1])
import numpipe, numpy as np
recs = {name: (a, attrs) for name, a, attrs in numpipe.records(sys.argv[2])}
r = {k: v[0] for k, v in recs.items()}
x = numpipe.read(sys.argv[3])["x"][0]
start = r["start"]
W, n, step = len(start), 250, 3
# dates: the last date of each window; a return is dated by the later close
rows = [line.split(",")[0] for line in open(sys.argv[4]).read().split("\n")[1:] if line]
labels = [bytes(b).rstrip(b"\0").decode() for b in r["window_label"]]
assert labels == [rows[s + n] for s in start], "window_label is not each window's last date"
assert recs["window_label"][1]["labels_of"] == "window" and recs["window_label"][1]["column"] == "date"
# standard errors: columns, positive, finite where p > 1; the interval holds theta
se, cols = recs["stderr"]
assert cols["columns"] == ["theta", "p", "s_l", "s_r"], cols["columns"]
assert se.shape == (1, W, 4)
p = r["p"][0]
assert np.all(se[0, :, 1:] > 0)
# theta's is NaN exactly where p <= 1 (its information is infinite there),
# finite elsewhere, also where theta sits on a data point with p just above 1
# (its row of the information is the expected one, finite for p > 1)
assert np.all(np.isnan(se[0, :, 0]) == (p <= 1))
assert np.all(se[0, ~np.isnan(se[0, :, 0]), 0] > 0) and np.sum(p > 1.1) > W / 2
ci = r["theta_ci"][0]
assert np.all(ci[:, 0] <= r["theta"][0]) and np.all(r["theta"][0] <= ci[:, 1])
# information criteria
ll = r["loglik"][0]
assert np.allclose(r["aic"][0], 8 - 2 * ll, rtol=1e-15) and np.allclose(r["bic"][0], 4 * math.log(n) - 2 * ll, rtol=1e-15)
# normal fit: the sample mean and sd of each window
for w in (0, W // 2, W - 1):
    win = x[start[w]:start[w] + n]
    assert abs(r["normal"][0, w, 0] - win.mean()) < 1e-15 and abs(r["normal"][0, w, 1] - win.std()) < 1e-15
    ln = -0.5 * n * (math.log(2 * math.pi * win.var()) + 1)
    assert abs(r["loglik_normal"][0, w] - ln) < 1e-9 * abs(ln)
# the t nests the normal (nu -> infinity): never worse, up to the nu cap of 1000
assert np.all(r["loglik_t"][0] >= r["loglik_normal"][0] - 0.01)
assert np.all(r["t"][0, :, 2] >= 0.2) and np.all(r["t"][0, :, 2] <= 1000)
assert np.allclose(r["aic_t"][0], 6 - 2 * r["loglik_t"][0])
assert np.all((r["ks"][0] > 0) & (r["ks"][0] < 0.2)) and np.all(r["ad"][0] > 0)
# the backtest, recomputed: each return after the first window against the
# quantile of the latest window ending before it
q = r["quantiles"][0]
levels = recs["quantiles"][1]["levels"]
T = len(x) - n
hits = np.zeros((T, len(levels)), dtype=np.uint8)
for t in range(n, len(x)):
    w = (t - n) // step
    for k, lev in enumerate(levels):
        hits[t - n, k] = x[t] < q[w, k] if lev <= 0.5 else x[t] > q[w, k]
assert np.array_equal(hits, r["exceedances"][0]), "exceedances differ"
bt, battrs = recs["backtest"]
assert battrs["columns"][:3] == ["level", "n", "exceedances"] and bt.shape == (1, 3, 10)
assert battrs["columns"][9] == "no_forecast" and np.all(bt[0, :, 9] == 0), "every window of these returns has a maximum"
def xlogy(k, q):
    return k * math.log(q) if k > 0 else 0.0
for k, lev in enumerate(levels):
    h = hits[:, k].astype(int)
    pi = lev if lev <= 0.5 else 1 - lev
    X = h.sum(); ph = X / T
    pof = -2 * (xlogy(T - X, 1 - pi) + xlogy(X, pi)) + 2 * (xlogy(T - X, 1 - ph) + xlogy(X, ph))
    tr = {(a, b): int(np.sum((h[:-1] == a) & (h[1:] == b))) for a in (0, 1) for b in (0, 1)}
    p01 = tr[0, 1] / max(tr[0, 0] + tr[0, 1], 1); p11 = tr[1, 1] / max(tr[1, 0] + tr[1, 1], 1)
    p2 = (tr[0, 1] + tr[1, 1]) / (T - 1)
    ind = -2 * (xlogy(tr[0, 0] + tr[1, 0], 1 - p2) + xlogy(tr[0, 1] + tr[1, 1], p2)) + 2 * (
        xlogy(tr[0, 0], 1 - p01) + xlogy(tr[0, 1], p01) + xlogy(tr[1, 0], 1 - p11) + xlogy(tr[1, 1], p11))
    row = bt[0, k]
    assert row[0] == lev and row[1] == T and row[2] == X, (row, lev, T, X)
    assert abs(row[3] - pof) < 1e-9 and abs(row[4] - math.erfc(math.sqrt(pof / 2))) < 1e-12
    assert abs(row[5] - ind) < 1e-9 and abs(row[7] - (pof + ind)) < 1e-9
    assert abs(row[8] - math.exp(-(pof + ind) / 2)) < 1e-12
# the 1% VaR of these returns is not rejected (the file was drawn from an AEPD)
assert bt[0, 0, 4] > 0.05 and bt[0, 1, 4] > 0.05
PYEOF

# the same bits for any thread count
mle-fit -i r.nps --window 250 --step 11 --alpha-grid 0.6:2.5:20 --quantiles 0.01 --stderr --backtest --gof \
  --compare t --backend cpu --threads 1 -o t1.nps
mle-fit -i r.nps --window 250 --step 11 --alpha-grid 0.6:2.5:20 --quantiles 0.01 --stderr --backtest --gof \
  --compare t --backend cpu --threads 2 -o t2.nps
verify t1.nps t2.nps --rtol 0 >v.txt || { cat v.txt; fail "thread count changes the bits"; }

# two shapes: p1 (left) and p2 (right) with their standard errors
gen-input mle --length 4000 --p 1.2 --p2 2.6 --sl 1 --sr 1.5 --seed 12 -o two.nps
mle-fit -i two.nps --window 4000 --alpha-grid 0.8:3.2:13 --shapes 2 --stderr --quantiles 0.01,0.99 --backend cpu -o two-fit.nps
"$PY" - "$SRC/share/python" two-fit.nps <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import numpipe, numpy as np
recs = {name: (a, attrs) for name, a, attrs in numpipe.records(sys.argv[2])}
assert "p" not in recs and "p1" in recs and "p2" in recs
assert recs["stderr"][1]["columns"] == ["theta", "p1", "p2", "s_l", "s_r"]
p1, p2 = recs["p1"][0][0, 0], recs["p2"][0][0, 0]
se = recs["stderr"][0][0, 0]
assert abs(p1 - 1.2) < 4 * se[1] and abs(p2 - 2.6) < 4 * se[2], (p1, p2, se)
assert recs["aic"][1]["parameters"] == 5
PYEOF
no_leftovers .
