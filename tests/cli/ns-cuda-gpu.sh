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
