# gen-input array --from-text: users' text tables into a stream (common/text_table):
# a CSV with a header, a date column kept as the labels record row_label, quoted
# fields, whitespace columns without a header, one record per column, standard
# input; every bad input refused with exit 2 naming the file, line and value.
require_python
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1

printf '\xEF\xBB\xBFdate,close,"volume, shares"\r\n# a comment line\r\n2020-01-02,100.5,1200\r\n\r\n"2020-01-03",0.1,1e3\r\n2020-01-06,-7.25e-3,3\r\n' > prices.csv
gen-input array --from-text prices.csv -o table.nps
gen-input array --from-text prices.csv --layout columns --name ignored -o cols.nps
gen-input array --from-text prices.csv --columns 3,close --labels date --name px --dtype f4 -o f4.nps
gen-input array --from-text prices.csv --columns close -o close.nps
printf '1 2.5 3\n4 5 6   # trailing comment\n\n7 8 9\n' | gen-input array --from-text - --columns 3,1 -o ws.nps

"$PY" - <<'PY' || fail "--from-text: the records differ from the table"
import numpipe, numpy as np
recs = list(numpipe.records("table.nps"))
assert [r[0] for r in recs] == ["x", "row_label"], [r[0] for r in recs]
name, x, a = recs[0]
assert x.dtype == np.float64 and x.shape == (3, 2), (x.dtype, x.shape)
assert x.tolist() == [[100.5, 1200.0], [0.1, 1000.0], [-7.25e-3, 3.0]], x.tolist()   # exact, bit for bit
assert a["columns"] == ["close", "volume, shares"] and a["dims"] == ["row", "column"], a
assert a["kind"] == "array" and a["source"] == "prices.csv" and a["labels"] == "date", a
_, lab, la = recs[1]
assert la == {"kind": "labels", "labels_of": "row", "column": "date"}, la
assert [bytes(r).rstrip(b"\0").decode() for r in lab] == ["2020-01-02", "2020-01-03", "2020-01-06"]

cols = list(numpipe.records("cols.nps"))
assert [r[0] for r in cols] == ["close", "volume, shares", "row_label"], [r[0] for r in cols]
assert cols[0][1].tolist() == [100.5, 0.1, -7.25e-3] and cols[0][2]["dims"] == ["row"]
assert cols[1][1].tolist() == [1200.0, 1000.0, 3.0] and cols[1][2]["column"] == "volume, shares"

close = list(numpipe.records("close.nps"))
assert [r[0] for r in close] == ["x", "row_label"] and close[1][2]["column"] == "date", "--columns keeps the date labels"

px = numpipe.read("f4.nps")
assert px["px"].dtype == np.float32 and px["px"].tolist() == np.array([[1200, 100.5], [1000, 0.1], [3, -7.25e-3]], np.float32).tolist()

ws = list(numpipe.records("ws.nps"))
assert [r[0] for r in ws] == ["x"], "no labels record without a text column"
assert ws[0][1].tolist() == [[3, 1], [6, 4], [9, 7]] and ws[0][2]["columns"] == ["column3", "column1"], ws[0]
assert ws[0][2]["source"] == "stdin"
PY

# Bad input: exit 2, the file, the line, the column and the value.
printf 'date,close\n2020-01-02,1\n2020-01-03,oops\n' > bad.csv
expect_exit 2 "bad.csv:3: column 'close': not a finite number: 'oops'" -- gen-input array --from-text bad.csv --columns close -o o.nps
expect_exit 2 "bad.csv:2: column 'date': not a finite number: '2020-01-02'" -- gen-input array --from-text bad.csv --columns date,close -o o.nps
expect_exit 2 "--columns: no column 'open' in bad.csv (columns: date, close)" -- gen-input array --from-text bad.csv --columns open -o o.nps
expect_exit 2 "--labels: no column '7' in bad.csv" -- gen-input array --from-text bad.csv --labels 7 -o o.nps
expect_exit 2 "--columns and --labels both take column 'close'" -- gen-input array --from-text bad.csv --columns close --labels 2 -o o.nps
printf 'a b\n1 2\n3\n' > ragged.txt
expect_exit 2 'ragged.txt:3: expected 2 fields, got 1' -- gen-input array --from-text ragged.txt -o o.nps
printf 'a,b\n"1,2\n' > open.csv
expect_exit 2 'open.csv:2: a quoted field is not closed' -- gen-input array --from-text open.csv -o o.nps
printf 'v\n1\nnan\n' > nan.csv
expect_exit 2 "nan.csv:3: column 'v': not a finite number: 'nan'" -- gen-input array --from-text nan.csv -o o.nps
gen-input array --from-text nan.csv --allow-nonfinite -o nan.nps
printf '# only comments\n\n' > empty.txt
expect_exit 2 'empty.txt: no data rows' -- gen-input array --from-text empty.txt -o o.nps
printf 'date,name\n2020-01-02,x\n' > text.csv
expect_exit 2 "text.csv:2: column 'name': not a finite number: 'x'" -- gen-input array --from-text text.csv --header yes -o o.nps
printf 'date\n2020-01-02\n' > dates.csv
expect_exit 2 "no numeric columns" -- gen-input array --from-text dates.csv --header yes -o o.nps
expect_exit 2 "cannot open 'missing.csv'" -- gen-input array --from-text missing.csv -o o.nps
expect_exit 2 '--shape makes numbers; with --from-text the file gives them' -- gen-input array --from-text bad.csv --shape 3 -o o.nps
expect_exit 2 '--layout must be table or columns' -- gen-input array --from-text bad.csv --layout rows -o o.nps
expect_exit 2 '--header must be auto, yes or no' -- gen-input array --from-text bad.csv --header maybe -o o.nps
expect_exit 2 '--dtype with --from-text must be f8 or f4' -- gen-input array --from-text bad.csv --dtype i4 -o o.nps
expect_exit 2 '--columns needs --from-text' -- gen-input array --columns close -o o.nps
# the words of --layout and --header are checked with or without --from-text (before any work)
expect_exit 2 "--layout must be table or columns, got 'rows'" -- gen-input array --layout rows -o o.nps
expect_exit 2 '--header needs --from-text' -- gen-input array --header yes -o o.nps
[ ! -e o.nps ] || fail "a refused run left o.nps behind"
no_leftovers .
