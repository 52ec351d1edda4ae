# integrate: the spec's checkpoint (g=10 r=65 x=35, 2 steps per year at all levels)
# to 1e-12 relative (the published scheme, --faithful-gf820), the output layout, and
# the same bits for any thread count (both schemes).
gen-input integrate --g 10 --r 65 --x 35 --steps 2,2,2 -o in.nps
integrate -i in.nps --faithful-gf820 -o out.nps --threads 1 --profile run.prof
verify --text-ref "$SRC/share/ref/integrate-checkpoint-year0.txt" --array reserve0 --rtol 1e-12 out.nps
# Year 40 (the spec's second checkpoint value, kept in the same reference file's comment).
y40=$(inspect --values 41 out.nps | awk '/reserve  f8/ {f = 1} f && /values/ {print $42; exit}')
awk -v v="$y40" 'BEGIN { d = (v - 2.2718034492774297) / 2.2718034492774297; exit !(d < 1e-12 && d > -1e-12) }' ||
  fail "year 40: $y40, want 2.2718034492774297"
# A wrong reference must fail (the check can fail).
echo '[ 0.6232110341 ]' > wrong.txt
expect_exit 1 '' -- verify --text-ref wrong.txt --array reserve0 --rtol 1e-12 out.nps
# Layout: [1, 121], zero at 120 - x = 85, NaN past it.
inspect out.nps | grep -q 'reserve  f8 \[1, 121\]' || fail "reserve is not [1, 121]"
inspect out.nps | grep -A1 'reserve  f8' | grep -q 'nan 35 ' || fail "want 35 NaN years past 120 - x"
integrate -i in.nps --faithful-gf820 --threads 2 | verify --against out.nps --rtol 0 --atol 0
inspect run.prof | grep -q profile || fail "no profile record"
integrate -i in.nps -o al1.nps --threads 1
integrate -i in.nps --threads 2 | verify --against al1.nps --rtol 0 --atol 0
no_leftovers .
