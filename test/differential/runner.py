"""test/differential/runner.py - run a round and compare its modes.

One psql session runs a round's whole script (roundscript.py); its output
is split at the markers.  Every step must succeed; every query must give
the same rows (count and md5) in 'on' and 'ver' as in 'off', and no mode
may raise an error naming btree_jit (a verify mismatch); on a difference
the rows are fetched again in a fresh session and the first differing row
is printed.  The verify sweep must raise nothing and, for queries of the
second batch, return what 'off' did.  A lost connection is a failure.
jitcoverage.py then checks that the compiled path ran.  A failed round's
script is kept in the failure directory, runnable with psql.
"""

import os
import re
import shlex
import subprocess
import time

from jitcoverage import Coverage
from querygen import MODES

def run_psql(args, script, timeout):
    """Run a script through psql: (stdout, stderr, exit status), stdout
    None and status 'timeout' after timeout seconds."""
    cmd = shlex.split(args.psql) + ['-X', '-q', '-A', '-t', '-F', '\t',
                                     '-v', 'ON_ERROR_STOP=0', '-f', '-']
    try:
        p = subprocess.run(cmd, input=script.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b'').decode(errors='replace'), 'timeout'
    return (p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace'),
            p.returncode)


def split_output(out):
    """-> (steps {label: [lines]}, queries {(qid, mode): [lines]}, stats [lines])"""
    steps, queries, stats = {}, {}, []
    cur = None
    for line in out.split('\n'):
        if line.startswith('@@S '):
            cur = steps.setdefault(line[4:], [])
            continue
        if line.startswith('@@Q '):
            _, qid, mode = line.split(' ')
            cur = queries.setdefault((int(qid), mode), [])
            continue
        if line == '@@STATS':
            cur = stats
            continue
        if cur is not None:
            cur.append(line)
    return steps, queries, stats


def module_error(lines):
    """The first error line of a query's output if any error names
    btree_jit (a verify mismatch, say), else None."""
    errs = [x for x in lines if x.startswith('@@ERR')]
    if any('btree_jit' in x for x in errs):
        return errs[0]
    return None


CRASH_RE = re.compile(r'server closed the connection|connection to server .* lost|'
                      r'terminating connection because of crash|no connection to the server')


