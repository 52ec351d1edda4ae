# The man pages, --help and the shell completion say the same options: for every tool
# (and every gen-input workload), each option it declares (PROGRAM --help-options, the
# table that --help and --help-all are printed from) is named in its man page's OPTIONS
# section (the tuning ones aside: benchmarks' knobs, listed by --help-all only and kept
# out of the pages), each option that section names is one the program takes, --help and
# --help-all list exactly the declared options, and the completion offers each option
# (the tuning ones aside) and, after an option declared with its words (.one_of), those
# words, which the man page names too (as it names the words the completion offers for
# an option declared without them).

completion="$BIN/../completion/numpipe"
[ -f "$completion" ] || fail "no completion script at $completion"

# man_options PAGE SECTION...: the options named in those sections of the page, one a
# line ("--long" or "-x"): every \-\-long, and a \-x in bold (on a .B/.BI/.BR line or
# in \fB...\fR); a one-letter long name (\-\-n) is read as "-n", as the programs read it.
man_options() {
  local page=$1
  shift
  awk -v want="$(printf '%s\n' "$@")" '
    BEGIN { n = split(want, w, "\n"); for (i = 1; i <= n; i++) keep[".SH " w[i]] = 1 }
    /^\.SH/ { on = ($0 in keep); next }
    on { print }
  ' "$page" > section.roff
  # the text, without fonts and without other programs' options ("mle-fit --shapes 2")
  local others
  others=$(ls "$BIN" | grep -vxF "$self" | paste -sd '|')
  sed -E 's/\\f[BIRP]//g; s/\\-/-/g' section.roff | sed -E "s/($others)( [a-z]+)? --[a-z-]+//g" > section.txt
  {
    grep -oE -- '(^|[^-a-zA-Z0-9])--[a-zA-Z][a-zA-Z0-9]*(-[a-z0-9]+)*' section.txt | sed -E 's/^[^-]*//' || true
    grep -E '^\.B[IR]? ' section.roff | sed 's/\\-/-/g' | grep -oE -- '(^|[ "])-[a-zA-Z]([^-a-zA-Z0-9]|$)' | grep -oE -- '-[a-zA-Z]' || true
    grep -oE -- '\\fB\\-[a-zA-Z]\\f' section.roff | grep -oE -- '-[a-zA-Z]' || true
  } | sed -E 's/^--([a-zA-Z])$/-\1/' | sort -u
}

# help_options PROGRAM...: the options --help (and --help-all) list, one a line.
help_options() {
  { "$@" --help; "$@" --help-all 2> /dev/null || true; } |
    grep -oE -- '^ +(-[a-zA-Z],? ?)?(--[a-z][a-z0-9-]*)?' | sed -E 's/^ +//; s/,.*--/ --/' |
    awk '{ print ($2 != "" ? $2 : $1) }' | grep -v '^$' | sort -u
}

checked=0
drifts=0
drift() { echo "DRIFT: $*" >&2; drifts=$((drifts + 1)); }
check_program() {  # check_program PAGE SECTION -- PROGRAM...
  local page=$1 section=$2
  shift 3
  local what="$*" self=$1
  "$@" --help-options > table.txt || fail "$what --help-options failed"
  [ -s table.txt ] || fail "$what --help-options printed nothing"
  cut -f1 table.txt | sort -u > declared.txt
  help_options "$@" > listed.txt
  diff declared.txt listed.txt > /dev/null ||
    fail "$what: --help/--help-all and the declarations differ: $(diff declared.txt listed.txt | grep '^[<>]' | tr '\n' ' ')"
  if [ "$section" = OPTIONS ]; then
    man_options "$page" OPTIONS > documented.txt
  else
    man_options "$page" "COMMON OPTIONS" "$section" > documented.txt
  fi
  local missing extra
  # an option is named by its long name or its short one (-i for --input)
  missing=$(awk -F '\t' 'NR == FNR { named[$1] = 1; next } $2 != "Tuning" && !named[$1] && !($5 != "" && named[$5]) { print $1 }' \
    documented.txt table.txt | sort -u | tr '\n' ' ')
  [ -z "$missing" ] || drift "$what: options not in ${page##*/}'s $section: $missing"
  cut -f5 table.txt | grep -v '^$' | sort -u > short.txt
  extra=$(comm -13 declared.txt documented.txt | comm -23 - short.txt | tr '\n' ' ')
  [ -z "$extra" ] || drift "$what: ${page##*/}'s $section names options $what does not take: $extra"
  # the completion: every option but the tuning ones; each option's declared words
  local offered
  offered=$(bash -c 'source "$1"; shift; COMP_WORDS=("$@" -); COMP_CWORD=$(($# )); _numpipe; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@" | sort -u)
  sed 's/\\-/-/g; s/\\f[BIRP]//g' "$page" > page.txt
  while IFS=$'\037' read -r option group arg choices short; do
    if [ "$group" != Tuning ] && [[ $option == --* ]]; then
      grep -qxF -- "$option" <<< "$offered" || drift "$what: the completion does not offer $option"
    fi
    [ "$group" = Tuning ] && continue  # a benchmark's knob: neither the completion nor the page
    if [ -z "$choices" ]; then
      # an option declared without its words: the completion's own table of them, named by the page
      local table_words
      table_words=$(bash -c 'source "$1"; shift; _numpipe_words "$@"' _ "$completion" "$option" "$@")
      for word in $table_words; do
        [ "$word" = all ] && [ "$option" = --devices ] && continue  # --devices all|LIST
        grep -qw -- "$word" page.txt || drift "$what $option: the completion offers '$word', ${page##*/} does not name it"
      done
      continue
    fi
    local words
    words=$(bash -c 'source "$1"; shift; COMP_WORDS=("$@" ""); COMP_CWORD=$(($# )); _numpipe; printf "%s " "${COMPREPLY[@]}"' _ "$completion" "$@" "$option")
    [ "$words" = "$choices " ] || drift "$what $option: the completion offers '$words', the program declares '$choices'"
    for word in $choices; do
      grep -qw -- "$word" page.txt || drift "$what $option: ${page##*/} does not name the word '$word'"
    done
    checked=$((checked + 1))
  done < <(tr '\t' '\037' < table.txt)
  checked=$((checked + $(wc -l < declared.txt)))
}

for exe in "$BIN"/*; do
  tool=$(basename "$exe")
  page="$SRC/man/man1/$tool.1"
  if [ "$tool" = gen-input ]; then
    for w in $(gen-input list | awk '{print $1}'); do check_program "$page" "WORKLOAD $w" -- gen-input "$w"; done
  else
    check_program "$page" OPTIONS -- "$tool"
  fi
done
[ "$drifts" = 0 ] || fail "$drifts programs' man pages, --help or completion differ (above)"
[ "$checked" -gt 100 ] || fail "only $checked options checked: is --help-options' table still the one this test reads?"
echo "checked $checked options"
