# mle-fit under MPI: the CPU backend's tasks (a series and a chunk of windows)
# split over 1..4 ranks give the one-process fits bit for bit: one series split
# by window chunks, several series with ranges across series, refine and
# quantiles; fewer tasks than ranks; bad input ends every rank with exit 2.
require_mpi
require_tool mle-fit
gen-input mle --length 400 --series 1 --p 1.4 --sl 1 --sr 2 --seed 3 -o one-series.nps
mle-fit -i one-series.nps --window 60 --alpha-grid 0.5:3:10 --refresh 50 --backend cpu -o one.nps
same_under_mpi one.nps mle-fit -i one-series.nps --window 60 --alpha-grid 0.5:3:10 --refresh 50 --backend cpu --threads 1
gen-input mle --length 300 --series 3 --p 1.2 --sl 2 --sr 1 --seed 4 -o three.nps
mle-fit -i three.nps --window 50 --step 2 --alpha-grid 0.6:2.5:8 --refresh 20 --quantiles 0.01,0.05 --refine \
  --backend cpu -o three-one.nps
for n in 2 3 4; do
  $MPIRUN -np $n mle-fit -i three.nps --window 50 --step 2 --alpha-grid 0.6:2.5:8 --refresh 20 \
    --quantiles 0.01,0.05 --refine --backend cpu --threads 1 -o three$n.nps || fail "3 series under $n ranks failed"
  verify three$n.nps three-one.nps --rtol 0 > v.txt || { cat v.txt; fail "3 series under $n ranks differ"; }
done
# inference: refined optimum, standard errors, intervals, backtest, gof, the t fit, two shapes
mle-fit -i three.nps --window 50 --step 2 --alpha-grid 0.6:2.5:8 --refresh 20 --quantiles 0.01,0.05 --stderr \
  --backtest --gof --compare normal,t --backend cpu -o inf-one.nps
mle-fit -i three.nps --window 50 --step 3 --alpha-grid 0.6:2.5:6 --refresh 20 --shapes 2 --stderr --backend cpu \
  -o two-one.nps
for n in 2 3; do
  $MPIRUN -np $n mle-fit -i three.nps --window 50 --step 2 --alpha-grid 0.6:2.5:8 --refresh 20 --quantiles 0.01,0.05 \
    --stderr --backtest --gof --compare normal,t --backend cpu --threads 1 -o inf$n.nps || fail "inference under $n ranks failed"
  verify inf$n.nps inf-one.nps --rtol 0 > v.txt || { cat v.txt; fail "inference under $n ranks differs"; }
  $MPIRUN -np $n mle-fit -i three.nps --window 50 --step 3 --alpha-grid 0.6:2.5:6 --refresh 20 --shapes 2 --stderr \
    --backend cpu --threads 1 -o two$n.nps || fail "two shapes under $n ranks failed"
  verify two$n.nps two-one.nps --rtol 0 > v.txt || { cat v.txt; fail "two shapes under $n ranks differ"; }
done
# --exact: one task per window
mle-fit -i three.nps --window 50 --step 9 --alpha-grid 0.6:2.5:8 --exact --backend cpu -o exact-one.nps
$MPIRUN -np 3 mle-fit -i three.nps --window 50 --step 9 --alpha-grid 0.6:2.5:8 --exact --backend cpu --threads 1 \
  -o exact3.nps || fail "--exact under 3 ranks failed"
verify exact3.nps exact-one.nps --rtol 0 > /dev/null || fail "--exact under 3 ranks differs"
# fewer tasks than ranks: 3 windows in one chunk, over 4 ranks
mle-fit -i one-series.nps --window 398 --alpha-grid 0.5:3:6 --backend cpu -o few-one.nps
$MPIRUN -np 4 mle-fit -i one-series.nps --window 398 --alpha-grid 0.5:3:6 --backend cpu --threads 1 -o few4.nps ||
  fail "one task over 4 ranks failed"
verify few4.nps few-one.nps --rtol 0 > /dev/null || fail "one task over 4 ranks differs"
# bad input under MPI: exit 2 from every rank with the message, no output
rc=0
$MPIRUN -np 2 mle-fit -i one-series.nps --window 5000 --backend cpu -o bad.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || { cat err.txt; fail "bad input under MPI: exit $rc"; }
grep -qF "longer than the series" err.txt || { cat err.txt; fail "bad input under MPI: no message"; }
[ -e bad.nps ] && fail "bad input under MPI left output"
true
