#!/usr/bin/python3
"""Read and write numpipe streams (.nps) with NumPy and the standard library.

The format (DESIGN.md "Stream format", common/stream.hpp): a sequence of zstd
frames with content checksums; decompressed, b"NUMPIPE\\0", a u32 LE version
(1), then records -- u32 LE header length, a UTF-8 JSON header {"name",
"dtype", "shape", "attrs"}, and the payload (little-endian, C order,
prod(shape) * itemsize bytes) -- and an end record {"end": true, "records": N}.
Several complete streams may follow one another (``cat a.nps b.nps``).

    import numpipe
    run = numpipe.read("a.nps")                    # {name: ndarray}, first record of each name
    run.attrs["x"]; run.series("snap_d")           # attrs; every record of a name, stacked
    for name, array, attrs in numpipe.records("-"):  # every record, in order ("-" is stdin)
        ...
    numpipe.write("out.nps", {"x": x, "y": y}, attrs={"kind": "mine"})
    ds = numpipe.to_xarray("a.nps")                # an xarray Dataset (needs python3-xarray)

Python 3.11 has no zstd module: this module uses python-zstandard (Debian:
python3-zstandard) where it is installed, else calls libzstd (libzstd.so.1,
present wherever numpipe builds) through ctypes, else the ``zstd`` command-line
program. The environment variable NUMPIPE_PY_ZSTD=zstandard|libzstd|cli|auto
forces a choice (default auto, in that order).

Run ``/usr/bin/python3 numpipe.py dump FILE`` to list the records of a stream.
Use Debian's /usr/bin/python3 (python3-numpy); see docs/python.md.
"""

import collections
import ctypes
import ctypes.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as np

__version__ = "0.1.0"  # numpipe's project version (CMakeLists.txt)
__all__ = ["FormatError", "ZstdUnavailableError", "Record", "Stream", "Writer", "read", "records", "write",
           "to_xarray", "zstd_backend", "DTYPES"]

MAGIC = b"NUMPIPE\0"
VERSION = 1
MAX_HEADER_BYTES = 1 << 24  # 16 MiB of JSON per record, as in the C++ reader
_MAX_HEADER_DEPTH = 64  # nesting levels of a header, as in the C++ reader
_MAX_DIMS = 32  # dimensions of a shape, as in the C++ reader
_INT64_MAX = (1 << 63) - 1

# numpipe dtype name -> NumPy dtype (little-endian).
DTYPES = {
    "f8": np.dtype("<f8"),
    "f4": np.dtype("<f4"),
    "i8": np.dtype("<i8"),
    "i4": np.dtype("<i4"),
    "u8": np.dtype("<u8"),
    "u1": np.dtype("u1"),
}


class FormatError(ValueError):
    """The input is not a valid numpipe stream (bad magic, truncated, corrupt, ...)."""


class ZstdUnavailableError(RuntimeError):
    """Neither libzstd nor the zstd program could be found."""


Record = collections.namedtuple("Record", ["name", "array", "attrs"])
Record.__doc__ = "One record of a stream: its name, its NumPy array and its attrs (a dict)."


# ---------------------------------------------------------------------------------
# zstd through ctypes

