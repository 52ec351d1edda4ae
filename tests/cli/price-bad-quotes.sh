# Bad contracts, quote tables and options exit 2 with a message naming the row or
# value; nothing is written.
MODEL="--s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --num-x 41 --num-y 21 --steps-per-year 12"

# --strikes, --maturities, --option, --steps-per-year, --rho
expect_exit 2 "--strikes: empty item" -- gen-input price $MODEL --strikes 0.9,,1.1
expect_exit 2 "--strikes must be a number, got 'x'" -- gen-input price $MODEL --strikes 0.9,x
expect_exit 2 "A:B:N needs 1 <= N" -- gen-input price $MODEL --strikes 0.8:1.2:0
expect_exit 2 "strike 1: strike must be finite and > 0, got -1" -- gen-input price $MODEL --strikes 0.9,-1
expect_exit 2 "lies beyond the x grid" -- gen-input price $MODEL --strikes 0.9,50
expect_exit 2 "give --strikes or --outer" -- gen-input price $MODEL --strikes 1 --outer 3
expect_exit 2 "--option must be call or put, got 'straddle'" -- gen-input price $MODEL --option straddle
expect_exit 2 "must exceed the previous one" -- gen-input price $MODEL --maturities 1,0.5
expect_exit 2 "maturity 0 = -1 must be finite and > 0" -- gen-input price $MODEL --maturities -1,1
expect_exit 2 "give --maturities or -t/--maturity" -- gen-input price $MODEL --maturities 1,2 -t 2
expect_exit 2 "at least one step each" -- gen-input price --s0 1 --alpha 0.3 --num-t 3 --maturities 0.5,1,2
expect_exit 2 "give --steps-per-year or --num-t" -- gen-input price $MODEL --num-t 9
expect_exit 2 "--steps-per-year must be in (0, 1e6]" -- gen-input price --steps-per-year 0
expect_exit 2 "rho must be in (-1, 1), got 1" -- gen-input price --rho 1
expect_exit 2 "gen-input: --rho: expected a decimal number, got nan" -- gen-input price --rho nan

# quote tables: missing columns, bad fields, negative prices, arbitrage, maturities
# beyond the grid, strikes beyond it; each names the file and line
q() { printf "$1" >bad.txt; }
q 'strike maturity\n1 1\n'
expect_exit 2 "bad.txt: no column 'type'" -- gen-input price $MODEL --from-text bad.txt
q 'maturity type price\n1 call 0.1\n'
expect_exit 2 "bad.txt: no column 'strike'" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n1 1 call\n'
expect_exit 2 "bad.txt:2: expected 4 fields" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n1 1 call 0.1\n1.1 1 straddle 0.05\n'
expect_exit 2 "bad.txt:3: type must be call or put, got 'straddle'" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n1 1 call abc\n'
expect_exit 2 "bad.txt:2: column 'price': not a finite number: 'abc'" -- gen-input price $MODEL --from-text bad.txt
q '# a comment\nstrike maturity type price\n1 1 call 0.1\n0.9 1 put -0.02\n'
expect_exit 2 "bad.txt:4: negative price -0.02" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n0.8 1 call 0.1\n'
expect_exit 2 "bad.txt:2: price 0.1 is below the intrinsic value 0.2" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n1.2 1 put 1.3\n'
expect_exit 2 "bad.txt:2: price 1.3 is not below 1.2" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n1 1 call 0.10\n1.1 1 call 0.12\n'
expect_exit 2 "bad.txt:2 and bad.txt:3: call prices 0.1 and 0.12" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n0.9 1 call 0.16\n1.0 1 call 0.10\n1.1 1 call 0.02\n'
expect_exit 2 "bad.txt:2 and bad.txt:3 and bad.txt:4: call prices 0.16, 0.1, 0.02 are not convex" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type price\n1 0.5 call 0.10\n1 1 call 0.08\n'
expect_exit 2 "bad.txt:2 and bad.txt:3: the call with strike 1 is worth 0.1 at maturity 0.5 but 0.08" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type implied_vol\n1 1 call 0.2\n1.1 1 call -0.1\n'
expect_exit 2 "bad.txt:3: implied_vol must be > 0, got -0.1" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type implied_vol\n1 1 call 0.2\n1.1 3 call 0.2\n'
expect_exit 2 "bad.txt:3: maturity 3 lies beyond the grid's time axis, which ends at t = 2" -- gen-input price $MODEL --from-text bad.txt -t 2
q 'strike maturity type implied_vol\n1 1 call 0.2\n40 1 call 0.2\n'
expect_exit 2 "bad.txt:3: strike 40 lies beyond the x grid" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type implied_vol weight\n1 1 call 0.2 -1\n'
expect_exit 2 "bad.txt:2: weight must be finite and >= 0, got -1" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type implied_vol price\n1 1 call 0.2 0.1\n'
expect_exit 2 "both a price and an implied_vol column" -- gen-input price $MODEL --from-text bad.txt
q 'strike maturity type\n'
expect_exit 2 "bad.txt: no data rows" -- gen-input price $MODEL --from-text bad.txt
expect_exit 2 "cannot open" -- gen-input price $MODEL --from-text no-such-file.txt
expect_exit 2 "drop --strikes" -- gen-input price $MODEL --from-text bad.txt --strikes 1

# price: the new options
gen-input price $MODEL --strikes 0.9,1.1 -o ok.in
expect_exit 2 "--fit, --max-evaluations and --start need --calibrate" -- price -i ok.in --fit alpha -o out.nps
expect_exit 2 "--calibrate needs a quote table" -- price -i ok.in --calibrate -o out.nps
expect_exit 2 "--fit takes a comma list of alpha, nu, rho, beta; got 'sigma'" -- price -i ok.in --calibrate --fit alpha,sigma -o out.nps
expect_exit 2 "--fit names nu twice" -- price -i ok.in --calibrate --fit nu,nu -o out.nps
expect_exit 2 "--max-evaluations must be >= 1" -- price -i ok.in --calibrate --max-evaluations 0 -o out.nps
printf 'strike maturity type\n1 1 call\n' >noquote.txt
gen-input price $MODEL --from-text noquote.txt -o noquote.in
expect_exit 2 "--calibrate needs a quote table with prices or implied volatilities" -- price -i noquote.in --calibrate -o out.nps
printf 'strike maturity type implied_vol\n1 1 call 0.3\n1.1 1 call 0.3\n' >two.txt
gen-input price $MODEL --from-text two.txt -o two.in
expect_exit 2 "2 quotes cannot determine 3 parameters" -- price -i two.in --calibrate -o out.nps
# the Greeks need the spot inside the grid: FinPar's grid (its strikes, here as puts) can
# put it on the edge; the user's strikes' grid keeps s0 on an inner node
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --num-x 3 --num-y 21 --num-t 5 --outer 2 --option put -o edge.in
expect_exit 2 "--greeks: the spot lies on the x grid's edge" -- price -i edge.in --greeks -o out.nps
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --num-x 3 --num-y 21 --num-t 5 --strikes 0.9 -o inner.in
price -q -i inner.in --greeks -o inner.nps 2>/dev/null || fail "the sinh grid's spot must have neighbours for --greeks"
rm -f inner.nps
# records out of place or malformed
gen-input array --name strike --shape 2 --kind price.strikes -o s.nps
expect_exit 2 "record 'strike' comes before any problem record" -- price -i s.nps -o out.nps
[ ! -e out.nps ] || fail "output written after bad input"
no_leftovers .
