# --threads is bounded (at most 64 per core, exit 2 naming the value) and a team
# that cannot be started is a resource failure (exit 3), not libgomp's exit 1 or a
# crash; OMP_NUM_THREADS is held to the same bound.
max=$((64 * $(getconf _NPROCESSORS_ONLN)))
for tool in price integrate mle-fit fluid-step ns-step; do
  command -v $tool > /dev/null || continue
  expect_exit 2 "--threads 100000 is more than 64 threads per core" -- $tool --backend cpu --threads 100000 -i none.nps -o out.nps
  expect_exit 2 "--threads $((max + 1)) is more than 64 threads per core" -- $tool --backend cpu --threads $((max + 1)) -i none.nps -o out.nps
  expect_exit 2 "OMP_NUM_THREADS=100000 is more than 64 threads per core" -- env OMP_NUM_THREADS=100000 $tool --backend cpu -i none.nps -o out.nps
done
if command -v price > /dev/null; then
  gen-input price --dataset small -o p.nps
  # 120 threads of 8 MiB stacks do not fit in 400 MB of address space: refused before any work
  threads=120; [ $threads -gt $max ] && threads=$max
  expect_exit 3 "cannot start $threads threads" -- \
    bash -c "ulimit -s 8192; ulimit -v 400000; exec price --backend cpu --threads $threads -i p.nps -o out.nps"
  [ ! -e out.nps ] || fail "a refused run left out.nps"
  price --backend cpu --threads 3 -i p.nps -o ok.nps || fail "3 threads refused"
fi
