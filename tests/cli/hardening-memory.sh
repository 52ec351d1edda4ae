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
