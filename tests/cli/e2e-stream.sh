# The stream's frames through the tools: the bytes a tool writes do not depend on
# the I/O thread count (NUMPIPE_IO_THREADS), --compress none|fast|LEVEL and
# NUMPIPE_ZSTD_LEVEL=0 give the same arrays (read by the C++ tools, the Python
# reader and, where installed, the zstd program), split records flow through
# pipes, bad values are refused before any work.

# 3.2 million doubles (25.6 MB): a header frame and 25 payload frames. (The command
# line is in the stream's attrs: runs compared byte for byte write to stdout.)
gen-input array --name x --shape 3200000 --fill normal --seed 11 > ref.nps
for t in 1 3 8; do
  NUMPIPE_IO_THREADS=$t gen-input array --name x --shape 3200000 --fill normal --seed 11 > t$t.nps
  cmp ref.nps t$t.nps || fail "gen-input's bytes differ with NUMPIPE_IO_THREADS=$t"
done
NUMPIPE_ZSTD_LEVEL=1 gen-input array --name x --shape 3200000 --fill normal --seed 11 > l1.nps
cmp ref.nps l1.nps || fail "level 1 is not the default"
for c in none fast 1 9; do
  NUMPIPE_IO_THREADS=2 gen-input array --name x --shape 3200000 --fill normal --seed 11 --compress $c > c$c.nps
  NUMPIPE_IO_THREADS=7 gen-input array --name x --shape 3200000 --fill normal --seed 11 --compress $c > d$c.nps
  cmp c$c.nps d$c.nps || fail "--compress $c: the bytes depend on the thread count"
  verify ref.nps c$c.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "--compress $c changed the array"; }
done
# stored frames hold the data as it is: the stream is the array plus a little
raw=$((3200000 * 8))
stored() {  # FILE: its size is the array's and a little
  local size
  size=$(stat -c %s "$1")
  [ "$size" -gt "$raw" ] && [ "$size" -lt $((raw + raw / 1000 + 4096)) ]
}
stored cnone.nps || fail "--compress none wrote $(stat -c %s cnone.nps) bytes for $raw of data"
! stored c1.nps || fail "level 1 wrote stored frames"
NUMPIPE_ZSTD_LEVEL=0 gen-input array --name x --shape 3200000 --fill normal --seed 11 > env0.nps
stored env0.nps || fail "NUMPIPE_ZSTD_LEVEL=0 did not write stored frames"
NUMPIPE_ZSTD_LEVEL=5 gen-input array --name x --shape 3200000 --fill normal --seed 11 --compress none > over.nps
stored over.nps || fail "--compress does not override NUMPIPE_ZSTD_LEVEL"
verify ref.nps env0.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "NUMPIPE_ZSTD_LEVEL=0 changed the array"; }
# a level compresses smooth data better than none (the option reaches the writer)
gen-input array --name y --shape 2000000 --fill linspace --compress 9 -o lin9.nps
gen-input array --name y --shape 2000000 --fill linspace --compress none -o lin0.nps
[ "$(stat -c %s lin9.nps)" -lt "$(stat -c %s lin0.nps)" ] || fail "--compress 9 is not smaller than none on a linspace"

# ns-step frames its output itself (par::StreamOut, the same bytes for any rank count):
# --compress and NUMPIPE_ZSTD_LEVEL=0 reach it, and every frame states its size (the
# readers decode such frames on their threads)
gen-input ns --n 40 --init taylor-green-3d -o ns.nps
ns-step -i ns.nps --steps 1 -o nsd.nps
ns-step -i ns.nps --steps 1 --compress none -o nsn.nps
NUMPIPE_ZSTD_LEVEL=0 ns-step -i ns.nps --steps 1 -o nse.nps
ns-step -i ns.nps --steps 1 --compress 9 -o ns9.nps
for f in nsn nse ns9; do
  verify nsd.nps $f.nps --rtol 0 --atol 0 > v.txt || { cat v.txt; fail "ns-step: $f.nps holds other arrays than the default"; }
done
ns_raw=$((4 * 40 * 40 * 40 * 8))
for f in nsn nse; do  # the fields as they are, with the records' headers (attrs) beside them
  size=$(stat -c %s $f.nps)
  [ "$size" -gt "$ns_raw" ] && [ "$size" -lt $((ns_raw + 65536)) ] || fail "ns-step ($f.nps) wrote $size bytes for $ns_raw of fields"
