# price under MPI: strikes split over 1..4 ranks give the one-process prices bit
# for bit (several problems, fp64 and fp32), a problem with fewer strikes than
# ranks, and bad input ending every rank with exit 2 and no output.
require_mpi
require_tool price
gen-input price --dataset small --num-t 32 -o a.in
gen-input price --dataset small --outer 5 --num-t 24 -o b.in
cat a.in b.in > two.in
price -i two.in --backend cpu -o one.nps
same_under_mpi one.nps price -i two.in --backend cpu --threads 1
price -i two.in --backend cpu --method forward -o one-fwd.nps
same_under_mpi one-fwd.nps price -i two.in --backend cpu --method forward --threads 1
price -i a.in --backend cpu --precision fp32 -o one32.nps
$MPIRUN -np 3 price -i a.in --backend cpu --precision fp32 --threads 1 -o r32.nps
verify r32.nps one32.nps --rtol 0 > /dev/null || fail "fp32 under 3 ranks differs from one process"
# fewer strikes than ranks: ranks without a strike send nothing
gen-input price --dataset small --outer 2 --num-t 16 -o few.in
price -i few.in --backend cpu -o few-one.nps
$MPIRUN -np 4 price -i few.in --backend cpu --threads 1 -o few4.nps
verify few4.nps few-one.nps --rtol 0 > /dev/null || fail "2 strikes over 4 ranks differ from one process"
# bad input under MPI: exit 2 from every rank with the message, no output
gen-input array --shape 9 -o arr.nps
rc=0
$MPIRUN -np 2 price -i arr.nps --backend cpu -o bad.nps 2> err.txt || rc=$?
[ "$rc" = 2 ] || { cat err.txt; fail "bad input under MPI: exit $rc"; }
grep -qF "expected 'price.input'" err.txt || { cat err.txt; fail "bad input under MPI: no message"; }
[ -e bad.nps ] && fail "bad input under MPI left output"
true
