# Helpers for CLI tests (sourced by run-one.sh; set -euo pipefail is on).

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE 'message substring' -- command args...
# Runs the command, checks its exit code and that stderr contains the substring.
expect_exit() {
  local want=$1 msg=$2
  shift 2
  [ "$1" = "--" ] && shift
  local rc=0
  "$@" >"$WORK/.stdout" 2>"$WORK/.stderr" || rc=$?
  if [ "$rc" != "$want" ]; then
    echo "command: $*" >&2; echo "stderr: $(cat "$WORK/.stderr")" >&2
    fail "expected exit $want, got $rc"
  fi
  if [ -n "$msg" ] && ! grep -qF -- "$msg" "$WORK/.stderr"; then
    echo "command: $*" >&2; echo "stderr: $(cat "$WORK/.stderr")" >&2
    fail "stderr lacks '$msg'"
  fi
}

# expect_exit_stdin CODE 'message' FILE -- command args...: like expect_exit, stdin from FILE.
expect_exit_stdin() {
  local want=$1 msg=$2 input=$3
  shift 3
  [ "$1" = "--" ] && shift
  local rc=0
  "$@" <"$input" >"$WORK/.stdout" 2>"$WORK/.stderr" || rc=$?
  if [ "$rc" != "$want" ]; then
    echo "command: $* < $input" >&2; echo "stderr: $(cat "$WORK/.stderr")" >&2
    fail "expected exit $want, got $rc"
  fi
  if [ -n "$msg" ] && ! grep -qF -- "$msg" "$WORK/.stderr"; then
    echo "command: $* < $input" >&2; echo "stderr: $(cat "$WORK/.stderr")" >&2
    fail "stderr lacks '$msg'"
  fi
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
