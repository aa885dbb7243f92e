"""bench/lib/counts.py - instructions per unit, off vs on, in single-user mode.

For every counted statement (the @query of the sql and pgbench workloads)
and every arm: the statement at N and at 0 after the same session setup
and warm-up, in `postgres --single` (singleuser.py) with the cluster
stopped; per unit = (count(N) - count(0)) / N, ratio = off / on.

  callgrind   ONE process per arm runs every statement between pg_sleep
              markers (marked_statements); each arm on its own copy of the
              data directory
  perf, callgrind-runs
              one process per (statement, arm, N|0), a few at a time, each
              on a data directory of its own; the module's object cache is
              primed first so that no run compiles

The plans are checked first (the same plan at N and at 0, or the
subtraction compares different plans); the stock arm (the server without
the module) is counted for the headline, or every workload with
--stock-arm.  Rows for the report, plus --keep-profiles's manifest for
breakdown.py.
"""

import concurrent.futures
import json
import os
import queue
import re
import shutil
import threading
import time

import breakdown
import harness as h
import report
from cluster import MOD, cluster_start, cluster_stop, module_fingerprint, note_fingerprint, with_module_note
from harness import ARMS, OS_USER, BenchError, detail, du, psql, run, say
from jitcheck import JIT_PROBLEMS, check_sql, jit_work, off_used_jit, parse_check, used_jit
from singleuser import single_user_run, single_user_text

# --------------------------------------------------------------------------
# the statements of one run

def aid_sequence(scale):
    """The keys of an @repeat query: count -> that many pseudo-random
    pgbench_accounts ids (1..scale * 100,000), the same every run."""
    total = scale * 100000

    def gen(n):
        # a fixed LCG walk over 1..total (deterministic, pseudo-random)
        x, out = 12345, []
        for _ in range(n):
            x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            out.append(1 + (x >> 33) % total)
        return out
    return gen


def query_aids(w, q):
    """The key generator for query q's {AID}, or None if it does not repeat."""
    return aid_sequence(w.getint("scale", 20)) if q.repeat else None


def n_warm(w):
    """Warm-up count: enough page searches to pass btree_jit.compile_threshold
    (64 per index per backend by default) in every run, N or 0, off or on."""
    return w.getint("n_warm", 1000)


def warmup_statements(w, q):
    """The warm-up section, then query q n_warm times."""
    aids = query_aids(w, q)
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
    """Whether the workload writes (it has a count_setup section)."""
    return "count_setup" in w.sections


def count_statements(w, q, n, with_check):
    """perf: one process per (statement, arm, N|0); the baseline (n = 0)
    is another process with the same script otherwise."""
    aids = query_aids(w, q)
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
        aids = query_aids(w, q)
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


class CountJob:
    """One single-user process.  callgrind: one per arm, all statements
    (items) with markers.  perf: one per (statement, arm, N|0)."""

    def __init__(self, items, arm, marked, which=None, n=None):
        self.items, self.arm, self.marked, self.which, self.n = items, arm, marked, which, n
        self.parts = None          # marked: per-part counts
        self.events = None         # marked, --simulate: per-part event totals
        self.search = {}           # marked: part -> (page search, FunctionCall2Coll) Ir
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


def run_count_job(job, datadir, workdir, counter, n_of):
    """Run one CountJob on data directory datadir; its counts, its checks
    (module loaded, not the stock arm) or its error land in the job."""
    checks = MOD.loaded and job.arm != "stock"
    if job.marked:
        stmts = marked_statements(job.items, n_of, checks)
    else:
        w, q = job.items[0]
        stmts = count_statements(w, q, job.n if job.which == "N" else 0, checks)
    fp = module_fingerprint()
    hook = None
    if job.marked and counter == "callgrind" and MOD.loaded and job.arm in ("off", "on"):
        # the ceiling: what the page search costs in the measured parts
        # (4k+1..4k+3) of the off arm, and FunctionCall2Coll in both
        def hook(i, path):
            if i % 4 != 0 and i < 4 * len(job.items):
                job.search[i] = breakdown.part_search_costs(path, BINSRCH_RANGE[0],
                                                            inclusive=job.arm == "off")
    res = single_user_run(single_user_text(stmts), job.tag(), datadir, workdir, counter, job.arm,
                          marked=job.marked, part_hook=hook)
    job.seconds, job.error, job.cycles = res["seconds"], res["error"], res["cycles"]
    if job.error:
        return job
    note_fingerprint(fp, "single-user run " + job.label())
    note_fingerprint(module_fingerprint(), "after " + job.label())
    if job.marked:
        job.parts = res["parts"]
        job.events = res["events"]
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


