#!/usr/bin/python3
"""bench/lib/bench.py - btree_jit's benchmark driver (called by bench/run).

bench/run installs the dependencies, builds and installs the module and
starts a throwaway cluster (test/lib/cluster.sh); this program does the
rest against that cluster, found through the environment cluster_start
exports (PGHOST, PGPORT, PGUSER, PGDATA, BTJIT_CLUSTER_DIR,
BTJIT_CLUSTER_LOG, PG_CONFIG):

  1. module status (btree_jit_status()), database "bench", data built once
  2. plan checks: every counted statement has the same plan at N and at 0
  3. instruction counts: cluster stopped, `postgres --single` once per
     (statement, off|on, N|0) under perf stat (hardware counters) or, where
     the machine has none, valgrind --tool=callgrind; per-unit figure =
     (count(N) - count(0)) / N, ratio = off / on
  4. cluster restarted; wall-clock: interleaved off/on rounds in one
     session (psql \\timing) or pgbench rounds (PGOPTIONS), ratio per round
  5. compile latency in fresh backends
  6. one table on stdout, plus CSV, SVG and a detail log in bench/out/

This file is the command line and the order of the phases; each phase
lives in a file of its own:

  workloads.py    the workload files (bench/workloads/*.sql) and --all's order
  harness.py      paths, settings, progress/detail log, running programs
  cluster.py      cluster stop/start, the module's state and build, the data
  jitcheck.py     the per-backend JIT check statement and JIT_PROBLEMS
  singleuser.py   one counted `postgres --single` run (perf or callgrind)
  counts.py       instructions per unit, off vs on (step 3)
  connections.py  instructions per connection, pgbench -C under callgrind
  parallel.py     parallel scans: leader + workers under callgrind, timing
  timing.py       interleaved wall-clock rounds of the sql workloads
  pgbench.py      interleaved pgbench rounds
  latency.py      the compile_latency workload
  report.py       the table: text, CSV, SVG
  breakdown.py    (separate tool) where the instructions go, per function

Only the standard library; psql, pgbench, pg_ctl, postgres, valgrind and
perf as subprocesses.  See bench/README.md.
"""

import argparse
import datetime
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import report  # noqa: E402
import workloads as wl  # noqa: E402
from cluster import BUILDS_SEEN, MOD, build_data, module_fingerprint, module_note, note_fingerprint, setup_database  # noqa: E402
from connections import count_connections  # noqa: E402
from parallel import count_parallel, time_parallel  # noqa: E402
from counts import count_rows, plan_checks, run_counts, write_profile_manifest  # noqa: E402
from harness import BenchError, detail, loadavg, psql, say  # noqa: E402
from jitcheck import JIT_PROBLEMS  # noqa: E402
from latency import compile_latency  # noqa: E402
from pgbench import time_pgbench_workload  # noqa: E402
from singleuser import choose_counter  # noqa: E402
from timing import time_sql_workload  # noqa: E402

# The table's order within a workload.
KIND_ORDER = {"instructions": 0, "throughput": 1, "latency": 2, "info": 3}

COUNTER_TEXT = {"callgrind": "valgrind callgrind Ir (no hardware counters here)",
                "callgrind-runs": "valgrind callgrind Ir, one process per statement/arm/N",
                "perf": "perf stat instructions:u", "none": "none"}


