#!/usr/bin/env python3
"""bench/lib/breakdown.py - where the instructions of a counted statement go.

    python3 bench/lib/breakdown.py [--leaf] bench/out/profiles-<stamp> [WORKLOAD[/QUERY]...]

(BREAKDOWN_TOP=N lists the N largest other functions rather than 12.)

Reads the callgrind parts that `bench/run --keep-profiles` kept, and the
manifest.json the driver wrote beside them (which part holds which
statement, and its N).  For each statement and arm, per unit:

    cost(function) = (self cost in query(N) - mean of the two query(0)) / N

grouped into what the module replaces or adds, and the largest of the rest:

    search+checks, server _bt_binsrch's body, _bt_compare, the btree
                          comparison procedures it calls (bt*cmp, *_cmp),
                          and _bt_checkkeys with the operators it calls
                          (int4eq, ...), which the module compiles on 15
    search+checks, module btjit_* and the compiled code (no symbols)
    FunctionCall2Coll     fmgr trampoline of _bt_compare and of
                          _bt_checkkeys, shown apart
    everything else       by function, largest first

With `bench/run --simulate --keep-profiles`, also callgrind's simulated
cache misses and branch mispredictions per unit (a model of a generic CPU,
not this one's counters).

--leaf adds, from the parts' call graphs (read from the files: counts
and inclusive costs of every call), the leaf read: _bt_readpage (static:
found as the one server function that calls _bt_checkkeys) inclusive,
its self cost and each callee with its calls per unit (_bt_checkkeys
with its operators or, on 15 with the module on, the compiled checks;
the static callees by address, _bt_saveitem among them), the page search
(_bt_binsrch by the address range btree_jit_status() gives, every
level), _bt_first, _bt_search, _bt_preprocess_keys, btgettuple,
index_getnext_slot, index_rescan, the heap fetch and the executor, and
the ratio a compiled leaf read could reach at most: off / (on - the on
arm's leaf read).

"limit" is off / (off - server search+checks - FunctionCall2Coll's share
in them): the ratio the workload would reach if the code the module
replaces cost nothing at all.  The server is stripped: its static functions appear
as addresses (e.g. _bt_binsrch at 0x1b7cd0 on 15.18).
"""
import json
import os
import re
import subprocess
import sys

SERVER_SEARCH = re.compile(r"^(_bt_compare|_bt_checkkeys|bt(int2|int4|int8|int24|int42|int28|int82|int48|int84|oid|bool|char)cmp|"
                           r"(date|time|timestamp|timestamptz)_cmp|timestamp_cmp_internal)('\d+)?$")
MODULE = re.compile(r"^btjit_")
# The B-tree comparison procedures a page search calls through fmgr (with
# the JIT off, from _bt_compare), counted inclusive: their detoasting,
# palloc/pfree copies and collation lookups are page-search cost as well.
SEARCH_PROCS = re.compile(r"^(bt(int2|int4|int8|int24|int42|int28|int82|int48|int84|oid|bool|char|name|text|"
                          r"float4|float8|float48|float84|nametext|textname|textpattern|bpcharpattern)cmp|"
                          r"bpcharcmp|byteacmp|uuid_cmp|numeric_cmp|interval_cmp|network_cmp|enum_cmp|cash_cmp|"
                          r"(date|time|timetz|timestamp|timestamptz)_cmp|"
                          r"(date_cmp_timestamp|date_cmp_timestamptz|timestamp_cmp_date|timestamptz_cmp_date|"
                          r"timestamp_cmp_timestamptz|timestamptz_cmp_timestamp)|"
                          # the operators _bt_checkkeys calls (compiled on 15)
                          r"(int2|int4|int8|int24|int42|int28|int82|int48|int84|oid|bool|char|"
                          r"float4|float8|float48|float84|bytea)(eq|lt|le|gt|ge)|"
                          r"text_(lt|le|gt|ge)|texteq|(date|time|timestamp|timestamptz|uuid|numeric)_(eq|lt|le|gt|ge))"
                          r"('\d+)?$")
TOTAL = ("PROGRAM TOTALS", "")


