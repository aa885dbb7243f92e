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
import hashlib
import json
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
KEEP_PROFILES = None    # --keep-profiles: where callgrind parts go
SIMULATE = False        # --simulate: callgrind also simulates caches and branches


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
    note_fingerprint(module_fingerprint(), "cluster restart")
    pg_ctl("-D", os.environ["PGDATA"], "-l", os.environ["BTJIT_CLUSTER_LOG"], "-w", "-t", "120", "start")
    run([os.path.join(BIN, "pg_isready"), "-q", "-t", "60"])


def du(path):
    try:
        out = subprocess.check_output(["du", "-sh", path], text=True, stderr=subprocess.DEVNULL)
        return out.split()[0]
    except (subprocess.CalledProcessError, OSError):
        return "?"


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
    fingerprint = ""
    active = False      # btree_jit_status().active
    reason = ""
    status_row = ""


MOD = Module()


def module_fingerprint():
    """Content hash of the installed btree_jit.so and template: other people
    may `make install` while a benchmark runs, and every single-user run and
    every server start loads whatever is installed then."""
    pgc = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
    lib = subprocess.check_output([pgc, "--pkglibdir"], text=True).strip()
    fp = []
    for f in ("btree_jit.so", "btree_jit/search_template.bc"):
        try:
            with open(os.path.join(lib, f), "rb") as fh:
                fp.append("%s:sha256:%s" % (f, hashlib.sha256(fh.read()).hexdigest()[:16]))
        except OSError:
            fp.append("%s:missing" % f)
    return " ".join(fp)


def setup_database():
    have = psql("SELECT 1 FROM pg_database WHERE datname = '%s'" % DB, db="postgres").strip()
    if not have:
        psql("CREATE DATABASE %s" % DB, db="postgres")
    psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    MOD.fingerprint = module_fingerprint()
    note_fingerprint(MOD.fingerprint, "at the start")
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
    """One text value with the module's view of this backend: per watched
    index state/search counts/code source, how many shapes this backend
    compiled afresh vs loaded from the object cache, and the cluster-wide
    status counters.  Through to_jsonb so that a column the module adds or
    lacks does not break it."""
    names = ", ".join("'%s'" % i for i in w.indexes)
    return ("SELECT 'BTJITCHECK ' || coalesce((SELECT string_agg(format('%%s=%%s/jit:%%s/stock:%%s/declined:%%s/src:%%s', "
            "j->>'indexrelid', j->>'state', j->>'jit_searches', j->>'stock_searches', j->>'declined_searches', "
            "coalesce(replace(j->>'code_source', ' ', '_'), '-')), ' ' ORDER BY j->>'indexrelid') "
            "FROM (SELECT to_jsonb(x) AS j FROM btree_jit_index_stats() x) y WHERE j->>'indexrelid' IN (%s)), 'no-index-stats') "
            "|| ' backend:compiled=' || (SELECT count(*) FROM btree_jit_index_stats() x WHERE to_jsonb(x)->>'code_source' = 'compiled') "
            "|| ',cached=' || (SELECT count(*) FROM btree_jit_index_stats() x WHERE to_jsonb(x)->>'code_source' = 'object cache') "
            "|| ' status:active=' || s.active || ',jit=' || s.jit_searches || ',stock=' || s.stock_searches "
            "|| ',compiles=' || s.compiles || ',compile_failures=' || s.compile_failures "
            "AS %s FROM btree_jit_status() s;" % (names, label))


def parse_check(text, label=None):
    """'BTJITCHECK idx=jit/jit:1/stock:0/declined:0/src:x ... status:...' -> dict.
    label: the column name in single-user output (btjitcheck = "...")."""
    if label:
        m = re.search(r"\b%s = \"BTJITCHECK ([^\"\n]*)" % label, text)
    else:
        m = re.search(r"BTJITCHECK ([^\"\n]*)", text)
    if not m:
        return None
    res = {"raw": m.group(1), "indexes": {}}
    mc = re.search(r"backend:compiled=(\d+),cached=(\d+)", m.group(1))
    if mc:
        res["compiles"] = (int(mc.group(1)), int(mc.group(2)))
    for tok in m.group(1).split():
        mm = re.match(r"(.+?)=(\w+)/jit:(\d+)/stock:(\d+)/declined:(\d+)/src:(\S+)$", tok)
        if mm:
            res["indexes"][mm.group(1)] = dict(state=mm.group(2), jit=int(mm.group(3)),
                                               stock=int(mm.group(4)), declined=int(mm.group(5)),
                                               src=mm.group(6))
    return res


def n_warm(w):
    """Warm-up count: enough page searches to pass btree_jit.compile_threshold
    (64 per index per backend by default) in every run, N or 0, off or on."""
    return w.getint("n_warm", 1000)


def warmup_statements(w, q):
    aids = aid_sequence(w.getint("scale", 20)) if q.repeat else None
    stmts = w.section("warmup")
    if n_warm(w):
        stmts += q.statements(n_warm(w), aids)
    return stmts


