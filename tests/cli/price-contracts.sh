# price on the user's contracts (CPU): strikes, calls and puts, several maturities,
# Greeks, implied volatilities, the mixed term; the records' shapes and dims.
MODEL="--s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --num-x 61 --num-y 33 --steps-per-year 20"

# the input: strike and maturity records; one maturity gives no maturity record
gen-input price $MODEL --strikes 0.8:1.2:5 --maturities 0.5,1,2 --option put -o g.in
inspect g.in | grep 'strike  f8 \[5\]' >/dev/null || fail "gen-input: no strike record [5]"
inspect g.in | grep 'maturity  f8 \[3\]' >/dev/null || fail "gen-input: no maturity record [3]"
inspect g.in --attrs | grep '"option": "put"' >/dev/null || fail "gen-input: the option type is not in the attrs"
gen-input price $MODEL --strikes 0.9,1,1.1 --maturities 2 -o one.in
inspect one.in | grep 'maturity  f8' >/dev/null && fail "one maturity needs no maturity record"
# --steps-per-year sets numT from the longest maturity: 2 years x 20 + 1 = 41 points
inspect one.in --values 9 | awk '!d && /^  values/{ d = 1; if ($5 != 41 || $7 != 2) bad = 1 } END { exit bad }' || fail "numT or t wrong for --steps-per-year 20 to 2 years"

# the output: strike [S], maturity [M], price [M, S] with dims; Greeks and implied vols alike
price --backend cpu -i g.in --greeks --implied-vol -o g.nps
for r in 'strike  f8 \[5\]' 'maturity  f8 \[3\]' 'price  f8 \[3, 5\]' 'delta  f8 \[3, 5\]' 'gamma  f8 \[3, 5\]' \
         'vega  f8 \[3, 5\]' 'implied_vol  f8 \[3, 5\]'; do
  inspect g.nps | grep "$r" >/dev/null || fail "output lacks $r"
done
inspect g.nps --attrs | grep '"dims": \[ *"maturity", *"strike" *\]' || inspect g.nps --json | tr -d ' \n' | grep -q '"dims":\["maturity","strike"\]' >/dev/null ||
  fail "price lacks dims [maturity, strike]"
price --backend cpu -i one.in -o one.nps
inspect one.nps | grep 'price  f8 \[3\]' >/dev/null || fail "one maturity: price must be [S]"
# puts are worth more deep in the money: the put at 1.2 (row 0) exceeds the one at 0.8
awk_vals() { inspect "$1" --values 100 | awk -v r="$2" '$0 ~ "^record [0-9]+: " r " " {f=1} f && !d && /^  values/{sub(/^  values /,""); print; d = 1}'; }
awk_vals g.nps price | awk '{ if (!($5 > $1)) exit 1 }' || fail "put prices must rise with the strike"
awk_vals g.nps delta | awk '{ for (i = 1; i <= NF; i++) if ($i > 0 || $i < -1) exit 1 }' || fail "put deltas must lie in [-1, 0]"

# the adjoint pass (every strike of every maturity at once) against the forward method
for rho in 0 -0.6; do
  gen-input price $MODEL --rho $rho --strikes 0.7:1.4:8 --maturities 0.25,1,2 -o r.in
  price --backend cpu -i r.in --greeks -o r.adj.nps
  price --backend cpu -i r.in --greeks --method forward -o r.fwd.nps
  verify r.adj.nps r.fwd.nps --rtol 1e-11 --atol 1e-14 >v.txt || { cat v.txt; fail "rho $rho: adjoint differs from forward"; }
done
# rho -> 0 tends to the uncorrelated prices (the corrector vanishes with the term)
gen-input price $MODEL --rho 1e-12 --strikes 0.7:1.4:8 --maturities 0.25,1,2 -o tiny.in
gen-input price $MODEL --rho 0 --strikes 0.7:1.4:8 --maturities 0.25,1,2 -o zero.in
price --backend cpu -i tiny.in -o tiny.nps
price --backend cpu -i zero.in -o zero.nps
verify tiny.nps zero.nps --rtol 1e-10 >v.txt || { cat v.txt; fail "rho 1e-12 differs from rho 0"; }
price --backend cpu -i r.in -o r.nps
verify r.nps zero.nps --rtol 1e-3 >/dev/null && fail "rho -0.6 must change the prices"

# FinPar's data set: --greeks adds records, the prices keep their bits
gen-input price --dataset small --num-t 32 -o s.in
price --backend cpu -i s.in -o s.nps
price --backend cpu -i s.in --greeks -o sg.nps
verify sg.nps s.nps --array price --rtol 0 >/dev/null || fail "--greeks changed FinPar's prices"
# ... and the forward method's too
price --backend cpu -i s.in --method forward -o sf.nps
price --backend cpu -i s.in --method forward --greeks -o sfg.nps
verify sfg.nps sf.nps --array price --rtol 0 >/dev/null || fail "--greeks changed the forward method's prices"

# a quote table without quotes: one contract per row, dims quote
printf 'strike,maturity,type\n0.9,0.5,put\n1.1,0.5,call\n1.0,2,call\n' >list.csv
gen-input price $MODEL --from-text list.csv -o list.in
inspect list.in | grep 'quotes  f8 \[3, 5\]' >/dev/null || fail "--from-text: no quotes record [3, 5]"
price --backend cpu -i list.in --implied-vol -o list.nps
for r in 'strike  f8 \[3\]' 'maturity  f8 \[3\]' 'option  u1 \[3,' 'price  f8 \[3\]' 'implied_vol  f8 \[3\]'; do
  inspect list.nps | grep "$r" >/dev/null || fail "list output lacks $r"
done
# each row equals the same contract priced on a strike grid
gen-input price $MODEL --from-text list.csv --strikes 1.0 -o /dev/null 2>/dev/null && fail "--from-text with --strikes must be refused"
gen-input price $MODEL --strikes 1.1 --maturities 0.5,2 -o c11.in
price --backend cpu -i c11.in -o c11.nps
a=$(awk_vals list.nps price | awk '{print $2}')
b=$(awk_vals c11.nps price | awk '{print $1}')
awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-13 * b) }' || fail "list row 2 ($a) differs from the grid's call ($b)"

# the progress line stays off without a terminal; -q is accepted
price --backend cpu -i g.in -q -o /dev/null
no_leftovers .
