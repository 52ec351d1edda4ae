# Windows whose likelihood has no maximum: flat prices (every return 0) and a
# window mostly of tied values give NaN fits and quantiles, a count on stderr and
# in the attrs, and a backtest that counts their points apart; never a finite VaR.
awk 'BEGIN { print "date,close"; for (i = 1; i <= 300; i++) printf "2020-%02d-%02d,100.00\n", int((i - 1) / 28) + 1, (i - 1) % 28 + 1 }' >flat.csv
gen-input mle --from-text flat.csv --returns log -o flat.nps
mle-fit -i flat.nps --window 250 --quantiles 0.01 --backtest -o flat-fit.nps 2>flat.err
grep -q 'mle-fit: 50 of 50 windows have no maximum (fits and quantiles NaN): 50 with all points equal' flat.err ||
  { cat flat.err; fail "flat prices: no count on stderr"; }
inspect flat-fit.nps --array quantiles | grep -q 'nan 50  inf 0' || fail "flat prices: a quantile is not NaN"
inspect flat-fit.nps --array loglik | grep -q 'nan 50  inf 0' || fail "flat prices: a log-likelihood is not NaN"
inspect flat-fit.nps --array aic | grep -q 'nan 50  inf 0' || fail "flat prices: an AIC is not NaN"
inspect flat-fit.nps --array no_maximum | grep -q 'min 1  max 1' || fail "flat prices: windows not marked 1"
inspect flat-fit.nps --array backtest --values 10 | grep -q 'values 0.01 0 0 nan nan nan nan nan nan 49' ||
  { inspect flat-fit.nps --array backtest --values 10; fail "flat prices: the backtest does not count the points apart"; }
inspect flat-fit.nps --array quantiles --attrs | tr -d ' \n' | grep -q '"no_maximum":{"all_equal":50,"reason":"windowswithoutamaximum' ||
  fail "flat prices: no count and reason in the attrs"

# 230 zero returns of 250 (a price that rarely moves), then ordinary returns: the
# early windows' location is the tied 0 and the shape sits at the grid's smallest
awk 'BEGIN { s = 12345; for (i = 0; i < 400; i++) { s = (s * 1103515245 + 12345) % 2147483648; u = (s + 0.5) / 2147483648;
  s = (s * 1103515245 + 12345) % 2147483648; v = (s + 0.5) / 2147483648; r = 0.01 * log(u / v);
  if (i < 250 && i % 13 != 0) r = 0; printf "%.6f\n", r } }' >ties.txt
gen-input mle --from-text ties.txt -o ties.nps
mle-fit -i ties.nps --window 250 --step 10 --quantiles 0.01 --refine --backtest -o ties-fit.nps 2>ties.err
grep -q 'with tied values at the location and the shape at the grid' ties.err || { cat ties.err; fail "ties: no count on stderr"; }
inspect ties-fit.nps --array no_maximum --values 1 | grep -q 'values 2' || fail "ties: the first window is not marked 2"
inspect ties-fit.nps --array quantiles --values 1 | grep -q 'values nan' || fail "ties: a finite VaR from 230 tied returns"

# ordinary returns: every window has a maximum
gen-input mle --from-text "$SRC/share/ref/mle-prices.csv" --columns close --returns log -o r.nps
mle-fit -i r.nps --window 250 --step 5 --quantiles 0.01 -o r-fit.nps 2>r.err
! grep -q 'no maximum' r.err || fail "ordinary returns: windows marked without a maximum"
inspect r-fit.nps --array no_maximum | grep -q 'min 0  max 0' || fail "ordinary returns: no_maximum not 0"
