# integrate on CUDA: agrees with the CPU backend within 1e-13 relative, gives the
# same bits run to run, and a device list (--devices all, or a device listed twice,
# which splits the work as two devices would) gives the bits of one device. Both
# plans: the table plan (constant rate, --faithful-gf820) and the column plan
# (a yield curve, the default scheme). The table plan's two result paths
# (NUMPIPE_INTEGRATE_RESULT=host, the default, or device) give the same bits.
require_gpu
printf '10 65 35\n0 60 70\n15 67 50.5\n7.5 64.7 35.3\n3 61 14\n' > pol.txt
printf '0 0.02\n10 0.03\n30 0.035\n' > curve.txt
gen-input integrate --steps 2,2,2 -o one.nps
gen-input integrate --from-text pol.txt --steps 2,2,3 -o many.nps
gen-input integrate --from-text pol.txt --steps 1,2,2 --curve curve.txt -o curve.nps
. "$SRC/tests/cli/integrate_backends.sh"
for f in one many curve; do
  for a in --faithful-gf820 ""; do
    backends_agree $f.nps 1e-15 $a
    cp gpu.nps gpu-$f$a.nps
  done
done
inspect --json gpu-many--faithful-gf820.nps | grep -q '"plan": *"table"' || fail "the constant-rate faithful case did not take the table plan"
inspect --json gpu-many.nps | grep -q '"plan": *"columns"' || fail "the default scheme did not take the column plan"
integrate -i many.nps --backend cuda --devices all | verify --against gpu-many.nps --rtol 0 --atol 0
integrate -i many.nps --faithful-gf820 --backend cuda --devices all | verify --against gpu-many--faithful-gf820.nps --rtol 0 --atol 0
verify --text-ref "$SRC/share/ref/integrate-checkpoint-year0.txt" --array reserve0 --rtol 1e-12 \
  <(integrate -i one.nps --faithful-gf820 --backend cuda)
# A steep law at 1 step a year, a curve with a spouse pension's term, --tolerance: CUDA as the CPU.
gen-input integrate --product term --x 40 --steps 1,1,1 --mortality insured=gm:0.00022,-5.568636235841013,0.05076631123304232 -o steep.nps
gen-input integrate --product spouse --term 10 --steps 4,2,4 --curve curve.txt -o sterm.nps
for f in steep sterm; do
  integrate -i $f.nps --backend cpu -o $f-cpu.nps
  integrate -i $f.nps --backend cuda | verify --against $f-cpu.nps --rtol 1e-13 --atol 1e-15 || fail "$f: CUDA and CPU differ"
done
integrate -i steep.nps --backend cpu --tolerance 1e-8 -o tol-cpu.nps
integrate -i steep.nps --backend cuda --tolerance 1e-8 | verify --against tol-cpu.nps --rtol 1e-13 --atol 1e-15 ||
  fail "--tolerance: CUDA and CPU differ"
# Discrete payments (--frequency, --timing): the jumps and the sum on death at the period's end, CUDA as the CPU.
for p in annuity endowment; do
  gen-input integrate --portfolio 200 --seed 7 --product $p --premium equivalence -o disc-$p.nps
  integrate -i disc-$p.nps --backend cpu --frequency 12 --timing arrears -o disc-$p-cpu.nps
  integrate -i disc-$p.nps --backend cuda --frequency 12 --timing arrears |
    verify --against disc-$p-cpu.nps --rtol 1e-13 --atol 1e-13 || fail "--frequency 12 $p: CUDA and CPU differ"
done
gen-input integrate --portfolio 300 --seed 5 --steps 1,1,1 -o port.nps
integrate -i port.nps --backend cpu -o pc.nps
integrate -i port.nps --backend cuda | verify --against pc.nps --rtol 1e-13 --atol 1e-15
# The benchmark's settings: one policy and a portfolio at 10/2/10.
gen-input integrate --g 10 --r 65 --x 35 --steps 10,2,10 -o seed.nps
integrate -i seed.nps --faithful-gf820 --backend cpu -o seed-cpu.nps
integrate -i seed.nps --faithful-gf820 --backend cuda | verify --against seed-cpu.nps --rtol 1e-13 --atol 1e-15
gen-input integrate --portfolio 200 --seed 2 --steps 10,2,10 -o p200.nps
integrate -i p200.nps --faithful-gf820 --backend cpu -o p200-cpu.nps
integrate -i p200.nps --faithful-gf820 --backend cuda -o p200-gpu.nps
verify p200-gpu.nps p200-cpu.nps --rtol 1e-13 --atol 1e-15
integrate -i p200.nps --faithful-gf820 --backend cuda --devices 0,0,0 | verify --against p200-gpu.nps --rtol 0 --atol 0
# The device result path, on one device, two slots and every device; a bad path is bad input.
for devs in 0 0,0 all; do
  NUMPIPE_INTEGRATE_RESULT=device integrate -i many.nps --faithful-gf820 --backend cuda --devices $devs |
    verify --against gpu-many--faithful-gf820.nps --rtol 0 --atol 0 || fail "device result path, --devices $devs: other bits"
  NUMPIPE_INTEGRATE_RESULT=device integrate -i p200.nps --faithful-gf820 --backend cuda --devices $devs |
    verify --against p200-gpu.nps --rtol 0 --atol 0 || fail "200 policies, device result path, --devices $devs: other bits"
