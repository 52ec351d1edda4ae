# The MPI layer: 1..4 ranks give the same squares as one process (the attrs record
# the rank count, so compare the arrays with verify, exactly), and a failure on
# any rank ends every rank with exit 2 and leaves no output.
require_mpi
gen-input array --shape 1001 --fill normal --seed 3 -o in.nps
np-mpicheck -i in.nps -o one.nps
for n in 1 2 3 4; do
  $MPIRUN -np $n np-mpicheck -i in.nps -o ranks$n.nps
  verify ranks$n.nps one.nps > /dev/null || fail "$n ranks differ from one process"
  inspect --json ranks$n.nps | grep -q "\"ranks\": $n" || fail "expected $n ranks to have run"
done
# Fewer items than ranks still works (some ranks get none).
gen-input array --shape 2 --fill linspace -o two.nps
$MPIRUN -np 3 np-mpicheck -i two.nps -o two-out.nps
verify two-out.nps <(np-mpicheck -i two.nps) > /dev/null || fail "3 ranks over 2 items"
# Failure on a non-root rank and on the root: exit 2, the message, no output.
for r in 0 2; do
  rc=0
  $MPIRUN -np 3 np-mpicheck -i in.nps -o failed.nps --fail-on-rank $r > /dev/null 2> err.txt || rc=$?
  [ "$rc" = 2 ] || fail "failure on rank $r: exit $rc, expected 2 ($(cat err.txt))"
  grep -q "rank $r: failing on purpose" err.txt || fail "message of rank $r missing: $(cat err.txt)"
  [ -e failed.nps ] && fail "a failed MPI run left its output"
  no_leftovers .
done
# Bad input read on rank 0 ends all ranks with exit 2.
np-testcraft truncated-payload > bad.nps
rc=0
$MPIRUN -np 2 np-mpicheck -i bad.nps -o bad-out.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "bad input under MPI: exit $rc"
grep -q "truncated payload" err.txt || fail "bad input message: $(cat err.txt)"
[ -e bad-out.nps ] && fail "bad input left output"
true