# callgrind --dump-before=pg_sleep: each marker statement starts a new part
# of the profile, so one process yields per-statement counts.
MARK = "SELECT pg_sleep(0);"


def setup_section(w, one_process_per_arm):
    """count_setup (if the workload has one) replaces round_setup when each
    arm is one process on its own pristine copy of the data directory
    (callgrind).  perf runs one process per (statement, arm, N|0), several
    in one directory, so those rebuild whatever they write (round_setup)."""
    if one_process_per_arm and "count_setup" in w.sections:
        return w.section("count_setup")
    return w.section("round_setup")


def writes(w):
    return "count_setup" in w.sections


def count_statements(w, q, n, with_check):
    """perf: one process per (statement, arm, N|0); the baseline (n = 0)
    is another process with the same script otherwise."""
    aids = aid_sequence(w.getint("scale", 20)) if q.repeat else None
    stmts = w.section("session") + setup_section(w, False) + warmup_statements(w, q)
    stmts += q.statements(n, aids)
    if with_check:
        stmts.append(check_sql(w))
    stmts += w.section("teardown")
    return stmts


def marked_statements(items, n_of, with_check):
    """callgrind: ONE process per arm runs every counted statement.  Per
    statement k (0-based), after its workload's setup and warm-up:
        [check_before_k] M query(0) M query(N) M query(0) M [check_k]
    Each marker (pg_sleep) starts a new profile part, so part 4k+2 is
    query(0), 4k+3 query(N), 4k+4 query(0) again; the warm-up, and any
    compile it causes, lies outside them.  Both arms run on their own
    copy of the same data directory, so they start from the same data."""
    stmts = []
    for k, (w, q) in enumerate(items):
        aids = aid_sequence(w.getint("scale", 20)) if q.repeat else None
        stmts += ["RESET ALL;", "DEALLOCATE ALL;"]
        stmts += w.section("session") + setup_section(w, True) + warmup_statements(w, q)
        if with_check:
            stmts.append(check_sql(w, "btjitcheck_before_%d" % k))
        n = n_of(w)
        stmts += [MARK] + q.statements(0, aids) + [MARK] + q.statements(n, aids) + [MARK] + q.statements(0, aids) + [MARK]
        if with_check:
            stmts.append(check_sql(w, "btjitcheck_%d" % k))
        stmts += w.section("teardown")
    return stmts


def single_user_text(stmts):
    # postgres --single -j: a statement ends at ';' followed by an empty line.
    out = []
    for s in stmts:
        s = "\n".join(l for l in s.splitlines() if l.strip())
        out.append(s + "\n\n")
    return "".join(out)


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
    if requested in ("callgrind", "callgrind-runs"):
        return requested
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
    """One single-user process.  callgrind: one per arm, all statements
    (items) with markers.  perf: one per (statement, arm, N|0)."""

    def __init__(self, items, arm, marked, which=None, n=None):
        self.items, self.arm, self.marked, self.which, self.n = items, arm, marked, which, n
        self.parts = None          # marked: per-part counts
        self.count = None          # unmarked: the whole run
        self.cycles = None
        self.seconds = None
        self.checks = {}           # label -> parsed check
        self.error = None

    def label(self):
        if self.marked:
            return "arm %s (%d statements)" % (self.arm, len(self.items))
        w, q = self.items[0]
        return "%s/%s %s N=%d" % (w.name, q.name, self.arm, self.n if self.which == "N" else 0)

    def tag(self):
        if self.marked:
            return "all.%s" % self.arm
        w, q = self.items[0]
        return "%s.%s.%s.%s" % (w.name, q.name, self.arm, self.which)


def parse_perf_csv(text):
    """perf stat -x, output -> (instructions, cycles); None where absent or
    '<not supported>'/'<not counted>'."""
    ins = cyc = None
    for line in text.splitlines():
        parts = line.strip().split(",")
        if len(parts) > 2 and parts[0].isdigit():
            if parts[2].startswith("instructions"):
                ins = int(parts[0])
            elif parts[2].startswith("cycles"):
                cyc = int(parts[0])
    return ins, cyc


def callgrind_ir(path):
    """Instructions (Ir, the first event) of a callgrind profile, or None."""
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    return None


