# docs/DEVELOPING.md's examples of a tool's main and a workload's interface are
# excerpts of the real files (tests/docs/excerpts.py): a change to tools/price.cpp or
# kernels/fluid/fluid.hpp that the page does not follow fails here. The checker itself
# must fail on an excerpt that drifted and on a page without excerpts.
python3 "$SRC/tests/docs/excerpts.py" "$SRC" "$SRC/docs/DEVELOPING.md" 2 || fail "docs/DEVELOPING.md's excerpts drifted from the code"
mkdir -p src
printf 'int main() {\n  int steps = 10;  // the default\n  return steps;\n}\n' > src/a.cpp
printf '<!-- excerpt: src/a.cpp -->\n```cpp\nint main() {\n  ...\n  return steps;   // as given\n```\n' > good.md
python3 "$SRC/tests/docs/excerpts.py" . good.md > /dev/null || fail "excerpts.py refused a true excerpt"
printf '<!-- excerpt: src/a.cpp -->\n```cpp\n  int steps = 20;\n```\n' > drifted.md
! python3 "$SRC/tests/docs/excerpts.py" . drifted.md 2> /dev/null || fail "excerpts.py accepted a changed line"
printf '<!-- excerpt: src/a.cpp -->\n```cpp\n  return steps;\nint main() {\n```\n' > order.md
! python3 "$SRC/tests/docs/excerpts.py" . order.md 2> /dev/null || fail "excerpts.py accepted lines out of order"
printf '```cpp\nint main() {\n```\n' > none.md
! python3 "$SRC/tests/docs/excerpts.py" . none.md 1 2> /dev/null || fail "excerpts.py accepted a page without excerpts"
