#!/bin/sh
# The wake of a circular cylinder at Re = 100 (docs/ns.md, "A shipped example"):
# a 2-D cylinder of diameter 1 (16 points across) in a free stream 1 along x, Mach 0.1,
# 0.05 off the grid's centre line so that the shedding starts early; snapshots of the
# vorticity every 20000 steps, the last one drawn by render. About t U/D = 160; a few
# minutes on a CPU, seconds with --backend cuda.
set -e
gen-input ns --n 384,192,1 --box 24,12,1 --re 100 --c 10 --body cylinder:6,6.05,0.5 --free-stream 1,0,0 --fringe 4 -o cyl.nps
ns-step -i cyl.nps --steps 60000 --cfl 0.5 --diag-every 20 --snapshot-every 20000 --snapshot-fields vorticity_z -o wake.nps
render -i wake.nps --array snap_vorticity_z --slice 2:0 --value-range -3:3 --cmap inferno -o wake.png
# the records (snap_vorticity_z three times, the state, diagnostics, body_force: t, Fx, Fy,
# Fz, whence Cd = 2 Fx and Cl = 2 Fy with D = 1, U = 1 and a span of 1)
inspect wake.nps
