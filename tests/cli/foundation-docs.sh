# Every tool that is built has a man page that renders, a --help with an example
# pipeline, and a --version.
for exe in "$BIN"/*; do
  tool=$(basename "$exe")
  page="$SRC/man/man1/$tool.1"
  [ -f "$page" ] || fail "no man page man/man1/$tool.1 for $tool"
  grep -q '^\.SH EXAMPLES\?' "$page" || fail "man page of $tool has no EXAMPLES section"
  if command -v man > /dev/null; then
    MANWIDTH=80 man -l "$page" > /dev/null 2> man.err || fail "man page of $tool does not render: $(cat man.err)"
  fi
  "$exe" --help > help.txt || fail "$tool --help failed"
  grep -q 'Example' help.txt || fail "$tool --help has no example pipeline"
  "$exe" --version | grep -q 'numpipe' || fail "$tool --version"
done
