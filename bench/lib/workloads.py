"""bench/lib/workloads.py - read bench/workloads/*.sql.

A workload file is plain SQL with directives in comments:

  -- @kind sql|pgbench|latency|parallel
                                   how it is measured (see bench/README.md)
  -- @uses data_x [data_y ...]     data files (bench/workloads/data_x.sql)
                                   built once per run, before anything else
  -- @index name [name ...]        indexes whose JIT use is verified
  -- @unit probe                   what one of {N} is (for "per probe")
  -- @title text                   one line for --list
  -- @n_full 500000                {N} for perf counts (the nominal size)
  -- @n_timing 200000              {N} for timing rounds (default n_full)
  -- @n_callgrind 20000            {N} for callgrind counts (scaled down)
  -- @n_warm 1000                  warm-up {N} in every run (default 1000;
                                   passes btree_jit.compile_threshold)
  -- @target 1.25                  instruction target (off/on), or -
  -- @throughput_target 0.99       throughput target (on/off)
  -- @pgbench ARGS / @clients 1 2 / @scale 20 / @rounds 5
  -- @param NAME DEFAULT           a placeholder {NAME} and its value; an
                                   instance (INSTANCES below) reads the
                                   same file with other values

  Every {NAME} a file declares with @param is replaced, in the whole file
  (directives included), before anything else is read; {N}, {AID} and any
  undeclared {X} are left alone.  Data files take @param too.

  -- @plan nested_loop               the session opens with PLAN_SETTINGS'
                                   lines for that plan (a nested loop of
                                   index probes: no JIT, memoize, hash or
                                   merge join, material, bitmap scan)
  -- @section session|round_setup|warmup|teardown
  -- @query NAME description       a measured statement; {N} = count
  -- @repeat                       (inside a query) repeat its one line
                                   {N} times, {AID} = a pseudo-random key
                                   (pgbench workloads); a line without
                                   {AID} is repeated as it is (the build_*
                                   workloads' CREATE INDEX: {N} builds)
  -- @counts none                  time only: no instruction counts (a
                                   parallel build: single-user mode starts
                                   no workers)
  -- @ceiling none                 no ceiling column: the workload's gain is
                                   not in the page search (a build's sort)

Statements end with ';' at the end of a line (dollar-quoted bodies may
contain such lines).  Full-line '--' comments are dropped.
"""

import os
import re

WORKLOAD_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "workloads")

# The order of --all, and of the table.
ALL_WORKLOADS = [
    "probe_int4",
    "probe_int8",
    "probe_composite",
    "probe_composite_shapes",
    "probe_composite_text",
    "probe_crosstype",
    "probe_asof",
    "probe_uuid",
    "probe_text_c",
    "probe_email",
    "probe_float8",
    "probe_numeric",
    "probe_text_icu",
    "probe_interval",
    "range_scan",
    "range_scan_ios",
    "probe_inlist",
    "parallel_range",
    "insert_random",
    "pgbench_select",
    "pgbench_connect",
    "compile_latency",
]
HEADLINE = ["probe_int4"]

# bench/run --working-set: probe_int4's workload at three table sizes, by
# the size's name (an index that fits in the L3, ~1.4x it, ~14x it on a
# 32 MiB L3).  The two extra sizes are not part of --all.
WORKING_SET = {"100k": "probe_int4_100k", "2m": "probe_int4", "20m": "probe_int4_20m"}
WORKING_SET_ONLY = ["probe_int4_100k", "probe_int4_20m"]

# Not part of --all either: the index builds (build_*), whose 'on' arm
# compiles each key shape under callgrind (about 4 minutes a shape here)
# and counts builds of 1M rows; bench/README.md, "Index builds".
BUILDS = ["build_int4x3", "build_int4x3_sorted", "build_int8_text", "build_text_icu", "build_unique",
          "build_desc", "build_uuid", "build_parallel"]

# Parametrised instances: name -> (the file it is read from, the values of
# the file's @param placeholders).  The extra working-set sizes are
# probe_int4.sql and data_int4.sql at another row count, on tables of
# their own (t4s/p4s at 100k, t4x/p4x at 20m: the names they always had).
INSTANCES = {}
for _size, _rows, _sfx in (("100k", 100000, "s"), ("20m", 20000000, "x")):
    INSTANCES["data_int4_" + _size] = ("data_int4", {"ROWS": str(_rows), "SFX": _sfx})
    INSTANCES["probe_int4_" + _size] = ("probe_int4", {
        "ROWS": str(_rows), "SFX": _sfx, "DATA": "data_int4_" + _size,
        "LABEL": "%s rows (working set)" % _size, "TARGET": "-"})

# -- @plan NAME: the settings every session of such a workload starts with.
PLAN_SETTINGS = {
    "nested_loop": ["SET jit = off;",
                    "SET enable_memoize = off;",
                    "SET enable_hashjoin = off;",
                    "SET enable_mergejoin = off;",
                    "SET enable_material = off;",
                    "SET enable_bitmapscan = off;"],
}

