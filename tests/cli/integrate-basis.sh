# integrate with the default basis reproduces the outputs of the build before the
# basis and products existed (share/ref/integrate-main-*.nps: that build's
# integrate on these inputs, --faithful-gf820 and --align-breaks (now the default), on a Debian 12 x86-64
# host, glibc 2.36): bit for bit where this machine's exp() gives that host's
# bits (the checkpoint's reserve tells), else within 1e-13 (another libm; the unit
# test unit_integrate_products holds the bits to the earlier arithmetic on any
# machine). The default basis given explicitly writes no basis records and gives
# the same bits; a life table, other spouse assumptions and laws change the
# reserve as they should. The aligned scheme now also ends steps at a curve's
# maturities (group b) and shortens steps too long for the laws at 120 (1 step a
# year, group c): its year-0 reserves are compared within 3e-3 (group b moved 2e-3:
# that build's were first order there; the others less than 1e-6).
printf '10 65 35\n0 60 70\n15 67 50.5\n7.5 64.7 35.3\n3 61 14\n' > pol.txt
printf '0 0.02\n10 0.03\n30 0.035\n' > curve.txt
gen-input integrate --from-text pol.txt --steps 2,2,3 > a.nps
gen-input integrate --from-text pol.txt --steps 1,2,2 --curve curve.txt > b.nps
gen-input integrate --portfolio 40 --seed 3 --steps 1,1,1 > c.nps
gen-input integrate --g 10 --r 65 --x 35 --steps 2,2,2 > d.nps
cat a.nps b.nps c.nps d.nps > in.nps
# The reference host's year-0 reserve at 2/2/2 (the last group), to the last bit.
tol=0
integrate -i d.nps --faithful-gf820 | inspect --values 1 | grep -q 'values 0.62321103419749913' ||
  { tol=1e-13; echo "note: this machine's exp() differs from the reference host's: comparing to $tol"; }
integrate -i in.nps --faithful-gf820 | verify --against "$SRC/share/ref/integrate-main-faithful.nps" --rtol $tol --atol 0 > v1.txt ||
  { cat v1.txt; fail "the default basis changed the faithful scheme's values (tolerance $tol)"; }
integrate -i in.nps --align-breaks | verify --against "$SRC/share/ref/integrate-main-aligned.nps" --atol 0 \
  --array reserve0 --rtol 3e-3 > v2.txt ||
  { cat v2.txt; fail "the aligned scheme moved from that build's values by more than 3e-3"; }
# That build left year 17 of policy 2 (x 50.5, r 67: a step ends on the year, its
# segment beginning at the half year r - x) unmarked, NaN; it is the reserve there now.
integrate -i a.nps -o a-out.nps
nps-export -i a-out.nps --records reserve -o a-out.csv
awk -F, '$1 == 2 && $2 == 17 { exit !($3 > 1.1 && $3 < 1.2) }' a-out.csv || fail "policy 2, year 17: $(grep '^2,17,' a-out.csv)"
# The comparison can fail: another spread of the spouse's age is another reserve.
gen-input integrate --g 10 --r 65 --x 35 --steps 2,2,2 --spouse-age normal:0,3.5 > d35.nps
integrate -i d35.nps --faithful-gf820 -o d35-out.nps
expect_exit 1 '' -- verify d35-out.nps "$SRC/share/ref/integrate-main-faithful.nps" --rtol 1e-6
# The default constants written out: no basis records, the same bits.
gen-input integrate --g 10 --r 65 --x 35 --steps 2,2,2 --mortality insured=gm:0.0005,-4.272,0.038 \
  --mortality spouse=gm:0.0005,-4.12,0.038 --spouse-age normal:0,3 --marriage parabola -o explicit.nps
! inspect explicit.nps | grep -E '^record' | grep -qE 'mortality|spouse_age|marriage|products|lives' || fail "default basis written as records"
integrate -i explicit.nps | verify --against <(integrate -i d.nps) --rtol 0 --atol 0 > /dev/null ||
  fail "the explicit default basis changed the bits"
year0() { inspect --values 1 "$1" | awk '/reserve0/ {f = 1} f && /values/ {print $2; exit}'; }
# A life table computed from the same laws (share/examples): the force constant
# within each year of age, so close to the laws' reserve, not equal.
T=$SRC/share/examples/integrate-life-table.csv
gen-input integrate --steps 4,2,4 --mortality-table insured=$T:q_female --mortality-table spouse=$T:q_male -o tab.nps
inspect tab.nps | grep -q 'mortality  f8 \[121, 2\]' || fail "no mortality table records"
integrate -i tab.nps -o tab-out.nps
gen-input integrate --steps 4,2,4 | integrate -o gm-out.nps
awk -v a="$(year0 tab-out.nps)" -v b="$(year0 gm-out.nps)" 'BEGIN { d = (a - b) / b; exit !(d != 0 && d < 1e-3 && d > -1e-3) }' ||
  fail "table vs law: $(year0 tab-out.nps) vs $(year0 gm-out.nps)"
# A younger spouse lives longer: a dearer pension; a marriage table of 0.9 at every age
# against the parabola (0.9 at 67.5 only, less elsewhere): dearer too.
gen-input integrate --steps 2,2,2 --spouse-age normal:-5,3 | integrate -o young.nps
gen-input integrate --steps 2,2,2 | integrate -o base.nps
printf 'age,probability\n15,0.9\n120,0.9\n' > married.csv
gen-input integrate --steps 2,2,2 --marriage married.csv | integrate -o married.nps
awk -v y="$(year0 young.nps)" -v m="$(year0 married.nps)" -v b="$(year0 base.nps)" 'BEGIN { exit !(y > b * 1.05 && m > b) }' ||
  fail "younger spouse $(year0 young.nps), married table $(year0 married.nps), base $(year0 base.nps)"
# A spouse-age table: a triangle of differences -6..6 (integrates to 1).
printf 'difference density\n-6 0\n0 0.16666666666666666\n6 0\n' > sage.txt
gen-input integrate --steps 2,2,2 --spouse-age sage.txt | integrate -o sage.nps
inspect sage.nps | grep -q 'spouse_age  f8 \[3, 2\]' || fail "no spouse_age table record"
# Laws by name in a policies table: two bases in one batch, each row as if alone.
cat > mix.csv <<'T'
x,g,r,insured,spouse
35,10,65,insured,spouse
35,10,65,heavy,spouse
T
gen-input integrate --from-text mix.csv --steps 2,2,2 --mortality heavy=gm:0.002,-4.0,0.04 -o mix.nps
integrate -i mix.nps -o mix-out.nps
gen-input integrate --steps 2,2,2 --mortality insured=gm:0.002,-4.0,0.04 | integrate -o heavy.nps
v=$(inspect --values 2 mix-out.nps | awk '/reserve0/ {f = 1} f && /values/ {print $2, $3; exit}')
[ "$(echo "$v" | cut -d' ' -f1)" = "$(year0 base.nps)" ] || fail "mixed bases: row 0 $v, alone $(year0 base.nps)"
[ "$(echo "$v" | cut -d' ' -f2)" = "$(year0 heavy.nps)" ] || fail "mixed bases: row 1 $v, alone $(year0 heavy.nps)"
no_leftovers .
