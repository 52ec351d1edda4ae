# Users' text tables (common/text_table): white space or commas between columns, an
# optional header line, as spreadsheets write CSV; and the files the guides' examples
# read are shipped in share/ref.
require_tool integrate
for f in policies.csv yield-curve.txt mle-prices.csv integrate-checkpoint-year0.txt; do
  [ -s "$SRC/share/ref/$f" ] || fail "share/ref/$f, read by the documentation's examples, is missing"
done
# A CSV with the header g,r,x gives the same policies as the same numbers without it.
printf 'g,r,x\n10,65,35\n5,67,30.5\n' > pol.csv
printf '10 65 35\n5 67 30.5\n' > pol.txt
gen-input integrate --from-text pol.csv -o a.nps
gen-input integrate --from-text pol.txt -o b.nps
verify a.nps b.nps --array policies --array steps > /dev/null || fail "a CSV header or commas change the policies"
inspect a.nps --array policies --values 6 | grep -q 'values 10 65 35 5 67 30.5' || fail "policies from the CSV: $(inspect a.nps)"
# Windows line ends too.
printf 'g,r,x\r\n10,65,35\r\n' > crlf.csv
gen-input integrate --from-text crlf.csv -o c.nps
# A header is the first row only, with one name per column; anything else is bad input.
printf '10,65,35\ng,r,x\n' > late.csv
expect_exit 2 "late.csv:2:" -- gen-input integrate --from-text late.csv
grep -q "'g'" "$WORK/.stderr" || fail "the message does not name the field: $(cat "$WORK/.stderr")"
printf 'g,r\n10,65,35\n' > short.csv
expect_exit 2 "short.csv:2: expected 2 fields, got 3" -- gen-input integrate --from-text short.csv
printf 'maturity,rate\n1,0.02\n10,0.03\n' > curve.csv
gen-input integrate --curve curve.csv -o d.nps
# The shipped portfolio and curve, as docs/integrate.md uses them.
gen-input integrate --from-text "$SRC/share/ref/policies.csv" --curve "$SRC/share/ref/yield-curve.txt" -o shipped.nps
inspect shipped.nps --array policies | grep -q 'policies  f8 \[8, 3\]' || fail "share/ref/policies.csv: $(inspect shipped.nps --array policies)"
