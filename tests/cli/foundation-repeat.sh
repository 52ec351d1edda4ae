# --repeat N has one meaning and one range in the five compute tools (common/run.hpp,
# declare_repeat): N more runs of the solve from the same input besides the one
# written, 1 to 1000, their median time on stderr. The same words in every --help and
# every man page, the same refusals, the same output bits with and without it.
words() { tr -s ' \n\t' ' '; }  # a --help's or man page's text with its line breaks undone
help_text='--repeat N Benchmark: N more runs of the solve from the same input besides the one written (1 to 1000), their median time on stderr'
man_text='Benchmark: N more runs of the solve from the same input besides the one written (1 to 1000), their median time on standard error'
tools=0
for tool in price integrate mle-fit fluid-step ns-step; do
  [ -f "$SRC/man/man1/$tool.1" ] || fail "no man page for $tool"
  sed 's/\\-/-/g; s/\\f[BIR]//g' "$SRC/man/man1/$tool.1" | words | grep -qF -- "$man_text" || fail "$tool.1: --repeat is not described as the others"
  command -v $tool > /dev/null || continue
  tools=$((tools + 1))
  $tool --help > h.txt 2>&1
  words < h.txt | grep -qF -- "$help_text" || fail "$tool --help: --repeat is not declared by common/run.hpp: $(grep -A2 -- --repeat h.txt)"
  for n in 0 1001 -1 2x; do
    expect_exit 2 "--repeat" -- $tool --repeat $n -i /dev/null -o out.nps
  done
  [ ! -e out.nps ] || fail "$tool left an output after a refused --repeat"
done
[ $tools -gt 0 ] || { echo "no compute tool built"; exit 77; }

# The steppers: --repeat 2 writes the same state as no --repeat, and reports two more runs.
if command -v fluid-step > /dev/null; then
  gen-input fluid --n 24 -o f.nps
  fluid-step --backend cpu --steps 3 -i f.nps -o a.nps
  fluid-step --backend cpu --steps 3 --repeat 2 -q -i f.nps -o b.nps 2> err.txt
  grep -q '^fluid-step: 3 steps: 2 more runs, median ' err.txt || fail "fluid-step --repeat 2 reported: $(cat err.txt)"
  verify a.nps b.nps --rtol 0 > /dev/null || fail "fluid-step --repeat changed the output"
fi
if command -v ns-step > /dev/null; then
  gen-input ns --n 8 -o n.nps
  ns-step --backend cpu --steps 3 -i n.nps -o a.nps 2> err.txt
  ! grep -q 'timing' err.txt || fail "ns-step without --repeat printed timings: $(cat err.txt)"
  ns-step --backend cpu --steps 3 --repeat 2 -i n.nps -o b.nps 2> err.txt
  grep -q '^ns-step: timing: .* steps=3 runs=2 median ' err.txt || fail "ns-step --repeat 2 reported: $(cat err.txt)"
  verify a.nps b.nps --rtol 0 > /dev/null || fail "ns-step --repeat changed the output"
fi
if command -v price > /dev/null; then
  gen-input price --dataset small -o p.nps
  price --backend cpu -i p.nps -o a.nps
  price --backend cpu --repeat 2 -i p.nps -o b.nps 2> err.txt
  grep -q ': 2 runs after the first, median ' err.txt || fail "price --repeat 2 reported: $(cat err.txt)"
  verify a.nps b.nps --rtol 0 > /dev/null || fail "price --repeat changed the output"
fi
