"""test/differential/keytypes.py - the key types of the differential generator.

Every value of a column is generated from an integer v in the type's
integer domain [lo, hi] through conv(sql_int8_expression), plus a few
non-integer special literals (infinities, NaN, ...).  The same conv is used
for data (server side, from random()) and for query constants (Python side,
from a Python int), so constants land on, between and around the stored
values.

Adding a type is one entry in TYPES: its SQL name, integer domain and conv;
optionally its special literals (extra), whether the module compiles it
(supported), a fixed number of distinct values (card, e.g. bool), the
types its query constants may also be written in (cross) with the rule that
writes them (cross_const; the default casts the literal), and a collation
for the column (coll, e.g. an ICU or a nondeterministic one).  Columns,
data, predicates and the coverage checks follow from the entry.

Every B-tree operator class is compiled now (inline or by calling the
scankey's proc), so every type here is 'supported': each index must run
compiled code under verify.
"""

US_PER_DAY = 86400000000


def _ts_conv(base):
    """conv of a timestamp type: v microseconds from base."""
    def conv(e):
        return (f"({base} + (({e}) / {US_PER_DAY})::float8 * interval '1 day'"
                f" + (({e}) % {US_PER_DAY})::float8 * interval '1 microsecond')")
    return conv


def cross_cast(t, v, other, rng):
    """A constant of type t with value v, cast to type other."""
    return f"({t.lit(v)})::{other}"


def cross_int(t, v, other, rng):
    """An integer constant as another integer type: a quarter of them at or
    beyond t's range when other is wider (the cross-type comparison must
    still be right), written as t where v does not fit other."""
    lo, hi = TYPES[other].lo, TYPES[other].hi
    if rng.random() < 0.25 and hi > t.hi:
        v = rng.choice([t.hi + 1, t.lo - 1, hi, lo])
    if not (lo <= v <= hi):
        return t.lit(v)
    return f"'{v}'::{other}"


def cross_date(t, v, other, rng):
    """A date as a timestamp type (while the timestamp can hold it)."""
    if v > 106741034:     # 294276-12-31, the last date a timestamp holds
        return t.lit(v)
    return cross_cast(t, v, other, rng)


def cross_timestamp(t, v, other, rng):
    """A timestamp as the other timestamp type, or its day as a date."""
    if other == 'date':
        d = v // US_PER_DAY
        d = min(max(d, TYPES['date'].lo), TYPES['date'].hi)
        return TYPES['date'].lit(d)
    return cross_cast(t, v, other, rng)


class PgType:
    """One key type (see the file header)."""

    def __init__(self, name, sql, lo, hi, conv, extra=(), supported=True,
                 cross=(), cross_const=cross_cast, card=None, coll=''):
        self.name = name          # short name used in shapes
        self.sql = sql            # type as written in SQL
        self.lo = lo
        self.hi = hi
        self.conv = conv          # SQL int8 expression -> SQL value expression
        self.extra = list(extra)  # special literals outside the int domain
        self.supported = supported
        self.cross = cross        # names of other types for cross-type consts
        self.cross_const = cross_const  # (t, v, other, rng) -> SQL constant
        self.card = card          # a fixed number of distinct values, or None
        self.coll = coll          # collation of a column of this type, or ''

    def lit(self, v):
        """The SQL constant for integer v."""
        return self.conv(f"'{v}'::int8")

    @property
    def int_cross(self):
        """Whether the constants of other types are integers of another
        integer type (IN lists and arrays may then be of that type)."""
        return self.cross_const is cross_int


