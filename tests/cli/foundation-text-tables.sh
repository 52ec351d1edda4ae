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

# One rule for every reader: a column with a cell that is not a number is a data column
# with a bad cell (exit 2 naming the line and the column), unless it is the label column
# (--labels, a label's header such as date, or a first column without numbers). A typo
# or a missing value never turns a column of numbers into labels.
printf 'a,b\n1,2\n3,4\n5,0.5abc\n' > typo.csv
expect_exit 2 "typo.csv:4: column 'b': not a finite number: '0.5abc'" -- gen-input array --from-text typo.csv -o o.nps
expect_exit 2 "typo.csv:4: column 'b': not a finite number: '0.5abc'" -- gen-input mle --from-text typo.csv --returns none -o o.nps
printf 'DAX,SMI\n1628.75,1678.1\nNA,1688.5\n1613.63,1750.5\n1606.51,1718\n' > na.csv
expect_exit 2 "na.csv:3: column 'DAX': not a finite number: 'NA'" -- gen-input mle --from-text na.csv -o o.nps
expect_exit 2 "na.csv:3: column 'DAX': not a finite number: 'NA'" -- gen-input array --from-text na.csv -o o.nps
expect_exit 2 "na.csv:3: column 'DAX': not a finite number: 'NA'" -- gen-input mle --from-text na.csv --columns DAX -o o.nps
[ ! -e o.nps ] || fail "a refused table left o.nps"
# The label column is still found: a first column of dates, or a text column named as labels.
printf 'when,DAX,SMI\n2020-01-02,1628.75,1678.1\n2020-01-03,1613.63,1688.5\n2020-01-06,1606.51,1718\n' > dated.csv
gen-input array --from-text dated.csv -o dated.nps
inspect dated.nps | grep -q 'x  f8 \[3, 2\]' || fail "dated.csv: the dates are not the labels: $(inspect dated.nps)"
inspect dated.nps | grep -q 'row_label' || fail "dated.csv: no row_label: $(inspect dated.nps)"
printf 'DAX,Date\n1628.75,2 Jan\n1613.63,3 Jan\n' > date-last.csv
gen-input mle --from-text date-last.csv --returns none -o date-last.nps
inspect date-last.nps | grep -q 'x_label' || fail "date-last.csv: the Date column is not the labels: $(inspect date-last.nps)"
# A text column that is neither is data with bad cells; --labels names it as labels.
printf 'DAX,ticker\n1628.75,x\n1613.63,y\n' > ticker.csv
expect_exit 2 "ticker.csv:2: column 'ticker': not a finite number: 'x'" -- gen-input array --from-text ticker.csv -o o.nps
gen-input array --from-text ticker.csv --labels ticker -o ticker.nps