def single_user_run(text, tag, datadir, workdir, counter, arm, marked=False):
    """One `postgres --single` run of script text, counted with counter
    ('callgrind', 'perf', 'valgrind-none' or 'native').  Returns a dict:
    count (whole run), parts (callgrind with markers: count per part, in
    order), cycles, seconds, output, error."""
    script = os.path.join(workdir, tag + ".sql")
    with open(script, "w") as f:
        f.write(text)
    stock = arm == "stock" or not MOD.loaded   # stock: the server without the module
    pg = [os.path.join(BIN, "postgres"), "--single", "-j", "-D", datadir,
          "-c", "shared_preload_libraries=%s" % ("" if stock else "btree_jit"), "-c", "jit=off"]
    if not stock:
        pg += ["-c", "btree_jit.enabled=%s" % arm, "-c", "btree_jit.verify=off"]
    pg += [DB]
    outfile = os.path.join(workdir, tag + ".out")
    cg = os.path.join(workdir, tag + ".callgrind")
    pf = os.path.join(workdir, tag + ".perf")
    if counter in ("callgrind", "callgrind-runs", "valgrind-none"):
        # --smc-check=all: the module patches the server's text at start and
        # JIT-compiles code into anonymous memory.  No --trace-children:
        # a single-user backend runs no other program.
        sim = "yes" if SIMULATE else "no"
        tool = ["--tool=callgrind", "--cache-sim=" + sim, "--branch-sim=" + sim, "--callgrind-out-file=" + cg]
        if marked:
            tool.append("--dump-before=pg_sleep")
        if counter == "valgrind-none":
            tool = ["--tool=none"]
        cmd = as_postgres(["valgrind"] + tool + ["--smc-check=all", "--trace-children=no",
                           "--log-file=" + os.path.join(workdir, tag + ".valgrind.log")] + pg)
    elif counter == "perf":
        cmd = ["perf", "stat", "-x,", "-e", "instructions:u,cycles:u", "-o", pf, "--"] + as_postgres(pg)
    else:
        cmd = as_postgres(pg)
    detail("RUN %s: %s < %s" % (tag, " ".join(cmd), script))
    res = dict(count=None, parts=None, cycles=None, seconds=None, output="", error=None)
    t = time.time()
    with open(script) as fin, open(outfile, "w") as fout:
        p = subprocess.run(cmd, stdin=fin, stdout=fout, stderr=subprocess.STDOUT, cwd=workdir)
    res["seconds"] = time.time() - t
    with open(outfile, errors="replace") as f:
        out = f.read()
    res["output"] = out
    errs = [l for l in out.splitlines() if re.search(r"\b(ERROR|FATAL|PANIC):", l)]
    if p.returncode != 0 or errs:
        keep = os.path.join(OUT_DIR, "failed-%s.out" % tag)
        shutil.copy(outfile, keep)
        shutil.copy(script, keep[:-4] + ".sql")
        res["error"] = "exit %d; %s (output kept in %s)" % (p.returncode, "; ".join(errs[:3]) or out[-500:], keep)
        return res
    if counter in ("callgrind", "callgrind-runs"):
        # cg.1, cg.2, ... are the dumps at the markers; cg the final part
        files = sorted((int(f.rsplit(".", 1)[1]), f) for f in os.listdir(workdir)
                       if f.startswith(os.path.basename(cg) + ".") and f.rsplit(".", 1)[1].isdigit())
        paths = [os.path.join(workdir, f) for _, f in files] + [cg]
        parts = []
        for path in paths:
            parts.append(callgrind_ir(path))
            if KEEP_PROFILES:
                shutil.move(path, os.path.join(KEEP_PROFILES, "%s.part%d" % (tag, len(parts))))
            else:
                os.unlink(path)
        res["parts"] = parts
        res["count"] = sum(x or 0 for x in parts)
    elif counter == "perf":
        with open(pf) as f:
            res["count"], res["cycles"] = parse_perf_csv(f.read())
    if counter in ("callgrind", "callgrind-runs", "perf") and res["count"] is None:
        res["error"] = "no instruction count in the %s output" % counter
    if len(out) > 1000000:
        os.unlink(outfile)   # the EXECUTE-per-line workloads print a lot
    return res


def run_count_job(job, datadir, workdir, counter, n_of):
    checks = MOD.loaded and job.arm != "stock"
    if job.marked:
        stmts = marked_statements(job.items, n_of, checks)
    else:
        w, q = job.items[0]
        stmts = count_statements(w, q, job.n if job.which == "N" else 0, checks)
    fp = module_fingerprint()
    res = single_user_run(single_user_text(stmts), job.tag(), datadir, workdir, counter, job.arm, marked=job.marked)
    job.seconds, job.error, job.cycles = res["seconds"], res["error"], res["cycles"]
    if job.error:
        return job
    note_fingerprint(fp, "single-user run " + job.label())
    note_fingerprint(module_fingerprint(), "after " + job.label())
    if job.marked:
        job.parts = res["parts"]
        want = 4 * len(job.items) + 1
        if len(job.parts) != want or None in job.parts:
            job.error = "expected %d callgrind parts (4 markers per statement), got %d" % (want, len(job.parts))
    else:
        job.count = res["count"]
    if checks:
        for m in re.finditer(r"\b(btjitcheck\w*) = \"BTJITCHECK", res["output"]):
            job.checks[m.group(1)] = parse_check(res["output"], m.group(1))
    return job


