# ns-step and gen-input ns refuse bad input with exit 2 and a message naming the value.
expect_exit 2 'grid sizes must be integers from 1 to 1048576' -- gen-input ns --n 0
expect_exit 2 'grid sizes must be integers from 1 to 1048576' -- gen-input ns --n 8,-3,8
expect_exit 2 "takes N or NX,NY,NZ" -- gen-input ns --n 8,8
expect_exit 2 'must be at least 5 with noslip walls, got 4' -- gen-input ns --n 4 --bc noslip
expect_exit 2 "got 'sticky'" -- gen-input ns --bc x=sticky
expect_exit 2 'names axis x twice' -- gen-input ns --bc x=noslip,x=periodic
expect_exit 2 'AXIS=KIND' -- gen-input ns --bc q=noslip
expect_exit 2 'Reynolds number re must be positive' -- gen-input ns --re -5
expect_exit 2 'speed of sound c must be positive' -- gen-input ns --c 0
expect_exit 2 '--init must be' -- gen-input ns --init vortex
expect_exit 2 '--box takes one value or three' -- gen-input ns --box 1,2
expect_exit 2 '--width must be positive and finite' -- gen-input ns --init acoustic --width -1

gen-input ns --n 8 --c 10 >ok.nps
expect_exit_stdin 2 "input lacks the record 'rho'" <(gen-input array --name x --shape 4) -- ns-step
gen-input array --name rho --shape 8,8,8 >bad-kind.nps
expect_exit 2 "is not an ns.state" -- ns-step -i bad-kind.nps
expect_exit 2 '--order must be 2 or 4, got 3' -- ns-step -i ok.nps --order 3
expect_exit 2 "--precision must be fp64 or fp32, got 'fp16'" -- ns-step -i ok.nps --precision fp16
expect_exit 2 '--kernel must be 0 to 8, got 9' -- ns-step -i ok.nps --kernel 9
expect_exit 2 '--dt must be positive and finite' -- ns-step -i ok.nps --dt -1
expect_exit 2 '--cfl must be in (0, 2]' -- ns-step -i ok.nps --cfl 5
expect_exit 2 '--steps must be >= 0, got -2' -- ns-step -i ok.nps --steps -2
# an unstable explicit dt: a warning, refused with --strict (nothing written)
expect_exit 2 'exceeds the explicit stability estimate' -- ns-step -i ok.nps --dt 0.2 --steps 1 --strict -o never.nps
[ ! -e never.nps ] || fail "refused run left never.nps"
expect_exit 0 'warning: --dt 0.06 exceeds the explicit stability estimate' -- ns-step -i ok.nps --dt 0.06 --steps 1 -o warned.nps
# a run that blows up is refused, not written
expect_exit 2 'the run blew up' -- ns-step -i ok.nps --dt 1 --steps 50 -o blown.nps
[ ! -e blown.nps ] || fail "blown-up run left blown.nps"
# truncated input
head -c $(( $(wc -c <ok.nps) / 2 )) ok.nps >trunc.nps
expect_exit 2 '' -- ns-step -i trunc.nps
no_leftovers .
