# price and gen-input price refuse bad input with exit 2 and a message naming the
# value; nothing is written.
gen-input price --dataset small --num-t 8 -o ok.in

# a stream of the wrong kind
gen-input array --shape 9 -o arr.nps
expect_exit 2 "kind 'array', expected 'price.input'" -- price -i arr.nps -o out.nps
[ ! -e out.nps ] || fail "output written after bad input"
# a price.input record of the wrong shape, dtype or with non-integer sizes
gen-input array --name problem --shape 8 --kind price.input -o shape.nps
expect_exit 2 "must be f8 [9], got f8 [8]" -- price -i shape.nps -o out.nps
gen-input array --name problem --shape 9 --dtype f4 --kind price.input -o dtype.nps
expect_exit 2 "must be f8 [9], got f4 [9]" -- price -i dtype.nps -o out.nps
gen-input array --name problem --shape 9 --fill linspace --lo 3.5 --hi 3.5 --kind price.input -o frac.nps
expect_exit 2 "OUTER must be a whole number" -- price -i frac.nps -o out.nps
gen-input array --name problem --shape 9 --fill ones --kind price.input -o ones.nps
expect_exit 2 "numX must be in [3" -- price -i ones.nps -o out.nps
# an empty stream, a truncated stream, not a stream at all
head -c 0 ok.in >empty.nps
expect_exit 2 "" -- price -i empty.nps -o out.nps
head -c 40 ok.in >trunc.nps
expect_exit 2 "" -- price -i trunc.nps -o out.nps
echo "0.03 5.0" >text.nps
expect_exit 2 "" -- price -i text.nps -o out.nps
[ ! -e out.nps ] || fail "output written after bad input"

# the generator's validation (the same rules the tool applies to a record)
expect_exit 2 "numX must be in [3" -- gen-input price --num-x 2
expect_exit 2 "numY must be in [3" -- gen-input price --num-y 0
expect_exit 2 "numT must be in [2" -- gen-input price --num-t 1
expect_exit 2 "s0 must be finite and > 0, got -0.03" -- gen-input price --s0 -0.03
expect_exit 2 "t must be finite and > 0, got 0" -- gen-input price --maturity 0
expect_exit 2 "gen-input: --alpha: expected a decimal number, got nan" -- gen-input price --alpha nan
expect_exit 2 "gen-input: --nu: expected a decimal number, got inf" -- gen-input price --nu inf
expect_exit 2 "gen-input: --beta: expected a decimal number, got nan" -- gen-input price --beta nan
expect_exit 2 "s0 falls outside the x grid" -- gen-input price --alpha 0.01
expect_exit 2 "--num-x must be a whole number, got '3.5'" -- gen-input price --num-x 3.5
expect_exit 2 "t must be finite and > 0, got -1" -- gen-input price -t -1
expect_exit 2 "--dataset must be small, medium, large or xl" -- gen-input price --dataset huge
printf 'alpha=0.3\nnu=-1\n' >bad-sweep.txt
expect_exit 2 "bad-sweep.txt:2: nu must be finite and > 0" -- gen-input price --sweep bad-sweep.txt
printf 'alpha 0.3\n' >bad-sweep2.txt
expect_exit 2 "expected key=value, got 'alpha'" -- gen-input price --sweep bad-sweep2.txt
printf 'gamma=1\n' >bad-sweep3.txt
expect_exit 2 "unknown key 'gamma'" -- gen-input price --sweep bad-sweep3.txt
expect_exit 2 "cannot open" -- gen-input price --sweep no-such-file.txt

# options
expect_exit 2 "--precision must be fp64 or fp32, got 'fp16'" -- price -i ok.in --precision fp16 -o out.nps
expect_exit 2 "--gpu-group must be >= 0" -- price -i ok.in --gpu-group -1 -o out.nps
expect_exit 2 "--gpu-kernel must be auto, sweep or chunk, got 'fast'" -- price -i ok.in --gpu-kernel fast -o out.nps
expect_exit 2 "--method must be adjoint or forward, got 'backward'" -- price -i ok.in --method backward -o out.nps
expect_exit 2 "tune the forward method's kernels: add --method forward" -- price -i ok.in --gpu-group 4 -o out.nps
# no CUDA device (CI): asking for the CUDA backend is a resource failure, exit 3
if ! inspect --devices 2>/dev/null | grep -q '^cuda'; then
  expect_exit 3 "--backend cuda: " -- price -i ok.in --backend cuda -o out.nps
fi
[ ! -e out.nps ] || fail "output written after bad options"
no_leftovers .
# --tolerance: a number in (0, 0.01], for the user's contracts only
expect_exit 2 "--tolerance must be in (0, 0.01]" -- gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 1 --tolerance 0 -o t.in
expect_exit 2 "--tolerance must be a number" -- gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 1 --tolerance x -o t.in
expect_exit 2 "FinPar's data sets keep their grids" -- gen-input price --dataset small --tolerance 1e-5 -o t.in
[ ! -e t.in ] || fail "gen-input wrote an output after a bad --tolerance"
# a stated tolerance sizes the grid (finer for a smaller one) and travels in the attrs
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 1 --maturities 1 --tolerance 4e-5 -o coarse.in
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 1 --maturities 1 --tolerance 1e-5 -o fine.in
inspect coarse.in --values 9 | awk '!d && /^  values/{ d = 1; if ($3 != 128 || $4 != 64) bad = 1 } END { exit bad }' || fail "--tolerance 4e-5: want 128 x 64 points"
inspect fine.in --values 9 | awk '!d && /^  values/{ d = 1; if ($3 != 256 || $4 != 128) bad = 1 } END { exit bad }' || fail "--tolerance 1e-5: want 256 x 128 points"
inspect fine.in --attrs | grep -q '"tolerance": 1e-05' || fail "the tolerance is not in the problem's attrs"
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --strikes 1 --maturities 1 --tolerance 1e-5 --num-x 64 -o given.in
inspect given.in --values 9 | awk '!d && /^  values/{ d = 1; if ($3 != 64 || $4 != 128) bad = 1 } END { exit bad }' || fail "--num-x must win over --tolerance"
rm -f coarse.in fine.in given.in
