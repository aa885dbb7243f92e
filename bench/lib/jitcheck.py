"""bench/lib/jitcheck.py - did the 'on' arm really run JIT code?

Every measurement ends with a check statement (check_sql) whose one text
value is the module's view of that backend: per watched index (@index) its
state, search counts, builds and code source, how many shapes the backend
compiled or loaded from the object cache, and the cluster-wide counters.
parse_check reads it back; the runners turn it into the row's note and,
where the JIT was not used (or was used by an 'off' arm), into an entry of
JIT_PROBLEMS, which the report prints loudly and which makes the run exit 3.
"""

import re

# What went wrong with JIT use, one line each (the report's legend).
JIT_PROBLEMS = []


def check_sql(w, label="btjitcheck"):
    """One text value with the module's view of this backend: per watched
    index state/search counts/builds (1.5: builds that started with
    compiled code, and the compiled build comparator's comparisons; 0
    before 1.5)/code source, how many shapes this backend
    compiled afresh vs loaded from the object cache, and the cluster-wide
    status counters.  Through to_jsonb so that a column the module adds or
    lacks does not break it."""
    names = ", ".join("'%s'" % i for i in w.indexes)
    return ("SELECT 'BTJITCHECK ' || coalesce((SELECT string_agg(format('%%s=%%s/jit:%%s/stock:%%s/declined:%%s/builds:%%s/build_compares:%%s/src:%%s', "
            "j->>'indexrelid', j->>'state', j->>'jit_searches', j->>'stock_searches', j->>'declined_searches', "
            "coalesce(j->>'jit_builds', '0'), coalesce(j->>'jit_build_compares', '0'), "
            "coalesce(replace(j->>'code_source', ' ', '_'), '-')), ' ' ORDER BY j->>'indexrelid') "
            "FROM (SELECT to_jsonb(x) AS j FROM btree_jit_index_stats() x) y WHERE j->>'indexrelid' IN (%s)), 'no-index-stats') "
            "|| ' backend:compiled=' || (SELECT count(*) FROM btree_jit_index_stats() x WHERE to_jsonb(x)->>'code_source' = 'compiled') "
            "|| ',cached=' || (SELECT count(*) FROM btree_jit_index_stats() x WHERE to_jsonb(x)->>'code_source' = 'object cache') "
            "|| ' status:active=' || s.active || ',jit=' || s.jit_searches || ',stock=' || s.stock_searches "
            "|| ',compiles=' || s.compiles || ',compile_failures=' || s.compile_failures "
            "AS %s FROM btree_jit_status() s;" % (names, label))


def parse_check(text, label=None):
    """'BTJITCHECK idx=jit/jit:1/stock:0/declined:0/builds:0/build_compares:0/src:x
    ... status:...' -> dict.
    label: the column name in single-user output (btjitcheck = "...")."""
    if label:
        m = re.search(r"\b%s = \"BTJITCHECK ([^\"\n]*)" % label, text)
    else:
        m = re.search(r"BTJITCHECK ([^\"\n]*)", text)
    if not m:
        return None
    res = {"raw": m.group(1), "indexes": {}}
    mc = re.search(r"backend:compiled=(\d+),cached=(\d+)", m.group(1))
    if mc:
        res["compiles"] = (int(mc.group(1)), int(mc.group(2)))
    for tok in m.group(1).split():
        mm = re.match(r"(.+?)=(\w+)/jit:(\d+)/stock:(\d+)/declined:(\d+)/builds:(\d+)/build_compares:(\d+)"
                      r"/src:(\S+)$", tok)
        if mm:
            res["indexes"][mm.group(1)] = dict(state=mm.group(2), jit=int(mm.group(3)),
                                               stock=int(mm.group(4)), declined=int(mm.group(5)),
                                               builds=int(mm.group(6)), build_compares=int(mm.group(7)),
                                               src=mm.group(8))
    return res



def used_jit(st):
    """Whether one index's entry of a parsed check (or None) shows searches
    through JIT code, or a build that began with compiled code (a freshly
    built index is back to 'pending' and has no searches; its sort compares
    with the compiled comparator where the server's would call comparetup,
    which a build of distinct leading keys may never do: build_compares
    can be 0)."""
    return bool(st) and ((st["state"] == "jit" and st["jit"] != 0) or st["builds"] != 0)


def jit_work(st):
    """What one index's entry of a parsed check did with JIT code, for the
    notes and for the 'off' arm's check (which must find none)."""
    if st["builds"]:
        return "%s build%s with compiled code (%s compiled compares)" % (
            "{:,}".format(st["builds"]), "" if st["builds"] == 1 else "s", "{:,}".format(st["build_compares"]))
    return "%s jit searches" % "{:,}".format(st["jit"])


def off_used_jit(st):
    """Whether an 'off' arm's entry shows JIT searches or builds."""
    return bool(st) and (st["jit"] != 0 or st["builds"] != 0 or st["build_compares"] != 0)
