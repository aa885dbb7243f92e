#!/usr/bin/env python3
"""test/lib/function_lengths.py - the length of every function in the
module's C sources, in PostgreSQL (pgindent) layout: a definition's name
starts a line, its body opens with "{" alone at the start of a line and
closes with "}" alone at the start of a line.

  function_lengths.py ROOT [--max N] [--allow NAME ...] [--list K]

Counts lines from the name's line to the closing brace, over src/ and the
bitcode template (llvm-ir/).  Exits 1 if a function other than the allowed
ones is longer than N lines (default 120), or if an allowed one is not a
one-switch function (a switch statement at the body's top level spans at
least half its lines); --list K prints the K longest.
"""
import argparse
import glob
import os
import re
import sys

NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = NAME.match(lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            # the body opens within a few lines (arguments may wrap)
            j = i
            while j < len(lines) and j < i + 12 and lines[j] != "{":
                if lines[j].rstrip().endswith(";"):
                    break
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                out.append((m.group(1), k - i + 1, "%s:%d" % (path, i + 1),
                            switch_share(lines, j, k)))
                i = k
        i += 1
    return out


def switch_share(lines, open_line, close_line):
    """The share of the body's lines inside its largest switch statement."""
    best = 0
    for i in range(open_line + 1, close_line):
        m = re.match(r"^(\t+)switch \(", lines[i])
        if not m:
            continue
        k = i + 1
        while k < close_line and lines[k] != m.group(1) + "}":
            k += 1
        best = max(best, k - i + 1)
    body = close_line - open_line + 1
    return best / body if body else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--max", type=int, default=120)
    ap.add_argument("--allow", nargs="*", default=[])
    ap.add_argument("--list", type=int, default=0)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.root, "src", "**", "*.c"),
                             recursive=True) +
                   glob.glob(os.path.join(a.root, "src", "**", "*.cpp"),
                             recursive=True) +
                   glob.glob(os.path.join(a.root, "llvm-ir", "*.c")))
    allf = []
    for f in files:
        allf += functions(f)
    allf.sort(key=lambda t: -t[1])
    for name, n, where, share in allf[:a.list]:
        print("%5d  %-40s %s" % (n, name, os.path.relpath(where.split(":")[0], a.root) + ":" + where.split(":")[1]))
    bad = [t for t in allf if t[1] > a.max and t[0] not in a.allow]
    for name, n, where, share in bad:
        print("TOO LONG: %s (%d lines > %d) at %s" % (name, n, a.max, where))
    for name, n, where, share in allf:
        if name in a.allow and share < 0.5:
            print("NOT A SWITCH: %s is allowed as a one-switch function, but its "
                  "largest switch spans %.0f%% of it, at %s"
                  % (name, 100 * share, where))
            bad.append((name, n, where, share))
    print("%d functions in %d files; %d over %d lines outside the allowed %s"
          % (len(allf), len(files), len(bad), a.max, a.allow))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
