"""bench/lib/connections.py - instructions per connection (pgbench -C).

The pgbench workloads with @count_connections N: the cluster is stopped
and its postmaster started under callgrind (--toggle-collect=PostgresMain),
once per arm (the server without the module, the module off, on); pgbench
-C then runs N transactions, each in a new backend whose whole life from
PostgresMain on is one profile.  Per connection = the median over the
backends.  Deterministic, like the single-user counts.  The postmaster
under callgrind (postmaster_under_callgrind) serves parallel.py too.
"""

import contextlib
import os
import re
import shutil
import statistics
import subprocess
import time

import report
from cluster import MOD, cluster_start, cluster_stop
from harness import DB, OS_USER, BenchError, as_postgres, detail, pg_ctl, pgbin, run, say
from singleuser import callgrind_ir

def wait_ready(server, logfile, timeout=300):
    """Until a server started by us (a Popen) accepts connections."""
    t = time.time()
    while time.time() - t < timeout:
        if server.poll() is not None:
            with open(logfile, errors="replace") as f:
                raise BenchError("the server exited (%d) before accepting connections:\n%s"
                                 % (server.returncode, f.read()[-3000:]))
        if run([pgbin("pg_isready"), "-q"], check=False).returncode == 0:
            return
        time.sleep(0.5)
    raise BenchError("the server did not accept connections within %ds" % timeout)


@contextlib.contextmanager
def postmaster_under_callgrind(out, preload, valgrind_options, server_options=()):
    """The cluster's postmaster (the cluster is down) started under callgrind
    with valgrind_options, each process writing out.PID (and out.PID.N
    parts); ready for connections inside the block, stopped after it."""
    pgdata = os.environ["PGDATA"]
    cmd = as_postgres(["valgrind", "--tool=callgrind", "--cache-sim=no", "--branch-sim=no",
                       "--smc-check=all"] + list(valgrind_options) +
                      ["--callgrind-out-file=%s.%%p" % out, "--log-file=%s.valgrind.%%p" % out,
                       pgbin("postgres"), "-D", pgdata,
                       "-c", "shared_preload_libraries=%s" % preload, "-c", "jit=off",
                       "-c", "logging_collector=off"] + list(server_options))
    detail("RUN postmaster under callgrind: %s" % " ".join(cmd))
    with open(out + ".server.log", "w") as log:
        server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(server, out + ".server.log")
        yield server
    finally:
        if server.poll() is None:
            if os.path.exists(os.path.join(pgdata, "postmaster.pid")):
                pg_ctl("-D", pgdata, "-m", "fast", "-w", "-t", "300", "stop")
            else:
                server.terminate()
            server.wait(timeout=300)


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
            detail("connection count %s" % arm)
            with postmaster_under_callgrind(out, pre, ["--toggle-collect=PostgresMain"]):
                env = {} if arm == "stock" else {"PGOPTIONS": "-c btree_jit.enabled=%s" % arm}
                bench = [pgbin("pgbench"), "-n"] + args + [DB]
                # warm-up: the first backends rebuild the relcache init file
                run(bench[:2] + ["-t", "3"] + bench[2:], env=env)
                seen = set(os.listdir(work))
                run(bench[:2] + ["-t", str(n)] + bench[2:], env=env)
                want = set(f for f in os.listdir(work) if re.match(re.escape(arm) + r"\.\d+$", f)) - seen
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
        rows.append(report.row(w.name, "instructions/connection", "instructions",
                               per["off"], per["on"], per["off"] / per["on"],
                               notes=note + "; no JIT expected (below compile_threshold)"))
        rows.append(report.row(w.name, "instructions/connection: no module vs on", "instructions",
                               per["stock"], per["on"], per["stock"] / per["on"],
                               notes="'off' column: the server without btree_jit preloaded; <1: what the module costs a connection"))
    say("  %s: instructions per connection %s" % (w.name, ", ".join("%s %d" % (a, per[a]) for a in arms)))
    return rows