# Statements EXPLAIN does not take (the build_* workloads' CREATE INDEX)
UTILITY = re.compile(r"^\s*(CREATE|DROP|ALTER|REINDEX|CLUSTER|VACUUM|DO)\b", re.I)


def plan_checks(work, n_of):
    """The counted statement must have the same plan at N, at 0 and at
    n_full (else the baseline subtraction would compare different plans)."""
    for w in work:
        if w.kind != "sql":
            continue
        for q in w.queries:
            if UTILITY.match(q.sql):
                # CREATE INDEX: no plan; query(0) is no statement at all
                say("plan %s/%s: a utility statement, no plan to check" % (w.name, q.name))
                continue
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


def make_jobs(items, stock_items, marked, n_of):
    """The single-user processes: callgrind (marked) one per arm for all
    statements; otherwise one per (statement, arm, N|0)."""
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
    return jobs


class CountRun:
    """The jobs of one run_counts, with the cluster down: the data
    directory copies they run on, and their progress lines."""

    def __init__(self, jobs, workdir, counter, n_of, marked):
        self.jobs, self.workdir, self.counter, self.n_of, self.marked = jobs, workdir, counter, n_of, marked
        self.pgdata = os.environ["PGDATA"]
        self.copies = []
        self.done = 0
        self.lock = threading.Lock()

    def copy_datadir(self, name):
        """A copy of the data directory (removed by cleanup())."""
        d = "%s.%s" % (self.pgdata, name)
        t = time.time()
        run(["cp", "-a", self.pgdata, d])
        self.copies.append(d)
        say("copied the data directory (%s) to %s in %.0fs" % (du(self.pgdata), d, time.time() - t))
        return d

    def cleanup(self):
        for d in self.copies:
            shutil.rmtree(d, ignore_errors=True)

    def work_one(self, job, d):
        """Run one job on data directory d; a progress line."""
        run_count_job(job, d, self.workdir, self.counter, self.n_of)
        with self.lock:
            self.done += 1
            k = self.done
        jobs = self.jobs
        if job.error:
            say("  [%d/%d] %s FAILED: %s" % (k, len(jobs), job.label(), job.error))
        elif self.marked:
            say("  [%d/%d] %s: %s instructions in %.0fs" % (k, len(jobs), job.label(),
                                                            "{:,}".format(sum(job.parts)), job.seconds))
        else:
            say("  [%d/%d] %s: %s instructions, %.0fs" % (k, len(jobs), job.label(),
                                                          "{:,}".format(job.count), job.seconds))

    def run_marked(self, jobs_n, n_items):
        """callgrind: the 'on' process and the 'off' (then 'stock') process,
        side by side when jobs_n allows.  Each arm must start from the same
        data (insert_random writes): 'on' gets a copy, 'off' the directory
        itself, 'stock' runs there after 'off' unless it writes too.  No
        object cache priming: the compile happens in the warm-up, outside
        the measured parts (priming under valgrind would cost as much)."""
        jobs = self.jobs
        on_job = [j for j in jobs if j.arm == "on"][0]
        off_job = [j for j in jobs if j.arm == "off"][0]
        stock_job = [j for j in jobs if j.arm == "stock"]
        on_dir = self.copy_datadir("on")
        stock_dir = self.pgdata
        if stock_job and any(writes(w) for w, _ in stock_job[0].items):
            stock_dir = self.copy_datadir("stock")
        say("instruction counts: %d single-user processes under callgrind (one per arm, %d at a time), "
            "%d statements: query(0), query(N), query(0) between pg_sleep markers"
            % (len(jobs), min(jobs_n, 2), n_items))

        def lane_b():
            self.work_one(off_job, self.pgdata)
            for j in stock_job:
                self.work_one(j, stock_dir)
        if jobs_n >= 2:
            with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
                fa = ex.submit(self.work_one, on_job, on_dir)
                fb = ex.submit(lane_b)
                fa.result()
                fb.result()
        else:
            self.work_one(on_job, on_dir)
            lane_b()

    def run_pooled(self, work, jobs_n):
        """perf, callgrind-runs: the object cache primed, then every job on
        one of jobs_n data directories (the original and copies)."""
        jobs = self.jobs
        prime_object_cache(work, self.workdir, self.counter)
        par = max(1, min(jobs_n, len(jobs)))
        pool = queue.Queue()
        pool.put(self.pgdata)
        for i in range(1, par):
            pool.put(self.copy_datadir("slot%d" % i))
        say("instruction counts: %d single-user runs under %s, %d at a time" % (len(jobs), self.counter, par))

        def pooled(job):
            d = pool.get()
            try:
                self.work_one(job, d)
            finally:
                pool.put(d)
        with concurrent.futures.ThreadPoolExecutor(max_workers=par) as ex:
            list(ex.map(pooled, jobs))


