#!/usr/bin/python3
"""png_pixels.py A.png B.png: exit 0 when the two PNGs hold the same pixels (size,
colour type and every byte of every row after un-filtering), 1 otherwise. PNG bytes
depend on the zlib that wrote them; the pixels do not. Handles what render writes:
8-bit, non-interlaced, any colour type."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from imagecheck import png_rows  # noqa: E402  (the tests' one PNG reader)


def pixels(path):
    w, h, ctype, _palette, rows = png_rows(path)
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
