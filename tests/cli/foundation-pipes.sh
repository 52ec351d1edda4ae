# The foundation tools in pipes: gen-input list/array, inspect, verify; atomic -o;
# refusing a terminal; --help and --version; exit codes.

# gen-input list names the generic generator; unknown workloads are bad usage.
gen-input list | grep -q '^array ' || fail "gen-input list lacks 'array'"
expect_exit 2 "unknown workload 'nope'" -- gen-input nope
expect_exit 2 "missing WORKLOAD" -- gen-input

# Same seed, same bytes; another seed, other values.
# (the command line is part of the attrs' history, so compare runs of the same command)
gen-input array --shape 64,64 --fill normal --seed 11 > a.nps
gen-input array --shape 64,64 --fill normal --seed 11 | cmp - a.nps || fail "same seed gave different bytes"
gen-input array --shape 64,64 --fill normal --seed 12 -o b.nps
cmp -s a.nps b.nps && fail "different seeds gave the same bytes"

# inspect: name, dtype, shape, and correct statistics of a known array.
gen-input array --name ramp --shape 5 --fill linspace --lo 1 --hi 5 | inspect > ramp.txt
grep -q 'ramp  f8 \[5\]' ramp.txt || fail "inspect header: $(cat ramp.txt)"
grep -q 'min 1  max 5  mean 3  nan 0' ramp.txt || fail "inspect stats: $(cat ramp.txt)"
gen-input array --name ramp --shape 5 --fill linspace --lo 1 --hi 5 | inspect --json --values 5 > ramp.json
grep -q '"mean": 3.0' ramp.json || fail "inspect --json mean"
grep -q '"tool": "gen-input array"' ramp.json || fail "provenance history missing in attrs"

# verify: equal streams exit 0 (both forms), a perturbed one exits 1 and names the array.
verify a.nps a.nps > out.txt || fail "verify a a should pass"
grep -q 'verify: 1 arrays within tolerance' out.txt || fail "verify summary: $(cat out.txt)"
gen-input array --shape 64,64 --fill normal --seed 11 | verify --against a.nps > /dev/null || fail "verify --against"
expect_exit 1 "" -- verify b.nps a.nps
grep -q '^x .*FAIL' "$WORK/.stdout" || fail "verify should print the failing array"
# Tolerances: linspace 0..1 vs 0..1.001 differs by at most 1e-3 absolute, 1e-3 relative.
gen-input array --shape 11 --fill linspace --lo 0 --hi 1 -o r.nps
gen-input array --shape 11 --fill linspace --lo 0 --hi 1.001 -o c.nps
expect_exit 1 "" -- verify c.nps r.nps --rtol 9e-4
grep -q 'over=10' "$WORK/.stdout" || fail "10 elements should be over rtol 9e-4: $(cat "$WORK/.stdout")"
# Absolute errors grow as i*1e-4: only element 10 exceeds atol 9.5e-4.
expect_exit 1 "" -- verify c.nps r.nps --atol 9.5e-4
grep -q 'worst \[10\].*over=1 ' "$WORK/.stdout" || fail "worst element should be [10]: $(cat "$WORK/.stdout")"
verify c.nps r.nps --rtol 1.01e-3 > /dev/null || fail "rtol 1.01e-3 should pass"
verify c.nps r.nps --atol 1.01e-3 > /dev/null || fail "atol 1.01e-3 should pass"
verify c.nps r.nps --rtol x=1.01e-3 --rtol 0 > /dev/null || fail "per-array rtol should win"
expect_exit 1 "" -- verify c.nps r.nps --rtol x=1e-9 --rtol 1
expect_exit 2 "--rtol takes a non-negative number" -- verify c.nps r.nps --rtol -1
# A per-array tolerance naming no array of either stream is a typo: refused, naming the arrays.
expect_exit 2 "--rtol typo=0.001: no array 'typo' in either stream (the arrays: x)" -- verify c.nps r.nps --rtol typo=1e-3
expect_exit 2 "--atol typo=1: no array 'typo'" -- verify c.nps r.nps --atol typo=1
expect_exit 2 "--ulp typo=4: no array 'typo'" -- verify c.nps r.nps --ulp typo=4
# verify -q: nothing when all pass, only the failures otherwise (as --help and the man page say).
verify -q c.nps r.nps --rtol 1.01e-3 > q.txt && [ ! -s q.txt ] || fail "verify -q printed on success: $(cat q.txt)"
expect_exit 1 "" -- verify -q c.nps r.nps
grep -q '^x .*FAIL' "$WORK/.stdout" || fail "verify -q should print the failing array"
verify --help | grep -q -- "-q, --quiet .*Print only the arrays that fail" || fail "verify --help's -q"
grep -q "Print only the arrays that fail, and the count of them; nothing when all pass" "$SRC/man/man1/verify.1" ||
  fail "verify.1's -q differs from --help's"
