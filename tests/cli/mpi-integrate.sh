# integrate under MPI: policies split over 1..4 ranks give the one-process
# reserves bit for bit, for a portfolio and for a group count smaller than the ranks.
require_mpi
require_tool integrate
gen-input integrate --portfolio 9 --seed 5 --steps 2,2,2 -o pf.nps
integrate -i pf.nps -o one.nps
same_under_mpi one.nps integrate -i pf.nps
gen-input integrate --g 10 --r 65 --x 35 --steps 2,2,2 -o single.nps
integrate -i single.nps -o single-one.nps
$MPIRUN -np 3 integrate -i single.nps -o single3.nps
verify single3.nps single-one.nps > /dev/null || fail "one policy over 3 ranks"
# Bad input under MPI: exit 2 from every rank, no output.
gen-input integrate --g 10 --r 65 --x 35 --steps 2,2,2 | inspect > /dev/null
rc=0
$MPIRUN -np 2 integrate -i pf.nps --repeat 0 -o bad.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || fail "bad option under MPI: exit $rc"
[ -e bad.nps ] && fail "bad input under MPI left output"
true
