#!/bin/bash
# test/suite-indexstats.sh - the cluster-wide per-index statistics
# (btree_jit_indexes, btree_jit_indexes_info(), btree_jit_reset()), seen as a
# DBA sees them: from one session, the searches other backends ran.
#
#   - three backends each run a known number of index lookups (one
#     committed transaction, one that fails) and, more than a second later
#     (backends flush at most once a second), one more transaction; while
#     they are still connected, another session sees in btree_jit_indexes
#     exactly the sum of what each backend counted itself, which is also
#     lookups x the index's height;
#   - the counts survive the backends' exit unchanged (nothing counted
#     twice at exit);
#   - the view shows the index's state, signature, compiles and code source;
#     btree_jit_status() totals agree;
#   - btree_jit_reset() zeroes them (and is refused to a plain user);
#   - with btree_jit.max_indexes = 40 and 60 more indexes searched, the
#     table holds at most 40 entries, evictions are counted, and the hot
#     index survives them.
#
# Ends with "N passed, M failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

sql() { psql_as -v ON_ERROR_STOP=1 -Atq "$@"; }

workers=3
lookups=500
failing=100
max_indexes=40

# inline compiles: the checks below expect an index's code settled in the
# backend that searched it (the compile worker's 'queued' state is tested in
# test/sql/background.sql and test/suite-stress.sh)
cluster_start "" "btree_jit.max_indexes = $max_indexes" "btree_jit.compile_mode = inline"
work=$BTJIT_CLUSTER_DIR/work
mkdir -p "$work"
chmod 777 "$work"

sql -c "CREATE EXTENSION btree_jit" -c "CREATE EXTENSION pageinspect" \
	-c "CREATE TABLE t (id int PRIMARY KEY)" \
	-c "INSERT INTO t SELECT g FROM generate_series(1, 100000) g" \
	-c "VACUUM ANALYZE t"
height=$(sql -c "SELECT level + 1 FROM bt_metap('t_pkey')")
echo "# t_pkey: 100000 int4 keys, height $height"

# The counts of t_pkey in the view, as one string.
view_counts() {
	sql -c "SELECT coalesce(sum(jit_searches + stock_searches), 0)
	          FROM btree_jit_indexes WHERE indexname = 't_pkey'"
}

sql -c "SELECT btree_jit_reset()" >/dev/null
check "after btree_jit_reset() the view has no row for t_pkey" \
	eq "$(sql -c "SELECT count(*) FROM btree_jit_indexes WHERE indexname = 't_pkey'")" 0

# ---- several backends, a known workload ----
for w in $(seq 1 "$workers"); do
	psql_as -v ON_ERROR_STOP=0 -Atq >"$work/worker$w.out" 2>"$work/worker$w.err" <<EOF &
SET enable_seqscan = off;
SET enable_bitmapscan = off;
DO \$\$ BEGIN FOR i IN 1..$lookups LOOP PERFORM id FROM t WHERE id = i * 37 + $w; END LOOP; END \$\$;
DO \$\$ BEGIN FOR i IN 1..$failing LOOP PERFORM id FROM t WHERE id = i * 11 + $w; END LOOP; RAISE EXCEPTION 'worker fails on purpose'; END \$\$;
-- a backend flushes at a transaction end at most once a second: this one
-- ends more than a second after the first, so it adds everything above
SELECT pg_sleep(1.1);
\o $work/worker$w.count
SELECT jit_searches + stock_searches FROM btree_jit_index_stats() WHERE indexrelid = 't_pkey'::regclass;
\o
\! touch $work/ready$w
SELECT pg_sleep(600);
EOF
done

ready() { n=$(find "$work" -name 'ready*' | wc -l); [[ $n -ge $workers ]]; }
wait_until 600 ready || true
check "the $workers workers finished their lookups" eq "$n" "$workers"

own_sum=0
for w in $(seq 1 "$workers"); do
	own_sum=$((own_sum + $(tr -d '[:space:]' <"$work/worker$w.count")))
done
expected=$((workers * (lookups + failing) * height))
check "each worker counted lookups x height itself (sum $own_sum)" eq "$own_sum" "$expected"

live=$(view_counts)
alive=$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'")
check "the workers are still connected while the view is read" eq "$alive" "$workers"
check "another session sees exactly their searches, failed transactions included ($live)" \
	eq "$live" "$expected"

sql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'" >/dev/null
wait || true
gone() { [[ $(sql -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'") == 0 ]]; }
wait_until 120 gone || true
check "the workers have exited" gone
check "after the workers exit the counts are unchanged" eq "$(view_counts)" "$expected"

row=$(sql -c "SELECT state, signature, compiles >= 1, code_source IS NOT NULL,
                     last_compile_ms >= 0, last_code_at IS NOT NULL,
                     schemaname, tablename, dbid <> 0
                FROM btree_jit_indexes WHERE indexname = 't_pkey'")
check "the view names t_pkey's state, shape, compiles and code source ($row)" \
	eq "$row" "jit|(int4)|t|t|t|t|public|t|t"

shared=$(sql -c "SELECT count(*) > 0 FROM btree_jit_indexes WHERE dbid = 0 AND indexname LIKE 'pg_%'")
check "shared catalogs' indexes are counted under database 0" eq "$shared" t

totals=$(sql -c "SELECT s.jit_searches + s.stock_searches >= $expected
                   FROM btree_jit_status() s")
check "btree_jit_status() totals include the workers' searches" eq "$totals" t

# ---- reset ----
sql -c "CREATE ROLE plain LOGIN"
denied=$(psql_as -U plain -Atqc "SELECT btree_jit_reset()" 2>&1 || true)
check "a plain user may not reset" grep -q 'permission denied for function btree_jit_reset' <<<"$denied"
sql -c "SELECT btree_jit_reset()" >/dev/null
check "btree_jit_reset() zeroes t_pkey" eq "$(view_counts)" 0
check "btree_jit_reset() zeroes the totals but this session's own" \
	eq "$(sql -c "SELECT jit_searches < 1000 FROM btree_jit_status()")" t

# ---- the bound ----
sql -c "DO \$\$ BEGIN FOR i IN 1..$lookups LOOP PERFORM id FROM t WHERE id = i; END LOOP; END \$\$"
sql <<EOF
DO \$\$
BEGIN
	FOR i IN 1..60 LOOP
		EXECUTE format('CREATE TABLE s%s (id int PRIMARY KEY)', i);
		EXECUTE format('INSERT INTO s%s SELECT generate_series(1, 100)', i);
	END LOOP;
END \$\$;
EOF
sql <<EOF
SET enable_seqscan = off;
SET enable_bitmapscan = off;
DO \$\$
BEGIN
	FOR i IN 1..60 LOOP
		EXECUTE format('SELECT id FROM s%s WHERE id = 5', i);
		COMMIT;
	END LOOP;
END \$\$;
EOF
info=$(sql -c "SELECT entries <= max_indexes, max_indexes, evictions > 0 FROM btree_jit_indexes_info()")
check "with more indexes than slots the table holds at most $max_indexes and evicts ($info)" \
	eq "$info" "t|$max_indexes|t"
check "the most used index survives the evictions" \
	eq "$(sql -c "SELECT count(*) FROM btree_jit_indexes WHERE indexname = 't_pkey' AND jit_searches + stock_searches >= $lookups")" 1

cluster_stop
summary
