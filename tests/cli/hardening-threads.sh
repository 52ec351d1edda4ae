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

# A busy machine: OpenMP's idle threads spin briefly (1,000 iterations), then sleep,
# unless the user chose otherwise (libgomp spins for milliseconds at every barrier by
# default, taking the cores of a shared machine from the threads doing the work). The
# tool restarts itself before main with GOMP_SPINCOUNT=1000: its arguments, stdin and
# results are the same.
if command -v price > /dev/null; then
  gen-input price --outer 2 --num-x 32 --num-y 32 --num-t 16 -o busy.nps
  # spin_count CMD...: the spin count libgomp runs CMD's threads with (its last OMP_DISPLAY_ENV report)
  spin_count() { env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$@" 2>&1 >/dev/null |
                 sed -n "s/^ *GOMP_SPINCOUNT = '\([0-9]*\)'.*/\1/p" | tail -1; }
  spins=$(spin_count price --backend cpu --threads 2 -q -i busy.nps -o default.nps)
  if [ -n "$spins" ]; then   # libgomp (another OpenMP runtime reports otherwise)
    [ "$spins" = 1000 ] || fail "price --threads 2 waits spinning $spins iterations by default, not 1000"
    [ "$(spin_count env OMP_WAIT_POLICY=passive price --backend cpu --threads 2 -q -i busy.nps -o passive.nps)" = 0 ] ||
      fail "OMP_WAIT_POLICY=passive set by the user was not kept"
    [ "$(spin_count env GOMP_SPINCOUNT=300000 price --backend cpu --threads 2 -q -i busy.nps -o spin.nps)" = 300000 ] ||
      fail "GOMP_SPINCOUNT set by the user was not kept"
    for other in spin passive; do   # exact: rtol 0, atol 0
      verify default.nps $other.nps > /dev/null || fail "$other waits give other values than the default"
    done
    # stdin and the arguments reach the restarted tool: the same output and command line from a pipe
    env -u OMP_WAIT_POLICY price --backend cpu --threads 2 -q < busy.nps > piped.nps
    inspect --json piped.nps | grep -q '"command": *"price --backend cpu --threads 2 -q"' ||
      fail "the restarted tool's command line is not the one given: $(inspect --json piped.nps | grep -m1 command)"
    verify piped.nps default.nps > /dev/null || fail "price from stdin differs after the restart"
  fi
fi
