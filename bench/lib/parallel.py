"""bench/lib/parallel.py - the @kind parallel workloads: parallel scans,
whose work is split between a leader and its workers.

Instructions: single-user mode starts no workers, so the cluster is
stopped and its postmaster started under callgrind, once per arm, with
--toggle-collect=standard_ExecutorRun (the leader's and each worker's
execution of a query: not their start-up, not the planner) and
--dump-before=pg_sleep (markers in the leader's session).  The leader warms
up with serial scans, then runs @count_queries queries between two
markers; per query = (the leader's part between the markers + every
worker's profile) / @count_queries.  The module's object cache is primed
first, so that no process compiles while counted: a worker links the code
the leader's backend would have compiled.  With the module on, the
leader then reads btree_jit_indexes: the leaf reads the workers reported.

Time: interleaved off/on rounds of @timing_queries queries each on the
running cluster (the timing.py script; workers inherit the leader's
btree_jit.enabled).
"""

import os
import re
import shutil
import statistics
import time

import report
from cluster import MOD, cluster_start, cluster_stop, with_module_note
from connections import postmaster_under_callgrind
from counts import aid_sequence, prime_object_cache
from harness import ARMS, OS_USER, BenchError, detail, loadavg, psql, say
from singleuser import callgrind_ir
from timing import parse_timing, timing_sql

MARK = "SELECT pg_sleep(0);"


def profile_ir(path):
    """Instructions of a leader's or worker's profile: by its "totals:"
    line, since a forked worker's "summary:" says 0 (singleuser.py)."""
    return callgrind_ir(path, lines=("totals:",))


