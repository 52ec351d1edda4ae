"""Shared by the CLI tests that check a tool's output stream in NumPy
(ns-coefficients.sh, ns-surface-mean.sh): a stream's records by name.
Run with PYTHONPATH="$SRC/share/python:$SRC/tests/cli" (the numpipe module)."""
import numpipe


def by_name(path):
    """{name: (array, attrs)} of the first record of each name in the stream at
    `path`, as the tools take a stream (a snapshot series' later records:
    numpipe.read(path).series(name))."""
    stream = numpipe.read(path)
    return {name: (stream[name], stream.attrs[name]) for name in stream}
