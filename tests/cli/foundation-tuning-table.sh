# docs/tuning.md's tables and the NUMPIPE_* environment variables the code reads agree:
# every variable read in kernels/, common/ or tools/ has a row, every variable in a row
# is read. A variable counts as read where a C++ or CUDA string literal starts with its
# name: getenv("NAME"), env_text("NAME"), env_choice("NAME", ...), cli.tuning_env("NAME=...")
# and the errors that name it ("NAME must be ..."). A name in the tables: any NUMPIPE_*
# word on a table row (a line starting with |).

# The variables the sources under $1 read, one a line, sorted.
read_by_code() {
  command grep -rhoE '"NUMPIPE_[A-Z0-9_]+' "$1/kernels" "$1/common" "$1/tools" \
    --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' --include='*.h' --include='*.inc' |
    tr -d '"' | sort -u
}
# The variables named on the table rows of the Markdown file $1, one a line, sorted.
in_table() {
  { command grep -E '^\|' "$1" || true; } | { command grep -oE 'NUMPIPE_[A-Z0-9_]+' || true; } | sort -u
}
# Checks that the sources under $1 and the table file $2 agree; prints each mismatch.
check_table() {
  read_by_code "$1" > code.txt
  in_table "$2" > table.txt
  [ -s code.txt ] || { echo "no NUMPIPE_* variable found in the code (the pattern is stale)"; return 1; }
  local bad=0 v
  for v in $(comm -23 code.txt table.txt); do
    echo "$v is read by the code but has no row in docs/tuning.md"; bad=1
  done
  for v in $(comm -13 code.txt table.txt); do
    echo "$v has a row in docs/tuning.md but nothing reads it"; bad=1
  done
  return $bad
}

doc="$SRC/docs/tuning.md"
[ -f "$doc" ] || fail "docs/tuning.md is missing"

# The check itself can fail: a table without one row, and a table with a row nobody reads.
victim=$(read_by_code "$SRC" | head -1)
[ -n "$victim" ] || fail "no NUMPIPE_* variable found in the code"
command grep -v -- "$victim\b" "$doc" > without.md
if check_table "$SRC" without.md > out.txt; then fail "the check passed a table without $victim"; fi
grep -q "$victim is read by the code but has no row" out.txt || fail "the check did not name the missing $victim: $(cat out.txt)"
{ cat "$doc"; echo '| price | `NUMPIPE_PRICE_NOBODY_READS=1` | a row without a reader |'; } > extra.md
if check_table "$SRC" extra.md > out.txt; then fail "the check passed a row that nothing reads"; fi
grep -q "NUMPIPE_PRICE_NOBODY_READS has a row in docs/tuning.md but nothing reads it" out.txt ||
  fail "the check did not name the unread row: $(cat out.txt)"

# The real table.
check_table "$SRC" "$doc" > out.txt || fail "docs/tuning.md and the code disagree:
$(cat out.txt)"
echo "docs/tuning.md: $(wc -l < code.txt) NUMPIPE_* variables, each read by the code and in the table"

# A user's setting (the "Settings" table) is documented for the user too: README or a man page.
sed -n '/^## Settings$/,/^## /p' "$doc" > settings.md
settings=$(in_table settings.md)
[ -n "$settings" ] || fail "docs/tuning.md has no Settings table"
for v in $settings; do
  grep -qs "$v\b" "$SRC/README.md" "$SRC"/man/man1/*.1 || fail "$v is a user's setting but neither README nor a man page names it"
done
