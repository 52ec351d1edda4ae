# Every write is checked, stdout included (exit 3); output-related options are
# checked before any work, and a failure leaves no output behind; a folder as
# input is bad input (2); --device and --devices are checked whatever the backend.
gen-input array --shape 100000 --seed 1 -o a.nps

# stdout on a full disk: exit 3, for every kind of output on stdout
expect_exit 3 "cannot write standard output" -- bash -c 'inspect a.nps > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'inspect --json a.nps > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'verify a.nps a.nps > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'gen-input list > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'gen-input --help > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'inspect --help > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'gen-input array --help > /dev/full'
expect_exit 3 "cannot write standard output" -- bash -c 'verify --version > /dev/full'
expect_exit 3 "cannot write" -- bash -c 'gen-input array --shape 1000 > /dev/full'
# a closed pipe with SIGPIPE ignored: the write fails with EPIPE, which is exit 3
rc=$(bash -c "trap '' PIPE; inspect --values 100000 a.nps 2> pipe.err | head -c 10 > /dev/null; echo \${PIPESTATUS[0]}")
[ "$rc" = 3 ] || fail "inspect into a closed pipe with SIGPIPE ignored exited $rc, not 3"
grep -q "cannot write standard output" pipe.err || fail "no message for the closed pipe: $(cat pipe.err)"
# with SIGPIPE at its default, the usual quiet death by SIGPIPE (141)
rc=$(bash -c "inspect --values 100000 a.nps 2> pipe2.err | head -c 10 > /dev/null; echo \${PIPESTATUS[0]}")
[ "$rc" = 141 ] || fail "inspect into a closed pipe exited $rc, not 141 (SIGPIPE)"

# a folder as input is bad input
mkdir -p folder
expect_exit 2 "input 'folder' is a folder, not a stream" -- inspect folder
expect_exit 2 "is a folder, not a stream" -- verify -i folder --against a.nps

for tool in price integrate mle-fit fluid-step ns-step; do
  command -v $tool > /dev/null || continue
  # a --profile that cannot be written is refused before any work, leaving no output
  expect_exit 2 "cannot create the --profile file '/nonexistent/p.prof'" -- \
    $tool --backend cpu --profile /nonexistent/p.prof -i a.nps -o out.nps
  expect_exit 2 "--profile 'folder' is a folder" -- $tool --backend cpu --profile folder -i a.nps -o out.nps
  [ ! -e out.nps ] || fail "$tool left out.nps"
  expect_exit 2 "--device must be >= 0, got -1" -- $tool --backend cpu --device -1 -i a.nps -o out.nps
  expect_exit 2 "is a folder, not a stream" -- $tool --backend cpu -i folder -o out.nps
done
for tool in price integrate mle-fit; do
  command -v $tool > /dev/null || continue
  expect_exit 2 "--devices must be 'all' or a comma-separated list of device indices, got 'bogus'" -- \
    $tool --backend cpu --devices bogus -i a.nps -o out.nps
done

# A profile that fails to be written at the end (a full disk) fails the run, and the
# output it would have gone with is not left behind.
if command -v price > /dev/null; then
  gen-input price --dataset small -o p.nps
  expect_exit 3 "cannot append to profile file '/dev/full'" -- price --backend cpu --profile /dev/full -i p.nps -o out.nps
  [ ! -e out.nps ] || fail "price left out.nps after its profile failed"
  no_leftovers .
fi
