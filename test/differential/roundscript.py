"""test/differential/roundscript.py - the psql script of one round.

A round R of seed S draws everything from its own stream ("S:R"): the
table (shape.py), then, while writing the script, its queries
(querygen.py) and the write workload.  The script:

  settings (module on, verify on, a random compile_threshold), the table,
  its indexes before or after the load, VACUUM ANALYZE;
  the first half of the queries, each in the three modes;
  writes: random and range deletes, key updates, inserts (page splits,
  unique conflicts), duplicate rows, VACUUM / ANALYZE;
  the second half of the queries;
  the verify sweep (each index's last query once more, in verify mode);
  amcheck of every index; the module's index stats.

Markers psql echoes (@@S step, @@Q query mode, @@STATS) let runner.py
split the output; snap0..3 count the compiled page searches around the
two query batches.
"""

import random

from querygen import ERRCHECK, MODES, QueryGen
from shape import Shape


def per_row(rows_sql, stmt):
    """A DO block running stmt once for every row r of rows_sql, a unique
    violation skipping that row."""
    return f"""DO $$
DECLARE r record; n int := 0;
BEGIN
  FOR r IN {rows_sql} LOOP
    BEGIN
      {stmt};
    EXCEPTION WHEN unique_violation THEN n := n + 1;
    END;
  END LOOP;
END $$"""


