# Under mpirun: tools that do not run as one MPI job refuse to run on several
# ranks (rather than printing or writing N times); the --threads bound holds on
# every rank; stdout as a rank's pseudo-terminal is refused with the reason.
require_mpi
gen-input array --shape 10 -o a.nps
expect_exit 2 "inspect does not run under MPI: mpirun started 2 copies of it" -- $MPIRUN -np 2 inspect a.nps
expect_exit 2 "verify does not run under MPI" -- $MPIRUN -np 2 verify a.nps a.nps
expect_exit 2 "gen-input array does not run under MPI" -- $MPIRUN -np 2 gen-input array -o b.nps
[ ! -e b.nps ] || fail "gen-input under mpirun wrote b.nps"
$MPIRUN -np 1 inspect a.nps > one.txt || fail "inspect under mpirun -np 1 failed"
if command -v price > /dev/null; then
  gen-input price --dataset small -o p.nps
  expect_exit 2 "--threads 100000 is more than 64 threads per core" -- $MPIRUN -np 2 price --backend cpu --threads 100000 -i p.nps -o out.nps
  expect_exit 2 "cannot create the --profile file" -- $MPIRUN -np 2 price --backend cpu --profile /nonexistent/p.prof -i p.nps -o out.nps
  [ ! -e out.nps ] || fail "price under mpirun left out.nps"
fi
# Open MPI hands each rank a pseudo-terminal: the refusal says so (script(1) gives mpirun a terminal)
if command -v script > /dev/null; then
  script -qec "$MPIRUN -np 1 gen-input array" /dev/null > tty.txt 2>&1 || true
  grep -q "under mpirun each rank's stdout is a pseudo-terminal" tty.txt || fail "no mpirun hint: $(cat tty.txt)"
  grep -q "use -o FILE" tty.txt || fail "no -o hint: $(cat tty.txt)"
fi
