# price --calibrate (CPU): quotes the tool made with known parameters are fitted
# from perturbed starts and give those parameters back; the records; a run that
# stops early says so.
MODEL="--s0 1 --beta 0.7 --num-x 48 --num-y 24 --steps-per-year 12"
{ echo "strike maturity type"; for t in 0.5 1 2; do for k in 0.8 0.9 1 1.1 1.25; do
    [ "$k" = 0.8 ] || [ "$k" = 0.9 ] && echo "$k $t put" || echo "$k $t call"; done; done; } >c.txt
gen-input price --from-text c.txt $MODEL --alpha 0.3 --nu 0.5 --rho -0.4 -o c.in
price --backend cpu -i c.in --implied-vol -o c.nps
vals() { inspect "$1" --values 1000 | awk -v r="$2" '$0 ~ "^record [0-9]+: " r " " {f=1} f && !d && /^  values/{sub(/^  values /,""); print; d = 1}'; }
vols=$(vals c.nps implied_vol)
prices=$(vals c.nps price)
{ echo "strike,maturity,type,implied_vol"; paste -d, <(tail -n +2 c.txt | tr ' ' ,) <(echo $vols | tr ' ' '\n'); } >qv.csv
{ echo "strike maturity type price weight"; paste -d' ' <(tail -n +2 c.txt) <(echo $prices | tr ' ' '\n') <(yes 1 | head -15); } >qp.txt

# from two starts each, implied vols and prices: the parameters come back
check_fit() {  # FILE WANT...
  local got
  got=$(vals "$1" calibrated)
  echo "$got" | awk -v a="$2" -v b="$3" -v c="$4" '{ if (($1-a)^2 > 1e-14 || ($2-b)^2 > 1e-14 || ($3-c)^2 > 1e-14) exit 1 }' ||
    fail "$1: fitted '$got', want $2 $3 $4"
  inspect "$1" --attrs | grep '"converged": true' >/dev/null || fail "$1: not converged"
}
for start in "--alpha 0.4 --nu 0.3 --rho 0" "--alpha 0.22 --nu 0.8 --rho -0.7"; do
  gen-input price --from-text qv.csv $MODEL $start -o qv.in
  price --backend cpu -i qv.in --calibrate -o fit-v.nps
  check_fit fit-v.nps 0.3 0.5 -0.4
  gen-input price --from-text qp.txt $MODEL $start -o qp.in
  price --backend cpu -i qp.in --calibrate -o fit-p.nps
  check_fit fit-p.nps 0.3 0.5 -0.4
done

# the start: by default Hagan's formula fitted to the quotes (within a year), taken
# when the model fits better there; --start given starts at the input's parameters;
# both give the parameters back, the formula's start in fewer pricing passes
passes() { inspect "$1" --json | tr -d ' \n' | grep -o '"evaluations":[0-9]*' | head -1 | cut -d: -f2; }
inspect fit-p.nps --json | tr -d ' \n' | grep '"started_from":"hagan"' >/dev/null || fail "the default start must be Hagan's fit"
price --backend cpu -i qp.in --calibrate --start given -o fit-g.nps
check_fit fit-g.nps 0.3 0.5 -0.4
inspect fit-g.nps --json | tr -d ' \n' | grep '"started_from":"given"' >/dev/null || fail "--start given must start at the input's parameters"
[ "$(passes fit-p.nps)" -lt "$(passes fit-g.nps)" ] || fail "Hagan's start took $(passes fit-p.nps) passes, the given one $(passes fit-g.nps)"
expect_exit 2 "--start must be hagan or given" -- price --backend cpu -i qp.in --calibrate --start formula -o bad.nps
expect_exit 2 "need --calibrate" -- price --backend cpu -i qp.in --start given -o bad.nps

# the records: calibrated [3] named in attrs, per quote residual, the iteration log
inspect fit-v.nps | grep 'calibrated  f8 \[3\]' >/dev/null || fail "no calibrated [3]"
inspect fit-v.nps --json | tr -d ' \n' | grep '"parameters":\["alpha","nu","rho"\]' >/dev/null || fail "calibrated lacks its parameters' names"
for r in 'strike  f8 \[15\]' 'maturity  f8 \[15\]' 'quote  f8 \[15\]' 'price  f8 \[15\]' 'implied_vol  f8 \[15\]' \
         'residual  f8 \[15\]' 'calibration_log  f8 \['; do
  inspect fit-v.nps | grep "$r" >/dev/null || fail "calibration output lacks $r"
done
vals fit-v.nps residual | awk '{ for (i = 1; i <= NF; i++) if ($i > 1e-9 || $i < -1e-9) exit 1 }' || fail "residuals of an exact fit exceed 1e-9"
inspect fit-v.nps --json | tr -d ' \n' | grep '"columns":\["iteration","evaluations","rms","alpha","nu","rho"\]' >/dev/null ||
  fail "calibration_log lacks its columns"

# beta fixed by default; --fit alpha,nu keeps rho at its (wrong) start: no exact fit,
# a positive rms
gen-input price --from-text qv.csv $MODEL --alpha 0.4 --nu 0.3 --rho 0 -o qv0.in
price --backend cpu -i qv0.in --calibrate --fit alpha,nu -o fit2.nps
inspect fit2.nps | grep 'calibrated  f8 \[2\]' >/dev/null || fail "--fit alpha,nu: calibrated must hold 2 values"
inspect fit2.nps --json | tr -d ' \n' | grep '"rho":0\(\.0\)\?[,}]' >/dev/null || fail "--fit alpha,nu must keep rho at 0"
inspect fit2.nps --json | tr -d ' \n' | grep -o '"rms":[0-9.e-][0-9.e-]*' | awk -F: '{ if (!($2 > 1e-3)) exit 1 }' ||
  fail "--fit alpha,nu with rho wrong must leave a misfit"

# stopping early: a warning, converged false, the output still written
expect_exit 0 "did not converge" -- price --backend cpu -i qv0.in --calibrate --max-evaluations 3 -o early.nps
inspect early.nps --attrs | grep '"converged": false' >/dev/null || fail "an early stop must record converged: false"
no_leftovers .
