"""bench/lib/cgdiff.py - per-query totals and self-cost differences from the
profile parts bench/query_callgrind.sh leaves (callgrind --dump-before=
pg_sleep: part 2 is a session's first query, part 3 its second).

    python3 cgdiff.py DIR off=PID on=PID [warm=PID ...]

Prints, per arm, the instructions of each query, then for each arm but the
first the functions whose self cost differs most from the first arm's, per
query.
"""

import collections
import os
import sys

import breakdown


def self_costs(path):
    """Self cost (Ir) per function name of one callgrind output file."""
    selfc = breakdown.callgraph(path)[0]
    selfc.pop(breakdown.TOTAL, None)
    return collections.Counter(selfc)


def summary_events(path):
    """{event: total} from a callgrind file's events: and summary: lines."""
    if not os.path.exists(path):
        return {}
    names, totals = None, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("summary:"):
                totals = [int(x) for x in line.split()[1:]]
                break
    if not names or not totals:
        return {}
    return dict(zip(names, totals))


def main():
    d = sys.argv[1]
    arms = [a.split("=", 1) for a in sys.argv[2:]]
    parts = {}
    for arm, pid in arms:
        for q, part in ((1, 2), (2, 3)):
            path = os.path.join(d, "cg.%s.%d" % (pid, part))
            if os.path.exists(path):
                parts[(arm, q)] = self_costs(path)
    events = {}
    for arm, pid in arms:
        for q, part in ((1, 2), (2, 3)):
            ev = summary_events(os.path.join(d, "cg.%s.%d" % (pid, part)))
            if ev:
                events[(arm, q)] = ev
    print("instructions per query (callgrind Ir, the backend only):")
    first = arms[0][0]
    for arm, _ in arms:
        row = []
        for q in (1, 2):
            c = parts.get((arm, q))
            if c is None:
                row.append("query %d -" % q)
                continue
            total = sum(c.values())
            base = parts.get((first, q))
            extra = ""
            if arm != first and base is not None:
                b = sum(base.values())
                extra = " (%+d, %+.2f%%)" % (total - b, 100.0 * (total - b) / b)
            row.append("query %d %d%s" % (q, total, extra))
        print("  %-5s %s" % (arm, "; ".join(row)))
    if any(len(ev) > 1 for ev in events.values()):
        # --cache-sim: callgrind's model of a generic CPU's caches, not this
        # machine's counters
        print("\nsimulated cache misses per query (I1, D1 read+write, last level"
              " instruction+data):")
        for arm, _ in arms:
            row = []
            for q in (1, 2):
                ev = events.get((arm, q), {})
                i1 = ev.get("I1mr", 0)
                d1 = ev.get("D1mr", 0) + ev.get("D1mw", 0)
                ll = ev.get("ILmr", 0) + ev.get("DLmr", 0) + ev.get("DLmw", 0)
                row.append("query %d I1 %d, D1 %d, LL %d" % (q, i1, d1, ll))
            print("  %-5s %s" % (arm, "; ".join(row)))
    for arm, _ in arms[1:]:
        for q in (1, 2):
            a, b = parts.get((first, q)), parts.get((arm, q))
            if a is None or b is None:
                continue
            print("\n%s - %s, query %d: self cost differences (largest first)" % (arm, first, q))
            diffs = sorted(((b[k] - a[k], k) for k in set(a) | set(b)), key=lambda x: -abs(x[0]))
            for dv, k in diffs[:15]:
                if dv:
                    print("  %+9d  %9d -> %9d  %s" % (dv, a[k], b[k], k))


if __name__ == "__main__":
    main()
