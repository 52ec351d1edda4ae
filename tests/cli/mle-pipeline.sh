# mle-fit through the real tools: rolling vs --exact, thread counts, quantiles,
# a user's CSV of prices turned into log returns, determinism of gen-input mle.
gen-input mle --length 3000 --series 2 --p 1.4 --sl 1 --sr 2 --seed 5 -o s.nps
gen-input mle --length 3000 --series 2 --p 1.4 --sl 1 --sr 2 --seed 5 -o s2.nps
verify s.nps s2.nps --rtol 0 >/dev/null || fail "gen-input mle is not reproducible"
inspect s.nps | grep -q 'x  f8 \[2, 3000\]' || fail "gen-input mle: wrong shape"

# rolling (incremental sums) against the full recompute of every window
mle-fit -i s.nps --window 120 --step 1 --alpha-grid 0.5:3:12 --refresh 400 --backend cpu -o roll.nps
mle-fit -i s.nps --window 120 --step 1 --alpha-grid 0.5:3:12 --exact --backend cpu -o exact.nps
verify roll.nps exact.nps --rtol 1e-12 --rtol theta=0 --rtol p=0 >verify.txt || { cat verify.txt; fail "rolling differs from --exact"; }
inspect roll.nps | grep -q 'loglik  f8 \[2, 2881\]' || fail "loglik: wrong shape"
inspect roll.nps | grep -q 'start  i8 \[2881\]' || fail "start: wrong shape"

# step > 1 and a shape list
mle-fit -i s.nps --window 90 --step 7 --alpha-grid 0.8,1.2,1.6,2.5 --refresh 9 --backend cpu -o r7.nps
mle-fit -i s.nps --window 90 --step 7 --alpha-grid 0.8,1.2,1.6,2.5 --exact --backend cpu -o e7.nps
verify r7.nps e7.nps --rtol 1e-12 --rtol theta=0 --rtol p=0 >/dev/null || fail "step 7 rolling differs from --exact"

# the same bits for any thread count
mle-fit -i s.nps --window 120 --alpha-grid 0.5:3:12 --refresh 50 --backend cpu --threads 1 -o t1.nps
mle-fit -i s.nps --window 120 --alpha-grid 0.5:3:12 --refresh 50 --backend cpu --threads 2 -o t2.nps
verify t1.nps t2.nps --rtol 0 >/dev/null || fail "thread count changes the bits"

# --sort: rows out of date order (the prices file reversed) give the same returns as the file
# in order, and say so on stderr; labels that are not dates (names) carry no order
gen-input mle --from-text "$SRC/share/ref/mle-prices.csv" --columns close --returns log -o inorder.nps
{ head -1 "$SRC/share/ref/mle-prices.csv"; tail -n +2 "$SRC/share/ref/mle-prices.csv" | tac; } >reversed.csv
gen-input mle --from-text reversed.csv --columns close --returns log --sort -o sorted.nps 2>sort.err
grep -q 'gen-input: --sort: 1201 rows put in date order by column .date. (1200 were out of order)' sort.err || { cat sort.err; fail "--sort: no note on stderr"; }
verify inorder.nps sorted.nps --rtol 0 >/dev/null || fail "--sort: the sorted rows differ from the rows in order"
printf 'name,v\nb,1\na,2\nc,3\n' >names.csv
gen-input mle --from-text names.csv -o names.nps || fail "labels that are not dates must not be ordered"

# quantiles and refine: left-tail quantile below theta, a VaR pipeline on a CSV
gen-input mle --from-text "$SRC/share/ref/mle-prices.csv" --columns close --returns log -o r.nps
inspect r.nps | grep -q 'x  f8 \[1, 1200\]' || fail "--from-text: wrong shape"
mle-fit -i r.nps --window 250 --step 5 --alpha-grid 0.6:2.5:20 --quantiles 0.01,0.05 --refine --backend cpu -o var.nps
inspect var.nps | grep -q 'quantiles  f8 \[1, 191, 2\]' || fail "quantiles: wrong shape"
inspect var.nps --values 3 | grep -A1 'quantiles' | grep -q -- '-0\.0' || fail "the 1% VaR of daily log returns should be a small negative number"
if [ -n "${PY:-}" ] && "$PY" -c 'import numpy' 2>/dev/null; then
  "$PY" - "$SRC/share/python" var.nps <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import numpipe, numpy as np
r = numpipe.read(sys.argv[2])
q, th, sl, sr, p = r["quantiles"][0], r["theta"][0], r["s_l"][0], r["s_r"][0], r["p"][0]
assert np.all(q[:, 0] < q[:, 1]) and np.all(q[:, 1] < th), "quantiles must be ordered and below theta"
assert np.all((p >= 0.6) & (p <= 2.5)) and np.all(sl > 0) and np.all(sr > 0)
# returns were drawn with s_l 0.012, s_r 0.009, p 1.3 (share/ref/mle-prices.csv)
assert abs(np.median(sl) - 0.012) < 0.004 and abs(np.median(sr) - 0.009) < 0.004, (np.median(sl), np.median(sr))
PYEOF
fi
no_leftovers .
