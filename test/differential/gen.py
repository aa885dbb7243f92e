#!/usr/bin/env python3
"""test/differential/gen.py - randomized differential tests for btree_jit.

Seeded generator: every round builds one table with random key shapes (the
types the module compiles and others: text, numeric, float8), fills it with
skewed data (heavy duplicates, NULLs, extreme values), runs random queries
that force index scans, each one three times in the same session:

    off   btree_jit.enabled = off                  (the server's own search)
    on    btree_jit.enabled = on,  verify = off    (the compiled search alone)
    ver   btree_jit.enabled = on,  verify = on     (both, ERROR on difference)

and compares the results row for row (an order-sensitive md5 of the rows;
on a difference the rows themselves are fetched again and the first
differing row is printed).  Between two query batches it deletes, vacuums,
inserts (page splits, unique conflicts) and updates with the module on and
verify on, then checks every index with amcheck's bt_index_parent_check(
heapallindexed => true, rootdescend => true), which re-finds every leaf tuple
by a fresh descent from the root (through the compiled search; an index of
one page has no descent, only comparisons).  Before that, a verify sweep
runs each index's last query once more in verify mode, so that an index
compiled late in the round (its threshold crossed by its last queries) is
still searched by its compiled code under verify; a swept query of the
second batch must also return the rows 'off' did.  Finally it
checks that the compiled path was really used: every index whose key shape
the module covers must be in state 'jit' with jit_searches > 0 and
verified_searches > 0 in btree_jit_index_stats().

Every round R of seed S draws from its own random stream ("S:R"), so a
failing round replays alone:

    test/suite-differential.sh --seed S --round R

and its whole SQL script is written to the failure directory, runnable with
psql against any cluster with the module preloaded.

Python 3 standard library only; talks to the server through psql (the
command is given with --psql; the caller sets PGHOST/PGPORT/...).

The files (one job each; this one is the command line and the summary):

    keytypes.py     the key types: domain, literals, cross-type constants
    shape.py        the random table of a round: columns, data, indexes
    querygen.py     the random queries and the three modes
    roundscript.py  the psql script of a round
    runner.py       running a round and comparing off / on / ver
    jitcoverage.py  the checks that the compiled path ran
"""

import argparse
import sys
import time

from roundscript import Round
from runner import Runner


def main():
    """Run the rounds; print the summary; 1 on any failure."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--minutes', type=float, default=2.5,
                    help='stop starting new rounds after this long')
    ap.add_argument('--rounds', type=int, default=0, help='at most this many rounds (0: no limit)')
    ap.add_argument('--round', type=int, default=None, help='run only this round')
    ap.add_argument('--queries', type=int, default=90, help='queries per round')
    ap.add_argument('--psql', required=True, help='psql command (PG* env selects the cluster)')
    ap.add_argument('--fail-dir', default='/tmp/btree_jit-differential')
    ap.add_argument('--round-timeout', type=int, default=600)
    ap.add_argument('--no-module', action='store_true',
                    help='dry run without the module (skip the stats checks)')
    ap.add_argument('--keep-tables', action='store_true')
    ap.add_argument('--verbose', action='store_true')
    args = ap.parse_args()

    print(f"differential: seed {args.seed}, {args.minutes} min, {args.queries} queries/round",
          flush=True)
    run = Runner(args)
    t0 = time.monotonic()
    deadline = t0 + args.minutes * 60
    if args.round is not None:
        rounds = [args.round]
    else:
        rounds = range(1, 10**9)
    for r in rounds:
        if args.round is None:
            if time.monotonic() >= deadline or (args.rounds and r > args.rounds):
                break
        run.run_round(Round(args.seed, r, args))
        run.rounds += 1
    dt = time.monotonic() - t0
    kinds = ', '.join(f"{k} {v}" for k, v in sorted(run.kinds.items()))
    print(f"differential: {run.rounds} rounds in {dt:.0f}s; {run.compared} queries compared "
          f"off/on/verify ({kinds}); {run.both_error} errored identically in all modes")
    print(f"differential: {run.coverage.idx_supported} covered indexes ({len(run.coverage.shapes)} distinct shapes), "
          f"{run.coverage.idx_jit} compiled and exercised (jit_searches {run.coverage.jit_searches}, of them "
          f"{run.coverage.query_jit} by the compared queries, "
          f"verified_searches {run.coverage.verified}), {run.coverage.idx_pending} not searched past compile_threshold, "
          f"{run.coverage.idx_unused} never chosen by the planner; {run.coverage.idx_stock_ok} uncovered indexes stayed stock, "
          f"{run.coverage.idx_other} other; {run.amchecks} amcheck runs clean")
    if not args.no_module:
        print("differential: index tree heights (root level: count) "
              + ', '.join(f"{k}: {v}" for k, v in sorted(run.coverage.levels.items()))
              + f"; {run.coverage.declined} page searches declined by the compiled code's guards; "
              f"verify sweep: {run.swept} queries ({run.swept_compared} compared with 'off')")
    # machine-readable summary for the suite script
    print(f"@@SUMMARY compared={run.compared} failures={len(run.failures)} rounds={run.rounds} "
          f"amchecks={run.amchecks} idx_supported={run.coverage.idx_supported - run.coverage.idx_pending - run.coverage.idx_unused} idx_jit={run.coverage.idx_jit} "
          f"jit_searches={run.coverage.jit_searches} verified={run.coverage.verified}")
    if run.failures:
        print(f"differential: {len(run.failures)} FAILURES (seed {args.seed}); replay a round with "
              f"test/suite-differential.sh --seed {args.seed} --round R")
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
