# profile-report's numbers from hand-made profile streams (np-profile-craft writes
# them with numpipe's own profile writer): units, shares, percentages of peak,
# intensity, and the comparison of several runs read from concatenated streams.

np-profile-craft cpu runs.prof
np-profile-craft gpu runs.prof        # a second stream appended, as --profile does
np-profile-craft nopeaks other.prof

# Text: the phase table of each run and the comparison.
profile-report runs.prof > report.txt
grep -q "^Run 1: fake-tool (cpu, Test CPU)" report.txt || fail "run 1 title: $(cat report.txt)"
grep -q "^Run 2: fake-tool (cuda, Test GPU)" report.txt || fail "run 2 title"
grep -Eq "^  compute +2\.000 s +66\.7% +25\.00 +50\.00 +25\.0% +25\.0% +2$" report.txt || fail "cpu compute row: $(cat report.txt)"
grep -Eq "^  read +500\.000 ms +16\.7% +- +- +- +- +-$" report.txt || fail "cpu read row"
grep -Eq "^  write +500\.000 ms +16\.7% +20\.00 +- +20\.0% +- +0$" report.txt || fail "cpu write row"
grep -Eq "^  total +3\.000 s +100\.0% +20\.00 +33\.33 +20\.0% +16\.7% +1\.667$" report.txt || fail "cpu total row"
grep -Eq "^  compute +200\.000 ms +40\.0% +250\.00 +500\.00 +12\.5% +2\.5% +2$" report.txt || fail "gpu compute row (fp32 peak from params)"
grep -q "% peak fp32" report.txt || fail "gpu table names its precision"
grep -Eq "^ +1 +fake-tool +cpu +Test CPU +fp64 +P1 .* 3\.000 s +1\.00x \(base\)$" report.txt || fail "comparison row 1: $(cat report.txt)"
grep -Eq "^ +2 +fake-tool +cuda +Test GPU +fp32 +P1 .* 500\.000 ms +6\.00x vs r1$" report.txt || fail "comparison row 2"
# Another tool is another problem: no speed-up against fake-tool's runs.
np-profile-craft other othertool.prof
cat runs.prof othertool.prof > three.prof
profile-report three.prof > three.txt
grep -Eq "^ +3 +other-tool +cpu +Test CPU +fp64 +P2 .* 3\.000 s +-$" three.txt || fail "a run of another tool got a speed-up: $(cat three.txt)"
grep -Eq "^ +2 +fake-tool .* 6\.00x vs r1$" three.txt || fail "the other tool changed fake-tool's speed-ups"

# --precision overrides the params: the gpu's compute phase is 5% of fp64 10000.
profile-report --precision fp64 runs.prof > fp64.txt
grep -Eq "^  compute +200\.000 ms +40\.0% +250\.00 +500\.00 +12\.5% +5\.0% +2$" fp64.txt || fail "--precision fp64"
expect_exit 2 "--precision must be fp64 or fp32, got 'fp16'" -- profile-report --precision fp16 runs.prof

# --baseline: speed-ups relative to run 2; several files read in order.
profile-report --baseline 2 runs.prof other.prof > base.txt
grep -q "only runs of one tool on one problem" base.txt || fail "the comparison says what it compares"
grep -Eq "^ +1 +fake-tool .* 3\.000 s +0\.17x vs r2$" base.txt || fail "run 1 against run 2: $(cat base.txt)"
grep -Eq "^ +2 +fake-tool .* 1\.00x \(base\)$" base.txt || fail "run 2 is the base"
grep -Eq "^ +3 +fake-tool +cpu +Test CPU +fp64 +P1 .* 3\.000 s +0\.17x vs r2$" base.txt || fail "run 3 from the second file"
grep -q "peaks: bandwidth unknown, fp64 unknown, fp32 unknown" base.txt || fail "unknown peaks said so"
expect_exit 2 "--baseline 4: the runs are numbered 1 to 3" -- profile-report --baseline 4 runs.prof other.prof

