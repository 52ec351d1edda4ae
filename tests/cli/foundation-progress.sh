# The progress line of every compute tool, through a pseudo-terminal (script):
# done/total in the tool's unit, the percentage, then a summary line; nothing with
# -q, nothing when stderr is not a terminal. NUMPIPE_PROGRESS_AFTER=0 shows the
# line at once (it waits a second otherwise), so small runs suffice.
command -v script > /dev/null || { echo "SKIP: no script (Debian: bsdutils)"; exit 77; }
export NUMPIPE_PROGRESS_AFTER=0

# on_terminal LOG COMMAND...: runs COMMAND with stdin, stdout and stderr on a terminal.
on_terminal() {
  local log=$1
  shift
  local cmd=""
  for w in "$@"; do cmd+=" $(printf '%q' "$w")"; done
  script -qec "$cmd" /dev/null < /dev/null > "$log" 2>&1 || { cat "$log"; fail "$* failed on a terminal"; }
  tr '\r' '\n' < "$log" > "$log.lines"
}

# check TOOL UNIT TOTAL COMMAND...: the line and the summary on a terminal, nothing with -q or in a pipe.
check() {
  local tool=$1 unit=$2 total=$3
  shift 3
  on_terminal "$tool.log" "$@"
  grep -qE "^$tool: [0-9]+/$total $unit \([0-9]+%\)" "$tool.log.lines" ||
    fail "$tool: no progress line 'done/$total $unit (P%)' on a terminal: $(cat -v "$tool.log")"
  grep -qE "^$tool: $total $unit in [0-9.]+ s" "$tool.log.lines" ||
    fail "$tool: no summary line '$total $unit in ...': $(cat -v "$tool.log")"
  on_terminal "$tool-q.log" "$@" -q
  ! grep -q "^$tool: " "$tool-q.log.lines" || fail "$tool -q printed a progress line: $(cat -v "$tool-q.log")"
  "$@" 2> "$tool.err" < /dev/null || fail "$* failed"
  [ ! -s "$tool.err" ] || fail "$tool wrote to stderr when it is not a terminal: $(cat "$tool.err")"
}

if command -v price > /dev/null; then
  gen-input price --dataset small -o p.nps
  check price strikes 16 price --backend cpu --method forward -i p.nps -o prices.nps
  check price strikes 16 price --backend cpu -i p.nps -o prices.nps
fi
if command -v integrate > /dev/null; then
  gen-input integrate --portfolio 12 --seed 1 --steps 2,2,2 -o pf.nps
  check integrate policies 12 integrate --backend cpu -i pf.nps -o r.nps
fi
if command -v mle-fit > /dev/null; then
  gen-input mle --length 1200 --seed 2 -o s.nps
  check mle-fit windows 1101 mle-fit --backend cpu --window 100 --alpha-grid 1:2:4 -i s.nps -o f.nps
fi
if command -v fluid-step > /dev/null; then
  gen-input fluid --n 32 -o fl.nps
  check fluid-step steps 30 fluid-step --backend cpu --steps 30 -i fl.nps -o fo.nps
  # Chunked for the line, the state is the same bits as in one call.
  fluid-step --backend cpu --steps 30 -i fl.nps -o fo-pipe.nps
  verify fo.nps fo-pipe.nps --rtol 0 --ignore diagnostics > /dev/null || fail "fluid-step's state depends on the progress line"
  # Snapshots still every M steps when the steps run in chunks.
  on_terminal snaps.log fluid-step --backend cpu --steps 30 --snapshot-every 7 -i fl.nps -o snaps.nps
  [ "$(inspect snaps.nps | grep -c ': snap_d ')" = 4 ] || fail "snapshots on a terminal: $(inspect snaps.nps | grep snap_d)"
fi
if command -v nps-export > /dev/null; then   # the rows of a CSV table
  gen-input array --shape 1000,3 --fill linspace -o tab.nps
  check nps-export rows 3000 nps-export -i tab.nps -o tab.csv   # a row per element: 1000 x 3
  # NetCDF: the records written (where the build has NetCDF); VTK: the files written.
  gen-input array --shape 1000,3 --fill linspace -o tab2.nps
  cat tab.nps tab2.nps > two.nps   # the name twice: a series of 2 records
  if nps-export -q -i tab.nps -o probe.nc 2> /dev/null; then
    check nps-export records 2 nps-export -i two.nps -o two.nc
  fi
  check nps-export files 2 nps-export -i two.nps -o two.pvd
fi
if command -v ns-step > /dev/null; then
  gen-input ns --n 12 -o n.nps
  check ns-step steps 6 ns-step --backend cpu --steps 6 -i n.nps -o no.nps
fi
if command -v gen-input > /dev/null && gen-input list | grep -q '^ns '; then
  check gen-input MB 4 gen-input ns --n 50 --init random -o big.nps
fi
if command -v gen-input > /dev/null && gen-input list | grep -q '^mle '; then
  check gen-input points 200000 gen-input mle --length 100000 --series 2 -o series.nps
fi
echo "progress lines checked"
