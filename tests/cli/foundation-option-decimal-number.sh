# Floating values take decimal numbers only, as integers take decimal integers
# (foundation-option-decimal.sh): std::stod, strtod and cxxopts read "0x1p-4" as 0.0625,
# "inf" and "nan" where a finite number is meant, and leading blanks, so a user who
# mistyped a value would get a different number without a word. Every tool refuses such a
# word (exit 2, before any work, nothing written), naming what it reads and the word,
# whether it is an option read by the common parser (a tool's own, one without a default),
# a list's item, a range's end, a spec's number, a NAME=X tolerance or a size in the
# environment; the forms of decimal numbers ("+2", ".5", "5.", "1e-3") still work.

# exact_message TEXT: stderr of the last expect_exit is that line, the tool's name first
exact_message() {
  grep -qxF -- "$1" "$WORK/.stderr" || fail "stderr is not '$1': $(cat "$WORK/.stderr")"
}

gen-input array --name x --shape 4 --fill uniform --seed 7 -o x.nps

# A double option of the common parser: hexadecimal, inf, nan, a leading blank; however written.
if gen-input list | grep -q '^mle'; then
  expect_exit 2 "" -- gen-input mle --theta 0x1p3 -o m.nps
  exact_message "gen-input: --theta: expected a decimal number, got 0x1p3"
  expect_exit 2 "" -- gen-input mle --theta=inf -o m.nps
  exact_message "gen-input: --theta: expected a decimal number, got inf"
  expect_exit 2 "" -- gen-input mle --sr nan -o m.nps
  exact_message "gen-input: --sr: expected a decimal number, got nan"
  expect_exit 2 "" -- gen-input mle --theta ' 1' -o m.nps
  exact_message "gen-input: --theta: expected a decimal number, got  1"
  expect_exit 2 "" -- gen-input mle --p2 0x2 -o m.nps  # an option without a default
  exact_message "gen-input: --p2: expected a decimal number, got 0x2"
  expect_exit 2 "" -- gen-input mle --theta 1e999 -o m.nps
  exact_message "gen-input: --theta: 1e999 is beyond the range of a double (about 1.8e308)"
  [ ! -e m.nps ] || fail "gen-input wrote m.nps though --theta was refused"
  # the decimal forms: the same number, the same bits
  gen-input mle --length 64 --theta 0.5 --sl 2 -o m1.nps
  gen-input mle --length 64 --theta +.5 --sl 2. -o m2.nps
  gen-input mle --length 64 --theta 5e-1 --sl 0.2E+1 -o m3.nps
  verify m1.nps m2.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--theta +.5 --sl 2. is not --theta 0.5 --sl 2"; }
  verify m1.nps m3.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--theta 5e-1 --sl 0.2E+1 is not --theta 0.5 --sl 2"; }
fi
if gen-input list | grep -q '^price'; then
  expect_exit 2 "" -- gen-input price --dataset small --rho 0x1p-2 -o p.nps
  exact_message "gen-input: --rho: expected a decimal number, got 0x1p-2"
  # a list's item, and a parameter of a sweep file
  expect_exit 2 "" -- gen-input price --dataset small --strikes 0.9,0x1p0 -o p.nps
  exact_message "gen-input: --strikes: expected a decimal number, got 0x1p0"
  printf 's0=1 alpha=0.2\ns0=0x1p0\n' > sweep.txt
  expect_exit 2 "" -- gen-input price --dataset small --sweep sweep.txt -o p.nps
  exact_message "gen-input: --sweep sweep.txt:2: s0: expected a decimal number, got 0x1p0"
  [ ! -e p.nps ] || fail "gen-input price wrote p.nps though a value was refused"
fi
if gen-input list | grep -q '^integrate'; then
  expect_exit 2 "" -- gen-input integrate --rate 0x1p-4 -o i.nps
  exact_message "gen-input: --rate: expected a decimal number, got 0x1p-4"
fi
if gen-input list | grep -q '^ns'; then
  # a body's radius, a list of box lengths
  expect_exit 2 "" -- gen-input ns --n 16,12,4 --body cylinder:3,3,0x1p-1 -o n.nps
  exact_message "gen-input: --body 'cylinder:3,3,0x1p-1': expected a decimal number, got 0x1p-1"
  expect_exit 2 "" -- gen-input ns --n 16,12,4 --box 1,inf,1 -o n.nps
  exact_message "gen-input: --box: expected a decimal number, got inf"
  [ ! -e n.nps ] || fail "gen-input ns wrote n.nps though a value was refused"
fi
if gen-input list | grep -q '^fluid'; then
  expect_exit 2 "" -- gen-input fluid --n 16 --inflow left:0x1 -o g.nps
  exact_message "gen-input: --inflow 'left:0x1': SPEED: expected a decimal number, got 0x1"
  gen-input fluid --n 16 -o f.nps