class Runner:
    """Runs rounds, compares their modes; the counters of all rounds."""

    def __init__(self, args):
        self.args = args
        self.compared = 0
        self.failures = []
        self.rounds = 0
        self.kinds = {}
        self.both_error = 0
        self.amchecks = 0
        self.coverage = Coverage()
        self.swept = 0
        self.swept_compared = 0

    def fail(self, rnd, what):
        """Record and print a failure of round rnd."""
        msg = f"round {rnd.rnd} (seed {rnd.seed}): {what}"
        self.failures.append(msg)
        print("FAIL " + msg, flush=True)
        rnd.failed = True

    def diagnose(self, rnd, q, mode='on'):
        """Fetch the rows of a differing query again in a new session and
        print the first difference."""
        rows = {}
        for m in ('off', mode):
            s = ("SET client_min_messages = warning; SET TimeZone = 'UTC';\n"
                 + ';\n'.join(q.settings) + ';\n' + MODES[m] + '\n' + q.body(full=True))
            out, err, rc = run_psql(self.args, s, 120)
            rows[m] = (out or '').split('\n')
        a, b = rows['off'], rows[mode]
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else '<none>'
            y = b[i] if i < len(b) else '<none>'
            if x != y:
                return (f"first difference at row {i + 1} (fresh session): "
                        f"off: {x[:300]!r} {mode}: {y[:300]!r}")
        return "no difference when re-run in a fresh session (state-dependent)"

    def run_round(self, rnd):
        """Run one round's script and check everything it printed."""
        args = self.args
        rnd.failed = False
        script = rnd.build_script()
        print(f"round {rnd.rnd}: {rnd.describe()}", flush=True)
        t0 = time.monotonic()
        out, err, rc = run_psql(args, script, args.round_timeout)
        dt = time.monotonic() - t0
        if out is None:
            self.fail(rnd, f"psql timed out after {args.round_timeout}s")
            self.save(rnd, script, err)
            return
        if CRASH_RE.search(err) or rc == 2:
            self.fail(rnd, f"connection lost (backend crash?), psql rc={rc}: "
                      f"{err.strip()[-600:]}")
        steps, qs, stats = split_output(out)
        self.check_steps(rnd, steps)
        self.compare_queries(rnd, qs)
        self.check_sweep(rnd, qs)
        # was the compiled path used?
        if not args.no_module:
            self.coverage.check_round(self, rnd, steps, stats)
        print(f"  {len(rnd.queries)} queries x 3 modes, {dt:.1f}s"
              f"{'  FAILED' if rnd.failed else ''}", flush=True)
        if rnd.failed:
            self.save(rnd, script, err)
        elif args.verbose and err.strip():
            print("  stderr: " + err.strip()[:500])
        if not rnd.failed or not args.keep_tables:
            run_psql(args, f"DROP TABLE IF EXISTS {rnd.table};", 60)

    def check_steps(self, rnd, steps):
        """Every step succeeded; count the clean amchecks."""
        for label, lines in steps.items():
            errs = [x for x in lines if x.startswith('@@ERR')]
            if errs:
                self.fail(rnd, f"step '{label}' failed: {errs[0]}")
            if label.startswith('amcheck') and not errs:
                self.amchecks += 1

    def compare_queries(self, rnd, qs):
        """Each query's 'on' and 'ver' output against 'off' (a module error
        or a difference fails the round; the first three are diagnosed)."""
        args = self.args
        ndiff = 0
        for q in rnd.queries:
            res = {m: qs.get((q.qid, m)) for m in MODES}
            if any(v is None for v in res.values()):
                self.fail(rnd, f"query {q.qid} has no output (script aborted?): {q.text()}")
                break
            self.compared += 1
            self.kinds[q.kind] = self.kinds.get(q.kind, 0) + 1
            bad = None
            badmode = 'on'
            for m in ('on', 'ver'):
                badmode = m
                err = module_error(res[m])
                if err:
                    bad = f"mode {m} raised {err}"
                    break
                if res[m] != res['off']:
                    bad = (f"mode {m} differs from off: off={res['off'][:4]} "
                           f"{m}={res[m][:4]}")
                    break
            if bad is None and any(x.startswith('@@ERR') for x in res['off']):
                self.both_error += 1
                if args.verbose:
                    print(f"  (query {q.qid} errs in all modes: {res['off'][:2]})")
            if bad:
                ndiff += 1
                detail = self.diagnose(rnd, q, badmode) if ndiff <= 3 else ''
                self.fail(rnd, f"query {q.qid} ({q.kind}, index {q.index.name} "
                          f"{q.index.shape()}): {bad}\n    query: {q.text()}\n"
                          f"    settings: {'; '.join(q.settings)}\n    {detail}")

    def check_sweep(self, rnd, qs):
        """The verify sweep raised nothing and, for the second batch's
        queries, returned what 'off' did."""
        for q in rnd.sweep:
            got = qs.get((q.qid, 'sweep'))
            what = f"the verify sweep of query {q.qid}"
            if got is None:
                self.fail(rnd, f"{what} has no output (script aborted?)")
            elif module_error(got):
                self.fail(rnd, f"{what} (index {q.index.name} {q.index.shape()}) "
                          f"raised {module_error(got)}\n    query: {q.text()}")
            elif q.qid in rnd.late and got != qs.get((q.qid, 'off')):
                self.fail(rnd, f"{what} (index {q.index.name} {q.index.shape()}) "
                          f"differs from its 'off' run\n    query: {q.text()}")
            else:
                self.swept += 1
                self.swept_compared += q.qid in rnd.late

    def save(self, rnd, script, err):
        """Keep a failed round's script (and psql's stderr) for replay."""
        d = self.args.fail_dir
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"seed{rnd.seed}-round{rnd.rnd}.sql")
        with open(path, 'w') as f:
            f.write(f"-- btree_jit differential test, seed {rnd.seed} round {rnd.rnd}\n"
                    f"-- {rnd.describe()}\n-- replay: test/suite-differential.sh "
                    f"--seed {rnd.seed} --round {rnd.rnd}\n"
                    f"-- or: psql -X -f {path}  (module preloaded, amcheck + btree_jit extensions)\n")
            f.write(script)
        with open(path + '.stderr', 'w') as f:
            f.write(err or '')
        print(f"  script saved: {path}\n  replay: test/suite-differential.sh "
              f"--seed {rnd.seed} --round {rnd.rnd}", flush=True)
