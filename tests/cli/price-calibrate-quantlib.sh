# price --calibrate at the default tolerance (gen-input price without grid sizes)
# recovers the parameters of quotes made by an independent pricer: QuantLib's
# FdSabrVanillaEngine extrapolated from two fine grids (share/ref/price/*.csv, made
# by bench/price-calibration-quotes.py; QuantLib is not needed here). alpha within
# 5e-4, nu and rho within 3e-3 of the truth, from a start far from it; the stated
# errors (standard_error + discretisation_error, from the fits on two grids) cover the
# distance to the truth, and the discretisation's share is below the targets.
attr_list() {  # FILE NAME: the numbers of a list attr of 'calibrated', blank-separated
  inspect "$1" --json | tr -d ' \n' | grep -o "\"$2\":\[[^]]*\]" | head -1 | sed 's/.*\[//; s/\]//; s/,/ /g'
}
fit_case() {  # CSV BETA ALPHA NU RHO: fit from alpha 0.35, nu 0.3, rho 0 and check
  local csv="$SRC/share/ref/price/$1" name=${1%.csv}
  [ -f "$csv" ] || fail "missing $csv"
  gen-input price --from-text "$csv" --s0 1 --beta "$2" --alpha 0.35 --nu 0.3 --rho 0 -o "$name.in"
  inspect "$name.in" --json | tr -d ' \n' | grep -q '"tolerance":5e-06' || fail "$name: the input is not at the default tolerance"
  price --backend cpu --threads 2 -i "$name.in" --calibrate -o "$name.nps" 2>"$name.err" || fail "$name: price failed: $(cat "$name.err")"
  inspect "$name.nps" --attrs | grep -q '"converged": true' || fail "$name: not converged"
  local got se de
  got=$(inspect "$name.nps" --values 3 | awk '/^  values/{sub(/^  values /,""); print; exit}')
  se=$(attr_list "$name.nps" standard_error)
  de=$(attr_list "$name.nps" discretisation_error)
  [ "$(echo $de | wc -w)" = 3 ] || fail "$name: discretisation_error '$de' must hold 3 values"
  echo "$name: fitted $got; standard_error $se; discretisation_error $de"
  echo "$got $se $de" | awk -v a="$3" -v n="$4" -v r="$5" '
    function abs(x) { return x < 0 ? -x : x }
    { want[1] = a; want[2] = n; want[3] = r; tol[1] = 5e-4; tol[2] = 3e-3; tol[3] = 3e-3
      for (k = 1; k <= 3; k++) {
        off = abs($k - want[k]); stated = $(k + 3) + $(k + 6)
        if (off > tol[k]) { print "parameter " k " is " $k ", off the truth " want[k] " by " off " > " tol[k]; exit 1 }
        if ($(k + 6) > tol[k] / 3) { print "parameter " k ": the discretisation error " $(k + 6) " is not well below " tol[k]; exit 1 }
        if (off > 2 * stated) { print "parameter " k ": off the truth by " off ", more than twice the stated error " stated; exit 1 }
      } }' || fail "$name: $(echo "$got $se $de" | awk -v a="$3" -v n="$4" -v r="$5" '{print "fitted", $1, $2, $3, "truth", a, n, r}')"
}
fit_case sabr-quotes-a.csv 0.7 0.25 0.5 -0.4    # 100 quotes, 5 maturities 91-1826 days
fit_case sabr-quotes-b.csv 0.5 0.3 0.4 -0.2     # 40 quotes, 4 maturities (the engine fails at 365 days there)
no_leftovers .
