# price against FinPar's published reference outputs (share/ref/finpar-locvolcalib).
# FinPar prints about 6 significant digits: a correctly rounded 6-digit number is
# within 5e-6 relative of the true value (half a unit in the 6th digit, over a
# mantissa of at least 1.00000), so rtol 1e-5 is what the printed digits justify;
# medium and large (strikes 0..127) pass it. small's shipped file (0.0300001, ...)
# differs from every later FinPar result by up to 1.1e-6 absolute (5.2e-5
# relative): it is checked at rtol 1e-4, inside FinPar's own criterion (abs 1e-5).
R="$SRC/share/ref/finpar-locvolcalib"

gen-input price --dataset medium | price --backend cpu |
  verify --text-ref "$R/medium.output.data" --array price --rtol 1e-5 >med.txt || { cat med.txt; fail "medium differs from FinPar"; }

gen-input price --dataset small | price --backend cpu |
  verify --text-ref "$R/small.output.data" --array price --rtol 1e-4 >small.txt || { cat small.txt; fail "small differs from FinPar"; }

# the acceptance pipeline (the default, adjoint method), and the tighter
# tolerance the digits allow
gen-input price --dataset large | price --backend cpu -o large.nps
verify --text-ref "$R/large.output.data" --array price --range 0:128 --rtol 1e-4 -i large.nps >l4.txt || { cat l4.txt; fail "large differs from FinPar at 1e-4"; }
verify --text-ref "$R/large.output.data" --array price --range 0:128 --rtol 1e-5 -i large.nps >l5.txt || { cat l5.txt; fail "large differs from FinPar at 1e-5"; }

# FinPar's large file repeats its first 128 values; strike o = 0.001*o keeps falling
# (0.00706 at o = 128 down to 0.00056 at o = 255), so the second half must NOT match.
expect_exit 1 "" -- verify --text-ref "$R/large.output.data" --array price --range 128:256 --rtol 1e-4 -i large.nps
# ... and our own reference stream holds the continuing values: the forward method
# bit for bit, the adjoint to rounding
gen-input price --dataset large | price --backend cpu --method forward -o large-fwd.nps
verify large-fwd.nps "$SRC/share/ref/price-large.nps" --rtol 0 >/dev/null || fail "large (forward) differs from share/ref/price-large.nps"
verify --text-ref "$R/large.output.data" --array price --range 0:128 --rtol 1e-5 -i large-fwd.nps >lf.txt || { cat lf.txt; fail "large (forward) differs from FinPar at 1e-5"; }
verify large.nps "$SRC/share/ref/price-large.nps" --rtol 1e-12 >la.txt || { cat la.txt; fail "large: adjoint differs from forward"; }
