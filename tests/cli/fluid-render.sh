# render: PNGs of fluid-step's arrays, speed, frames, 3-D slices; bad input refused.
command -v render >/dev/null || { echo "SKIP: render not built (no libpng)"; exit 77; }
png_size() {  # prints "WIDTH HEIGHT" from the IHDR chunk
  local b; b=$(od -An -tu1 -j16 -N8 "$1" | tr -s ' \n' ' ')
  set -- $b
  echo "$(( ($1 << 24) + ($2 << 16) + ($3 << 8) + $4 )) $(( ($5 << 24) + ($6 << 16) + ($7 << 8) + $8 ))"
}
is_png() { [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$1 is not a PNG"; }

gen-input fluid --n 40 | fluid-step --steps 3 --snapshot-every 1 -o s.nps
render -i s.nps --no-colorbar --scale 1 -o d.png
is_png d.png
[ "$(png_size d.png)" = "42 42" ] || fail "d.png is $(png_size d.png), expected 42 42"
render -i s.nps --interior --no-colorbar --scale 3 -o d3.png
[ "$(png_size d3.png)" = "120 120" ] || fail "d3.png is $(png_size d3.png), expected 120 120"
render -i s.nps --speed u,v --cmap inferno --no-colorbar --scale 1 -o speed.png
is_png speed.png
cmp -s d.png speed.png && fail "density and speed images are the same"
render -i s.nps --no-colorbar --scale 1 -o d-again.png
cmp d.png d-again.png || fail "render is not reproducible"
# A fixed range that saturates everything gives a one-colour image: far smaller.
render -i s.nps --value-range 1e30:2e30 --no-colorbar --scale 1 -o flat.png
[ "$(stat -c %s flat.png)" -lt "$(stat -c %s d.png)" ] || fail "--value-range had no effect"
# Frames: one PNG per snapshot.
render -i s.nps --array snap_d --frames -o f-%02d.png
for k in 00 01 02; do is_png f-$k.png; done
[ ! -e f-03.png ] || fail "more frames than snapshots"
# A slice of a 3-D array.
gen-input array --name q --shape 4,5,6 --fill linspace -o q.nps
render -i q.nps --array q --slice 2:1 --no-colorbar --scale 1 -o q.png
[ "$(png_size q.png)" = "5 4" ] || fail "slice 2:1 of [4,5,6] is $(png_size q.png), expected 5 4"
render -i q.nps --array q --no-colorbar --scale 1 -o qmid.png
[ "$(png_size qmid.png)" = "6 5" ] || fail "default slice of [4,5,6] is $(png_size qmid.png), expected 6 5"

expect_exit 2 "no record named 'zz' (records: snap_d, snap_u, snap_v, d, u, v" -- render -i s.nps --array zz -o x.png
expect_exit 2 "--slice 0:9 is outside 'q' of shape [4, 5, 6]" -- render -i q.nps --array q --slice 0:9 -o x.png
expect_exit 2 "--slice applies to 3-D arrays" -- render -i s.nps --slice 0:1 -o x.png
# the index in digits only (stoll alone took a sign and a leading blank)
expect_exit 2 "--slice must be AXIS:INDEX with AXIS 0, 1, 2 or an axis name and INDEX >= 0, got '0:+1'" -- render -i q.nps --array q --slice 0:+1 -o x.png
expect_exit 2 "--slice must be AXIS:INDEX" -- render -i q.nps --array q --slice '0: 1' -o x.png
expect_exit 2 "--value-range must be LO:HI, got '3'" -- render -i s.nps --value-range 3 -o x.png
expect_exit 2 "--cmap must be viridis, inferno, gray or coolwarm, got 'jet'" -- render -i s.nps --cmap jet -o x.png
expect_exit 2 "--frames needs one integer conversion in -o" -- render -i s.nps --frames -o x.png
gen-input array --name hyper --shape 2,2,2,2 -o hyper.nps
expect_exit 2 "render draws 2-D arrays or slices of 3-D ones as images; 'hyper' has shape [2, 2, 2, 2]" -- render -i hyper.nps --array hyper -o x.png
[ ! -e x.png ] || fail "a refused render left x.png"
no_leftovers .
