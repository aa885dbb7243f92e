"""bench/lib/latency.py - the compile_latency workload.

How long the first search of a new key shape takes, in fresh backends
(one psql each): with the module off, on below compile_threshold, on with
threshold 0 in background mode (the compile worker compiles the shape: the
query must not wait) and in inline mode (the compile included), and in
another backend after the first got the shape (warm: the object cache);
how long after its first search a backend in background mode runs the
shape on compiled code; the compile times the module itself reports;
and pgbench -S on a freshly started cluster with an empty object cache
(per-transaction latencies from pgbench --log: max and p99.9, module off,
on in background mode, on in inline mode).  Rows of kind 'latency'
(off/on) and 'info'.
"""

import glob
import json
import os
import re
import shutil
import statistics
import tempfile

import report
from cluster import MOD, cluster_start, cluster_stop, with_module_note
from harness import DB, detail, pgbin, psql, run, say
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


# In the backend that ran the first query in background mode: search until
# the index runs compiled code (each search is the dispatcher's chance to see
# that the worker finished), then how long after the backend started that
# was.  backend_start precedes the first search by the connection set-up,
# so the figure is an upper bound of "first search to compiled code".
TO_JIT = """DO $$
DECLARE st text;
BEGIN
  FOR i IN 1..4000 LOOP
    PERFORM count(*) FROM lat%(t)d WHERE a = 12345 AND b = 15 AND c = 4115;
    SELECT state INTO st FROM btree_jit_index_stats() WHERE indexrelid = 'latidx%(t)d'::regclass;
    EXIT WHEN st IS DISTINCT FROM 'queued';
    PERFORM pg_sleep(0.002);
  END LOOP;
  PERFORM set_config('bench.to_jit_ms',
    (extract(epoch FROM clock_timestamp() - (SELECT backend_start FROM pg_stat_activity
                                              WHERE pid = pg_backend_pid())) * 1000)::text, false);
END $$;"""


