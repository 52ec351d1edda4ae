# integrate and gen-input integrate: bad input exits 2 with a message naming the value.
expect_exit 2 'x (age) must be in [0, 119]: 120' -- gen-input integrate --x 120
expect_exit 2 'x (age) must be in [0, 119]: -1' -- gen-input integrate --x -1
expect_exit 2 'g (guarantee years) must be in [0, 120]: -2' -- gen-input integrate --g -2
expect_exit 2 'r (retirement age) must be in [0, 120]: 130' -- gen-input integrate --r 130
expect_exit 2 'steps per year must be in [1, 1000]: 0' -- gen-input integrate --steps 0,2,10
expect_exit 2 '--steps must be three whole numbers' -- gen-input integrate --steps 10,2
expect_exit 2 '--steps must be three whole numbers' -- gen-input integrate --steps 10,2,x
expect_exit 2 '--portfolio must be in' -- gen-input integrate --portfolio 0
printf '1 0.02\n2 zero\n' > bad1.txt
expect_exit 2 "bad1.txt:2: column 'column2': not a finite number: 'zero'" -- gen-input integrate --curve bad1.txt
printf '1 0.02\n1 0.03\n' > bad2.txt
expect_exit 2 'maturities must increase' -- gen-input integrate --curve bad2.txt
printf '1 0.02 7\n' > bad3.txt
expect_exit 2 'bad3.txt: want two columns (maturity, zero rate), got 3' -- gen-input integrate --curve bad3.txt
printf '1 2.5\n' > bad4.txt
expect_exit 2 'rate must be a finite fraction' -- gen-input integrate --curve bad4.txt
expect_exit 2 'cannot open' -- gen-input integrate --curve missing.txt
printf '10 65\n' > pol.txt
expect_exit 2 'pol.txt: want three columns g r x (or a header line naming the columns), got 2' -- gen-input integrate --from-text pol.txt
# integrate itself re-checks what a stream says (streams may come from elsewhere).
gen-input array --name policies --shape 1,3 --fill linspace --lo 10 --hi 130 > p.nps
gen-input array --name steps --shape 1,3 --fill ones --dtype i4 > s.nps
cat p.nps s.nps > bad-x.nps
expect_exit 2 'x (age) must be in [0, 119]: 130' -- integrate -i bad-x.nps -o out.nps
gen-input array --name steps --shape 1,3 --fill zeros --dtype i4 > s0.nps
gen-input integrate | inspect > /dev/null
gen-input array --name policies --shape 1,3 --fill linspace --lo 10 --hi 35 > p2.nps
cat p2.nps s0.nps > bad-steps.nps
expect_exit 2 'steps per year must be whole numbers' -- integrate -i bad-steps.nps -o out.nps
gen-input array --name policies --shape 3 > p3.nps
cat p3.nps s.nps > bad-shape.nps
expect_exit 2 "'policies' must have shape [N, 3]" -- integrate -i bad-shape.nps -o out.nps
expect_exit 2 "no 'steps' record" -- integrate -i p2.nps -o out.nps
gen-input array --name other > o.nps
expect_exit 2 "no 'policies' record" -- integrate -i o.nps -o out.nps
gen-input array --name curve --shape 2,2 --fill zeros > c.nps
cat p2.nps s.nps c.nps > bad-curve.nps
expect_exit 2 'maturities must increase' -- integrate -i bad-curve.nps -o out.nps
printf 'garbage' > junk.nps
expect_exit 2 '' -- integrate -i junk.nps -o out.nps
[ ! -e out.nps ] || fail "a failed run left out.nps"
no_leftovers .
# The basis and the products: bad tables name the file, line and age; unknown
# products name the product; the stream's records are checked again by integrate.
printf 'age,q\n0,0.001\n1,1.5\n' > q15.csv
expect_exit 2 'q15.csv:3: age 1: q_x must be in [0, 1]: 1.5' -- gen-input integrate --mortality-table q15.csv
{ echo 'age,q'; for a in $(seq 0 110); do echo "$a,0.01"; done; } > short.csv
expect_exit 2 "mortality table 'insured': ends at age 110; the integrals reach age 120" -- gen-input integrate --mortality-table short.csv
{ echo 'age,q'; for a in $(seq 0 120); do [ "$a" = 100 ] && echo "$a,1" || echo "$a,0.01"; done; } > one.csv
expect_exit 2 'one.csv:102: age 100: q_x = 1 below age 120' -- gen-input integrate --mortality-table one.csv
printf 'age,q\n0,0.01\n2,0.01\n' > gap.csv
expect_exit 2 'gap.csv:3: age 2: ages must increase by 1' -- gen-input integrate --mortality-table gap.csv
{ echo 'age,q'; for a in $(seq 50 120); do echo "$a,0.01"; done; } > late.csv
expect_exit 2 "starts at age 50; the insured is aged 35" -- gen-input integrate --mortality-table late.csv
expect_exit 2 "of the spouse starts at age 50; the spouse's integrals reach age 1" -- gen-input integrate --mortality-table spouse=late.csv
printf 'age,rate\n0,0.01\n' > noname.csv
expect_exit 2 "name it q... (one-year death probabilities q_x) or mu..." -- gen-input integrate --mortality-table noname.csv
expect_exit 2 'several columns (q_female, q_male)' -- gen-input integrate --mortality-table "$SRC/share/examples/integrate-life-table.csv"
expect_exit 2 "no column 'q_other'" -- gen-input integrate --mortality-table "$SRC/share/examples/integrate-life-table.csv:q_other"
expect_exit 2 '--mortality wants [insured=|spouse=|NAME=]gm:A,B,C' -- gen-input integrate --mortality gm:0.1,2
expect_exit 2 '--mortality wants' -- gen-input integrate --mortality spouse=makeham:1,2,3
expect_exit 2 "the force of mortality at age 120 must be finite" -- gen-input integrate --mortality gm:0.0005,4,0.038
expect_exit 2 "unknown product 'annuty'" -- gen-input integrate --product annuty
expect_exit 2 "--product mixed draws products for --portfolio only" -- gen-input integrate --product mixed
expect_exit 2 'the equivalence premium needs premiums to solve for, but the premium term is 0' -- gen-input integrate --product annuity --premium equivalence
expect_exit 2 "the annuity's deferment 90 reaches its end 85" -- gen-input integrate --product annuity --deferment 90
expect_exit 2 "premium must be a number (per year) or 'equivalence'" -- gen-input integrate --premium lots
expect_exit 2 'term must be > 0 years: -5' -- gen-input integrate --product term --term -5
printf 'x,product\n40,annuity\n40,bond\n' > prod.csv
expect_exit 2 "prod.csv:3: unknown product 'bond'" -- gen-input integrate --from-text prod.csv
printf 'x,colour\n40,red\n' > col.csv
expect_exit 2 "col.csv: unknown column 'colour'" -- gen-input integrate --from-text col.csv
printf 'x,insured\n40,nobody\n' > law.csv
expect_exit 2 "law.csv:2: no mortality law named 'nobody'" -- gen-input integrate --from-text law.csv
printf 'age,probability\n20,0.5\n30,1.7\n' > mar.csv
expect_exit 2 'marriage table row 2 (age 30): the probability must be in [0, 1]: 1.7' -- gen-input integrate --marriage mar.csv
printf 'difference,density\n-1,0\n0,5\n1,0\n' > sa.csv
expect_exit 2 'spouse-age table: the density integrates to 5, not 1' -- gen-input integrate --spouse-age sa.csv
expect_exit 2 '--spouse-age wants normal:MEAN,SD' -- gen-input integrate --spouse-age normal:3
expect_exit 2 'spouse age: the spread (standard deviation) must be in [0.01, 120]: 0' -- gen-input integrate --spouse-age normal:0,0
# integrate re-checks the stream's records.
gen-input array --name products --shape 1,7 --fill linspace --lo 7 --hi 7 > p7.nps
cat p2.nps s.nps p7.nps > bad-product.nps
expect_exit 2 "'products' row 0: unknown product 7" -- integrate -i bad-product.nps -o out.nps
gen-input array --name products --shape 2,7 > p27.nps
cat p2.nps s.nps p27.nps > bad-pshape.nps
expect_exit 2 "'products' must have shape [1, 7]" -- integrate -i bad-pshape.nps -o out.nps
gen-input array --name lives --shape 1,2 --fill linspace --lo 0 --hi 5 --dtype i4 > l5.nps
cat p2.nps s.nps l5.nps > bad-lives.nps
expect_exit 2 'mortality law index out of range (2 laws): insured 0, spouse 5' -- integrate -i bad-lives.nps -o out.nps
gen-input array --name mortality --shape 3 > m3.nps
cat p2.nps s.nps m3.nps > bad-law.nps
expect_exit 2 "'mortality' record 'law 0': attrs law must be \"gompertz-makeham\" or \"table\"" -- integrate -i bad-law.nps -o out.nps
[ ! -e out.nps ] || fail "a failed run left out.nps"
no_leftovers .
