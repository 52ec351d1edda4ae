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
expect_exit 2 'bad1.txt:2: not a number' -- gen-input integrate --curve bad1.txt
printf '1 0.02\n1 0.03\n' > bad2.txt
expect_exit 2 'maturities must increase' -- gen-input integrate --curve bad2.txt
printf '1 0.02 7\n' > bad3.txt
expect_exit 2 'want two numbers' -- gen-input integrate --curve bad3.txt
printf '1 2.5\n' > bad4.txt
expect_exit 2 'rate must be a finite fraction' -- gen-input integrate --curve bad4.txt
expect_exit 2 'cannot open' -- gen-input integrate --curve missing.txt
printf '10 65\n' > pol.txt
expect_exit 2 'pol.txt:1: want three numbers' -- gen-input integrate --from-text pol.txt
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
