# Generators write their large records in pieces (README "Memory"): gen-input fluid,
# ns and mle compute each piece of a field or series where it is written, and integrate
# draws a portfolio's policies as their rows are written, so memory is a piece (16 MiB)
# and a few rows, not the state; the arrays are the ones written whole before (their
# payloads' SHA-256, from the generators before they wrote in pieces).
require_python

PEAK_TIMEOUT=300  # peak (lib.sh): exit code and peak resident memory in MiB
# payloads FILE...: "FILE RECORD SHA256[:16]" for each record's values, in stream order
payloads() {
  PYTHONPATH="$SRC/share/python" "$PY" -c 'import hashlib, sys, numpipe
for f in sys.argv[1:]:
    for r in numpipe.records(f): print(f, r.name, hashlib.sha256(r.array.tobytes()).hexdigest()[:16])' "$@"
}

# A fluid state of 4098 x 4098 cells: 7 arrays of 64 MiB under a 64 MiB budget (the
# state made whole needs 720 MiB: refused before), and its memory bounded by the pieces.
read -r rc mib < <(NUMPIPE_MEMORY_LIMIT=64M peak gen-input fluid --n 4096 --scene vortex -o f3.nps)
[ "$rc" = 0 ] || fail "fluid --n 4096 under 64M: exit $rc: $(cat peak.err)"
[ "$mib" -lt 120 ] || fail "fluid --n 4096: peak $mib MiB (7 arrays of 64 MiB written in pieces of 16 MiB)"
# An ns state of 160^3 points: four fields of 31 MiB under a 64 MiB budget.
read -r rc mib < <(NUMPIPE_MEMORY_LIMIT=64M peak gen-input ns --n 160 --init taylor-green-3d -o n1.nps)
[ "$rc" = 0 ] || fail "ns --n 160 under 64M: exit $rc: $(cat peak.err)"
[ "$mib" -lt 100 ] || fail "ns --n 160: peak $mib MiB (4 fields of 31 MiB written in pieces of 16 MiB)"
# A drawn mle series of 20 M points (153 MiB) past one piece: checked, then written in pieces.
read -r rc mib < <(peak gen-input mle --length 20000000 -o m2.nps)
[ "$rc" = 0 ] || fail "mle --length 20000000: exit $rc: $(cat peak.err)"
[ "$mib" -lt 100 ] || fail "mle --length 20000000: peak $mib MiB (a series of 153 MiB written in pieces of 16 MiB)"
rm m2.nps
# A portfolio of 2 M policies of mixed products (a products record of 107 MiB) under a
# 64 MiB budget: its draws are replayed from the seed for each record, not held (held
# whole, it needed 390 MiB: refused under the budget before).
read -r rc mib < <(NUMPIPE_MEMORY_LIMIT=64M peak gen-input integrate --portfolio 2000000 --product mixed -o i4.nps)
[ "$rc" = 0 ] || fail "integrate --portfolio 2000000 under 64M: exit $rc: $(cat peak.err)"
[ "$mib" -lt 64 ] || fail "integrate --portfolio 2000000: peak $mib MiB (records of up to 107 MiB written in pieces of 16 MiB)"
# A piece that does not fit is refused up front, naming the pieces.
expect_exit 3 "a grid of 4096 x 4096 cells (written in pieces of 16.0 MiB)" -- env NUMPIPE_MEMORY_LIMIT=4M gen-input fluid --n 4096 -o out.nps
expect_exit 3 "a state of 160x160x160 points (written in pieces of 16.0 MiB)" -- env NUMPIPE_MEMORY_LIMIT=4M gen-input ns --n 160 -o out.nps
[ ! -e out.nps ] || fail "a refused run left out.nps"

# The same values as the whole states: records larger than a piece (rows that straddle
# two pieces), random draws, periodic and inflow sides, obstacles, emitters, a shift, a body.
gen-input fluid --n 2100 --scene random --bc y=periodic -o f1.nps
gen-input fluid --n 300,40 --inflow left:1 --obstacle circle:0.4,0.13,0.05 --emit d=1@circle:0.2,0.13,0.03 \
  --set T=2@box:0,0,0.3,0.1 --length 2 --precision fp64 -o f2.nps
