"""bench/lib/pgbench.py - pgbench rounds of the pgbench workloads.

For each client count (@clients): a warm-up of both arms, then interleaved
rounds of @seconds each (off, on, on, off, ...), the arm chosen through
PGOPTIONS.  Ratio per round = tps on / tps off; the row gives the median
and the spread.  The module's status counters, read around every round,
say whether the 'on' rounds searched through JIT code (and the 'off'
rounds did not).
"""

import re
import statistics

import report
from cluster import MOD, with_module_note
from harness import ARMS, DB, BenchError, detail, loadavg, pgbin, psql, run, say
from jitcheck import JIT_PROBLEMS

def status_counts():
    """(jit_searches, stock_searches) of btree_jit_status(), or None."""
    if not MOD.loaded:
        return None
    # read with the module off: this session's own searches count as stock
    out = psql("SELECT jit_searches, stock_searches FROM btree_jit_status()",
               options="-c btree_jit.enabled=off").strip().split("|")
    return int(out[0]), int(out[1])


def pgbench_once(args, clients, seconds, arm):
    """One pgbench run in an arm: (tps, transactions)."""
    cmd = [pgbin("pgbench"), "-n", "-T", str(seconds), "-c", str(clients), "-j", str(clients)] + args + [DB]
    p = run(cmd, env={"PGOPTIONS": "-c btree_jit.enabled=%s" % arm})
    m = re.search(r"^tps = ([\d.]+)", p.stdout, re.M)
    if not m:
        raise BenchError("no tps in pgbench output:\n" + p.stdout + p.stderr)
    nx = re.search(r"number of transactions actually processed: (\d+)", p.stdout)
    return float(m.group(1)), int(nx.group(1)) if nx else 0


def time_pgbench_workload(w, rounds, seconds, defaults=True):
    """defaults: rounds/seconds are the driver's defaults, so the
    workload's own @rounds/@seconds win."""
    rows = []
    args = w.get("pgbench", "").split()
    if defaults:
        rounds = w.getint("rounds", rounds)
        seconds = w.getint("seconds", seconds)
    expect_jit = w.get("expect_jit", "yes") != "no"
    for clients in [int(c) for c in w.get("clients", "1").split()]:
        say("pgbench %s %s -c %d: %d rounds x off/on x %ds, load %s"
            % (w.name, " ".join(args), clients, rounds, seconds, loadavg()))
        for arm in ARMS:   # warm-up
            pgbench_once(args, clients, max(1, seconds // 2), arm)
        tps = {a: [] for a in ARMS}
        deltas = {a: [0, 0] for a in ARMS}
        xacts = {a: 0 for a in ARMS}
        for r in range(rounds):
            order = ARMS if r % 2 == 0 else tuple(reversed(ARMS))
            for arm in order:
                before = status_counts()
                v, nx = pgbench_once(args, clients, seconds, arm)
                after = status_counts()
                tps[arm].append(v)
                xacts[arm] += nx
                if before and after:
                    deltas[arm][0] += after[0] - before[0]
                    deltas[arm][1] += after[1] - before[1]
        detail("TPS %s -c %d: off=%s on=%s; status deltas (jit, stock) off=%s on=%s"
               % (w.name, clients, tps["off"], tps["on"], deltas["off"], deltas["on"]))
        med, lo, hi = report.ratio_stats(list(zip(tps["on"], tps["off"])))
        notes = ["%d rounds x %ds, median of per-round ratios" % (rounds, seconds)]
        if MOD.loaded:
            jon, son = deltas["on"]
            joff = deltas["off"][0]
            if not expect_jit:
                notes.append("%.1f JIT + %.1f stock searches/xact in 'on' rounds (no JIT expected: each backend "
                             "stays below compile_threshold)" % (jon / max(xacts["on"], 1), son / max(xacts["on"], 1)))
            elif jon == 0:
                notes.append("JIT NOT USED (0 JIT searches during the 'on' rounds)")
                JIT_PROBLEMS.append("%s -c %d: 0 JIT searches in btree_jit_status() during the 'on' rounds" % (w.name, clients))
            else:
                notes.append("JIT used: %.1f JIT + %.1f stock searches/xact in 'on' rounds"
                             % (jon / max(xacts["on"], 1), son / max(xacts["on"], 1)))
            if joff:
                notes.append("%d JIT searches with enabled=off!" % joff)
                JIT_PROBLEMS.append("%s -c %d: %d JIT searches during the 'off' rounds" % (w.name, clients, joff))
        rows.append(report.row(w.name, "tps -c %d" % clients, "throughput",
                               statistics.median(tps["off"]), statistics.median(tps["on"]),
                               med, unit="tps", rmin=lo, rmax=hi, target=w.getfloat("throughput_target"),
                               notes=with_module_note(notes)))
        say("  %s -c %d: on/off tps median %.3f (%.3f-%.3f)" % (w.name, clients, med, lo, hi))
    return rows