class Round:
    """Round rnd of seed seed: its shape, its queries and its script."""

    def __init__(self, seed, rnd, args):
        self.seed = seed
        self.rnd = rnd
        self.args = args
        self.rng = random.Random(f"{seed}:{rnd}")
        self.table = f"dt{rnd}"
        self.script = []
        self.shape = Shape(self.rng, self.table)
        self.gen = QueryGen(self.rng, self.shape)
        self.indexes = self.shape.indexes

    @property
    def queries(self):
        return self.gen.queries

    def describe(self):
        return self.shape.describe()

    def snap(self, n):
        """Compiled page searches of this round's indexes so far."""
        if not self.args.no_module:
            self.step(f"snap{n}", "SELECT coalesce(sum(jit_searches), 0) FROM btree_jit_index_stats() "
                      f"WHERE indexrelid::text LIKE '{self.table}\\_%'")

    def step(self, label, sql):
        """A statement whose output and errors are reported under label."""
        sql = sql.rstrip()
        if not sql.endswith(';') and '\\g ' not in sql:
            sql += ';'
        self.script.append(f"\\echo @@S {label}\n{sql}\n{ERRCHECK}")

    def emit_queries(self, n):
        """n new queries, each in the three modes in a random order."""
        rng = self.rng
        for _ in range(n):
            q = self.gen.gen_query()
            modes = list(MODES)
            rng.shuffle(modes)
            q.modes = modes
            block = [f"-- query {q.qid} ({q.kind}, index {q.index.name})"]
            block.append(';\n'.join(q.settings) + ';')
            for m in modes:
                block.append(f"\\echo @@Q {q.qid} {m}")
                block.append(MODES[m])
                block.append(q.body())
            self.script.append('\n'.join(block))

    def build_script(self):
        """The whole psql script of the round (see the file header)."""
        nq = self.args.queries
        self.emit_setup()
        self.snap(0)
        self.emit_queries(nq // 2)
        self.snap(1)
        self.emit_writes()
        self.snap(2)
        first_late = len(self.queries)
        self.emit_queries(nq - nq // 2)
        self.late = {q.qid for q in self.queries[first_late:]}
        self.snap(3)
        self.emit_sweep()
        self.emit_checks()
        return '\n'.join(self.script) + '\n'

    def emit_setup(self):
        """Session settings (a random compile_threshold), the table, its
        indexes before or after the load, VACUUM ANALYZE."""
        rng = self.rng
        t = self.table
        tz = 'UTC'   # data near the timestamptz limits overflows in other zones
        # compile at the first search mostly; sometimes only after some
        # stock searches (the switch from stock to compiled mid-workload)
        self.threshold = rng.choice([0, 0, 0, 0, 0, 0, 1, 5, 64])
        self.script.append(
            "SET client_min_messages = warning;\n"
            f"SET TimeZone = '{tz}';\n"
            "SET btree_jit.enabled = on;\nSET btree_jit.verify = on;\n"
            + ('' if self.args.no_module else
               f"SET btree_jit.compile_threshold = {self.threshold};\n") +
            "SET max_parallel_workers_per_gather = 0;\n"
            f"SELECT setseed({rng.random() * 2 - 1:.6f}) \\g /dev/null\n")
        self.step('create', f"DROP TABLE IF EXISTS {t};\n"
                  f"CREATE TABLE {t} (id int, "
                  + ', '.join(f"{c.name} {c.t.sql}{c.t.coll}" for c in self.shape.cols)
                  + (', pad text' if self.shape.pad is not None else '')
                  + ") WITH (autovacuum_enabled = off)")
        for ix in self.shape.pre:
            self.step(f'index {ix.name}', ix.ddl(t))
        if self.shape.nrows:
            self.step('load', self.shape.insert_sql(self.shape.nrows, 1))
        for ix in self.shape.post:
            self.step(f'index {ix.name}', ix.ddl(t))
        self.step('vacuum1', f"VACUUM ANALYZE {t}")

    def emit_writes(self):
        """The write phase: deletes (random and a key range, so that whole
        pages empty and VACUUM deletes them), updates of key columns (unique
        violations caught per row), inserts (page splits, conflicts),
        duplicate rows, VACUUM / ANALYZE."""
        rng = self.rng
        t = self.table
        ix0 = rng.choice(self.indexes)
        k0 = ix0.keys[0].col
        self.step('delete', f"DELETE FROM {t} WHERE random() < {rng.choice([0.05, 0.3, 0.7])}")
        if self.shape.nrows:
            self.step('delete-range', f"DELETE FROM {t} WHERE {self.gen.pred_range(k0)}")
        c = rng.choice(self.shape.cols)
        self.step('update', per_row(
            f"SELECT ctid FROM {t} WHERE random() < 0.05",
            f"UPDATE {t} SET {c.name} = (SELECT {c.data_expr('y.r', 'y.k', 'y.s')} FROM\n"
            f"               (SELECT {c.random_draws()}) y)\n"
            f"       WHERE ctid = r.ctid"))
        if rng.random() < 0.7:
            self.step('vacuum2', f"VACUUM {t}")
        self.step('insert2', self.shape.insert_sql(max(self.shape.nrows // 2, 20), self.shape.nrows + 1))
        # duplicate rows of existing keys (posting lists, unique conflicts
        # through the exception path)
        self.step('insert-dups', per_row(
            f"SELECT ctid AS tid FROM {t} WHERE random() < 0.05 LIMIT 300",
            f"INSERT INTO {t} SELECT * FROM {t} WHERE ctid = r.tid"))
        self.step('vacuum3', f"VACUUM ANALYZE {t}" if rng.random() < 0.6 else f"ANALYZE {t}")

    def emit_sweep(self):
        """The verify sweep: every index's last query once more, in verify
        mode.  An index whose compile threshold was crossed by its last
        queries, after the last one in verify mode, still runs its compiled
        search under verify; and a query of the second half, whose data has
        not changed since, must return what 'off' did."""
        self.sweep = []
        if not self.args.no_module:
            for ix in self.indexes:
                mine = [q for q in self.queries if q.index is ix]
                if mine:
                    q = mine[-1]
                    self.sweep.append(q)
                    self.script.append('\n'.join([
                        f"-- sweep of index {ix.name}: query {q.qid} in verify mode",
                        ';\n'.join(q.settings) + ';',
                        f"\\echo @@Q {q.qid} sweep", MODES['ver'], q.body()]))

    def emit_checks(self):
        """amcheck of every index (module on, verify on), then the module's
        index stats of the round's indexes."""
        t = self.table
        self.script.append(MODES['ver'])
        for ix in self.indexes:
            self.step(f'amcheck {ix.name}',
                      f"SELECT bt_index_parent_check('{ix.name}'::regclass, true, true) \\g /dev/null")
        if not self.args.no_module:
            self.script.append(
                "\\echo @@STATS\n"
                "SELECT indexrelid::text, state, coalesce(reason, ''), coalesce(signature, ''), "
                "jit_searches, stock_searches, declined_searches, verified_searches, "
                "(SELECT level FROM bt_metap(s.indexrelid::text)) "
                f"FROM btree_jit_index_stats() s WHERE indexrelid::text LIKE '{t}\\_%';\n"
                + ERRCHECK)
