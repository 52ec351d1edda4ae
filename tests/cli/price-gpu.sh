# price on a CUDA device: CPU vs CUDA in fp64 within rel 1e-10 for both methods,
# run-to-run bits, --devices all, fp32, device-memory refusal. Skipped without a device.
require_gpu
R="$SRC/share/ref"

# the adjoint method (the default): CUDA against the CPU's forward reference and the
# CPU's adjoint, run to run
for d in small medium large; do
  gen-input price --dataset $d -o $d.in
  price -i $d.in --backend cuda -o $d.adj.nps
  verify $d.adj.nps "$R/price-$d.nps" --rtol 1e-10 >$d.txt || { cat $d.txt; fail "$d: CUDA adjoint differs from the CPU reference"; }
  price -i $d.in --backend cpu -o $d.cpuadj.nps
  verify $d.adj.nps $d.cpuadj.nps --rtol 1e-12 >$d.txt || { cat $d.txt; fail "$d: CUDA adjoint differs from the CPU adjoint"; }
done
verify --text-ref "$R/finpar-locvolcalib/large.output.data" --array price --range 0:128 --rtol 1e-5 -i large.adj.nps >/dev/null ||
  fail "large on CUDA (adjoint) differs from FinPar"
price -i large.in --backend cuda -o large.adj2.nps
verify large.adj.nps large.adj2.nps --rtol 0 >/dev/null || fail "CUDA adjoint changes from run to run"
for shape in "37 45 9" "3 3 2" "300 1100 4" "1030 20 5"; do
  set -- $shape
  gen-input price --dataset small --outer 9 --num-x $1 --num-y $2 --num-t $3 -o shp.in
  price -i shp.in --backend cpu --method forward -o shp.cpu.nps
  price -i shp.in --backend cuda -o shp.gpu.nps
  verify shp.gpu.nps shp.cpu.nps --rtol 1e-10 >shp.txt || { cat shp.txt; fail "adjoint $shape: CUDA differs from CPU forward"; }
done
price -i medium.in --backend cuda --precision fp32 -o ma32.nps
verify ma32.nps "$R/price-medium.nps" --rtol 1e-4 >m32.txt || { cat m32.txt; fail "fp32 CUDA adjoint far from fp64"; }

# the forward method (FinPar's algorithm on the GPU)
for d in small medium large; do
  price -i $d.in --backend cuda --method forward -o $d.gpu.nps
  verify $d.gpu.nps "$R/price-$d.nps" --rtol 1e-10 >$d.txt || { cat $d.txt; fail "$d: CUDA differs from the CPU reference"; }
done
# the acceptance pipeline on the GPU
verify --text-ref "$R/finpar-locvolcalib/large.output.data" --array price --range 0:128 --rtol 1e-5 -i large.gpu.nps >/dev/null ||
  fail "large on CUDA differs from FinPar"
# run to run: the same bits
price -i large.in --backend cuda --method forward -o large.gpu2.nps
verify large.gpu.nps large.gpu2.nps --rtol 0 >/dev/null || fail "CUDA results change from run to run"
# both x kernels (thread per column; thread per column and 8 rows) against the CPU
for k in sweep chunk; do
  price -i large.in --backend cuda --method forward --gpu-kernel $k -o large.$k.nps
  verify large.$k.nps "$R/price-large.nps" --rtol 1e-10 >$k.txt || { cat $k.txt; fail "--gpu-kernel $k differs from the CPU"; }
  price -i small.in --backend cuda --method forward --gpu-kernel $k -o small.$k.nps
  verify small.$k.nps "$R/price-small.nps" --rtol 1e-10 >$k.txt || { cat $k.txt; fail "small, --gpu-kernel $k differs from the CPU"; }
done
# grouping of strikes (L2-resident groups) and --devices all do not change the bits
price -i large.in --backend cuda --method forward --gpu-group 7 -o g7.nps
verify large.gpu.nps g7.nps --rtol 0 >/dev/null || fail "--gpu-group changes the bits"
price -i large.in --backend cuda --method forward --devices all -o all.nps
verify large.gpu.nps all.nps --rtol 0 >/dev/null || fail "--devices all changes the bits"
# odd sizes: numX, numY not multiples of a warp, a sweep
gen-input price --dataset small --outer 5 --num-x 37 --num-y 45 --num-t 9 -o odd.in
price -i odd.in --backend cpu --method forward -o odd.cpu.nps
for k in sweep chunk; do
  price -i odd.in --backend cuda --method forward --gpu-kernel $k -o odd.gpu.nps
  verify odd.gpu.nps odd.cpu.nps --rtol 1e-10 >odd.txt || { cat odd.txt; fail "odd sizes, --gpu-kernel $k: CUDA differs from CPU"; }
done
gen-input price --dataset small --outer 3 --num-x 300 --num-y 1100 --num-t 4 -o wide.in
price -i wide.in --backend cpu --method forward -o wide.cpu.nps
price -i wide.in --backend cuda --method forward -o wide.gpu.nps
verify wide.gpu.nps wide.cpu.nps --rtol 1e-10 >wide.txt || { cat wide.txt; fail "numY 1100: CUDA differs from CPU"; }
expect_exit 2 "--gpu-kernel chunk handles numX <= 256, got 300" -- price -i wide.in --backend cuda --method forward --gpu-kernel chunk -o w.nps
# fp32 on the device against the fp64 reference
price -i medium.in --backend cuda --method forward --precision fp32 -o m32.nps
verify m32.nps "$R/price-medium.nps" --rtol 1e-4 >m32.txt || { cat m32.txt; fail "fp32 CUDA far from fp64"; }
# a problem whose tables cannot fit in device memory: exit 3, nothing written
gen-input price --outer 1 --num-x 16384 --num-y 16384 --num-t 1000 -o huge.in
expect_exit 3 "device memory" -- price -i huge.in --backend cuda --method forward -o huge.nps
expect_exit 3 "shared memory" -- price -i huge.in --backend cuda -o huge.nps
[ ! -e huge.nps ] || fail "output written after a resource failure"
no_leftovers .
