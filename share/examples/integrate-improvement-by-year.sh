#!/bin/sh
# A table of mortality improvement rates by age and calendar year for integrate's
# --improvement-table (docs/integrate.md, "Improvement by age and calendar year"): a CSV
# whose first column holds the ages and every other column one calendar year's rates
# AI(x, j), named by the year, written to stdout. Each YEARS=RATE gives the rate of a
# year or a run of years, the same at every age; the runs follow each other, year after
# year, as integrate wants them.
#
#   integrate-improvement-by-year.sh [--ages FIRST:LAST] YEARS=RATE ...
#
#   YEARS    a calendar year (2021) or a run of them (2021:2030)
#   RATE     the rate of those years, a decimal in [0, 1) (0.02), written as given
#   --ages   the rows, one a year of age (default 0:120, the ages of a life table)
#
# 2% a year from 2021 to 2030, then 1% to 2040, at ages 0 to 120:
#
#   share/examples/integrate-improvement-by-year.sh 2021:2030=0.02 2031:2040=0.01 > improvement-by-year.csv
set -e
me=integrate-improvement-by-year.sh
usage="usage: $me [--ages FIRST:LAST] YEARS=RATE ...   (YEARS: a year or FIRST:LAST; RATE in [0, 1))"
fail() { echo "$me: $1" >&2; exit 2; }

# A whole number as written (no sign, no leading zero), short enough for the shell's arithmetic.
whole() {
  case $2 in
    '' | *[!0-9]* | 0?* | ?????*) fail "$1 must be a whole number of at most 4 digits: '$2'" ;;
  esac
}
# FIRST:LAST (or one number) into first and last, FIRST <= LAST.
span() {
  case $2 in
    *:*) first=${2%%:*} last=${2#*:} ;;
    *) first=$2 last=$2 ;;
  esac
  whole "$1" "$first"
  whole "$1" "$last"
  [ "$first" -le "$last" ] || fail "$1 must run forwards, FIRST:LAST with FIRST <= LAST: '$2'"
}

# 1. Arguments: the ages, then the runs of years, each following the one before.
age_first=0 age_last=120
if [ "${1-}" = --ages ]; then
  [ $# -ge 2 ] || fail "--ages needs FIRST:LAST"
  span "--ages" "$2"
  age_first=$first age_last=$last
  shift 2
fi
case ${1-} in
  -h | --help) echo "$usage"; exit 0 ;;
  '') echo "$usage" >&2; exit 2 ;;
esac
header=age rates= next=
for run in "$@"; do
  case $run in
    *=*) ;;
    *) fail "want YEARS=RATE (2021:2030=0.02): '$run'" ;;
  esac
  span "the years of '$run'" "${run%%=*}"
  rate=${run#*=}
  case $rate in
    0 | 0.[0-9]*) case ${rate#0.} in *[!0-9]*) fail "the rate of '$run' must be a decimal in [0, 1): '$rate'" ;; esac ;;
    *) fail "the rate of '$run' must be a decimal in [0, 1): '$rate'" ;;
  esac
  [ -z "$next" ] || [ "$first" -eq "$next" ] ||
    fail "the runs of years must follow each other: '$run' comes after $((next - 1)), so it must start in $next"
  year=$first
  while [ "$year" -le "$last" ]; do
    header="$header,$year" rates="$rates,$rate" year=$((year + 1))
  done
  next=$year
done

# 2. The table: the header, then a row per age (every age the same rates).
printf '%s\n' "$header"
age=$age_first
while [ "$age" -le "$age_last" ]; do
  printf '%s%s\n' "$age" "$rates"
  age=$((age + 1))
done
