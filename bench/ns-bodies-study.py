#!/usr/bin/env python3
"""The tables of bench/ns-bodies-study from its CSV of runs.

    ns-bodies-study.py study.csv [--md OUT.md] [--plot cd-h.png] [--json OUT.json]

Groups the runs into series that differ in one thing only:
  grid:   the same body, Re, c and box on several D/h (ratio 2 between successive grids);
  domain: the same body, Re, c and D/h in several boxes;
  Mach:   the same body, Re, box and D/h with several sound speeds c.
For a grid series of three (f1, f2, f3 from coarse to fine, ratio r) the convergence ratio
R = (f3 - f2) / (f2 - f1) says which kind of convergence is seen (F. Stern, R. V. Wilson,
H. W. Coleman and E. G. Paterson, J. Fluids Eng. 123 (2001) 793-802):
  0 < R < 1, monotone: the observed order p = ln(1 / R) / ln r and Richardson's
    extrapolation f_h0 = f3 + (f3 - f2) / (r^p - 1), with Roache's grid convergence index
    GCI = 1.25 |f3 - f2| / (r^p - 1) as its uncertainty (P. J. Roache, Verification and
    Validation in Computational Science and Engineering, 1998, ch. 5);
  -1 < R < 0, oscillatory: no order and no extrapolation; the finest value stands, with
    half the three values' range as its uncertainty (Stern et al.); the apparent order
    ln(1 / |R|) / ln r (I. B. Celik et al., J. Fluids Eng. 130 (2008) 078001) is shown;
  |R| >= 1: diverging, no estimate.
With two grids the order is assumed (2, the immersed boundary's formal order) and GCI
uses the factor 3. The finest grid's box need not be the largest: a series' estimate is
carried to each larger box (lower blockage) by the difference between the two boxes on
the finest grid both have, that difference's change from the next coarser common grid
added (in quadrature) to the uncertainty.
A Mach series extrapolates to c -> infinity assuming an error in M^2 = (U/c)^2.
Rows of the same case (a run repeated) count once, the last.
"""
import argparse
import csv
import json
import math
import sys

QUANTITIES = ("cd", "st", "lr")
REFERENCES = {  # (body, Re, quantity): (value, source)
    ("cylinder", 100, "cd"): (1.33, "Park, Kwon and Choi 1998"),
    ("cylinder", 100, "st"): (0.165, "Park, Kwon and Choi 1998 (Williamson 1996: 0.164)"),
    ("cylinder", 40, "cd"): (1.522, "Dennis and Chang 1970 (Fornberg 1980: 1.498)"),
    ("cylinder", 40, "lr"): (2.345, "Dennis and Chang 1970 (Fornberg 1980: 2.24)"),
    ("sphere", 100, "cd"): (1.087, "Johnson and Patel 1999"),
}


def observed(values, ratio, formal=2.0):
    """Order, estimate and its uncertainty from values on grids coarse to fine (see above)."""
    if len(values) >= 3:
        f1, f2, f3 = values[-3:]
        if f2 == f1 or f3 == f2:
            return {"order": float("nan"), "extrapolated": f3, "gci": abs(f3 - f2) + abs(f2 - f1),
                    "assumed": False, "note": "unchanged between two grids"}
        conv = (f3 - f2) / (f2 - f1)
        if 0 < conv < 1:
            p = math.log(1 / conv) / math.log(ratio)
            ext = f3 + (f3 - f2) / (ratio ** p - 1)
            return {"order": p, "extrapolated": ext, "gci": 1.25 * abs(f3 - f2) / (ratio ** p - 1),
                    "assumed": False, "ratio": conv}
        if -1 < conv < 0:
            return {"order": float("nan"), "apparent_order": math.log(-1 / conv) / math.log(ratio),
                    "extrapolated": f3, "gci": 0.5 * (max(f1, f2, f3) - min(f1, f2, f3)),
                    "assumed": False, "ratio": conv, "note": "oscillatory"}
        return {"order": float("nan"), "extrapolated": float("nan"), "gci": float("nan"),
                "assumed": False, "ratio": conv, "note": "diverging"}
    if len(values) == 2:
        f2, f3 = values
        ext = f3 + (f3 - f2) / (ratio ** formal - 1)
        return {"order": formal, "extrapolated": ext, "gci": 3.0 * abs(f3 - f2) / (ratio ** formal - 1),
                "assumed": True}
    return None


