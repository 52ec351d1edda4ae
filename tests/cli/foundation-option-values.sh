# Every option value is read whole or refused with exit 2 naming the option: a number
# with trailing text ("0.5garbage", "1x") and an empty word are refused by every tool,
# before any work. The options come from each tool's own --help (--help-all where it
# has one), so that a new option is covered when it is added.

# The cases users met.
if command -v fluid-step > /dev/null; then
  expect_exit 2 "--dt must be a number, got '0.5garbage'" -- fluid-step --dt 0.5garbage
  expect_exit 2 "--scheme is empty" -- fluid-step --scheme ''
  expect_exit 2 "--steps must be an integer, got '12abc'" -- fluid-step --steps 12abc
fi
if command -v ns-step > /dev/null; then
  expect_exit 2 "--cfl must be a number, got '1x'" -- ns-step --cfl 1x
  expect_exit 2 "--dt must be a number, got '0.1 '" -- ns-step --dt '0.1 '
fi
if command -v gen-input > /dev/null; then
  expect_exit 2 "--theta must be a number, got '3.5x'" -- gen-input mle --theta 3.5x
  expect_exit 2 "--age must be a number, got '40abc'" -- gen-input integrate --age 40abc
fi
if command -v mle-fit > /dev/null; then
  expect_exit 2 "--quantiles is empty" -- mle-fit --quantiles ''
fi

# Every tool (and every gen-input workload): OPTION VALUE pairs from --help, with the
# default value where it shows one.
options_of() {  # prints "name default" per option that takes a value ("-" when no default)
  local help
  help=$("$@" --help-all 2> /dev/null) || help=$("$@" --help)
  printf '%s\n' "$help" | awk '
    /^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]* [A-Z]/ {
      line = $0
      sub(/^ +(-[a-zA-Z], )?--/, "", line)
      name = line; sub(/ .*/, "", name)
      def = "-"
      if (match($0, /\(default: [^)]*\)/)) def = substr($0, RSTART + 10, RLENGTH - 11)
      print name, def
    }
  '
}

checked=0
check_tool() {  # check_tool PROGRAM [SUBCOMMAND]
  local name def
  while read -r name def; do
    case $name in help | help-all | version) continue ;; esac
    expect_exit 2 "--$name" -- "$@" "--$name" '' < /dev/null
    grep -qF 'empty' "$WORK/.stderr" || fail "$* --$name '': the message does not say the value is empty: $(cat "$WORK/.stderr")"
    if [[ $def =~ ^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$ ]]; then
      # refused, the message naming the value (an option read as words names it as its own checks do)
      expect_exit 2 "'${def}x'" -- "$@" "--$name" "${def}x" < /dev/null
    fi
    checked=$((checked + 1))
  done < <(options_of "$@")
}

for exe in "$BIN"/*; do
  tool=$(basename "$exe")
  if [ "$tool" = gen-input ]; then
    for w in $(gen-input list | awk '{print $1}'); do check_tool gen-input "$w"; done
  else
    check_tool "$tool"
  fi
done
[ "$checked" -gt 20 ] || fail "only $checked options checked: is --help's layout still the one this test reads?"
echo "checked $checked options"
