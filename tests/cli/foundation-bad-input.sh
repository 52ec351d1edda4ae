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

each_malformed_stream check_case --max-bytes

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
