# The bodies' validation at reduced size on the GPU (label gpu; bench/ns-bodies-study
# gpu-test: a 24 x 20 D box, blockage 5 %, 15 s on an H200). The tolerances are wide
# enough for the small box's effect (docs/ns.md "Validation": +6 % on Cd at Re 40 in
# a box of 5 % blockage) and tight enough to catch a wrong force or period:
#   cylinder Re 40, D/h 16 and 32: Cd the same within 0.5 % (measured 0.02 %), the control
#     volume's drag within 1 % of the surface's (0.3 %), Cd within 10 % of Dennis and
#     Chang's 1.522 (+7.9 %);
#   cylinder Re 100, D/h 16: St within 4 % of 0.165 (+2.6 %), Cd within 6 % of 1.33 (+3.6 %),
#     the lift's amplitude within 10 % of 0.332 (+3.1 %; Park, Kwon and Choi 1998);
#   sphere Re 100, D/h 12 (12 x 6 x 6 D): Cd within 5 % of 1.087 (+3.6 %; Johnson and Patel 1999).
require_gpu
require_python
OUT=$WORK/study STUDY_WORK=$WORK/runs STUDY_BUDGET_S=3600 BACKEND=cuda PY=$PY \
  bash "$SRC/bench/ns-bodies-study" "$BIN" gpu-test >/dev/null
cat "$WORK/study/study.csv"
"$PY" - "$WORK/study/study.csv" <<'PYEOF'
import csv, sys
rows = {r["case"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert len(rows) == 5, sorted(rows)
g = lambda case, col: float(rows[case][col])
def within(value, ref, tol, what):
    d = value / ref - 1
    print("%s: %.5g against %.5g: %+.2f%% (tolerance %g%%)" % (what, value, ref, 100 * d, 100 * tol))
    assert abs(d) <= tol, what
within(g("cyl40-t-32", "cd"), g("cyl40-t-16", "cd"), 0.005, "Re 40 Cd, D/h 32 against 16")
for case in ("cyl40-t-16", "cyl40-t-32"):
    for cv in ("cd_cv2", "cd_cv3"):
        within(g(case, cv), g(case, "cd"), 0.01, "%s %s against the surface's" % (case, cv))
within(g("cyl40-t-32", "cd"), 1.522, 0.10, "Re 40 Cd")
within(g("cyl100-t-16", "st"), 0.165, 0.04, "Re 100 St")
within(g("cyl100-t-16", "cd"), 1.33, 0.06, "Re 100 Cd")
within(g("cyl100-t-16", "cl_amp"), 0.332, 0.10, "Re 100 lift amplitude")
within(g("sph100-t-12", "cd"), 1.087, 0.05, "sphere Re 100 Cd")
PYEOF