def annotate(path):
    """({(function, object): self Ir}, total Ir) of one callgrind part.

    callgrind_annotate (3.19) lists the frames that were already on the stack
    when collection began (main, __libc_start_main, ...) with the part's whole
    cost as "self"; no function's real self cost is the whole part, so those
    rows are dropped and the total is taken from PROGRAM TOTALS."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    costs = {}
    total = None
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S.*)$", line)
        if not m or line.lstrip().startswith("=>"):
            continue
        ir = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = ir
            continue
        if total and ir >= total * 0.999:
            continue
        where = m.group(2)
        # "file:function [object]" or "???:0x... [object]"
        obj = re.search(r"\[([^\]]*)\]\s*$", where)
        obj = obj.group(1) if obj else ""
        fn = re.sub(r"\s*\[[^\]]*\]\s*$", "", where)
        fn = fn.split(":", 1)[1] if ":" in fn else fn
        if not obj:
            continue            # source-line rows of annotated files
        key = (fn, os.path.basename(obj))
        costs[key] = costs.get(key, 0) + ir
    if total is None:
        raise RuntimeError("%s: no PROGRAM TOTALS in callgrind_annotate's output" % path)
    costs[TOTAL] = total
    return costs


def event_totals(path):
    """{event: total} from a part's header: Ir only, or with --simulate
    also cache misses (I1mr, D1mr, DLmr, ...) and branches (Bc, Bcm, Bi, Bim)."""
    names, values = None, None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith(("summary:", "totals:")):
                values = [int(x) for x in line.split()[1:]]
                break
    return dict(zip(names or [], values or []))


SIM_EVENTS = (("Bcm", "conditional branches mispredicted"), ("Bim", "indirect branches mispredicted"),
              ("I1mr", "L1 instruction misses"), ("D1mr", "L1 data read misses"),
              ("DLmr", "last-level data read misses"))


def category(fn, obj, binsrch):
    name = fn.split("'")[0]
    if obj.startswith("postgres"):
        if binsrch and re.match(r"^0x[0-9a-f]+$", name):
            a = int(name, 16)
            if binsrch[0] <= a < binsrch[1]:
                return "search+checks, server"
        if SERVER_SEARCH.match(name):
            return "search+checks, server"
        if name == "FunctionCall2Coll":
            return "FunctionCall2Coll"
    if MODULE.match(name) or obj.startswith("btree_jit"):
        return "search+checks, module"
    if obj in ("", "???") or name.startswith("0x") and not obj.startswith(("postgres", "lib", "ld-")):
        return "search+checks, module"    # the compiled code: anonymous memory
    return None


def annotate_inclusive(path):
    """{(function, object): inclusive Ir} of one callgrind part, for the
    comparison procedures (SEARCH_PROCS) only."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S.*)$", line)
        if not m or line.lstrip().startswith("=>"):
            continue
        where = m.group(2)
        obj = re.search(r"\[([^\]]*)\]\s*$", where)
        if not obj or not os.path.basename(obj.group(1)).startswith("postgres"):
            continue
        fn = re.sub(r"\s*\[[^\]]*\]\s*$", "", where)
        fn = fn.split(":", 1)[1] if ":" in fn else fn
        if SEARCH_PROCS.match(fn):
            key = (fn, os.path.basename(obj.group(1)))
            costs[key] = costs.get(key, 0) + int(m.group(1).replace(",", ""))
    return costs


def part_search_costs(path, binsrch, inclusive=True):
    """What the page search costs in one part: (search, fc2c).  search is the
    self cost of _bt_binsrch, _bt_compare and the module's own code plus, with
    inclusive, the comparison procedures' inclusive cost; fc2c is
    FunctionCall2Coll's self cost (the page search's share of it is the
    difference between the JIT off and on)."""
    search = fc2c = 0
    for (fn, obj), v in annotate(path).items():
        if (fn, obj) == TOTAL:
            continue
        name = fn.split("'")[0]
        if obj.startswith("postgres") and name == "FunctionCall2Coll":
            fc2c += v
        elif obj.startswith("postgres") and (SEARCH_PROCS.match(fn) or name == "timestamp_cmp_internal"):
            continue            # counted inclusive below
        elif (obj.startswith("postgres") and name == "_bt_compare") or \
                category(fn, obj, binsrch) in ("search+checks, server", "search+checks, module"):
            search += v
    if inclusive:
        search += sum(annotate_inclusive(path).values())
        search += check_helper_costs(path)
    return search, fc2c


