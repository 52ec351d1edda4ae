# ns-step pipelines on the CPU: the regression reference, thread-count determinism,
# fp32 output, diagnostics, atomic output.
gen-input ns --n 12,10,8 --init random --bc x=noslip,y=freeslip,z=periodic --re 50 --c 4 --seed 3 >in.nps
ns-step -i in.nps --steps 5 --diag-every 1 --backend cpu -o out.nps
inspect out.nps >listing.txt
grep -q 'rho  f8 \[12, 10, 8\]' listing.txt || fail "no rho record: $(cat listing.txt)"
grep -q 'diagnostics  f8 \[6, 8\]' listing.txt || fail "diagnostics are not 6 rows of 8: $(cat listing.txt)"
# regression against the committed reference (made by this CPU backend at the time it was verified)
verify out.nps "$SRC/share/ref/ns-random-12x10x8.nps" --rtol 1e-12 --atol 1e-15
# the same bits for any thread count
ns-step -i in.nps --steps 5 --diag-every 1 --backend cpu --threads 1 -o t1.nps
ns-step -i in.nps --steps 5 --diag-every 1 --backend cpu --threads 2 -o t2.nps
verify t1.nps t2.nps --rtol 0 --atol 0
verify t1.nps out.nps --rtol 0 --atol 0
# order 2 differs from order 4 but not by much
ns-step -i in.nps --steps 5 --order 2 --backend cpu -o o2.nps
expect_exit 1 '' -- verify o2.nps out.nps --rtol 1e-12
# fp32 writes f4 and stays within 1e-4 of fp64
ns-step -i in.nps --steps 5 --precision fp32 --backend cpu -o f32.nps
inspect f32.nps | grep -q 'vx  f4' || fail "fp32 run did not write f4"
verify f32.nps out.nps --rtol 1e-4 --atol 1e-5 --ignore-dtype --ignore diagnostics
# a state can be stepped further: 2 + 3 steps == 5 steps
ns-step -i in.nps --steps 2 --dt 0.01 --backend cpu | ns-step --steps 3 --dt 0.01 --backend cpu -o two.nps
ns-step -i in.nps --steps 5 --dt 0.01 --backend cpu -o one.nps
verify two.nps one.nps --rtol 0 --atol 0 --ignore diagnostics
no_leftovers .
# gen-input's analytic states are made on all threads: the same bits on one and on three
for init in taylor-green-3d shear; do
  OMP_NUM_THREADS=1 gen-input ns --n 9,7,5 --init $init -o g1.nps
  OMP_NUM_THREADS=3 gen-input ns --n 9,7,5 --init $init -o g3.nps
  verify g1.nps g3.nps --rtol 0 --atol 0 >/dev/null || fail "gen-input ns --init $init differs between 1 and 3 threads"
done
