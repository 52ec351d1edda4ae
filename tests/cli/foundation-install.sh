# cmake --install into a temporary prefix lays numpipe out as a Debian package
# would, writes nothing outside the prefix, and works from there: a pipeline with
# the installed programs and reference data, man -M, the Python module under
# Debian's python3, bash completion; pip installs the module into a venv.
BUILD=$(dirname "$BIN")
P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" > install.log 2>&1 || { cat install.log; fail "cmake --install failed"; }

# Nothing outside the prefix (cmake lists every file it installed).
[ -s "$BUILD/install_manifest.txt" ] || fail "no install_manifest.txt"
while IFS= read -r f; do
  case $f in "$P"/*) ;; *) fail "installed outside the prefix: $f" ;; esac
done < "$BUILD/install_manifest.txt"

# The layout.
for exe in "$BIN"/*; do
  tool=$(basename "$exe")
  [ -x "$P/bin/$tool" ] || fail "$tool is not in PREFIX/bin"
  [ -f "$P/share/man/man1/$tool.1" ] || fail "the man page of $tool is not in PREFIX/share/man/man1"
  [ -f "$P/share/bash-completion/completions/$tool" ] || fail "no bash completion for $tool in PREFIX/share/bash-completion/completions"
done
[ -f "$P/share/numpipe/ref/finpar-locvolcalib/small.output.data" ] || fail "reference data not in PREFIX/share/numpipe/ref"
[ -f "$P/share/numpipe/ref/policies.csv" ] || fail "share/ref/policies.csv not installed"
[ -f "$P/lib/python3/dist-packages/numpipe.py" ] || fail "numpipe.py not in PREFIX/lib/python3/dist-packages"
if grep -rl "$SRC\|$BUILD" "$P/bin" > /dev/null 2>&1; then
  echo "note: the installed programs mention the build or source folder (version strings may)"; fi

# A pipeline from the prefix alone, in a folder with no clone around.
mkdir -p elsewhere && cd elsewhere
env -i HOME="$WORK" PATH="$P/bin:/usr/bin:/bin" OMP_WAIT_POLICY=passive bash -eo pipefail -c '
  gen-input price --dataset small | price --backend cpu |
    verify --text-ref "'"$P"'/share/numpipe/ref/finpar-locvolcalib/small.output.data" --array price --rtol 1e-4 > verify.txt
  grep -q "within tolerance" verify.txt
  command -v price | grep -q "^'"$P"'/bin/price$"' || fail "the installed pipeline failed: $(cat verify.txt 2>/dev/null)"

# The documented examples, as written (share/ref/... as in a clone), from a folder with no
# share/ref: the programs find the installed reference data beside their PREFIX/bin, or in
# $NUMPIPE_DATA; a missing file's message names both places looked in.
mkdir -p "$WORK/examples" && cd "$WORK/examples"
env -i HOME="$WORK" PATH="$P/bin:/usr/bin:/bin" OMP_WAIT_POLICY=passive bash -eo pipefail -c '
  gen-input price --dataset small | price --backend cpu |
    verify --text-ref share/ref/finpar-locvolcalib/small.output.data --array price --rtol 1e-4 > v.txt
  grep -q "within tolerance" v.txt
  gen-input integrate --from-text share/ref/policies.csv --curve share/ref/yield-curve.txt -o policies.nps
  gen-input mle --from-text share/ref/mle-prices.csv --columns close --returns log -o returns.nps
  verify share/ref/price-small.nps share/ref/price-small.nps > same.txt
  ! inspect policies.csv 2> bare.txt   # a bare name: the installed CSV, read (and refused as a stream)
  grep -q "not a numpipe stream" bare.txt
' > examples.log 2>&1 || fail "a documented example with share/ref/... failed after the install: $(cat examples.log)"
[ ! -e share ] || fail "the examples made a share folder"
expect_exit 2 "cannot open 'share/ref/no-such.csv': No such file or directory; looked for it in $WORK/examples/share/ref/no-such.csv and in the reference data $P/share/numpipe/ref/no-such.csv" \
  -- "$P/bin/gen-input" mle --from-text share/ref/no-such.csv
expect_exit 2 "looked for it in $WORK/examples/no-such.nps and in the reference data $P/share/numpipe/ref/no-such.nps" \
  -- "$P/bin/inspect" no-such.nps
mkdir -p mydata && cp "$P/share/numpipe/ref/policies.csv" mydata/only-here.csv
NUMPIPE_DATA=$PWD/mydata "$P/bin/gen-input" integrate --from-text share/ref/only-here.csv -o own.nps ||
  fail "NUMPIPE_DATA did not name the reference data"
expect_exit 2 "in the reference data $PWD/mydata/yield-curve.txt (from NUMPIPE_DATA)" \
  -- env NUMPIPE_DATA="$PWD/mydata" "$P/bin/gen-input" integrate --from-text share/ref/only-here.csv --curve share/ref/yield-curve.txt
cd "$WORK/elsewhere"

# man -M finds the installed pages.
if command -v man > /dev/null; then
  MANWIDTH=80 man -M "$P/share/man" verify > man.txt 2> man.err || fail "man -M PREFIX/share/man verify: $(cat man.err)"
  grep -q "compare numpipe streams" man.txt || fail "man -M shows the wrong page: $(head -5 man.txt)"
  MANPATH="$P/share/man" MANWIDTH=80 man gen-input > /dev/null 2>&1 || fail "MANPATH=PREFIX/share/man man gen-input"
else
  echo "note: no man program (Debian: man-db); the man pages' install was checked, not their display"
fi

# The install says where the Python module went, as python3 does not look in a temporary prefix.
grep -qF "numpipe: the Python module numpipe.py is in $P/lib/python3/dist-packages, where" "$WORK/install.log" ||
  fail "cmake --install did not say that python3 does not look in PREFIX/lib/python3/dist-packages: $(cat "$WORK/install.log")"

# Debian's python3 imports the installed module from PREFIX/lib/python3/dist-packages.
if [ -n "${PY:-}" ] && "$PY" -c 'import numpy' 2> /dev/null; then
  "$P/bin/gen-input" array --shape 2,3 --fill linspace -o a.nps
  PYTHONPATH="$P/lib/python3/dist-packages" "$PY" -c '
import sys, numpipe
assert numpipe.__file__.startswith(sys.argv[1]), numpipe.__file__
print(numpipe.read("a.nps")["x"].shape)' "$P/" | grep -q '(2, 3)' || fail "the installed Python module"
fi

# Bash completion: options from the program's --help, workloads from gen-input list.
PATH="$P/bin:$PATH" bash -c '
  source "'"$P"'/share/bash-completion/completions/verify"
  complete -p price > /dev/null
  COMP_WORDS=(verify --rt); COMP_CWORD=1; _numpipe; [[ " ${COMPREPLY[*]} " == *" --rtol "* ]] || exit 1
  COMP_WORDS=(gen-input pr); COMP_CWORD=1; _numpipe; [[ " ${COMPREPLY[*]} " == *" price "* ]] || exit 2
  COMP_WORDS=(gen-input price --data); COMP_CWORD=2; _numpipe; [[ " ${COMPREPLY[*]} " == *" --dataset "* ]] || exit 3
  COMP_WORDS=(price --backend c); COMP_CWORD=2; _numpipe; [[ " ${COMPREPLY[*]} " == *" cpu "* ]] || exit 4
  COMP_WORDS=(render --cmap c); COMP_CWORD=2; _numpipe; [ "${COMPREPLY[*]}" = coolwarm ] || exit 5
  COMP_WORDS=(nps-export --to ""); COMP_CWORD=2; _numpipe; [ "${COMPREPLY[*]}" = "csv netcdf vtk" ] || exit 6
  COMP_WORDS=(profile-report --format h); COMP_CWORD=2; _numpipe; [ "${COMPREPLY[*]}" = html ] || exit 7
' || fail "bash completion (case $?)"

# pip install ./share/python into a virtual environment, offline: Debian's NumPy and
# setuptools through --system-site-packages, no build isolation.
if [ -n "${PY:-}" ] && "$PY" -c 'import numpy, setuptools, venv, ensurepip' 2> /dev/null &&
  "$PY" -m venv --system-site-packages venv > venv.log 2>&1; then
  cp -r "$SRC/share/python" pysrc   # pip may write build files next to the sources
  PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 venv/bin/pip install --no-build-isolation ./pysrc > pip.log 2>&1 ||
    { cat pip.log; fail "pip install ./share/python failed"; }
  venv_python=$PWD/venv/bin/python
  (cd / && "$venv_python" -c '
import numpipe, sys
assert "site-packages" in numpipe.__file__ and sys.prefix in numpipe.__file__, numpipe.__file__
assert "to_xarray" in numpipe.__all__') || fail "numpipe is not importable from the venv after pip install"
  # pip's numpipe-dump program lists a stream's records (numpipe.py dump).
  "$P/bin/gen-input" array --shape 2,3 --fill linspace -o d.nps
  venv/bin/numpipe-dump d.nps > dump.txt 2>&1 || fail "numpipe-dump d.nps: $(cat dump.txt)"
  [ "$(cat dump.txt)" = "x f8 [2, 3]" ] || fail "numpipe-dump d.nps: $(cat dump.txt)"
  venv/bin/numpipe-dump --attrs < d.nps | grep -q '"fill": "linspace"' || fail "numpipe-dump --attrs from stdin"
  expect_exit 2 "numpipe-dump: cannot read input" -- venv/bin/numpipe-dump no-such.nps
else
  echo "note: no python3 venv with setuptools (Debian: python3-venv, python3-setuptools); pip install not checked"
fi
no_leftovers "$P/bin"