def prime_object_cache(work, workdir, counter):
    """One single-user 'on' run of every warm-up, so that the module's
    object cache (files in the data directory, keyed by key shape and by
    the CPU features the process sees: valgrind's differ from the real
    CPU's) holds every shape before the data directory is copied.  Then
    every counted 'on' run loads the same objects instead of some runs
    compiling and others loading (compile cost would leak into the
    per-unit difference)."""
    if not MOD.loaded:
        return
    stmts = []
    for w in work:
        for q in w.queries:
            stmts += ["RESET ALL;", "DEALLOCATE ALL;"]
            stmts += w.section("session") + setup_section(w, False) + warmup_statements(w, q) + w.section("teardown")
    # Under valgrind the process sees valgrind's virtual CPUID (the same for
    # every tool), so prime under the fastest tool, none.
    say("priming the module's object cache: one single-user 'on' run of every warm-up (%s)"
        % ("under valgrind --tool=none: valgrind's CPU features key the cache" if counter.startswith("callgrind") else "native"))
    t = time.time()
    # on a scratch copy: the warm-ups write (inserts); only the cache is kept
    pgdata = os.environ["PGDATA"]
    scratch = pgdata + ".prime"
    run(["cp", "-a", pgdata, scratch])
    try:
        res = single_user_run(single_user_text(stmts), "prime", scratch, workdir,
                              "valgrind-none" if counter.startswith("callgrind") else "native", "on")
        if res["error"]:
            raise BenchError("object cache priming run failed: " + res["error"])
        src = os.path.join(scratch, "btree_jit_cache")
        if os.path.isdir(src):
            dst = os.path.join(pgdata, "btree_jit_cache")
            shutil.rmtree(dst, ignore_errors=True)
            run(["cp", "-a", src, dst])
            n = len(os.listdir(dst))
        else:
            n = 0
            say("note: the priming run left no %s (object cache off or renamed?)" % src)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say("primed in %.0fs: %d cached objects" % (time.time() - t, n))


def plan_checks(work, n_of):
    """The counted statement must have the same plan at N, at 0 and at
    n_full (else the baseline subtraction would compare different plans)."""
    for w in work:
        if w.kind != "sql":
            continue
        for q in w.queries:
            plans = {}
            for n in sorted({n_of(w), 0, w.getint("n_full"), w.getint("n_timing") or 0}):
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


