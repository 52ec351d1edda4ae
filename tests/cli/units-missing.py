"""Lists the records of numpipe streams that carry no units (docs/export.md, "Units").

    python3 units-missing.py FILE.nps...

Prints one line per gap, `FILE: RECORD: no units` (or `RECORD column C`, `RECORD
axis A`, `RECORD attrs time`), and exits 1 when there is any. A record's units
are looked up as nps-export does (common/units.cpp): attrs["units"][NAME], a
snapshot snap_NAME falling back to NAME, or a plain string for the record
itself; a table column's by the column's name, else the record's; the entries
of a vector of parameters (attrs `fields` or `parameters`) by their names.
Label records (strings) have none to carry.
"""
import sys

import numpipe


def units_of(attrs, key, record):
    u = attrs.get("units") if isinstance(attrs, dict) else None
    if isinstance(u, str):
        return u if key == record else ""
    if not isinstance(u, dict):
        return ""
    found = u.get(key)
    if not isinstance(found, str) and key.startswith("snap_"):
        found = u.get(key[len("snap_"):])
    return found if isinstance(found, str) else ""


def gaps(path):
    for name, array, attrs in numpipe.records(path):
        attrs = attrs if isinstance(attrs, dict) else {}
        if attrs.get("kind") == "labels" or array.dtype.kind in "SUO":
            continue
        own = units_of(attrs, name, name)
        columns = attrs.get("columns")
        if not isinstance(columns, list) and array.ndim == 1 and not own:
            # a vector of parameters: attrs fields (price's problem) or parameters (price --calibrate's)
            columns = attrs.get("fields") or attrs.get("parameters")
        if isinstance(columns, list) and array.ndim >= 1 and len(columns) == array.shape[-1] and columns:
            for c in columns:
                if not (units_of(attrs, c, name) or own):
                    yield "%s column %s" % (name, c)
        elif not own:
            yield name
        grid = attrs.get("grid")
        if isinstance(grid, dict):
            for axis in grid.get("dims") or []:
                if not units_of(attrs, axis, name):
                    yield "%s axis %s" % (name, axis)
        if isinstance(attrs.get("time"), (int, float)) and not units_of(attrs, "time", name):
            yield "%s attrs time" % name


def main(paths):
    found = 0
    for path in paths:
        for gap in gaps(path):
            print("%s: %s: no units" % (path, gap))
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
