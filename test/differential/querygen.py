"""test/differential/querygen.py - the random queries of a round.

Queries that force index scans on the round's indexes (Shape): equality
prefixes with a last predicate (range, IN/ANY, NULL tests), ranges, row
comparisons, ORDER BY ... LIMIT in both directions, scrollable cursors,
nested-loop probes, merge joins that mark and restore the index scan,
index-only, bitmap, parallel and count(*) scans, and
predicates on non-leading columns.  Each is run in the three MODES and
compared by runner.py; Query writes its text for one mode.
"""

from keytypes import TYPES

# --------------------------------------------------------------------------
# The modes every query runs in, and the line psql echoes after a failed
# statement (so that the output can be split per statement and per mode).
# --------------------------------------------------------------------------

MODES = {
    'off': "SET btree_jit.enabled = off;",
    'on': "SET btree_jit.enabled = on; SET btree_jit.verify = off;",
    'ver': "SET btree_jit.enabled = on; SET btree_jit.verify = on;",
}
ERRCHECK = "\\if :ERROR\n\\echo @@ERR :SQLSTATE :LAST_ERROR_MESSAGE\n\\endif\n"


class Query:
    def __init__(self, qid, kind, index, settings, sql=None, cursor=None,
                 ordered=True):
        self.qid = qid
        self.kind = kind
        self.index = index
        self.settings = settings   # list of SET statements for the planner
        self.sql = sql             # a SELECT (compared by count + md5)
        self.cursor = cursor       # (select, [fetch commands]) instead
        self.ordered = ordered     # False: compare as a multiset

    def hashed(self):
        agg = "string_agg(r::text, E'\\n')" if self.ordered else \
            "string_agg(r::text, E'\\n' ORDER BY r::text)"
        return f"SELECT count(*) || ' ' || coalesce(md5({agg}), '-') FROM (\n{self.sql}\n) r;"

    def body(self, full=False):
        """Script text for one mode of this query (without the mode SETs)."""
        out = []
        if self.cursor is None:
            out.append((self.sql + ';') if full else self.hashed())
            out.append(ERRCHECK)
        else:
            sel, fetches = self.cursor
            out.append("BEGIN;")
            out.append(f"DECLARE c SCROLL CURSOR FOR {sel};")
            out.append(ERRCHECK)
            for f in fetches:
                out.append(f"\\echo -- {f}")
                out.append(f"{f};")
                out.append(ERRCHECK)
            out.append("COMMIT;")
        return '\n'.join(out)

    def text(self):
        if self.cursor is None:
            return self.sql
        return f"DECLARE c SCROLL CURSOR FOR {self.cursor[0]}; " + '; '.join(self.cursor[1])


# The kinds of query: name, weight, the QueryGen method that writes one.
# The name also selects the planner settings (QueryGen.settings).
QUERY_KINDS = [
    ('prefix', 25, 'q_prefix'),
    ('range', 12, 'q_range'),
    ('row', 10, 'q_row'),
    ('order', 8, 'q_order'),
    ('cursor', 8, 'q_cursor'),
    ('nestloop', 6, 'q_nestloop'),
    ('merge', 4, 'q_merge'),
    ('ios', 10, 'q_prefix'),
    ('bitmap', 5, 'q_prefix'),
    ('nonlead', 3, 'q_nonlead'),
    ('count', 5, 'q_prefix'),
    ('parallel', 2, 'q_prefix'),
]


