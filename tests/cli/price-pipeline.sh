# price through the real tools: reference streams, thread counts, sweeps, fp32,
# profile records, file output.
gen-input price --dataset small >small.in
gen-input price --dataset small >small2.in
cmp small.in small2.in || fail "gen-input price is not reproducible"
inspect small.in | grep -q 'problem  f8 \[9\]' || fail "gen-input price: wrong record"

# our CPU reference streams (written by the forward method), bit for bit
price -i small.in --backend cpu --method forward | verify --against "$SRC/share/ref/price-small.nps" --rtol 0 >/dev/null ||
  fail "small differs from share/ref/price-small.nps"
gen-input price --dataset medium -o medium.in
price -i medium.in --backend cpu --method forward | verify --against "$SRC/share/ref/price-medium.nps" --rtol 0 >/dev/null ||
  fail "medium differs from share/ref/price-medium.nps"
# the adjoint method (the default) gives the same prices to rounding
for d in small medium; do
  [ -e $d.in ] || gen-input price --dataset $d -o $d.in
  price -i $d.in --backend cpu -o $d.adj.nps
  verify $d.adj.nps "$SRC/share/ref/price-$d.nps" --rtol 1e-12 >$d.txt || { cat $d.txt; fail "$d: adjoint differs from forward"; }
  inspect $d.adj.nps --attrs | grep -q '"method": "adjoint"' || fail "method not recorded in attrs"
done

# the same bits for any thread count (strikes over threads, and a team on one strike)
for method in forward adjoint; do
  for outer in 1 3; do
    gen-input price --dataset small --outer $outer --num-t 32 -o o$outer.in
    price -i o$outer.in --backend cpu --method $method --threads 1 -o t1.nps
    price -i o$outer.in --backend cpu --method $method --threads 2 -o t2.nps
    price -i o$outer.in --backend cpu --method $method --threads 3 -o t3.nps
    verify t1.nps t2.nps --rtol 0 >/dev/null || fail "$method: 2 threads change the bits (outer $outer)"
    verify t1.nps t3.nps --rtol 0 >/dev/null || fail "$method: 3 threads change the bits (outer $outer)"
  done
done

# a sweep: one output record per parameter set, each equal to its own run
cat >sweep.txt <<'SWEEP'
# dataset small with other model parameters
alpha=0.25
nu=0.5 beta=0.6
s0=0.05 t=3 outer=4   # a comment
SWEEP
gen-input price --dataset small --num-t 32 --sweep sweep.txt -o sweep.in
[ "$(inspect sweep.in | grep -c 'problem  f8 \[9\]')" = 3 ] || fail "sweep: expected 3 problem records"
price -i sweep.in --backend cpu -o sweep.nps
[ "$(inspect sweep.nps | grep -c 'price  f8')" = 3 ] || fail "sweep: expected 3 price records"
inspect sweep.nps | grep -q 'price  f8 \[4\]' || fail "sweep: the third set has 4 strikes"
gen-input price --dataset small --num-t 32 --nu 0.5 --beta 0.6 | price --backend cpu -o second.nps
# compare the second record of the sweep with its own run through inspect's values
v1=$(inspect sweep.nps --values 16 | grep values | sed -n 2p)
v2=$(inspect second.nps --values 16 | grep values | sed -n 1p)
[ -n "$v1" ] && [ "$v1" = "$v2" ] || fail "sweep: the second record differs from its own run: '$v1' vs '$v2'"

# fp32 against fp64: single-precision accuracy, both methods
price -i small.in --backend cpu --precision fp32 --method forward -o f32f.nps
verify f32f.nps "$SRC/share/ref/price-small.nps" --rtol 1e-4 >f32.txt || { cat f32.txt; fail "fp32 (forward) far from fp64"; }
price -i small.in --backend cpu --precision fp32 -o f32.nps
verify f32.nps "$SRC/share/ref/price-small.nps" --rtol 1e-4 >f32.txt || { cat f32.txt; fail "fp32 (adjoint) far from fp64"; }
inspect f32.nps --attrs | grep -q '"precision": "fp32"' || fail "fp32 not recorded in attrs"

# provenance and attrs
inspect f32.nps --attrs | grep -q '"kind": "price.output"' || fail "kind price.output missing"
inspect f32.nps --attrs | grep -q "gen-input price" || fail "history lost the generator"

# a profile record is appended
price -i small.in --backend cpu --profile run.prof -o /dev/null
price -i small.in --backend cpu --profile run.prof -o /dev/null
[ "$(inspect run.prof | grep -c 'profile  f8')" = 2 ] || fail "expected two profile records"
no_leftovers .
