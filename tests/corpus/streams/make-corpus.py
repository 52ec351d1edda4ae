#!/usr/bin/python3
"""Writes the shared corpus of crafted streams (tests/corpus/streams/*.nps) and expected.tsv.

Both stream readers, `inspect` (C++) and numpipe.read (Python), must accept and refuse
each stream alike, with the same message (tests/cli/foundation-python-parity.sh). Each
case is the decompressed content (magic, records, end record), compressed as one zstd
frame with a checksum, or raw bytes where the damage is in the compression itself.
Run from anywhere with python3-zstandard installed; the files are committed.
"""
import json, os, struct, sys
import zstandard

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"NUMPIPE\0" + struct.pack("<I", 1)


def header(text):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack("<I", len(raw)) + raw


def record(name="x", dtype="f8", shape=(2,), attrs=None, payload=None, raw_shape=None, raw_attrs=None):
    h = '{"name":%s,"dtype":"%s","shape":%s' % (json.dumps(name), dtype,
                                                raw_shape if raw_shape is not None else json.dumps(list(shape)))
    if raw_attrs is not None:
        h += ',"attrs":' + raw_attrs
    elif attrs is not None:
        h += ',"attrs":' + json.dumps(attrs)
    h += "}"
    if payload is None:
        n = 1
        for d in shape:
            n *= d
        payload = struct.pack("<%dd" % n, *range(n)) if dtype == "f8" and n < 1000 else b""
    return header(h) + payload


def end(n):
    return header('{"end":true,"records":%d}' % n)


def frame(content):
    return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(content)


good = record()
# name -> (compressed stream bytes, expected): expected is "ok N" (records) or "refuse MESSAGE"
cases = {
    "valid": (frame(MAGIC + good + end(1)), "ok 1"),
    "two-streams": (frame(MAGIC + good + end(1)) + frame(MAGIC + good + good + end(2)), "ok 3"),
    "empty-array": (frame(MAGIC + record(shape=(0, 3)) + end(1)), "ok 1"),
    "zero-size-wide": (frame(MAGIC + record(shape=(0, 1 << 59)) + end(1)), "ok 1"),
    "zero-size-too-wide": (frame(MAGIC + record(raw_shape="[0,4611686018427387904]") + end(1)),
                           "refuse the shape of record 0 'x' overflows: [0,4611686018427387904]"),
    "zero-size-too-wide-last": (frame(MAGIC + record(raw_shape="[4611686018427387904,0]") + end(1)),
                                "refuse the shape of record 0 'x' overflows: [4611686018427387904,0]"),
    "big-int-attr": (frame(MAGIC + record(raw_attrs='{"a":1' + "0" * 400 + "}") + end(1)),
                     "refuse the header of record 0 holds a number beyond a double's range"),
    "big-float-attr": (frame(MAGIC + record(raw_attrs='{"a":1e400}') + end(1)),
                       "refuse the header of record 0 holds a number beyond a double's range"),
    "large-int-attr": (frame(MAGIC + record(raw_attrs='{"a":1' + "0" * 30 + ',"b":-1' + "0" * 30 + "}") + end(1)),
                       "ok 1"),
    "uint64-attr": (frame(MAGIC + record(raw_attrs='{"a":18446744073709551615}') + end(1)), "ok 1"),
    "nan-attr": (frame(MAGIC + record(raw_attrs='{"a":NaN}') + end(1)), "refuse the header of record 0 is not valid JSON"),
    "shape-beyond-uint64": (frame(MAGIC + record(raw_shape="[100000000000000000000]") + end(1)),
                            "refuse the shape of record 0 'x' holds a non-integer: [1e+20]"),
    "shape-int64-max-plus-one": (frame(MAGIC + record(raw_shape="[9223372036854775808]") + end(1)),
                                 "refuse the shape of record 0 'x' overflows: [9223372036854775808]"),
    "shape-float": (frame(MAGIC + record(raw_shape="[2.0]") + end(1)),
                    "refuse the shape of record 0 'x' holds a non-integer: [2.0]"),
    "shape-negative": (frame(MAGIC + record(raw_shape="[-2]") + end(1)),
                       "refuse the shape of record 0 'x' has a negative size: [-2]"),
    "shape-overflow": (frame(MAGIC + record(raw_shape="[4611686018427387904,4611686018427387904]") + end(1)),
                       "refuse the shape of record 0 'x' overflows: [4611686018427387904,4611686018427387904]"),
    "header-not-json": (frame(MAGIC + header("{name: x") + end(0)), "refuse the header of record 0 is not valid JSON"),
    "header-not-utf8": (frame(MAGIC + header(b'{"name":"\xff","dtype":"f8","shape":[0]}') + end(1)),
                        "refuse the header of record 0 is not valid JSON"),
    "header-not-object": (frame(MAGIC + header("[1,2]") + end(0)), "refuse the header of record 0 is not a JSON object"),
    "unknown-dtype": (frame(MAGIC + record(dtype="c16", shape=(0,)) + end(1)),
                      "refuse unknown dtype \"c16\" in record 0 'x' (known: f8 f4 i8 i4 u8 u1)"),
    "attrs-not-object": (frame(MAGIC + record(raw_attrs="[1]") + end(1)),
                         "refuse the \"attrs\" of record 0 'x' is not a JSON object"),
    "end-count": (frame(MAGIC + good + end(3)),
                  "refuse the end record counts 3 records but the stream holds 1 (records lost or added)"),
    "missing-end": (frame(MAGIC + good),
                    "refuse missing end record: the stream stops after 1 records (was the producer interrupted?)"),
    "bad-version": (frame(b"NUMPIPE\0" + struct.pack("<I", 7) + good + end(1)),
                    "refuse unknown stream version 7 (this numpipe reads version 1)"),
    "truncated-payload": (frame(MAGIC + record(shape=(10,), payload=b"\0" * 40)),
                          "refuse truncated payload in record 0 'x': expected 80 bytes, got 40 bytes"),
    "not-zstd": (b"plain text, not a numpipe stream\n",
                 "refuse not a numpipe stream: the input is not zstd-compressed (bad magic)"),
    "truncated-frame": (frame(MAGIC + good + end(1))[:-6],
                        "refuse truncated zstd frame: the input ends inside a compressed frame"),
}
bad = bytearray(frame(MAGIC + good + end(1)))
bad[-1] ^= 0xFF
cases["bad-checksum"] = (bytes(bad), "refuse corrupt data: zstd checksum mismatch (the stream was damaged)")

with open(os.path.join(HERE, "expected.tsv"), "w") as out:
    out.write("# stream\texpected outcome of inspect and numpipe.read (make-corpus.py writes this file)\n")
    for name, (data, expected) in sorted(cases.items()):
        with open(os.path.join(HERE, name + ".nps"), "wb") as f:
            f.write(data)
        out.write("%s.nps\t%s\n" % (name, expected))
print("%d streams in %s" % (len(cases), HERE), file=sys.stderr)
