#!/usr/bin/env bash
# Runs one CLI test script in a fresh scratch folder with tests/cli/lib.sh loaded.
set -euo pipefail
script=$1
rm -rf "$WORK" && mkdir -p "$WORK"
cd "$WORK"
export PATH="$BIN:$TESTBIN:$PATH"
source "$SRC/tests/cli/lib.sh"
source "$script"
echo "PASS: $(basename "$script")"
