#!/usr/bin/env python3
"""test/lib/include_reach.py - which of the project's headers each C file
of src/ includes, directly or through other project headers.

  include_reach.py ROOT [--list]

Fails (exit 1) if one header is included directly by every PostgreSQL-side
C file of the module (the Makefile's OBJS whose source includes
postgres.h: a grab-bag header that couples every file to every other), or
if a header includes
another layer's header upward (a header of a lower layer including one of
a higher layer, in link_cycles.py's order).  --list prints each header's
reach.
"""
import glob
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# top to bottom, as test/lib/link_cycles.py; include/ is shared by all
LAYERS = ["src/stats", "src/targets", "src/runtime", "src/compile",
          "src/locate", "src/llvm",
          "src/binpatch", "src/include"]


def resolve(name, from_dir, root):
    for d in (from_dir, os.path.join(root, "src"),
              os.path.join(root, "src", "include")):
        p = os.path.normpath(os.path.join(d, name))
        if os.path.exists(p):
            return p
    return None                  # a PostgreSQL or system header


def direct(path, root):
    text = open(path, encoding="utf-8", errors="replace").read()
    out = []
    for name in INCLUDE.findall(text):
        p = resolve(name, os.path.dirname(path), root)
        if p:
            out.append(p)
    return out


def reach(path, root, seen=None):
    seen = set() if seen is None else seen
    for h in direct(path, root):
        if h not in seen:
            seen.add(h)
            reach(h, root, seen)
    return seen


def layer(path, root):
    rel = os.path.relpath(path, root)
    for i, l in enumerate(LAYERS):
        if rel.startswith(l + "/"):
            return i
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    cfiles = sorted(glob.glob(os.path.join(root, "src", "**", "*.c"),
                              recursive=True) +
                    glob.glob(os.path.join(root, "src", "**", "*.cpp"),
                              recursive=True))
    headers = sorted(glob.glob(os.path.join(root, "src", "**", "*.h"),
                               recursive=True))
    out = subprocess.run(["make", "-s", "-C", root, "print-objs"],
                         capture_output=True, text=True, check=True).stdout
    objs = [l.split("=", 1)[1].split() for l in out.splitlines()
            if l.startswith("OBJS=")][0]
    module = [os.path.join(root, o[:-2] + ".c") for o in objs]
    pgside = [c for c in module if os.path.exists(c) and
              re.search(r'^#include "postgres.h"', open(c).read(), re.M)]
    users = {h: [c for c in pgside if h in direct(c, root)] for h in headers}
    reached = {h: [c for c in cfiles if h in reach(c, root)] for h in headers}
    bad = 0
    for h in headers:
        rel = os.path.relpath(h, root)
        if "--list" in sys.argv:
            print("%3d/%d of the module's PostgreSQL-side files include it, "
                  "%d/%d C files reach it: %s"
                  % (len(users[h]), len(pgside), len(reached[h]), len(cfiles),
                     rel))
        if len(users[h]) == len(pgside):
            print("EVERYWHERE %s is included by every PostgreSQL-side C file "
                  "of the module" % rel)
            bad += 1
        lh = layer(h, root)
        for inc in direct(h, root):
            li = layer(inc, root)
            if lh is not None and li is not None and li < lh:
                print("UPWARD %s includes %s" % (rel, os.path.relpath(inc, root)))
                bad += 1
    print("%d headers, %d C files (%d PostgreSQL-side); %d violations"
          % (len(headers), len(cfiles), len(pgside), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