def parse_args(argv):
    """The options (exits for --help and --list; bench/run's early
    --check-args call exits 100 for them)."""
    ap = argparse.ArgumentParser(
        prog="bench/run",
        description="btree_jit benchmarks: instruction counts (perf or callgrind, single-user mode) "
                    "and interleaved wall-clock rounds, JIT off vs on.  No workload: the headline "
                    "(probe_int4).  --all: every workload.")
    ap.add_argument("workloads", nargs="*", help="workloads to run (see --list)")
    ap.add_argument("--all", action="store_true", help="every workload (under 15 minutes on 2 cores)")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--counter", choices=("auto", "perf", "callgrind", "callgrind-runs", "none"),
                    default=os.environ.get("BENCH_COUNTER", "auto"),
                    help="instruction counter (default auto: perf if the machine has counters, else callgrind; "
                         "callgrind-runs: callgrind with one process per statement, arm and N like perf, slower)")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "5")),
                    help="interleaved off/on timing rounds (default 5)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("BENCH_JOBS", "2")),
                    help="parallel single-user counting runs (default 2; counts do not depend on load)")
    ap.add_argument("--n-callgrind", type=int, default=int(os.environ.get("BENCH_N_CALLGRIND", "0")) or None,
                    help="override every workload's callgrind N")
    ap.add_argument("--n-timing", type=int, default=int(os.environ.get("BENCH_N_TIMING", "0")) or None,
                    help="override every SQL workload's timing N")
    ap.add_argument("--pgbench-seconds", type=int, default=int(os.environ.get("BENCH_PGBENCH_SECONDS", "3")),
                    help="length of one pgbench round (default 3)")
    ap.add_argument("--stock-arm", action="store_true",
                    help="count every workload also on the server without the module (default: only probe_int4)")
    ap.add_argument("--no-counts", action="store_true", help="skip instruction counts")
    ap.add_argument("--no-timing", action="store_true", help="skip wall-clock rounds")
    ap.add_argument("--keep-profiles", action="store_true",
                    help="callgrind: keep every profile part under bench/out/profiles-<stamp>/ "
                         "(for callgrind_annotate: where the instructions go)")
    ap.add_argument("--simulate", action="store_true",
                    help="callgrind: also simulate caches and branch prediction (about twice as slow); "
                         "with --keep-profiles, breakdown.py prints misses and mispredictions per unit")
    ap.add_argument("--working-set", nargs="?", const="100k,2m", metavar="SIZES",
                    help="probe_int4's lateral probes at several table sizes (comma-separated of %s; "
                         "default 100k,2m): instructions, callgrind's simulated cache misses (implies "
                         "--simulate) and interleaved time (default 11 rounds, N=300,000), and a table by size"
                         % ", ".join(wl.WORKING_SET))
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a server setting for every backend of both arms (repeatable), e.g. "
                         "btree_jit.prefetch_hints=off to measure what one technique is worth")
    ap.add_argument("--pg", choices=("15", "17", "18", "19"),
                    help="PostgreSQL major: 15 is the host's server (the default), 17, 18 and 19 run "
                         "inside that version's Debian chroot (test/lib/chroot.sh); bench/run handles it")
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    if "--check-args" in argv and any(x in ("-h", "--help", "--list") for x in argv):
        # bench/run's early call: answer, and tell it to stop there
        try:
            parse_args([x for x in argv if x != "--check-args"])
        except SystemExit as e:
            sys.exit(100 if not e.code else e.code)
    a = ap.parse_args(argv)
    for x in a.set:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*=\S+$", x):
            ap.error("--set: expected NAME=VALUE without spaces, got %r" % x)
    a.rounds_given = any(x.startswith("--rounds") for x in argv) or "BENCH_ROUNDS" in os.environ
    a.seconds_given = any(x.startswith("--pgbench-seconds") for x in argv) or "BENCH_PGBENCH_SECONDS" in os.environ
    avail = wl.available()
    if a.list:
        for n in avail:
            print("%-16s %s" % (n, wl.load(n).get("title", "")))
        sys.exit(0)
    if a.all and a.workloads:
        ap.error("--all and a workload list are exclusive")
    if a.working_set is not None and (a.all or a.workloads):
        ap.error("--working-set picks its own workloads")
    for n in a.workloads:
        if n not in avail:
            ap.error("unknown workload %r (known: %s)" % (n, ", ".join(avail)))
    a.ws_sizes = []
    if a.working_set is not None:
        a.ws_sizes = [x.strip().lower() for x in a.working_set.split(",") if x.strip()]
        for x in a.ws_sizes:
            if x not in wl.WORKING_SET:
                ap.error("--working-set: unknown size %r (known: %s)" % (x, ", ".join(wl.WORKING_SET)))
        if not a.ws_sizes:
            ap.error("--working-set: no size")
    if a.ws_sizes:
        a.selected, a.mode = [wl.WORKING_SET[x] for x in a.ws_sizes], "working-set"
        if not a.rounds_given:
            a.rounds = 11
        if a.n_timing is None:
            a.n_timing = 300000
    elif a.all:
        # the extra working-set sizes are --working-set's, not --all's; the
        # index builds are named (bench/README.md, "Index builds")
        a.selected, a.mode = [n for n in avail if n not in wl.WORKING_SET_ONLY + wl.BUILDS], "all"
    elif a.workloads:
        a.selected, a.mode = a.workloads, "subset"
    else:
        a.selected, a.mode = list(wl.HEADLINE), "headline"
    return a


