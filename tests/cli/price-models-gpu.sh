# price's user contracts on a CUDA device: several maturities, calls and puts,
# Greeks, the mixed term (rho != 0) and calibration, CUDA against the CPU backend.
# Skipped without a device.
require_gpu

# a grid of strikes at three maturities (rho = 0 and rho != 0), Greeks and implied vols
for rho in 0 -0.55; do
  gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --rho $rho --num-x 61 --num-y 45 --steps-per-year 20 \
    --strikes 0.7:1.4:15 --maturities 0.25,1,2 --option put -o m$rho.in
  price -i m$rho.in --backend cpu --greeks --implied-vol -o m$rho.cpu.nps
  price -i m$rho.in --backend cuda --greeks --implied-vol -o m$rho.gpu.nps
  verify m$rho.gpu.nps m$rho.cpu.nps --rtol 1e-10 --atol 1e-13 >v.txt || { cat v.txt; fail "rho $rho: CUDA adjoint (prices, Greeks) differs from the CPU"; }
  price -i m$rho.in --backend cuda --greeks --implied-vol -o m$rho.gpu2.nps
  verify m$rho.gpu.nps m$rho.gpu2.nps --rtol 0 >/dev/null || fail "rho $rho: CUDA results change from run to run"
  # the CPU forward method (the reference for the transposed steps) against CUDA's adjoint
  price -i m$rho.in --backend cpu --method forward --greeks -o m$rho.fwd.nps
  verify m$rho.gpu.nps m$rho.fwd.nps --ignore implied_vol --ignore implied_vol_error --rtol 1e-9 --atol 1e-12 >v.txt ||
    { cat v.txt; fail "rho $rho: CUDA adjoint differs from the CPU forward method"; }
done
# the mixed term's pass as one kernel a batch of steps (a cluster of blocks a lane): 72
# steps (three batches, the pivot buffers reused), rows and columns split over 1, 2 or
# 8 blocks (several rounds of rows and columns a block, or a few rows each) and the
# cluster the device takes (auto: 16 where it fits), Greeks as four lanes; against the
# CPU, the same bits whatever the split, and the four-kernel path
# (NUMPIPE_PRICE_FUSED=0) against the CPU too
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --rho -0.55 --num-x 61 --num-y 45 --steps-per-year 36 \
  --strikes 0.7:1.4:15 --maturities 0.25,1,2 --option put -o f.in
price -i f.in --backend cpu --greeks -o f.cpu.nps
for cs in 1 2 8 auto; do
  if [ $cs = auto ]; then NUMPIPE_PRICE_FUSED=1 price -i f.in --backend cuda --greeks -o f$cs.nps
  else NUMPIPE_PRICE_FUSED=1 NUMPIPE_PRICE_CLUSTER=$cs price -i f.in --backend cuda --greeks -o f$cs.nps; fi
  verify f$cs.nps f.cpu.nps --rtol 1e-10 --atol 1e-13 >v.txt || { cat v.txt; fail "fused pass, $cs blocks a lane: CUDA differs from the CPU"; }
  [ $cs = 1 ] || verify f1.nps f$cs.nps --rtol 0 >/dev/null || fail "fused pass: the bits depend on the blocks a lane (1, $cs)"
done
NUMPIPE_PRICE_FUSED=0 price -i f.in --backend cuda --greeks -o f0.nps
verify f0.nps f.cpu.nps --rtol 1e-10 --atol 1e-13 >v.txt || { cat v.txt; fail "four-kernel mixed pass: CUDA differs from the CPU"; }
NUMPIPE_PRICE_FUSED=1 price -i f.in --backend cuda --precision fp32 -o f32.nps
verify f32.nps f.cpu.nps --array price --rtol 2e-4 --atol 1e-6 >v.txt || { cat v.txt; fail "fused pass in fp32 far from fp64"; }
# a wide grid: fewer warps a block (4), many rounds; one too wide for a block's shared
# memory falls back to the four kernels (and NUMPIPE_PRICE_FUSED=1 refuses it)
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --rho 0.4 --num-x 300 --num-y 1100 --num-t 4 \
  --strikes 0.8,1,1.2 --maturities 0.5,1 -o fw.in
price -i fw.in --backend cpu -o fw.cpu.nps
NUMPIPE_PRICE_FUSED=1 price -i fw.in --backend cuda -o fw.gpu.nps
verify fw.gpu.nps fw.cpu.nps --rtol 1e-10 --atol 1e-13 >v.txt || { cat v.txt; fail "fused pass, 300 x 1100: CUDA differs from the CPU"; }
gen-input price --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --rho 0.4 --num-x 40 --num-y 4000 --num-t 3 \
  --strikes 0.9,1.1 -o fx.in
