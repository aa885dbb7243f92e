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

Only the standard library; psql, pgbench, pg_ctl, postgres, valgrind and
perf as subprocesses.  See bench/README.md.
"""

import argparse
import concurrent.futures
import datetime
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402
import report  # noqa: E402

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(BENCH_DIR, "out")
DB = "bench"
OS_USER = os.environ.get("BTJIT_OS_USER", "postgres")

LOG = None          # detail log file
_log_lock = threading.Lock()
T0 = time.time()


def say(msg):
    line = "[bench %s +%4.0fs] %s" % (time.strftime("%H:%M:%S"), time.time() - T0, msg)
    with _log_lock:
        print(line, file=sys.stderr, flush=True)
        if LOG:
            LOG.write(line + "\n")
            LOG.flush()


def detail(msg):
    with _log_lock:
        if LOG:
            LOG.write(msg.rstrip("\n") + "\n")
            LOG.flush()


def loud(msg):
    bar = "!" * 78
    say("\n%s\n!! %s\n%s" % (bar, msg.replace("\n", "\n!! "), bar))


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------
# processes

def bindir():
    pgc = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
    return subprocess.check_output([pgc, "--bindir"], text=True).strip()


BIN = None


def as_postgres(cmd):
    if os.geteuid() == 0:
        return ["runuser", "-u", OS_USER, "--"] + cmd
    return cmd


def run(cmd, input=None, env=None, check=True, timeout=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(cmd, input=input, env=e, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise BenchError("command failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout[-3000:], p.stderr[-3000:]))
    return p


def psql(sql=None, file=None, db=DB, options=None, tuples=True, check=True, extra=None):
    """Run psql (as root over the private socket, as database user postgres)."""
    cmd = [os.path.join(BIN, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db]
    if tuples:
        cmd += ["-A", "-t", "-F", "|"]
    if extra:
        cmd += extra
    if file:
        cmd += ["-f", file]
    env = {"PGOPTIONS": options} if options is not None else None
    return run(cmd, input=sql, env=env, check=check).stdout


def pg_ctl(*args):
    run(as_postgres([os.path.join(BIN, "pg_ctl")] + list(args)))


def cluster_stop():
    say("stopping the cluster (single-user runs need it down)")
    pg_ctl("-D", os.environ["PGDATA"], "-m", "fast", "-w", "-t", "120", "stop")


def cluster_start():
    say("starting the cluster again")
    pg_ctl("-D", os.environ["PGDATA"], "-l", os.environ["BTJIT_CLUSTER_LOG"], "-w", "-t", "120", "start")
    run([os.path.join(BIN, "pg_isready"), "-q", "-t", "60"])


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


# --------------------------------------------------------------------------
# module state

class Module:
    loaded = False      # shared_preload_libraries has it and the SQL exists
    active = False      # btree_jit_status().active
    reason = ""
    status_row = ""


MOD = Module()


def setup_database():
    have = psql("SELECT 1 FROM pg_database WHERE datname = '%s'" % DB, db="postgres").strip()
    if not have:
        psql("CREATE DATABASE %s" % DB, db="postgres")
    psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    spl = psql("SHOW shared_preload_libraries").strip()
    MOD.loaded = "btree_jit" in spl
    if MOD.loaded:
        psql("CREATE EXTENSION IF NOT EXISTS btree_jit")
        out = psql("\\x on\nSELECT * FROM btree_jit_status()", tuples=False)
        MOD.status_row = out.strip()
        row = psql("SELECT active, coalesce(reason, '') FROM btree_jit_status()").strip().split("|", 1)
        MOD.active = row[0] == "t"
        MOD.reason = row[1] if len(row) > 1 else ""
        say("btree_jit_status():\n" + "\n".join("    " + l for l in MOD.status_row.splitlines()))
        if not MOD.active:
            loud("btree_jit is preloaded but NOT ACTIVE (%s):\nevery 'on' figure below is the stock path." % MOD.reason)
    else:
        loud("btree_jit is NOT LOADED (shared_preload_libraries = '%s', BTJIT_PRELOAD=%s):\n"
             "both arms run the server's own code; 'on' = 'off' by construction.\n"
             "This run only shakes out the harness." % (spl, os.environ.get("BTJIT_PRELOAD", "1")))


def module_note():
    if not MOD.loaded:
        return "MODULE NOT LOADED: on=stock"
    if not MOD.active:
        return "MODULE INACTIVE: on=stock"
    return ""


# --------------------------------------------------------------------------
# data

def build_data(names):
    for name in names:
        d = wl.DataFile(name)
        have = psql("SELECT 1 FROM pg_tables WHERE tablename = 'bench_data_%s'" % name).strip()
        if have:
            continue
        t = time.time()
        say("building %s" % name)
        if d.pgbench_init:
            run([os.path.join(BIN, "pgbench"), "-i"] + d.pgbench_init + [DB])
        # One psql session, so setseed() governs the random() calls after it.
        # The server's JIT and the module are off while loading: loading is
        # not what is measured.
        psql(file=d.path, options="-c jit=off -c btree_jit.enabled=off", tuples=False)
        psql("CREATE TABLE bench_data_%s ()" % name)
        say("built %s in %.1fs" % (name, time.time() - t))


# --------------------------------------------------------------------------
# SQL composition

ARMS = ("off", "on")


def aid_sequence(scale):
    total = scale * 100000

    def gen(n):
        # a fixed LCG walk over 1..total (deterministic, pseudo-random)
        x, out = 12345, []
        for _ in range(n):
            x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            out.append(1 + (x >> 33) % total)
        return out
    return gen


def check_sql(w, label="btjitcheck"):
    names = ", ".join("'%s'" % i for i in w.indexes)
    return ("SELECT 'BTJITCHECK ' || coalesce((SELECT string_agg(format('%%s=%%s/jit:%%s/stock:%%s/declined:%%s', "
            "indexrelid::text, state, jit_searches, stock_searches, declined_searches), ' ' ORDER BY indexrelid::text) "
            "FROM btree_jit_index_stats() WHERE indexrelid::text IN (%s)), 'no-index-stats') "
            "|| ' status:active=' || s.active || ',jit=' || s.jit_searches || ',stock=' || s.stock_searches "
            "AS %s FROM btree_jit_status() s;" % (names, label))


def parse_check(text):
    """'BTJITCHECK idx=jit/jit:1/stock:0/declined:0 ... status:...' -> dict."""
    m = re.search(r"BTJITCHECK ([^\"\n]*)", text)
    if not m:
        return None
    res = {"raw": m.group(1), "indexes": {}}
    for tok in m.group(1).split():
        mm = re.match(r"(.+?)=(\w+)/jit:(\d+)/stock:(\d+)/declined:(\d+)$", tok)
        if mm:
            res["indexes"][mm.group(1)] = dict(state=mm.group(2), jit=int(mm.group(3)),
                                               stock=int(mm.group(4)), declined=int(mm.group(5)))
    return res


def single_user_script(w, q, n, with_check):
    stmts = []
    stmts += w.section("session")
    stmts += w.section("round_setup")
    stmts += w.section("warmup")
    aids = aid_sequence(w.getint("scale", 20)) if q.repeat else None
    stmts += q.statements(n, aids)
    if with_check:
        stmts.append(check_sql(w))
    stmts += w.section("teardown")
    # postgres --single -j: a statement ends at ';' followed by an empty line.
    out = []
    for s in stmts:
        s = "\n".join(l for l in s.splitlines() if l.strip())
        out.append(s + "\n\n")
    return "".join(out)


# --------------------------------------------------------------------------
# instruction counts

def perf_supported():
    perf = shutil.which("perf")
    if not perf:
        return False, "perf not installed"
    p = subprocess.run([perf, "stat", "-x,", "-e", "instructions:u", "--", "true"],
                       capture_output=True, text=True)
    for line in p.stderr.splitlines():
        if "instructions" in line:
            val = line.split(",")[0]
            if val.isdigit():
                return True, "perf stat: instructions:u = %s for /bin/true" % val
            return False, "perf stat -e instructions:u reports %s (no hardware counters, e.g. a VM)" % val
    return False, "perf stat failed: %s" % (p.stderr.strip().splitlines()[-1:] or ["?"])[0]


def choose_counter(requested):
    ok, why = perf_supported()
    say("hardware counters: %s" % why)
    if requested == "perf":
        if not ok:
            raise BenchError("--counter perf requested, but " + why)
        return "perf"
    if requested == "callgrind":
        return "callgrind"
    if requested == "none":
        return "none"
    if ok:
        return "perf"
    if shutil.which("valgrind"):
        say("instruction counts: falling back to valgrind --tool=callgrind (deterministic Ir, ~20-50x slower)")
        return "callgrind"
    loud("neither perf counters nor valgrind: no instruction counts")
    return "none"


class CountJob:
    def __init__(self, w, q, arm, n):
        self.w, self.q, self.arm, self.n = w, q, arm, n
        self.count = None
        self.cycles = None
        self.seconds = None
        self.check = None
        self.error = None

    @property
    def key(self):
        return (self.w.name, self.q.name, self.arm, self.n)

    def label(self):
        return "%s/%s %s N=%d" % (self.w.name, self.q.name, self.arm, self.n)


def run_count_job(job, datadir, workdir, counter):
    tag = "%s.%s.%s.%d" % (job.w.name, job.q.name, job.arm, job.n)
    script = os.path.join(workdir, tag + ".sql")
    with open(script, "w") as f:
        f.write(single_user_script(job.w, job.q, job.n, MOD.loaded))
    pg = [os.path.join(BIN, "postgres"), "--single", "-j", "-D", datadir,
          "-c", "shared_preload_libraries=%s" % ("btree_jit" if MOD.loaded else ""),
          "-c", "btree_jit.enabled=%s" % job.arm, "-c", "jit=off"]
    if MOD.loaded:
        pg += ["-c", "btree_jit.verify=off"]
    pg += [DB]
    outfile = os.path.join(workdir, tag + ".out")
    if counter == "callgrind":
        cg = os.path.join(workdir, tag + ".callgrind")
        cmd = as_postgres(["valgrind", "--tool=callgrind", "--cache-sim=no", "--branch-sim=no",
                           "--smc-check=all", "--trace-children=no",
                           "--callgrind-out-file=" + cg,
                           "--log-file=" + os.path.join(workdir, tag + ".valgrind.log")] + pg)
    else:
        pf = os.path.join(workdir, tag + ".perf")
        cmd = ["perf", "stat", "-x,", "-e", "instructions:u,cycles:u", "-o", pf, "--"] + as_postgres(pg)
    detail("RUN %s: %s < %s" % (job.label(), " ".join(cmd), script))
    t = time.time()
    with open(script) as fin, open(outfile, "w") as fout:
        p = subprocess.run(cmd, stdin=fin, stdout=fout, stderr=subprocess.STDOUT, cwd=workdir)
    job.seconds = time.time() - t
    with open(outfile, errors="replace") as f:
        text = f.read()
    errs = [l for l in text.splitlines() if re.search(r"\b(ERROR|FATAL|PANIC):", l)]
    if p.returncode != 0 or errs:
        job.error = "exit %d; %s" % (p.returncode, "; ".join(errs[:3]) or text[-500:])
        keep = os.path.join(OUT_DIR, "failed-%s.out" % tag)
        shutil.copy(outfile, keep)
        shutil.copy(script, keep[:-4] + ".sql")
        job.error += " (output kept in %s)" % keep
        return job
    if MOD.loaded:
        job.check = parse_check(text)
    if counter == "callgrind":
        with open(cg) as f:
            for line in f:
                if line.startswith("totals:") or line.startswith("summary:"):
                    job.count = int(line.split()[1])
                    break
        os.unlink(cg)
    else:
        with open(pf) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) > 2 and parts[2].startswith("instructions") and parts[0].isdigit():
                    job.count = int(parts[0])
                if len(parts) > 2 and parts[2].startswith("cycles") and parts[0].isdigit():
                    job.cycles = int(parts[0])
    if job.count is None:
        job.error = "no instruction count in the %s output" % counter
    if len(text) > 1000000:
        os.unlink(outfile)   # the EXECUTE-per-line workloads print a lot
    return job


def plan_checks(work, n_of):
    """The counted statement must have the same plan at N, at 0 and at
    n_full (else the baseline subtraction would compare different plans)."""
    for w in work:
        if w.kind != "sql":
            continue
        for q in w.queries:
            plans = {}
            for n in sorted({n_of(w), 0, w.getint("n_full")}):
                sql = "\n".join(w.section("session") + w.section("round_setup"))
                stmts = q.statements(n)
                sql += "\n" + "\n".join("EXPLAIN (COSTS OFF) " + s for s in stmts)
                sql += "\n" + "\n".join(w.section("teardown"))
                out = psql(sql, options="-c btree_jit.enabled=off", tuples=True)
                plans[n] = "\n".join(l for l in out.splitlines() if l.strip() and "pg_prewarm" not in l
                                     and not re.match(r"^\d+\|\d+(\|\d+)*$", l.strip()))
            first = plans[0]
            detail("PLAN %s/%s:\n%s" % (w.name, q.name, first))
            for n, p in plans.items():
                if p != first:
                    raise BenchError("plan of %s/%s differs between N=0 and N=%d:\n%s\n---\n%s"
                                     % (w.name, q.name, n, first, p))
            say("plan %s/%s: %s" % (w.name, q.name, " / ".join(l.strip().lstrip("-> ").strip()
                                                            for l in first.splitlines() if "Scan" in l or "Loop" in l)))


def run_counts(work, counter, n_of, jobs_n):
    jobs = []
    for w in work:
        if w.kind not in ("sql", "pgbench") or not w.queries:
            continue
        for q in w.queries:
            for arm in ARMS:
                for n in (n_of(w), 0):
                    jobs.append(CountJob(w, q, arm, n))
    if not jobs:
        return {}
    workdir = os.path.join(os.environ["BTJIT_CLUSTER_DIR"], "counts")
    os.makedirs(workdir, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(workdir, OS_USER, OS_USER)
    cluster_stop()
    pgdata = os.environ["PGDATA"]
    dirs = [pgdata]
    try:
        jobs_n = max(1, min(jobs_n, len(jobs)))
        for i in range(1, jobs_n):
            d = "%s.copy%d" % (pgdata, i)
            say("copying the data directory for a parallel single-user run: %s" % d)
            run(["cp", "-a", pgdata, d])
            dirs.append(d)
        pool = queue.Queue()
        for d in dirs:
            pool.put(d)
        say("instruction counts: %d single-user runs under %s, %d at a time (counts do not depend on load)"
            % (len(jobs), counter, jobs_n))
        done = [0]

        def work_one(job):
            d = pool.get()
            try:
                run_count_job(job, d, workdir, counter)
            finally:
                pool.put(d)
            done[0] += 1
            if job.error:
                say("  [%d/%d] %s FAILED: %s" % (done[0], len(jobs), job.label(), job.error))
            else:
                say("  [%d/%d] %s: %s instructions, %.0fs" % (done[0], len(jobs), job.label(),
                                                              "{:,}".format(job.count), job.seconds))
            return job
        # the long runs first
        order = sorted(jobs, key=lambda j: -j.n)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs_n) as ex:
            list(ex.map(work_one, order))
    finally:
        for d in dirs[1:]:
            shutil.rmtree(d, ignore_errors=True)
        cluster_start()
    failed = [j for j in jobs if j.error]
    if failed:
        raise BenchError("%d single-user runs failed; first: %s: %s (scripts and output in %s)"
                         % (len(failed), failed[0].label(), failed[0].error, workdir))
    return {j.key: j for j in jobs}


def count_rows(work, counts, counter, n_of):
    rows = []
    for w in work:
        for q in w.queries:
            n = n_of(w)
            k = lambda arm, nn: counts.get((w.name, q.name, arm, nn))
            if not k("off", n):
                continue
            per = {}
            for arm in ARMS:
                per[arm] = (k(arm, n).count - k(arm, 0).count) / float(n)
            ratio = per["off"] / per["on"] if per["on"] > 0 else None
            notes = []
            full = w.getint("n_full")
            if counter == "callgrind":
                if full and n < full:
                    notes.append("callgrind, N=%s (scaled from %s)" % ("{:,}".format(n), "{:,}".format(full)))
                else:
                    notes.append("callgrind, N=%s" % "{:,}".format(n))
            else:
                notes.append("perf instructions:u, N=%s" % "{:,}".format(n))
            notes.append(jit_note_single_user(w, k("on", n), k("off", n)))
            mn = module_note()
            if mn:
                notes.append(mn)
            rows.append(dict(workload=w.name, metric="instructions/%s %s" % (w.get("unit", "op"), q.name),
                             kind="instructions", unit="", off=per["off"], on=per["on"], ratio=ratio,
                             target=w.getfloat("target"), notes="; ".join(n for n in notes if n)))
            if counter == "perf" and k("off", n).cycles and k("on", n).cycles:
                cyc = {arm: (k(arm, n).cycles - k(arm, 0).cycles) / float(n) for arm in ARMS}
                rows.append(dict(workload=w.name, metric="cycles/%s %s" % (w.get("unit", "op"), q.name),
                                 kind="instructions", unit="", off=cyc["off"], on=cyc["on"],
                                 ratio=cyc["off"] / cyc["on"] if cyc["on"] > 0 else None,
                                 target=None, notes="perf cycles:u (noisy)"))
    return rows


JIT_PROBLEMS = []


def jit_note_single_user(w, on_job, off_job):
    if not MOD.loaded:
        return ""
    c_on, c_off = on_job.check, off_job.check
    if c_on is None:
        JIT_PROBLEMS.append("%s: no BTJITCHECK line from the single-user 'on' run" % on_job.label())
        return "JIT use UNVERIFIED"
    detail("CHECK %s: %s" % (on_job.label(), c_on["raw"]))
    detail("CHECK %s: %s" % (off_job.label(), c_off["raw"] if c_off else None))
    bad = []
    for idx in w.indexes:
        st = c_on["indexes"].get(idx)
        if not st or st["state"] != "jit" or st["jit"] == 0:
            bad.append("%s: %s" % (idx, st or "no stats row"))
    if c_off:
        for idx, st in c_off["indexes"].items():
            if st["jit"] != 0:
                JIT_PROBLEMS.append("%s: %s had %d JIT searches with btree_jit.enabled=off"
                                    % (off_job.label(), idx, st["jit"]))
    if bad:
        JIT_PROBLEMS.append("%s: the JIT was NOT used: %s" % (on_job.label(), "; ".join(bad)))
        return "JIT NOT USED (%s)" % "; ".join(bad)
    return "JIT used: " + ", ".join("%s %s jit" % (i, "{:,}".format(c_on["indexes"][i]["jit"])) for i in w.indexes)


# --------------------------------------------------------------------------
# wall-clock

def set_arm(arm):
    return "SET btree_jit.enabled = %s;" % arm


def timing_sql(w, q, rounds, n):
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


def ratio_stats(pairs):
    rs = [a / b for a, b in pairs if b > 0]
    if not rs:
        return None, None, None
    return statistics.median(rs), min(rs), max(rs)


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
        if not st or st["state"] != "jit" or st["jit"] == 0:
            ok = False
            bits.append("%s NOT JIT (%s)" % (idx, st))
        else:
            extra = ""
            if st["stock"] or st["declined"]:
                extra = " +%d stock/%d declined" % (st["stock"], st["declined"])
            bits.append("%s jit%s" % (idx, extra))
        so = res["off"] and res["off"]["indexes"].get(idx)
        if so and so["jit"]:
            ok = False
            bits.append("%s: %d JIT searches with enabled=off!" % (idx, so["jit"]))
    if not ok:
        JIT_PROBLEMS.append("%s/%s (running cluster): %s" % (w.name, q.name, "; ".join(bits)))
    return ("JIT used: " if ok else "JIT NOT USED: ") + ", ".join(bits), ok


def time_sql_workload(w, rounds, n_override=None):
    rows = []
    n = n_override or w.getint("n_full")
    for q in w.queries:
        say("timing %s/%s: %d rounds x off/on, N=%s, load %s" % (w.name, q.name, rounds, "{:,}".format(n), loadavg()))
        t = time.time()
        out = psql(timing_sql(w, q, rounds, n), tuples=False)
        times = parse_timing(out)
        if len(times["off"]) != rounds or len(times["on"]) != rounds:
            raise BenchError("timing %s/%s: expected %d rounds per arm, got %s\n%s" % (w.name, q.name, rounds, times, out[-2000:]))
        detail("TIMES %s/%s ms per round: off=%s on=%s" % (w.name, q.name, times["off"], times["on"]))
        med, lo, hi = ratio_stats(list(zip(times["off"], times["on"])))
        unit = w.get("unit", "op")
        jitnote, _ = verify_sql_jit(w, q)
        notes = ["%d rounds, N=%s, median of per-round ratios" % (rounds, "{:,}".format(n))]
        if jitnote:
            notes.append(jitnote)
        mn = module_note()
        if mn:
            notes.append(mn)
        rows.append(dict(workload=w.name, metric="time/%s %s" % (unit, q.name), kind="throughput", unit="us",
                         off=statistics.median(times["off"]) * 1000.0 / n,
                         on=statistics.median(times["on"]) * 1000.0 / n,
                         ratio=med, rmin=lo, rmax=hi, target=w.getfloat("throughput_target"),
                         notes="; ".join(notes)))
        say("  %s/%s: off/on time ratio median %.3f (%.3f-%.3f) in %.0fs" % (w.name, q.name, med, lo, hi, time.time() - t))
    return rows


def status_counts():
    if not MOD.loaded:
        return None
    # read with the module off: this session's own searches count as stock
    out = psql("SELECT jit_searches, stock_searches FROM btree_jit_status()",
               options="-c btree_jit.enabled=off").strip().split("|")
    return int(out[0]), int(out[1])


def pgbench_once(args, clients, seconds, arm):
    cmd = [os.path.join(BIN, "pgbench"), "-n", "-T", str(seconds), "-c", str(clients), "-j", str(clients)] + args + [DB]
    p = run(cmd, env={"PGOPTIONS": "-c btree_jit.enabled=%s" % arm})
    m = re.search(r"^tps = ([\d.]+)", p.stdout, re.M)
    if not m:
        raise BenchError("no tps in pgbench output:\n" + p.stdout + p.stderr)
    nx = re.search(r"number of transactions actually processed: (\d+)", p.stdout)
    return float(m.group(1)), int(nx.group(1)) if nx else 0


def time_pgbench_workload(w, rounds, seconds):
    rows = []
    args = w.get("pgbench", "").split()
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
        med, lo, hi = ratio_stats(list(zip(tps["on"], tps["off"])))
        notes = ["%d rounds x %ds, median of per-round ratios" % (rounds, seconds)]
        if MOD.loaded:
            jon, son = deltas["on"]
            joff = deltas["off"][0]
            if jon == 0:
                notes.append("JIT NOT USED (0 JIT searches during the 'on' rounds)")
                JIT_PROBLEMS.append("%s -c %d: 0 JIT searches in btree_jit_status() during the 'on' rounds" % (w.name, clients))
            else:
                notes.append("JIT used: %.1f JIT + %.1f stock searches/xact in 'on' rounds"
                             % (jon / max(xacts["on"], 1), son / max(xacts["on"], 1)))
            if joff:
                notes.append("%d JIT searches with enabled=off!" % joff)
                JIT_PROBLEMS.append("%s -c %d: %d JIT searches during the 'off' rounds" % (w.name, clients, joff))
        mn = module_note()
        if mn:
            notes.append(mn)
        rows.append(dict(workload=w.name, metric="tps -c %d" % clients, kind="throughput", unit="tps",
                         off=statistics.median(tps["off"]), on=statistics.median(tps["on"]),
                         ratio=med, rmin=lo, rmax=hi, target=w.getfloat("throughput_target"),
                         notes="; ".join(notes)))
        say("  %s -c %d: on/off tps median %.3f (%.3f-%.3f)" % (w.name, clients, med, lo, hi))
    return rows


# --------------------------------------------------------------------------
# compile latency

def timed_queries(sql_lines, options):
    """Run statements in ONE fresh backend with \\timing; list of ms."""
    script = "\\o /dev/null\n\\timing on\n" + "\n".join(sql_lines) + "\n"
    out = psql(script, options=options, tuples=False)
    return [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", out, re.M)]


def compile_latency(w, rounds):
    q = w.queries[0]
    res = {k: [] for k in ("off1", "off2", "cold1", "cold2", "warm1", "cm_cold", "cm_warm",
                           "ex_cold", "ex_warm")}
    sigs = []
    for r in range(rounds):
        tq, tc = 2 * r, 2 * r + 1
        stmt = q.sql.replace("{T}", str(tq))
        off = timed_queries([stmt, stmt], "-c btree_jit.enabled=off")
        res["off1"].append(off[0])
        res["off2"].append(off[1])
        statq = ("SELECT state, coalesce(reason, ''), coalesce(signature, ''), coalesce(compile_ms, -1) "
                 "FROM btree_jit_index_stats() WHERE indexrelid = 'latidx%d'::regclass;" % tq)
        for phase in ("cold", "warm"):
            lines = [stmt, stmt]
            if MOD.loaded:
                lines += ["\\o", "\\timing off", "\\echo @@S", statq]
            out = psql("\\o /dev/null\n\\timing on\n" + "\n".join(lines) + "\n", options="-c btree_jit.enabled=on", tuples=True)
            ts = [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", out, re.M)]
            res[phase + "1"].append(ts[0])
            if phase == "cold":
                res["cold2"].append(ts[1])
            if MOD.loaded:
                st = out.split("@@S", 1)[1].strip().split("|") if "@@S" in out else []
                detail("LATENCY round %d %s latidx%d: %s" % (r, phase, tq, st))
                if len(st) >= 4:
                    res["cm_" + phase].append(float(st[3]))
                    if phase == "cold":
                        sigs.append(st[2])
                    if st[0] != "jit":
                        JIT_PROBLEMS.append("compile_latency latidx%d (%s backend): state %s (%s)" % (tq, phase, st[0], st[1]))
        if MOD.loaded:
            for phase in ("cold", "warm"):
                out = psql("SELECT state, coalesce(signature, ''), coalesce(reason, ''), coalesce(compile_ms, -1) "
                           "FROM btree_jit_compile('latidx%d')" % tc).strip().split("|")
                detail("LATENCY round %d btree_jit_compile(latidx%d) %s backend: %s" % (r, tc, phase, out))
                if len(out) >= 4:
                    res["ex_" + phase].append(float(out[3]))
    detail("LATENCY raw: %s; signatures: %s" % (res, sigs))
    if MOD.loaded and len(set(sigs)) != len(sigs):
        say("note: compile_latency shapes did not all have distinct signatures: %s" % sigs)

    def med(k):
        return statistics.median(res[k]) if res[k] else None

    def spread(k):
        return (min(res[k]), max(res[k])) if res[k] else (None, None)

    rows = []
    nt = "%d rounds, fresh backends, median" % rounds
    mn = module_note()

    def lat_row(metric, offk, onk, note):
        off, on = med(offk), med(onk)
        rs = [a / b for a, b in zip(res[offk], res[onk]) if b > 0]
        rows.append(dict(workload=w.name, metric=metric, kind="latency", unit="ms", off=off, on=on,
                         ratio=statistics.median(rs) if rs else None,
                         rmin=min(rs) if rs else None, rmax=max(rs) if rs else None, target=None,
                         notes="; ".join(x for x in (note, mn) if x)))
    lat_row("first query, new key shape, fresh backend", "off1", "cold1", nt + "; includes the compile")
    lat_row("first query, shape compiled by another backend", "off1", "warm1", nt)
    lat_row("second query, same backend", "off2", "cold2", nt)
    for k, metric, note in (("cm_cold", "compile_ms at first search (module)", "btree_jit_index_stats().compile_ms"),
                            ("cm_warm", "compile_ms, 2nd backend same shape", "btree_jit_index_stats().compile_ms"),
                            ("ex_cold", "btree_jit_compile() new shape", "compile_ms"),
                            ("ex_warm", "btree_jit_compile() shape compiled elsewhere", "compile_ms, fresh backend")):
        if res[k]:
            lo, hi = spread(k)
            rows.append(dict(workload=w.name, metric=metric, kind="info", unit="ms", off=None, on=med(k),
                             ratio=None, target=None,
                             notes="%s; min-max %.2f-%.2f ms" % (note, lo, hi)))
    return rows


# --------------------------------------------------------------------------
# main

def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/run",
        description="btree_jit benchmarks: instruction counts (perf or callgrind, single-user mode) "
                    "and interleaved wall-clock rounds, JIT off vs on.  No workload: the headline "
                    "(probe_int4).  --all: every workload.")
    ap.add_argument("workloads", nargs="*", help="workloads to run (see --list)")
    ap.add_argument("--all", action="store_true", help="every workload (under 15 minutes on 2 cores)")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--counter", choices=("auto", "perf", "callgrind", "none"),
                    default=os.environ.get("BENCH_COUNTER", "auto"),
                    help="instruction counter (default auto: perf if the machine has counters, else callgrind)")
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
    ap.add_argument("--no-counts", action="store_true", help="skip instruction counts")
    ap.add_argument("--no-timing", action="store_true", help="skip wall-clock rounds")
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    if "--check-args" in argv and any(x in ("-h", "--help", "--list") for x in argv):
        # bench/run's early call: answer, and tell it to stop there
        try:
            parse_args([x for x in argv if x != "--check-args"])
        except SystemExit as e:
            sys.exit(100 if not e.code else e.code)
    a = ap.parse_args(argv)
    avail = wl.available()
    if a.list:
        for n in avail:
            print("%-16s %s" % (n, wl.load(n).get("title", "")))
        sys.exit(0)
    if a.all and a.workloads:
        ap.error("--all and a workload list are exclusive")
    for n in a.workloads:
        if n not in avail:
            ap.error("unknown workload %r (known: %s)" % (n, ", ".join(avail)))
    if a.all:
        a.selected, a.mode = avail, "all"
    elif a.workloads:
        a.selected, a.mode = a.workloads, "subset"
    else:
        a.selected, a.mode = list(wl.HEADLINE), "headline"
    return a


def main(argv):
    global LOG, BIN
    a = parse_args(argv)
    if a.check_args:
        return 0
    for v in ("PGHOST", "PGPORT", "PGDATA", "BTJIT_CLUSTER_DIR", "BTJIT_CLUSTER_LOG"):
        if v not in os.environ:
            raise BenchError("%s is not set: run bench/run, which starts the cluster" % v)
    BIN = bindir()
    os.makedirs(OUT_DIR, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(OUT_DIR, "bench-%s-%s" % (a.mode, stamp))
    LOG = open(base + ".log", "w")
    say("mode %s: %s; load average %s; detail log %s" % (a.mode, " ".join(a.selected), loadavg(), base + ".log"))
    work = [wl.load(n) for n in a.selected]

    setup_database()
    counter = "none" if a.no_counts else choose_counter(a.counter)

    def n_of(w):
        if counter == "callgrind":
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

    rows = []
    t = time.time()
    counted = [w for w in work if w.queries and w.kind in ("sql", "pgbench")]
    if counter != "none" and counted:
        plan_checks(counted, n_of)
        counts = run_counts(counted, counter, n_of, a.jobs)
        rows += count_rows(counted, counts, counter, n_of)
    t_counts = time.time() - t

    t = time.time()
    if not a.no_timing:
        for w in work:
            if w.kind == "sql":
                rows += time_sql_workload(w, a.rounds, a.n_timing)
            elif w.kind == "pgbench":
                rows += time_pgbench_workload(w, a.rounds, a.pgbench_seconds)
            elif w.kind == "latency":
                rows += compile_latency(w, w.getint("rounds", 5))
    t_timing = time.time() - t

    # order rows by workload, instructions first
    order = {n: i for i, n in enumerate(a.selected)}
    kind_order = {"instructions": 0, "throughput": 1, "latency": 2, "info": 3}
    rows.sort(key=lambda r: (order.get(r["workload"], 99), kind_order.get(r["kind"], 9)))

    total = time.time() - T0
    title = "btree_jit benchmark (%s): JIT off vs on" % a.mode
    server = psql("SELECT version()").strip().split(",")[0]
    counter_txt = {"callgrind": "valgrind callgrind Ir (no hardware counters here)",
                   "perf": "perf stat instructions:u", "none": "none"}[counter]
    sub = "%s; counts: %s; %s; load avg at end %s" % (server, counter_txt, stamp, loadavg())

    table = report.text_table(rows)
    legend = [
        "ratio: >1 means better with the JIT.  instructions: off/on (>1 = fewer instructions with the JIT),",
        "  per unit = (count(N) - count(0)) / N, same session setup and warm-up, single-user backend, user space;",
        "  time/throughput: median of per-round ratios (time off/on, tps on/off) of interleaved off/on rounds in one",
        "  run, spread = min-max over rounds; latency: off/on.  off/on columns: per-unit counts, us per unit, tps, ms.",
        "counter: %s.  Timing on a shared %d-core machine: compare ratios, never absolute figures across runs." % (counter_txt, os.cpu_count() or 0),
        "phases: data %.0fs, counts %.0fs, timing %.0fs, total %.0fs (driver; plus deps/build/cluster in bench/run)."
        % (t_data, t_counts, t_timing, total),
    ]
    mn = module_note()
    if mn:
        legend.insert(0, "!!! %s: btree_jit_status: %s" % (mn, MOD.reason or "not preloaded"))
    if JIT_PROBLEMS:
        legend.insert(0, "!!! JIT VERIFICATION FAILED:\n!!!   " + "\n!!!   ".join(JIT_PROBLEMS))
    elif MOD.loaded and MOD.active:
        legend.insert(0, "JIT verified: every 'on' measurement above searched its indexes through JIT code "
                         "(index stats / status counters; 'off' runs had 0 JIT searches).")

    text = "\n%s\n%s\n\n%s\n\n%s\n" % (title, sub, table, "\n".join(legend))
    print(text)
    with open(base + ".txt", "w") as f:
        f.write(text)
    report.write_csv(rows, base + ".csv")
    report.write_svg(rows, base + ".svg", title, sub)
    for ext in ("txt", "csv", "svg", "log"):
        link = os.path.join(OUT_DIR, "latest.%s" % ext)
        try:
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(os.path.basename(base) + "." + ext, link)
        except OSError:
            pass
    print("table: %s.txt\ncsv:   %s.csv\nchart: %s.svg\nlog:   %s.log" % (base, base, base, base))
    detail(text)
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