# Markdown: pipe tables with the same numbers.
profile-report --format markdown runs.prof > report.md
grep -qF "| compute | 2.000 s | 66.7% | 25.00 | 50.00 | 25.0% | 25.0% | 2 |" report.md || fail "markdown row: $(cat report.md)"
grep -qF "|---|---:|---:|---:|---:|---:|---:|---:|" report.md || fail "markdown alignment row"
grep -qF "| 2 | fake-tool | cuda | Test GPU | fp32 | P1 |" report.md || fail "markdown comparison"

# JSON: exact values for scripts (checked with Debian's python3 when present).
profile-report --format json -o report.json runs.prof
no_leftovers .
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 - <<'PY' || fail "json values"
import json
r = json.load(open("report.json"))
assert r["baseline"] == 1
a, b = r["runs"]
c = a["phases"][1]
assert c["name"] == "compute" and c["seconds"] == 2.0 and c["bytes"] == 50e9 and c["flops"] == 100e9
assert abs(c["gb_per_s"] - 25) < 1e-12 and abs(c["gflop_per_s"] - 50) < 1e-12
assert abs(c["pct_peak_bandwidth"] - 25) < 1e-12 and abs(c["pct_peak_compute"] - 25) < 1e-12
assert abs(c["intensity_flop_per_byte"] - 2) < 1e-12 and abs(c["share"] - 2 / 3) < 1e-12
assert a["phases"][0]["gb_per_s"] is None and a["phases"][0]["intensity_flop_per_byte"] is None
assert abs(a["total"]["gflop_per_s"] - 100 / 3) < 1e-12 and abs(a["total"]["pct_peak_compute"] - 100 / 6) < 1e-12
assert b["precision"] == "fp32" and b["precision_from"] == "params" and b["peak_compute_gflops"] == 20000
assert abs(b["phases"][0]["pct_peak_bandwidth"] - 1.25) < 1e-12
assert abs(b["phases"][1]["pct_peak_compute"] - 2.5) < 1e-12
assert abs(b["speedup"] - 6) < 1e-12 and abs(a["speedup"] - 1) < 1e-12
assert a["problem"] == b["problem"] == 1 and b["speedup_baseline"] == 1
assert b["device"]["multiprocessors"] == 100 and b["tool"] == "fake-tool"
PY
fi

# From stdin, and the atomic -o.
profile-report < runs.prof | grep -q "Test GPU" || fail "stdin"
cat runs.prof other.prof | profile-report --format json | grep -q '"run": 3' || fail "concatenated streams on stdin"
profile-report -o out.txt runs.prof
cmp out.txt report.txt || fail "-o differs from stdout"
expect_exit 2 "--format must be text, markdown, json or html, got 'pdf'" -- profile-report --format pdf runs.prof
profile-report --help | grep -q "Example" || fail "--help has an example"

# --use-calibration: the stored peaks replace the recorded ones (for the devices listed).
echo '{"Test CPU": {"peak_bandwidth_gbs": 50, "peak_fp64_gflops": 100, "peak_fp32_gflops": 200, "date": "2025-05-05"}}' > cal.json
NUMPIPE_CALIBRATION="$WORK/cal.json" profile-report --use-calibration runs.prof > usecal.txt
grep -Eq "^  compute +2\.000 s +66\.7% +25\.00 +50\.00 +50\.0% +50\.0% +2$" usecal.txt || fail "--use-calibration: $(cat usecal.txt)"
grep -q "(measured 2025-05-05)" usecal.txt || fail "--use-calibration names its source"
grep -Eq "^  compute +200\.000 ms +40\.0% +250\.00 +500\.00 +12\.5% +2\.5% +2$" usecal.txt || fail "--use-calibration changed a device it does not list"
profile-report -i runs.prof | cmp - report.txt || fail "-i FILE"
