# The everyday basis on CUDA: select mortality (a factor, a select table), mortality
# improvement (by age, and by age and calendar year), joint-life and
# last-survivor annuities (a table life among them, equivalence premiums, discrete
# payments) and each policy's own interest (rates and a curve, a spouse pension among
# them) agree with the CPU backend within 1e-13 relative and give the same bits run to
# run and over a device list; so do their cash flows and durations.
require_gpu
. "$SRC/tests/cli/integrate_backends.sh"
SSSM="--mortality insured=gm:0.00022,-5.568636235841013,0.05076631123304232"
cat > two.csv <<CSV
x,y,product,deferment,premium
60,55,joint-life,,0
60,55,last-survivor,,0
50,53,last-survivor,10,equivalence
45,70,joint-life,5,equivalence
CSV
gen-input integrate --product annuity --x 60 --rate 0.04879016416943205 $SSSM --select insured=2,0.9 -o sel.nps
gen-input integrate --product endowment --x 40 --term 25 --premium equivalence \
  --select-table "$SRC/share/examples/integrate-select-table.csv" -o seltab.nps
gen-input integrate --from-text two.csv $SSSM \
  --mortality-table spouse="$SRC/share/examples/integrate-life-table.csv:q_male" -o two.nps
cat > own.csv <<CSV
product,x,term,premium,rate
annuity,40,,0,0.03
term,50,20,equivalence,0.06
endowment,45,20,equivalence,$SRC/share/ref/yield-curve.txt
spouse,35,,0,0.04
annuity,60,,0,
CSV
gen-input integrate --from-text own.csv --steps 4,2,4 -o own.nps
"$PY" -c "
print('age,ai')
for a in range(0, 121): print(f'{a},{0.02 if a < 80 else 0.01}')" > ai.csv
printf 'x,product,year,premium\n65,annuity,2025,0\n40,endowment,2031,equivalence\n' > years.csv
gen-input integrate --from-text years.csv --term 25 --mortality-table "$SRC/share/examples/integrate-life-table.csv:q_female" \
  --improvement insured=ai.csv --base-year 2020 -o improve.nps
"$PY" -c "
print('age,' + ','.join(str(y) for y in range(2019, 2041)))
for a in range(20, 121): print(f'{a},' + ','.join(f'{0.03 - 0.0004 * (y - 2019) - 0.0001 * (a // 10):.6f}' for y in range(2019, 2041)))" > aiy.csv
printf 'x,y,product,year,premium
65,,annuity,2025,0
40,,endowment,2031,equivalence
60,57,last-survivor,2020,0
' > yearsy.csv
gen-input integrate --from-text yearsy.csv --term 25 --mortality-table "$SRC/share/examples/integrate-life-table.csv:q_female" \
  --mortality-table spouse="$SRC/share/examples/integrate-life-table.csv:q_male" \
  --improvement-table insured=aiy.csv --improvement-table spouse=aiy.csv --base-year 2020 -o improve-by-year.nps
for f in sel seltab two own improve improve-by-year; do
  for a in "" "--frequency 12" "--frequency 1 --timing arrears"; do
    [ "$f" = own ] && [ -n "$a" ] && continue  # a spouse pension: continuous only
    # atol 1e-13: an equivalence premium's reserve at 0 is zero up to the cancellation of terms
    # of order 1-10 (CPU and CUDA left -5.3e-15 and -7.1e-15 there), the rest within rtol 1e-13
    backends_agree $f.nps 1e-13 $a
  done
done
integrate -i own.nps --duration --backend cpu -o d-cpu.nps
integrate -i own.nps --duration --backend cuda | verify --against d-cpu.nps --rtol 1e-9 --atol 1e-12 ||
  fail "--duration with the policies' own rates: CUDA and CPU differ"
# Cash flows and durations on the everyday basis (select, two lives, improvement by year).
for f in sel seltab two improve-by-year; do
  integrate -i $f.nps --frequency 1 --backend cpu --cash-flows --duration -o $f-cf-cpu.nps
  integrate -i $f.nps --frequency 1 --backend cuda --cash-flows --duration -o $f-cf-gpu.nps
  verify $f-cf-gpu.nps $f-cf-cpu.nps --rtol 1e-13 --atol 1e-13 --rtol duration=1e-6 --rtol reserve_rate_derivative=1e-6 \
    --atol duration=1e-8 --atol reserve_rate_derivative=1e-8 || fail "$f --cash-flows --duration: CUDA and CPU differ"
  integrate -i $f.nps --frequency 1 --backend cuda --cash-flows --duration | verify --against $f-cf-gpu.nps --rtol 0 --atol 0 ||
    fail "$f --cash-flows --duration: CUDA not reproducible"
done
