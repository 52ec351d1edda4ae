#!/usr/bin/python3
"""png_pixels.py A.png B.png: exit 0 when the two PNGs hold the same pixels (size,
colour type and every byte of every row after un-filtering), 1 otherwise. PNG bytes
depend on the zlib that wrote them; the pixels do not. Handles what render writes:
8-bit, non-interlaced, any colour type."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    w, h, depth, ctype, _c, _f, interlace = head
    if depth != 8 or interlace:
        raise SystemExit("%s: only 8-bit non-interlaced PNGs (depth %d, interlace %d)" % (path, depth, interlace))
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return (w, h, ctype), b"".join(rows)


a, b = pixels(sys.argv[1]), pixels(sys.argv[2])
if a[0] != b[0]:
    print("different images: %s is %dx%d (colour type %d), %s is %dx%d (colour type %d)"
          % ((sys.argv[1],) + a[0] + (sys.argv[2],) + b[0]))
    sys.exit(1)
diff = sum(1 for x, y in zip(a[1], b[1]) if x != y)
if diff:
    print("different pixels: %d of %d bytes differ" % (diff, len(a[1])))
    sys.exit(1)
sys.exit(0)
