"""test/differential/shape.py - the random table of one round.

A round's table has a few columns of random key types (keytypes.py), each
with its own data distribution (cardinality, skew, NULLs, specials, where
in the type's domain), an optional wide pad column, and one to three
indexes on random subsets of the columns (key order, DESC, NULLS FIRST,
INCLUDE, UNIQUE [NULLS NOT DISTINCT], fillfactor, deduplication), built
before or after the data.  Column also writes the query constants that
land on, between and around the stored values.
"""

from keytypes import SUPPORTED_DRAW, TYPES, UNSUPPORTED, US_PER_DAY


class Column:
    """A table column and the distribution of its data."""

    def __init__(self, rng, name, tname):
        t = TYPES[tname]
        self.name = name
        self.t = t
        span = t.hi - t.lo
        self.card = rng.choice([1, 2, 3, 7, 50, 400, 5000, 100000])
        if t.card:
            self.card = t.card
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
        """The integer value of rank k."""
        return self.base + self.dir * k * self.stride

    def data_expr(self, r, k, s):
        """SQL value from per-row random columns r (kind), k (rank), s (special)."""
        normal = self.t.conv(f"('{self.base}'::int8 + ({self.dir}) * ({k}) * '{self.stride}'::int8)")
        arr = f"(ARRAY[{', '.join(self.specials)}]::{self.t.sql}[])"
        return (f"CASE WHEN {r} < {self.null_frac} THEN NULL "
                f"WHEN {r} < {self.null_frac + self.special_frac} THEN {arr}[1 + {s} % {len(self.specials)}] "
                f"ELSE {normal} END")

    def rank_expr(self):
        """SQL for a random rank k in [0, card), skewed towards 0."""
        return f"floor(power(random(), {self.skew}) * {self.card})::int8"

    def random_draws(self, suffix=''):
        """The per-row random columns data_expr reads: r (kind: NULL,
        special or normal), k (rank) and s (which special)."""
        return (f"random() AS r{suffix}, {self.rank_expr()} AS k{suffix}, "
                f"floor(random() * 1000)::int AS s{suffix}")

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
        return t.cross_const(t, v, other, rng)

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

class Shape:
    """The table of one round: columns, row count, pad and indexes, drawn
    from rng (the round's stream) in a fixed order."""

    def __init__(self, rng, table):
        self.rng = rng
        self.table = table
        self.build()

    def pick_type(self, p_supported=0.85):
        """A random key type: a supported one with probability p_supported."""
        rng = self.rng
        if rng.random() < p_supported or not UNSUPPORTED:
            return rng.choice(SUPPORTED_DRAW)
        return rng.choice(UNSUPPORTED)

    def build(self):
        """Draw the columns, row count, pad and indexes."""
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
        """One line: the table and its index shapes."""
        cols = ', '.join(f"{c.name} {c.t.name}" for c in self.cols)
        idx = '; '.join(f"{ix.name}({ix.shape()})" for ix in self.indexes)
        return f"table {self.table}({cols}) rows={self.nrows}: {idx}"

    def insert_sql(self, n, first_id):
        """INSERT of n rows of random data, ids from first_id (in id, random
        or first-column order; conflicts ignored where an index is unique)."""
        rng = self.rng
        parts = [c.random_draws(i) for i, c in enumerate(self.cols)]
        vals = [c.data_expr(f"r{i}", f"k{i}", f"s{i}") for i, c in enumerate(self.cols)]
        if self.pad is not None:
            vals.append(f"repeat(chr(97 + (id % 26)::int), {self.pad.width})")
        conflict = " ON CONFLICT DO NOTHING" if any(ix.unique for ix in self.indexes) else ''
        return (f"WITH g AS MATERIALIZED (SELECT g AS id, {', '.join(parts)} "
                f"FROM generate_series({first_id}, {first_id + n - 1}) g)\n"
                f"INSERT INTO {self.table} SELECT id, {', '.join(vals)} FROM g"
                f" ORDER BY {rng.choice(['id', 'random()', 'k0'])}{conflict}")

    # -- queries -----------------------------------------------------------
