# The tools speak the user's language, and an option name means one thing:
# tuning knobs only under --help-all; exit codes as each tool can return them; -o
# says what it writes; --devices everywhere it makes sense; --range is element
# indices; the recorded history command re-runs the step; the fluid scheme is
# named by what it computes; attrs "columns" is always a list of names.
require_python

help_of() { "$@" --help > help.out 2>&1; cat help.out; }  # whole, then printed: no SIGPIPE under pipefail

# Tuning knobs: parsed, listed by --help-all, absent from --help and the man pages' main text.
if command -v price > /dev/null; then
  help_of price > h.txt
  ! grep -qE -- '--gpu-group|--gpu-kernel' h.txt || fail "price --help lists its tuning options"
  price --help-all | grep -q -- '--gpu-group' || fail "price --help-all lacks --gpu-group"
  ! grep -qE 'gpu\\?-group|gpu\\?-kernel' "$SRC/man/man1/price.1" || fail "price.1 lists tuning options"
fi
if command -v ns-step > /dev/null; then
  help_of ns-step > h.txt
  ! grep -qE -- '--kernel|--chunk' h.txt || fail "ns-step --help lists --kernel or --chunk"
  ns-step --help-all | grep -q -- '--kernel V' || fail "ns-step --help-all lacks --kernel"
  ! grep -qE '\\-\\-kernel|\\-\\-chunk' "$SRC/man/man1/ns-step.1" || fail "ns-step.1 lists --kernel or --chunk"
fi
if command -v fluid-step > /dev/null; then
  ! grep -q 'NUMPIPE_FLUID_' "$SRC/man/man1/fluid-step.1" || fail "fluid-step.1 lists NUMPIPE_FLUID_* knobs"
  fluid-step --help-all | grep -q 'NUMPIPE_FLUID_TILE' || fail "fluid-step --help-all lacks the environment knobs"
fi

# Exit codes: only verify returns 1; every --help says which codes its tool returns.
for exe in "$BIN"/*; do
  tool=$(basename "$exe")
  help_of "$exe" > h.txt
  grep -q '^Exit codes: 0 success' h.txt || grep -q 'Exit codes: 0 success' h.txt || fail "$tool --help lists no exit codes"
  if [ "$tool" = verify ]; then
    grep -q '1 some array differs' h.txt || fail "verify --help lacks exit code 1"
  else
    ! grep -qE 'Exit codes:.* 1 ' h.txt || fail "$tool --help lists exit code 1, which only verify returns"
  fi
  # -o says what it writes.
  if grep -q -- '-o, --output' h.txt; then
    ! grep -q 'Write the output stream to' h.txt || fail "$tool --help: -o does not say what it writes"
  fi
done

# --devices and --repeat (the one benchmarking flag) in every compute tool's --help; a
# tool that drives one GPU per process says so.
for tool in price integrate mle-fit fluid-step ns-step; do
  command -v $tool > /dev/null || continue
  help_of $tool | grep -q -- '--devices' || fail "$tool --help lacks --devices"
  help_of $tool | grep -q -- '--repeat N' || help_of $tool | grep -q -- '--repeat R' || fail "$tool --help lacks --repeat"
  # --timing is no benchmarking flag (that is --repeat); integrate's --timing is the payments' timing
  ! help_of $tool | grep -- '--timing' | grep -qv 'advance|arrears' || fail "$tool --help still lists --timing as a benchmarking flag"
done
# A subcommand's help points at its program's man page.
for w in $(gen-input list | awk '{print $1}'); do
  gen-input $w --help | grep -q 'See man gen-input(1)\.' || fail "gen-input $w --help: $(gen-input $w --help | tail -1)"
done
gen-input fluid --n 16 -o fl.nps 2> /dev/null && command -v fluid-step > /dev/null &&
  expect_exit 2 "fluid-step drives one GPU per process" -- fluid-step --devices 0,1 -i fl.nps -o x.nps
if command -v ns-step > /dev/null; then
  gen-input ns --n 8 -o ns.nps
  expect_exit 2 "ns-step drives one GPU per process: for several GPUs run it under mpirun" -- ns-step --devices 0,1 -i ns.nps -o x.nps
fi

# --range is element indices (verify); render's colour range is --value-range.
if command -v render > /dev/null; then
  gen-input array --name d --shape 8,8 --fill linspace -o d.nps
  expect_exit 2 "--range is now --value-range LO:HI" -- render --range 0:1 -i d.nps -o d.png
  render --value-range 0:1 -i d.nps -o d.png
fi

# The history command is a shell command that re-runs the step: paste it, get the same stream.
printf 'date,close\n2020-01-01,100\n2020-01-02,101\n2020-01-03,99.5\n2020-01-06,100.2\n' > "my prices.csv"
gen-input mle --from-text "my prices.csv" --columns close --returns log -o "series 1.nps"
cmd=$("$PY" -c '
import json, subprocess, sys
out = subprocess.run(["inspect", "--json", "series 1.nps"], stdout=subprocess.PIPE, check=True).stdout
print(json.loads(out)[0]["attrs"]["history"][-1]["command"])')
case $cmd in *"'gen-input mle'"*) fail "history command quotes the subcommand as one word: $cmd" ;; esac
mv "series 1.nps" first.nps
eval "$cmd" || fail "the recorded command does not run: $cmd"
verify "series 1.nps" first.nps --rtol 0 > /dev/null || fail "the recorded command does not re-run the step: $cmd"

# The fluid scheme is named by what it computes; the former name still works, the same bits.
if command -v fluid-step > /dev/null; then
  fluid-step --steps 3 --scheme fused -i fl.nps -o fused.nps
  fluid-step --steps 3 --scheme seed -i fl.nps -o alias.nps
  verify fused.nps alias.nps --rtol 0 --ignore diagnostics > /dev/null || fail "--scheme seed differs from --scheme fused"
  inspect --json fused.nps > fused.json
  grep -q '"scheme": "fused"' fused.json || fail "attrs scheme is not 'fused'"
  help_of fluid-step | grep -q 'fused (one step' || fail "fluid-step --help does not describe --scheme fused"
fi

# attrs "columns" is a list of names wherever it appears (integrate's count is inner_columns).
if command -v integrate > /dev/null; then
  gen-input integrate --portfolio 3 --seed 1 --steps 2,2,2 | integrate --backend cpu -o r.nps
  inspect --json r.nps | "$PY" -c '
import json, sys
for rec in json.load(sys.stdin):
    c = rec["attrs"].get("columns")
    assert c is None or (isinstance(c, list) and all(isinstance(x, str) for x in c)), (rec["name"], c)
    ' || fail "a record's attrs columns is not a list of names"
  inspect --json r.nps > r.json
  grep -q '"inner_columns"' r.json || fail "integrate's column count is not inner_columns"
fi

# Every NUMPIPE_* variable the code reads is documented: tests/cli/foundation-tuning-table.sh
# (docs/tuning.md's tables; a user's setting also in README or a man page).
