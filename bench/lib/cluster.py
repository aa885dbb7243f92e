"""bench/lib/cluster.py - the cluster, the module's state and the data.

The cluster bench/run started (stopped for the single-user counting runs
and started again), the module as this run finds it (preloaded? active?
which build: other people may `make install` while a benchmark runs), the
database "bench" and the data files every workload names (@uses), built
once per cluster.
"""

import hashlib
import os
import time

import workloads as wl
from harness import DB, loud, pg_config, pg_ctl, pgbin, psql, run, say

def cluster_stop():
    """Stop the cluster (fast)."""
    say("stopping the cluster (single-user runs need it down)")
    pg_ctl("-D", os.environ["PGDATA"], "-m", "fast", "-w", "-t", "120", "stop")


def cluster_start():
    """Start the cluster again, noting the build it loads."""
    say("starting the cluster again")
    note_fingerprint(module_fingerprint(), "cluster restart")
    pg_ctl("-D", os.environ["PGDATA"], "-l", os.environ["BTJIT_CLUSTER_LOG"], "-w", "-t", "120", "start")
    run([pgbin("pg_isready"), "-q", "-t", "60"])


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
    lib = pg_config("--pkglibdir")
    fp = []
    for f in ("btree_jit.so", "btree_jit/search_template.bc"):
        try:
            with open(os.path.join(lib, f), "rb") as fh:
                fp.append("%s:sha256:%s" % (f, hashlib.sha256(fh.read()).hexdigest()[:16]))
        except OSError:
            fp.append("%s:missing" % f)
    return " ".join(fp)


def setup_database():
    """The database, pg_prewarm, and the module's state (MOD); loud if the
    module is not loaded or not active."""
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
    """The note every row carries when 'on' is not the module's code."""
    if not MOD.loaded:
        return "MODULE NOT LOADED: on=stock"
    if not MOD.active:
        return "MODULE INACTIVE: on=stock"
    return ""


def with_module_note(notes):
    """A row's notes: the non-empty ones, and module_note() if any, joined."""
    return "; ".join(x for x in list(notes) + [module_note()] if x)


BUILDS_SEEN = {}   # fingerprint -> first place it was seen


def note_fingerprint(fp, where):
    """Remember where a build was first seen (more than one: the report
    says so)."""
    if fp not in BUILDS_SEEN:
        BUILDS_SEEN[fp] = "%s (%s)" % (where, time.strftime("%H:%M:%S"))


# --------------------------------------------------------------------------
# data

def build_data(names):
    """Build the data files not built yet in this cluster."""
    for name in names:
        d = wl.DataFile(name)
        have = psql("SELECT 1 FROM pg_tables WHERE tablename = 'bench_data_%s'" % name).strip()
        if have:
            continue
        t = time.time()
        say("building %s" % name)
        if d.pgbench_init:
            run([pgbin("pgbench"), "-i"] + d.pgbench_init + [DB])
        # One psql session, so setseed() governs the random() calls after it.
        # The server's JIT and the module are off while loading: loading is
        # not what is measured.
        # d.text: the file with its @param placeholders filled in
        psql(d.text, options="-c jit=off -c btree_jit.enabled=off", tuples=False)
        psql("CREATE TABLE bench_data_%s ()" % name)
        say("built %s in %.1fs" % (name, time.time() - t))

