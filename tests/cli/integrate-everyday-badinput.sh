# The everyday basis' records, read back by integrate: each bad one refused (exit 2)
# naming the record and the value, nothing written.
require_python
export PYTHONPATH="$SRC/share/python"
"$PY" - <<'PY'
import numpy as np, numpipe
def stream(path, *records):
    with numpipe.Writer(path) as w:
        w.write("policies", np.array([[10.0, 65.0, 60.0]]))
        w.write("steps", np.array([[4, 2, 4]], dtype=np.int32))
        w.write("products", np.array([[5.0, 120.0, 0.0, -1.0, 1.0, 0.0, 0.0]]))
        for name, array, attrs in records:
            w.write(name, array, attrs)
gm = {"law": "gompertz-makeham", "name": "insured"}
stream("no-second.nps")
stream("second-shape.nps", ("second_life", np.array([[55.0, 1.0]]), {}))
stream("second-age.nps", ("second_life", np.array([[150.0]]), {}))
stream("rate-index.nps", ("second_life", np.array([[55.0]]), {}), ("rate_basis", np.array([0.03]), {"name": "r3"}),
       ("policy_rate", np.array([[1]], dtype=np.int32), {}))
stream("rate-value.nps", ("second_life", np.array([[55.0]]), {}), ("rate_basis", np.array([1.5]), {"name": "big"}),
       ("policy_rate", np.array([[0]], dtype=np.int32), {}))
stream("rate-curve.nps", ("second_life", np.array([[55.0]]), {}),
       ("rate_basis", np.array([[1.0, 0.03], [0.5, 0.04]]), {"name": "backwards"}),
       ("policy_rate", np.array([[0]], dtype=np.int32), {}))
stream("select-attrs.nps", ("second_life", np.array([[55.0]]), {}),
       ("mortality", np.array([0.0005, -4.272, 0.038]), dict(gm, select={"years": 2})))
stream("select-years.nps", ("second_life", np.array([[55.0]]), {}),
       ("mortality", np.array([0.0005, -4.272, 0.038]), dict(gm, select={"years": 0, "factor": 0.9})))
stream("select-shape.nps", ("second_life", np.array([[55.0]]), {}),
       ("mortality", np.zeros((3, 2)), {"law": "select-table", "name": "insured"}))
rows = np.array([[a, 0.01, 0.01, 0.02 if a < 120 else 1.0] for a in range(0, 121)])
rows[61, 2] = 1.0
stream("select-q.nps", ("second_life", np.array([[55.0]]), {}),
       ("mortality", rows, {"law": "select-table", "name": "insured"}))
# Improvement rates by age and calendar year on a q_x table (base year 0, years 1, 2).
qt = np.array([[a, 0.01 if a < 120 else 1.0] for a in range(0, 121)])
def improving(path, **improvement):
    stream(path, ("second_life", np.array([[55.0]]), {}),
           ("mortality", qt, {"law": "table", "name": "insured", "columns": ["age", "q"],
                              "improvement": dict({"base_year": 0}, **improvement)}))
improving("by-year-count.nps", years=[1, 2], ai_by_year=[0.01] * 241)
improving("by-year-gap.nps", years=[1, 3], ai_by_year=[0.01] * 242)
improving("by-year-rate.nps", years=[1, 2], ai_by_year=[0.01] * 100 + [1.0] + [0.01] * 141)
improving("by-year-both.nps", years=[1, 2], ai_by_year=[0.01] * 242, ai=[0.01] * 121)
improving("by-year-late.nps", years=[5, 6], ai_by_year=[0.01] * 242)
PY
expect_exit 2 "needs the second life's age now" -- integrate -i no-second.nps -o out.nps
expect_exit 2 "'second_life' must have shape [1, 1]" -- integrate -i second-shape.nps -o out.nps
expect_exit 2 "needs the second life's age now, in [0, 119]: 150" -- integrate -i second-age.nps -o out.nps
expect_exit 2 "'policy_rate' row 0: must be -1 or the index of one of the 1 'rate_basis' records: 1" -- integrate -i rate-index.nps -o out.nps
expect_exit 2 "interest basis 'big': rate must be a finite fraction in (-1, 1): 1.5" -- integrate -i rate-value.nps -o out.nps
expect_exit 2 "interest basis 'backwards': curve: maturities must increase" -- integrate -i rate-curve.nps -o out.nps
expect_exit 2 'attrs select must be {"years": N, "factor": F}' -- integrate -i select-attrs.nps -o out.nps
expect_exit 2 "the select period must be whole years in [1, 10]: 0" -- integrate -i select-years.nps -o out.nps
expect_exit 2 "(select table) must have shape [M, d + 2]" -- integrate -i select-shape.nps -o out.nps
expect_exit 2 "row 62 (age 61): q_[x]+1 must be in [0, 1): 1" -- integrate -i select-q.nps -o out.nps
expect_exit 2 "improvement rates: 241 for 121 ages x 2 years" -- integrate -i by-year-count.nps -o out.nps
expect_exit 2 "improvement rates' years must increase by 1, got 3 after 1" -- integrate -i by-year-gap.nps -o out.nps
expect_exit 2 "row 51 (age 50, year 1): the improvement rate must be in [0, 1): 1" -- integrate -i by-year-rate.nps -o out.nps
expect_exit 2 'attrs improvement must be {"base_year": Y, "ai": [AI per row]} or' -- integrate -i by-year-both.nps -o out.nps
expect_exit 2 "improvement rates start in 5; the base year is 0, so they must start in 1 or before" -- integrate -i by-year-late.nps -o out.nps
[ ! -e out.nps ] || fail "a failed run left out.nps"
