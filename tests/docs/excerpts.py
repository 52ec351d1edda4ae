#!/usr/bin/env python3
"""excerpts.py ROOT DOC.md [MIN]: every code block of DOC.md marked as an excerpt,

    <!-- excerpt: PATH -->
    ```cpp
    ...
    ```

is checked against the file ROOT/PATH: each line of the block, without its `//`
comment and with its spaces collapsed, must be in the file (comments left out,
lines joined) after the previous one. Lines holding "..." stand for code left out;
comment-only lines are the page's own words. Fails (exit 1) naming the first line
that is not found, or when the page has fewer than MIN excerpts (default 1)."""
import re
import sys


def code_of(line):
    # the code of a line: outside string literals, up to a // comment; spaces collapsed
    out, in_str, i = [], False, 0
    while i < len(line):
        c = line[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < len(line):
                out.append(line[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
        i += 1
    return " ".join("".join(out).split())


def main():
    root, doc = sys.argv[1], sys.argv[2]
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    lines = open(doc, encoding="utf-8").read().split("\n")
    found, failures, k = 0, [], 0
    while k < len(lines):
        m = re.match(r"\s*<!--\s*excerpt:\s*(\S+)\s*-->", lines[k])
        k += 1
        if not m:
            continue
        path = m.group(1)
        if k >= len(lines) or not lines[k].startswith("```"):
            failures.append("%s:%d: an excerpt marker not followed by a code block" % (doc, k))
            continue
        start = k + 1
        k = start
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        block = lines[start:k]
        k += 1
        found += 1
        try:
            text = open("%s/%s" % (root, path), encoding="utf-8").read()
        except OSError as e:
            failures.append("%s:%d: %s: %s" % (doc, start - 1, path, e.strerror))
            continue
        source = " ".join(c for c in (code_of(l) for l in text.split("\n")) if c)
        at = 0
        for n, line in enumerate(block):
            if "..." in line:
                continue
            code = code_of(line)
            if not code:
                continue
            where = source.find(code, at)
            if where < 0:
                elsewhere = " (it is there, but before the line above)" if code in source else ""
                failures.append("%s:%d: not in %s%s: %s" % (doc, start + n + 1, path, elsewhere, line.strip()))
                break
            at = where + len(code)
    if found < want:
        failures.append("%s: %d excerpts, expected at least %d" % (doc, found, want))
    for f in failures:
        print("excerpts: " + f, file=sys.stderr)
    if not failures:
        print("excerpts: %s: %d excerpts match their sources" % (doc, found))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
