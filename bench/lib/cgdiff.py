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
import re
import sys


def self_costs(path):
    """Self cost (Ir) per function name of one callgrind output file."""
    names = {}
    fn = None
    after_calls = False
    cost = collections.Counter()
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(c?fn)=(?:\((\d+)\))?\s*(.*)$", line)
            if m:
                kind, idx, name = m.groups()
                if idx is not None:
                    if name:
                        names[idx] = name
                    name = names.get(idx, name)
                if kind == "fn":
                    fn = name
                continue
            if line.startswith("calls="):
                after_calls = True
                continue
            if line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                if len(parts) < 2:
                    continue
                if after_calls:
                    # the inclusive cost of a call, not this function's own
                    after_calls = False
                    continue
                cost[fn] += int(parts[1])
    return cost


def main():
    d = sys.argv[1]
    arms = [a.split("=", 1) for a in sys.argv[2:]]
    parts = {}
    for arm, pid in arms:
        for q, part in ((1, 2), (2, 3)):
            path = os.path.join(d, "cg.%s.%d" % (pid, part))
            if os.path.exists(path):
                parts[(arm, q)] = self_costs(path)
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
