# Bad profile files exit 2 with a message naming the file and the problem.

echo "not a stream at all" > text.prof
expect_exit 2 "text.prof: not a numpipe stream" -- profile-report text.prof
: > empty.prof
expect_exit 2 "empty input" -- profile-report empty.prof
expect_exit 2 "cannot open input 'missing.prof'" -- profile-report missing.prof

check() {  # check CASE 'message'
  np-profile-craft "$1" "$1.prof"
  expect_exit 2 "$2" -- profile-report "$1.prof"
  expect_exit 2 "$2" -- profile-report --format html -o "$1.html" "$1.prof"
  [ ! -e "$1.html" ] || fail "$1: a report was written from a bad file"
}
check not-profile "$(printf '%s' "not-profile.prof: record 0: record 'x' is not a profile record")"
check wrong-dtype "the profile record has dtype f4, expected f8"
check wrong-shape "the profile record has shape [3, 4], expected [phases, 3]"
check missing-tool "attrs lack \"tool\""
check missing-backend "attrs lack \"backend\""
check missing-device "attrs lack \"device\""
check device-no-name "device lack \"name\""
check device-bad-peak "device \"peak_bandwidth_gbs\" is not a number"
check missing-phases "attrs lack \"phases\""
check phase-count "names 1 phases but the record has shape [3, 3]"
check negative "phase 'compute' has seconds -1"
check nan "phase 'compute' has bytes nan"
check params-not-object "attrs \"params\" is not a JSON object"
check bad-columns "attrs \"columns\" is"
check empty-stream "empty-stream.prof: holds no profile records"
check mixed "mixed.prof: record 1: record 'result' is not a profile record"

# A good file followed by a bad one: still refused, nothing written.
np-profile-craft cpu good.prof
expect_exit 2 "record 'x' is not a profile record" -- profile-report -o out.txt good.prof not-profile.prof
[ ! -e out.txt ] || fail "output written despite a bad input"
no_leftovers .

# A profile cut short (the zstd frame ends early).
size=$(stat -c %s good.prof)
head -c $((size - 7)) good.prof > cut.prof
expect_exit 2 "cut.prof" -- profile-report cut.prof