price -i fx.in --backend cpu -o fx.cpu.nps
price -i fx.in --backend cuda -o fx.gpu.nps
verify fx.gpu.nps fx.cpu.nps --rtol 1e-10 --atol 1e-13 >v.txt || { cat v.txt; fail "40 x 4000 (four-kernel fallback): CUDA differs from the CPU"; }
expect_exit 3 "NUMPIPE_PRICE_FUSED=1" -- env NUMPIPE_PRICE_FUSED=1 price -i fx.in --backend cuda -o x.nps
expect_exit 2 "NUMPIPE_PRICE_FUSED" -- env NUMPIPE_PRICE_FUSED=yes price -i f.in --backend cuda -o x.nps
expect_exit 2 "NUMPIPE_PRICE_CLUSTER" -- env NUMPIPE_PRICE_CLUSTER=3 price -i f.in --backend cuda -o x.nps

# the CUDA forward method on the user's contracts (rho = 0), Greeks from the grid's points
price -i m0.in --backend cuda --method forward --greeks -o m0.gfwd.nps
verify m0.gfwd.nps m0.fwd.nps --rtol 1e-10 --atol 1e-13 >v.txt || { cat v.txt; fail "CUDA forward contracts differ from the CPU's"; }
expect_exit 2 "no mixed term" -- price -i m-0.55.in --backend cuda --method forward -o x.nps
# fp32 on the device against fp64
price -i m-0.55.in --backend cuda --precision fp32 -o m32.nps
verify m32.nps m-0.55.cpu.nps --array price --rtol 2e-4 --atol 1e-6 >v.txt || { cat v.txt; fail "fp32 CUDA far from fp64"; }
# FinPar's large set with the mixed term: CUDA against the CPU
gen-input price --dataset large --rho 0.3 -o lr.in
price -i lr.in --backend cuda -o lr.gpu.nps
price -i lr.in --backend cpu -o lr.cpu.nps
verify lr.gpu.nps lr.cpu.nps --rtol 1e-10 --atol 1e-14 >v.txt || { cat v.txt; fail "large, rho 0.3: CUDA differs from the CPU"; }

# calibration on the device recovers the parameters the quotes were made with, and
# agrees with the CPU's fit
{ echo "strike maturity type"; for t in 0.5 1 2; do for k in 0.8 0.9 1 1.1 1.2; do
    [ "$k" = 0.8 ] || [ "$k" = 0.9 ] && echo "$k $t put" || echo "$k $t call"; done; done; } >c.txt
gen-input price --from-text c.txt --s0 1 --alpha 0.3 --nu 0.5 --beta 0.7 --rho -0.4 --num-x 64 --num-y 32 --steps-per-year 24 -o c.nps
price -i c.nps --backend cuda --implied-vol -o c.out.nps
vols=$(inspect c.out.nps --values 1000 | awk '/^record [0-9]+: implied_vol /{f=1} f && !d && /^  values/{sub(/^  values /,""); print; d = 1}')
{ echo "strike maturity type implied_vol"; paste -d' ' <(tail -n +2 c.txt) <(echo $vols | tr ' ' '\n'); } >q.txt
gen-input price --from-text q.txt --s0 1 --alpha 0.4 --nu 0.3 --beta 0.7 --rho 0 --num-x 64 --num-y 32 --steps-per-year 24 -o q.nps
price -i q.nps --calibrate --backend cuda -o cal.gpu.nps
price -i q.nps --calibrate --backend cpu -o cal.cpu.nps
inspect cal.gpu.nps --attrs | grep '"converged": true' >/dev/null || fail "CUDA calibration did not converge"
got=$(inspect cal.gpu.nps --values 3 | awk '!d && /^  values/{print; d = 1}')
echo "$got" | awk '{ if (($2 - 0.3)^2 > 1e-12 || ($3 - 0.5)^2 > 1e-12 || ($4 + 0.4)^2 > 1e-12) exit 1 }' ||
  fail "CUDA calibration: $got, want 0.3 0.5 -0.4"
verify cal.gpu.nps cal.cpu.nps --array calibrated --rtol 1e-7 >v.txt || { cat v.txt; fail "CUDA and CPU calibrations differ"; }
no_leftovers .
