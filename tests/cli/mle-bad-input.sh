# mle-fit and gen-input mle refuse bad input with exit 2, a message naming the
# value, and nothing written.
gen-input mle --length 200 --seed 1 -o s.nps
expect_exit 2 '--window must be >= 3, got 2' -- mle-fit -i s.nps --window 2 -o out.nps
expect_exit 2 '--window 201 is longer than the series: length 200' -- mle-fit -i s.nps --window 201 -o out.nps
expect_exit 2 '--step must be >= 1, got 0' -- mle-fit -i s.nps --window 50 --step 0 -o out.nps
expect_exit 2 '--refresh must be >= 1, got 0' -- mle-fit -i s.nps --window 50 --refresh 0 -o out.nps
expect_exit 2 '--alpha-grid is empty' -- mle-fit -i s.nps --window 50 --alpha-grid '' -o out.nps
expect_exit 2 'shapes must be finite and > 0' -- mle-fit -i s.nps --window 50 --alpha-grid 0:2:5 -o out.nps
expect_exit 2 'shapes must be finite and > 0' -- mle-fit -i s.nps --window 50 --alpha-grid 1,-2 -o out.nps
expect_exit 2 'COUNT must be an integer' -- mle-fit -i s.nps --window 50 --alpha-grid 1:2:0 -o out.nps
expect_exit 2 '--quantiles takes probabilities in (0, 1)' -- mle-fit -i s.nps --window 50 --quantiles 0.01,1.5 -o out.nps
expect_exit 2 '--backtest needs --quantiles' -- mle-fit -i s.nps --window 50 --backtest -o out.nps
expect_exit 2 "--compare takes normal and t separated by commas, got 'laplace'" -- mle-fit -i s.nps --window 50 --compare normal,laplace -o out.nps
expect_exit 2 '--shapes must be 1 or 2, got 3' -- mle-fit -i s.nps --window 50 --shapes 3 -o out.nps
gen-input array --name y --shape 100 -o y.nps
expect_exit 2 "the input holds no array 'x'" -- mle-fit -i y.nps --window 50 -o out.nps
gen-input array --name x --shape 2,3,4 -o x3.nps
expect_exit 2 'x: expected shape [length] or [series, length], got [2, 3, 4]' -- mle-fit -i x3.nps --window 3 -o out.nps
# non-finite data (gen-input refuses to write it: np-testcraft makes it)
np-testcraft fill x f8 1,100 inf 7 > inf.nps
expect_exit 2 'x: non-finite value at series 0, index' -- mle-fit -i inf.nps --window 10 -o out.nps
expect_exit_stdin 2 'truncated' s.nps -- bash -c 'head -c 20 | mle-fit --window 10 -o out.nps'
[ ! -e out.nps ] || fail "out.nps written despite bad input"
no_leftovers .
# gen-input mle
printf 'date,close\n2020-01-01,10\n2020-01-02,oops\n' >bad.csv
expect_exit 2 "bad.csv:3: column 'close': not a finite number: 'oops'" -- gen-input mle --from-text bad.csv --columns close -o out.nps
expect_exit 2 "bad.csv:3: column 'close': not a finite number: 'oops'" -- gen-input mle --from-text bad.csv -o out.nps
expect_exit 2 "bad.csv:2: column 'date': not a finite number: '2020-01-01'" -- gen-input mle --from-text bad.csv --columns date,close -o out.nps
expect_exit 2 "--returns needs --from-text" -- gen-input mle --returns zz9 -o out.nps
expect_exit 2 "--columns needs --from-text" -- gen-input mle --columns close -o out.nps
expect_exit 2 "--columns: no column 'open'" -- gen-input mle --from-text bad.csv --columns open -o out.nps
expect_exit 2 "--labels: no column 'day'" -- gen-input mle --from-text bad.csv --columns close --labels day -o out.nps
expect_exit 2 "--columns and --labels both take column 'close'" -- gen-input mle --from-text bad.csv --columns close --labels close -o out.nps
# dates: strictly increasing, or sorted on request; duplicated dates never
printf 'date,close\n2020-01-01,10\n2020-01-03,11\n2020-01-02,12\n2020-01-06,13\n' >swapped.csv
expect_exit 2 "swapped.csv:4: date '2020-01-02' comes before '2020-01-03' on line 3" -- gen-input mle --from-text swapped.csv --returns log -o out.nps
printf 'date,close\n2020-01-03,10\n2020-01-02,11\n2020-01-01,12\n' >descending.csv
expect_exit 2 "descending.csv:3: date '2020-01-02' comes before '2020-01-03' on line 2" -- gen-input mle --from-text descending.csv -o out.nps
printf 'date,close\n2020-01-01,10\n2020-01-02,11\n2020-01-02,12\n2020-01-03,13\n' >dup.csv
expect_exit 2 "dup.csv:4: duplicated date '2020-01-02' in column 'date' (also on line 3)" -- gen-input mle --from-text dup.csv -o out.nps
printf 'date,close\n2020-01-02,10\n2020-01-01,11\n2020-01-02,12\n' >dup2.csv
expect_exit 2 "duplicated date '2020-01-02'" -- gen-input mle --from-text dup2.csv --sort -o out.nps
printf 'date,close\n2020-01-01,10\n2020-02-30,11\n' >baddate.csv
expect_exit 2 "baddate.csv:3: column 'date': not a date" -- gen-input mle --from-text baddate.csv -o out.nps
printf 'name,close\nb,10\na,11\n' >names.csv
expect_exit 2 "--sort: the label column 'name' does not hold dates" -- gen-input mle --from-text names.csv --sort -o out.nps
printf 'a b\n1 2\n3\n' >short.txt
expect_exit 2 'short.txt:3: expected 2 fields, got 1' -- gen-input mle --from-text short.txt -o out.nps
printf '1\n-2\n' >neg.txt
expect_exit 2 '--returns log needs positive values' -- gen-input mle --from-text neg.txt --returns log -o out.nps
expect_exit 2 'cannot open' -- gen-input mle --from-text missing.csv -o out.nps
expect_exit 2 '--p must be finite and > 0' -- gen-input mle --p 0 -o out.nps
expect_exit 2 '--p2 must be finite and > 0' -- gen-input mle --p2 -1 -o out.nps
expect_exit 2 '--sl must be finite and > 0' -- gen-input mle --sl -1 -o out.nps
expect_exit 2 '--dist must be aepd' -- gen-input mle --dist normal -o out.nps
[ ! -e out.nps ] || fail "out.nps written despite bad input"
no_leftovers .
