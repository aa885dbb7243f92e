"""bench/lib/harness.py - the benchmark driver's plumbing.

What every other part of the driver uses: where things are (the bench
directory, bench/out, the database, the OS user the server runs as), the
settings main() fills in from the command line (the server's bin directory,
--keep-profiles, --simulate, the detail log), progress lines on stderr and
in the detail log, running programs (psql, pg_ctl, anything) and the arms
every measurement compares.
"""

import os
import subprocess
import sys
import threading
import time

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(BENCH_DIR, "out")
DB = "bench"
OS_USER = os.environ.get("BTJIT_OS_USER", "postgres")

# The arms of every measurement: the module's switch, btree_jit.enabled.
ARMS = ("off", "on")

LOG = None          # detail log file (main() opens it)
_log_lock = threading.Lock()
T0 = time.time()


def say(msg):
    """A progress line: stderr and the detail log."""
    line = "[bench %s +%4.0fs] %s" % (time.strftime("%H:%M:%S"), time.time() - T0, msg)
    with _log_lock:
        print(line, file=sys.stderr, flush=True)
        if LOG:
            LOG.write(line + "\n")
            LOG.flush()


def detail(msg):
    """A line for the detail log only."""
    with _log_lock:
        if LOG:
            LOG.write(msg.rstrip("\n") + "\n")
            LOG.flush()


def loud(msg):
    """A warning nobody can miss."""
    bar = "!" * 78
    say("\n%s\n!! %s\n%s" % (bar, msg.replace("\n", "\n!! "), bar))


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------
# processes

def pg_config(option):
    """One pg_config answer ($PG_CONFIG, as cluster_start exports it)."""
    pgc = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
    return subprocess.check_output([pgc, option], text=True).strip()


def bindir():
    """The server's bin directory."""
    return pg_config("--bindir")


BIN = None              # the server's bin directory (main(): bindir())
KEEP_PROFILES = None    # --keep-profiles: where callgrind parts go
SIMULATE = False        # --simulate: callgrind also simulates caches and branches
SETTINGS = []           # --set: NAME=VALUE for every backend, both arms


def pgbin(program):
    """The path of one of the server's programs."""
    return os.path.join(BIN, program)


def as_postgres(cmd):
    """cmd run as the server's OS user when we are root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", OS_USER, "--"] + cmd
    return cmd


def run(cmd, input=None, env=None, check=True, timeout=None):
    """Run a program (env added to ours); BenchError on failure if check."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(cmd, input=input, env=e, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise BenchError("command failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout[-3000:], p.stderr[-3000:]))
    return p


def psql(sql=None, file=None, db=DB, options=None, tuples=True, check=True, extra=None):
    """Run psql (as root over the private socket, as database user postgres)."""
    cmd = [pgbin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db]
    if tuples:
        cmd += ["-A", "-t", "-F", "|"]
    if extra:
        cmd += extra
    if file:
        cmd += ["-f", file]
    opts = [o for o in [options] + ["-c " + x for x in SETTINGS] if o]
    env = {"PGOPTIONS": " ".join(opts)} if opts else None
    return run(cmd, input=sql, env=env, check=check).stdout


def pg_ctl(*args):
    """pg_ctl as the server's OS user."""
    run(as_postgres([pgbin("pg_ctl")] + list(args)))


def du(path):
    """Size of a directory, as du -sh says it."""
    try:
        out = subprocess.check_output(["du", "-sh", path], text=True, stderr=subprocess.DEVNULL)
        return out.split()[0]
    except (subprocess.CalledProcessError, OSError):
        return "?"


def loadavg():
    """The load averages, for the progress lines."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def last_level_cache():
    """The largest CPU cache of cpu0 (sysfs) as (bytes, ways, line bytes),
    or None.  callgrind's own choice for the last level is what cpuid
    reports, which on this project's EPYC VM is the whole socket's L3
    (256 MiB, direct-mapped), not the 32 MiB 16-way slice a core shares."""
    best = None
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        names = os.listdir(base)
    except OSError:
        return None
    for d in names:
        vals = {}
        try:
            for k in ("size", "ways_of_associativity", "coherency_line_size", "type"):
                with open(os.path.join(base, d, k)) as f:
                    vals[k] = f.read().strip()
            if vals["type"] == "Instruction":
                continue
            v = vals["size"]
            size = int(v.rstrip("KMG")) * {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}.get(v[-1:], 1)
            geo = (size, int(vals["ways_of_associativity"]), int(vals["coherency_line_size"]))
        except (OSError, ValueError, KeyError):
            continue
        if best is None or geo[0] > best[0]:
            best = geo
    return best


def callgrind_ll_option():
    """--LL=size,ways,line for callgrind's cache model from sysfs, or [] when
    sysfs does not say or callgrind could not model it (its sets must be a
    power of two)."""
    llc = last_level_cache()
    if not llc:
        return []
    size, ways, line = llc
    if ways <= 0 or line <= 0 or size % (ways * line):
        return []
    sets = size // (ways * line)
    if sets & (sets - 1):
        return []
    return ["--LL=%d,%d,%d" % (size, ways, line)]
