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
"""

import argparse
import hashlib
import os
import random
import re
import shlex
import subprocess
import sys
import time

# --------------------------------------------------------------------------
# Types.  Every value of a column is generated from an integer v in the
# type's integer domain [lo, hi] through conv(sql_int8_expression), plus a
# few non-integer special literals (infinities, NaN, ...).  The same conv is
# used for data (server side, from random()) and for query constants (Python
# side, from a Python int), so constants land on, between and around the
# stored values.
# --------------------------------------------------------------------------

US_PER_DAY = 86400000000


def _ts_conv(base):
    def conv(e):
        return (f"({base} + (({e}) / {US_PER_DAY})::float8 * interval '1 day'"
                f" + (({e}) % {US_PER_DAY})::float8 * interval '1 microsecond')")
    return conv


class PgType:
    def __init__(self, name, sql, lo, hi, conv, extra=(), supported=True,
                 cross=()):
        self.name = name          # short name used in shapes
        self.sql = sql            # type as written in SQL
        self.lo = lo
        self.hi = hi
        self.conv = conv          # SQL int8 expression -> SQL value expression
        self.extra = list(extra)  # special literals outside the int domain
        self.supported = supported
        self.cross = cross        # names of other types for cross-type consts

    def lit(self, v):
        return self.conv(f"'{v}'::int8")


TYPES = {
    'int2': PgType('int2', 'int2', -32768, 32767, lambda e: f"({e})::int2",
                   cross=('int4', 'int8')),
    'int4': PgType('int4', 'int4', -2**31, 2**31 - 1, lambda e: f"({e})::int4",
                   cross=('int2', 'int8')),
    'int8': PgType('int8', 'int8', -2**63, 2**63 - 1, lambda e: f"({e})::int8",
                   cross=('int2', 'int4')),
    'oid': PgType('oid', 'oid', 0, 2**32 - 1, lambda e: f"({e})::int8::oid"),
    'char': PgType('char', '"char"', -128, 127,
                   lambda e: f"({e})::int4::\"char\""),
    'bool': PgType('bool', 'bool', 0, 1, lambda e: f"(({e}) <> 0)"),
    'date': PgType('date', 'date', -2451545, 2145031948,
                   lambda e: f"('2000-01-01'::date + ({e})::int4)",
                   extra=("'-infinity'::date", "'infinity'::date"),
                   cross=('timestamp', 'timestamptz')),
    'time': PgType('time', 'time', 0, US_PER_DAY - 1,
                   lambda e: f"('00:00'::time + ({e})::float8 * interval '1 microsecond')",
                   extra=("'24:00:00'::time",)),
    'timestamp': PgType('timestamp', 'timestamp', -211813488000000000,
                        9223371331199999999,
                        _ts_conv("'2000-01-01 00:00:00'::timestamp"),
                        extra=("'-infinity'::timestamp", "'infinity'::timestamp"),
                        cross=('date', 'timestamptz')),
    'timestamptz': PgType('timestamptz', 'timestamptz', -211813488000000000,
                          9223371331199999999,
                          _ts_conv("'2000-01-01 00:00:00+00'::timestamptz"),
                          extra=("'-infinity'::timestamptz",
                                 "'infinity'::timestamptz"),
                          cross=('date', 'timestamp')),
    # not compiled by the module: must stay on the stock path, still correct
    'text': PgType('text', 'text', -10**9, 10**9,
                   lambda e: f"('s' || ({e})::text)",
                   extra=("''::text", "'\u00e9'::text", "repeat('z', 300)",
                          "'\u00ff\u00ff'::text"), supported=False),
    'numeric': PgType('numeric', 'numeric', -10**15, 10**15,
                      lambda e: f"(({e})::numeric / 100)",
                      extra=("'NaN'::numeric", "'1e100'::numeric",
                             "'-1e-100'::numeric", "'0.000'::numeric"),
                      supported=False),
    'float8': PgType('float8', 'float8', -2**50, 2**50,
                     lambda e: f"(({e})::float8 / 8)",
                     extra=("'NaN'::float8", "'Infinity'::float8",
                            "'-Infinity'::float8", "'-0'::float8",
                            "'1e308'::float8"),
                     supported=False),
}
SUPPORTED = [t for t in TYPES if TYPES[t].supported]
UNSUPPORTED = [t for t in TYPES if not TYPES[t].supported]
INT_RANGE = {'int2': (-32768, 32767), 'int4': (-2**31, 2**31 - 1),
             'int8': (-2**63, 2**63 - 1)}


class Column:
    """A table column and the distribution of its data."""

    def __init__(self, rng, name, tname):
        t = TYPES[tname]
        self.name = name
        self.t = t
        span = t.hi - t.lo
        self.card = rng.choice([1, 2, 3, 7, 50, 400, 5000, 100000])
        if tname == 'bool':
            self.card = 2
        self.card = min(self.card, span + 1)
        self.skew = rng.choice([1, 1, 2, 4])
        self.null_frac = rng.choice([0, 0, 0.02, 0.1, 0.4])
        self.special_frac = rng.choice([0, 0.01, 0.05, 0.2])
        strides = [1, 1, 3, 1000, 86400, US_PER_DAY, 10**9, 10**12]
        strides = [s for s in strides if s * (self.card - 1) <= span] or [1]
        self.stride = rng.choice(strides)
        width = self.stride * (self.card - 1)
        where = rng.choice(['lo', 'hi', 'zero', 'zero', 'mid'])
        if where == 'lo':
            self.base, self.dir = t.lo, 1
        elif where == 'hi':
            self.base, self.dir = t.hi, -1
        elif where == 'zero' and t.lo <= -(width // 2) and width - width // 2 <= t.hi:
            self.base, self.dir = -(width // 2), 1
        else:
            self.base, self.dir = rng.randint(t.lo, t.hi - width), 1
        # specials: the domain's ends, 0, and the type's own literals
        sp = {t.lo, t.hi}
        if t.lo <= 0 <= t.hi:
            sp.add(0)
        if t.lo <= -1 <= t.hi:
            sp.add(-1)
        self.special_ints = sorted(sp)
        self.specials = [t.lit(v) for v in self.special_ints] + t.extra

    def v_of_k(self, k):
        return self.base + self.dir * k * self.stride

    def data_expr(self, r, k, s):
        """SQL value from per-row random columns r (kind), k (rank), s (special)."""
        normal = self.t.conv(f"('{self.base}'::int8 + ({self.dir}) * ({k}) * '{self.stride}'::int8)")
        arr = f"(ARRAY[{', '.join(self.specials)}]::{self.t.sql}[])"
        return (f"CASE WHEN {r} < {self.null_frac} THEN NULL "
                f"WHEN {r} < {self.null_frac + self.special_frac} THEN {arr}[1 + {s} % {len(self.specials)}] "
                f"ELSE {normal} END")

    def rank_expr(self):
        return f"floor(power(random(), {self.skew}) * {self.card})::int8"

    # -- query constants -------------------------------------------------
    def const_int(self, rng):
        """An integer in the domain near the data (or at its ends)."""
        t = self.t
        x = rng.random()
        if x < 0.12:
            return rng.choice(self.special_ints)
        k = rng.randint(-2, self.card + 1)
        v = self.v_of_k(k)
        if rng.random() < 0.1 and self.stride > 1:
            v += rng.choice([-1, 1])
        return min(max(v, t.lo), t.hi)

    def const(self, rng, cross_ok=True):
        """SQL constant for this column: same type, sometimes cross-type,
        sometimes a non-integer special, sometimes out of the column's range
        (as a wider integer type)."""
        t = self.t
        x = rng.random()
        if t.extra and x < 0.08:
            return rng.choice(t.extra)
        v = self.const_int(rng)
        if not cross_ok or not t.cross or rng.random() < 0.7:
            return t.lit(v)
        other = rng.choice(t.cross)
        if t.name in INT_RANGE:
            lo, hi = INT_RANGE[other]
            if rng.random() < 0.25 and INT_RANGE[other][1] > t.hi:
                v = rng.choice([t.hi + 1, t.lo - 1, hi, lo])
            if not (lo <= v <= hi):
                return t.lit(v)
            return f"'{v}'::{other}"
        if t.name == 'date':
            if v > 106741034:     # 294276-12-31, the last date a timestamp holds
                return t.lit(v)
            return f"({t.lit(v)})::{other}"
        if t.name in ('timestamp', 'timestamptz'):
            if other == 'date':
                d = v // US_PER_DAY
                d = min(max(d, TYPES['date'].lo), TYPES['date'].hi)
                return TYPES['date'].lit(d)
            return f"({t.lit(v)})::{other}"
        return t.lit(v)

    def const_list(self, rng, n):
        """n constants of ONE type (for IN lists and arrays)."""
        return [self.t.lit(self.const_int(rng)) for _ in range(n)]


class Pad:
    """The wide text column only used as an INCLUDE column."""

    def __init__(self, width):
        self.name = 'pad'
        self.t = TYPES['text']
        self.width = width


class Key:
    def __init__(self, col, desc, nulls_first):
        self.col = col
        self.desc = desc
        self.nulls_first = nulls_first

    def ddl(self):
        return (f"{self.col.name}{' DESC' if self.desc else ''}"
                f" NULLS {'FIRST' if self.nulls_first else 'LAST'}")

    def order(self, backward):
        desc = self.desc != backward
        nf = self.nulls_first != backward
        return f"{self.col.name} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nf else 'LAST'}"


class Index:
    def __init__(self, name, keys, include, unique, nnd, opts):
        self.name = name
        self.keys = keys
        self.include = include
        self.unique = unique
        self.nnd = nnd
        self.opts = opts

    @property
    def supported(self):
        return len(self.keys) <= 8 and all(k.col.t.supported for k in self.keys)

    def shape(self):
        s = ','.join(f"{k.col.t.name}{'-' if k.desc else ''}{'N' if k.nulls_first else ''}"
                     for k in self.keys)
        if self.include:
            s += ' +' + ','.join(c.t.name for c in self.include)
        if self.unique:
            s = 'U' + ('nnd' if self.nnd else '') + ' ' + s
        return s

    def ddl(self, table):
        inc = f" INCLUDE ({', '.join(c.name for c in self.include)})" if self.include else ''
        nnd = ' NULLS NOT DISTINCT' if self.nnd else ''
        w = f" WITH ({', '.join(self.opts)})" if self.opts else ''
        return (f"CREATE {'UNIQUE ' if self.unique else ''}INDEX {self.name} ON {table} "
                f"({', '.join(k.ddl() for k in self.keys)}){inc}{nnd}{w}")

    def cols(self):
        return [k.col for k in self.keys] + list(self.include)


# --------------------------------------------------------------------------
# The SQL script of one round, with markers psql echoes so that the output
# can be split per statement and per query mode.
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


class Round:
    def __init__(self, seed, rnd, args):
        self.seed = seed
        self.rnd = rnd
        self.args = args
        self.rng = random.Random(f"{seed}:{rnd}")
        self.table = f"dt{rnd}"
        self.queries = []
        self.script = []
        self.qcounter = 0
        self.build_shape()

    # -- shape -----------------------------------------------------------
    def pick_type(self, p_supported=0.85):
        rng = self.rng
        if rng.random() < p_supported:
            return rng.choice(SUPPORTED + ['int4', 'int8', 'int4'])
        return rng.choice(UNSUPPORTED)

    def build_shape(self):
        rng = self.rng
        ncols = rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 8, 10])
        all_supported = rng.random() < 0.6
        self.cols = [Column(rng, f"c{i + 1}",
                            self.pick_type(1.0 if all_supported else 0.7))
                     for i in range(ncols)]
        self.nrows = rng.choice([0, 1, 40, 400, 2000, 2000, 6000, 12000, 12000, 25000])
        # a wide non-key column, INCLUDEd by some indexes: few tuples per
        # leaf page, so many leaves and deeper trees for the same row count
        self.pad = None
        if rng.random() < 0.35:
            self.pad = Pad(rng.choice([100, 300, 700]))
        self.indexes = []
        nidx = rng.choice([1, 1, 2, 2, 3])
        for j in range(nidx):
            nk = rng.randint(1, min(ncols, 8))
            if ncols > 8 and rng.random() < 0.3:
                nk = ncols        # more key columns than the module covers
            kcols = rng.sample(self.cols, nk)
            keys = []
            for c in kcols:
                desc = rng.random() < 0.35
                nf = desc if rng.random() < 0.6 else (not desc)
                keys.append(Key(c, desc, nf))
            rest = [c for c in self.cols if c not in kcols]
            include = rng.sample(rest, min(len(rest), rng.choice([0, 0, 0, 1, 2])))
            if self.pad is not None and rng.random() < 0.7:
                include.append(self.pad)
            unique = rng.random() < 0.2
            nnd = unique and rng.random() < 0.3
            opts = []
            if rng.random() < 0.4:
                opts.append(f"fillfactor = {rng.choice([10, 10, 30, 70, 100])}")
            if rng.random() < 0.2:
                opts.append("deduplicate_items = off")
            self.indexes.append(Index(f"{self.table}_i{j}", keys, include,
                                      unique, nnd, opts))
        # unique indexes exist before the data (ON CONFLICT DO NOTHING keeps
        # them valid); others before or after (insert-built vs sorted build)
        self.pre = [ix for ix in self.indexes if ix.unique or rng.random() < 0.4]
        self.post = [ix for ix in self.indexes if ix not in self.pre]

    def describe(self):
        cols = ', '.join(f"{c.name} {c.t.name}" for c in self.cols)
        idx = '; '.join(f"{ix.name}({ix.shape()})" for ix in self.indexes)
        return f"table {self.table}({cols}) rows={self.nrows}: {idx}"

    # -- script helpers --------------------------------------------------
    def snap(self, n):
        """Compiled page searches of this round's indexes so far."""
        if not self.args.no_module:
            self.step(f"snap{n}", "SELECT coalesce(sum(jit_searches), 0) FROM btree_jit_index_stats() "
                      f"WHERE indexrelid::text LIKE '{self.table}\\_%'")

    def step(self, label, sql):
        sql = sql.rstrip()
        if not sql.endswith(';') and '\\g ' not in sql:
            sql += ';'
        self.script.append(f"\\echo @@S {label}\n{sql}\n{ERRCHECK}")

    def insert_sql(self, n, first_id):
        rng = self.rng
        parts = []
        for i, c in enumerate(self.cols):
            parts.append(f"random() AS r{i}, {c.rank_expr()} AS k{i}, "
                         f"floor(random() * 1000)::int AS s{i}")
        vals = [c.data_expr(f"r{i}", f"k{i}", f"s{i}") for i, c in enumerate(self.cols)]
        if self.pad is not None:
            vals.append(f"repeat(chr(97 + (id % 26)::int), {self.pad.width})")
        conflict = " ON CONFLICT DO NOTHING" if any(ix.unique for ix in self.indexes) else ''
        return (f"WITH g AS MATERIALIZED (SELECT g AS id, {', '.join(parts)} "
                f"FROM generate_series({first_id}, {first_id + n - 1}) g)\n"
                f"INSERT INTO {self.table} SELECT id, {', '.join(vals)} FROM g"
                f" ORDER BY {rng.choice(['id', 'random()', 'k0'])}{conflict}")

    # -- queries -----------------------------------------------------------
    def settings(self, kind):
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
                  "SET enable_material = off"]
        else:
            s += ["RESET enable_hashjoin", "RESET enable_mergejoin", "RESET enable_material"]
        if kind == 'parallel':
            s += ["SET max_parallel_workers_per_gather = 2", "SET parallel_setup_cost = 0",
                  "SET parallel_tuple_cost = 0", "SET min_parallel_index_scan_size = 0",
                  "SET min_parallel_table_scan_size = 0"]
        else:
            s += ["SET max_parallel_workers_per_gather = 0"]
        return s

    def pred_eq(self, c):
        a = c.const(self.rng)
        return f"{a} = {c.name}" if self.rng.random() < 0.15 else f"{c.name} = {a}"

    def pred_range(self, c):
        rng = self.rng
        a, b = c.const(rng), c.const(rng)
        return rng.choice([
            f"{c.name} > {a}", f"{c.name} >= {a}", f"{c.name} < {a}", f"{c.name} <= {a}",
            f"{c.name} BETWEEN {a} AND {b}", f"{c.name} > {a} AND {c.name} <= {b}",
            f"{a} < {c.name}", f"{c.name} >= {a} AND {c.name} < {b}",
            f"{c.name} > {a} AND {c.name} > {b}",
        ])

    def pred_in(self, c):
        rng = self.rng
        vals = c.const_list(rng, rng.randint(1, 6))
        if rng.random() < 0.2:
            vals.append(f"NULL::{c.t.sql}")
        arr = f"ARRAY[{', '.join(vals)}]::{c.t.sql}[]"
        if rng.random() < 0.25 and c.t.name in INT_RANGE:
            other = rng.choice(c.t.cross)
            vs = [str(min(max(c.const_int(rng), INT_RANGE[other][0]), INT_RANGE[other][1]))
                  for _ in range(rng.randint(1, 5))]
            arr = f"ARRAY[{', '.join(vs)}]::{other}[]"
        return rng.choice([
            f"{c.name} IN ({', '.join(vals)})",
            f"{c.name} = ANY ({arr})",
            f"{c.name} = ANY ({arr})",
            f"{c.name} < ANY ({arr})",
            f"{c.name} >= ANY ({arr})",
        ])

    def pred_null(self, c):
        rng = self.rng
        return rng.choice([f"{c.name} IS NULL", f"{c.name} IS NOT NULL",
                           f"{c.name} IS NULL", f"{c.name} IS NOT NULL AND {self.pred_range(c)}"])

    def pred_last(self, c):
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
        if ios:
            return ', '.join(c.name for c in ix.cols())
        return self.rng.choice(['*', '*', 'id, ' + ', '.join(c.name for c in ix.cols())])

    def order_by(self, ix, start=0, backward=None):
        rng = self.rng
        if backward is None:
            backward = rng.random() < 0.5
        n = rng.randint(1, len(ix.keys))
        keys = ix.keys[start:max(n, start + 1)] or ix.keys[-1:]
        return "ORDER BY " + ', '.join(k.order(backward) for k in keys)

    def limit(self):
        return self.rng.choice(['', ' LIMIT 1', ' LIMIT 3', ' LIMIT 25', ' LIMIT 200', ''])

    def add(self, kind, ix, sql=None, cursor=None, ordered=True, skind=None):
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
            if rng.random() < 0.1:
                preds.append(f"{k.col.name} IS NULL")
            else:
                preds.append(self.pred_eq(k.col))
        if p < len(ix.keys) and rng.random() < 0.8:
            preds.append(self.pred_last(ix.keys[p].col))
        if not preds:
            preds.append(self.pred_last(ix.keys[0].col))
        return preds, p

    def gen_query(self):
        rng = self.rng
        ix = rng.choice(self.indexes)
        t = self.table
        kind = rng.choices(
            ['prefix', 'range', 'row', 'order', 'cursor', 'nestloop', 'ios',
             'bitmap', 'nonlead', 'count', 'parallel'],
            weights=[25, 12, 10, 8, 8, 6, 10, 5, 3, 5, 2])[0]
        if kind in ('prefix', 'ios', 'bitmap', 'parallel', 'count'):
            preds, p = self.where_prefix(ix)
            ios = kind == 'ios'
            sel = 'count(*)' if kind == 'count' else self.select_list(ix, ios)
            sql = f"SELECT {sel} FROM {t} WHERE {' AND '.join(preds)}"
            if kind in ('prefix', 'ios') and rng.random() < 0.5:
                sql += ' ' + self.order_by(ix, start=0) + self.limit()
            elif kind in ('prefix', 'ios'):
                sql += self.limit()
            return self.add(kind, ix, sql=sql, ordered=(kind != 'parallel'))
        if kind == 'range':
            c = ix.keys[0].col
            sql = (f"SELECT {self.select_list(ix, rng.random() < 0.3)} FROM {t} "
                   f"WHERE {self.pred_range(c)} {self.order_by(ix)}{self.limit()}")
            return self.add(kind, ix, sql=sql)
        if kind == 'row':
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
        if kind == 'order':
            where = ''
            if rng.random() < 0.5:
                preds, _ = self.where_prefix(ix)
                where = f"WHERE {' AND '.join(preds)} "
            sql = (f"SELECT {self.select_list(ix, rng.random() < 0.3)} FROM {t} {where}"
                   f"{self.order_by(ix)} LIMIT {rng.choice([1, 2, 10, 50])}")
            return self.add(kind, ix, sql=sql)
        if kind == 'cursor':
            where = ''
            if rng.random() < 0.7:
                preds, _ = self.where_prefix(ix)
                where = f"WHERE {' AND '.join(preds)} "
            sel = (f"SELECT {self.select_list(ix, rng.random() < 0.3)} FROM {t} {where}"
                   f"{self.order_by(ix)}")
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
        if kind == 'nestloop':
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
        # nonlead: predicates only on later key columns (index used as a filter)
        if len(ix.keys) > 1:
            c = rng.choice(ix.keys[1:]).col
            sql = f"SELECT * FROM {t} WHERE {self.pred_last(c)} {self.order_by(ix)}{self.limit()}"
        else:
            sql = f"SELECT * FROM {t} WHERE {self.pred_null(ix.keys[0].col)}{self.limit()}"
        return self.add('nonlead', ix, sql=sql)

    def emit_queries(self, n):
        rng = self.rng
        for _ in range(n):
            q = self.gen_query()
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

    # -- the round -------------------------------------------------------
    def build_script(self):
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
                  + ', '.join(f"{c.name} {c.t.sql}" for c in self.cols)
                  + (', pad text' if self.pad is not None else '')
                  + ") WITH (autovacuum_enabled = off)")
        for ix in self.pre:
            self.step(f'index {ix.name}', ix.ddl(t))
        if self.nrows:
            self.step('load', self.insert_sql(self.nrows, 1))
        for ix in self.post:
            self.step(f'index {ix.name}', ix.ddl(t))
        self.step('vacuum1', f"VACUUM ANALYZE {t}")
        nq = self.args.queries
        self.snap(0)
        self.emit_queries(nq // 2)
        self.snap(1)
        # write phase: deletes (random and a key range, so that whole pages
        # empty and VACUUM deletes them), updates of key columns (unique
        # violations caught per row), inserts (page splits, conflicts)
        ix0 = rng.choice(self.indexes)
        k0 = ix0.keys[0].col
        self.step('delete', f"DELETE FROM {t} WHERE random() < {rng.choice([0.05, 0.3, 0.7])}")
        if self.nrows:
            self.step('delete-range', f"DELETE FROM {t} WHERE {self.pred_range(k0)}")
        c = rng.choice(self.cols)
        self.step('update', f"""DO $$
DECLARE r record; n int := 0;
BEGIN
  FOR r IN SELECT ctid FROM {t} WHERE random() < 0.05 LOOP
    BEGIN
      UPDATE {t} SET {c.name} = (SELECT {c.data_expr('y.r', 'y.k', 'y.s')} FROM
               (SELECT random() AS r, {c.rank_expr()} AS k, floor(random() * 1000)::int AS s) y)
       WHERE ctid = r.ctid;
    EXCEPTION WHEN unique_violation THEN n := n + 1;
    END;
  END LOOP;
END $$""")
        if rng.random() < 0.7:
            self.step('vacuum2', f"VACUUM {t}")
        self.step('insert2', self.insert_sql(max(self.nrows // 2, 20), self.nrows + 1))
        # duplicate rows of existing keys (posting lists, unique conflicts
        # through the exception path)
        self.step('insert-dups', f"""DO $$
DECLARE n int := 0; r record;
BEGIN
  FOR r IN SELECT ctid AS tid FROM {t} WHERE random() < 0.05 LIMIT 300 LOOP
    BEGIN
      INSERT INTO {t} SELECT * FROM {t} WHERE ctid = r.tid;
    EXCEPTION WHEN unique_violation THEN n := n + 1;
    END;
  END LOOP;
END $$""")
        self.step('vacuum3', f"VACUUM ANALYZE {t}" if rng.random() < 0.6 else f"ANALYZE {t}")
        self.snap(2)
        first_late = len(self.queries)
        self.emit_queries(nq - nq // 2)
        self.late = {q.qid for q in self.queries[first_late:]}
        self.snap(3)
        # the verify sweep: every index's last query once more, in verify
        # mode.  An index whose compile threshold was crossed by its last
        # queries, after the last one in verify mode, still runs its
        # compiled search under verify; and a query of the second half,
        # whose data has not changed since, must return what 'off' did.
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
        # amcheck every index, with the module on and verify on
        self.script.append("SET btree_jit.enabled = on; SET btree_jit.verify = on;")
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
        return '\n'.join(self.script) + '\n'


# --------------------------------------------------------------------------
# running psql and reading its output
# --------------------------------------------------------------------------

def run_psql(args, script, timeout):
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
    def __init__(self, args):
        self.args = args
        self.compared = 0
        self.failures = []
        self.rounds = 0
        self.kinds = {}
        self.both_error = 0
        self.idx_jit = 0
        self.idx_supported = 0
        self.idx_stock_ok = 0
        self.idx_other = 0
        self.idx_pending = 0
        self.idx_unused = 0
        self.levels = {}
        self.query_jit = 0
        self.declined = 0
        self.amchecks = 0
        self.jit_searches = 0
        self.verified = 0
        self.shapes = set()
        self.swept = 0
        self.swept_compared = 0

    def fail(self, rnd, what):
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
        for label, lines in steps.items():
            errs = [x for x in lines if x.startswith('@@ERR')]
            if errs:
                self.fail(rnd, f"step '{label}' failed: {errs[0]}")
            if label.startswith('amcheck') and not errs:
                self.amchecks += 1
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
        for q in rnd.sweep:
            got = qs.get((q.qid, 'sweep'))
            if got is None:
                self.fail(rnd, f"the verify sweep of query {q.qid} has no output (script aborted?)")
            elif module_error(got):
                self.fail(rnd, f"the verify sweep of query {q.qid} (index {q.index.name} "
                          f"{q.index.shape()}) raised {module_error(got)}\n"
                          f"    query: {q.text()}")
            elif q.qid in rnd.late and got != qs.get((q.qid, 'off')):
                self.fail(rnd, f"the verify sweep of query {q.qid} (index {q.index.name} "
                          f"{q.index.shape()}) differs from its 'off' run\n    query: {q.text()}")
            else:
                self.swept += 1
                self.swept_compared += q.qid in rnd.late
        # was the compiled path used?
        if not args.no_module:
            try:
                sn = [int(steps[f"snap{i}"][0]) for i in range(4)]
                qjit = sn[1] - sn[0] + sn[3] - sn[2]
            except (KeyError, IndexError, ValueError):
                qjit = -1
            self.query_jit += max(qjit, 0)
            if qjit <= 0 and any(ix.supported for ix in rnd.indexes) and rnd.threshold == 0:
                self.fail(rnd, f"the queries made no compiled page search ({qjit})")
            if not stats or any(x.startswith('@@ERR') for x in stats):
                self.fail(rnd, f"btree_jit_index_stats() gave nothing: {stats[:2]}")
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
                        self.fail(rnd, f"index {ix.name} ({ix.shape()}) missing from btree_jit_index_stats()")
                    elif (rnd.threshold > 0 and f[1] == 'pending'
                          and int(f[5]) < rnd.threshold):
                        self.idx_pending += 1   # not searched often enough yet
                    elif f[1] not in ('jit', 'pending') or int(f[4]) == 0 or int(f[7]) == 0:
                        # ('pending' after compiled searches: a relcache
                        # invalidation, e.g. by VACUUM, reset the state and
                        # the index was not searched again)
                        self.fail(rnd, f"index {ix.name} ({ix.shape()}) is covered but the compiled "
                                  f"path was not exercised: state={f[1]} reason={f[2]!r} "
                                  f"jit_searches={f[4]} verified={f[7]}")
                    else:
                        self.idx_jit += 1
                        self.jit_searches += int(f[4])
                        self.verified += int(f[7])
                elif f is not None and f[1] == 'stock' and int(f[4]) == 0:
                    self.idx_stock_ok += 1
                else:
                    self.idx_other += 1
                    if args.verbose:
                        print(f"  index {ix.name} ({ix.shape()}) not covered: {f}")
        print(f"  {len(rnd.queries)} queries x 3 modes, {dt:.1f}s"
              f"{'  FAILED' if rnd.failed else ''}", flush=True)
        if rnd.failed:
            self.save(rnd, script, err)
        elif args.verbose and err.strip():
            print("  stderr: " + err.strip()[:500])
        if not rnd.failed or not args.keep_tables:
            run_psql(args, f"DROP TABLE IF EXISTS {rnd.table};", 60)

    def save(self, rnd, script, err):
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


def main():
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
    print(f"differential: {run.idx_supported} covered indexes ({len(run.shapes)} distinct shapes), "
          f"{run.idx_jit} compiled and exercised (jit_searches {run.jit_searches}, of them "
          f"{run.query_jit} by the compared queries, "
          f"verified_searches {run.verified}), {run.idx_pending} below compile_threshold, "
          f"{run.idx_unused} never chosen by the planner; {run.idx_stock_ok} uncovered indexes stayed stock, "
          f"{run.idx_other} other; {run.amchecks} amcheck runs clean")
    if not args.no_module:
        print("differential: index tree heights (root level: count) "
              + ', '.join(f"{k}: {v}" for k, v in sorted(run.levels.items()))
              + f"; {run.declined} page searches declined by the compiled code's guards; "
              f"verify sweep: {run.swept} queries ({run.swept_compared} compared with 'off')")
    # machine-readable summary for the suite script
    print(f"@@SUMMARY compared={run.compared} failures={len(run.failures)} rounds={run.rounds} "
          f"amchecks={run.amchecks} idx_supported={run.idx_supported - run.idx_pending - run.idx_unused} idx_jit={run.idx_jit} "
          f"jit_searches={run.jit_searches} verified={run.verified}")
    if run.failures:
        print(f"differential: {len(run.failures)} FAILURES (seed {args.seed}); replay a round with "
              f"test/suite-differential.sh --seed {args.seed} --round R")
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