# ULPs: 1 and nextafter(1) are 1 ulp apart.
/usr/bin/python3 -c 'print("[1.0000000000000002, 2]")' > near.txt 2>/dev/null || echo "[1.0000000000000002, 2]" > near.txt
gen-input array --shape 2 --fill linspace --lo 1 --hi 2 -o one.nps
expect_exit 1 "" -- verify --text-ref near.txt one.nps
verify --text-ref near.txt one.nps --ulp 1 > /dev/null || fail "1 ulp apart should pass --ulp 1"
# Text references: FinPar style, ranges, size mismatch, junk.
printf '[\n  1, 2, 3, 4,\n  5 ]\n' > five.txt
gen-input array --shape 5 --fill linspace --lo 1 --hi 5 | verify --text-ref five.txt > /dev/null || fail "text-ref"
gen-input array --shape 7 --fill linspace --lo 1 --hi 7 | verify --text-ref five.txt --range 0:5 > /dev/null || fail "text-ref range"
gen-input array --shape 7 --fill linspace --lo 1 --hi 7 -o seven.nps
expect_exit 2 "has 7 values but the text reference has 5" -- verify --text-ref five.txt seven.nps
expect_exit 2 "reaches past the data" -- verify --text-ref five.txt seven.nps --range 0:6
printf '[1, 2, x3]\n' > junk.txt
expect_exit 2 "not a number: 'x3'" -- verify --text-ref junk.txt seven.nps --range 0:3
# Names, shapes, dtypes.
gen-input array --name y --shape 11 --fill linspace -o y.nps
expect_exit 1 "" -- verify y.nps r.nps
grep -q 'missing from the candidate' "$WORK/.stdout" || fail "missing array not reported"
gen-input array --shape 12 --fill linspace -o r12.nps
expect_exit 1 "" -- verify r12.nps r.nps
grep -q 'shape \[12\] differs' "$WORK/.stdout" || fail "shape mismatch not reported"
gen-input array --shape 11 --fill linspace --lo 0 --hi 1 --dtype f4 -o r4.nps
expect_exit 1 "" -- verify r4.nps r.nps
grep -q 'dtype f4 differs' "$WORK/.stdout" || fail "dtype mismatch not reported"
verify r4.nps r.nps --ignore-dtype --rtol 1e-7 > /dev/null || fail "--ignore-dtype with fp32 rounding"
expect_exit 2 "give two streams" -- verify r.nps
expect_exit 2 "--nan must be equal or fail" -- verify r.nps r.nps --nan maybe

# Atomic output: -o into a missing folder fails cleanly; an interrupted writer
# (here: refusing a terminal) leaves nothing; success leaves exactly the file.
expect_exit 2 "cannot create output" -- gen-input array -o no/such/dir/x.nps
gen-input array --shape 3 -o out.nps
[ -f out.nps ] || fail "-o did not create the file"
no_leftovers .
expect_exit 2 "--dtype must be one of" -- gen-input array --dtype c8 -o bad.nps
[ -e bad.nps ] && fail "a failed run left its output behind"
no_leftovers .

# Binary to a terminal is refused (script(1) gives the tool a pseudo-terminal).
if command -v script > /dev/null; then
  script -qec "gen-input array --shape 3" /dev/null > tty.txt 2>&1 && fail "writing to a terminal should fail"
  grep -q "refusing to write a binary stream to a terminal" tty.txt || fail "terminal refusal message: $(cat tty.txt)"
fi

# Every tool: --help with an example, --version, bad options exit 2.
for tool in gen-input verify inspect; do
  $tool --help | grep -q 'Example' || fail "$tool --help lacks an example"
  $tool --version | grep -q 'numpipe' || fail "$tool --version"
done
gen-input array --help | grep -q -- '--seed' || fail "gen-input array --help"
expect_exit 2 "see verify --help" -- verify --no-such-option
expect_exit 2 "see inspect --help" -- inspect --bogus
inspect --devices | grep -q '^cpu' || fail "inspect --devices lists the CPU"

# -o onto a named pipe writes into the pipe (no temporary file, no rename over it);
# -o onto a symbolic link replaces the file it points to and keeps the link.
mkfifo fifo
inspect < fifo > fifo.txt &
reader=$!
gen-input array --shape 6 -o fifo
wait $reader
grep -q 'x  f8 \[6\]' fifo.txt || fail "writing to a FIFO: $(cat fifo.txt)"
[ -p fifo ] || fail "the FIFO was replaced by a file"
gen-input array --shape 2 -o target.nps
ln -s target.nps link.nps
gen-input array --shape 9 -o link.nps
[ -L link.nps ] || fail "-o replaced the symbolic link itself"
inspect target.nps | grep -q 'x  f8 \[9\]' || fail "-o through a link did not replace its target"
gen-input array --shape 3 -o /dev/null
[ -c /dev/null ] || fail "-o /dev/null replaced the device"
no_leftovers .
# --text-range: candidate element 6 against the reference file's only number.
echo "7" > seven.txt
verify --text-ref seven.txt seven.nps --range 6:7 --text-range 0:1 > /dev/null || fail "--text-range"
expect_exit 1 "" -- verify --text-ref seven.txt seven.nps --range 5:6 --text-range 0:1
expect_exit 2 "--text-range selects 1 numbers but the candidate range has 2" -- verify --text-ref seven.txt seven.nps --range 5:7 --text-range 0:1