def measure_counts(a, work, counter, n_of):
    """Instruction counts (single-user, and per connection): their rows."""
    rows = []
    counted = [w for w in work if w.queries and w.kind in ("sql", "pgbench") and w.get("counts") != "none"]
    if counter != "none" and counted:
        plan_checks(counted, n_of)
        stock_names = [w.name for w in counted] if a.stock_arm else [n for n in wl.HEADLINE]
        if a.mode == "working-set" and not a.stock_arm:
            stock_names = []
        jobs = run_counts(counted, counter, n_of, a.jobs, stock_names)
        rows += count_rows(counted, jobs, counter, n_of)
        if h.KEEP_PROFILES:
            write_profile_manifest(jobs, n_of)
    if counter != "none":
        for w in work:
            if w.kind == "pgbench" and w.getint("count_connections"):
                rows += count_connections(w, w.getint("count_connections"))
            elif w.kind == "parallel":
                rows += count_parallel(w)
    return rows


def measure_timing(a, work):
    """Wall-clock rounds and compile latency, by workload kind: their rows."""
    rows = []
    for w in work:
        if w.kind == "sql":
            # --all: at most 200,000 per round (15 minutes on 2 cores)
            rows += time_sql_workload(w, a.rounds, a.n_timing, 200000 if a.mode == "all" else None)
        elif w.kind == "pgbench":
            rows += time_pgbench_workload(w, a.rounds, a.pgbench_seconds,
                                          defaults=not (a.rounds_given or a.seconds_given))
        elif w.kind == "latency":
            rows += compile_latency(w, w.getint("rounds", 5))
        elif w.kind == "parallel":
            rows += time_parallel(w, a.rounds if a.rounds_given else None)
    return rows