def run_counts(work, counter, n_of, jobs_n, stock_names):
    """Count every statement of work in every arm, the cluster stopped
    meanwhile; the finished jobs.  stock_names: workloads also counted on
    the server WITHOUT the module (arm 'stock'): 'off' runs the module's
    dispatcher, which costs something; 'stock' is the server as shipped."""
    marked = counter == "callgrind"
    items = [(w, q) for w in work if w.kind in ("sql", "pgbench") for q in w.queries]
    if not items:
        return []
    stock_items = [(w, q) for w, q in items if w.name in stock_names] if MOD.loaded else []
    jobs = make_jobs(items, stock_items, marked, n_of)
    workdir = os.path.join(os.environ["BTJIT_CLUSTER_DIR"], "counts")
    os.makedirs(workdir, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(workdir, OS_USER, OS_USER)
    BINSRCH_RANGE[0] = find_binsrch_range()
    psql("CHECKPOINT")
    cluster_stop()
    cr = CountRun(jobs, workdir, counter, n_of, marked)
    try:
        if marked:
            cr.run_marked(jobs_n, len(items))
        else:
            cr.run_pooled(work, jobs_n)
    finally:
        cr.cleanup()
        cluster_start()
    failed = [j for j in jobs if j.error]
    if failed:
        raise BenchError("%d single-user runs failed; first: %s: %s" % (len(failed), failed[0].label(), failed[0].error))
    return jobs


# _bt_binsrch's address range in the server (from btree_jit_status()'s
# evidence), for the ceiling's breakdown of callgrind parts
BINSRCH_RANGE = [None]


def find_binsrch_range():
    """Read _bt_binsrch's extent while the cluster runs (None if unknown)."""
    ev = psql("SELECT evidence FROM btree_jit_status()", check=False) if MOD.loaded else ""
    m = re.search(r"_bt_binsrch=postgres\+0x([0-9a-f]+) size 0x([0-9a-f]+)", ev or "")
    if not m:
        return None
    lo = int(m.group(1), 16)
    return (lo, lo + int(m.group(2), 16))


class ArmCount:
    """Per (workload, query, arm): the per-unit figure and what backs it."""

    def __init__(self, jobs, w, q, arm, n):
        self.n = n
        self.search = self.fc2c = None
        self.check = self.other_check = None
        self.other_is_before = False
        self.cycles = None
        self.sim = {}              # --simulate: event -> per unit (a model)
        mj = [j for j in jobs if j.marked and j.arm == arm]
        if mj:
            job = mj[0]
            k = [i for i, (ww, qq) in enumerate(job.items) if ww is w and qq is q][0]
            p = job.parts
            base_a, self.count_n, base_b = p[4 * k + 1], p[4 * k + 2], p[4 * k + 3]
            sp = [job.search.get(4 * k + i) for i in (1, 2, 3)]
            if None not in sp:
                # per unit, the same subtraction as the count's
                self.search = (sp[1][0] - (sp[0][0] + sp[2][0]) / 2.0) / float(n)
                self.fc2c = (sp[1][1] - (sp[0][1] + sp[2][1]) / 2.0) / float(n)
            self.base = (base_a + base_b) / 2.0
            ev = job.events and [job.events[4 * k + i] for i in (1, 2, 3)]
            if ev and None not in ev:
                for e in ev[1]:
                    self.sim[e] = (ev[1][e] - (ev[0].get(e, 0) + ev[2].get(e, 0)) / 2.0) / float(n)
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
    with open(os.path.join(h.KEEP_PROFILES, "manifest.json"), "w") as f:
        json.dump(man, f, indent=1)
    say("profiles kept in %s; where the instructions go: python3 bench/lib/breakdown.py %s"
        % (h.KEEP_PROFILES, h.KEEP_PROFILES))


def counted_in(jobs, w, q, arm=None):
    """Whether a job (of arm, if given) counted statement (w, q)."""
    return any((arm is None or j.arm == arm) and any(ww is w and qq is q for ww, qq in j.items)
               for j in jobs)


def count_rows(work, jobs, counter, n_of):
    """The report's rows: instructions per unit off vs on, the stock arm's
    comparisons where it ran, cycles where perf had them."""
    rows = []
    for w in work:
        unit = w.get("unit", "op")
        for q in w.queries:
            n = n_of(w)
            if not counted_in(jobs, w, q):
                continue
            arms = {arm: ArmCount(jobs, w, q, arm, n) for arm in ARMS}
            if counted_in(jobs, w, q, "stock"):
                arms["stock"] = ArmCount(jobs, w, q, "stock", n)
            off, on = arms["off"], arms["on"]
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
            ceil = None
            if off.search is not None and on.fc2c is not None and w.get("ceiling") != "none":
                ceil = breakdown.ceiling(off.per_unit, off.search, off.fc2c, on.fc2c)
                detail("CEILING %s/%s: off %.1f/unit, page search %.1f, FunctionCall2Coll off %.1f on %.1f -> %s"
                       % (w.name, q.name, off.per_unit, off.search, off.fc2c, on.fc2c, ceil))
            rows.append(report.row(w.name, "instructions/%s %s" % (unit, q.name), "instructions",
                                   off.per_unit, on.per_unit, report.ratio(off.per_unit, on.per_unit),
                                   target=w.getfloat("target"), notes=with_module_note(notes),
                                   ceiling=ceil))
            if "stock" in arms:
                st = arms["stock"]
                rows.append(report.row(w.name, "instructions/%s %s: no module vs on" % (unit, q.name), "instructions",
                                       st.per_unit, on.per_unit, report.ratio(st.per_unit, on.per_unit),
                                       notes="'off' column: the server without btree_jit preloaded"))
                rows.append(report.row(w.name, "instructions/%s %s: no module vs module off" % (unit, q.name),
                                       "instructions", st.per_unit, off.per_unit, report.ratio(st.per_unit, off.per_unit),
                                       notes="<1: what the loaded-but-disabled dispatcher costs (%+.0f/%s)"
                                             % (off.per_unit - st.per_unit, unit)))
            rows += sim_rows(w, q, unit, off, on)
            if off.cycles and on.cycles:
                rows.append(report.row(w.name, "cycles/%s %s" % (unit, q.name), "instructions",
                                       off.cycles, on.cycles, off.cycles / on.cycles, notes="perf cycles:u (noisy)"))
    return rows


# --simulate: callgrind's cache and branch models per unit, (label, events)
SIM_ROWS = [("LL misses", ("ILmr", "DLmr", "DLmw")),
            ("D1 misses", ("D1mr", "D1mw")),
            ("mispredicts", ("Bcm", "Bim"))]


def sim_rows(w, q, unit, off, on):
    """Rows of simulated last-level and L1 data misses and branch
    mispredictions per unit, off vs on (callgrind --cache-sim/--branch-sim:
    a model of a CPU with this machine's cache sizes, not a measurement;
    the model's caches start cold in each single-user run)."""
    rows = []
    if not off.sim or not on.sim:
        return rows
    for label, evs in SIM_ROWS:
        if not all(e in off.sim and e in on.sim for e in evs):
            continue
        a = sum(off.sim[e] for e in evs)
        b = sum(on.sim[e] for e in evs)
        detail("SIM %s/%s %s: off %.3f on %.3f per %s" % (w.name, q.name, label, a, b, unit))
        rows.append(report.row(w.name, "%s/%s %s (model)" % (label, unit, q.name), "instructions", a, b,
                               report.ratio(a, b) if b > 0 else None,
                               notes="callgrind --cache-sim/--branch-sim: simulated, %s" % "+".join(evs)))
    return rows


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
        if not used_jit(st):
            bad.append("%s: %s" % (idx, st or "no stats row"))
    if off.check:
        for idx, st in off.check["indexes"].items():
            if off_used_jit(st):
                JIT_PROBLEMS.append("%s off: %s had %s with btree_jit.enabled=off" % (label, idx, jit_work(st)))
    # compile work inside the measured difference?
    other = on.other_check
    if other is not None and c_on.get("compiles") != other.get("compiles"):
        JIT_PROBLEMS.append("%s on: (compiled, loaded) shapes %s vs %s %s: the per-unit figure may include "
                            "compile work" % (label, c_on.get("compiles"), other.get("compiles"),
                                              "before the measured statements" if on.other_is_before else "in the baseline run"))
    if bad:
        JIT_PROBLEMS.append("%s on: the JIT was NOT used: %s" % (label, "; ".join(bad)))
        return "JIT NOT USED (%s)" % "; ".join(bad)
    def used(i):
        st = c_on["indexes"][i]
        if st["builds"]:
            return "%s %s" % (i, jit_work(st))
        return "%s %s (code: %s)" % (i, jit_work(st), st.get("src", "?").replace("_", " "))
    return "JIT used: " + ", ".join(used(i) for i in w.indexes)