class RangeQuery:
    """A @query whose {LO} is each statement's first key: statements(n) are
    n of them, keys pseudo-random over 1..@key_range, the same every run
    (the interface timing.timing_sql expects of a query)."""

    def __init__(self, w, q):
        self.name, self.desc, self.sql = q.name, q.desc, q.sql
        self.keys = aid_sequence(max(1, w.getint("key_range", 100000) // 100000))

    def statements(self, n, aids=None):
        return [self.sql.replace("{LO}", str(k)) for k in self.keys(n)]


def check_plans(w):
    """Every query must run as a Gather over a parallel index scan."""
    for q in w.queries:
        rq = RangeQuery(w, q)
        sql = "\n".join(w.section("session") + ["EXPLAIN (COSTS OFF) " + rq.statements(1)[0]])
        plan = psql(sql, tuples=True)
        lines = [l.strip() for l in plan.splitlines() if l.strip() and "pg_prewarm" not in l
                 and not re.match(r"^\d+\|\d+$", l.strip())]
        detail("PLAN %s/%s:\n%s" % (w.name, q.name, "\n".join(lines)))
        if not any("Gather" in l for l in lines) or not any(re.search(r"Parallel Index (Only )?Scan", l) for l in lines):
            raise BenchError("%s/%s: not a parallel index scan:\n%s" % (w.name, q.name, "\n".join(lines)))
        say("plan %s/%s: %s" % (w.name, q.name, " / ".join(l.lstrip("-> ").strip() for l in lines
                                                        if "Gather" in l or "Scan" in l)))


def leader_script(w, q, k, with_stats):
    """The leader's session: warm-up, then k queries between markers."""
    rq = RangeQuery(w, q)
    L = ["\\set ON_ERROR_STOP 1"] + w.section("session") + w.section("warmup")
    L.append("SELECT 'leader_pid=' || pg_backend_pid();")
    L += [MARK] + rq.statements(k) + [MARK]
    if with_stats:
        # the workers flush their counts as they exit: wait for them
        L.append("SELECT pg_sleep(1.5);")
        L.append("SELECT 'leafreads=' || coalesce(sum(jit_leafreads), 0) || ' ' || "
                 "coalesce(sum(stock_leafreads), 0) FROM btree_jit_indexes WHERE indexname IN (%s);"
                 % ", ".join("'%s'" % i for i in w.indexes))
    return "\n".join(L) + "\n"


def count_arm(w, q, arm, k, work):
    """One postmaster under callgrind: (instructions per query, worker
    profiles, leaf reads compiled/server's or None)."""
    out = os.path.join(work, "%s.%s" % (q.name, arm))
    detail("parallel count %s/%s %s" % (w.name, q.name, arm))
    with postmaster_under_callgrind(out, "btree_jit" if MOD.loaded else "",
                                    ["--toggle-collect=standard_ExecutorRun", "--dump-before=pg_sleep"],
                                    ["-c", "autovacuum=off"]):
        opts = "-c btree_jit.enabled=%s" % arm if MOD.loaded else None
        res = psql(leader_script(w, q, k, MOD.loaded and arm == "on"), options=opts)
    m = re.search(r"leader_pid=(\d+)", res)
    if not m:
        raise BenchError("parallel count %s/%s %s: no leader pid in\n%s" % (w.name, q.name, arm, res[-2000:]))
    leader = m.group(1)
    base = os.path.basename(out)
    # the leader's parts: .1 up to the first marker, .2 the queries, then the rest
    mid = os.path.join(work, "%s.%s.2" % (base, leader))
    if not os.path.exists(mid):
        raise BenchError("parallel count %s/%s %s: no profile %s" % (w.name, q.name, arm, mid))
    total = profile_ir(mid) or 0
    workers = []
    for f in os.listdir(work):
        m = re.match(re.escape(base) + r"\.(\d+)$", f)
        if m and m.group(1) != leader:
            ir = profile_ir(os.path.join(work, f))
            if ir:
                workers.append(ir)
    total += sum(workers)
    m = re.search(r"leafreads=(\d+) (\d+)", res)
    reads = (int(m.group(1)), int(m.group(2))) if m else None
    detail("PARALLEL %s/%s %s: leader %d, %d worker profiles %s, leaf reads %s"
           % (w.name, q.name, arm, profile_ir(mid) or 0, len(workers), workers, reads))
    return total / k, len(workers), reads


def count_parallel(w):
    """Instruction rows of a parallel workload, off vs on."""
    k = w.getint("count_queries", 4)
    work = os.path.join(os.environ["BTJIT_CLUSTER_DIR"], "count-parallel")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.chown(work, OS_USER)
    check_plans(w)
    rows = []
    cluster_stop()
    try:
        prime_object_cache([w], work, "callgrind")
        for q in w.queries:
            t = time.time()
            per, nworkers, reads = {}, {}, None
            for arm in ARMS:
                per[arm], nworkers[arm], r = count_arm(w, q, arm, k, work)
                if arm == "on":
                    reads = r
            note = ("callgrind on the postmaster, --toggle-collect=standard_ExecutorRun: leader + "
                    "workers, %d queries; worker profiles off/on %d/%d" % (k, nworkers["off"], nworkers["on"]))
            if reads is not None:
                note += "; leaf reads of the on arm compiled/server's %d/%d" % reads
                if reads[0] == 0:
                    raise BenchError("%s/%s: the 'on' arm read no leaf page with compiled code (%s)"
                                     % (w.name, q.name, reads))
            rows.append(report.row(w.name, "instructions/%s %s" % (w.get("unit", "query"), q.name),
                                   "instructions", per["off"], per["on"], per["off"] / per["on"],
                                   target=w.getfloat("target"), notes=with_module_note([note])))
            say("  %s/%s: per query off %d, on %d (%.3fx), worker profiles %d/%d, leaf reads %s, %.0fs"
                % (w.name, q.name, per["off"], per["on"], per["off"] / per["on"], nworkers["off"],
                   nworkers["on"], reads, time.time() - t))
    finally:
        cluster_start()
    return rows


def time_parallel(w, rounds):
    """Timing rows: interleaved off/on rounds on the running cluster."""
    rows = []
    n = w.getint("timing_queries", 20)
    rounds = rounds or w.getint("rounds", 9)
    for q in w.queries:
        say("timing %s/%s: %d rounds x off/on, %d queries each, load %s" % (w.name, q.name, rounds, n, loadavg()))
        t = time.time()
        out = psql(timing_sql(w, RangeQuery(w, q), rounds, n), tuples=False)
        times = parse_timing(out)
        if len(times["off"]) != rounds or len(times["on"]) != rounds:
            raise BenchError("timing %s/%s: expected %d rounds per arm, got %s" % (w.name, q.name, rounds, times))
        detail("TIMES %s/%s ms per round: off=%s on=%s" % (w.name, q.name, times["off"], times["on"]))
        med, lo, hi = report.ratio_stats(list(zip(times["off"], times["on"])))
        rows.append(report.row(w.name, "time/%s %s" % (w.get("unit", "query"), q.name), "throughput",
                               statistics.median(times["off"]) / n, statistics.median(times["on"]) / n,
                               med, unit="ms", rmin=lo, rmax=hi,
                               notes=with_module_note(["%d rounds of %d queries, median of per-round ratios"
                                                       % (rounds, n)])))
        say("  %s/%s: off/on time ratio median %.3f (%.3f-%.3f) in %.0fs" % (w.name, q.name, med, lo, hi, time.time() - t))
    return rows