def legend_lines(counter_txt, t_data, t_counts, t_timing, total):
    """The lines under the table: how to read it, then (first) what went
    wrong: JIT problems, a build that changed, a module not active."""
    legend = [
        "ratio: >1 means better with the JIT.  instructions: off/on (>1 = fewer instructions with the JIT),",
        "  per unit = (count(N) - count(0)) / N, same session setup and warm-up, single-user backend, user space;",
        "  time/throughput: median of per-round ratios (time off/on, tps on/off) of interleaved off/on rounds in one",
        "  run, spread = min-max over rounds; latency: off/on.  off/on columns: per-unit counts, us per unit, tps, ms.",
        "ceiling (callgrind): off/on if the replaced code cost nothing: off / (off - replaced), replaced = the off run's",
        "  _bt_binsrch, _bt_compare, _bt_checkkeys, its static helpers (17/18's _bt_check_compare) and dispatcher",
        "  (self) + the comparison procs and operators (inclusive) + FunctionCall2Coll's off-on.",
        "counter: %s.  Timing on a shared %d-core machine: compare ratios, never absolute figures across runs." % (counter_txt, os.cpu_count() or 0),
        "phases: data %.0fs, counts %.0fs, timing %.0fs, total %.0fs (driver; plus deps/build/cluster in bench/run)."
        % (t_data, t_counts, t_timing, total),
    ]
    if h.SETTINGS:
        legend.append("settings (--set, every backend of both arms): %s" % ", ".join(h.SETTINGS))
    mn = module_note()
    if mn:
        legend.insert(0, "!!! %s: btree_jit_status: %s" % (mn, MOD.reason or "not preloaded"))
    note_fingerprint(module_fingerprint(), "at the end")
    if len(BUILDS_SEEN) > 1:
        legend.insert(0, "!!! THE INSTALLED MODULE CHANGED DURING THIS RUN (make install by someone else?): the "
                         "figures may come from different builds.  Builds seen:\n!!!   "
                         + "\n!!!   ".join("%s: %s" % (w, fp) for fp, w in BUILDS_SEEN.items()))
    if JIT_PROBLEMS:
        legend.insert(0, "!!! JIT VERIFICATION FAILED:\n!!!   " + "\n!!!   ".join(JIT_PROBLEMS))
    elif MOD.loaded and MOD.active:
        legend.insert(0, "JIT verified: every 'on' measurement above (except where it says no JIT is expected) searched its indexes through JIT code "
                         "or built them with the compiled comparator (index stats / status counters; 'off' runs had 0 JIT searches and builds).")
    return legend


def l3_bytes():
    """The largest CPU cache's size in bytes (sysfs), or None."""
    llc = h.last_level_cache()
    return llc[0] if llc else None


def working_set_table(a, work, rows):
    """--working-set: one line per table size, index size against the
    largest cache, instructions, simulated misses and time per probe."""
    l3 = l3_bytes()

    def find(w, prefix):
        r = [x for x in rows if x["workload"] == w.name and x["metric"].startswith(prefix)]
        return r[0] if r else None

    def offon(r, fmt):
        if not r or r["off"] is None:
            return "-"
        return (fmt + " / " + fmt + "  %s") % (r["off"], r["on"], report.fmt_ratio(r["ratio"]))

    hdr = ["size", "index", "vs L3", "instructions/probe off / on", "LL misses/probe (model) off / on",
           "D1 misses/probe (model)", "time us/probe off / on", "time ratio median (spread)"]
    lines = []
    for size, w in zip(a.ws_sizes, work):
        idx = w.indexes[0]
        try:
            isz = int(psql("SELECT pg_relation_size('%s')" % idx).strip())
        except (ValueError, BenchError):
            isz = None
        t = find(w, "time/")
        tr = "-"
        if t and t["ratio"] is not None:
            tr = "%s (%.3f-%.3f)" % (report.fmt_ratio(t["ratio"]), t["rmin"], t["rmax"])
        lines.append([size, "%.0f MiB" % (isz / 1048576.0) if isz else "-",
                      "%.2fx" % (isz / float(l3)) if isz and l3 else "-",
                      offon(find(w, "instructions/"), "%.0f"), offon(find(w, "LL misses/"), "%.2f"),
                      offon(find(w, "D1 misses/"), "%.1f"), offon(t, "%.3f"), tr])
    widths = [max(len(hdr[i]), *(len(l[i]) for l in lines)) for i in range(len(hdr))]
    out = ["working set: probe_int4 lateral (random-order nested-loop probes), by table size; "
           "largest cache %s" % ("%.0f MiB" % (l3 / 1048576.0) if l3 else "unknown")]
    for l in [hdr] + lines:
        out.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(l)).rstrip())
    out.append("misses: callgrind --cache-sim=yes, a model (this machine's cache sizes, LRU, caches cold at the "
               "start of each single-user run, N=callgrind N), not hardware counters.  time: %d interleaved "
               "off/on rounds, N=%s, median of per-round off/on ratios, spread = min-max."
               % (a.rounds, "{:,}".format(a.n_timing)))
    return "\n".join(out)


