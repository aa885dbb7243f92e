"""bench/lib/timing.py - wall-clock rounds of the SQL workloads.

One psql session per counted statement on the running cluster: an untimed
warm-up of both arms, then interleaved rounds (off, on, on, off, ...; each
after the workload's round_setup and warm-up) timed with psql's \\timing.
Ratio per round = time off / time on; the row gives the median and the
spread.  A short burst in fresh backends, on and off, then checks that the
'on' arm searched the workload's indexes through JIT code.
"""

import re
import statistics
import time

import report
from cluster import MOD, with_module_note
from harness import ARMS, BenchError, detail, loadavg, psql, say
from jitcheck import JIT_PROBLEMS, check_sql, jit_work, off_used_jit, parse_check, used_jit

def set_arm(arm):
    """The statement that switches a session to an arm."""
    return "SET btree_jit.enabled = %s;" % arm


def timing_sql(w, q, rounds, n):
    """The psql script of one statement's rounds; @@T/@@E delimit a round."""
    L = ["\\set ON_ERROR_STOP 1"]
    L += w.section("session")
    L.append("\\o /dev/null")
    stmts = q.statements(n)
    # untimed warm-up: caches, plans, and the JIT compile of the 'on' arm
    for arm in ARMS:
        L.append(set_arm(arm))
        L += w.section("round_setup") + w.section("warmup") + stmts
    for r in range(rounds):
        order = ARMS if r % 2 == 0 else tuple(reversed(ARMS))
        for arm in order:
            L.append(set_arm(arm))
            L += w.section("round_setup") + w.section("warmup")
            L.append("\\echo @@T %d %s" % (r, arm))
            L.append("\\timing on")
            L += stmts
            L.append("\\timing off")
            L.append("\\echo @@E")
    L += w.section("teardown")
    return "\n".join(L) + "\n"


def parse_timing(out):
    """psql output -> {arm: [ms per round, in round order]}."""
    res = {a: [] for a in ARMS}
    cur, acc = None, 0.0
    for line in out.splitlines():
        m = re.match(r"@@T (\d+) (\w+)", line)
        if m:
            cur, acc = (int(m.group(1)), m.group(2)), 0.0
            continue
        m = re.match(r"Time: ([\d.]+) ms", line)
        if m and cur:
            acc += float(m.group(1))
            continue
        if line.startswith("@@E") and cur:
            res[cur[1]].append((cur[0], acc))
            cur = None
    return {a: [t for _, t in sorted(v)] for a, v in res.items()}


def verify_sql_jit(w, q):
    """A short probe burst in fresh backends, on and off: index stats."""
    if not MOD.loaded:
        return "", True
    n = min(1000, w.getint("n_full") or 1000)
    res = {}
    for arm in ARMS:
        sql = "\n".join([set_arm(arm)] + w.section("session") + w.section("round_setup")
                        + w.section("warmup") + q.statements(n) + [check_sql(w)] + w.section("teardown"))
        out = psql(sql)
        res[arm] = parse_check(out)
        detail("VERIFY %s/%s %s: %s" % (w.name, q.name, arm, res[arm] and res[arm]["raw"]))
    ok, bits = True, []
    for idx in w.indexes:
        st = res["on"] and res["on"]["indexes"].get(idx)
        if not used_jit(st):
            ok = False
            bits.append("%s NOT JIT (%s)" % (idx, st))
        else:
            extra = ""
            if st["stock"] or st["declined"]:
                extra = " +%d stock/%d declined" % (st["stock"], st["declined"])
            if st["builds"]:
                extra += " (%s)" % jit_work(st)
            bits.append("%s jit%s" % (idx, extra))
        so = res["off"] and res["off"]["indexes"].get(idx)
        if off_used_jit(so):
            ok = False
            bits.append("%s: %s with enabled=off!" % (idx, jit_work(so)))
    if not ok:
        JIT_PROBLEMS.append("%s/%s (running cluster): %s" % (w.name, q.name, "; ".join(bits)))
    return ("JIT used: " if ok else "JIT NOT USED: ") + ", ".join(bits), ok


def time_sql_workload(w, rounds, n_override=None, n_cap=None):
    """The timing rows of an sql workload: N is n_override, else @n_timing
    (or @n_full) capped at n_cap."""
    rows = []
    n = n_override or w.getint("n_timing") or w.getint("n_full")
    if n_cap and not n_override:
        n = min(n, n_cap)
    for q in w.queries:
        say("timing %s/%s: %d rounds x off/on, N=%s, load %s" % (w.name, q.name, rounds, "{:,}".format(n), loadavg()))
        t = time.time()
        out = psql(timing_sql(w, q, rounds, n), tuples=False)
        times = parse_timing(out)
        if len(times["off"]) != rounds or len(times["on"]) != rounds:
            raise BenchError("timing %s/%s: expected %d rounds per arm, got %s\n%s" % (w.name, q.name, rounds, times, out[-2000:]))
        detail("TIMES %s/%s ms per round: off=%s on=%s" % (w.name, q.name, times["off"], times["on"]))
        med, lo, hi = report.ratio_stats(list(zip(times["off"], times["on"])))
        unit = w.get("unit", "op")
        jitnote, _ = verify_sql_jit(w, q)
        notes = ["%d rounds, N=%s, median of per-round ratios" % (rounds, "{:,}".format(n)), jitnote]
        rows.append(report.row(w.name, "time/%s %s" % (unit, q.name), "throughput",
                               statistics.median(times["off"]) * 1000.0 / n,
                               statistics.median(times["on"]) * 1000.0 / n,
                               med, unit="us", rmin=lo, rmax=hi, target=w.getfloat("throughput_target"),
                               notes=with_module_note(notes)))
        say("  %s/%s: off/on time ratio median %.3f (%.3f-%.3f) in %.0fs" % (w.name, q.name, med, lo, hi, time.time() - t))
    return rows

