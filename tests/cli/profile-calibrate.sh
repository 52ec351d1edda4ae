# profile-report --calibrate --backend cpu --quick: measures the CPU, stores the
# peaks in the calibration file (creating its folder, keeping other devices'
# entries), and tools then report them as measured.

export NUMPIPE_CALIBRATION="$WORK/cache/numpipe/calibration.json"
mkdir -p cache/numpipe
echo '{"Some GPU": {"peak_bandwidth_gbs": 1000, "peak_fp64_gflops": 2000, "peak_fp32_gflops": 4000, "date": "2020-01-01"}}' \
  > "$NUMPIPE_CALIBRATION"
profile-report --calibrate --backend cpu --quick --threads 2 > cal.txt
grep -q "copy bandwidth" cal.txt || fail "no bandwidth printed: $(cat cal.txt)"
grep -q "fp64 FMA" cal.txt || fail "no fp64 printed"
grep -q "stored in $NUMPIPE_CALIBRATION" cal.txt || fail "where it stored"
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 - <<'PY' || fail "calibration file content: $(cat "$NUMPIPE_CALIBRATION")"
import json, os
c = json.load(open(os.environ["NUMPIPE_CALIBRATION"]))
assert c["Some GPU"]["peak_bandwidth_gbs"] == 1000, c
cpu = [v for k, v in c.items() if k != "Some GPU"]
assert len(cpu) == 1, c
e = cpu[0]
assert e["kind"] == "cpu" and e["peak_bandwidth_gbs"] > 0 and e["peak_fp64_gflops"] > 0, e
assert e["peak_fp32_gflops"] > 0, e  # (no fp32-vs-fp64 ratio: timings on a loaded machine are noise)
assert e["date"].endswith("Z"), e
PY
fi
# Tools now see the measured peaks.
inspect --devices | grep '^cpu' | grep -q "(measured " || fail "inspect --devices: $(inspect --devices)"

# A fresh folder is created.
NUMPIPE_CALIBRATION="$WORK/new/dir/cal.json" profile-report --calibrate --backend cpu --quick > /dev/null
[ -s new/dir/cal.json ] || fail "calibration file not created in a new folder"
no_leftovers new/dir

# CUDA asked for where there is none: exit 3 saying so.
if ! inspect --devices | grep -q '^cuda'; then
  expect_exit 3 "no CUDA device" -- profile-report --calibrate --backend cuda --quick
  profile-report --calibrate --quick --threads 1 > auto.txt
  grep -q "^no CUDA device" auto.txt || fail "auto without a device says so: $(cat auto.txt)"
fi

# A calibration file that is not a JSON object is not overwritten.
echo '[1, 2, 3]' > bad.json
expect_exit 2 "is not a JSON object keyed by device name" -- env NUMPIPE_CALIBRATION="$WORK/bad.json" profile-report --calibrate --backend cpu --quick
grep -q '^\[1, 2, 3\]$' bad.json || fail "bad calibration file was changed"
expect_exit 2 "--quick goes with --calibrate" -- profile-report --quick x.prof

# A calibration never lowers a stored peak: a device entry with peaks far above what
# this machine measures keeps them, and the run says so.
/usr/bin/python3 - <<'PY' || fail "could not seed the calibration file"
import json, os
path = os.environ["NUMPIPE_CALIBRATION"]
c = json.load(open(path))
cpu = [k for k in c if k != "Some GPU"][0]
c[cpu].update(peak_bandwidth_gbs=1e9, peak_fp64_gflops=1e9, peak_fp32_gflops=1e9)
json.dump(c, open(path, "w"))
PY
profile-report --calibrate --backend cpu --quick --threads 1 > high.txt 2> high.err
grep -q "kept the earlier, higher peak: peak_bandwidth_gbs .* measured, 1000000000.0 kept" high.txt ||
  fail "a lower measurement did not say it kept the higher peak: $(cat high.txt)"
grep -q "kept the earlier, higher peak: peak_fp64_gflops" high.txt || fail "fp64 kept: $(cat high.txt)"
/usr/bin/python3 -c '
import json, os
c = json.load(open(os.environ["NUMPIPE_CALIBRATION"]))
e = [v for k, v in c.items() if k != "Some GPU"][0]
assert e["peak_bandwidth_gbs"] == 1e9 and e["peak_fp64_gflops"] == 1e9 and e["peak_fp32_gflops"] == 1e9, e
assert e["load_average"] >= 0, e' || fail "the higher peaks were lowered: $(cat "$NUMPIPE_CALIBRATION")"

# A run faster than the stored peaks (here absurdly low ones) is reported as above the
# roof, in text, Markdown, JSON and HTML; runs under their roofs are not.
/usr/bin/python3 - <<'PY'
import json, os
path = os.environ["NUMPIPE_CALIBRATION"]
c = json.load(open(path))
cpu = [k for k in c if k != "Some GPU"][0]
c[cpu].update(peak_bandwidth_gbs=1e-6, peak_fp64_gflops=1e-6, peak_fp32_gflops=1e-6)
json.dump(c, open(path, "w"))
PY
gen-input fluid --n 32 | fluid-step --steps 2 --backend cpu --profile low.prof -o /dev/null
profile-report low.prof > low.txt
grep -q "^  above the roof: .*% of peak bandwidth.*: this run beat the peaks (measured " low.txt ||
  fail "a run above its roof is not flagged: $(cat low.txt)"
profile-report --format markdown low.prof > low.md
grep -q '^\*\*above the roof: ' low.md || fail "markdown: no above-the-roof line"
profile-report --format json low.prof | /usr/bin/python3 -c '
import json, sys
runs = json.load(sys.stdin)["runs"]
assert runs[0]["above_roof"] and all(" at " in a for a in runs[0]["above_roof"]), runs[0]["above_roof"]' ||
  fail "json: no above_roof list"
profile-report --html low.prof > low.html
grep -q 'class="warn">Above the roof' low.html || fail "html: no above-the-roof note"
# --use-calibration with sane (huge) peaks: under the roof, nothing flagged.
/usr/bin/python3 - <<'PY'
import json, os
path = os.environ["NUMPIPE_CALIBRATION"]
c = json.load(open(path))
cpu = [k for k in c if k != "Some GPU"][0]
c[cpu].update(peak_bandwidth_gbs=1e9, peak_fp64_gflops=1e9, peak_fp32_gflops=1e9)
json.dump(c, open(path, "w"))
PY
profile-report --use-calibration low.prof > ok.txt
grep -q "above the roof" ok.txt && fail "a run under its roof flagged: $(cat ok.txt)"
profile-report --use-calibration --format json low.prof | /usr/bin/python3 -c '
import json, sys
assert json.load(sys.stdin)["runs"][0]["above_roof"] == []' || fail "json: above_roof not empty under the roof"