def server_static(fn, objs):
    """Whether callgraph's function fn is one of the stripped server's
    static functions: an address, in the postgres binary."""
    return (re.match(r"^0x[0-9a-f]+$", fn) is not None
            and (objs.get(fn) or "").startswith("postgres"))


def check_helper_costs(path):
    """Self cost of the stripped server's static functions that only
    _bt_checkkeys calls: 17 and 18's _bt_check_compare, which does most of
    the checks there (an address in callgrind's output; the operators it
    calls through FunctionCall2Coll are counted with SEARCH_PROCS)."""
    selfc, calls, objs = callgraph(path)
    callers = {}
    for (caller, callee) in calls:
        callers.setdefault(callee, set()).add(caller.split("'")[0])
    return sum(v for fn, v in selfc.items()
               if fn != TOTAL and server_static(fn, objs)
               and callers.get(fn) == {"_bt_checkkeys"})


def ceiling(off_total, off_search, off_fc2c, on_fc2c):
    """The ratio off/on if the page search and scan-key checks cost nothing
    (per unit figures)."""
    removable = off_search + max(off_fc2c - on_fc2c, 0)
    if off_total - removable <= 0:
        return None
    return off_total / (off_total - removable)


def callgraph(path):
    """(self, calls, objects) of one callgrind part, read from the file:
    self[function] = self Ir, calls[(caller, callee)] = [count, inclusive
    Ir of those calls], objects[function] = its object's basename.
    Functions are keyed by callgrind's name alone (a stripped server's
    static functions, and the compiled code, are addresses: 0x...), as
    callgrind_annotate keys them by file and name (every file of the
    stripped server is ???); self[TOTAL] is the part's total."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    space = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
             "fn": "fn", "cfn": "fn"}
    selfc, calls, objs = {}, {}, {}
    ob = fn = cfn = None
    count = None            # after a calls= line: the next cost line is that call's
    with open(path, errors="replace") as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                if fn is None:
                    continue
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 else 0
                if count is not None:
                    e = calls.setdefault((fn, cfn), [0, 0])
                    e[0] += count
                    e[1] += ir
                    count = None
                else:
                    selfc[fn] = selfc.get(fn, 0) + ir
                continue
            key, eq, val = line.rstrip("\n").partition("=")
            if not eq:
                continue
            if key == "calls":
                count = int(val.split()[0])
                continue
            if key not in space:
                continue
            m = re.match(r"^\((\d+)\)(?: (.*))?$", val)
            if m:
                table = names[space[key]]
                if m.group(2) is not None:
                    table[m.group(1)] = m.group(2)
                val = table.get(m.group(1), "?(%s)" % m.group(1))
            if key == "ob":
                ob = os.path.basename(val)
            elif key == "fn":
                fn = val
                objs.setdefault(fn, ob)
            elif key == "cfn":
                cfn = val
    selfc[TOTAL] = event_totals(path).get("Ir", 0)
    return selfc, calls, objs


def graph_per_unit(graphs, n):
    """Per unit (N part minus the mean of the two 0 parts, over n) of three
    callgraph() results: (self, calls, objects)."""
    s = per_unit([g[0] for g in graphs], n)
    calls = {}
    for k in set().union(*(g[1] for g in graphs)):
        a, full, b = (g[1].get(k, [0, 0]) for g in graphs)
        calls[k] = [(full[i] - (a[i] + b[i]) / 2.0) / n for i in (0, 1)]
    objs = {}
    for g in graphs:
        for k, v in g[2].items():
            objs.setdefault(k, v)
    return s, calls, objs


def inclusive(fn, calls):
    """A function's inclusive cost, as callgrind_annotate --inclusive=yes
    computes it: the cost of every call to it (recursive ones excepted)."""
    return sum(v[1] for (a, b), v in calls.items() if b == fn and a != fn)


def leaf_read(selfc, calls, objs, binsrch):
    """Where a probe's index work goes, from the call graph: the leaf read
    (_bt_readpage, found as the one server function that calls
    _bt_checkkeys: static, so stripped, in 15, 17 and 18), its self cost
    and its callees, the page search and the rest.  ([(label, per unit,
    calls per unit or None)], the leaf read's inclusive cost), or None
    if the part has no single caller of _bt_checkkeys."""
    def server(f):
        return (objs.get(f) or "").startswith("postgres")

    def static(f):
        return server_static(f, objs)

    chk = "_bt_checkkeys"
    readers = {a for (a, b), v in calls.items() if b == chk and a != chk and server(a) and v[0] > 0}
    if len(readers) != 1:
        return None
    rp = readers.pop()
    rp_incl = inclusive(rp, calls)
    rows = [("leaf read: _bt_readpage (%s), inclusive" % rp, rp_incl, None),
            ("  _bt_readpage self", selfc.get(rp, 0), None)]
    for (a, b), (cnt, incl) in sorted(calls.items(), key=lambda kv: -kv[1][1]):
        if a != rp or b == rp or abs(incl) < 0.5:
            continue
        if b == chk:
            label = "_bt_checkkeys, inclusive (operators; module)"
        elif static(b):
            label = "static %s, inclusive" % b
        else:
            label = "%s [%s], inclusive" % (b, objs.get(b, "?"))
        rows.append(("  " + label, incl, cnt))
    # the entry (with the module loaded, its detour; the body after the
    # replayed bytes is a function of its own to callgrind)
    bs = sorted(f for f in selfc if f != TOTAL and static(f) and binsrch and binsrch[0] <= int(f, 16) < binsrch[1])
    if bs:
        rows.append(("page search: _bt_binsrch (%s), inclusive, all levels" % bs[0], inclusive(bs[0], calls), None))
    for name in ("_bt_first", "_bt_search", "_bt_preprocess_keys", "btgettuple", "index_getnext_slot",
                 "index_rescan"):
        if any(b == name for _, b in calls):
            rows.append(("%s, inclusive" % name, inclusive(name, calls), None))
    total = selfc.get(TOTAL, 0)
    if any(b == "index_getnext_slot" for _, b in calls):
        ign = inclusive("index_getnext_slot", calls)
        rows.append(("heap fetch: index_getnext_slot - index_getnext_tid",
                     ign - inclusive("index_getnext_tid", calls), None))
        rows.append(("executor, the rest: total - index_getnext_slot - index_rescan",
                     total - ign - inclusive("index_rescan", calls), None))
    rows.append(("total", total, None))
    return rows, rp_incl


def per_unit(parts, n):
    base_a, full, base_b = parts
    keys = set(base_a) | set(full) | set(base_b)
    return {k: (full.get(k, 0) - (base_a.get(k, 0) + base_b.get(k, 0)) / 2.0) / n for k in keys}


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    leaf = "--leaf" in argv
    argv = [x for x in argv if x != "--leaf"]
    pdir = argv[0]
    want = argv[1:]
    with open(os.path.join(pdir, "manifest.json")) as f:
        man = json.load(f)
    binsrch = tuple(man.get("binsrch_range") or ()) or None
    for st in man["statements"]:
        label = "%s/%s" % (st["workload"], st["query"])
        if want and not any(label == w or st["workload"] == w for w in want):
            continue
        arms = {}
        sims = {}
        for arm, k in st["parts"].items():
            paths = [os.path.join(pdir, "%s.part%d" % (man["tags"][arm], 4 * k + i)) for i in (2, 3, 4)]
            arms[arm] = per_unit([annotate(p) for p in paths], st["n"])
            sims[arm] = per_unit([event_totals(p) for p in paths], st["n"])
        print("\n%s  (per %s, N=%d; self cost; callgrind Ir)" % (label, st["unit"], st["n"]))
        cols = [a for a in ("stock", "off", "on") if a in arms]
        groups = {a: {} for a in cols}
        rest = {a: {} for a in cols}
        for a in cols:
            for (fn, obj), v in arms[a].items():
                if (fn, obj) == TOTAL:
                    continue
                c = category(fn, obj, binsrch)
                if c:
                    groups[a][c] = groups[a].get(c, 0) + v
                else:
                    rest[a]["%s [%s]" % (fn, obj)] = v
        total = {a: arms[a][TOTAL] for a in cols}
        print("  %-58s" % "" + "".join("%12s" % a for a in cols))
        for c in ("search+checks, server", "search+checks, module", "FunctionCall2Coll"):
            print("  %-58s" % c + "".join("%12.0f" % groups[a].get(c, 0) for a in cols))
        ref = "off" if "off" in cols else cols[0]
        top = sorted(rest[ref].items(), key=lambda kv: -kv[1])[:int(os.environ.get("BREAKDOWN_TOP", "12"))]
        for name, _ in top:
            print("  %-58s" % name[:58] + "".join("%12.0f" % rest[a].get(name, 0) for a in cols))
        shown = {name for name, _ in top}
        print("  %-58s" % "everything else" + "".join(
            "%12.0f" % sum(v for k, v in rest[a].items() if k not in shown) for a in cols))
        print("  %-58s" % "total" + "".join("%12.0f" % total[a] for a in cols))
        for ev, what in SIM_EVENTS:
            if all(ev in sims[a] for a in cols):
                print("  %-58s" % ("simulated: %s (%s)" % (what, ev))[:58] +
                      "".join("%12.1f" % sims[a][ev] for a in cols))
        if "off" in cols and "on" in cols:
            search_off = groups["off"].get("search+checks, server", 0) + groups["off"].get("search+checks, module", 0)
            fc_delta = groups["off"].get("FunctionCall2Coll", 0) - groups["on"].get("FunctionCall2Coll", 0)
            removable = search_off + max(fc_delta, 0)
            print("  off/on %.3fx; search+checks (server + dispatcher + their FunctionCall2Coll) is %.0f of %.0f "
                  "(%.0f%%) with the JIT off, %.0f with it on; limit if it cost nothing: %.3fx"
                  % (total["off"] / total["on"], removable, total["off"], 100.0 * removable / total["off"],
                     groups["on"].get("search+checks, server", 0) + groups["on"].get("search+checks, module", 0),
                     total["off"] / (total["off"] - removable)))
        if leaf:
            graphs = {}
            for arm, k in st["parts"].items():
                paths = [os.path.join(pdir, "%s.part%d" % (man["tags"][arm], 4 * k + i)) for i in (2, 3, 4)]
                graphs[arm] = graph_per_unit([callgraph(p) for p in paths], st["n"])
            lr = {a: leaf_read(graphs[a][0], graphs[a][1], graphs[a][2], binsrch) for a in cols}
            if all(lr[a] for a in cols):
                print("  -- the leaf read and the rest (call graph; inclusive = self + calls; per %s)" % st["unit"])
                print("  %-58s" % "" + "".join("%12s%8s" % (a, "calls") for a in cols))
                labels = []
                for a in cols:
                    for lab, _, _ in lr[a][0]:
                        if lab not in labels:
                            labels.append(lab)
                for lab in labels:
                    cells = ""
                    for a in cols:
                        r = [x for x in lr[a][0] if x[0] == lab]
                        cells += ("%12.0f%8s" % (r[0][1], "%.1f" % r[0][2] if r[0][2] is not None else "")
                                  if r else "%12s%8s" % ("-", ""))
                    print("  %-58s" % lab[:58] + cells)
                if "off" in cols and "on" in cols:
                    on_left = total["on"] - lr["on"][1]
                    print("  a compiled leaf read at no cost: on %.0f - leaf read %.0f = %.0f; ceiling off/that "
                          "%.3fx (now %.3fx)" % (total["on"], lr["on"][1], on_left,
                                                 total["off"] / on_left if on_left > 0 else float("nan"),
                                                 total["off"] / total["on"]))
            else:
                print("  -- leaf read: no single caller of _bt_checkkeys in the server (%s)"
                      % ", ".join(a for a in cols if not lr[a]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
