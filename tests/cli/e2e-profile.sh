# The whole-process profile: every compute tool's --profile record holds the
# process's phases around its own (start-up, read input, write output, other
# (host), and cuda start-up on a GPU), they add up to the record's wall time, the
# tool's phases add up to its solve time, and profile-report says so. No timing is
# asserted beyond what holds by construction and start-up > 0.
export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
require_python
check_profile() {  # FILE TOOL: the last record of FILE
  "$PY" - "$1" "$2" <<'PY' || fail "$2: the profile does not cover the whole process"
import sys, numpipe
path, tool = sys.argv[1], sys.argv[2]
recs = [(a, at) for n, a, at in numpipe.records(path) if n == "profile"]
arr, attrs = recs[-1]
names = attrs["phases"]
proc = attrs["process_phases"]
assert attrs["tool"] == tool, attrs["tool"]
for p in ("start-up", "read input", "write output", "other (host)"):
    assert p in names and p in proc, (p, names)
assert names.index("start-up") == 0 and names[-1] == "other (host)", names
assert names.index("read input") < names.index("write output"), names
seconds = dict(zip(names, arr[:, 0]))
assert seconds["start-up"] > 0, seconds
total = float(arr[:, 0].sum())
assert abs(total - attrs["wall_seconds"]) <= 1e-9 * max(1.0, total), (total, attrs["wall_seconds"])
solve = float(sum(s for n, s in seconds.items() if n not in proc))
assert abs(solve - attrs["solve_seconds"]) <= 1e-9 * max(1.0, solve), (solve, attrs["solve_seconds"])
assert all(n in names for n in proc), (proc, names)
assert len(set(names)) == len(names), names
if attrs["backend"] == "cuda":
    assert "cuda start-up" in proc or "cuda_startup" in attrs, attrs
PY
}
backends=cpu
inspect --devices 2>/dev/null | grep -q '^cuda' && backends="cpu cuda"
for be in $backends; do
  rm -f *.prof
  gen-input price --dataset small | price --backend $be --profile price.prof -o /dev/null
  check_profile price.prof price
  gen-input mle --length 3000 | mle-fit --backend $be --window 500 --step 50 --profile mle.prof -o /dev/null
  check_profile mle.prof mle-fit
  gen-input integrate --portfolio 50 --seed 1 --steps 2,2,2 | integrate --backend $be --profile int.prof -o /dev/null
  check_profile int.prof integrate
  gen-input fluid --n 64 | fluid-step --backend $be --steps 3 --profile fluid.prof -o /dev/null
  check_profile fluid.prof fluid-step
  gen-input ns --n 12 --init taylor-green-3d | ns-step --backend $be --steps 2 --profile ns.prof -o /dev/null
  check_profile ns.prof ns-step
  # the read and write phases count the arrays' bytes: ns-step's state is 4 x 12^3 f8
  "$PY" - ns.prof <<'PY' || fail "ns-step: the read input phase does not count the state's bytes"
import sys, numpipe
arr, attrs = [(a, at) for n, a, at in numpipe.records(sys.argv[1]) if n == "profile"][-1]
b = dict(zip(attrs["phases"], arr[:, 1]))
assert b["read input"] == 4 * 12**3 * 8, b
assert b["write output"] >= 4 * 12**3 * 8, b
PY
  profile-report ns.prof > report.txt
  grep -q "^  wall .*: solve .*(the tool's phases" report.txt || { cat report.txt; fail "profile-report lacks the wall/solve line"; }
done
