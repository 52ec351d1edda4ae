# Every bad input the reader must refuse: exit 2 and a message naming the problem,
# through each reading tool (inspect, verify) and from a pipe as well as a file.

check_case() {  # check_case CASE 'message'
  np-testcraft "$1" > "$1.nps"
  expect_exit 2 "$2" -- inspect "$1.nps"
  expect_exit_stdin 2 "$2" "$1.nps" -- inspect
  expect_exit 2 "$2" -- verify "$1.nps" ok.nps
  expect_exit_stdin 2 "$2" "$1.nps" -- verify --against ok.nps
}

np-testcraft valid > ok.nps
inspect ok.nps > /dev/null

: > empty.nps
expect_exit 2 "empty input" -- inspect empty.nps
expect_exit_stdin 2 "empty input" empty.nps -- inspect
expect_exit 2 "empty input" -- verify empty.nps ok.nps

check_case not-zstd "not zstd-compressed"
check_case bad-magic "bad magic"
check_case bad-version "unknown stream version 7"
check_case truncated-payload "truncated payload in record 0 'x': expected 80 bytes, got 40 bytes"
check_case truncated-header "the input ends inside the header of record 0"
check_case header-not-json "is not valid JSON"
check_case header-not-object "is not a JSON object"
check_case missing-name 'has no string "name"'
check_case missing-dtype 'has no string "dtype"'
check_case missing-shape 'has no "shape" array'
check_case unknown-dtype 'unknown dtype "c16"'
check_case negative-shape "has a negative size: [-2]"
check_case overflow-shape "overflows"
check_case overflow-bytes "overflows"
check_case huge-shape "over the --max-bytes limit"
check_case bad-attrs '"attrs" of record 0'
check_case missing-end "missing end record"
check_case end-count "end record counts 3 records but the stream holds 1"
check_case trailing-garbage "trailing data is not a numpipe stream"
check_case bad-checksum "checksum mismatch"

# --max-bytes: a record above the limit is refused, at the limit accepted.
gen-input array --shape 100 -o hundred.nps   # 800 bytes
expect_exit 2 "over the --max-bytes limit of 799 bytes" -- inspect --max-bytes 799 hundred.nps
inspect --max-bytes 800 hundred.nps > /dev/null
expect_exit 2 "--max-bytes must be positive" -- inspect --max-bytes 0 hundred.nps

# A zstd frame cut short (the file ends inside a frame), from a real tool's output.
gen-input array --shape 5000 --fill normal -o big.nps
size=$(stat -c %s big.nps)
head -c $((size / 2)) big.nps > cut.nps
expect_exit 2 "truncated zstd frame" -- inspect cut.nps
expect_exit_stdin 2 "truncated zstd frame" cut.nps -- inspect

# Flipped bytes in the middle of a compressed payload: zstd's checksum or its
# decoder catches them.
/usr/bin/python3 - <<'PY' 2>/dev/null || perl -e 'open(F,"+<","big.nps"); binmode F; seek(F,2000,0); read(F,$b,1); seek(F,2000,0); print F chr(ord($b)^0xff); close F'
data = bytearray(open("big.nps", "rb").read())
data[2000] ^= 0xFF
open("big.nps", "wb").write(bytes(data))
PY
expect_exit 2 "corrupt" -- inspect big.nps

# Concatenated streams are one input; a missing file is bad input too.
np-testcraft two-streams > two.nps
[ "$(inspect --json two.nps | grep -c '"name": "x"')" = 2 ] || fail "two concatenated streams should give two records"
expect_exit 2 "cannot open input 'no-such-file.nps'" -- inspect no-such-file.nps
no_leftovers .
