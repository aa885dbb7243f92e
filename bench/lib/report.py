"""bench/lib/report.py - the result table: text, CSV and a hand-written SVG.

A row is a dict:
  workload, metric, kind ('instructions' | 'throughput' | 'latency' | 'info'),
  off, on (numbers or None), unit (of off/on), ratio (">1 = better with the
  JIT": off/on for instructions and latency, on/off for throughput),
  rmin, rmax (spread of per-round ratios, timing rows), target (ratio the
  project must reach, or None), ceiling (instruction rows under callgrind:
  the ratio if the page search cost nothing), notes (short text).
"""

import csv
import html
import statistics


def median(xs):
    return statistics.median(xs) if xs else None


def row(workload, metric, kind, off, on, ratio, unit="", rmin=None, rmax=None, target=None, notes="",
        ceiling=None):
    """One row of the table (see above)."""
    return dict(workload=workload, metric=metric, kind=kind, unit=unit, off=off, on=on, ratio=ratio,
                rmin=rmin, rmax=rmax, target=target, notes=notes, ceiling=ceiling)


def ratio(a, b):
    """a / b, or None when b is not positive."""
    return a / b if b > 0 else None


def ratio_stats(pairs):
    """(median, min, max) of a / b over the pairs with b > 0; all None if none."""
    rs = [a / b for a, b in pairs if b > 0]
    if not rs:
        return None, None, None
    return statistics.median(rs), min(rs), max(rs)


def fmt_num(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    a = abs(v)
    if a >= 1000:
        s = "{:,.0f}".format(v)
    elif a >= 100:
        s = "{:.1f}".format(v)
    elif a >= 10:
        s = "{:.2f}".format(v)
    else:
        s = "{:.3f}".format(v)
    return s


def fmt_ratio(r):
    return "-" if r is None else "{:.3f}x".format(r)


def verdict(row):
    r, t = row.get("ratio"), row.get("target")
    if r is None or t is None:
        return ""
    return "meets" if r >= t else "BELOW"


COLUMNS = ["workload", "metric", "off", "on", "ratio", "ceiling", "spread", "target", "notes"]


def text_table(rows):
    cells = []
    for r in rows:
        spread = ""
        if r.get("rmin") is not None:
            spread = "{:.3f}-{:.3f}".format(r["rmin"], r["rmax"])
        target = ""
        if r.get("target") is not None:
            target = ">={:.2f}x {}".format(r["target"], verdict(r))
        unit = r.get("unit") or ""
        metric = r["metric"] + (" [%s]" % unit if unit else "")
        ceil = "" if r.get("ceiling") is None else fmt_ratio(r["ceiling"])
        cells.append([r["workload"], metric, fmt_num(r.get("off")), fmt_num(r.get("on")),
                      fmt_ratio(r.get("ratio")), ceil, spread, target, r.get("notes", "")])
    widths = [len(c) for c in COLUMNS]
    for row in cells:
        for i, c in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(c))
    right = {2, 3, 4, 5}
    lines = []

    def line(vals):
        out = []
        for i, v in enumerate(vals):
            if i == len(vals) - 1:
                out.append(v)
            elif i in right:
                out.append(v.rjust(widths[i]))
            else:
                out.append(v.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines.append(line(COLUMNS))
    lines.append(line(["-" * w for w in widths[:-1]] + ["-----"]))
    prev = None
    for r, row in zip(rows, cells):
        if prev is not None and r["workload"] != prev:
            lines.append("")
        prev = r["workload"]
        lines.append(line(row))
    return "\n".join(lines)


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "metric", "kind", "unit", "off", "on", "ratio", "ceiling",
                    "ratio_min", "ratio_max", "target", "verdict", "notes"])
        for r in rows:
            w.writerow([r["workload"], r["metric"], r["kind"], r.get("unit", ""),
                        "" if r.get("off") is None else r["off"],
                        "" if r.get("on") is None else r["on"],
                        "" if r.get("ratio") is None else "%.4f" % r["ratio"],
                        "" if r.get("ceiling") is None else "%.4f" % r["ceiling"],
                        "" if r.get("rmin") is None else "%.4f" % r["rmin"],
                        "" if r.get("rmax") is None else "%.4f" % r["rmax"],
                        "" if r.get("target") is None else r["target"],
                        verdict(r), r.get("notes", "")])


COLORS = {"instructions": "#3b6fb6", "throughput": "#e08a1e", "latency": "#7a7a7a"}


def write_svg(rows, path, title, subtitle):
    rows = [r for r in rows if r.get("ratio") is not None]
    label_w, bar_w, right_w = 480, 400, 230
    row_h, top, bottom = 24, 70, 60
    width = label_w + bar_w + right_w
    height = top + row_h * max(len(rows), 1) + bottom
    vmax = 1.5
    for r in rows:
        vmax = max(vmax, r["ratio"], r.get("rmax") or 0, r.get("target") or 0)
    vmax = min(vmax * 1.08, 3.0)   # whiskers beyond are clipped at the edge

    def x(v):
        return label_w + bar_w * min(max(v, 0.0), vmax) / vmax

    e = html.escape
    out = []
    out.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
               'viewBox="0 0 %d %d" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">'
               % (width, height, width, height))
    out.append('<rect x="0" y="0" width="%d" height="%d" fill="white"/>' % (width, height))
    out.append('<text x="10" y="22" font-size="16" font-weight="bold">%s</text>' % e(title))
    out.append('<text x="10" y="42" fill="#444">%s</text>' % e(subtitle))
    out.append('<text x="10" y="60" fill="#444">ratio &gt; 1 = better with the JIT '
               '(instructions and latency: off/on; throughput: on/off). '
               'Whiskers: min-max of per-round ratios; red tick: target.</text>')
    # grid
    step = 0.25 if vmax <= 2.5 else 0.5 if vmax <= 5 else 1.0
    v = 0.0
    y0, y1 = top - 4, top + row_h * len(rows)
    while v <= vmax + 1e-9:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>' % (x(v), y0, x(v), y1))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%.2f</text>' % (x(v), y1 + 16, v))
        v += step
    for i, r in enumerate(rows):
        y = top + i * row_h
        color = COLORS.get(r["kind"], "#999")
        label = "%s: %s" % (r["workload"], r["metric"])
        if len(label) > 72:
            label = label[:70] + "..."
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (label_w - 8, y + 15, e(label)))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                   % (label_w, y + 4, x(r["ratio"]) - label_w, row_h - 8, color))
        if r.get("rmin") is not None:
            yc = y + row_h / 2
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (x(r["rmin"]), yc, x(r["rmax"]), yc))
            for vv in (r["rmin"], r["rmax"]):
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>' % (x(vv), yc - 4, x(vv), yc + 4))
        if r.get("target") is not None:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d00000" stroke-width="2"/>'
                       % (x(r["target"]), y + 1, x(r["target"]), y + row_h - 1))
        txt = "%.3fx" % r["ratio"]
        if r.get("target") is not None:
            txt += "  (target %.2fx: %s)" % (r["target"], verdict(r))
        out.append('<text x="%d" y="%d">%s</text>' % (label_w + bar_w + 8, y + 15, e(txt)))
    out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-dasharray="4,3"/>'
               % (x(1.0), y0, x(1.0), y1))
    # legend
    ly = height - 18
    lx = 10
    for k in ("instructions", "throughput", "latency"):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, ly - 10, COLORS[k]))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 16, ly, k))
        lx += 120
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
