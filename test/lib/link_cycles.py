#!/usr/bin/env python3
"""test/lib/link_cycles.py - the module's dependency rules, read from the
built objects' symbol tables (nm): an edge A -> B is a symbol that A's
object leaves undefined and B's object defines (a function or a variable).

  link_cycles.py ROOT

Checks, over the objects of btree_jit.so (the Makefile's OBJS) and of
btree_jit_llvm.so (COMPILER_OBJS), listed by `make print-objs`:
  1. no two objects reference each other both ways (no cycle of length 2);
  2. no longer cycle either (the file graph is acyclic);
  3. layers point one way: an object references only objects of its own
     layer or of layers below it, in the order of LAYERS;
  4. the compiler library references no object of the module (it sees the
     module only through include/compiler.h, at run time).
Prints every violation with the symbols behind it, the edge count, and
exits 1 on any violation.
"""
import subprocess
import sys
import os

# top to bottom: each layer may use the layers after it
LAYERS = ["src/btree_jit", "src/stats", "src/targets", "src/runtime",
          "src/compile", "src/locate", "src/binpatch"]


def layer_of(obj):
    for i, layer in enumerate(LAYERS):
        if obj == layer + ".o" or obj.startswith(layer + "/"):
            return i
    return None


def symbols(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRGSV":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
    return defined, undefined


def edges_of(objs, root):
    syms = {o: symbols(os.path.join(root, o)) for o in objs}
    edges = {}
    for a in objs:
        for b in objs:
            if a != b:
                shared = syms[a][1] & syms[b][0]
                if shared:
                    edges[(a, b)] = sorted(shared)
    return edges


def find_cycle(nodes, edges):
    succ = {n: [b for (a, b) in edges if a == n] for n in nodes}
    state = {n: 0 for n in nodes}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in succ[n]:
            if state[m] == 1:
                return stack[stack.index(m):] + [m]
            if state[m] == 0:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in nodes:
        if state[n] == 0:
            c = visit(n)
            if c:
                return c
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    out = subprocess.run(["make", "-s", "-C", root, "print-objs"],
                         capture_output=True, text=True, check=True).stdout
    lists = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    module = lists["OBJS"].split()
    library = lists["COMPILER_OBJS"].split()
    missing = [o for o in module + library
               if not os.path.exists(os.path.join(root, o))]
    if missing:
        print("link_cycles: not built: " + " ".join(missing))
        return 2
    bad = 0

    edges = edges_of(module, root)
    for (a, b), syms in sorted(edges.items()):
        if (b, a) in edges and a < b:
            print("CYCLE %s <-> %s: %s / %s" % (a, b, ", ".join(syms),
                                                ", ".join(edges[(b, a)])))
            bad += 1
    cycle = find_cycle(module, edges)
    if cycle and not bad:
        print("CYCLE " + " -> ".join(cycle))
        bad += 1
    for (a, b), syms in sorted(edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if la is None or lb is None:
            print("LAYER unknown for %s or %s" % (a, b))
            bad += 1
        elif lb < la:
            print("UPWARD %s -> %s (%s above %s): %s" %
                  (a, b, LAYERS[lb], LAYERS[la], ", ".join(syms)))
            bad += 1

    cross = edges_of(library + module, root)
    for (a, b), syms in sorted(cross.items()):
        if a in library and b in module:
            print("LIBRARY %s -> %s: %s" % (a, b, ", ".join(syms)))
            bad += 1
    lib_edges = {k: v for k, v in cross.items()
                 if k[0] in library and k[1] in library}
    cycle = find_cycle(library, lib_edges)
    if cycle:
        print("CYCLE " + " -> ".join(cycle))
        bad += 1

    print("%d objects of btree_jit.so, %d of btree_jit_llvm.so, %d edges; "
          "%d violations" % (len(module), len(library),
                             len(edges) + len(lib_edges), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