TYPES = {
    'int2': PgType('int2', 'int2', -32768, 32767, lambda e: f"({e})::int2",
                   cross=('int4', 'int8'), cross_const=cross_int),
    'int4': PgType('int4', 'int4', -2**31, 2**31 - 1, lambda e: f"({e})::int4",
                   cross=('int2', 'int8'), cross_const=cross_int),
    'int8': PgType('int8', 'int8', -2**63, 2**63 - 1, lambda e: f"({e})::int8",
                   cross=('int2', 'int4'), cross_const=cross_int),
    'oid': PgType('oid', 'oid', 0, 2**32 - 1, lambda e: f"({e})::int8::oid"),
    'char': PgType('char', '"char"', -128, 127,
                   lambda e: f"({e})::int4::\"char\""),
    'bool': PgType('bool', 'bool', 0, 1, lambda e: f"(({e}) <> 0)", card=2),
    'date': PgType('date', 'date', -2451545, 2145031948,
                   lambda e: f"('2000-01-01'::date + ({e})::int4)",
                   extra=("'-infinity'::date", "'infinity'::date"),
                   cross=('timestamp', 'timestamptz'), cross_const=cross_date),
    'time': PgType('time', 'time', 0, US_PER_DAY - 1,
                   lambda e: f"('00:00'::time + ({e})::float8 * interval '1 microsecond')",
                   extra=("'24:00:00'::time",)),
    'timestamp': PgType('timestamp', 'timestamp', -211813488000000000,
                        9223371331199999999,
                        _ts_conv("'2000-01-01 00:00:00'::timestamp"),
                        extra=("'-infinity'::timestamp", "'infinity'::timestamp"),
                        cross=('date', 'timestamptz'), cross_const=cross_timestamp),
    'timestamptz': PgType('timestamptz', 'timestamptz', -211813488000000000,
                          9223371331199999999,
                          _ts_conv("'2000-01-01 00:00:00+00'::timestamptz"),
                          extra=("'-infinity'::timestamptz",
                                 "'infinity'::timestamptz"),
                          cross=('date', 'timestamp'), cross_const=cross_timestamp),
    # strings: byte order under the database's "C" collation (inline)
    'text': PgType('text', 'text', -10**9, 10**9,
                   lambda e: f"('s' || ({e})::text)",
                   extra=("''::text", "'\u00e9'::text", "repeat('z', 300)",
                          "'\u00ff\u00ff'::text", "repeat('ab', 4000)",
                          "'s1 '::text"),
                   cross=('name', 'varchar')),
    # differing only after 70 bytes; long enough to be compressed sometimes
    'text_long': PgType('text_long', 'text', -10**12, 10**12,
                        lambda e: f"(repeat('p', 70) || ({e})::text)",
                        extra=("repeat('p', 70)", "repeat('p', 3000) || 'x'",
                               "repeat('p', 64)", "repeat('p', 71)")),
    'varchar': PgType('varchar', 'varchar', -10**9, 10**9,
                      lambda e: f"('user' || ({e})::text || '@example.com')::varchar",
                      extra=("''::varchar", "'user@'::varchar"),
                      cross=('text',)),
    'bpchar': PgType('bpchar', 'character(12)', -10**9, 10**9,
                     lambda e: f"('b' || ({e})::text)::character(12)",
                     extra=("''::character(12)", "'b  '::character(12)",
                            "'b'::character(12)"),
                     cross=('text',)),
    'bytea': PgType('bytea', 'bytea', -2**63, 2**63 - 1,
                    lambda e: f"decode(lpad(to_hex(({e})::int8), 16, '0'), 'hex')",
                    extra=("'\\x'::bytea", "'\\x00'::bytea", "'\\xff'::bytea",
                           "'\\x0000000000000000ff'::bytea")),
    'name': PgType('name', 'name', -10**9, 10**9,
                   lambda e: f"('n' || ({e})::text)::name",
                   extra=("''::name", "repeat('n', 63)::name"),
                   cross=('text',)),
    'uuid': PgType('uuid', 'uuid', -2**63, 2**63 - 1,
                   lambda e: f"(lpad(to_hex(({e})::int8), 16, '0') || lpad(to_hex(({e})::int8 # 6148914691236517205), 16, '0'))::uuid",
                   extra=("'00000000-0000-0000-0000-000000000000'::uuid",
                          "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid",
                          "'80000000-0000-0000-0000-000000000000'::uuid")),
    # text under linguistic collations: the proc is called with the index's
    # collation (libc, ICU, and a nondeterministic, case-insensitive one)
    'text_icu': PgType('text_icu', 'text', -10**9, 10**9,
                       lambda e: f"(CASE WHEN ({e}) % 3 = 0 THEN 'S' ELSE 's' END || ({e})::text)",
                       extra=("''::text", "'\u00e9'::text", "'E'::text", "'e'::text"),
                       coll=' COLLATE "en-US-x-icu"'),
    'text_ci': PgType('text_ci', 'text', -10**9, 10**9,
                      lambda e: f"(CASE WHEN ({e}) % 2 = 0 THEN 'K' ELSE 'k' END || ({e})::text)",
                      extra=("''::text", "'K'::text", "'k'::text"),
                      coll=' COLLATE btjit_ci'),
    'text_cutf8': PgType('text_cutf8', 'text', -10**9, 10**9,
                         lambda e: f"('u' || ({e})::text || '\u00e9')",
                         extra=("''::text", "'\u00e9'::text"),
                         coll=' COLLATE "C.utf8"'),
    'numeric': PgType('numeric', 'numeric', -10**15, 10**15,
                      lambda e: f"(({e})::numeric / 100)",
                      extra=("'NaN'::numeric", "'1e100'::numeric",
                             "'-1e-100'::numeric", "'0.000'::numeric",
                             "'Infinity'::numeric", "'-Infinity'::numeric",
                             "'-0.0'::numeric", "'1.00'::numeric",
                             "(repeat('9', 900) || '.5')::numeric")),
    'float8': PgType('float8', 'float8', -2**50, 2**50,
                     lambda e: f"(({e})::float8 / 8)",
                     extra=("'NaN'::float8", "'Infinity'::float8",
                            "'-Infinity'::float8", "'-0'::float8",
                            "'1e308'::float8"),
                     cross=('float4',)),
    'float4': PgType('float4', 'float4', -2**20, 2**20,
                     lambda e: f"(({e})::float4 / 8)",
                     extra=("'NaN'::float4", "'Infinity'::float4",
                            "'-Infinity'::float4", "'-0'::float4",
                            "'3e38'::float4"),
                     cross=('float8',)),
    'interval': PgType('interval', 'interval', -10**15, 10**15,
                       lambda e: f"(({e})::float8 * interval '1 microsecond')",
                       extra=("interval '1 month'", "interval '30 days'",
                              "interval '-1 year'")),
    'inet': PgType('inet', 'inet', 0, 2**32 - 1,
                   lambda e: f"('0.0.0.0'::inet + ({e})::int8)",
                   extra=("'::1'::inet", "'10.0.0.0/8'::inet", "'10.0.0.0'::inet")),
}
SUPPORTED = [t for t in TYPES if TYPES[t].supported]
UNSUPPORTED = [t for t in TYPES if not TYPES[t].supported]
# What a column of a supported type is drawn from: int4 and int8, the
# common keys, more often.  (A seed replays the same rounds only with the
# same TYPES: a new entry changes every draw.)
SUPPORTED_DRAW = SUPPORTED + ['int4', 'int8', 'int4']
# The collations the types use that initdb does not create.
SETUP_SQL = ("CREATE COLLATION IF NOT EXISTS btjit_ci "
             "(provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
