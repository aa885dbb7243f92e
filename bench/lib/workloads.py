"""bench/lib/workloads.py - read bench/workloads/*.sql.

A workload file is plain SQL with directives in comments:

  -- @kind sql|pgbench|latency     how it is measured (see bench/README.md)
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

  -- @section session|round_setup|warmup|teardown
  -- @query NAME description       a measured statement; {N} = count
  -- @repeat                       (inside a query) repeat its one line
                                   {N} times, {AID} = a pseudo-random key

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
    "probe_uuid",
    "probe_text_c",
    "probe_email",
    "probe_float8",
    "probe_numeric",
    "probe_text_icu",
    "probe_interval",
    "range_scan",
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
            return [line.replace("{AID}", str(a)) for a in aids(n)]
        return [s.replace("{N}", str(n)) for s in split_statements(self.sql)]


class Workload:
    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.meta = {}
        self.sections = {}
        self.queries = []
        self._parse()

    def _parse(self):
        cur = None
        with open(self.path) as f:
            for line in f:
                m = re.match(r"^--\s*@(\w+)\s*(.*?)\s*$", line)
                if m:
                    key, val = m.group(1), m.group(2)
                    if key == "section":
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
    def __init__(self, name):
        self.name = name
        self.path = os.path.join(WORKLOAD_DIR, name + ".sql")
        with open(self.path) as f:
            self.text = f.read()
        m = re.search(r"^--\s*@pgbench_init\s+(.*?)\s*$", self.text, re.M)
        self.pgbench_init = m.group(1).split() if m else None


def load(name):
    path = os.path.join(WORKLOAD_DIR, name + ".sql")
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    return Workload(name, path)


def available():
    names = []
    for f in sorted(os.listdir(WORKLOAD_DIR)):
        if f.endswith(".sql") and not f.startswith("data_"):
            names.append(f[:-4])
    ordered = [n for n in ALL_WORKLOADS if n in names]
    return ordered + [n for n in names if n not in ordered]
