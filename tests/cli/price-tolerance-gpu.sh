# The user's contracts at the default tolerance (the sinh grid, graded time steps,
# price_error from the grid coarser by 2) on a CUDA device against the CPU backend:
# the same scheme, so the same prices, errors and implied vols to rounding; the
# same bits run to run. Skipped without a device.
require_gpu
for rho in 0 -0.4; do
  gen-input price --s0 1 --alpha 0.25 --beta 0.7 --nu 0.5 --rho $rho --strikes 0.8:1.25:20 \
    --maturities 0.25,0.5,1,2,5 --option put -o c$rho.in
  price -q -i c$rho.in --backend cpu --greeks --implied-vol -o c$rho.cpu.nps
  price -q -i c$rho.in --backend cuda --greeks --implied-vol -o c$rho.gpu.nps
  inspect c$rho.gpu.nps | grep -q 'price_error  f8 \[5, 20\]' || fail "rho $rho: CUDA output lacks price_error [5, 20]"
  verify c$rho.gpu.nps c$rho.cpu.nps --ignore price_error --ignore implied_vol_error --rtol 1e-10 --atol 1e-13 >v.txt ||
    { cat v.txt; fail "rho $rho: CUDA differs from the CPU at the default tolerance"; }
  # the error estimates are differences of two prices: the prices' rounding, absolute
  verify c$rho.gpu.nps c$rho.cpu.nps --array price_error --rtol 0 --atol 1e-10 >v.txt ||
    { cat v.txt; fail "rho $rho: CUDA's price_error differs from the CPU's"; }
  price -q -i c$rho.in --backend cuda --greeks --implied-vol -o c$rho.gpu2.nps
  verify c$rho.gpu.nps c$rho.gpu2.nps --rtol 0 >/dev/null || fail "rho $rho: CUDA results change from run to run"
done
no_leftovers .
