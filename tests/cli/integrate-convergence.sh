# integrate: convergence order by halving the steps (g=10 r=65 x=35, year 0).
# --faithful-gf820: the inner integrand jumps at s = k off the step grid -> 1st order
# (errors halve). The default: step boundaries at every break -> 4th order
# (differences shrink about 16 times).
year0() { inspect --values 1 "$1" | awk '/reserve0/ {f = 1} f && /values/ {print $2; exit}'; }
for s in 1 2 4; do
  gen-input integrate --steps $s,$s,$s | integrate --faithful-gf820 -o f$s.nps
  gen-input integrate --steps $s,$s,$s | integrate -o a$s.nps
done
ratio() { awk -v a="$(year0 $1)" -v b="$(year0 $2)" -v c="$(year0 $3)" 'BEGIN { print (a - b) / (b - c) }'; }
rf=$(ratio f1.nps f2.nps f4.nps)
ra=$(ratio a1.nps a2.nps a4.nps)
echo "faithful difference ratio $rf (1st order: 2); aligned $ra (4th order: 16)"
awk -v r="$rf" 'BEGIN { exit !(r > 1.8 && r < 2.2) }' || fail "faithful scheme: ratio $rf is not about 2"
awk -v r="$ra" 'BEGIN { exit !(r > 12 && r < 20) }' || fail "--align-breaks: ratio $ra is not about 16"
# The spec's measured faithful values at 1, 2, 4 steps per year (2 middle steps at 2 and 4; ours uses s,s,s).
awk -v v="$(year0 f1.nps)" 'BEGIN { exit !(v > 0.62809 && v < 0.62811) }' || fail "1 step per year: $(year0 f1.nps)"
# The aligned scheme's year 0 is within 1e-6 of the converged 0.6183124634.
awk -v v="$(year0 a4.nps)" 'BEGIN { d = v - 0.6183124634; exit !(d < 1e-6 && d > -1e-6) }' || fail "aligned 4 steps: $(year0 a4.nps)"
# A young insured (x < 15: the kink of gp at tau = 15) with fractional r, g, x:
# still 4th order with --align-breaks.
# (From 3 inner steps a year: at 1 and 2 the default scheme adds steps where the
# spouse's force passes 1 a year, near 120, as it must for stability.)
for s in 3 6 12; do
  gen-input integrate --g 5 --r 62.5 --x 10.25 --steps $s,$s,$s | integrate --no-error-estimate -o y$s.nps
done
ry=$(ratio y3.nps y6.nps y12.nps)
echo "young insured, aligned: ratio $ry"
awk -v r="$ry" 'BEGIN { exit !(r > 12 && r < 20) }' || fail "--align-breaks, x=10.25 r=62.5 g=5: ratio $ry is not about 16"
