#!/usr/bin/python3
"""Writes the PNG mask reader's seed corpus into tests/fuzz/corpus-png/ (README.md).

Each seed: byte 0 the grid (nx = 1 + 4 * (b & 15), ny = 1 + 4 * (b >> 4)), byte 1 the
flags (bit 0: the target recomputes every chunk's CRC), then a PNG file made here with
zlib and struct: every colour type and bit depth, interlaced and not, transparency,
ancillary chunks, and crafted headers (huge sizes, a 2 GiB text chunk, cut files)."""
import os, struct, zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-png")
SIG = b"\x89PNG\r\n\x1a\n"
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]  # x0, y0, dx, dy


def chunk(kind, data, length=None):
    return struct.pack(">I", len(data) if length is None else length) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def channels(colour):
    return {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]


def pack_row(samples, depth):
    """samples: ints, one a channel; packed MSB first (depth < 8) or big-endian 16-bit."""
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc, bits = (acc << depth) | s, bits + depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def png(w, h, depth, colour, pixel, interlace=False, extra=b"", plte=None, trns=None):
    """pixel(x, y) -> tuple of channel samples."""
    raw = bytearray()
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        xs, ys = range(x0, w, dx), range(y0, h, dy)
        if not xs or not ys:
            continue
        for y in ys:
            raw += b"\0" + pack_row([s for x in xs for s in pixel(x, y)], depth)
    body = chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 1 if interlace else 0)) + extra
    if plte:
        body += chunk(b"PLTE", plte)
    if trns is not None:
        body += chunk(b"tRNS", trns)
    return SIG + body + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")


def seed(name, data, grid=0x33, flags=1):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([grid, flags]) + data)


os.makedirs(OUT, exist_ok=True)
ring = lambda x, y, w, h: (x - w / 2) ** 2 + (y - h / 2) ** 2 < (min(w, h) / 3) ** 2
for depth in (1, 2, 4, 8, 16):
    top = (1 << depth) - 1
    for il in (False, True):
        seed(f"grey{depth}{'-adam7' if il else ''}", png(13, 11, depth, 0, lambda x, y: (0 if ring(x, y, 13, 11) else top,), il))
for depth in (8, 16):
    top = (1 << depth) - 1
    seed(f"rgb{depth}", png(12, 9, depth, 2, lambda x, y: (top * (x % 2), top * (y % 3 == 0), top // 2)))
    seed(f"ga{depth}-adam7", png(17, 10, depth, 4, lambda x, y: (0, top if x < 9 else 0), True))
    seed(f"rgba{depth}", png(9, 9, depth, 6, lambda x, y: (0, 0, top, top * (ring(x, y, 9, 9)))))
for depth in (1, 2, 4, 8):
    n = 1 << depth
    plte = b"".join(bytes([255 * i // (n - 1)] * 3) for i in range(n))
    seed(f"palette{depth}-trns", png(10, 7, depth, 3, lambda x, y: ((x + y) % n,), plte=plte, trns=b"\x00\x80"))
seed("grey8-trns", png(8, 8, 8, 0, lambda x, y: (x * 30,), trns=b"\x00\x00"))
seed("rgb8-trns-adam7", png(9, 8, 8, 2, lambda x, y: (x * 20, y * 20, 0), True, trns=b"\x00\x00\x00\x00\x00\x00"))
seed("one-pixel", png(1, 1, 8, 0, lambda x, y: (0,)), grid=0x00)
seed("wide-row", png(300, 1, 1, 0, lambda x, y: (x % 2,)), grid=0xff)
ancillary = (chunk(b"tEXt", b"Comment\0a mask") + chunk(b"zTXt", b"Big\0\0" + zlib.compress(b"x" * 100000)) +
             chunk(b"iCCP", b"p\0\0" + zlib.compress(b"\0" * 2000)) + chunk(b"gAMA", struct.pack(">I", 45455)) +
             chunk(b"sRGB", b"\0") + chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)) + chunk(b"prVt", b"private"))
seed("ancillary", png(8, 8, 8, 0, lambda x, y: (255 * (x > 3),), extra=ancillary))
# crafted headers
ihdr = lambda w, h, depth=8, colour=0: chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 0))
seed("text-2GiB", SIG + ihdr(16, 16) + struct.pack(">I", 2**31 - 1) + b"tEXt" + b"Comment")
seed("huge-65536-tiny-idat", SIG + ihdr(65536, 65536, 16, 6) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
seed("huge-65536x32767-1bit", SIG + ihdr(65536, 32767, 1) + chunk(b"IDAT", zlib.compress(b"\0" * 2000)) + chunk(b"IEND", b""))
seed("too-wide", SIG + ihdr(65537, 1) + chunk(b"IEND", b""))
seed("zero-height", SIG + ihdr(4, 0) + chunk(b"IEND", b""))
seed("bad-depth", SIG + ihdr(4, 4, 3, 0) + chunk(b"IEND", b""))
seed("palette-missing", SIG + ihdr(4, 4, 8, 3) + chunk(b"IDAT", zlib.compress(b"\0" * 20)) + chunk(b"IEND", b""))
good = png(8, 8, 8, 0, lambda x, y: (0,))
seed("cut-in-idat", good[: len(good) - 20])
seed("cut-in-header", good[:20])
seed("bad-crc", good, flags=0)
seed("trailing-garbage", good + b"garbage" * 10)
seed("idat-too-short", SIG + ihdr(8, 8) + chunk(b"IDAT", zlib.compress(b"\0" * 30)) + chunk(b"IEND", b""))
seed("idat-too-long", SIG + ihdr(2, 2) + chunk(b"IDAT", zlib.compress(b"\0" * 5000)) + chunk(b"IEND", b""))
seed("not-png", b"GIF89a" + b"\0" * 40)
seed("empty", b"")
