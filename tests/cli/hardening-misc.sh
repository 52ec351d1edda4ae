# Reproducible outputs and one rule for repeated records.

# fluid-step: identical runs give identical bytes (timings and the kernels chosen
# by timing stay out of the attrs, and go to the profile); with --repeat (benchmarking)
# the diagnostics carry them
if command -v fluid-step > /dev/null; then
  gen-input fluid --n 64 -o f.nps
  fluid-step --backend cpu --steps 3 -i f.nps > a.nps   # the same command line (it is in the history)
  fluid-step --backend cpu --steps 3 -i f.nps > b.nps
  cmp -s a.nps b.nps || fail "two identical fluid-step runs wrote different bytes"
  inspect --json a.nps | grep -q '"ns_per_cell_step"' && fail "timings in the attrs of a plain run"
  fluid-step --backend cpu --steps 3 --repeat 2 --profile run.prof -i f.nps -o r.nps
  inspect --json r.nps | grep -q '"ns_per_cell_step"' || fail "--repeat: no timings in the diagnostics attrs"
  inspect --json run.prof | grep -q '"ns_per_cell_step"' || fail "no timings in the profile"
  verify a.nps r.nps --ignore diagnostics --rtol 0 > /dev/null || fail "--repeat changed the state"
  # a second state record of a name is refused (one state per stream)
  expect_exit 2 "the input holds two records 'd' (records 0 and 6)" -- bash -c "cat f.nps f.nps | fluid-step --backend cpu -o out.nps"
fi

# Tools that take one series or state refuse a second record of a name they use
# (mle-fit's x, fluid-step's and ns-step's fields); records they do not use are
# passed over, whatever their number.
if command -v mle-fit > /dev/null; then
  gen-input mle --length 500 --seed 1 -o m.nps
  expect_exit 2 "the input holds two records 'x' (records 0 and 1)" -- bash -c "cat m.nps m.nps | mle-fit --backend cpu --window 100 -o out.nps"
  gen-input array --name other --shape 10 -o other.nps
  cat other.nps other.nps m.nps > m3.nps
  mle-fit --backend cpu --window 100 -i m3.nps -o f3.nps
  mle-fit --backend cpu --window 100 -i m.nps -o f1.nps
  verify f3.nps f1.nps --rtol 0 > /dev/null || fail "unused records changed mle-fit's output"
fi
if command -v ns-step > /dev/null; then
  gen-input ns --n 16 -o s.nps
  expect_exit 2 "the input holds two records 'rho' (records 0 and 4)" -- bash -c "cat s.nps s.nps | ns-step --backend cpu --steps 1 -o out.nps"
fi
