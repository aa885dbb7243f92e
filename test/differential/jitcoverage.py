"""test/differential/jitcoverage.py - did the compiled path really run?

After a round (with the module loaded): the compared queries made compiled
page searches (snap steps around the two batches; a failure when the
round's compile_threshold is 0 and no search was compiled), and every
index whose key shape the module covers is in state 'jit' with
jit_searches > 0 and verified_searches > 0 in btree_jit_index_stats(),
unless it was not searched more than compile_threshold times or never
chosen by the planner (also after a reset of its state, when a twin index
took its queries).
The counters feed the summary line test/suite-differential.sh checks.
"""


class Coverage:
    """The counters of the compiled-path checks over all rounds."""

    def __init__(self):
        self.idx_jit = 0
        self.idx_supported = 0
        self.idx_stock_ok = 0
        self.idx_other = 0
        self.idx_pending = 0
        self.idx_unused = 0
        self.levels = {}
        self.query_jit = 0
        self.declined = 0
        self.jit_searches = 0
        self.verified = 0
        self.shapes = set()

    def check_round(self, runner, rnd, steps, stats):
        """Check one round's snap steps and index stats (runner.fail on a
        failure) and add them to the counters."""
        try:
            sn = [int(steps[f"snap{i}"][0]) for i in range(4)]
            qjit = sn[1] - sn[0] + sn[3] - sn[2]
        except (KeyError, IndexError, ValueError):
            qjit = -1
        self.query_jit += max(qjit, 0)
        if qjit <= 0 and any(ix.supported for ix in rnd.indexes) and rnd.threshold == 0:
            runner.fail(rnd, f"the queries made no compiled page search ({qjit})")
        if not stats or any(x.startswith('@@ERR') for x in stats):
            runner.fail(rnd, f"btree_jit_index_stats() gave nothing: {stats[:2]}")
        st = {}
        for line in stats:
            f = line.split('\t')
            if len(f) == 9:
                st[f[0]] = f
                self.levels[f[8]] = self.levels.get(f[8], 0) + 1
                self.declined += int(f[6])
        for ix in rnd.indexes:
            f = st.get(ix.name)
            if ix.supported:
                self.idx_supported += 1
                self.shapes.add(ix.shape())
                twin = any(o is not ix and o.keys[0].col is ix.keys[0].col
                           for o in rnd.indexes)
                if f is None and twin:
                    # never searched: the planner always took another
                    # index on the same leading column (and inserts
                    # into a one-page index make no page search)
                    self.idx_unused += 1
                elif f is None:
                    runner.fail(rnd, f"index {ix.name} ({ix.shape()}) missing from btree_jit_index_stats()")
                elif (rnd.threshold > 0 and f[1] == 'pending'
                      and int(f[5]) <= rnd.threshold):
                    # not searched often enough yet: a backend's first
                    # compile_threshold searches are the server's, and the
                    # one after them compiles (so exactly compile_threshold
                    # stock searches is still 'pending')
                    self.idx_pending += 1
                elif (f[1] == 'pending' and int(f[4]) > 0 and int(f[7]) == 0
                      and twin):
                    # compiled searches (their results compared with 'off'),
                    # then a relcache invalidation (VACUUM) reset the state,
                    # and no later query, the verify sweep included, chose
                    # this index over its twin on the same leading column:
                    # as good as never chosen for the verify check
                    self.idx_unused += 1
                elif (f[1] == 'jit' and int(f[4]) > 0 and int(f[7]) == 0
                      and twin):
                    # compiled searches in mode 'on' (their results
                    # compared with 'off'), and no query in verify mode,
                    # the sweep included, searched a page of it: the
                    # planner took its twin on the same leading column
                    # (a near-empty table leaves it indifferent), or the
                    # keys were contradictory (seed 52495960, round 10):
                    # as good as never chosen for the verify check
                    self.idx_unused += 1
                elif f[1] not in ('jit', 'pending') or int(f[4]) == 0 or int(f[7]) == 0:
                    # ('pending' after compiled searches: a relcache
                    # invalidation, e.g. by VACUUM, reset the state and
                    # the index was not searched again)
                    runner.fail(rnd, f"index {ix.name} ({ix.shape()}) is covered but the compiled "
                              f"path was not exercised: state={f[1]} reason={f[2]!r} "
                              f"jit_searches={f[4]} stock_searches={f[5]} verified={f[7]} "
                              f"compile_threshold={rnd.threshold}")
                else:
                    self.idx_jit += 1
                    self.jit_searches += int(f[4])
                    self.verified += int(f[7])
            elif f is not None and f[1] == 'stock' and int(f[4]) == 0:
                self.idx_stock_ok += 1
            else:
                self.idx_other += 1
                if runner.args.verbose:
                    print(f"  index {ix.name} ({ix.shape()}) not covered: {f}")
