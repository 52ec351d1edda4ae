# The memory budget and bounded reading (README "Exit codes", "Memory").
# A run that would not fit is refused before it allocates, with exit 3 and a message
# naming the problem's size, the estimate and the memory available; the memory a
# tool holds is bounded by what it uses of a stream, and by --max-bytes in total.

if command -v fluid-step > /dev/null; then
  gen-input fluid --n 512 -o f512.nps
  expect_exit 3 "not enough memory for a fluid state of shape [514, 514] (264196 cells)" -- \
    env NUMPIPE_MEMORY_LIMIT=8M fluid-step --backend cpu --steps 1 -i f512.nps -o out.nps
  grep -q "bytes per cell" "$WORK/.stderr" || fail "the message lacks the bytes per cell"
  grep -q "NUMPIPE_MEMORY_LIMIT=8M" "$WORK/.stderr" || fail "the message lacks what bounds the memory"
  [ ! -e out.nps ] || fail "a refused run left out.nps"
  no_leftovers .
  # the address-space limit (ulimit -v) bounds the budget too: refused up front, not killed
  gen-input fluid --n 2048 -o f2048.nps
  expect_exit 3 "the address-space limit (ulimit -v 150000)" -- \
    bash -c 'ulimit -v 150000; exec fluid-step --backend cpu --threads 1 --steps 1 -i f2048.nps -o out.nps'
  [ ! -e out.nps ] || fail "a refused run left out.nps"
fi

if command -v ns-step > /dev/null; then
  gen-input ns --n 32 -o s.nps
  expect_exit 3 "not enough memory for a state of [32, 32, 32] points" -- \
    env NUMPIPE_MEMORY_LIMIT=1M ns-step --backend cpu --steps 1 -i s.nps -o out.nps
  grep -q "bytes per point" "$WORK/.stderr" || fail "the message lacks the bytes per point"
fi

if command -v mle-fit > /dev/null; then
  gen-input mle --length 20000 --seed 1 -o m.nps
  expect_exit 3 "not enough memory for 19801 windows of 200 points" -- \
    env NUMPIPE_MEMORY_LIMIT=100k mle-fit --backend cpu --window 200 -i m.nps -o out.nps
  grep -q "bytes per window" "$WORK/.stderr" || fail "the message lacks the bytes per window"
  # NUMPIPE_MEMORY_LIMIT sets a budget; a bad value is a usage error
  expect_exit 2 "NUMPIPE_MEMORY_LIMIT must be a size" -- env NUMPIPE_MEMORY_LIMIT=lots mle-fit --window 200 -i m.nps -o out.nps
  env NUMPIPE_MEMORY_LIMIT=1G mle-fit --backend cpu --window 200 -i m.nps -o out.nps || fail "1G is enough for mle-fit"
fi

if command -v price > /dev/null; then
  gen-input price --dataset small -o p.nps
  expect_exit 3 "grid points" -- env NUMPIPE_MEMORY_LIMIT=100k price --backend cpu -i p.nps -o out.nps
  grep -q "bytes per grid point" "$WORK/.stderr" || fail "the message lacks the bytes per grid point"
  # A record price does not read is refused from its header, before its payload is
  # allocated: three records of 1 GiB of zeros (compressed: kilobytes) under a 1.5 GB
  # address-space limit.
  np-testcraft zeros x f8 134217728 3 > z.nps
  [ "$(stat -c %s z.nps)" -lt 1000000 ] || fail "z.nps is not small"
  expect_exit 2 "record 0 'x' has kind '(none)', expected 'price.input'" -- \
    bash -c 'ulimit -v 1500000; exec price --backend cpu -i z.nps -o out.nps'
fi

if command -v integrate > /dev/null; then
  gen-input integrate --portfolio 1000 --seed 1 -o i.nps
  expect_exit 3 "not enough memory for 1000 policies" -- env NUMPIPE_MEMORY_LIMIT=100k integrate --backend cpu -i i.nps -o out.nps
  # past the headers, the plan's memory (36 bytes per outer RK4 point of each policy)
  expect_exit 3 "bytes per policy (on average at these steps)" -- env NUMPIPE_MEMORY_LIMIT=10M integrate --backend cpu -i i.nps -o out.nps
fi