def compile_latency(w, rounds):
    """Fresh backends (one psql each), per round r two never-searched
    indexes latidx<2r> (background) and latidx<2r+1> (inline):
    Each first query probes its index 100 times (a nested loop), so that the
    index crosses the default compile_threshold within it, and no catalog
    index does.
      off       first query with the module off
      cold      first query, module on, background mode: the shape's first compile anywhere goes to the worker;
                then the time until the backend runs compiled code
      inline    the same on latidx<2r+1> in inline mode: the backend
                compiles (object cache miss) before answering
      warm      latidx<2r> in a new backend after the worker compiled the
                shape (object cache hit if the module has one)
    then btree_jit_compile(latidx<2r+1>) in another fresh backend."""
    q = w.queries[0]
    keys = ("off1", "off2", "cold1", "cold2", "tojit", "icold1", "icold2", "ioff1", "ioff2",
            "warm1", "cm_inline", "cm_warm", "ex_warm")
    res = {k: [] for k in keys}
    src = {"inline": [], "warm": []}
    nidx = {"inline": [], "warm": []}
    sigs = []
    # nested loops of index probes in every arm; the default threshold
    base = "-c enable_hashjoin=off -c enable_mergejoin=off -c enable_bitmapscan=off -c enable_material=off "
    off_o = base + "-c btree_jit.enabled=off"
    on0 = base + "-c btree_jit.enabled=on"
    statq = ("SELECT to_jsonb(x) || jsonb_build_object("
             "'backend_jit', (SELECT count(*) FROM btree_jit_index_stats() WHERE state = 'jit'), "
             "'backend_cached', (SELECT count(*) FROM btree_jit_index_stats() WHERE code_source = 'object cache')) "
             "FROM btree_jit_index_stats() x "
             "WHERE to_jsonb(x)->>'indexrelid' = 'latidx%d';")

    def index_state(out, phase, t):
        js = out.split("@@S", 1)[1].strip().splitlines()[0] if "@@S" in out else ""
        st = json.loads(js) if js.startswith("{") else None
        detail("LATENCY %s latidx%d: %s" % (phase, t, st))
        return st

    for r in range(rounds):
        tq, tc = 2 * r, 2 * r + 1
        stmt = q.sql.replace("{T}", str(tq))
        istmt = q.sql.replace("{T}", str(tc))
        # discarded: the table's first touch in the cluster (relation files,
        # buffers) would otherwise land in the "off" baseline only
        timed_queries([stmt], off_o)
        timed_queries([istmt], off_o)
        off = timed_queries([stmt, stmt], off_o)
        res["off1"].append(off[0])
        res["off2"].append(off[1])
        ioff = timed_queries([istmt, istmt], off_o)
        res["ioff1"].append(ioff[0])
        res["ioff2"].append(ioff[1])

        # background: two queries timed, then (untimed) until compiled code
        lines = [stmt, stmt]
        if MOD.loaded:
            lines += ["\\o", "\\timing off", TO_JIT % {"t": tq},
                      "\\echo @@T", "SELECT current_setting('bench.to_jit_ms');",
                      "\\echo @@S", statq % tq]
        ts, out = timed_psql(lines, on0 + " -c btree_jit.compile_mode=background", tuples=True)
        res["cold1"].append(ts[0])
        res["cold2"].append(ts[1])
        if MOD.loaded:
            m = re.search(r"@@T\s+([\d.]+)", out)
            if m:
                res["tojit"].append(float(m.group(1)))
            st = index_state(out, "round %d background" % r, tq)
            if st:
                sigs.append(st.get("signature"))
                if st.get("state") != "jit":
                    JIT_PROBLEMS.append("compile_latency latidx%d (background): state %s (%s) after the wait"
                                        % (tq, st.get("state"), st.get("reason")))
            else:
                JIT_PROBLEMS.append("compile_latency latidx%d (background): no index stats row" % tq)

        # inline, then warm (another backend, latidx<2r>)
        for phase, t, s_, opts in (("inline", tc, istmt, on0 + " -c btree_jit.compile_mode=inline"),
                                   ("warm", tq, stmt, on0)):
            lines = [s_, s_]
            if MOD.loaded:
                lines += ["\\o", "\\timing off", "\\echo @@S", statq % t]
            ts, out = timed_psql(lines, opts, tuples=True)
            if phase == "inline":
                res["icold1"].append(ts[0])
                res["icold2"].append(ts[1])
            else:
                res["warm1"].append(ts[0])
            if MOD.loaded:
                st = index_state(out, "round %d %s" % (r, phase), t)
                if st:
                    res["cm_" + phase].append(num(st.get("compile_ms")))
                    nidx[phase].append((st.get("backend_jit"), st.get("backend_cached")))
                    src[phase].append(str(st.get("code_source")))
                    if phase == "inline":
                        sigs.append(st.get("signature"))
                    if st.get("state") != "jit":
                        JIT_PROBLEMS.append("compile_latency latidx%d (%s backend): state %s (%s)"
                                            % (t, phase, st.get("state"), st.get("reason")))
                else:
                    JIT_PROBLEMS.append("compile_latency latidx%d (%s backend): no index stats row" % (t, phase))
        if MOD.loaded:
            js = psql("SELECT to_jsonb(x) FROM btree_jit_compile('latidx%d') x" % tc).strip()
            st = json.loads(js) if js.startswith("{") else {}
            detail("LATENCY round %d btree_jit_compile(latidx%d) fresh backend: %s" % (r, tc, st))
            if "compile_ms" in st:
                res["ex_warm"].append(num(st.get("compile_ms")))
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
    lat_row("first query, new shape crosses threshold, background", "off1", "cold1",
            nt + "; 100 probes; the compile worker compiles the shape meanwhile")
    lat_row("second query, same backend, background", "off2", "cold2",
            nt + "; stock path until the worker is done")
    lat_row("first query, new shape crosses threshold, inline", "ioff1", "icold1",
            nt + "; includes the compile; code: " + srcs("inline") + indexes("inline"))
    lat_row("second query, same backend, inline", "ioff2", "icold2",
            nt + "; after the backend compiled the shape")
    lat_row("first query, shape compiled by another backend", "off1", "warm1",
            nt + "; code: " + srcs("warm") + indexes("warm"))
    if res["tojit"]:
        rows.append(report.row(w.name, "first search to compiled code, background", "info", None,
                               statistics.median(res["tojit"]), None, unit="ms",
                               notes="upper bound (from backend start); max %.1f ms, target < 1000 ms: %s; all: %s"
                               % (max(res["tojit"]),
                                  "met" if max(res["tojit"]) < 1000 else "MISSED",
                                  ", ".join("%.0f" % v for v in res["tojit"]))))
    for k in ("cm_inline", "cm_warm", "ex_warm"):
        bad = [v for v in res[k] if not (v == v) or v < 0 or v > 600000]
        if bad:
            JIT_PROBLEMS.append("compile_latency: module-reported %s values out of range: %s" % (k, bad))
            res[k] = [v for v in res[k] if v not in bad]
    for k, metric, note in (("cm_inline", "compile_ms, first compile of a shape (inline)", "index_stats compile_ms; " + srcs("inline")),
                            ("cm_warm", "compile_ms, 2nd backend same shape", "index_stats compile_ms; " + srcs("warm")),
                            ("ex_warm", "btree_jit_compile() shape compiled elsewhere", "compile_ms, fresh backend")):
        if res[k]:
            rows.append(report.row(w.name, metric, "info", None, statistics.median(res[k]), None, unit="ms",
                                   notes="%s; min-max %.2f-%.2f ms" % (note, min(res[k]), max(res[k]))))
    rows += fresh_pgbench(w)
    return rows


