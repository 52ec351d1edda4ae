# ns-step CUDA backend against the CPU through the tools (label gpu).
require_gpu
gen-input ns --n 37,19,45 --init random --bc x=noslip,y=freeslip,z=noflux --re 100 --c 5 --seed 8 >in.nps
ns-step -i in.nps --steps 10 --diag-every 5 --backend cpu -o cpu.nps
ns-step -i in.nps --steps 10 --diag-every 5 --backend cuda -o gpu.nps
verify gpu.nps cpu.nps --rtol 1e-12 --atol 1e-13
ns-step -i in.nps --steps 10 --diag-every 5 --backend cuda -o gpu2.nps
verify gpu2.nps gpu.nps --rtol 0 --atol 0
ns-step -i in.nps --steps 10 --backend cuda --precision fp32 -o gpu32.nps
verify gpu32.nps cpu.nps --rtol 1e-4 --atol 1e-4 --ignore-dtype --ignore diagnostics
# the reference pipeline on the GPU
gen-input ns --n 12,10,8 --init random --bc x=noslip,y=freeslip,z=periodic --re 50 --c 4 --seed 3 |
  ns-step --steps 5 --diag-every 1 --backend cuda | verify --against "$SRC/share/ref/ns-random-12x10x8.nps" --rtol 1e-12 --atol 1e-14
# every sub-step kernel variant (compiled in units of their own, kernels/ns/cuda_substep_*.cu),
# fp64 and fp32, against the CPU; a free stream (the sponge's kernels); a 2-D problem (the flat kernel)
for k in 0 1 2 3 5 6 7; do
  ns-step -i in.nps --steps 4 --kernel $k --backend cuda -o gk.nps
  ns-step -i in.nps --steps 4 --kernel $k --backend cpu -o ck.nps
  verify gk.nps ck.nps --rtol 1e-12 --atol 1e-13 --ignore diagnostics > /dev/null || fail "--kernel $k: CPU and CUDA differ (fp64)"
  ns-step -i in.nps --steps 4 --kernel $k --backend cuda --precision fp32 -o gk32.nps
  verify gk32.nps ck.nps --rtol 1e-4 --atol 1e-4 --ignore-dtype --ignore diagnostics > /dev/null || fail "--kernel $k: CPU and CUDA differ (fp32)"
done
gen-input ns --n 24,20,16 --init random --bc x=periodic,y=noslip,z=freeslip --free-stream 0.3,0,0 --seed 5 > fs.nps
ns-step -i fs.nps --steps 4 --backend cpu -o fsc.nps
ns-step -i fs.nps --steps 4 --backend cuda -o fsg.nps
verify fsg.nps fsc.nps --rtol 1e-12 --atol 1e-13 --ignore diagnostics > /dev/null || fail "free stream: CPU and CUDA differ"
gen-input ns --n 40,30,1 --init random --bc x=periodic,y=noslip,z=periodic --seed 6 > flat.nps
ns-step -i flat.nps --steps 4 --backend cpu -o flc.nps
ns-step -i flat.nps --steps 4 --backend cuda -o flg.nps
verify flg.nps flc.nps --rtol 1e-12 --atol 1e-13 --ignore diagnostics > /dev/null || fail "2-D (flat kernel): CPU and CUDA differ"