done
[ "$(stat -c %s ns9.nps)" -lt "$(stat -c %s nsd.nps)" ] || fail "ns-step --compress 9 is not smaller than level 1"
frames_state_sizes() {  # FILE: every zstd frame's header states its content size (RFC 8878)
  "${PY:-python3}" - "$1" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
at = frames = 0
while at < len(b):
    assert b[at:at + 4] == b"\x28\xb5\x2f\xfd", "not a zstd frame at %d" % at
    fhd = b[at + 4]
    fcs_flag, single, checksum = fhd >> 6, fhd & 0x20, fhd & 0x04
    assert fcs_flag or single, "frame %d (at byte %d) does not state its size" % (frames, at)
    at += 5 + (0 if single else 1) + (fhd & 3 and [0, 1, 2, 4][fhd & 3]) + [1 if single else 0, 2, 4, 8][fcs_flag]
    while True:
        h = int.from_bytes(b[at:at + 3], "little")
        at += 3 + (1 if (h >> 1) & 3 == 1 else h >> 3)
        if h & 1:
            break
    at += 4 if checksum else 0
    frames += 1
assert frames >= 4, frames
PY
}
for f in nsd nsn ns9; do frames_state_sizes $f.nps || fail "ns-step ($f.nps): a frame does not state its size"; done

# pipes: split records, stored or compressed, through a chain of tools
nocmd() { grep -v '"command"'; }   # the producing command is in the attrs
gen-input array --name x --shape 3200000 --fill normal --seed 11 --compress none | inspect --json | nocmd > p.json
inspect ref.nps --json | nocmd > r.json
cmp p.json r.json || fail "inspect reads a stored stream from a pipe differently"
NUMPIPE_IO_THREADS=1 inspect -i cnone.nps --json | nocmd | cmp - r.json || fail "one I/O thread reads differently"
cat cnone.nps | NUMPIPE_IO_THREADS=5 inspect --json | nocmd | cmp - r.json || fail "five I/O threads read a pipe differently"
cat ref.nps cnone.nps | inspect > cat.txt || fail "concatenated streams of both kinds are refused"
[ "$(grep -c '^record [01]: x ' cat.txt)" = 2 ] || { cat cat.txt; fail "inspect does not list the 2 records of the concatenation"; }

# the zstd program reads both (it checks every frame's checksum)
if command -v zstd > /dev/null; then
  zstd -q -t cnone.nps || fail "zstd -t refuses a stored stream"
  zstd -q -t ref.nps || fail "zstd -t refuses a split stream"
  # the same command line (the level from the environment): the same decompressed bytes
  zstd -q -d -c env0.nps > env0.raw
  zstd -q -d -c ref.nps | cmp - env0.raw || fail "the decompressed bytes of stored frames and the default differ"
fi

# the Python reader reads split and stored streams
if [ -n "${PY:-}" ] && "$PY" -c 'import numpy' 2>/dev/null; then
  export PYTHONPATH="$SRC/share/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
  "$PY" - ref.nps cnone.nps cfast.nps <<'PY' || fail "the Python reader reads the split or stored streams differently"
import sys, numpy, numpipe
arrays = [numpipe.read(p)["x"] for p in sys.argv[1:]]
assert arrays[0].shape == (3200000,), arrays[0].shape
for a in arrays[1:]:
    assert a.tobytes() == arrays[0].tobytes()
PY
fi

# refusals, before any output
expect_exit 2 "--compress must be none, fast or a zstd level from 1 to 19, got '0'" -- gen-input array --shape 3 --compress 0 -o bad.nps
expect_exit 2 "--compress must be none, fast or a zstd level from 1 to 19, got 'gzip'" -- gen-input array --shape 3 --compress gzip -o bad.nps
NUMPIPE_ZSTD_LEVEL=x expect_exit 2 "NUMPIPE_ZSTD_LEVEL must be an integer in [-7, 22] (0: no compression), got 'x'" -- gen-input array --shape 3 -o bad.nps
NUMPIPE_IO_THREADS=0 expect_exit 2 "NUMPIPE_IO_THREADS must be an integer in [1, 1024], got '0'" -- gen-input array --shape 3000000 -o bad.nps
[ ! -e bad.nps ] || fail "a refused run left bad.nps"
no_leftovers .
