#!/usr/bin/env bash
# Writes the seed corpus into tests/fuzz/corpus/ (README.md, "Seed corpus").
# Usage: tests/fuzz/make-seeds.sh [BIN]   BIN: folder with gen-input (default build/bin)
# Each seed's first byte is the fuzz target's mode: 0x00 = compressed .nps as is,
# odd = decompressed stream that the target compresses (0x01: one zstd frame,
# 0x09: 32-byte frames, 0x21: 128-byte frames).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$here/../../build/bin}
out=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

gen() { "$BIN/gen-input" array -q "$@"; }
gen --name x --shape 16 --dtype f8 --fill uniform --seed 1 -o "$tmp/f8.nps"
gen --name grid --shape 3,4 --dtype f4 --fill linspace -o "$tmp/f4.nps"
gen --name n --shape 5 --dtype i8 --fill ones -o "$tmp/i8.nps"
gen --name m --shape 2,2,2 --dtype i4 --fill zeros -o "$tmp/i4.nps"
gen --name u --shape 7 --dtype u8 --fill uniform --lo 0 --hi 100 -o "$tmp/u8.nps"
gen --name bytes --shape 33 --dtype u1 --fill uniform --lo 0 --hi 255 --kind image -o "$tmp/u1.nps"
gen --name empty --shape 0 --dtype f8 -o "$tmp/zero.nps"
gen --name big --shape 300 --dtype f8 --fill normal --seed 7 -o "$tmp/f8-300.nps"
cat "$tmp/f8.nps" "$tmp/u1.nps" > "$tmp/concat.nps"

raw() { { printf '\x00'; cat "$2"; } > "$out/$1"; }    # mode 0: compressed bytes as they are
dec() { { printf "$2"; zstd -dc -q "$3"; } > "$out/$1"; } # odd mode: decompressed bytes

for s in f8 f4 i8 i4 u8 u1 zero f8-300 concat; do raw "raw-$s" "$tmp/$s.nps"; done
for s in f8 f4 i4 u1 zero concat; do dec "dec-$s" '\x01' "$tmp/$s.nps"; done
dec dec-f8-frames32 '\x09' "$tmp/f8.nps"
dec dec-concat-frames128 '\x21' "$tmp/concat.nps"

# Damaged compressed streams: truncated, a flipped byte (checksum mismatch), trailing garbage.
n=$(stat -c %s "$tmp/f8.nps")
{ printf '\x00'; head -c $((n / 2)) "$tmp/f8.nps"; } > "$out/raw-trunc-half"
{ printf '\x00'; head -c $((n - 1)) "$tmp/f8.nps"; } > "$out/raw-trunc-last"
{ printf '\x00'; head -c 6 "$tmp/f8.nps"; } > "$out/raw-trunc-frameheader"
python3 - "$tmp/f8.nps" "$out/raw-flip" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b) // 2] ^= 0x40
open(sys.argv[2], 'wb').write(b'\x00' + bytes(b))
PY
{ printf '\x00'; cat "$tmp/f8.nps"; printf 'garbage!'; } > "$out/raw-trailing"
printf '\x00' > "$out/raw-empty"
printf '\x00NUMPIPE\x00\x01\x00\x00\x00' > "$out/raw-not-zstd"

# Hand-made decompressed streams: every check of the record layer.
python3 - "$out" <<'PY'
import json, struct, sys, os
out = sys.argv[1]
MAGIC = b'NUMPIPE\x00' + struct.pack('<I', 1)
def rec(h, payload=b''):
    t = h if isinstance(h, bytes) else json.dumps(h, separators=(',', ':')).encode()
    return struct.pack('<I', len(t)) + t + payload
