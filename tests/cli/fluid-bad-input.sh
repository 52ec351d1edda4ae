# fluid-step and gen-input fluid refuse bad input with exit 2, a message, and no output.
arr() { gen-input array --dtype f4 --fill zeros "$@"; }
state() {  # state SIDE_D SIDE_U: six zero records; u of another side
  arr --name d --shape $1,$1; arr --name u --shape $2,$2; arr --name v --shape $1,$1
  arr --name d0 --shape $1,$1; arr --name u0 --shape $1,$1; arr --name v0 --shape $1,$1
}

expect_exit 2 '--n must be in [16' -- gen-input fluid --n 15
expect_exit 2 "--scene must be react, empty, vortex, plume or random, got 'x'" -- gen-input fluid --n 32 --scene x

state 17 17 > small.nps
expect_exit 2 'grid too small: ny = 15 (shape [17, 17]), need 16 or more' -- fluid-step -i small.nps -o out.nps
state 18 20 > mismatch.nps
expect_exit 2 "shape of 'u' is [20, 20], expected [18, 18] like 'd'" -- fluid-step -i mismatch.nps -o out.nps
{ arr --name d --shape 18,18; arr --name u --shape 18,18; arr --name v --shape 18,18; arr --name d0 --shape 18,18; arr --name u0 --shape 18,18; } > missing.nps
expect_exit 2 "missing record 'v0'" -- fluid-step -i missing.nps -o out.nps
{ arr --name d --shape 18,18; arr --name u --shape 18,18
  np-testcraft fill v f4 18,18 inf   # non-finite (gen-input refuses to write it)
  arr --name d0 --shape 18,18; arr --name u0 --shape 18,18; arr --name v0 --shape 18,18; } > inf.nps
expect_exit 2 "non-finite value in 'v' at [0, 0]: inf" -- fluid-step -i inf.nps -o out.nps
{ arr --name d --shape 18,16; } > rect.nps
expect_exit 2 "missing record 'u'" -- fluid-step -i rect.nps -o out.nps
state 18 18 > ok.nps
gen-input array --name d --shape 18,16 --dtype f4 > rect2.nps
cat rect2.nps >> rect.nps
# one state per stream: a second record of a name is refused, not silently preferred
expect_exit 2 "the input holds two records 'd' (records 0 and 6)" -- bash -c "cat ok.nps rect2.nps | fluid-step -o out.nps"
with_d() {  # with_d SHAPE: a state whose 'd' has SHAPE, the other records 18 x 18
  arr --name d --shape $1; arr --name u --shape 18,18; arr --name v --shape 18,18
  arr --name d0 --shape 18,18; arr --name u0 --shape 18,18; arr --name v0 --shape 18,18
}
# a rectangular 'd' is a scene's grid; the other records must match it
with_d 18,16 > rect2s.nps
expect_exit 2 "grid too small: nx = 14 (shape [18, 16]), need 16 or more" -- fluid-step -i rect2s.nps -o out.nps
with_d 18,20 > rect3.nps
expect_exit 2 "shape of 'u' is [18, 18], expected [18, 20] like 'd'" -- fluid-step -i rect3.nps -o out.nps
with_d 18,18,2 > cube.nps
expect_exit 2 "record 'd' must be a 2-D array [ny+2, nx+2], got shape [18, 18, 2]" -- fluid-step -i cube.nps -o out.nps
expect_exit 2 "--scheme must be fused or stam, got 'euler'" -- fluid-step --scheme euler -i ok.nps -o out.nps
expect_exit 2 '--steps must be >= 0, got -1' -- fluid-step --steps -1 -i ok.nps -o out.nps
expect_exit 2 '--iters must be in [1, 100000], got 0' -- fluid-step --iters 0 -i ok.nps -o out.nps
expect_exit 2 '--dt must be finite and >= 0, got -1' -- fluid-step --dt -1 -i ok.nps -o out.nps
expect_exit 2 "--precision must be fp32 or fp64, got 'fp16'" -- fluid-step --precision fp16 -i ok.nps -o out.nps
expect_exit 2 "--forcing must be react or none, got 'wind'" -- fluid-step --forcing wind -i ok.nps -o out.nps
[ ! -e out.nps ] || fail "a refused run left out.nps"
no_leftovers .
# The good state runs.
fluid-step --steps 2 -i ok.nps -o out.nps
[ -s out.nps ] || fail "the valid state gave no output"
