# Non-finite results are never written silently, and gen-input writes only what
# the dtype holds: exit 2 naming the record, the index and the value.

# gen-input array: values the dtype cannot hold, --lo > --hi, an empty name
expect_exit 2 "--fill linspace gives -1000000000000 at element 0, which dtype i4 cannot hold" -- \
  gen-input array --shape 5 --dtype i4 --fill linspace --lo -1e12 --hi 1e12 -o out.nps
expect_exit 2 "--fill normal gives negative values, which dtype u1 cannot hold" -- gen-input array --shape 5 --dtype u1 --fill normal -o out.nps
expect_exit 2 "which dtype u8 cannot hold" -- gen-input array --shape 5 --dtype u8 --fill uniform --lo -5 --hi 5 -o out.nps
expect_exit 2 "which dtype i8 cannot hold" -- gen-input array --shape 2 --dtype i8 --fill linspace --lo 0 --hi 1e19 -o out.nps
expect_exit 2 "which dtype f4 cannot hold" -- gen-input array --shape 2 --dtype f4 --fill linspace --lo 0 --hi 1e300 -o out.nps
expect_exit 2 "which dtype u1 cannot hold" -- gen-input array --shape 3 --dtype u1 --fill linspace --lo 0 --hi 256 -o out.nps
expect_exit 2 "--lo must not exceed --hi" -- gen-input array --lo 1 --hi 0 -o out.nps
expect_exit 2 "--name must not be empty" -- gen-input array --name '' -o out.nps
[ ! -e out.nps ] || fail "a refused gen-input left out.nps"
# the edges of each range are accepted, exactly
gen-input array --shape 2 --dtype i4 --fill linspace --lo -2147483648 --hi 2147483647 -o i4.nps
inspect --values 2 i4.nps | grep -q "values -2147483648 2147483647" || fail "the i4 range's ends changed"
gen-input array --shape 2 --dtype u1 --fill linspace --lo 0 --hi 255 -o u1.nps
inspect --values 2 u1.nps | grep -q "values 0 255" || fail "the u1 range's ends changed"

if command -v mle-fit > /dev/null; then
  # a series of magnitude 1e150 is fitted (scaled by a power of two, scaled back):
  # finite estimates, the same shapes as the series of magnitude 1
  gen-input mle --length 2000 --sl 1e150 --sr 2e150 --seed 3 -o big.nps
  gen-input mle --length 2000 --sl 1 --sr 2 --seed 3 -o small.nps
  mle-fit --backend cpu --window 200 --step 100 -i big.nps -o fb.nps
  mle-fit --backend cpu --window 200 --step 100 -i small.nps -o fs.nps
  inspect fb.nps | grep -q "inf [1-9]\|nan [1-9]" && fail "non-finite estimates for the 1e150 series: $(inspect fb.nps)"
  verify fb.nps fs.nps --array p --array skew --rtol 1e-9 > /dev/null || fail "the 1e150 series' shapes differ from the unscaled series'"
  inspect --values 1 fb.nps | awk '/record .*: s_l/ {f = 1} f && /values/ {v = $2; exit} END {exit !(v > 1e149 && v < 1e151)}' ||
    fail "s_l is not of magnitude 1e150"
  # a fit that is not finite (Gamma(1/p) overflows for p = 0.001) is refused, naming the window
  expect_exit 2 "is not finite" -- mle-fit --backend cpu --window 200 --step 100 --alpha-grid 0.001,0.002 -i small.nps -o out.nps
  [ ! -e out.nps ] || fail "mle-fit left out.nps"
  # the documented all-equal window (loglik +inf, scales 0, skew NaN) is still written
  gen-input array --name x --shape 300 --fill ones -o ones.nps
  mle-fit --backend cpu --window 100 --step 100 -i ones.nps -o fo.nps || fail "the all-equal windows were refused"
fi

if command -v ns-step > /dev/null; then
  expect_exit 2 "--amplitude 1e+308 gives values beyond the range of doubles" -- gen-input ns --n 16 --amplitude 1e308 -o out.nps
  expect_exit 2 "makes the density zero or negative" -- gen-input ns --n 16 --init acoustic --amplitude -2 -o out.nps
  [ ! -e out.nps ] || fail "gen-input ns left out.nps"
  if [ -n "${PY:-}" ] && "$PY" -c 'import numpy' 2> /dev/null; then
    # a state with rho = 0 or rho < 0 is refused by ns-step, naming the point
    gen-input ns --n 16 -o s.nps
    for value in 0 -0.5; do
      "$PY" - "$value" <<'PYEOF'
import sys
sys.path.insert(0, __import__("os").environ["SRC"] + "/share/python")
import numpipe
recs = list(numpipe.records("s.nps"))
with numpipe.Writer("bad.nps", stamp=False) as w:
    for name, a, attrs in recs:
        if name == "rho":
            a = a.copy(); a[3, 2, 1] = float(sys.argv[1])
        w.write(name, a, attrs)
PYEOF
      expect_exit 2 "rho[3, 2, 1] is $value: the density must be positive everywhere" -- ns-step --backend cpu --steps 1 -i bad.nps -o out.nps
    done
  fi
fi