def pgbench_latencies(logdir):
    """Per-transaction latencies (ms) from pgbench --log files."""
    lat = []
    for f in glob.glob(os.path.join(logdir, "*")):
        with open(f) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3:
                    lat.append(int(parts[2]) / 1000.0)
    return sorted(lat)


def quantile(sorted_vals, q):
    """The q-quantile of sorted values (nearest rank)."""
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, max(0, int(round(q * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[i]


def fresh_pgbench(w):
    """pgbench -S -M prepared on a freshly started cluster with an empty
    object cache, per arm (off; on, background; on, inline): every client
    crosses compile_threshold on pgbench_accounts_pkey early in the run, so
    its compile (or its wait for one) is in the latencies.  Rows: max and
    p99.9 of the per-transaction latencies, off against each on arm."""
    seconds = w.getint("fresh_seconds", 10)
    clients = w.getint("fresh_clients", 2)
    have = psql("SELECT 1 FROM pg_tables WHERE tablename = 'pgbench_accounts'").strip()
    if not have:
        say("fresh pgbench: no pgbench tables (data_pgbench not built): skipped")
        return []
    arms = [("off", "-c btree_jit.enabled=off"),
            ("background", "-c btree_jit.enabled=on -c btree_jit.compile_mode=background"),
            ("inline", "-c btree_jit.enabled=on -c btree_jit.compile_mode=inline")]
    stats = {}
    for arm, opts in arms:
        cluster_stop()
        shutil.rmtree(os.path.join(os.environ["PGDATA"], "btree_jit_cache"), ignore_errors=True)
        cluster_start()
        logdir = tempfile.mkdtemp(prefix="btjit-pgbench-log.")
        try:
            cmd = [pgbin("pgbench"), "-n", "-S", "-M", "prepared", "-T", str(seconds), "-c", str(clients),
                   "-j", str(clients), "--log", "--log-prefix=%s/tx" % logdir, DB]
            p = run(cmd, env={"PGOPTIONS": opts})
            lat = pgbench_latencies(logdir)
        finally:
            shutil.rmtree(logdir, ignore_errors=True)
        tps = re.search(r"^tps = ([\d.]+)", p.stdout, re.M)
        stats[arm] = (max(lat) if lat else float("nan"), quantile(lat, 0.999), len(lat))
        jit = ""
        if MOD.loaded and arm != "off":
            jit = psql("SELECT state || ' ' || jit_searches FROM btree_jit_indexes WHERE indexname = 'pgbench_accounts_pkey'",
                       options="-c btree_jit.enabled=off").strip()
            if not jit.startswith("jit"):
                JIT_PROBLEMS.append("fresh pgbench (%s): pgbench_accounts_pkey not on JIT code: %s" % (arm, jit))
        detail("FRESH PGBENCH %s: %d transactions, max %.3f ms, p99.9 %.3f ms, tps %s; index: %s"
               % (arm, len(lat), stats[arm][0], stats[arm][1], tps.group(1) if tps else "?", jit))
        say("  fresh pgbench %s: max %.3f ms, p99.9 %.3f ms over %d transactions"
            % (arm, stats[arm][0], stats[arm][1], len(lat)))
    rows = []
    note = ("pgbench -S -M prepared -c %d -T %d on a just-started cluster, empty object cache; --log latencies"
            % (clients, seconds))
    for arm in ("background", "inline"):
        for i, metric in ((0, "max"), (1, "p99.9")):
            off, on = stats["off"][i], stats[arm][i]
            rows.append(report.row(w.name, "fresh pgbench -S tx latency %s, %s" % (metric, arm), "latency",
                                   off, on, off / on if on else None, unit="ms",
                                   notes=with_module_note(["%s; %d/%d transactions" % (note, stats["off"][2], stats[arm][2])])))
    return rows