fi

# The stepping and batch tools' options, before any work.
if command -v fluid-step > /dev/null; then
  expect_exit 2 "" -- fluid-step -i f.nps --dt 0x1p-4 -o out.nps
  exact_message "fluid-step: --dt: expected a decimal number, got 0x1p-4"
  expect_exit 2 "" -- fluid-step -i f.nps --buoyancy 1,0x1 -o out.nps
  exact_message "fluid-step: --buoyancy's B must be a finite number, got '0x1'"
  [ ! -e out.nps ] || fail "fluid-step wrote out.nps though an option was refused"
fi
if command -v ns-step > /dev/null; then
  expect_exit 2 "" -- ns-step -i x.nps --cfl inf -o out.nps
  exact_message "ns-step: --cfl: expected a decimal number, got inf"
fi
if command -v integrate > /dev/null; then
  expect_exit 2 "" -- integrate -i x.nps --tolerance 0x1p-10 -o out.nps
  exact_message "integrate: --tolerance: expected a decimal number, got 0x1p-10"
fi
if command -v mle-fit > /dev/null && [ -e m1.nps ]; then
  expect_exit 2 "" -- mle-fit -i m1.nps --window 32 --quantiles 0.05,0x1p-1 -o out.nps
  exact_message "mle-fit: --quantiles: expected a decimal number, got 0x1p-1"
  expect_exit 2 "" -- mle-fit -i m1.nps --window 32 --alpha-grid 1:nan:3 -o out.nps
  exact_message "mle-fit: --alpha-grid: expected a decimal number, got nan"
  expect_exit 2 "" -- mle-fit -i m1.nps --window 32 --alpha-grid 1,0x2 -o out.nps
  exact_message "mle-fit: --alpha-grid: expected a decimal number, got 0x2"
  [ ! -e out.nps ] || fail "mle-fit wrote out.nps though an option was refused"
fi
if command -v render > /dev/null && [ -e f.nps ]; then
  expect_exit 2 "" -- render -i f.nps --value-range 0x0:1 -o pic.png
  exact_message "render: --value-range: expected a decimal number, got 0x0"
  expect_exit 2 "" -- render -i f.nps --value-range 0:inf -o pic.png
  exact_message "render: --value-range: expected a decimal number, got inf"
  [ ! -e pic.png ] || fail "render wrote pic.png though --value-range was refused"
fi

# verify: the per-array tolerances (NAME=X) and plain ones.
expect_exit 2 "" -- verify x.nps x.nps --rtol x=0x1p-3
exact_message "verify: --rtol x: expected a decimal number, got 0x1p-3"
expect_exit 2 "" -- verify x.nps x.nps --atol 0x0
exact_message "verify: --atol: expected a decimal number, got 0x0"
verify x.nps x.nps --rtol x=.5 --atol 1e-3 > /dev/null || fail "verify --rtol x=.5 --atol 1e-3 refused"
# --text-ref is data: a hexadecimal word is no number there, nan still is (--nan compares it)
np-testcraft fill v f8 3 nan 1 > n.nps
printf '[0, 0x0p0, 0]\n' > hex.txt
expect_exit 2 "" -- verify --text-ref hex.txt --array v -i n.nps
exact_message "verify: hex.txt:1: not a number: '0x0p0'"
printf '[0, nan, 0]\n' > nan.txt
verify --text-ref nan.txt --array v -i n.nps --rtol 0 > /dev/null || fail "verify --text-ref with a nan matching the stream's nan failed"
# --range's indices: digits only (a sign or a blank once passed; -1 wrapped around)
for r in ' 0:2' '+0:2' '-1:2' '0:0x2'; do
  expect_exit 2 "" -- verify --text-ref nan.txt --array v -i n.nps --range "$r"
  exact_message "verify: --range must be START:STOP with 0 <= START < STOP, got '$r'"
done
verify --text-ref nan.txt --array v -i n.nps --range 0:2 --rtol 0 > /dev/null || fail "verify --range 0:2 refused"

# A size in the environment (the memory budget): its number in decimal too.
NUMPIPE_MEMORY_LIMIT=0x10G expect_exit 2 "" -- gen-input array --name y --shape 4 --fill uniform -o y.nps
exact_message "gen-input: NUMPIPE_MEMORY_LIMIT must be a size in bytes such as 8G or 512M, got '0x10G'"
NUMPIPE_MEMORY_LIMIT=1.5G gen-input array --name y --shape 4 --fill uniform -o y.nps || fail "NUMPIPE_MEMORY_LIMIT=1.5G refused"
rm -f y.nps
no_leftovers
