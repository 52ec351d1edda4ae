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
