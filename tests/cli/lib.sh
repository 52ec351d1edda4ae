# Helpers for CLI tests (sourced by run-one.sh; set -euo pipefail is on).

fail() { echo "FAIL: $*" >&2; exit 1; }

# grep -q stops reading at its first match; the program writing into the pipe then
# dies of SIGPIPE on its next write, and pipefail fails the whole pipeline (a test
# that fails only when the match falls in an early piece of the output). This grep
# reads all of its input: -q (alone or in a bundle such as -qF) and --quiet/--silent
# become output to /dev/null, with the same exit status.
grep() {
  local args=() quiet=0 options=1 takes_value=0 a
  for a in "$@"; do
    if [ $takes_value = 1 ]; then args+=("$a"); takes_value=0; continue; fi
    if [ $options = 1 ]; then
      case $a in
        --) options=0; args+=("$a"); continue ;;
        --quiet | --silent) quiet=1; continue ;;
        -e | -f | -m | -A | -B | -C) takes_value=1; args+=("$a"); continue ;;
        --*) args+=("$a"); continue ;;
        -*q*) quiet=1; a=${a//q/}; [ "$a" = - ] || args+=("$a"); continue ;;
        -?*) args+=("$a"); continue ;;
        *) options=0 ;;
      esac
    fi
    args+=("$a")
  done
  if [ $quiet = 1 ]; then command grep "${args[@]}" > /dev/null; else command grep "${args[@]}"; fi
}

# expect_exit CODE 'message substring' -- command args...
# Runs the command, checks its exit code and that stderr contains the substring.
expect_exit() {
  local want=$1 msg=$2
  shift 2
  [ "$1" = "--" ] && shift
  local rc=0
  "$@" >"$WORK/.stdout" 2>"$WORK/.stderr" || rc=$?
  check_outcome "$rc" "$want" "$msg" "$*"
}

# expect_exit_stdin CODE 'message' FILE -- command args...: like expect_exit, stdin from FILE.
expect_exit_stdin() {
  local want=$1 msg=$2 input=$3
  shift 3
  [ "$1" = "--" ] && shift
  local rc=0
  "$@" <"$input" >"$WORK/.stdout" 2>"$WORK/.stderr" || rc=$?
  check_outcome "$rc" "$want" "$msg" "$* < $input"
}

# check_outcome RC WANT 'message' 'command': fails (showing the command and its stderr,
# $WORK/.stderr) unless it exited WANT and said the message (when one is given).
check_outcome() {
  local rc=$1 want=$2 msg=$3 command=$4
  if [ "$rc" != "$want" ]; then
    echo "command: $command" >&2; echo "stderr: $(cat "$WORK/.stderr")" >&2
    fail "expected exit $want, got $rc"
  fi
  if [ -n "$msg" ] && ! grep -qF -- "$msg" "$WORK/.stderr"; then
    echo "command: $command" >&2; echo "stderr: $(cat "$WORK/.stderr")" >&2
    fail "stderr lacks '$msg'"
  fi
}

# each_malformed_stream CHECK LIMIT: runs CHECK CASE 'message' for each stream below that
# breaks one rule of the format (np-testcraft CASE writes it), with the message every
# stream reader gives for it (the tools' and Python's alike); LIMIT is the reader's name
# for its payload bound (--max-bytes, max_bytes).
each_malformed_stream() {
  local check=$1 limit=$2
  "$check" not-zstd "not zstd-compressed"
  "$check" bad-magic "bad magic"
  "$check" bad-version "unknown stream version 7"
  "$check" truncated-payload "truncated payload in record 0 'x': expected 80 bytes, got 40 bytes"
  "$check" truncated-header "the input ends inside the header of record 0"
  "$check" header-not-json "is not valid JSON"
  "$check" header-not-object "is not a JSON object"
  "$check" missing-name 'has no string "name"'
  "$check" missing-dtype 'has no string "dtype"'
  "$check" missing-shape 'has no "shape" array'
  "$check" unknown-dtype 'unknown dtype "c16"'
  "$check" negative-shape "has a negative size: [-2]"
  "$check" overflow-shape "overflows"
  "$check" overflow-bytes "overflows"
  "$check" huge-shape "over the $limit limit"
  "$check" bad-attrs '"attrs" of record 0'
  "$check" missing-end "missing end record"
  "$check" end-count "end record counts 3 records but the stream holds 1"
  "$check" trailing-garbage "trailing data is not a numpipe stream"
  "$check" bad-checksum "checksum mismatch"
}

# require_python: skip (exit 77) when Debian's python3-numpy is absent.
require_python() {
  if [ -z "${PY:-}" ] || ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "SKIP: python3 with NumPy not found (apt-get install python3-numpy)"; exit 77
  fi
}

# require_gpu: skip (exit 77) unless a CUDA build sees a device.
require_gpu() {
  if ! inspect --devices 2>/dev/null | grep -q '^cuda'; then
    echo "SKIP: no CUDA device"; exit 77
  fi
}

# no_leftovers DIR: no temporary output files left behind.
no_leftovers() {
  if ls -A "${1:-.}" | grep -q '\.tmp-'; then fail "temporary files left in ${1:-.}: $(ls -A "${1:-.}")"; fi
}

# require_mpi: skip (exit 77) without mpirun; sets MPIRUN (root and oversubscription allowed).
require_mpi() {
  command -v mpirun > /dev/null || { echo "SKIP: no mpirun"; exit 77; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  MPIRUN="mpirun --oversubscribe -q"
}

# require_tool NAME: skip (exit 77) when this build lacks the tool.
require_tool() {
  command -v "$1" > /dev/null || { echo "SKIP: $1 not built"; exit 77; }
}

# same_under_mpi OUT_ONE CMD...: runs CMD under 1..4 ranks with -o ranksN.nps and
# checks every array equals OUT_ONE's bit for bit (verify with zero tolerance).
same_under_mpi() {
  local one=$1
  shift
  for n in 1 2 3 4; do
    $MPIRUN -np $n "$@" -o ranks$n.nps || fail "$* under $n ranks failed"
    verify ranks$n.nps "$one" > verify$n.txt || { cat verify$n.txt; fail "$* under $n ranks differs from one process"; }
  done
}

# peak TOOL ARGS...: runs $BIN/TOOL (at most PEAK_TIMEOUT seconds, default 120; exit 124
# past it), its stderr into peak.err, and prints its exit code and peak resident memory in MiB
peak() {
  "$PY" -c 'import resource, subprocess, sys
try: rc = subprocess.run(sys.argv[2:], stderr=open("peak.err", "w"), timeout=int(sys.argv[1])).returncode
except subprocess.TimeoutExpired: rc = 124
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "${PEAK_TIMEOUT:-120}" "$BIN/$1" "${@:2}"
}
