"""bench/lib/singleuser.py - one counted `postgres --single` run.

The instruction counter is chosen once (perf stat where the machine has
hardware counters, else valgrind's callgrind: deterministic Ir); a script
of statements then runs in a single-user backend on a given data
directory, with the module off, on, or not preloaded at all ('stock'),
under that counter.  With callgrind and markers (--dump-before=pg_sleep)
one process yields one count per part of the script.  What the statements
are, and what the counts mean, is counts.py's business.
"""

import os
import re
import shutil
import subprocess
import time

import harness as h
from cluster import MOD
from harness import DB, BenchError, as_postgres, detail, loud, say

def single_user_text(stmts):
    """The script for postgres --single -j: a statement ends at ';'
    followed by an empty line."""
    out = []
    for s in stmts:
        s = "\n".join(l for l in s.splitlines() if l.strip())
        out.append(s + "\n\n")
    return "".join(out)


def perf_supported():
    """(whether perf stat counts instructions:u here, why)."""
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
    """The counter for --counter (auto: perf, else callgrind, else none)."""
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


def callgrind_ir(path, lines=("summary:", "totals:")):
    """Instructions (Ir, the first event) of a callgrind profile, or None:
    from the first of its lines that start with one of lines.  A process
    forked under --toggle-collect says "summary: 0" whatever it collected
    (the collection state it inherits); its "totals:", the sum of its cost
    lines, is what it collected."""
    with open(path) as f:
        for line in f:
            if line.startswith(lines):
                return int(line.split()[1])
    return None


def callgrind_events(path):
    """Every event total of a callgrind profile ({name: count}; with
    --cache-sim/--branch-sim also I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc,
    Bcm, Bi, Bim), or None."""
    names = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith(("summary:", "totals:")) and names:
                return dict(zip(names, (int(x) for x in line.split()[1:])))
    return None


def single_user_run(text, tag, datadir, workdir, counter, arm, marked=False, part_hook=None):
    """One `postgres --single` run of script text, counted with counter
    ('callgrind', 'perf', 'valgrind-none' or 'native').  Returns a dict:
    count (whole run), parts (callgrind with markers: count per part, in
    order), cycles, seconds, output, error.  part_hook(i, path), if given,
    sees each callgrind part (0-based i) before it is moved or removed."""
    script = os.path.join(workdir, tag + ".sql")
    with open(script, "w") as f:
        f.write(text)
    stock = arm == "stock" or not MOD.loaded   # stock: the server without the module
    pg = [h.pgbin("postgres"), "--single", "-j", "-D", datadir,
          "-c", "shared_preload_libraries=%s" % ("" if stock else "btree_jit"), "-c", "jit=off"]
    if not stock:
        pg += ["-c", "btree_jit.enabled=%s" % arm, "-c", "btree_jit.verify=off"]
        for x in h.SETTINGS:
            pg += ["-c", x]
    pg += [DB]
    outfile = os.path.join(workdir, tag + ".out")
    cg = os.path.join(workdir, tag + ".callgrind")
    pf = os.path.join(workdir, tag + ".perf")
    if counter in ("callgrind", "callgrind-runs", "valgrind-none"):
        # --smc-check=all: the module patches the server's text at start and
        # JIT-compiles code into anonymous memory.  No --trace-children:
        # a single-user backend runs no other program.
        sim = "yes" if h.SIMULATE else "no"
        tool = ["--tool=callgrind", "--cache-sim=" + sim, "--branch-sim=" + sim, "--callgrind-out-file=" + cg]
        if sim == "yes":
            # the last level this CPU's cores share, not callgrind's cpuid guess
            tool += h.callgrind_ll_option()
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
    res = dict(count=None, parts=None, events=None, cycles=None, seconds=None, output="", error=None)
    t = time.time()
    with open(script) as fin, open(outfile, "w") as fout:
        p = subprocess.run(cmd, stdin=fin, stdout=fout, stderr=subprocess.STDOUT, cwd=workdir)
    res["seconds"] = time.time() - t
    with open(outfile, errors="replace") as f:
        out = f.read()
    res["output"] = out
    errs = [l for l in out.splitlines() if re.search(r"\b(ERROR|FATAL|PANIC):", l)]
    if p.returncode != 0 or errs:
        keep = os.path.join(h.OUT_DIR, "failed-%s.out" % tag)
        shutil.copy(outfile, keep)
        shutil.copy(script, keep[:-4] + ".sql")
        res["error"] = "exit %d; %s (output kept in %s)" % (p.returncode, "; ".join(errs[:3]) or out[-500:], keep)
        return res
    if counter in ("callgrind", "callgrind-runs"):
        # cg.1, cg.2, ... are the dumps at the markers; cg the final part
        files = sorted((int(f.rsplit(".", 1)[1]), f) for f in os.listdir(workdir)
                       if f.startswith(os.path.basename(cg) + ".") and f.rsplit(".", 1)[1].isdigit())
        paths = [os.path.join(workdir, f) for _, f in files] + [cg]
        parts, events = [], []
        for path in paths:
            if part_hook is not None:
                part_hook(len(parts), path)
            parts.append(callgrind_ir(path))
            if h.SIMULATE:
                events.append(callgrind_events(path))
            if h.KEEP_PROFILES:
                shutil.move(path, os.path.join(h.KEEP_PROFILES, "%s.part%d" % (tag, len(parts))))
            else:
                os.unlink(path)
        res["parts"] = parts
        res["events"] = events if h.SIMULATE else None
        res["count"] = sum(x or 0 for x in parts)
    elif counter == "perf":
        with open(pf) as f:
            res["count"], res["cycles"] = parse_perf_csv(f.read())
    if counter in ("callgrind", "callgrind-runs", "perf") and res["count"] is None:
        res["error"] = "no instruction count in the %s output" % counter
    if len(out) > 1000000:
        os.unlink(outfile)   # the EXECUTE-per-line workloads print a lot
    return res