class _InBuffer(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


class _OutBuffer(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_ZSTD_c_compressionLevel = 100
_ZSTD_c_checksumFlag = 201
_ZSTD_e_continue = 0
_ZSTD_e_end = 2
_ZSTD_error_prefix_unknown = 10
_ZSTD_error_checksum_wrong = 22

_lib_cache = None
_lib_error = None


def _load_libzstd():
    """Returns the libzstd CDLL with its signatures set, or raises ZstdUnavailableError."""
    global _lib_cache, _lib_error
    if _lib_cache is not None:
        return _lib_cache
    if _lib_error is not None:
        raise ZstdUnavailableError(_lib_error)
    names = []
    found = ctypes.util.find_library("zstd")
    if found:
        names.append(found)
    if "libzstd.so.1" not in names:
        names.append("libzstd.so.1")
    problems = []
    lib = None
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            problems.append("%s: %s" % (name, e))
    try:
        if lib is None:
            raise ZstdUnavailableError("cannot load libzstd (%s); install libzstd1 (Debian: apt-get install "
                                       "libzstd1) or the zstd program" % "; ".join(problems))
        sz, vp, i = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int
        sigs = {
            "ZSTD_versionNumber": (ctypes.c_uint, []),
            "ZSTD_isError": (ctypes.c_uint, [sz]),
            "ZSTD_getErrorName": (ctypes.c_char_p, [sz]),
            "ZSTD_getErrorCode": (i, [sz]),
            "ZSTD_createDStream": (vp, []),
            "ZSTD_initDStream": (sz, [vp]),
            "ZSTD_freeDStream": (sz, [vp]),
            "ZSTD_decompressStream": (sz, [vp, ctypes.POINTER(_OutBuffer), ctypes.POINTER(_InBuffer)]),
            "ZSTD_DStreamInSize": (sz, []),
            "ZSTD_DStreamOutSize": (sz, []),
            "ZSTD_createCCtx": (vp, []),
            "ZSTD_freeCCtx": (sz, [vp]),
            "ZSTD_CCtx_setParameter": (sz, [vp, i, i]),
            "ZSTD_compressStream2": (sz, [vp, ctypes.POINTER(_OutBuffer), ctypes.POINTER(_InBuffer), i]),
            "ZSTD_CStreamOutSize": (sz, []),
        }
        for fname, (restype, argtypes) in sigs.items():
            try:
                f = getattr(lib, fname)
            except AttributeError:
                raise ZstdUnavailableError("libzstd (%s) lacks %s: it is too old (numpipe needs 1.4.0 or later)"
                                           % (lib._name, fname)) from None
            f.restype = restype
            f.argtypes = argtypes
        if lib.ZSTD_versionNumber() < 10400:
            raise ZstdUnavailableError("libzstd %d is too old (numpipe needs 1.4.0 or later)" % lib.ZSTD_versionNumber())
    except ZstdUnavailableError as e:
        _lib_error = str(e)
        raise
    _lib_cache = lib
    return lib


def _load_zstandard():
    """The python-zstandard module, or None where it is not installed."""
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def _backend():
    """'zstandard', 'libzstd' or 'cli', by NUMPIPE_PY_ZSTD and what this machine has."""
    choice = os.environ.get("NUMPIPE_PY_ZSTD", "auto") or "auto"
    if choice not in ("auto", "zstandard", "libzstd", "cli"):
        raise ValueError("NUMPIPE_PY_ZSTD must be auto, zstandard, libzstd or cli, got %r" % choice)
    if choice in ("auto", "zstandard"):
        if _load_zstandard() is not None:
            return "zstandard"
        if choice == "zstandard":
            raise ZstdUnavailableError("NUMPIPE_PY_ZSTD=zstandard but the zstandard module is not installed "
                                       "(Debian: apt-get install python3-zstandard)")
    if choice in ("auto", "libzstd"):
        try:
            _load_libzstd()
            return "libzstd"
        except ZstdUnavailableError as e:
            if choice == "libzstd" or not shutil.which("zstd"):
                raise ZstdUnavailableError(str(e) + (" (NUMPIPE_PY_ZSTD=libzstd)" if choice == "libzstd"
                                                     else "; the zstd program is not on PATH either")) from None
            return "cli"
    if not shutil.which("zstd"):
        raise ZstdUnavailableError("NUMPIPE_PY_ZSTD=cli but the zstd program is not on PATH")
    return "cli"


def zstd_backend():
    """Describes the zstd implementation in use, e.g. 'python-zstandard 0.20.0',
    'libzstd 1.5.4 (ctypes)' or 'zstd program'."""
    backend = _backend()
    if backend == "zstandard":
        return "python-zstandard %s" % _load_zstandard().__version__
    if backend == "libzstd":
        v = _load_libzstd().ZSTD_versionNumber()
        return "libzstd %d.%d.%d (ctypes)" % (v // 10000, v // 100 % 100, v % 100)
    return "zstd program (%s)" % shutil.which("zstd")


def _compression_level(level):
    """The C++ writer's rule: level 0/None means NUMPIPE_ZSTD_LEVEL, else 1."""
    if level:
        return int(level)
    env = os.environ.get("NUMPIPE_ZSTD_LEVEL")
    if env is None:
        return 1
    try:
        v = int(env, 10)
        if not -7 <= v <= 22:
            raise ValueError
    except ValueError:
        raise ValueError("NUMPIPE_ZSTD_LEVEL must be an integer in [-7, 22], got '%s'" % env) from None
    return v or 1


# ---- decompression: decompress_some(address, n) -> bytes produced, 0 only at end of input

class _Bad(Exception):
    """Internal: a format problem, turned into FormatError with the input's label."""


def _read_some(f, n):
    read1 = getattr(f, "read1", None)
    data = read1(n) if read1 is not None else f.read(n)
    if data is None:  # a non-blocking file with nothing ready
        raise OSError("the input is non-blocking and has no data ready")
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("numpipe needs a binary file (open(path, 'rb') or sys.stdin.buffer), got text")
    return data


class _LibzstdDecoder:
    ds = None

    def __init__(self, f):
        self.lib = _load_libzstd()
        self.f = f
        self.ds = self.lib.ZSTD_createDStream()
        if not self.ds:
            raise MemoryError("out of memory creating a zstd decoder")
        self.lib.ZSTD_initDStream(self.ds)
        self.in_size = self.lib.ZSTD_DStreamInSize()
        self.in_buf = ctypes.create_string_buffer(self.in_size)
        self.zin = _InBuffer(ctypes.addressof(self.in_buf), 0, 0)
        self.input_eof = False
        self.frame_open = False  # inside a zstd frame that has not ended
        self.decoded = 0

    def close(self):
        if self.ds:
            self.lib.ZSTD_freeDStream(self.ds)
            self.ds = None

    __del__ = close

    def _refill(self):
        if self.input_eof:
            return False
        data = _read_some(self.f, self.in_size)
        ctypes.memmove(self.in_buf, data, len(data))
        self.zin.size = len(data)
        self.zin.pos = 0
        if not data:
            self.input_eof = True
        return bool(data)

    def decompress_some(self, addr, n):
        lib = self.lib
        while True:
            flushing = False
            if self.zin.pos == self.zin.size and not self._refill():
                if not self.frame_open:
                    return 0
                flushing = True  # the decoder may still hold output of a frame's last block
            zout = _OutBuffer(addr, n, 0)
            ret = lib.ZSTD_decompressStream(self.ds, ctypes.byref(zout), ctypes.byref(self.zin))
            if lib.ZSTD_isError(ret):
                code = lib.ZSTD_getErrorCode(ret)
                if code == _ZSTD_error_prefix_unknown:
                    raise _Bad("not a numpipe stream: the input is not zstd-compressed (bad magic)"
                               if self.decoded == 0 else "corrupt data: garbage where a zstd frame should start")
                if code == _ZSTD_error_checksum_wrong:
                    raise _Bad("corrupt data: zstd checksum mismatch (the stream was damaged)")
                raise _Bad("corrupt zstd data: " + lib.ZSTD_getErrorName(ret).decode("utf-8", "replace"))
            self.frame_open = ret != 0
            self.decoded += zout.pos
            if zout.pos > 0:
                return zout.pos
            if flushing:
                raise _Bad("truncated zstd frame: the input ends inside a compressed frame")


class _ZstandardDecoder:
    """python-zstandard, one frame at a time. A frame whose header states a content size of at
    most whole_frame_bytes (numpipe's payload frames: 1 MiB each) is decoded, once its bytes
    are all read, by a stream_reader straight into the caller's buffer (libzstd refuses a
    frame that makes more than it states). Any other frame goes through a decompressobj in
    small pieces, as its output per call is not bounded (a zstd block of 128 KiB can be a few
    bytes of input): a crafted stream makes at most a few tens of MiB at a time."""

    piece = 1024  # input bytes per call in a frame that does not state its size
    whole_frame_bytes = 1 << 25  # a frame stating at most this much content goes in whole
    read_size = 1 << 22  # input bytes per read
    header_bytes = 18  # ZSTD_FRAMEHEADERSIZE_MAX: the most a frame header takes

    def __init__(self, f):
        self.zstd = _load_zstandard()
        self.dctx = self.zstd.ZstdDecompressor()
        self.f = f
        self.obj = None  # the frame being decoded in pieces
        self.reader = None  # or the frame being decoded whole
        self.obj_piece = self.piece  # input bytes per call in that frame
        self.buf = memoryview(b"")  # input read; buf[pos:] not yet given to the decoder
        self.pos = 0
        self.backing = self.spare = None  # buf's bytearray and the other one (see _read)
        self.out = b""  # output not yet handed out
        self.out_pos = 0
        self.input_eof = False
        self.frame_open = False
        self.decoded = 0

    def close(self):
        self.obj = self.reader = None

    def _fail(self, e):
        text = str(e)
        if text.startswith("zstd decompress error: "):
            text = text[len("zstd decompress error: "):]
        if "Unknown frame descriptor" in text:
            raise _Bad("not a numpipe stream: the input is not zstd-compressed (bad magic)"
                       if self.decoded == 0 else "corrupt data: garbage where a zstd frame should start")
        if "checksum" in text:
            raise _Bad("corrupt data: zstd checksum mismatch (the stream was damaged)")
        raise _Bad("corrupt zstd data: " + text)

    def _read(self):
        """Appends input to what is pending; False at the end of the input."""
        if self.input_eof:
            return False
        rest = self.buf[self.pos:]
        readinto = getattr(self.f, "readinto1", None)
        if len(rest) and readinto is not None:  # the new input read in after the rest: one copy, of the rest
            # Two buffers in turn: nothing reads the one before the current when more input is needed.
            need = len(rest) + self.read_size
            b = self.spare if self.spare is not None and len(self.spare) >= need else bytearray(max(need, 2 * self.read_size))
            view = memoryview(b)
            view[:len(rest)] = rest
            got = readinto(view[len(rest):need])
            if got is None:
                raise OSError("the input is non-blocking and has no data ready")
            self.spare, self.backing = self.backing, b
            data = view[:len(rest) + got] if got else None
        else:
            data = _read_some(self.f, self.read_size)
            data = (memoryview(bytes(rest) + data) if len(rest) else memoryview(data)) if data else None
        if data is None:
            self.input_eof = True
            return False
        self.buf, self.pos = data, 0
        return True

    def _frame_bytes(self, checksum):
        """The compressed size of the frame at pos, from its block headers (RFC 8878 3.1.1),
        reading on until the input holds it whole; None for a reserved block type (the
        decoder names the damage), a frame larger than a whole frame may be, or the end of
        the input first (the decoder names the truncation)."""
        at = self.pos + self.zstd.frame_header_size(bytes(self.buf[self.pos:self.pos + self.header_bytes]))
        while at - self.pos <= 2 * self.whole_frame_bytes:
            while at + 3 > len(self.buf):
                at -= self.pos
                if not self._read():
                    return None
                at += self.pos
            h = self.buf[at] | self.buf[at + 1] << 8 | self.buf[at + 2] << 16
            kind, size = (h >> 1) & 3, h >> 3
            if kind == 3:
                return None
            at += 3 + (1 if kind == 1 else size)  # an RLE block holds one byte
            if h & 1:  # the last block
                end = at + (4 if checksum else 0) - self.pos
                while self.pos + end > len(self.buf):
                    if not self._read():
                        return None
                return end
        return None

    def _start_frame(self):
        """A stream_reader for the frame that starts the pending input when its header states a
        size of at most whole_frame_bytes, else a decompressobj fed in small pieces."""
        if len(self.buf) - self.pos < self.header_bytes:
            self._read()  # the header whole, where the input has it
        try:
            params = self.zstd.get_frame_parameters(bytes(self.buf[self.pos:self.pos + self.header_bytes]))
            if params.content_size <= self.whole_frame_bytes:  # CONTENTSIZE_UNKNOWN is 2^64 - 1
                n = self._frame_bytes(params.has_checksum)
                if n is not None:
                    self.reader = self.dctx.stream_reader(self.buf[self.pos:self.pos + n], read_across_frames=False)
                    self.pos += n
                    self.frame_open = True
                    return
        except self.zstd.ZstdError:
            pass  # too short or not a frame: the decoder says which, piece by piece
        self.obj = self.dctx.decompressobj()

    def _decode_whole_frame(self, addr, n):
        """Decodes up to n bytes of the frame in hand straight to addr; 0 when it has ended."""
        try:
            got = self.reader.readinto(memoryview((ctypes.c_char * n).from_address(addr)).cast("B"))
        except self.zstd.ZstdError as e:
            self._fail(e)
        if got == 0:  # the frame ended, its checksum checked
            self.reader = None
            self.frame_open = False
        self.decoded += got
        return got

    def _step(self):
        """Gives the decoder one piece of input; False at the end of the input."""
        if self.pos == len(self.buf) and not self._read():
            return False
        if self.obj is None:
            self._start_frame()
            if self.reader is not None:
                return True
        piece = self.buf[self.pos:self.pos + self.obj_piece]  # a view: no copy
        self.pos += len(piece)
        try:
            self.out = self.obj.decompress(piece)
        except self.zstd.ZstdError as e:
            self._fail(e)
        self.out_pos = 0
        self.frame_open = not self.obj.eof
        if self.obj.eof:  # the frame ended inside this piece: its unused tail starts the next one
            self.pos -= len(self.obj.unused_data)
            self.obj = None
        return True

    def decompress_some(self, addr, n):
        while self.out_pos == len(self.out):
            if self.reader is not None:
                got = self._decode_whole_frame(addr, n)
                if got:
                    return got
                continue
            if not self._step():
                if self.frame_open:
                    raise _Bad("truncated zstd frame: the input ends inside a compressed frame")
                return 0
        take = min(n, len(self.out) - self.out_pos)
        out_addr = ctypes.cast(ctypes.c_char_p(self.out), ctypes.c_void_p).value  # the bytes' own buffer, no copy
        ctypes.memmove(addr, out_addr + self.out_pos, take)
        self.out_pos += take
        self.decoded += take
        return take


class _CliDecoder:
    """Fallback: pipes the input through `zstd -dc`. Errors are known only at the end."""

    def __init__(self, f, path):
        self.frame_open = False
        self.decoded = 0
        self.errfile = tempfile.TemporaryFile()
        cmd = ["zstd", "-dc"]
        self.pump = None
        self.input_bytes = None  # known for a path, counted by the pump otherwise
        if path is not None:
            self.input_bytes = os.stat(path).st_size
            self.proc = subprocess.Popen(cmd + ["--", path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=self.errfile)
        else:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errfile)
            self.pump_error = None
            self.pump = threading.Thread(target=self._pump, args=(f,), daemon=True)
            self.pump.start()
        self.done = False

    def _pump(self, f):
        self.input_bytes = 0
        try:
            while True:
                data = _read_some(f, 1 << 17)
                if not data:
                    break
                self.input_bytes += len(data)
                self.proc.stdin.write(data)
        except BrokenPipeError:
            pass
        except Exception as e:  # reported when the decoder ends
            self.pump_error = e
        finally:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.errfile.close()

    def decompress_some(self, addr, n):
        if self.done:
            return 0
        view = memoryview((ctypes.c_char * n).from_address(addr)).cast("B")
        got = self.proc.stdout.readinto(view)
        if got:
            self.decoded += got
            return got
        self.done = True
        rc = self.proc.wait()
        if self.pump is not None:
            self.pump.join()
            if self.pump_error is not None:
                raise self.pump_error
        if rc != 0 and self.input_bytes == 0:
            return 0  # empty input: the reader says so
        if rc != 0:
            self.errfile.seek(0)
            err = self.errfile.read().decode("utf-8", "replace").strip()
            # zstd says "FILE : Decoding error (36) : Data corruption detected" or "zstd: FILE: unsupported
            # format": keep the part after the last colon (a file name may hold any word).
            last = err.splitlines()[-1].split(": ")[-1].strip() if err else ""
            low = last.lower()
            if "unsupported format" in low or "unknown header" in low:
                raise _Bad("not a numpipe stream: the input is not zstd-compressed (bad magic)"
                           if self.decoded == 0 else "corrupt data: garbage where a zstd frame should start")
            if "checksum" in low:
                raise _Bad("corrupt data: zstd checksum mismatch (the stream was damaged)")
            if "premature end" in low or "truncated" in low:
                raise _Bad("truncated zstd frame: the input ends inside a compressed frame")
            raise _Bad("corrupt zstd data: " + (last or "zstd exited with status %d" % rc))
        return 0


# ---- compression

class _LibzstdEncoder:
    cctx = None

    def __init__(self, sink, level):
        self.lib = _load_libzstd()
        self.sink = sink
        self.cctx = self.lib.ZSTD_createCCtx()
        if not self.cctx:
            raise MemoryError("out of memory creating a zstd encoder")
        self._check(self.lib.ZSTD_CCtx_setParameter(self.cctx, _ZSTD_c_compressionLevel, level))
        self._check(self.lib.ZSTD_CCtx_setParameter(self.cctx, _ZSTD_c_checksumFlag, 1))
        self.out_size = self.lib.ZSTD_CStreamOutSize()
        self.out_buf = ctypes.create_string_buffer(self.out_size)

    def close(self):
        if self.cctx:
            self.lib.ZSTD_freeCCtx(self.cctx)
            self.cctx = None

    __del__ = close

    def _check(self, ret):
        if self.lib.ZSTD_isError(ret):
            raise RuntimeError("zstd compression failed: " + self.lib.ZSTD_getErrorName(ret).decode())
        return ret

    def _feed(self, data, mode):
        buf = np.frombuffer(data, dtype=np.uint8) if len(data) else None
        zin = _InBuffer(buf.ctypes.data if buf is not None else None, len(data), 0)
        out_addr = ctypes.addressof(self.out_buf)
        while True:
            zout = _OutBuffer(out_addr, self.out_size, 0)
            remaining = self._check(self.lib.ZSTD_compressStream2(self.cctx, ctypes.byref(zout), ctypes.byref(zin), mode))
            if zout.pos:
                self.sink.write(ctypes.string_at(out_addr, zout.pos))
            if (zin.pos == zin.size) if mode == _ZSTD_e_continue else remaining == 0:
                return

    def frame(self, parts):
        """Writes the byte strings `parts` as one zstd frame."""
        for p in parts[:-1]:
            self._feed(p, _ZSTD_e_continue)
        self._feed(parts[-1], _ZSTD_e_end)


class _ZstandardEncoder:
    def __init__(self, sink, level):
        self.sink = sink
        self.cctx = _load_zstandard().ZstdCompressor(level=level, write_checksum=True)

    def close(self):
        pass

    def frame(self, parts):
        """Writes the byte strings `parts` as one zstd frame."""
        obj = self.cctx.compressobj()
        for p in parts:
            data = obj.compress(p)
            if data:
                self.sink.write(data)
        self.sink.write(obj.flush())


class _CliEncoder:
    def __init__(self, sink, level):
        self.sink = sink
        if level < 0:
            self.args = ["--fast=%d" % -level]
        elif level > 19:
            self.args = ["--ultra", "-%d" % level]
        else:
            self.args = ["-%d" % level]

    def close(self):
        pass

    def frame(self, parts):
        data = b"".join(bytes(memoryview(p).cast("B")) for p in parts)
        r = subprocess.run(["zstd", "-q", "-c", "--check"] + self.args, input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("zstd compression failed: " + r.stderr.decode("utf-8", "replace").strip())
        self.sink.write(r.stdout)


# ---------------------------------------------------------------------------------
# reading

def _default_max_bytes():
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and page > 0:
            return pages * page // 2
    except (ValueError, OSError, AttributeError):
        pass
    return 8 << 30


def _human_bytes(b):
    if b >= 1 << 30:
        return "%d bytes (%.1f GiB)" % (b, b / 1073741824.0)
    if b >= 1 << 20:
        return "%d bytes (%.1f MiB)" % (b, b / 1048576.0)
    return "%d bytes" % b


def _reject_constant(c):
    raise ValueError("%s is not valid JSON" % c)


class _NumberOutOfRange(Exception):
    """Internal: a JSON number beyond a double's range, refused as the C++ reader refuses it."""


def _json_float(text):
    v = float(text)
    if v in (float("inf"), float("-inf")):
        raise _NumberOutOfRange(text)
    return v


def _json_int(text):
    """As nlohmann::json reads an integer: an int within [-2^63, 2^64), else a double (or refused)."""
    if len(text) <= 20:
        v = int(text)
        if -(1 << 63) <= v < (1 << 64):
            return v
    return _json_float(text)


def _shape_dump(shape):
    text = json.dumps(shape, separators=(",", ":"))
    return text if len(text) <= 120 else text[:117] + "..."  # as the C++ reader cuts it


def _depth_exceeds(text, limit):
    """True when the JSON text nests [ and { deeper than limit (outside strings), as the C++ reader counts."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return True
        elif c == "]" or c == "}":
            depth -= 1
    return False


def _has_lone_surrogate(value):
    """True when a string of the parsed header (key or value) holds an unpaired UTF-16 surrogate
    escape (\\ud800): not valid Unicode, refused by the C++ reader's JSON parser."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


class _StreamReader:
    """The C++ StreamReader's checks, in the same order, with the same messages."""

    def __init__(self, dec, label, max_bytes, max_header_bytes, keep=None, bound_total=False):
        self.dec = dec
        self.label = label
        self.max_bytes = _default_max_bytes() if not max_bytes else int(max_bytes)
        self.keep = keep  # keep(name) -> False: the record's payload is passed over unread
        self.bound_total = bound_total  # the kept payloads together within max_bytes (read() holds them all)
        self.held = 0
        self.kept = 0
        self.max_header_bytes = int(max_header_bytes)
        self.out_size = 1 << 17
        self.out_buf = ctypes.create_string_buffer(self.out_size)
        self.out_addr = ctypes.addressof(self.out_buf)
        self.out_pos = self.out_end = 0
        self.in_stream = False
        self.records_in_stream = 0
        self.streams_done = 0
        self.record_index = 0

    def _refill_out(self):
        got = self.dec.decompress_some(self.out_addr, self.out_size)
        self.out_pos, self.out_end = 0, got
        return got

    def settle_frame(self):
        # After a frame's last content byte only its checksum may remain: consume it now,
        # so that a damaged frame is reported before its record is handed out.
        while self.dec.frame_open and self.out_pos == self.out_end:
            if self._refill_out() == 0:
                break

    def read_into(self, addr, n):
        """Reads exactly n bytes to addr unless the input ends first; returns the bytes read."""
        done = min(n, self.out_end - self.out_pos)
        if done:
            ctypes.memmove(addr, self.out_addr + self.out_pos, done)
            self.out_pos += done
        while n - done >= self.out_size:  # large reads decompress straight into the destination
            got = self.dec.decompress_some(addr + done, n - done)
            if got == 0:
                return done
            done += got
        while done < n:
            got = self._refill_out()
            if got == 0:
                return done
            take = min(n - done, got)
            ctypes.memmove(addr + done, self.out_addr, take)
            self.out_pos = take
            done += take
        return done

    def skip_bytes(self, n):
        """Decompresses n bytes through the staging buffer without keeping them; returns the bytes passed."""
        done = 0
        while done < n:
            if self.out_pos == self.out_end and self._refill_out() == 0:
                return done
            take = min(n - done, self.out_end - self.out_pos)
            self.out_pos += take
            done += take
        return done

    def read_bytes(self, n):
        buf = ctypes.create_string_buffer(n)
        got = self.read_into(ctypes.addressof(buf), n)
        return buf.raw[:got]

    def at_end_of_input(self):
        if self.out_pos < self.out_end:
            return False
        return self._refill_out() == 0

    def read_magic(self):
        head = self.read_bytes(12)
        if len(head) == 0 and self.streams_done == 0:
            raise _Bad("empty input: expected a numpipe stream")
        if len(head) < 8 or head[:8] != MAGIC:
            raise _Bad("bad magic after an end record: trailing data is not a numpipe stream" if self.streams_done
                       else 'bad magic: not a numpipe stream (expected "NUMPIPE\\0")')
        if len(head) < 12:
            raise _Bad("truncated stream: the input ends inside the version field")
        version = int.from_bytes(head[8:12], "little")
        if version != VERSION:
            raise _Bad("unknown stream version %d (this numpipe reads version %d)" % (version, VERSION))
        self.in_stream = True
        self.records_in_stream = 0

    def payload_done(self, label, nbytes, have):
        """After a record's payload, read or passed over (have bytes of nbytes): checks that it is whole, counts it."""
        if have < nbytes:
            raise _Bad("truncated payload in %s: expected %s, got %s"
                       % (label, _human_bytes(nbytes), _human_bytes(have)))
        self.settle_frame()
        self.records_in_stream += 1
        self.record_index += 1

    def where(self):
        return "record %d" % self.record_index

    def next(self):
        """The next Record, or None once the input ends after a complete stream."""
        if not self.in_stream:
            if self.streams_done > 0 and self.at_end_of_input():
                return None
            self.read_magic()
        while True:
            len_bytes = self.read_bytes(4)
            if len(len_bytes) == 0:
                raise _Bad("missing end record: the stream stops after %d records (was the producer interrupted?)"
                           % self.records_in_stream)
            if len(len_bytes) < 4:
                raise _Bad("truncated stream: the input ends inside the header length of " + self.where())
            header_len = int.from_bytes(len_bytes, "little")
            if header_len == 0:
                raise _Bad("empty header in " + self.where())
            if header_len > self.max_header_bytes:
                raise _Bad("header of %s is %s, over the limit of %s" % (
                    self.where(), _human_bytes(header_len), _human_bytes(self.max_header_bytes)))
            text = self.read_bytes(header_len)
            if len(text) < header_len:
                raise _Bad("truncated stream: the input ends inside the header of " + self.where())
            try:
                text = text.decode("utf-8")
            except ValueError:
                raise _Bad("the header of %s is not valid JSON" % self.where()) from None
            if _depth_exceeds(text, _MAX_HEADER_DEPTH):
                raise _Bad("the header of %s nests deeper than %d levels" % (self.where(), _MAX_HEADER_DEPTH))
            try:
                header = json.loads(text, parse_constant=_reject_constant, parse_float=_json_float,
                                    parse_int=_json_int)
            except _NumberOutOfRange:
                raise _Bad("the header of %s holds a number beyond a double's range" % self.where()) from None
            except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                raise _Bad("the header of %s is not valid JSON" % self.where()) from None
            if _has_lone_surrogate(header):
                raise _Bad("the header of %s is not valid JSON" % self.where())
            if not isinstance(header, dict):
                raise _Bad("the header of %s is not a JSON object" % self.where())

            if "end" in header:
                if header["end"] is not True:
                    raise _Bad('the end record of stream %d has "end" != true' % self.streams_done)
                count = header.get("records")
                if type(count) is not int:
                    raise _Bad('the end record has no integer "records" count')
                if count != self.records_in_stream:
                    raise _Bad("the end record counts %d records but the stream holds %d (records lost or added)"
                               % (count, self.records_in_stream))
                self.settle_frame()
                self.in_stream = False
                self.streams_done += 1
                if self.at_end_of_input():
                    return None
                self.read_magic()
                continue

            name = header.get("name")
            if not isinstance(name, str):
                raise _Bad('the header of %s has no string "name"' % self.where())
            label = "%s '%s'" % (self.where(), name)
            dt = header.get("dtype")
            if not isinstance(dt, str):
                raise _Bad('the header of %s has no string "dtype"' % label)
            if dt not in DTYPES:
                raise _Bad('unknown dtype "%s" in %s (known: f8 f4 i8 i4 u8 u1)' % (dt, label))
            dtype = DTYPES[dt]
            sh = header.get("shape")
            if not isinstance(sh, list):
                raise _Bad('the header of %s has no "shape" array' % label)
            if len(sh) > _MAX_DIMS:
                raise _Bad("the shape of %s has %d dimensions, more than %d" % (label, len(sh), _MAX_DIMS))
            shape = []
            for d in sh:
                if type(d) is not int:
                    raise _Bad("the shape of %s holds a non-integer: %s" % (label, _shape_dump(sh)))
                if d > _INT64_MAX:
                    raise _Bad("the shape of %s overflows: %s" % (label, _shape_dump(sh)))
                if d < 0:
                    raise _Bad("the shape of %s has a negative size: %s" % (label, _shape_dump(sh)))
                shape.append(d)
            count = 1
            span = dtype.itemsize  # an empty array's other sizes still count, as in NumPy
            for d in shape:
                count *= d
                span *= d or 1
                if span > _INT64_MAX:
                    break
            nbytes = count * dtype.itemsize
            if span > _INT64_MAX:
                raise _Bad("the shape of %s overflows: %s" % (label, _shape_dump(sh)))
            if nbytes > self.max_bytes:
                raise _Bad("%s %s needs %s, over the max_bytes limit of %s; pass a larger max_bytes if this is "
                           "intended" % (label, _shape_dump(sh), _human_bytes(nbytes), _human_bytes(self.max_bytes)))
            attrs = header.get("attrs", {})
            if not isinstance(attrs, dict):
                raise _Bad('the "attrs" of %s is not a JSON object' % label)
            if self.keep is not None and not self.keep(name):
                self.payload_done(label, nbytes, self.skip_bytes(nbytes))
                continue
            if self.bound_total and nbytes > self.max_bytes - self.held:
                raise _Bad("the records kept so far (%d, %s) and %s (%s) are over the max_bytes limit of %s on what "
                           "is held; pass a larger max_bytes if this is intended" % (
                               self.kept, _human_bytes(self.held), label, _human_bytes(nbytes),
                               _human_bytes(self.max_bytes)))
            self.held += nbytes
            self.kept += 1
            payload = np.empty(nbytes, dtype=np.uint8)
            self.payload_done(label, nbytes, self.read_into(payload.ctypes.data, nbytes) if nbytes else 0)
            return Record(name, payload.view(dtype).reshape(shape), attrs)


def _open_input(source):
    """(file, label, path or None, owned)."""
    if isinstance(source, (str, bytes, os.PathLike)):
        path = os.fsdecode(source)
        if path in ("", "-"):
            return sys.stdin.buffer, "stdin", None, False
        return open(path, "rb"), path, path, True
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        if name is None:
            name = getattr(getattr(source, "raw", None), "name", None)
        label = name if isinstance(name, str) else "input"
        if label == "<stdin>":
            label = "stdin"
        return source, label, None, False
    raise TypeError("numpipe reads a path, '-' (stdin) or a binary file, not %s" % type(source).__name__)


def records(source="-", *, max_bytes=None, max_header_bytes=MAX_HEADER_BYTES):
    """Yields every record of the stream(s) in `source` as Record(name, array, attrs), in order.

    `source` is a path, "-" for stdin, or a binary file object (read sequentially, never
    seeked; a pipe is fine). Concatenated streams are read one after the other. Arrays are
    writable NumPy arrays of dtype <f8 <f4 <i8 <i4 <u8 or u1, in C order. A damaged input
    raises FormatError (a ValueError) naming the input and the problem; a record is yielded
    only once its zstd frame checksum has been verified (with the libzstd backend).
    `max_bytes` bounds one payload (default: half of physical memory).
    """
    return _read_records(source, max_bytes, max_header_bytes)


def _read_records(source, max_bytes=None, max_header_bytes=MAX_HEADER_BYTES, keep=None, bound_total=False):
    """records() with a filter keep(name) (False: the payload is passed over unread) and, with
    bound_total, max_bytes also bounding the total of the kept payloads (for read(), which holds them)."""
    f, label, path, owned = _open_input(source)
    dec = None
    try:
        backend = _backend()
        dec = (_ZstandardDecoder(f) if backend == "zstandard" else
               _LibzstdDecoder(f) if backend == "libzstd" else _CliDecoder(f, path))
        reader = _StreamReader(dec, label, max_bytes, max_header_bytes, keep, bound_total)
        while True:
            try:
                rec = reader.next()
            except _Bad as e:
                raise FormatError("%s: %s" % (label, e)) from None
            if rec is None:
                return
            yield rec
    finally:
        if dec is not None:
            dec.close()
        if owned:
            f.close()


class Stream(dict):
    """What read() returns: a dict from record name to the array of the first record
    of that name (so ``read(p)["x"]`` works as it always did), and everything else:

    - ``attrs[name]``: the attrs (a dict) of the first record of each name;
    - ``records``: every record, in stream order, as Record(name, array, attrs);
    - ``all(name)``: every record of one name, in order (a snapshot series);
    - ``series(name)``: their arrays stacked along a new first axis (NumPy array);
    - ``series_attrs(name)``: their attrs, in order (each snapshot's step, time).
    """

    def __init__(self, records_in_order):
        super().__init__()
        self.records = list(records_in_order)
        self.attrs = {}
        for rec in self.records:
            if rec.name not in self:
                self[rec.name] = rec.array
                self.attrs[rec.name] = rec.attrs

    def all(self, name):
        """Every record named `name`, in stream order (KeyError when there is none)."""
        found = [rec for rec in self.records if rec.name == name]
        if not found:
            raise KeyError(name)
        return found

    def series(self, name):
        """The arrays of every record named `name`, stacked: shape (count,) + shape of one."""
        arrays = [rec.array for rec in self.all(name)]
        shapes = {a.shape for a in arrays}
        if len(shapes) > 1:
            raise ValueError("records '%s' differ in shape (%s): use all('%s')"
                             % (name, ", ".join(str(list(x)) for x in sorted(shapes)), name))
        return np.stack(arrays)

    def series_attrs(self, name):
        """The attrs of every record named `name`, in stream order."""
        return [rec.attrs for rec in self.all(name)]

    def counts(self):
        """{name: how many records have it}, in the order the names first appear."""
        out = {}
        for rec in self.records:
            out[rec.name] = out.get(rec.name, 0) + 1
        return out

    def __repr__(self):
        parts = []
        for name, n in self.counts().items():
            a = self[name]
            parts.append("%s %s %s%s" % (name, _code_of(a.dtype), list(a.shape), " x%d" % n if n > 1 else ""))
        return "numpipe.Stream(%s)" % ", ".join(parts)


def read(source="-", **kwargs):
    """Reads a whole input (path, "-" or binary file) and returns a Stream.

    A Stream is a dict {name: array} holding the first record of each name (as the C++
    tools take it), with the rest reachable: ``.attrs[name]``, ``.records`` (every
    record in order), ``.all(name)`` and ``.series(name)`` (every record of a name, such
    as a snapshot series). The whole input is validated before anything is returned;
    `max_bytes` bounds one payload and also the total of the payloads held.
    """
    return Stream(_read_records(source, bound_total=True, **kwargs))


# ---------------------------------------------------------------------------------
# xarray

def _export_program():
    """The nps-export to run: $NUMPIPE_EXPORT, else nps-export on PATH, else None."""
    return os.environ.get("NUMPIPE_EXPORT") or shutil.which("nps-export")


def to_xarray(source="-", **kwargs):
    """Reads a stream (a path, "-", a binary file, or a Stream from read()) into an
    xarray Dataset laid out exactly as ``nps-export --to netcdf`` lays out its NetCDF
    file: the same dimensions and coordinates (grid axes x, y, z; a snapshot series'
    "time" with "step"; the workloads' axes strike, policy, year, series, window,
    level), a table record's columns as variables NAME_COLUMN, labels as
    coordinates, dates as datetime64 (a CF time), ``var.attrs["units"]`` from the
    records' units, the global attributes of the stream's last record.

    One layout, not two: to_xarray runs nps-export on the stream and opens the
    file it writes (tools/export/dataset.cpp holds the rules), so a Dataset from
    Python and a file from the shell never name an axis differently. It needs
    nps-export built with NetCDF (on PATH, or the program named by the environment
    variable NUMPIPE_EXPORT) and xarray with python3-netcdf4. The values are loaded
    into memory; the temporary file is removed. Raises ImportError with advice when
    xarray or netCDF4 is missing, RuntimeError when nps-export is missing or fails.
    """
    try:
        import xarray as xr
    except ImportError as e:
        raise ImportError("numpipe.to_xarray needs xarray, which is not installed (Debian: apt-get install "
                          "python3-xarray; in a virtual environment: pip install xarray); numpipe.read() needs "
                          "only NumPy") from e
    try:
        import netCDF4  # noqa: F401  (xarray's engine for the NetCDF-4 file)
    except ImportError as e:
        raise ImportError("numpipe.to_xarray opens nps-export's NetCDF-4 file with netCDF4, which is not "
                          "installed (Debian: apt-get install python3-netcdf4; pip install netCDF4)") from e
    program = _export_program()
    if not program:
        raise RuntimeError("numpipe.to_xarray runs nps-export, which is not on PATH: put numpipe's bin folder "
                           "on PATH or name the program in NUMPIPE_EXPORT")
    with tempfile.TemporaryDirectory(prefix="numpipe-xarray-") as folder:
        path = None
        if isinstance(source, (str, bytes, os.PathLike)) and os.fsdecode(source) not in ("", "-") and not kwargs:
            path = os.fsdecode(source)
        else:  # stdin, a file object, a Stream, or limits to apply: the records as read here
            stream = source if isinstance(source, Stream) else read(source, **kwargs)
            path = os.path.join(folder, "in.nps")
            with Writer(path, stamp=False) as w:
                for rec in stream.records:
                    w.write(rec.name, rec.array, rec.attrs)
        nc = os.path.join(folder, "out.nc")
        run = subprocess.run([program, "-q", "-i", path, "--to", "netcdf", "-o", nc],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if run.returncode != 0:
            message = run.stderr.decode("utf-8", "replace").strip()
            if run.returncode == 2 and "built without NetCDF" not in message:  # the stream itself
                raise ValueError(message)
            raise RuntimeError("nps-export could not write the NetCDF file (exit %d): %s" % (run.returncode, message))
        with xr.open_dataset(nc, engine="netcdf4") as ds:
            return ds.load()


# ---------------------------------------------------------------------------------
# writing

def _numpipe_array(name, value):
    """(dtype name, C-contiguous little-endian array) for `value`, or ValueError."""
    if isinstance(value, np.ma.MaskedArray):
        raise ValueError("array '%s' is a masked array: numpipe has no masks; pass value.filled(...)" % name)
    a = np.asarray(value)
    dt = a.dtype
    kind, size = dt.kind, dt.itemsize
    target = None
    if dt.fields is None and dt.subdtype is None:
        if kind == "f":
            target = {8: "f8", 4: "f4", 2: "f4"}.get(size)  # float16 widens exactly
        elif kind == "i":
            target = {8: "i8", 4: "i4", 2: "i4", 1: "i4"}.get(size)
        elif kind == "u":
            target = {8: "u8", 4: "i8", 2: "i4", 1: "u1"}.get(size)
        elif kind == "b":
            target = "u1"  # False/True -> 0/1
    if target is None:
        raise ValueError("array '%s' has dtype %s, which numpipe cannot store without loss (numpipe dtypes: "
                         "f8 f4 i8 i4 u8 u1); convert it explicitly, e.g. value.astype('f8')" % (name, dt))
    return target, np.asarray(a, dtype=DTYPES[target], order="C")


def _json_default(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError("%s is not JSON serializable" % type(v).__name__)


def _dumps(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=_json_default)


def _provenance():
    return {"tool": "numpipe.py", "version": __version__, "command": shlex.join(sys.argv)}


class Writer:
    """Writes one stream record by record.

        with numpipe.Writer("out.nps") as w:
            w.write("x", x, {"units": "m"})
            w.write("y", y)

    `target` is a path (written to a temporary file in the same folder and renamed into
    place by close(); an exception inside the `with` removes it, so a failure never leaves a
    half-written file), "-" for stdout (a terminal is refused), or a binary file object
    (written directly, left open). Each record is one zstd frame with its checksum, like the
    C++ writer; `level` is the zstd level (default: NUMPIPE_ZSTD_LEVEL, else 1). With
    stamp=True each record's attrs get {"tool": "numpipe.py", ...} appended to their
    "history" list, as the C++ tools do.
    """

    def __init__(self, target="-", *, level=None, stamp=True):
        level = _compression_level(level)
        self._stamp = stamp
        self._records = 0
        self._closed = False
        self._tmp = None
        self._path = None
        self._owned = False
        if isinstance(target, (str, bytes, os.PathLike)):
            path = os.fsdecode(target)
            if path in ("", "-"):
                out = sys.stdout.buffer
                if out.isatty():
                    raise ValueError("refusing to write a binary stream to a terminal: redirect stdout or "
                                     "pipe it into a tool")
                self._sink = out
            else:
                folder, base = os.path.split(path)
                if not base:
                    raise ValueError("output path '%s' names a folder, not a file" % path)
                fd, self._tmp = tempfile.mkstemp(prefix="." + base + ".tmp-", dir=folder or ".")
                umask = os.umask(0o22)
                os.umask(umask)
                os.fchmod(fd, 0o644 & ~umask)
                self._sink = os.fdopen(fd, "wb")
                self._path = path
                self._owned = True
        elif hasattr(target, "write"):
            self._sink = target
        else:
            raise TypeError("numpipe writes to a path, '-' (stdout) or a binary file, not %s" % type(target).__name__)
        try:
            self._enc = {"zstandard": _ZstandardEncoder, "libzstd": _LibzstdEncoder,
                         "cli": _CliEncoder}[_backend()](self._sink, level)
        except BaseException:
            self._abort()
            raise
        self._magic = False

    def write(self, name, array, attrs=None):
        """Appends one record. Returns the array as stored (C-contiguous, little-endian)."""
        if self._closed:
            raise ValueError("write() on a closed numpipe.Writer")
        if not isinstance(name, str):
            raise TypeError("a record name must be a str, got %s" % type(name).__name__)
        code, a = _numpipe_array(name, array)
        if attrs is None:
            attrs = {}
        if not isinstance(attrs, dict):
            raise TypeError("the attrs of record '%s' must be a dict, got %s" % (name, type(attrs).__name__))
        try:
            attrs = json.loads(_dumps(attrs))  # a private copy; checks it is JSON
        except (TypeError, ValueError) as e:
            raise ValueError("the attrs of record '%s' cannot be written as JSON: %s" % (name, e)) from None
        if self._stamp:
            history = attrs.get("history")
            attrs["history"] = (history if isinstance(history, list) else []) + [_provenance()]
        header = _dumps({"name": name, "dtype": code, "shape": list(a.shape), "attrs": attrs}).encode("utf-8")
        self._frame(header, memoryview(a.reshape(-1)).cast("B") if a.size else b"")
        self._records += 1
        return a

    def _frame(self, header, payload):
        if len(header) > 0xFFFFFFFF:
            raise ValueError("record header too large")
        parts = []
        if not self._magic:
            parts.append(MAGIC + VERSION.to_bytes(4, "little"))
            self._magic = True
        parts += [len(header).to_bytes(4, "little"), header, payload]
        self._enc.frame(parts)

    def close(self):
        """Writes the end record and, for a path, renames the finished file into place."""
        if self._closed:
            return
        try:
            self._frame(_dumps({"end": True, "records": self._records}).encode("utf-8"), b"")
            self._sink.flush()
            if self._owned:
                self._sink.close()
                os.replace(self._tmp, self._path)
                self._tmp = None
        except BaseException:
            self._abort()
            raise
        self._closed = True
        self._enc.close()

    def _abort(self):
        self._closed = True
        if self._owned:
            try:
                self._sink.close()
            except OSError:
                pass
        if self._tmp:
            try:
                os.unlink(self._tmp)
            except OSError:
                pass
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self._abort()
        return False


def write(target, arrays_by_name, attrs=None, *, attrs_by_name=None, level=None, stamp=True):
    """Writes one complete stream (one group of records) to `target` ("-" is stdout).

    arrays_by_name: a dict {name: array}, or a list of (name, array) pairs (to repeat a
    name). attrs: one dict applied to every record. attrs_by_name: optional
    {name: dict}, merged over `attrs` for that record (keys there win). Arrays are stored as
    C-contiguous little-endian f8 f4 i8 i4 u8 or u1; other dtypes are widened only when
    exact (bool -> u1, int8/int16/uint16 -> i4, uint32 -> i8, float16 -> f4), anything else
    raises ValueError. See Writer for the remaining options.
    """
    items = list(arrays_by_name.items() if hasattr(arrays_by_name, "items") else arrays_by_name)
    if attrs is not None and not isinstance(attrs, dict):
        raise TypeError("attrs must be a dict applied to every record, got %s" % type(attrs).__name__)
    attrs_by_name = attrs_by_name or {}
    names = {name for name, _ in items} if attrs_by_name else set()
    unknown = sorted(set(attrs_by_name) - names)
    if unknown:
        raise ValueError("attrs_by_name names records that are not written: %s" % ", ".join(unknown))
    with Writer(target, level=level, stamp=stamp) as w:
        for name, array in items:
            a = dict(attrs or {})
            extra = attrs_by_name.get(name)
            if extra is not None:
                if not isinstance(extra, dict):
                    raise TypeError("attrs_by_name['%s'] must be a dict" % name)
                a.update(extra)
            w.write(name, array, a)


# ---------------------------------------------------------------------------------
# command line

_USAGE = """usage: numpipe.py dump [--attrs] [--values] [FILE ...]
       numpipe.py --version
       numpipe-dump [--attrs] [--values] [FILE ...]   (installed by pip: the same as numpipe.py dump)

dump lists every record of each stream (FILE, or stdin when none or "-"):
  name dtype shape
--attrs adds each record's attrs (JSON); --values prints the arrays (NumPy's summary).
Exit codes: 0 success, 2 bad usage or bad input, 3 a failed write (stdout).
Example: gen-input array --shape 3,4 | /usr/bin/python3 numpipe.py dump --attrs"""


def _main(argv, prog="numpipe.py"):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_USAGE)
        return 0 if argv else 2
    if argv[0] == "--version":
        try:
            backend = zstd_backend()
        except ZstdUnavailableError as e:
            backend = "no zstd: %s" % e
        print("numpipe.py %s (NumPy %s, %s)" % (__version__, np.__version__, backend))
        return 0
    if argv[0] != "dump":
        print("%s: unknown command '%s' (see %s --help)" % (prog, argv[0], prog), file=sys.stderr)
        return 2
    show_attrs = show_values = False
    files = []
    for arg in argv[1:]:
        if arg == "--attrs":
            show_attrs = True
        elif arg == "--values":
            show_values = True
        elif arg.startswith("-") and arg != "-":
            print("%s: unknown option '%s' (see %s --help)" % (prog, arg, prog), file=sys.stderr)
            return 2
        else:
            files.append(arg)
    def out(line):
        try:
            print(line)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _WriteError(e) from None

    try:
        for src in files or ["-"]:
            for name, array, attrs in records(src):
                out("%s %s [%s]" % (name, _code_of(array.dtype), ", ".join(str(d) for d in array.shape)))
                if show_attrs:
                    out("  attrs: " + json.dumps(attrs, sort_keys=True))
                if show_values:
                    out("  " + np.array2string(array, threshold=64).replace("\n", "\n  "))
    except (FormatError, ZstdUnavailableError) as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise
    except _WriteError as e:
        print("%s: cannot write standard output: %s" % (prog, e.args[0].strerror or e.args[0]), file=sys.stderr)
        return 3
    except OSError as e:
        print("%s: cannot read input: %s" % (prog, e), file=sys.stderr)
        return 2
    return 0


class _WriteError(Exception):
    """Internal: a failed write to stdout (a full disk), told apart from a failed read."""


def _code_of(dtype):
    for code, dt in DTYPES.items():
        if dt == dtype:
            return code
    return str(dtype)


def _dump_cli():
    """The numpipe-dump program (pip's entry point): `numpipe-dump [--attrs] [--values] [FILE...]`."""
    argv = sys.argv[1:]
    if argv and argv[0] in ("-h", "--help", "--version"):
        return _cli(argv)
    return _cli(["dump"] + argv, "numpipe-dump")


def _cli(argv=None, prog="numpipe.py"):
    try:
        rc = _main(sys.argv[1:] if argv is None else argv, prog)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            print("%s: cannot write standard output: %s" % (prog, e.strerror or e), file=sys.stderr)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's own flush fails no more
            rc = 3
    except BrokenPipeError:  # `numpipe.py dump x.nps | head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        rc = 0
    except KeyboardInterrupt:
        rc = 130
    return rc


if __name__ == "__main__":
    sys.exit(_cli())