gen-input ns --n 64,48,40 --init random --shift 3,-2,1 --bc y=noslip -o n2.nps
gen-input ns --n 96,64,1 --box 12,8,1 --body cylinder:3,4,0.5 --free-stream 1,0,0 -o n3.nps
gen-input mle --length 3000001 --p 1.5 --p2 0.8 --sl 1 --sr 2 --seed 4 -o m1.nps
payloads f1.nps f2.nps f3.nps n1.nps n2.nps n3.nps m1.nps > got.txt
cat > want.txt <<'WANT'
f1.nps d 942a897d7a542294
f1.nps u 0f189d889bbde095
f1.nps v 56613bfb94ccf930
f1.nps d0 d803d905a104d579
f1.nps u0 d803d905a104d579
f1.nps v0 d803d905a104d579
f2.nps d 43bc0f525eff56b5
f2.nps u d48fde7cf3970383
f2.nps v 3bd5a778c4bd26c2
f2.nps T 61f9e1d551621e5c
f2.nps d0 43bc0f525eff56b5
f2.nps u0 43bc0f525eff56b5
f2.nps v0 43bc0f525eff56b5
f2.nps solid 5b3d89c22efdca75
f2.nps source_d 5068d598bef32770
f3.nps d 0de49894aa6cdb79
f3.nps u 60726c67565a0a0b
f3.nps v bc84ae826d837b36
f3.nps d0 5e371a354a3eeb87
f3.nps u0 5e371a354a3eeb87
f3.nps v0 5e371a354a3eeb87
n1.nps rho 4db19dab37a6f7ce
n1.nps vx a7e91382e754c5bc
n1.nps vy 5423ec86b2ffea7a
n1.nps vz c2fa10121d8d5820
n2.nps rho d1e5762c7280a8e4
n2.nps vx a16c7d60215425dc
n2.nps vy b0bb53c1e6031e6d
n2.nps vz 384e3d52cad4f3f0
n3.nps rho 99efa5e4ad9262c4
n3.nps vx d6d880ffefec45b3
n3.nps vy 2aae7dc846aaf25f
n3.nps vz 2aae7dc846aaf25f
m1.nps x a1819a16207614d7
WANT
diff want.txt got.txt || fail "the arrays written in pieces differ from the states written whole"

# Portfolios and policy tables: the records made whole before (one policy a row; rows
# that straddle two pieces; products, lives, laws, a curve).
gen-input integrate --portfolio 7 --seed 3 --product mixed --premium equivalence -o i1.nps
gen-input integrate --portfolio 1000 --seed 7 --product annuity --deferment 5 \
  --mortality-table "$SRC/share/examples/integrate-life-table.csv:q_female" --curve "$SRC/share/ref/yield-curve.txt" -o i2.nps
gen-input integrate --portfolio 300000 --seed 2 --product mixed --premium 50 -o i3.nps
printf 'x,insured,spouse,product\n40,w,m,annuity\n50,insured,m,spouse\n30,m,w,term\n' > lives.csv
gen-input integrate --from-text lives.csv --mortality w=gm:0.0005,-4.272,0.038 --mortality m=gm:0.0005,-4.12,0.038 \
  --term 30 -o i5.nps
payloads i1.nps i2.nps i3.nps i4.nps i5.nps > got.txt
cat > want.txt <<'WANT'
i1.nps policies 58ec165f0eb9b497
i1.nps steps a37e6638334fbc2c
i1.nps products a27889fcdb968d50
i2.nps policies 8b05e4e9a7431c0c
i2.nps steps 0e90290e1b08cea2
i2.nps curve f5438a6bb4d07b9a
i2.nps products d40aa776eb74e213
i2.nps mortality 7bcc297afa6e1544
i2.nps mortality f3863a4c39ab1920
i3.nps policies 9c8f0396fc614b46
i3.nps steps b8ed453a5fdc976e
i3.nps products a96c0b4cc0e17ca0
i4.nps policies a6fdf56db881ad5f
i4.nps steps 2cd6e1d0eec1f88a
i4.nps products 408b4c8c66dfae5f
i5.nps policies aa198b1b757900a1
i5.nps steps f314ff65c420e3b6
i5.nps products a4b412d407ca13ca
i5.nps lives 7ed17ff5cf65d697
i5.nps mortality fa75858b715e2ade
i5.nps mortality f3863a4c39ab1920
i5.nps mortality fa75858b715e2ade
i5.nps mortality f3863a4c39ab1920
WANT
diff want.txt got.txt || fail "the portfolios drawn as written differ from the portfolios held whole"
rm i4.nps

