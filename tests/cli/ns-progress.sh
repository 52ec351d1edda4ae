# ns-step's progress line on a terminal shows the simulated time reached (of --t-end's)
# beside the count, the rate and the time left; the summary ends at the run's time.
command -v script > /dev/null || { echo "SKIP: no script (Debian: bsdutils)"; exit 77; }
export NUMPIPE_PROGRESS_AFTER=0
gen-input ns --n 48,32,1 --box 6,4,1 --re 60 --c 5 --body cylinder:1.5,2.05,0.3 --free-stream 1,0,0 -o cyl.nps
script -qec "ns-step -i cyl.nps --t-end 0.25 --backend cpu -o bytime.nps" /dev/null < /dev/null > time.log 2>&1 ||
  fail "ns-step --t-end on a terminal: $(cat time.log)"
tr '\r' '\n' < time.log > time.lines
grep -qE '^ns-step: [0-9]+/1000 thousandths of the time \([0-9]+%\), t = [0-9.e-]+ of 0.25, .*, [0-9]+:[0-9]+ left' time.lines ||
  fail "no simulated time and time left in the line: $(cat -v time.log)"
grep -qE '^ns-step: 1000 thousandths of the time in [0-9.]+ s.*, t = 0\.25 of 0\.25([^0-9]|$)' time.lines ||
  fail "the summary does not end at t = 0.25: $(cat -v time.log)"
script -qec "ns-step -i cyl.nps --steps 12 --dt 0.01 --backend cpu -o bysteps.nps" /dev/null < /dev/null > steps.log 2>&1 ||
  fail "ns-step --steps on a terminal: $(cat steps.log)"
tr '\r' '\n' < steps.log > steps.lines
grep -qE '^ns-step: [0-9]+/12 steps \([0-9]+%\), t = 0.0[0-9]*, ' steps.lines || fail "no simulated time by steps: $(cat -v steps.log)"
grep -qE '^ns-step: 12 steps in .*, t = 0\.12([^0-9]|$)' steps.lines || fail "the summary's time is not 0.12: $(cat -v steps.log)"