def write_outputs(text, rows, base, title, sub):
    """stdout, and base.txt/.csv/.svg with bench/out/latest.* links."""
    print(text)
    with open(base + ".txt", "w") as f:
        f.write(text)
    report.write_csv(rows, base + ".csv")
    report.write_svg(rows, base + ".svg", title, sub)
    for ext in ("txt", "csv", "svg", "log"):
        link = os.path.join(h.OUT_DIR, "latest.%s" % ext)
        try:
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(os.path.basename(base) + "." + ext, link)
        except OSError:
            pass
    print("table: %s.txt\ncsv:   %s.csv\nchart: %s.svg\nlog:   %s.log" % (base, base, base, base))
    detail(text)


def main(argv):
    a = parse_args(argv)
    if a.check_args:
        return 0
    for v in ("PGHOST", "PGPORT", "PGDATA", "BTJIT_CLUSTER_DIR", "BTJIT_CLUSTER_LOG"):
        if v not in os.environ:
            raise BenchError("%s is not set: run bench/run, which starts the cluster" % v)
    h.BIN = h.bindir()
    os.makedirs(h.OUT_DIR, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(h.OUT_DIR, "bench-%s-%s" % (a.mode, stamp))
    h.LOG = open(base + ".log", "w")
    h.SIMULATE = a.simulate or a.mode == "working-set"
    h.SETTINGS = list(a.set)
    if a.keep_profiles:
        h.KEEP_PROFILES = os.path.join(h.OUT_DIR, "profiles-%s" % stamp)
        os.makedirs(h.KEEP_PROFILES, exist_ok=True)
    say("mode %s: %s; load average %s; detail log %s" % (a.mode, " ".join(a.selected), loadavg(), base + ".log"))
    work = [wl.load(n) for n in a.selected]
    if a.mode == "working-set":
        # one statement per size: the LATERAL ... LIMIT 1 probes
        for w in work:
            w.queries = [q for q in w.queries if q.name == "lateral"]

    setup_database()
    counter = "none" if a.no_counts else choose_counter(a.counter)

    def n_of(w):
        if counter.startswith("callgrind"):
            return a.n_callgrind or w.getint("n_callgrind") or w.getint("n_full")
        return w.getint("n_full")

    uses = []
    for w in work:
        for u in w.uses:
            if u not in uses:
                uses.append(u)
    t = time.time()
    build_data(uses)
    t_data = time.time() - t

    t = time.time()
    rows = measure_counts(a, work, counter, n_of)
    t_counts = time.time() - t

    t = time.time()
    if not a.no_timing:
        rows += measure_timing(a, work)
    t_timing = time.time() - t

    # order rows by workload, instructions first
    order = {n: i for i, n in enumerate(a.selected)}
    rows.sort(key=lambda r: (order.get(r["workload"], 99), KIND_ORDER.get(r["kind"], 9)))

    total = time.time() - h.T0
    title = "btree_jit benchmark (%s): JIT off vs on" % a.mode
    server = psql("SELECT version()").strip().split(",")[0]
    counter_txt = COUNTER_TEXT[counter]
    sub = "%s; counts: %s; %s; load avg at end %s" % (server, counter_txt, stamp, loadavg())

    table = report.text_table(rows)
    legend = legend_lines(counter_txt, t_data, t_counts, t_timing, total)
    text = "\n%s\n%s\n\n%s\n\n%s\n" % (title, sub, table, "\n".join(legend))
    if a.mode == "working-set":
        text += "\n" + working_set_table(a, work, rows) + "\n"
    write_outputs(text, rows, base, title, sub)
    if JIT_PROBLEMS:
        return 3
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        say("ERROR: %s" % e)
        sys.exit(2)
    except KeyboardInterrupt:
        say("interrupted")
        sys.exit(130)