PARAM_RE = re.compile(r"^--\s*@param\s+(\w+)\s*(.*?)\s*$")


def read_filled(name):
    """(path, text) of workload or data file `name` (or of the file an
    instance is read from) with its @param placeholders filled in."""
    base, values = INSTANCES.get(name, (name, {}))
    path = os.path.join(WORKLOAD_DIR, base + ".sql")
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    with open(path) as f:
        text = f.read()
    params = {}
    for line in text.splitlines():
        m = PARAM_RE.match(line)
        if m:
            params[m.group(1)] = m.group(2)
    for k in ("N", "AID"):
        if k in params:
            raise ValueError("%s: {%s} is the driver's, not a @param" % (path, k))
    unknown = sorted(set(values) - set(params))
    if unknown:
        raise ValueError("%s: instance %s sets undeclared @param %s" % (path, name, ", ".join(unknown)))
    params.update(values)
    for k, v in params.items():
        text = text.replace("{%s}" % k, v)
    return path, text


def split_statements(text):
    """Split SQL text into statements (each ending with ';')."""
    stmts, cur, in_dollar = [], [], False
    for line in text.splitlines():
        s = line.strip()
        if not in_dollar and (s == "" or s.startswith("--")):
            continue
        cur.append(line.rstrip())
        if line.count("$$") % 2 == 1:
            in_dollar = not in_dollar
        if not in_dollar and s.endswith(";"):
            stmts.append("\n".join(cur))
            cur = []
    if cur:
        stmts.append("\n".join(cur))
    return stmts


class Query:
    def __init__(self, name, desc):
        self.name = name
        self.desc = desc
        self.lines = []
        self.repeat = False

    @property
    def sql(self):
        return "\n".join(self.lines).strip()

    def statements(self, n, aids=None):
        """The statements of this query for count n."""
        if self.repeat:
            line = self.sql
            if aids is None and "{AID}" not in line:
                return [line] * n
            return [line.replace("{AID}", str(a)) for a in aids(n)]
        return [s.replace("{N}", str(n)) for s in split_statements(self.sql)]


class Workload:
    def __init__(self, name):
        self.name = name
        self.path, self.text = read_filled(name)
        self.meta = {}
        self.sections = {}
        self.queries = []
        self._parse()

    def _parse(self):
        cur = None
        for line in self.text.splitlines():
            m = re.match(r"^--\s*@(\w+)\s*(.*?)\s*$", line)
            if m:
                key, val = m.group(1), m.group(2)
                if key == "param":
                    continue
                if key == "plan":
                    if val not in PLAN_SETTINGS:
                        raise ValueError("%s: unknown @plan %s (known: %s)"
                                         % (self.path, val, ", ".join(sorted(PLAN_SETTINGS))))
                    self.sections.setdefault("session", [])[:0] = PLAN_SETTINGS[val]
                elif key == "section":
                    cur = self.sections.setdefault(val, [])
                elif key == "query":
                    name, _, desc = val.partition(" ")
                    q = Query(name, desc or name)
                    self.queries.append(q)
                    cur = q.lines
                elif key == "repeat":
                    if not self.queries or cur is not self.queries[-1].lines:
                        raise ValueError("%s: @repeat outside a @query" % self.path)
                    self.queries[-1].repeat = True
                else:
                    self.meta[key] = val
                continue
            if cur is not None:
                cur.append(line.rstrip("\n"))

    def section(self, name):
        return split_statements("\n".join(self.sections.get(name, [])))

    def get(self, key, default=None):
        return self.meta.get(key, default)

    def getint(self, key, default=None):
        v = self.meta.get(key)
        return int(v) if v not in (None, "", "-") else default

    def getfloat(self, key):
        v = self.meta.get(key)
        return float(v) if v not in (None, "", "-") else None

    @property
    def kind(self):
        return self.meta.get("kind", "sql")

    @property
    def uses(self):
        return self.meta.get("uses", "").split()

    @property
    def indexes(self):
        return self.meta.get("index", "").split()


class DataFile:
    """A data file (or an instance of one), its @param placeholders filled
    in: build it from .text, not from the file at .path."""

    def __init__(self, name):
        self.name = name
        self.path, self.text = read_filled(name)
        m = re.search(r"^--\s*@pgbench_init\s+(.*?)\s*$", self.text, re.M)
        self.pgbench_init = m.group(1).split() if m else None


def load(name):
    return Workload(name)


def available():
    """The workload names: --all's order, then the rest (files that are not
    data, and INSTANCES of workload files) by name."""
    names = list(INSTANCES)
    for f in sorted(os.listdir(WORKLOAD_DIR)):
        if f.endswith(".sql") and not f.startswith("data_"):
            names.append(f[:-4])
    names = sorted(n for n in names if not n.startswith("data_"))
    ordered = [n for n in ALL_WORKLOADS if n in names]
    return ordered + [n for n in names if n not in ordered]
