# share/examples/integrate-improvement-by-year.sh, the table of improvement rates by age
# and calendar year that docs/integrate.md and the benchmarks use: its bytes (a header of
# the years, a row per age with each run's rate as written), gen-input reading it, and its
# refusals (exit 2, nothing written). integrate-improvement-table.sh values a table it
# writes against --improvement.
TABLE="$SRC/share/examples/integrate-improvement-by-year.sh"
T="$SRC/share/examples/integrate-life-table.csv"
"$TABLE" 2021:2023=0.02 2024=0.015 2025:2026=0 > two-runs.csv
[ "$(head -n 1 two-runs.csv)" = age,2021,2022,2023,2024,2025,2026 ] || fail "header: $(head -n 1 two-runs.csv)"
[ "$(wc -l < two-runs.csv)" = 122 ] || fail "want a header and the ages 0 to 120: $(wc -l < two-runs.csv) lines"
[ "$(sed -n 2p two-runs.csv)" = 0,0.02,0.02,0.02,0.015,0,0 ] || fail "age 0: $(sed -n 2p two-runs.csv)"
[ "$(tail -n 1 two-runs.csv)" = 120,0.02,0.02,0.02,0.015,0,0 ] || fail "age 120: $(tail -n 1 two-runs.csv)"
[ "$(cut -d, -f2- two-runs.csv | sort -u | wc -l)" = 2 ] || fail "every age should have the same rates"
"$TABLE" --ages 60:62 2021=0.01 > ages.csv
[ "$(cat ages.csv)" = "$(printf 'age,2021\n60,0.01\n61,0.01\n62,0.01')" ] || fail "--ages 60:62: $(cat ages.csv)"
gen-input integrate --product annuity --mortality-table "$T:q_female" --improvement-table insured=two-runs.csv \
  --base-year 2020 -o /dev/null || fail "gen-input refused the script's table"

# Refusals: exit 2, the reason and the value, nothing on stdout.
refuse() {
  local msg=$1
  shift
  expect_exit 2 "$msg" -- "$TABLE" "$@"
  [ ! -s "$WORK/.stdout" ] || fail "'$*' was refused but wrote: $(head -c 200 "$WORK/.stdout")"
}
refuse "usage: integrate-improvement-by-year.sh"
refuse "want YEARS=RATE (2021:2030=0.02): '2021'" 2021
refuse "the rate of '2021=1' must be a decimal in [0, 1): '1'" 2021=1
refuse "must be a decimal in [0, 1): '-0.1'" 2021=-0.1
refuse "must be a decimal in [0, 1): '1e-2'" 2021=1e-2
refuse "the years of '2030:2021=0.01' must run forwards, FIRST:LAST with FIRST <= LAST: '2030:2021'" 2030:2021=0.01
refuse "'2027:2030=0.01' comes after 2025, so it must start in 2026" 2021:2025=0.02 2027:2030=0.01
refuse "'2025=0.01' comes after 2025, so it must start in 2026" 2021:2025=0.02 2025=0.01
refuse "must be a whole number of at most 4 digits: '02021'" 02021=0.01
refuse "--ages must be a whole number of at most 4 digits: '-1'" --ages -1:5 2021=0.01
refuse "--ages needs FIRST:LAST" --ages
"$TABLE" --help | grep -q "usage: integrate-improvement-by-year.sh \[--ages FIRST:LAST\] YEARS=RATE" ||
  fail "--help does not say the usage"