def number(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return float("nan")


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k in ("re", "dh", "c", "lx", "ly", "lz", "xc", "blockage", "wall_s", "t_end") + QUANTITIES + ("cl_amp", "cd_drift", "cd_cv2", "cd_cv3"):
                r[k] = number(r.get(k))
            r["re"], r["dh"] = int(r["re"]), int(r["dh"])
            if r["cl_amp"] > 1e-3:  # shedding: the final state's wake is one instant, not the mean flow's
                r["lr"] = float("nan")
            r["box"] = "%gx%g" % (r["lx"], r["ly"]) + ("x%g" % r["lz"] if r["body"] == "sphere" else "")
            rows.append(r)
    last = {r["case"]: i for i, r in enumerate(rows)}  # a repeated case counts once: its last row
    return [r for i, r in enumerate(rows) if last[r["case"]] == i]


def series(rows, vary, keys):
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return {k: sorted(v, key=lambda r: r[vary]) for k, v in groups.items() if len({r[vary] for r in v}) >= 2}


def fmt(v, digits=4):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else ("%.*g" % (digits, v))


def analyse(rows):
    out = {"grid": [], "domain": [], "mach": []}
    for key, runs in sorted(series(rows, "dh", ("body", "re", "c", "box")).items()):
        dhs = [r["dh"] for r in runs]
        ratios = {dhs[i + 1] / dhs[i] for i in range(len(dhs) - 1)}
        entry = {"body": key[0], "re": key[1], "c": key[2], "box": key[3], "dh": dhs, "quantities": {}}
        if len(ratios) == 1:
            for q in QUANTITIES:
                vals = [r[q] for r in runs]
                if all(not math.isnan(v) for v in vals):
                    entry["quantities"][q] = {"values": vals, **(observed(vals, dhs[1] / dhs[0]) or {})}
        out["grid"].append(entry)
    for key, runs in sorted(series(rows, "blockage", ("body", "re", "c", "dh")).items()):
        # Cd at zero blockage, linear in the blockage through the two largest boxes (the
        # leading term of the classical blockage corrections, e.g. Maskell 1963)
        (b0, c0), (b1, c1) = [(r["blockage"], r["cd"]) for r in runs[:2]]
        out["domain"].append({"body": key[0], "re": key[1], "c": key[2], "dh": key[3],
                              "boxes": [(r["box"], r["blockage"], r["cd"], r["st"], r["lr"]) for r in runs],
                              "cd_zero_blockage": c0 - b0 * (c1 - c0) / (b1 - b0)})
    out["carried"] = carried(rows, out["grid"])
    for key, runs in sorted(series(rows, "c", ("body", "re", "box", "dh")).items()):
        entry = {"body": key[0], "re": key[1], "box": key[2], "dh": key[3], "c": [r["c"] for r in runs], "quantities": {}}
        lo, hi = runs[0], runs[-1]
        for q in QUANTITIES:
            a, b = lo[q], hi[q]  # error ~ M^2: f(c) = f_inc + K / c^2
            if not (math.isnan(a) or math.isnan(b)):
                w = (hi["c"] / lo["c"]) ** 2
                entry["quantities"][q] = {"values": [a, b], "incompressible": (w * b - a) / (w - 1),
                                          "mach_part_at_c10": (a - b) * w / (w - 1) * (lo["c"] / 10.0) ** 2}
        out["mach"].append(entry)
    return out


def carried(rows, grid):
    """Each three-grid series' estimate carried to the larger boxes of the same body, Re and c."""
    out = []
    by = {}
    for r in rows:
        by.setdefault((r["body"], r["re"], r["c"], r["box"]), {})[r["dh"]] = r
    for s in grid:
        if len(s["dh"]) < 3:
            continue
        base = by[(s["body"], s["re"], s["c"], s["box"])]
        for (body, re_, c, box), runs in sorted(by.items()):
            if (body, re_, c) != (s["body"], s["re"], s["c"]) or box == s["box"]:
                continue
            common = sorted(set(runs) & set(base))
            if not common or next(iter(runs.values()))["blockage"] >= next(iter(base.values()))["blockage"]:
                continue
            for q, v in s["quantities"].items():
                if math.isnan(v.get("extrapolated", float("nan"))):
                    continue
                diffs = [(d, runs[d][q] - base[d][q]) for d in common if not math.isnan(runs[d][q] - base[d][q])]
                if not diffs:
                    continue
                change = abs(diffs[-1][1] - diffs[-2][1]) if len(diffs) >= 2 else float("nan")
                out.append({"body": body, "re": re_, "c": c, "from_box": s["box"], "box": box,
                            "blockage": next(iter(runs.values()))["blockage"], "quantity": q,
                            "grid_estimate": v["extrapolated"], "grid_uncertainty": v["gci"],
                            "differences": diffs, "value": v["extrapolated"] + diffs[-1][1],
                            "uncertainty": math.hypot(v["gci"], change) if not math.isnan(change) else float("nan")})
    return out


def markdown(rows, res):
    lines = ["| case | body | Re | D/h | c | box (D) | blockage | t | wall s | Cd | Cl amp | St | Lr/D | Cd drift | Cd, control volume 2 D / 3 D |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %d | %d | %g | %s | %.1f%% | %g | %s | %s | %s | %s | %s | %s | %s / %s |" % (
            r["case"], r["body"], r["re"], r["dh"], r["c"], r["box"], 100 * r["blockage"], r["t_end"], fmt(r["wall_s"], 3),
            fmt(r["cd"]), fmt(r["cl_amp"], 3), fmt(r["st"]), fmt(r["lr"]), fmt(r["cd_drift"], 2), fmt(r["cd_cv2"]), fmt(r["cd_cv3"])))
    lines += ["", "Against the references (each run):", "",
              "| case | quantity | ns-step | reference | difference |", "|---|---|---|---|---|"]
    for r in rows:
        for q in QUANTITIES:
            ref = REFERENCES.get((r["body"], r["re"], q))
            if ref and not math.isnan(r[q]):
                lines.append("| %s | %s | %s | %g (%s) | %+.1f%% |" % (r["case"], q, fmt(r[q]), ref[0], ref[1], 100 * (r[q] / ref[0] - 1)))
    lines += ["", "Grid series (convergence ratio R, observed order p; the estimate at h -> 0: Richardson's with its GCI",
              "when monotone, the finest value with half the range when oscillatory):", "",
              "| body | Re | c | box | D/h | quantity | values | R | p | estimate | uncertainty |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in res["grid"]:
        for q, v in s["quantities"].items():
            order = fmt(v.get("order"), 3) + (" (assumed)" if v.get("assumed") else "")
            if v.get("note") == "oscillatory":
                order = "oscillatory (apparent %s)" % fmt(v["apparent_order"], 3)
            elif v.get("note"):
                order = v["note"]
            lines.append("| %s | %d | %g | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                s["body"], s["re"], s["c"], s["box"], "/".join(str(d) for d in s["dh"]), q,
                " ".join(fmt(x, 5) for x in v["values"]), fmt(v.get("ratio"), 3), order,
                fmt(v.get("extrapolated"), 5), fmt(v.get("gci"), 2)))
    lines += ["", "Three-grid estimates carried to larger boxes (the boxes' difference on the finest common grid;",
              "uncertainty: the grid's and that difference's change from the coarser common grid, in quadrature):", "",
              "| body | Re | c | quantity | grid estimate (box) | larger box, blockage | differences by D/h | value | uncertainty |",
              "|---|---|---|---|---|---|---|---|---|"]
    for e in res["carried"]:
        lines.append("| %s | %d | %g | %s | %s +- %s (%s) | %s, %.2f%% | %s | %s | %s |" % (
            e["body"], e["re"], e["c"], e["quantity"], fmt(e["grid_estimate"], 5), fmt(e["grid_uncertainty"], 2),
            e["from_box"], e["box"], 100 * e["blockage"], "; ".join("%d: %+.4g" % d for d in e["differences"]),
            fmt(e["value"], 5), fmt(e["uncertainty"], 2)))
    lines += ["", "Domain series (the same grid, boxes of decreasing blockage):", "",
              "| body | Re | c | D/h | box: blockage, Cd, St, Lr | Cd at zero blockage (linear, two largest boxes) |",
              "|---|---|---|---|---|---|"]
    for s in res["domain"]:
        lines.append("| %s | %d | %g | %d | %s | %s |" % (s["body"], s["re"], s["c"], s["dh"], "; ".join(
            "%s: %.2f%%, %s, %s, %s" % (b, 100 * bl, fmt(cd), fmt(st), fmt(lr)) for b, bl, cd, st, lr in s["boxes"]),
            fmt(s["cd_zero_blockage"])))
    lines += ["", "Mach series (c -> infinity assuming an M^2 error):", "",
              "| body | Re | box | D/h | c | quantity | values | incompressible | Mach's part at c = 10 |", "|---|---|---|---|---|---|---|---|---|"]
    for s in res["mach"]:
        for q, v in s["quantities"].items():
            lines.append("| %s | %d | %s | %d | %s | %s | %s | %s | %+.2f%% |" % (
                s["body"], s["re"], s["box"], s["dh"], "/".join("%g" % c for c in s["c"]), q,
                " ".join(fmt(x, 5) for x in v["values"]), fmt(v["incompressible"], 5),
                100 * v["mach_part_at_c10"] / v["incompressible"]))
    return "\n".join(lines) + "\n"


def plot(rows, res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8.4, 4.4), dpi=110)
    for s in res["grid"]:
        q = s["quantities"].get("cd")
        if not q:
            continue
        h = [1.0 / d for d in s["dh"]]
        label = "%s Re %d, box %s, c %g" % (s["body"], s["re"], s["box"], s["c"])
        line, = ax.plot(h, q["values"], "o-", label=label)
        if not math.isnan(q.get("extrapolated", float("nan"))):
            ax.plot([0] + h[-1:], [q["extrapolated"], q["values"][-1]], ":", color=line.get_color())
            ax.errorbar([0], [q["extrapolated"]], yerr=[q["gci"]], fmt="s", color=line.get_color(), capsize=3)
    best = {}  # each body's drag carried to its largest box, plotted at h = 0
    for e in res.get("carried", []):
        k = (e["body"], e["re"])
        if e["quantity"] == "cd" and (k not in best or e["blockage"] < best[k]["blockage"]):
            best[k] = e
    for i, ((body, re_), e) in enumerate(sorted(best.items())):
        err = e["uncertainty"] if not math.isnan(e["uncertainty"]) else e["grid_uncertainty"]
        ax.errorbar([-0.0012], [e["value"]], yerr=[err], fmt="D", color="k", ms=4, capsize=3,
                    label=None if i else "h -> 0 in the largest box (three grids' estimate carried)")
    for (body, re_, qty), (v, src) in REFERENCES.items():
        if qty == "cd" and any(s["body"] == body and s["re"] == re_ for s in res["grid"]):
            ax.axhline(v, color="0.5", lw=0.8, ls="--")
            ax.text(0.045, v, " %s Re %d: %g (%s)" % (body, re_, v, src.split(" (")[0]), fontsize=7, va="bottom")
    ax.set_xlabel("h / D")
    ax.set_ylabel("mean drag coefficient Cd")
    ax.set_xlim(left=-0.003)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--md")
    ap.add_argument("--plot")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        sys.exit("ns-bodies-study.py: no runs in %s" % a.csv)
    res = analyse(rows)
    text = markdown(rows, res)
    sys.stdout.write(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    if a.plot:
        try:
            plot(rows, res, a.plot)
        except ImportError as e:  # the tables stand without the picture
            print("ns-bodies-study.py: no plot (%s)" % e, file=sys.stderr)


if __name__ == "__main__":
    main()
