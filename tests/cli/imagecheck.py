"""Independent readers of render's pictures for the tests: PNG (8-bit palette or
RGB, every filter type) and GIF (frames, delays, the loop extension), written
from the formats' specifications with the standard library only."""
import struct
import zlib


def png_rows(path):
    """Returns (width, height, colour type, palette, rows): every row's bytes after un-filtering.
    8-bit non-interlaced PNGs of any colour type; the chunks' CRCs are checked."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    pos, idat, palette = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0], "bad CRC"
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0, "%s: only 8-bit non-interlaced PNGs (depth %d, interlace %d)" % (
                path, depth, interlace)
        elif kind == b"PLTE":
            palette = [tuple(body[i:i + 3]) for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, ctype, palette, rows


def read_png(path):
    """Returns (width, height, rows, indices): rows[y][x] an (r, g, b) tuple (alpha dropped), indices the palette
    indices of a paletted image (else None). render writes palette, RGB or RGBA images."""
    width, height, ctype, palette, lines = png_rows(path)
    assert ctype in (2, 3, 6), (path, ctype)
    if ctype == 3:
        rows = [[palette[v] for v in line] for line in lines]
        return width, height, rows, [list(line) for line in lines]
    bpp = 3 if ctype == 2 else 4
    rows = [[tuple(line[bpp * x:bpp * x + 3]) for x in range(width)] for line in lines]
    return width, height, rows, None


def gif_info(path):
    """Returns (width, height, frames, delays in centiseconds, loops)."""
    data = open(path, "rb").read()
    assert data[:6] in (b"GIF87a", b"GIF89a"), path + ": not a GIF"
    width, height, flags = struct.unpack("<HHB", data[6:11])
    pos = 13 + (3 * (2 << (flags & 7)) if flags & 0x80 else 0)
    frames, delays, loops = 0, [], False

    def skip_blocks(p):
        while data[p]:
            p += data[p] + 1
        return p + 1

    while True:
        b = data[pos]
        if b == 0x3B:
            break
        if b == 0x21:  # extension
            label = data[pos + 1]
            if label == 0xF9:
                delays.append(struct.unpack("<H", data[pos + 4:pos + 6])[0])
            if label == 0xFF and data[pos + 3:pos + 14] == b"NETSCAPE2.0":
                loops = True
            pos = skip_blocks(pos + 2)
        elif b == 0x2C:  # image descriptor
            frames += 1
            fw, fh, fflags = struct.unpack("<4xHHB", data[pos + 1:pos + 10])
            assert (fw, fh) == (width, height), "a frame of another size"
            pos += 10 + (3 * (2 << (fflags & 7)) if fflags & 0x80 else 0)
            pos = skip_blocks(pos + 1)  # LZW minimum code size, then data sub-blocks
        else:
            raise AssertionError("bad GIF block 0x%02x at %d" % (b, pos))
    return width, height, frames, delays, loops
