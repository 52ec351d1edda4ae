#!/usr/bin/env python3
"""comdat-check.py BUILD [TARGET_OBJECT_FILTER]: the inline functions and templates
of numpipe's own code (namespace numpipe, weak symbols) that a unit compiled at -O1
(cmake/build-time.cmake) and a unit at the build type's -O3 both define. The linker
keeps one copy of each, and takes it from whichever object it meets first (a tool's
main before the libraries), so an out-of-line call from a numerical kernel could run
the -O1 copy. Lists each such function with its size in both objects; prints nothing
but a count line when there are none. Reads build.ninja and runs nm."""
import collections, re, subprocess, sys, os

build = sys.argv[1]
objs = {}  # object path -> True when compiled at -O1
obj = None
for line in open(os.path.join(build, "build.ninja")):
    m = re.match(r"build (\S+\.o): CXX_COMPILER", line)
    if m:
        obj = m.group(1)
        continue
    if obj and line.startswith("  FLAGS = "):
        flags = line.split()
        levels = [f for f in flags if re.match(r"-O\d$", f)]
        objs[obj] = bool(levels) and levels[-1] == "-O1"
        obj = None

defs = collections.defaultdict(dict)  # symbol -> {light: size}
for o, light in objs.items():
    path = os.path.join(build, o)
    if not os.path.exists(path):
        continue
    out = subprocess.run(["nm", "-C", "-S", "--defined-only", path], capture_output=True, text=True).stdout
    for l in out.splitlines():
        parts = l.split(None, 3)
        if len(parts) == 4 and parts[2] in ("W", "V") and "numpipe::" in parts[3]:
            sym = parts[3]
            if sym.startswith(("std::", "nlohmann::", "cxxopts::")):
                continue
            size = int(parts[1], 16)
            d = defs[sym]
            d[light] = max(d.get(light, 0), size)

both = sorted((s, d) for s, d in defs.items() if True in d and False in d)
for s, d in both:
    print("%6d B at -O1, %6d B at -O3: %s" % (d[True], d[False], s[:200]))
print("comdat-check: %d functions of numpipe's defined both at -O1 and at -O3 (%d objects read)" %
      (len(both), sum(os.path.exists(os.path.join(build, o)) for o in objs)))