# Records a tool does not use are passed over without being held: mle-fit reads x
# past a 1 GiB record under a 600 MB address-space limit.
if command -v mle-fit > /dev/null; then
  np-testcraft zeros junk f8 134217728 > junk.nps
  gen-input mle --length 1000 --seed 1 -o m1.nps
  cat junk.nps m1.nps > junk-then-x.nps
  bash -c 'ulimit -v 600000; exec mle-fit --backend cpu --threads 1 --window 100 -i junk-then-x.nps -o fits.nps' ||
    fail "mle-fit could not pass over a record it does not use"
  mle-fit --backend cpu --threads 1 --window 100 -i m1.nps -o fits1.nps
  verify fits.nps fits1.nps --rtol 0 > /dev/null || fail "passing over a record changed the fits"
fi

# inspect holds one record at a time, and none without statistics or values.
np-testcraft zeros big f8 58982400 3 > three.nps   # 3 x 450 MiB
bash -c 'ulimit -v 800000; exec inspect three.nps' > three.txt || fail "inspect held more than one record"
[ "$(grep -c '^record' three.txt)" = 3 ] || fail "inspect did not print three records"
bash -c 'ulimit -v 200000; exec inspect --no-stats three.nps' > /dev/null || fail "inspect --no-stats held a payload"

# --max-bytes bounds one record and the total a tool holds.
np-testcraft zeros x f8 1000 > k.nps     # 8000 bytes
cat k.nps k.nps k.nps > k3.nps
verify --max-bytes 20000 k.nps k.nps > /dev/null
expect_exit 2 "over the --max-bytes limit of 20000 bytes on what a tool holds" -- verify --max-bytes 20000 k3.nps k3.nps
expect_exit 2 "over the --max-bytes limit" -- inspect --max-bytes 4000 k.nps

# ---- text tables: held within the memory limit, refused at the line reached ----------
# A generated CSV of 300000 rows (about 4.5 MB of text, some 60 MB once read as rows
# of fields) under a 16 MiB budget: every text reader refuses it with exit 3 naming
# the file, the line reached and the limit, before it holds the table.
awk 'BEGIN { print "g,r,x"; for (i = 1; i <= 300000; i++) printf "%d,%d,%d.5\n", i % 20, 60 + i % 7, 30 + i % 30 }' > big.csv
awk 'BEGIN { print "date,close"; for (i = 1; i <= 300000; i++) printf "d%d,%d.25\n", i, 100 + i % 50 }' > big-prices.csv
awk 'BEGIN { print "strike,maturity,type,price"; for (i = 1; i <= 300000; i++) printf "%d,1,call,%d.5\n", 50 + i % 100, 1 + i % 9 }' > big-quotes.csv
awk 'BEGIN { print "maturity,rate"; for (i = 1; i <= 300000; i++) printf "%d,0.0%d\n", i, 1 + i % 9 }' > big-curve.csv
awk 'BEGIN { for (i = 1; i <= 300000; i++) printf "s0=%d.5\n", 1 + i % 9 }' > big-sweep.txt
limit16="the memory limit (NUMPIPE_MEMORY_LIMIT=16M)"
rm -f out.nps  # an earlier part's output
for cmd in "array --from-text big.csv" "mle --from-text big-prices.csv" "integrate --from-text big.csv" \
           "integrate --curve big-curve.csv" "price --from-text big-quotes.csv" "price --sweep big-sweep.txt"; do
  file=$(echo "$cmd" | awk '{print $3}')
  expect_exit 3 "$file: at line " -- env NUMPIPE_MEMORY_LIMIT=16M timeout 120 gen-input $cmd -o out.nps
  grep -qF "$limit16" "$WORK/.stderr" || fail "gen-input $cmd: the message lacks the limit: $(cat "$WORK/.stderr")"
  [ ! -e out.nps ] || fail "gen-input $cmd: a refused run left out.nps"
done
# --max-bytes bounds every text reader of gen-input the same way, below the memory limit.
for cmd in "array --from-text big.csv" "mle --from-text big-prices.csv" "integrate --curve big-curve.csv" \
           "price --from-text big-quotes.csv"; do
  file=$(echo "$cmd" | awk '{print $3}')
  expect_exit 3 "$file: at line " -- gen-input $cmd --max-bytes 100000 -o out.nps
  grep -qF "the memory limit (--max-bytes)" "$WORK/.stderr" || fail "gen-input $cmd --max-bytes: $(cat "$WORK/.stderr")"
