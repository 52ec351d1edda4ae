# Integer options take decimal integers only: cxxopts alone reads "0x10" as 16, so a user who
# mistyped 10 would get 16 steps without a word. Every tool refuses a hexadecimal value
# (exit 2, before any work, nothing written) naming the option and the value, whatever the
# option (a tool's own, a common one, one without a default) and however it is written
# (--name VALUE, --name=VALUE), gen-input's grid sizes (--n N or a list) too; decimal values,
# leading zeros and signs included, still work.

# exact_message TEXT: stderr of the last expect_exit is that line, the tool's name first
exact_message() {
  grep -qxF -- "$1" "$WORK/.stderr" || fail "stderr is not '$1': $(cat "$WORK/.stderr")"
}

gen-input array --name x --shape 4 --fill uniform --seed 7 -o x.nps
# inspect: its own option
expect_exit 2 "" -- inspect x.nps --values 0x10
exact_message "inspect: --values: expected a decimal integer, got 0x10"
expect_exit 2 "" -- inspect x.nps --values=0x1
exact_message "inspect: --values: expected a decimal integer, got 0x1"
expect_exit 2 "" -- inspect x.nps --values 0X1F
exact_message "inspect: --values: expected a decimal integer, got 0X1F"
inspect x.nps --values 010 | grep -q 'values' || fail "inspect --values 010 (decimal, a leading zero) refused"
# gen-input: a workload's option (unsigned: cxxopts refuses -0x7 itself); no output file is left
expect_exit 2 "" -- gen-input array --name x --shape 4 --fill uniform --seed 0x7 -o y.nps
exact_message "gen-input: --seed: expected a decimal integer, got 0x7"
[ ! -e y.nps ] || fail "gen-input wrote y.nps though --seed was refused"
expect_exit 2 "" -- gen-input array --name x --shape 4 --fill uniform --seed -0x7 -o y.nps
exact_message "gen-input: --seed: expected a decimal integer, got -0x7"
gen-input array --name x --shape 4 --fill uniform --seed 007 -o y.nps
verify x.nps y.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--seed 007 is not --seed 7"; }
# the grid sizes of gen-input's workloads (a word, one integer or a list): the same rule
if gen-input list | grep -q '^fluid'; then
  expect_exit 2 "" -- gen-input fluid --n 0x10 -o g.nps
  exact_message "gen-input: --n: expected a decimal integer, got 0x10"
  expect_exit 2 "" -- gen-input fluid --n 32,0X20 -o g.nps
  exact_message "gen-input: --n: expected a decimal integer, got 0X20"
fi
if gen-input list | grep -q '^ns'; then
  expect_exit 2 "" -- gen-input ns --n 16,0x10,4 -o g.nps
  exact_message "gen-input: --n: expected a decimal integer, got 0x10"
  gen-input ns --n 016,12,4 -o g.nps
  inspect g.nps | grep -q 'rho  f8 \[16, 12, 4\]' || fail "gen-input ns --n 016,12,4 is not 16 x 12 x 4: $(inspect g.nps | head -1)"
  rm g.nps
fi

# the compute tools' common --threads, and a stepping tool's --steps, where they are built
if command -v fluid-step > /dev/null; then
  gen-input fluid --n 16 -o f.nps
  expect_exit 2 "" -- fluid-step -i f.nps --steps 0x10 -o out.nps
  exact_message "fluid-step: --steps: expected a decimal integer, got 0x10"
  expect_exit 2 "" -- fluid-step -i f.nps --steps 2 --threads 0x2 -o out.nps
  exact_message "fluid-step: --threads: expected a decimal integer, got 0x2"
  [ ! -e out.nps ] || fail "fluid-step wrote out.nps though an option was refused"
fi
if command -v price > /dev/null; then
  expect_exit 2 "" -- price --threads 0x2 -i x.nps -o p.nps
  exact_message "price: --threads: expected a decimal integer, got 0x2"
fi
if command -v ns-step > /dev/null; then  # an option without a default (std::optional)
  expect_exit 2 "" -- ns-step -i x.nps --from-snapshot 0x0 -o n.nps
  exact_message "ns-step: --from-snapshot: expected a decimal integer, got 0x0"
fi
no_leftovers