# A price sweep is made problem by problem as it is written (checked first): 20
# problems of 1 M strikes (8 MiB each; alike, so that the stream is small) under a
# 64 MiB budget (held whole, they needed 181 MiB, past the budget).
for i in $(seq 20); do echo "alpha=0.$((i % 9 + 1)) nu=0.5"; done > sweep20.txt
read -r rc mib < <(NUMPIPE_MEMORY_LIMIT=64M peak gen-input price --sweep sweep20.txt --strikes 0.1:0.1:1000000 -o p0.nps)
[ "$rc" = 0 ] || fail "price --sweep of 20 x 1 M strikes under 64M: exit $rc: $(cat peak.err)"
[ "$mib" -lt 64 ] || fail "price --sweep of 20 x 1 M strikes: peak $mib MiB (one problem of 8 MiB at a time)"
rm p0.nps
printf 'alpha=0.25\nnu=0.7 beta=0.6 # a comment\n\n# only a comment\ndataset=medium outer=3\nrho=-0.5 s0=0.05\n' > sweep.txt
gen-input price --sweep sweep.txt --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 0.9,1,1.1 --maturities 0.5,1 -o p1.nps
gen-input price --sweep sweep.txt --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 0.5:1.5:300000 -o p2.nps
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --from-text "$SRC/share/examples/price-quotes.csv" -o p3.nps
payloads p1.nps p2.nps p3.nps > got.txt
cat > want.txt <<'WANT'
p1.nps problem 8190df01704527ec
p1.nps strike 8032a7bef707c15f
p1.nps maturity 79eefa853821e579
p1.nps problem b192be76465ded43
p1.nps strike 8032a7bef707c15f
p1.nps maturity 79eefa853821e579
p1.nps problem 6a951d3b17a59607
p1.nps strike 8032a7bef707c15f
p1.nps maturity 79eefa853821e579
p1.nps problem b6c5dba3c032c4c8
p1.nps strike 8032a7bef707c15f
p1.nps maturity 79eefa853821e579
p2.nps problem 9ca4643e9e609ef2
p2.nps strike 4798f39040ec956c
p2.nps problem 3b98b4de507fe0c2
p2.nps strike 4798f39040ec956c
p2.nps problem d0f432095d82a22e
p2.nps strike 4798f39040ec956c
p2.nps problem 7fd6cdc2cfbfd784
p2.nps strike 4798f39040ec956c
p3.nps problem ca58f525ea94ffe3
p3.nps maturity 06038a4e2fd66d62
p3.nps quotes c2d2793f5b2ede9a
WANT
diff want.txt got.txt || fail "the sweeps made as written differ from the sweeps held whole"

# Checked before anything is written: to stdout, nothing half-written reaches the pipe.
gen-input ns --n 160 --amplitude 100 --c 1 > bad.nps 2> bad.err && fail "a negative density accepted"
[ ! -s bad.nps ] || fail "a refused ns state wrote $(stat -c %s bad.nps) bytes to stdout"
grep -q "makes the density zero or negative" bad.err || fail "ns: $(cat bad.err)"
gen-input fluid --n 2100 --emit d=-1@circle:0.5,0.5,0.1 > bad.nps 2> bad.err && fail "a negative emitter accepted"
[ ! -s bad.nps ] || fail "a refused fluid scene wrote $(stat -c %s bad.nps) bytes to stdout"
grep -q "'source_d' must be >= 0" bad.err || fail "fluid: $(cat bad.err)"
gen-input mle --length 5000000 --sl 1e305 --p 0.3 > bad.nps 2> bad.err && fail "an infinite draw accepted"
[ ! -s bad.nps ] || fail "a refused mle series wrote $(stat -c %s bad.nps) bytes to stdout"
grep -q "beyond the range of doubles" bad.err || fail "mle: $(cat bad.err)"
gen-input integrate --portfolio 100000 --seed 5 --product annuity --deferment 50 > bad.nps 2> bad.err &&
  fail "an annuity that never pays accepted"
[ ! -s bad.nps ] || fail "a refused portfolio wrote $(stat -c %s bad.nps) bytes to stdout"
grep -qF "policy 215: the annuity's deferment 50 reaches its end 50" bad.err || fail "integrate: $(cat bad.err)"
printf 'alpha=0.3\nalpha=0.3\nalpha=0.08\n' > bad-sweep.txt
gen-input price --sweep bad-sweep.txt --s0 1 --nu 0.5 --beta 0.7 --strikes 4 > bad.nps 2> bad.err &&
  fail "a sweep whose third problem's grid misses the strike accepted"
[ ! -s bad.nps ] || fail "a refused sweep wrote $(stat -c %s bad.nps) bytes to stdout"
grep -qF "parameter set 3: strike 0: strike 4 lies beyond the x grid" bad.err || fail "price: $(cat bad.err)"
# Comma lists are parsed whole: a bad or missing item is refused, not dropped or read as 0.
expect_exit 2 "--spouse-age wants normal:MEAN,SD" -- gen-input integrate --spouse-age normal:x,3
expect_exit 2 "--mortality wants" -- gen-input integrate --mortality gm:0.0005,-4.272,0.038,
expect_exit 2 "--shape must be non-negative integers separated by commas, got '4,5,'" -- gen-input array --shape 4,5,
expect_exit 2 "--strikes: empty item in '0.01,0.02,'" -- gen-input price --strikes 0.01,0.02,
expect_exit 2 "--box takes numbers separated by commas, got '1,2,'" -- gen-input ns --n 8 --box 1,2,
# A table's columns are checked before the first record: nothing reaches the pipe.
printf 'a,,b\n1,2,3\n' > noname.csv
gen-input array --from-text noname.csv --layout columns > bad.nps 2> bad.err && fail "a column without a name accepted"
[ ! -s bad.nps ] || fail "array --layout columns wrote $(stat -c %s bad.nps) bytes before refusing a column"
grep -qF "column 2 of noname.csv has no name" bad.err || fail "array: $(cat bad.err)"
no_leftovers .
