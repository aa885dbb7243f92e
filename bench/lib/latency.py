"""bench/lib/latency.py - the compile_latency workload.

How long the first search of a new key shape takes, in fresh backends
(one psql each): with the module off, on below compile_threshold, on with
threshold 0 (the compile included: cold), and in another backend after the
first compiled the shape (warm: the object cache); plus the compile times
the module itself reports (index stats, btree_jit_compile()).  Rows of
kind 'latency' (off/on) and 'info'.
"""

import json
import re
import statistics

import report
from cluster import MOD, with_module_note
from harness import detail, psql, say
from jitcheck import JIT_PROBLEMS

def timed_psql(lines, options, tuples=False):
    """Run script lines in ONE fresh backend with \\timing (query output
    to /dev/null until a line says otherwise): (list of ms, the output)."""
    out = psql("\\o /dev/null\n\\timing on\n" + "\n".join(lines) + "\n", options=options, tuples=tuples)
    return [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", out, re.M)], out


def timed_queries(sql_lines, options):
    """Run statements in ONE fresh backend with \\timing; list of ms."""
    return timed_psql(sql_lines, options)[0]


def num(v):
    """A float8 from to_jsonb: a number, or a string such as "NaN"."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def compile_latency(w, rounds):
    """Fresh backends (one psql each), per round r two never-searched
    indexes latidx<2r> (queries) and latidx<2r+1> (btree_jit_compile()):
      off       first query with the module off
      default   first query, module on, default compile_threshold (a short
                first query stays below it: no compile expected)
      cold      first query, module on, compile_threshold=0: the shape's
                first compile anywhere (object cache miss)
      warm      the same in a new backend: another backend compiled the
                shape (object cache hit if the module has one)
    """
    q = w.queries[0]
    keys = ("off1", "off2", "def1", "cold1", "cold2", "warm1", "cm_cold", "cm_warm", "ex_cold", "ex_warm")
    res = {k: [] for k in keys}
    src = {"cold": [], "warm": []}
    nidx = {"cold": [], "warm": []}
    sigs = []
    on0 = "-c btree_jit.enabled=on -c btree_jit.compile_threshold=0"
    for r in range(rounds):
        tq, tc = 2 * r, 2 * r + 1
        stmt = q.sql.replace("{T}", str(tq))
        # discarded: the table's first touch in the cluster (relation files,
        # buffers) would otherwise land in the "off" baseline only
        timed_queries([stmt], "-c btree_jit.enabled=off")
        off = timed_queries([stmt, stmt], "-c btree_jit.enabled=off")
        res["off1"].append(off[0])
        res["off2"].append(off[1])
        res["def1"].append(timed_queries([stmt], "-c btree_jit.enabled=on")[0])
        # with it, how many indexes (catalogs included: threshold 0 applies
        # to every index) the backend put on JIT code, and how many of those
        # from the object cache
        statq = ("SELECT to_jsonb(x) || jsonb_build_object("
                 "'backend_jit', (SELECT count(*) FROM btree_jit_index_stats() WHERE state = 'jit'), "
                 "'backend_cached', (SELECT count(*) FROM btree_jit_index_stats() WHERE code_source = 'object cache')) "
                 "FROM btree_jit_index_stats() x "
                 "WHERE to_jsonb(x)->>'indexrelid' = 'latidx%d';" % tq)
        for phase in ("cold", "warm"):
            lines = [stmt, stmt]
            if MOD.loaded:
                lines += ["\\o", "\\timing off", "\\echo @@S", statq]
            ts, out = timed_psql(lines, on0, tuples=True)
            res[phase + "1"].append(ts[0])
            if phase == "cold":
                res["cold2"].append(ts[1])
            if MOD.loaded:
                js = out.split("@@S", 1)[1].strip() if "@@S" in out else ""
                st = json.loads(js) if js.startswith("{") else None
                detail("LATENCY round %d %s latidx%d: %s" % (r, phase, tq, st))
                if st:
                    res["cm_" + phase].append(num(st.get("compile_ms")))
                    nidx[phase].append((st.get("backend_jit"), st.get("backend_cached")))
                    src[phase].append(str(st.get("code_source")))
                    if phase == "cold":
                        sigs.append(st.get("signature"))
                    if st.get("state") != "jit":
                        JIT_PROBLEMS.append("compile_latency latidx%d (%s backend): state %s (%s)"
                                            % (tq, phase, st.get("state"), st.get("reason")))
                else:
                    JIT_PROBLEMS.append("compile_latency latidx%d (%s backend): no index stats row" % (tq, phase))
        if MOD.loaded:
            for phase in ("cold", "warm"):
                js = psql("SELECT to_jsonb(x) FROM btree_jit_compile('latidx%d') x" % tc).strip()
                st = json.loads(js) if js.startswith("{") else {}
                detail("LATENCY round %d btree_jit_compile(latidx%d) %s backend: %s" % (r, tc, phase, st))
                if "compile_ms" in st:
                    res["ex_" + phase].append(num(st.get("compile_ms")))
    detail("LATENCY raw: %s; code sources: %s; signatures: %s" % (res, src, sigs))
    if MOD.loaded and len(set(sigs)) != len(sigs):
        say("note: compile_latency shapes did not all have distinct signatures: %s" % sigs)

    rows = []
    nt = "%d rounds, fresh backends, median" % rounds

    def lat_row(metric, offk, onk, note):
        med, lo, hi = report.ratio_stats(zip(res[offk], res[onk]))
        rows.append(report.row(w.name, metric, "latency", statistics.median(res[offk]), statistics.median(res[onk]),
                               med, unit="ms", rmin=lo, rmax=hi, notes=with_module_note([note])))

    def srcs(phase):
        return "/".join(sorted(set(src[phase]))) or "-"

    def indexes(phase):
        # e.g. "16 indexes on JIT code (15 from the object cache)"
        if not nidx[phase]:
            return ""
        jit = statistics.median(int(a) for a, _ in nidx[phase])
        cached = statistics.median(int(b) for _, b in nidx[phase])
        return "; %g indexes on JIT code (%g from the object cache)" % (jit, cached)
    lat_row("first query, new shape, default threshold", "off1", "def1",
            nt + "; below compile_threshold: stock search expected")
    lat_row("first query, new shape, threshold 0 (cold)", "off1", "cold1",
            nt + "; includes the compile; code: " + srcs("cold") + indexes("cold"))
    lat_row("first query, shape compiled by another backend", "off1", "warm1",
            nt + "; threshold 0; code: " + srcs("warm") + indexes("warm"))
    lat_row("second query, same backend", "off2", "cold2", nt)
    for k in ("cm_cold", "cm_warm", "ex_cold", "ex_warm"):
        bad = [v for v in res[k] if not (v == v) or v < 0 or v > 600000]
        if bad:
            JIT_PROBLEMS.append("compile_latency: module-reported %s values out of range: %s" % (k, bad))
            res[k] = [v for v in res[k] if v not in bad]
    for k, metric, note in (("cm_cold", "compile_ms, first compile of a shape", "index_stats compile_ms; " + srcs("cold")),
                            ("cm_warm", "compile_ms, 2nd backend same shape", "index_stats compile_ms; " + srcs("warm")),
                            ("ex_cold", "btree_jit_compile() new shape", "compile_ms"),
                            ("ex_warm", "btree_jit_compile() shape compiled elsewhere", "compile_ms, fresh backend")):
        if res[k]:
            rows.append(report.row(w.name, metric, "info", None, statistics.median(res[k]), None, unit="ms",
                                   notes="%s; min-max %.2f-%.2f ms" % (note, min(res[k]), max(res[k]))))
    return rows

