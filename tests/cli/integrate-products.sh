# integrate's products by Thiele's equation through the tools: a life annuity under
# constant intensities against its closed form (1 - e^-(r+mu)n)/(r+mu) to 1e-10
# with aligned steps; the equivalence premium makes the reserve at inception zero,
# also when given back as a level premium; policies from a CSV with a header and
# product names; a mixed portfolio is reproducible from its seed.
year0() { inspect --values 1 "$1" | awk '/reserve0/ {f = 1} f && /values/ {print $2; exit}'; }
rec() { inspect --values "$3" "$1" | awk -v r="$2" '/^record/ && $3 == r {f = 1} f && /values/ {$1 = ""; print; exit}'; }
# A table of forces mu_x = 0.02 at every age.
{ echo 'age,mu'; for a in $(seq 0 120); do echo "$a,0.02"; done; } > flat.csv
gen-input integrate --product annuity --x 40 --term 30 --rate 0.03 --steps 20,1,1 --mortality-table flat.csv \
  | integrate --align-breaks -o ann.nps
awk -v v="$(year0 ann.nps)" 'BEGIN { w = (1 - exp(-0.05 * 30)) / 0.05; d = v - w; exit !(d < 1e-10 && d > -1e-10) }' ||
  fail "life annuity: $(year0 ann.nps), closed form $(awk 'BEGIN { print (1 - exp(-1.5)) / 0.05 }')"
# Deferred by 10 years: e^-(r+mu)10 (1 - e^-(r+mu)20)/(r+mu).
gen-input integrate --product annuity --x 40 --term 30 --deferment 10 --rate 0.03 --steps 20,1,1 --mortality-table flat.csv \
  | integrate --align-breaks -o def.nps
awk -v v="$(year0 def.nps)" 'BEGIN { w = exp(-0.5) * (1 - exp(-1)) / 0.05; d = v - w; exit !(d < 1e-10 && d > -1e-10) }' ||
  fail "deferred annuity: $(year0 def.nps)"
# The equivalence premium: V(0) = 0 to rounding; given back as a premium, V(0) = 0 again.
gen-input integrate --product endowment --x 45 --term 20 --premium equivalence --steps 4,1,1 -o eq.nps
integrate -i eq.nps -o eq-out.nps
awk -v v="$(year0 eq-out.nps)" 'BEGIN { exit !(v < 1e-13 && v > -1e-13) }' || fail "equivalence: V(0) = $(year0 eq-out.nps)"
P=$(rec eq-out.nps premium 1 | tr -d ' ')
awk -v p="$P" 'BEGIN { exit !(p > 0.03 && p < 0.06) }' || fail "endowment premium $P"
gen-input integrate --product endowment --x 45 --term 20 --premium "$P" --steps 4,1,1 | integrate -o given.nps
awk -v v="$(year0 given.nps)" 'BEGIN { exit !(v < 1e-12 && v > -1e-12) }' || fail "premium $P given: V(0) = $(year0 given.nps)"
# The reserve at the term is the sum due there, 0 after, NaN past age 120.
r=$(rec eq-out.nps reserve 80)
set -- $r
[ "${21}" = 1 ] && [ "${22}" = 0 ] && [ "${76}" = 0 ] && [ "${77}" = nan ] || fail "endowment reserve years 20, 21, 75, 76: ${21} ${22} ${76} ${77}"
# Policies from a CSV with a header, product names and premiums (share/examples).
gen-input integrate --from-text "$SRC/share/examples/integrate-policies.csv" --steps 2,2,2 -o csv.nps
inspect csv.nps | grep -q 'policy_label' || fail "no policy labels"
integrate -i csv.nps -o csv-out.nps
inspect csv-out.nps | grep -q 'premium  f8 \[6\]' || fail "no premium record"
inspect csv-out.nps | grep -q 'policy_label' || fail "labels not carried to the output"
p0=$(rec csv-out.nps reserve0 6)
set -- $p0
for i in 1 2 4 5; do
  eval v=\${$i}
  awk -v v="$v" 'BEGIN { exit !(v < 1e-8 && v > -1e-8) }' || fail "policy $i of the CSV: equivalence, V(0) = $v"
done
# A header g,r,x (CSV) is the three columns.
printf 'g,r,x\n10,65,35\n' > grx.csv
gen-input integrate --from-text grx.csv --steps 2,2,2 | integrate | verify --against <(gen-input integrate --steps 2,2,2 | integrate) --rtol 0 --atol 0 > /dev/null ||
  fail "g,r,x header"
# A mixed portfolio is reproducible, and its rows are the rows of each policy alone.
gen-input integrate --portfolio 30 --seed 4 --product mixed --premium equivalence --steps 2,1,1 -o mp.nps
integrate -i mp.nps -o mp1.nps --threads 1
integrate -i mp.nps --threads 2 | verify --against mp1.nps --rtol 0 --atol 0 > /dev/null || fail "thread count changed the bits"
gen-input integrate --portfolio 30 --seed 4 --product mixed --premium equivalence --steps 2,1,1 | integrate |
  verify --against mp1.nps --rtol 0 --atol 0 > /dev/null || fail "mixed portfolio not reproducible"
[ "$(inspect --json mp.nps | grep -c '"product"')" -ge 1 ] || fail "no products record"
no_leftovers .