def run_counts(work, counter, n_of, jobs_n, stock_names):
    """stock_names: workloads also counted on the server WITHOUT the module
    (arm 'stock'): 'off' runs the module's dispatcher, which costs
    something; 'stock' is the server as shipped."""
    marked = counter == "callgrind"
    items = [(w, q) for w in work if w.kind in ("sql", "pgbench") for q in w.queries]
    if not items:
        return []
    stock_items = [(w, q) for w, q in items if w.name in stock_names] if MOD.loaded else []
    jobs = []
    if marked:
        jobs = [CountJob(items, arm, True) for arm in ARMS]
        if stock_items:
            jobs.append(CountJob(stock_items, "stock", True))
    else:
        for w, q in items:
            arms = ARMS + (("stock",) if (w, q) in stock_items else ())
            for arm in arms:
                for which in ("N", "0"):
                    jobs.append(CountJob([(w, q)], arm, False, which, n_of(w)))
    workdir = os.path.join(os.environ["BTJIT_CLUSTER_DIR"], "counts")
    os.makedirs(workdir, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(workdir, OS_USER, OS_USER)
    psql("CHECKPOINT")
    cluster_stop()
    pgdata = os.environ["PGDATA"]
    copies = []
    done = [0]
    lock = threading.Lock()

    def copy_datadir(name):
        d = "%s.%s" % (pgdata, name)
        t = time.time()
        run(["cp", "-a", pgdata, d])
        copies.append(d)
        say("copied the data directory (%s) to %s in %.0fs" % (du(pgdata), d, time.time() - t))
        return d

    def work_one(job, d):
        run_count_job(job, d, workdir, counter, n_of)
        with lock:
            done[0] += 1
            k = done[0]
        if job.error:
            say("  [%d/%d] %s FAILED: %s" % (k, len(jobs), job.label(), job.error))
        elif marked:
            say("  [%d/%d] %s: %s instructions in %.0fs" % (k, len(jobs), job.label(),
                                                            "{:,}".format(sum(job.parts)), job.seconds))
        else:
            say("  [%d/%d] %s: %s instructions, %.0fs" % (k, len(jobs), job.label(),
                                                          "{:,}".format(job.count), job.seconds))

    try:
        if marked:
            # Each arm must start from the same data (insert_random writes):
            # 'on' gets a copy, 'off' the directory itself, 'stock' runs
            # there after 'off' unless it writes too.  No object cache
            # priming: the compile happens in the warm-up, outside the
            # measured parts (priming under valgrind would cost as much).
            on_job = [j for j in jobs if j.arm == "on"][0]
            off_job = [j for j in jobs if j.arm == "off"][0]
            stock_job = [j for j in jobs if j.arm == "stock"]
            on_dir = copy_datadir("on")
            stock_dir = pgdata
            if stock_job and any(writes(w) for w, _ in stock_job[0].items):
                stock_dir = copy_datadir("stock")
            say("instruction counts: %d single-user processes under callgrind (one per arm, %d at a time), "
                "%d statements: query(0), query(N), query(0) between pg_sleep markers"
                % (len(jobs), min(jobs_n, 2), len(items)))

            def lane_b():
                work_one(off_job, pgdata)
                for j in stock_job:
                    work_one(j, stock_dir)
            if jobs_n >= 2:
                with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
                    fa = ex.submit(work_one, on_job, on_dir)
                    fb = ex.submit(lane_b)
                    fa.result()
                    fb.result()
            else:
                work_one(on_job, on_dir)
                lane_b()
        else:
            prime_object_cache(work, workdir, counter)
            par = max(1, min(jobs_n, len(jobs)))
            pool = queue.Queue()
            pool.put(pgdata)
            for i in range(1, par):
                pool.put(copy_datadir("slot%d" % i))
            say("instruction counts: %d single-user runs under %s, %d at a time" % (len(jobs), counter, par))

            def pooled(job):
                d = pool.get()
                try:
                    work_one(job, d)
                finally:
                    pool.put(d)
            with concurrent.futures.ThreadPoolExecutor(max_workers=par) as ex:
                list(ex.map(pooled, jobs))
    finally:
        for d in copies:
            shutil.rmtree(d, ignore_errors=True)
        cluster_start()
    failed = [j for j in jobs if j.error]
    if failed:
        raise BenchError("%d single-user runs failed; first: %s: %s" % (len(failed), failed[0].label(), failed[0].error))
    return jobs


class ArmCount:
    """Per (workload, query, arm): the per-unit figure and what backs it."""

    def __init__(self, jobs, w, q, arm, n):
        self.n = n
        self.check = self.other_check = None
        self.other_is_before = False
        self.cycles = None
        mj = [j for j in jobs if j.marked and j.arm == arm]
        if mj:
            job = mj[0]
            k = [i for i, (ww, qq) in enumerate(job.items) if ww is w and qq is q][0]
            p = job.parts
            base_a, self.count_n, base_b = p[4 * k + 1], p[4 * k + 2], p[4 * k + 3]
            self.base = (base_a + base_b) / 2.0
            self.base_spread = abs(base_a - base_b)
            self.check = job.checks.get("btjitcheck_%d" % k)
            self.other_check = job.checks.get("btjitcheck_before_%d" % k)
            self.other_is_before = True
        else:
            sel = [j for j in jobs if j.arm == arm and j.items[0][0] is w and j.items[0][1] is q]
            jn = [j for j in sel if j.which == "N"][0]
            j0 = [j for j in sel if j.which == "0"][0]
            self.count_n, self.base, self.base_spread = jn.count, float(j0.count), None
            self.check, self.other_check = jn.checks.get("btjitcheck"), j0.checks.get("btjitcheck")
            if jn.cycles and j0.cycles:
                self.cycles = (jn.cycles - j0.cycles) / float(n)
        self.per_unit = (self.count_n - self.base) / float(n)


def write_profile_manifest(jobs, n_of):
    """--keep-profiles: which kept callgrind part holds which statement, for
    bench/lib/breakdown.py."""
    marked = [j for j in jobs if j.marked]
    if not marked:
        say("--keep-profiles: only callgrind's one-process-per-arm mode keeps profiles")
        return
    stmts = []
    for j in marked:
        for k, (w, q) in enumerate(j.items):
            label = (w.name, q.name)
            st = [x for x in stmts if (x["workload"], x["query"]) == label]
            if not st:
                st = [dict(workload=w.name, query=q.name, unit=w.get("unit", "op"), n=n_of(w), parts={})]
                stmts.append(st[0])
            st[0]["parts"][j.arm] = k
    man = dict(tags={j.arm: j.tag() for j in marked}, statements=stmts, binsrch_range=None)
    ev = psql("SELECT evidence FROM btree_jit_status()", check=False) if MOD.loaded else ""
    m = re.search(r"_bt_binsrch=postgres\+0x([0-9a-f]+) size 0x([0-9a-f]+)", ev or "")
    if m:
        lo = int(m.group(1), 16)
        man["binsrch_range"] = [lo, lo + int(m.group(2), 16)]
    with open(os.path.join(KEEP_PROFILES, "manifest.json"), "w") as f:
        json.dump(man, f, indent=1)
    say("profiles kept in %s; where the instructions go: python3 bench/lib/breakdown.py %s"
        % (KEEP_PROFILES, KEEP_PROFILES))


def count_rows(work, jobs, counter, n_of):
    rows = []
    for w in work:
        for q in w.queries:
            n = n_of(w)
            if not any(ww is w and qq is q for j in jobs for ww, qq in j.items):
                continue
            arms = {arm: ArmCount(jobs, w, q, arm, n) for arm in ARMS}
            if any(j.arm == "stock" and any(ww is w and qq is q for ww, qq in j.items) for j in jobs):
                arms["stock"] = ArmCount(jobs, w, q, "stock", n)
            off, on = arms["off"], arms["on"]
            ratio = off.per_unit / on.per_unit if on.per_unit > 0 else None
            notes = []
            full = w.getint("n_full")
            nfmt = "{:,}".format(n)
            if counter.startswith("callgrind"):
                notes.append("callgrind, N=%s%s" % (nfmt, " (scaled from %s)" % "{:,}".format(full) if full and n < full else ""))
            else:
                notes.append("perf instructions:u, N=%s" % nfmt)
            for arm, a in arms.items():
                detail("COUNT %s/%s %s: N=%d count(N)=%d baseline=%.0f baseline spread=%s per-unit=%.1f"
                       % (w.name, q.name, arm, n, a.count_n, a.base, a.base_spread, a.per_unit))
            notes.append(jit_note_single_user(w, q, arms))
            mn = module_note()
            if mn:
                notes.append(mn)
            rows.append(dict(workload=w.name, metric="instructions/%s %s" % (w.get("unit", "op"), q.name),
                             kind="instructions", unit="", off=off.per_unit, on=on.per_unit, ratio=ratio,
                             target=w.getfloat("target"), notes="; ".join(x for x in notes if x)))
            if "stock" in arms:
                st = arms["stock"]
                detail("COUNT %s/%s stock: N=%d count(N)=%d baseline=%.0f baseline spread=%s per-unit=%.1f"
                       % (w.name, q.name, n, st.count_n, st.base, st.base_spread, st.per_unit))
                unit = w.get("unit", "op")
                rows.append(dict(workload=w.name, metric="instructions/%s %s: no module vs on" % (unit, q.name),
                                 kind="instructions", unit="", off=st.per_unit, on=on.per_unit,
                                 ratio=st.per_unit / on.per_unit if on.per_unit > 0 else None, target=None,
                                 notes="'off' column: the server without btree_jit preloaded"))
                rows.append(dict(workload=w.name, metric="instructions/%s %s: no module vs module off" % (unit, q.name),
                                 kind="instructions", unit="", off=st.per_unit, on=off.per_unit,
                                 ratio=st.per_unit / off.per_unit if off.per_unit > 0 else None, target=None,
                                 notes="<1: what the loaded-but-disabled dispatcher costs (%+.0f/%s)"
                                       % (off.per_unit - st.per_unit, unit)))
            if off.cycles and on.cycles:
                rows.append(dict(workload=w.name, metric="cycles/%s %s" % (w.get("unit", "op"), q.name),
                                 kind="instructions", unit="", off=off.cycles, on=on.cycles,
                                 ratio=off.cycles / on.cycles, target=None, notes="perf cycles:u (noisy)"))
    return rows


JIT_PROBLEMS = []
BUILDS_SEEN = {}   # fingerprint -> first place it was seen


def note_fingerprint(fp, where):
    if fp not in BUILDS_SEEN:
        BUILDS_SEEN[fp] = "%s (%s)" % (where, time.strftime("%H:%M:%S"))


def jit_note_single_user(w, q, arms):
    """Did the 'on' run search the workload's indexes through JIT code, the
    'off' run not, and did no compile happen inside the measured parts?"""
    if not MOD.loaded:
        return ""
    on, off = arms["on"], arms["off"]
    label = "%s/%s" % (w.name, q.name)
    c_on = on.check
    if c_on is None:
        JIT_PROBLEMS.append("%s on: no BTJITCHECK line from the single-user run" % label)
        return "JIT use UNVERIFIED"
    detail("CHECK %s on: %s" % (label, c_on["raw"]))
    detail("CHECK %s off: %s" % (label, off.check and off.check["raw"]))
    bad = []
    for idx in w.indexes:
        st = c_on["indexes"].get(idx)
        if not st or st["state"] != "jit" or st["jit"] == 0:
            bad.append("%s: %s" % (idx, st or "no stats row"))
    if off.check:
        for idx, st in off.check["indexes"].items():
            if st["jit"] != 0:
                JIT_PROBLEMS.append("%s off: %s had %d JIT searches with btree_jit.enabled=off" % (label, idx, st["jit"]))
    # compile work inside the measured difference?
    other = on.other_check
    if other is not None and c_on.get("compiles") != other.get("compiles"):
        JIT_PROBLEMS.append("%s on: (compiled, loaded) shapes %s vs %s %s: the per-unit figure may include "
                            "compile work" % (label, c_on.get("compiles"), other.get("compiles"),
                                              "before the measured statements" if on.other_is_before else "in the baseline run"))
    if bad:
        JIT_PROBLEMS.append("%s on: the JIT was NOT used: %s" % (label, "; ".join(bad)))
        return "JIT NOT USED (%s)" % "; ".join(bad)
    return "JIT used: " + ", ".join("%s %s jit searches (code: %s)" % (i, "{:,}".format(c_on["indexes"][i]["jit"]),
                                                                     c_on["indexes"][i].get("src", "?").replace("_", " "))
                                    for i in w.indexes)


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


def time_sql_workload(w, rounds, n_override=None, n_cap=None):
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
        med, lo, hi = ratio_stats(list(zip(tps["on"], tps["off"])))
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
# instructions per connection (pgbench -C)

def wait_ready(server, logfile, timeout=300):
    """Until a server started by us (a Popen) accepts connections."""
    t = time.time()
    while time.time() - t < timeout:
        if server.poll() is not None:
            with open(logfile, errors="replace") as f:
                raise BenchError("the server exited (%d) before accepting connections:\n%s"
                                 % (server.returncode, f.read()[-3000:]))
        if run([os.path.join(BIN, "pg_isready"), "-q"], check=False).returncode == 0:
            return
        time.sleep(0.5)
    raise BenchError("the server did not accept connections within %ds" % timeout)


def count_connections(w, n):
    """Instructions a whole backend executes for one pgbench -C transaction:
    the postmaster runs under callgrind with --toggle-collect=PostgresMain,
    so each backend (a fork, followed by valgrind) writes one profile
    covering its life from PostgresMain on (initialisation, catalog
    lookups, the transaction, exit and its exit handlers).  Arms: the
    server without the module ("stock", no PGOPTIONS at all), and the
    module with enabled = off and on.  Per connection = the median over the
    N measured backends (the outlier is pgbench's own extra connection).
    Deterministic like the other counts; the cluster is down meanwhile."""
    args = w.get("pgbench", "").split()
    pgdata = os.environ["PGDATA"]
    sock = os.environ["PGHOST"]
    port = os.environ["PGPORT"]
    work = os.path.join(os.environ["BTJIT_CLUSTER_DIR"], "count-connect")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.chown(work, OS_USER)
    arms = ["stock", "off", "on"] if MOD.loaded else ["stock"]
    per = {}
    cluster_stop()
    try:
        for arm in arms:
            pre = "" if arm == "stock" else "btree_jit"
            out = os.path.join(work, arm)
            cmd = as_postgres(["valgrind", "--tool=callgrind", "--cache-sim=no", "--branch-sim=no",
                               "--smc-check=all", "--toggle-collect=PostgresMain",
                               "--callgrind-out-file=%s.%%p" % out, "--log-file=%s.valgrind.%%p" % out,
                               os.path.join(BIN, "postgres"), "-D", pgdata,
                               "-c", "shared_preload_libraries=%s" % pre, "-c", "jit=off",
                               "-c", "logging_collector=off"])
            detail("RUN connection count %s: %s" % (arm, " ".join(cmd)))
            with open(out + ".server.log", "w") as log:
                server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
            try:
                wait_ready(server, out + ".server.log")
                env = {} if arm == "stock" else {"PGOPTIONS": "-c btree_jit.enabled=%s" % arm}
                bench = [os.path.join(BIN, "pgbench"), "-n"] + args + [DB]
                # warm-up: the first backends rebuild the relcache init file
                run(bench[:2] + ["-t", "3"] + bench[2:], env=env)
                seen = set(os.listdir(work))
                run(bench[:2] + ["-t", str(n)] + bench[2:], env=env)
                want = set(f for f in os.listdir(work) if re.match(re.escape(arm) + r"\.\d+$", f)) - seen
            finally:
                if server.poll() is None:
                    if os.path.exists(os.path.join(pgdata, "postmaster.pid")):
                        pg_ctl("-D", pgdata, "-m", "fast", "-w", "-t", "300", "stop")
                    else:
                        server.terminate()
                    server.wait(timeout=300)
            counts = []
            for f in sorted(want):
                v = callgrind_ir(os.path.join(work, f))
                if v:
                    counts.append(v)
            if len(counts) < n:
                raise BenchError("connection count %s: %d backend profiles, expected %d" % (arm, len(counts), n))
            per[arm] = statistics.median(counts)
            detail("CONNECTIONS %s: %d backends, median %d, min %d, max %d"
                   % (arm, len(counts), per[arm], min(counts), max(counts)))
    finally:
        cluster_start()
    rows = []
    note = "callgrind on the postmaster, --toggle-collect=PostgresMain: whole backend per connection, median of %d" % n
    if MOD.loaded:
        rows.append(dict(workload=w.name, metric="instructions/connection", kind="instructions", unit="",
                         off=per["off"], on=per["on"], ratio=per["off"] / per["on"], rmin=None, rmax=None,
                         target=None, notes=note + "; no JIT expected (below compile_threshold)"))
        rows.append(dict(workload=w.name, metric="instructions/connection: no module vs on", kind="instructions",
                         unit="", off=per["stock"], on=per["on"], ratio=per["stock"] / per["on"],
                         rmin=None, rmax=None, target=None,
                         notes="'off' column: the server without btree_jit preloaded; <1: what the module costs a connection"))
    say("  %s: instructions per connection %s" % (w.name, ", ".join("%s %d" % (a, per[a]) for a in arms)))
    return rows


# --------------------------------------------------------------------------
# compile latency

def timed_queries(sql_lines, options):
    """Run statements in ONE fresh backend with \\timing; list of ms."""
    script = "\\o /dev/null\n\\timing on\n" + "\n".join(sql_lines) + "\n"
    out = psql(script, options=options, tuples=False)
    return [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", out, re.M)]


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
            out = psql("\\o /dev/null\n\\timing on\n" + "\n".join(lines) + "\n", options=on0, tuples=True)
            ts = [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", out, re.M)]
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
    mn = module_note()

    def lat_row(metric, offk, onk, note):
        rs = [a / b for a, b in zip(res[offk], res[onk]) if b > 0]
        rows.append(dict(workload=w.name, metric=metric, kind="latency", unit="ms",
                         off=statistics.median(res[offk]), on=statistics.median(res[onk]),
                         ratio=statistics.median(rs) if rs else None,
                         rmin=min(rs) if rs else None, rmax=max(rs) if rs else None, target=None,
                         notes="; ".join(x for x in (note, mn) if x)))

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
            rows.append(dict(workload=w.name, metric=metric, kind="info", unit="ms", off=None,
                             on=statistics.median(res[k]), ratio=None, target=None,
                             notes="%s; min-max %.2f-%.2f ms" % (note, min(res[k]), max(res[k]))))
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
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    if "--check-args" in argv and any(x in ("-h", "--help", "--list") for x in argv):
        # bench/run's early call: answer, and tell it to stop there
        try:
            parse_args([x for x in argv if x != "--check-args"])
        except SystemExit as e:
            sys.exit(100 if not e.code else e.code)
    a = ap.parse_args(argv)
    a.rounds_given = any(x.startswith("--rounds") for x in argv) or "BENCH_ROUNDS" in os.environ
    a.seconds_given = any(x.startswith("--pgbench-seconds") for x in argv) or "BENCH_PGBENCH_SECONDS" in os.environ
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
    global LOG, BIN, KEEP_PROFILES, SIMULATE
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
    SIMULATE = a.simulate
    if a.keep_profiles:
        KEEP_PROFILES = os.path.join(OUT_DIR, "profiles-%s" % stamp)
        os.makedirs(KEEP_PROFILES, exist_ok=True)
    say("mode %s: %s; load average %s; detail log %s" % (a.mode, " ".join(a.selected), loadavg(), base + ".log"))
    work = [wl.load(n) for n in a.selected]

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

    rows = []
    t = time.time()
    counted = [w for w in work if w.queries and w.kind in ("sql", "pgbench")]
    if counter != "none" and counted:
        plan_checks(counted, n_of)
        stock_names = [w.name for w in counted] if a.stock_arm else [n for n in wl.HEADLINE]
        jobs = run_counts(counted, counter, n_of, a.jobs, stock_names)
        rows += count_rows(counted, jobs, counter, n_of)
        if KEEP_PROFILES:
            write_profile_manifest(jobs, n_of)
    if counter != "none":
        for w in work:
            if w.kind == "pgbench" and w.getint("count_connections"):
                rows += count_connections(w, w.getint("count_connections"))
    t_counts = time.time() - t

    t = time.time()
    if not a.no_timing:
        for w in work:
            if w.kind == "sql":
                # --all: at most 200,000 per round (15 minutes on 2 cores)
                rows += time_sql_workload(w, a.rounds, a.n_timing, 200000 if a.mode == "all" else None)
            elif w.kind == "pgbench":
                rows += time_pgbench_workload(w, a.rounds, a.pgbench_seconds,
                                              defaults=not (a.rounds_given or a.seconds_given))
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
                   "callgrind-runs": "valgrind callgrind Ir, one process per statement/arm/N",
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
    note_fingerprint(module_fingerprint(), "at the end")
    if len(BUILDS_SEEN) > 1:
        legend.insert(0, "!!! THE INSTALLED MODULE CHANGED DURING THIS RUN (make install by someone else?): the "
                         "figures may come from different builds.  Builds seen:\n!!!   "
                         + "\n!!!   ".join("%s: %s" % (w, fp) for fp, w in BUILDS_SEEN.items()))
    if JIT_PROBLEMS:
        legend.insert(0, "!!! JIT VERIFICATION FAILED:\n!!!   " + "\n!!!   ".join(JIT_PROBLEMS))
    elif MOD.loaded and MOD.active:
        legend.insert(0, "JIT verified: every 'on' measurement above (except where it says no JIT is expected) searched its indexes through JIT code "
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
