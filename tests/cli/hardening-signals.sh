# A run ended by any catchable signal (INT, TERM, HUP, QUIT, USR1, USR2, PIPE)
# removes its temporary output and dies by that signal; a temporary file left by
# a run that could not clean up (SIGKILL) is reported by the next run writing there.
ulimit -c 0   # SIGQUIT's default action dumps core
set -m        # background jobs in their own process group, signals not ignored

# stale temporary files of the output's name are reported, others are not
gen-input array --shape 10 -o out.nps 2> none.err
[ ! -s none.err ] || fail "a note without stale files: $(cat none.err)"
printf 'partial' > .out.nps.tmp-Ab12Cd
printf 'other' > .other.nps.tmp-Xy34Zw
gen-input array --shape 10 -o out.nps 2> stale.err
grep -q "note: './.out.nps.tmp-Ab12Cd' (7 bytes" stale.err || fail "the stale temporary file was not reported: $(cat stale.err)"
grep -q "other.nps" stale.err && fail "another output's temporary file was reported"
rm -f .out.nps.tmp-Ab12Cd .other.nps.tmp-Xy34Zw

command -v fluid-step > /dev/null || return 0
gen-input fluid --n 16 -o f.nps
for sig in INT TERM HUP QUIT USR1 USR2 PIPE; do
  rm -f out.nps
  fluid-step --backend cpu --threads 1 --steps 100000000 --snapshot-every 1 -q -i f.nps -o out.nps &
  pid=$!
  for i in $(seq 200); do
    ls -A | grep -q '^\.out\.nps\.tmp-' && break
    sleep 0.05
  done
  ls -A | grep -q '^\.out\.nps\.tmp-' || { kill -KILL $pid; fail "no temporary file appeared"; }
  kill -$sig $pid
  rc=0
  wait $pid || rc=$?
  [ $rc = $((128 + $(kill -l $sig))) ] || fail "SIG$sig: exit status $rc, not death by the signal"
  no_leftovers .
  [ ! -e out.nps ] || fail "SIG$sig left out.nps"
done