class QueryGen:
    """Draws queries on a Shape from rng (the round's stream); keeps them
    in order, numbered from 1."""

    def __init__(self, rng, shape):
        self.rng = rng
        self.shape = shape
        self.queries = []
        self.qcounter = 0

    def settings(self, kind):
        """The planner settings of a query of this kind (the index path forced)."""
        rng = self.rng
        s = ["SET enable_seqscan = off", "SET enable_sort = on"]
        if kind == 'bitmap':
            s += ["SET enable_indexscan = off", "SET enable_indexonlyscan = off",
                  "SET enable_bitmapscan = on"]
        else:
            s += ["SET enable_indexscan = on", "SET enable_bitmapscan = off",
                  f"SET enable_indexonlyscan = {'on' if kind == 'ios' or rng.random() < 0.5 else 'off'}"]
        if kind == 'nestloop':
            s += ["SET enable_hashjoin = off", "SET enable_mergejoin = off",
                  "SET enable_material = off", "RESET enable_nestloop"]
        elif kind == 'merge':
            # no Material above the inner index scan: the join marks and
            # restores the scan itself
            s += ["SET enable_hashjoin = off", "SET enable_nestloop = off",
                  "SET enable_material = off", "RESET enable_mergejoin"]
        else:
            s += ["RESET enable_hashjoin", "RESET enable_mergejoin", "RESET enable_material",
                  "RESET enable_nestloop"]
        if kind == 'parallel':
            s += ["SET max_parallel_workers_per_gather = 2", "SET parallel_setup_cost = 0",
                  "SET parallel_tuple_cost = 0", "SET min_parallel_index_scan_size = 0",
                  "SET min_parallel_table_scan_size = 0"]
        else:
            s += ["SET max_parallel_workers_per_gather = 0"]
        return s

    def pred_eq(self, c):
        """col = constant (sometimes written the other way round)."""
        a = c.const(self.rng)
        return f"{a} = {c.name}" if self.rng.random() < 0.15 else f"{c.name} = {a}"

    def pred_range(self, c):
        """One or two inequalities on a column."""
        rng = self.rng
        a, b = c.const(rng), c.const(rng)
        return rng.choice([
            f"{c.name} > {a}", f"{c.name} >= {a}", f"{c.name} < {a}", f"{c.name} <= {a}",
            f"{c.name} BETWEEN {a} AND {b}", f"{c.name} > {a} AND {c.name} <= {b}",
            f"{a} < {c.name}", f"{c.name} >= {a} AND {c.name} < {b}",
            f"{c.name} > {a} AND {c.name} > {b}",
        ])

    def pred_in(self, c):
        """IN list or = / < / >= ANY (array), NULLs and cross-type arrays
        included; mostly short lists, sometimes of up to 1,000 elements
        (unsorted, duplicates likely: the server sorts and deduplicates
        them, and its arrays advance across pages)."""
        rng = self.rng
        x = rng.random()
        n = rng.randint(1, 6) if x < 0.75 else (rng.randint(7, 60) if x < 0.93 else rng.randint(100, 1000))
        vals = c.const_list(rng, n)
        if rng.random() < 0.2:
            vals.append(f"NULL::{c.t.sql}")
        arr = f"ARRAY[{', '.join(vals)}]::{c.t.sql}[]"
        if rng.random() < 0.25 and c.t.int_cross:
            other = rng.choice(c.t.cross)
            vs = [str(min(max(c.const_int(rng), TYPES[other].lo), TYPES[other].hi))
                  for _ in range(min(n, rng.randint(1, 5)) if n <= 6 else n)]
            arr = f"ARRAY[{', '.join(vs)}]::{other}[]"
        return rng.choice([
            f"{c.name} IN ({', '.join(vals)})",
            f"{c.name} = ANY ({arr})",
            f"{c.name} = ANY ({arr})",
            f"{c.name} < ANY ({arr})",
            f"{c.name} >= ANY ({arr})",
        ])

    def pred_null(self, c):
        """IS [NOT] NULL, maybe with a range."""
        rng = self.rng
        return rng.choice([f"{c.name} IS NULL", f"{c.name} IS NOT NULL",
                           f"{c.name} IS NULL", f"{c.name} IS NOT NULL AND {self.pred_range(c)}"])

    def pred_last(self, c):
        """The predicate on the column after an equality prefix."""
        rng = self.rng
        x = rng.random()
        if x < 0.4:
            return self.pred_range(c)
        if x < 0.65:
            return self.pred_in(c)
        if x < 0.85:
            return self.pred_null(c)
        return self.pred_eq(c)

    def select_list(self, ix, ios):
        """The select list (only index columns for an index-only scan)."""
        if ios:
            return ', '.join(c.name for c in ix.cols())
        return self.rng.choice(['*', '*', 'id, ' + ', '.join(c.name for c in ix.cols())])

    def order_by(self, ix, start=0, backward=None):
        """ORDER BY a prefix of the index keys, forward or backward."""
        rng = self.rng
        if backward is None:
            backward = rng.random() < 0.5
        n = rng.randint(1, len(ix.keys))
        keys = ix.keys[start:max(n, start + 1)] or ix.keys[-1:]
        return "ORDER BY " + ', '.join(k.order(backward) for k in keys)

    def limit(self):
        """A LIMIT, or none."""
        return self.rng.choice(['', ' LIMIT 1', ' LIMIT 3', ' LIMIT 25', ' LIMIT 200', ''])

    def add(self, kind, ix, sql=None, cursor=None, ordered=True, skind=None):
        """Record a new query."""
        self.qcounter += 1
        q = Query(self.qcounter, kind, ix, self.settings(skind or kind), sql=sql,
                  cursor=cursor, ordered=ordered)
        self.queries.append(q)
        return q

    def where_prefix(self, ix):
        """Equalities on a random prefix of the key, then maybe one more
        predicate on the next key column."""
        rng = self.rng
        p = rng.randint(0, len(ix.keys))
        preds = []
        for k in ix.keys[:p]:
            x = rng.random()
            if x < 0.1:
                preds.append(f"{k.col.name} IS NULL")
            elif x < 0.25:
                # an array among the equalities: several arrays advance together
                vals = k.col.const_list(rng, rng.randint(1, 8))
                preds.append(f"{k.col.name} IN ({', '.join(vals)})")
            else:
                preds.append(self.pred_eq(k.col))
        if p < len(ix.keys) and rng.random() < 0.8:
            preds.append(self.pred_last(ix.keys[p].col))
        if not preds:
            preds.append(self.pred_last(ix.keys[0].col))
        return preds, p

    def maybe_where(self, ix, p):
        """With probability p a WHERE clause on a key prefix (where_prefix),
        else nothing."""
        if self.rng.random() < p:
            preds, _ = self.where_prefix(ix)
            return f"WHERE {' AND '.join(preds)} "
        return ''

    def ordered_select(self, ix, t, p_where):
        """SELECT ... ORDER BY a key prefix, with a WHERE clause on a key
        prefix with probability p_where."""
        where = self.maybe_where(ix, p_where)
        return (f"SELECT {self.select_list(ix, self.rng.random() < 0.3)} FROM {t} {where}"
                f"{self.order_by(ix)}")

    def gen_query(self):
        """One random query on one of the indexes: its kind drawn from
        QUERY_KINDS by weight, written by the kind's method."""
        rng = self.rng
        ix = rng.choice(self.shape.indexes)
        t = self.shape.table
        kind = rng.choices([k for k, _, _ in QUERY_KINDS], weights=[w for _, w, _ in QUERY_KINDS])[0]
        method = [m for k, _, m in QUERY_KINDS if k == kind][0]
        return getattr(self, method)(kind, ix, t)

    def q_prefix(self, kind, ix, t):
        """Equalities on a key prefix and maybe one more predicate (prefix,
        ios, bitmap, parallel, count: the kind sets the planner settings)."""
        rng = self.rng
        preds, p = self.where_prefix(ix)
        ios = kind == 'ios'
        sel = 'count(*)' if kind == 'count' else self.select_list(ix, ios)
        sql = f"SELECT {sel} FROM {t} WHERE {' AND '.join(preds)}"
        if kind in ('prefix', 'ios') and rng.random() < 0.5:
            sql += ' ' + self.order_by(ix, start=0) + self.limit()
        elif kind in ('prefix', 'ios'):
            sql += self.limit()
        return self.add(kind, ix, sql=sql, ordered=(kind != 'parallel'))

    def q_range(self, kind, ix, t):
        """A range on the leading key column, in index order."""
        rng = self.rng
        c = ix.keys[0].col
        sql = (f"SELECT {self.select_list(ix, rng.random() < 0.3)} FROM {t} "
               f"WHERE {self.pred_range(c)} {self.order_by(ix)}{self.limit()}")
        return self.add(kind, ix, sql=sql)

    def q_row(self, kind, ix, t):
        """A row comparison on a key prefix (or a range on a one-key index)."""
        rng = self.rng
        if len(ix.keys) < 2:
            return self.add('range', ix, sql=(
                f"SELECT * FROM {t} WHERE ({ix.keys[0].col.name}) > ({ix.keys[0].col.const(rng)}) "
                f"{self.order_by(ix)}{self.limit()}"))
        m = rng.randint(2, len(ix.keys))
        cols = [k.col for k in ix.keys[:m]]
        op = rng.choice(['>', '>=', '<', '<='])
        vals = [c.const(rng, cross_ok=rng.random() < 0.3) for c in cols]
        pred = f"({', '.join(c.name for c in cols)}) {op} ({', '.join(vals)})"
        if rng.random() < 0.3:
            op2 = rng.choice(['<', '<=']) if op in ('>', '>=') else rng.choice(['>', '>='])
            vals2 = [c.const(rng, cross_ok=False) for c in cols]
            pred += f" AND ({', '.join(c.name for c in cols)}) {op2} ({', '.join(vals2)})"
        sql = (f"SELECT {self.select_list(ix, False)} FROM {t} WHERE {pred} "
               f"{self.order_by(ix)}{self.limit()}")
        return self.add(kind, ix, sql=sql)

    def q_order(self, kind, ix, t):
        """ORDER BY ... LIMIT, maybe on a key prefix."""
        rng = self.rng
        sql = self.ordered_select(ix, t, 0.5) + f" LIMIT {rng.choice([1, 2, 10, 50])}"
        return self.add(kind, ix, sql=sql)

    def q_cursor(self, kind, ix, t):
        """A scrollable cursor, fetched and moved both ways."""
        rng = self.rng
        sel = self.ordered_select(ix, t, 0.7)
        fetches = []
        for _ in range(rng.randint(3, 7)):
            n = rng.choice([1, 2, 5, 20])
            fetches.append(rng.choice([
                f"FETCH {n} FROM c", f"FETCH BACKWARD {n} FROM c",
                f"FETCH BACKWARD {n} FROM c", "FETCH LAST FROM c",
                "FETCH FIRST FROM c", f"FETCH ABSOLUTE {rng.choice([1, 3, -1, -4, 30])} FROM c",
                f"FETCH RELATIVE {rng.choice([-3, -1, 2])} FROM c",
                f"MOVE {n * 5} FROM c", f"MOVE BACKWARD ALL FROM c",
                f"MOVE FORWARD ALL FROM c"]))
        return self.add(kind, ix, cursor=(sel, fetches))

    def q_nestloop(self, kind, ix, t):
        """Nested-loop probes of the leading key column from an array."""
        rng = self.rng
        k0 = ix.keys[0].col
        vals = k0.const_list(rng, rng.randint(3, 30))
        extra = ''
        if len(ix.keys) > 1 and rng.random() < 0.5:
            extra = f" AND {self.pred_last(ix.keys[1].col)}"
        sql = (f"SELECT v.n, s.* FROM (SELECT row_number() OVER () AS n, x FROM "
               f"unnest(ARRAY[{', '.join(vals)}]::{k0.t.sql}[]) x) v CROSS JOIN LATERAL "
               f"(SELECT {self.select_list(ix, False)} FROM {t} WHERE {k0.name} = v.x{extra} "
               f"{self.order_by(ix)} LIMIT {rng.choice([1, 2, 5])}) s")
        return self.add(kind, ix, sql=sql)

    def q_merge(self, kind, ix, t):
        """A merge join whose inner side scans this index in either
        direction: the outer keys repeat, so unless the index is unique
        (the join then knows one inner row per key) the join marks the
        inner scan's position and restores it for each repeat (btmarkpos,
        btrestrpos), which re-reads a saved page or a page it has left."""
        rng = self.rng
        k0 = ix.keys[0].col
        vals = k0.const_list(rng, rng.randint(3, 20))
        vals += [rng.choice(vals) for _ in range(rng.randint(1, 6))]
        where = ''
        if len(ix.keys) > 1 and rng.random() < 0.5:
            where = f" WHERE {self.pred_last(ix.keys[1].col)}"
        direction = rng.choice(['', ' DESC'])
        sql = (f"SELECT v.x, s.* FROM unnest(ARRAY[{', '.join(vals)}]::{k0.t.sql}[]) v(x) "
               f"JOIN (SELECT {self.select_list(ix, rng.random() < 0.3)} FROM {t}{where}) s "
               f"ON s.{k0.name} = v.x ORDER BY v.x{direction}")
        return self.add(kind, ix, sql=sql, ordered=False)

    def q_nonlead(self, kind, ix, t):
        """Predicates only on later key columns (the index used as a filter)."""
        rng = self.rng
        if len(ix.keys) > 1:
            c = rng.choice(ix.keys[1:]).col
            sql = f"SELECT * FROM {t} WHERE {self.pred_last(c)} {self.order_by(ix)}{self.limit()}"
        else:
            sql = f"SELECT * FROM {t} WHERE {self.pred_null(ix.keys[0].col)}{self.limit()}"
        return self.add('nonlead', ix, sql=sql)