done
expect_exit 2 'NUMPIPE_INTEGRATE_RESULT' -- env NUMPIPE_INTEGRATE_RESULT=sideways integrate -i many.nps --faithful-gf820 --backend cuda
# Mixed products with a life table for both lives and equivalence premiums: CUDA
# agrees with the CPU (1e-13 relative; 1e-13 absolute for the reserves at
# inception, zero up to rounding), repeats its bits over device slots and whether
# the two parts (spouse pensions, single-life products) run at once or in turn.
T=$SRC/share/examples/integrate-life-table.csv
gen-input integrate --portfolio 60 --seed 3 --product mixed --premium equivalence --steps 2,2,2 \
  --mortality-table "insured=$T:q_female" --mortality-table "spouse=$T:q_male" -o mixed.nps
integrate -i mixed.nps --backend cpu -o mixed-cpu.nps
integrate -i mixed.nps --backend cuda -o mixed-gpu.nps
verify mixed-gpu.nps mixed-cpu.nps --rtol 1e-13 --atol 1e-13 || fail "mixed products: CUDA and CPU differ"
for split in sequential concurrent; do
  NUMPIPE_INTEGRATE_SPLIT=$split integrate -i mixed.nps --backend cuda | verify --against mixed-gpu.nps --rtol 0 --atol 0 ||
    fail "mixed products, NUMPIPE_INTEGRATE_SPLIT=$split: other bits"
done
integrate -i mixed.nps --backend cuda --devices 0,0 | verify --against mixed-gpu.nps --rtol 0 --atol 0 ||
  fail "mixed products, --devices 0,0: other bits"
integrate -i mixed.nps --backend cuda --align-breaks -o mixed-gpu-al.nps
integrate -i mixed.nps --backend cpu --align-breaks | verify --against mixed-gpu-al.nps --rtol 1e-13 --atol 1e-13 ||
  fail "mixed products, --align-breaks: CUDA and CPU differ"
expect_exit 2 'NUMPIPE_INTEGRATE_SPLIT' -- env NUMPIPE_INTEGRATE_SPLIT=sideways integrate -i mixed.nps --backend cuda
# The result's pages faulted early, by helper threads beside the plan (the default),
# or late: the same bits, for a result large enough for the helpers (over 2^20
# values) and for the mixed portfolio's whole result; a bad value is bad input.
gen-input integrate --portfolio 12000 --seed 4 --steps 1,1,1 -o big.nps
integrate -i big.nps --faithful-gf820 --backend cpu -o big-cpu.nps
integrate -i big.nps --faithful-gf820 --backend cuda -o big-gpu.nps
verify big-gpu.nps big-cpu.nps --rtol 1e-13 --atol 1e-15 || fail "12000 policies: CUDA and CPU differ"
NUMPIPE_INTEGRATE_PAGES=late integrate -i big.nps --faithful-gf820 --backend cuda | verify --against big-gpu.nps --rtol 0 --atol 0 ||
  fail "12000 policies, NUMPIPE_INTEGRATE_PAGES=late: other bits"
NUMPIPE_INTEGRATE_PAGES=late integrate -i mixed.nps --backend cuda | verify --against mixed-gpu.nps --rtol 0 --atol 0 ||
  fail "mixed products, NUMPIPE_INTEGRATE_PAGES=late: other bits"
expect_exit 2 'NUMPIPE_INTEGRATE_PAGES' -- env NUMPIPE_INTEGRATE_PAGES=sideways integrate -i mixed.nps --backend cuda
# --cash-flows and --duration on CUDA (cash_flow_kernel; the duration's two shifted
# solves on the device): the cash flows within 1e-13 of the CPU's; dV/dr and the
# duration within 1e-6 relative or 1e-8 absolute (the reserves' differences, 1e-13,
# divided by the shift 2e-5, and for the duration by a reserve that may be small: an
# equivalence premium's early years); the same bits run to run. Mixed products with a
# life table and equivalence premiums, and a yield curve with discrete payments.
gen-input integrate --portfolio 200 --seed 11 --product mixed --premium equivalence --steps 4,2,4 \
  --mortality-table "insured=$T:q_female" --mortality-table "spouse=$T:q_male" -o val.nps
gen-input integrate --portfolio 200 --seed 12 --product endowment --premium equivalence --curve curve.txt -o valc.nps
for f in val valc; do
  a=""; [ $f = valc ] && a="--frequency 4 --timing advance"
  integrate -i $f.nps $a --backend cpu --cash-flows --duration -o $f-cpu.nps
  integrate -i $f.nps $a --backend cuda --cash-flows --duration -o $f-gpu.nps
  verify $f-gpu.nps $f-cpu.nps --rtol 1e-13 --atol 1e-13 --rtol duration=1e-6 --rtol reserve_rate_derivative=1e-6 \
    --atol duration=1e-8 --atol reserve_rate_derivative=1e-8 || fail "$f --cash-flows --duration: CUDA and CPU differ"
  integrate -i $f.nps $a --backend cuda --cash-flows --duration | verify --against $f-gpu.nps --rtol 0 --atol 0 ||
    fail "$f --cash-flows --duration: CUDA not reproducible"
done