done
# a random portfolio is drawn as it is written: refused only where a piece does not fit (before: 1.3 GB under 64M)
expect_exit 3 "a portfolio of 10000000 policies (written in pieces of 16.0 MiB)" -- env NUMPIPE_MEMORY_LIMIT=4M gen-input integrate --portfolio 10000000 -o out.nps
[ ! -e out.nps ] || fail "a refused portfolio left out.nps"
expect_exit 2 "--max-bytes must be positive" -- gen-input array --from-text big.csv --max-bytes 0 -o out.nps
gen-input array --from-text big.csv --max-bytes 200000000 -o out.nps || fail "a table within --max-bytes was refused"
rm -f out.nps
# The line reached is a line of the file, past the start and before its end.
expect_exit 3 "" -- env NUMPIPE_MEMORY_LIMIT=16M gen-input array --from-text big.csv -o out.nps
line=$(sed -n 's/.*big.csv: at line \([0-9]*\) .*/\1/p' "$WORK/.stderr")
[ -n "$line" ] && [ "$line" -gt 1000 ] && [ "$line" -lt 300002 ] || fail "the line reached: '$line' ($(cat "$WORK/.stderr"))"
# The same table fits a larger budget: the estimate does not refuse what fits.
env NUMPIPE_MEMORY_LIMIT=256M gen-input array --from-text big.csv -o big.nps || fail "big.csv under 256M"
inspect big.nps | grep -q 'x  f8 \[300000, 3\]' || fail "big.csv: $(inspect big.nps)"
# A text without end (/dev/zero: one line that never ends; yes: lines that never end),
# and a line with no newline: refused at the limit, never a hang (timeout: exit 124).
expect_exit 3 "/dev/zero: at line 1 the table would hold more than 64.0 MiB" -- \
  env NUMPIPE_MEMORY_LIMIT=64M timeout 120 gen-input array --from-text /dev/zero -o out.nps
expect_exit 3 "stdin: at line " -- env NUMPIPE_MEMORY_LIMIT=32M timeout 120 bash -c 'yes 1,2 | gen-input mle --from-text -'
head -c 20000000 /dev/zero | tr '\0' 7 > one-line.txt
expect_exit 3 "one-line.txt: at line 1 " -- env NUMPIPE_MEMORY_LIMIT=16M timeout 120 gen-input array --from-text one-line.txt -o out.nps
# verify's text reference is a text reader too: bounded the same way (the candidate is
# never read), and the same file under a larger budget is read.
awk 'BEGIN { for (i = 1; i <= 600000; i++) printf "%d.5 %d.25 %d\n", i, i, i }' > big-ref.txt
gen-input array --shape 3 --fill ones -o three.nps
expect_exit 3 "big-ref.txt: at line " -- env NUMPIPE_MEMORY_LIMIT=16M timeout 120 verify --text-ref big-ref.txt three.nps
grep -qF "$limit16" "$WORK/.stderr" || fail "verify --text-ref: the message lacks the limit: $(cat "$WORK/.stderr")"
expect_exit 2 "has 3 values but the text reference has 1800000" -- env NUMPIPE_MEMORY_LIMIT=256M verify --text-ref big-ref.txt three.nps
expect_exit 3 "/dev/zero: at line 1 " -- env NUMPIPE_MEMORY_LIMIT=64M timeout 120 verify --text-ref /dev/zero three.nps
no_leftovers .

# ---- generated arrays: written in pieces, memory bounded by a piece -------------------
# 256 MiB of f8 under a 64 MiB budget, and under an address-space limit smaller than the
# array (the whole array held at once would not fit).
env NUMPIPE_MEMORY_LIMIT=64M gen-input array --shape 33554432 --fill zeros -o zeros.nps || fail "a 256 MiB array under 64M"
inspect zeros.nps | grep -q 'x  f8 \[33554432\]' || fail "zeros.nps: $(inspect zeros.nps)"
inspect zeros.nps | grep -q 'min 0 .*max 0' || fail "zeros.nps is not zeros: $(inspect zeros.nps)"
bash -c 'ulimit -v 600000; exec gen-input array --shape 100000000 --fill ones --dtype f8 -o /dev/null' ||
  fail "an 800 MB array under a 600 MB address-space limit"
# A piece that does not fit is refused up front (exit 3), naming the pieces.
expect_exit 3 "written in pieces of 16.0 MiB" -- env NUMPIPE_MEMORY_LIMIT=1M gen-input array --shape 33554432 --fill zeros -o out.nps
# A value the dtype cannot hold is refused before anything is written, also for an
# array written in pieces (to stdout: nothing half-written reaches the pipe).
gen-input array --shape 40000000 --dtype u1 --fill uniform --lo 0 --hi 300 > u1.nps 2> u1.err && fail "u1 up to 300 accepted"
[ ! -s u1.nps ] || fail "a refused array wrote $(stat -c %s u1.nps) bytes to stdout"
grep -q "which dtype u1 cannot hold" u1.err || fail "u1: $(cat u1.err)"
no_leftovers .