def end(n): return rec({'end': True, 'records': n})
def put(name, body, mode=b'\x01'): open(os.path.join(out, name), 'wb').write(mode + body)
a = {'name': 'a', 'dtype': 'i4', 'shape': [2], 'attrs': {'kind': 'array', 'k': [1, 2.5, None]}}
pa = struct.pack('<2i', 7, -7)
put('dec-two-records', MAGIC + rec(a, pa) + rec(dict(a, name='b', dtype='u1', shape=[3, 1]), b'abc') + end(2))
put('dec-no-attrs', MAGIC + rec({'name': 'x', 'dtype': 'f8', 'shape': []}, struct.pack('<d', 1.5)) + end(1))
put('dec-missing-end', MAGIC + rec(a, pa))
put('dec-wrong-count', MAGIC + rec(a, pa) + end(3))
put('dec-end-not-true', MAGIC + rec({'end': 1, 'records': 0}))
put('dec-end-no-count', MAGIC + rec({'end': True}))
put('dec-bad-json', MAGIC + rec(b'{"name": "x", "dtype"') + end(0))
put('dec-not-object', MAGIC + rec(b'[1,2,3]') + end(0))
put('dec-empty-header', MAGIC + struct.pack('<I', 0))
put('dec-huge-header-len', MAGIC + struct.pack('<I', 0xfffffff0) + b'{}')
put('dec-bad-dtype', MAGIC + rec(dict(a, dtype='c16'), pa) + end(1))
put('dec-negative-shape', MAGIC + rec(dict(a, shape=[-1]), pa) + end(1))
put('dec-overflow-shape', MAGIC + rec(dict(a, shape=[2**62, 4]), pa) + end(1))
put('dec-u64-shape', MAGIC + rec(b'{"name":"a","dtype":"u1","shape":[18446744073709551615]}') + end(1))
put('dec-over-limit', MAGIC + rec(dict(a, dtype='f8', shape=[1 << 20]), pa) + end(1))
put('dec-float-shape', MAGIC + rec(dict(a, shape=[2.0]), pa) + end(1))
put('dec-attrs-list', MAGIC + rec(dict(a, attrs=[1]), pa) + end(1))
put('dec-no-name', MAGIC + rec({'dtype': 'u1', 'shape': [1]}, b'z') + end(1))
put('dec-trunc-payload', MAGIC + rec(a, pa[:5]))
put('dec-trunc-header', MAGIC + rec(a, pa)[:20])
put('dec-trunc-len', MAGIC + b'\x10\x00')
put('dec-version-2', b'NUMPIPE\x00' + struct.pack('<I', 2) + end(0))
put('dec-trunc-version', b'NUMPIPE\x00\x01\x00')
put('dec-bad-magic', b'NUMPIPX\x00' + struct.pack('<I', 1) + end(0))
put('dec-trailing-garbage', MAGIC + end(0) + b'junk after the end')
put('dec-concat-empty', MAGIC + end(0) + MAGIC + rec(a, pa) + end(1), b'\x09')
put('dec-empty', b'')
PY

# Hand-made compressed streams whose payload frames state their size (64 KiB and up):
# the reader decodes those on its worker threads (stored frames for headers, RLE
# blocks for payloads, no checksums). tests/unit/test_stream_frames.cpp builds the
# same bytes and checks these files. Names: the target reads "abc" as the first
# record and passes over "a" (first) and "b" (second).
python3 - "$out" <<'PY'
import json, struct, sys, os
out = sys.argv[1]
MAGIC = b'NUMPIPE\x00' + struct.pack('<I', 1)
def le(v, n): return v.to_bytes(n, 'little')
def stored(content):
    f, pos = le(0xFD2FB528, 4) + b'\xe0' + le(len(content), 8), 0
    while True:
        n = min(131072, len(content) - pos); pos += n
        f += le((n << 3) | (pos == len(content)), 3) + content[pos - n:pos]
        if pos == len(content): return f
def rle(size, byte, fcs, kind=1):
    f, left = le(0xFD2FB528, 4) + b'\xa0' + le(fcs, 4), size
    while left:
        n = min(131072, left); left -= n
        f += le((n << 3) | (kind << 1) | (left == 0), 3) + bytes([byte])
    return f
def js(o): return json.dumps(o, separators=(',', ':'), sort_keys=True).encode()
def u1(name, n, first):
    h = js({'name': name, 'dtype': 'u1', 'shape': [n], 'attrs': {}})
    return stored((MAGIC if first else b'') + le(len(h), 4) + h)
def end(n):
    e = js({'end': True, 'records': n}); return stored(le(len(e), 4) + e)
def put(name, body): open(os.path.join(out, name), 'wb').write(b'\x00' + body)
A = ord('A')
whole = u1('abc', 3 * 65536, True) + rle(3 * 65536, A, 3 * 65536)
put('e2e-rle-3x64k', u1('abc', 196608, True) + rle(65536, 1, 65536) + rle(65536, 2, 65536) + rle(65536, 3, 65536)
    + u1('b', 65536, False) + rle(65536, 4, 65536) + end(2))
put('e2e-rle-64k', u1('a', 65536, True) + rle(65536, A, 65536) + end(1))
put('e2e-rle-lying-size', u1('abc', 65536, True) + rle(65536, A, 65537) + end(1))
put('e2e-rle-reserved-block', u1('abc', 65536, True) + rle(65536, A, 65536, 3) + end(1))
put('e2e-rle-truncated', whole[:-1])
put('e2e-rle-overlong', u1('a', 65536, True) + rle(131072, A, 131072) + end(1))
PY
ls "$out" | wc -l; du -sh "$out"
