#!/bin/bash
# test/suite-stress.sh - btree_jit under concurrency, DDL, faults and bad
# input, on a throwaway cluster with the module preloaded and
# btree_jit.verify = on everywhere (a compiled search that differs from the
# server's is an ERROR in whichever session hits it).
#
#   test/suite-stress.sh [--minutes M] [--seed N]
#
#   --minutes M  length of the concurrency phase (default 0.75, or
#                $BTJIT_STRESS_MINUTES)
#   --seed N     seed for the random choices of setup (default: new, printed)
#
# Sections:
#   1. bad input     every SQL function with NULL, a table, a view, a
#                    sequence, hash/gist/gin/brin and partitioned indexes, OID 0,
#                    a dropped index's OID, an index of another session's
#                    temp table, bad formats and GUC values, an unprivileged
#                    role: a clear error with the expected SQLSTATE or a
#                    normal answer, never a crash
#   2. templates     template_path missing, garbage, empty, truncated, a
#                    directory, someone else's bitcode: WARNING, index state
#                    'stock' (with the reason), results still correct; RESET
#                    makes new shapes compile again; an ERROR inside the LLVM
#                    error guard (btree_jit.compile_fault) leaves the guard,
#                    an LLVM fatal error ends only the session, with FATAL
#   3. memory        one long-lived backend searches 2000 indexes with
#                    hundreds of distinct key shapes (four passes and index
#                    churn): VmRSS and memory contexts stay bounded, compiled
#                    shapes stay within btree_jit.max_signatures
#   4. cancel/kill   statement_timeout and pg_cancel_backend during
#                    compile-heavy sessions, pg_terminate_backend mid-work:
#                    the session (or the others) carry on, correct results,
#                    the postmaster never restarts
#   5. object cache  corrupted, truncated and swapped cached objects
#   5b. compile worker  (compile_mode = background) no query waits for the
#                    worker (its compile child made to sleep 3 s); the child
#                    killed with SIGKILL mid-compile: worker and postmaster
#                    carry on, the shape is retried and compiles; a shape
#                    whose compile fails is failed once, logged once, never
#                    retried; the cache directory unwritable: stock path,
#                    logged once, nothing blocks
#   6. concurrency   readers (REPEATABLE READ, btree_jit.enabled toggled
#                    mid-transaction and rolled back, on/off compared),
#                    writers (duplicates, ON CONFLICT, caught unique
#                    violations, splits), pgbench -S -M prepared, and a DDL
#                    session (REINDEX [CONCURRENTLY], DROP/CREATE INDEX
#                    [CONCURRENTLY], ALTER COLUMN TYPE, CLUSTER, VACUUM);
#                    errors are classified (deadlocks, lock timeouts, DDL
#                    races are expected; anything else is not)
#   8. worker cluster  (after 7, a second small cluster with
#                    compile_queue_size = 2) a full queue falls back to
#                    inline compiles; the worker itself killed with SIGKILL
#                    (a crash: the postmaster restarts all processes), then
#                    the shape compiles after the worker is back, and its
#                    warm start recompiles listed shapes missing from the
#                    cache
#   7. final         amcheck (bt_index_parent_check heapallindexed +
#                    rootdescend) on every btree index, on/off comparison over
#                    every index, server log free of crashes / PANIC / verify
#                    mismatches, postmaster start time unchanged
#
# Ends with "N passed, M failed"; exit status 1 on any failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=differential/common.sh
source "$here/differential/common.sh"

minutes=${BTJIT_STRESS_MINUTES:-0.75}
seed=${BTJIT_STRESS_SEED:-}
while [[ $# -gt 0 ]]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	-h | --help) sed -n '2,45p' "$0"; exit 0 ;;
	*) btjit_die "unknown argument $1 (see --help)" ;;
	esac
done
if [[ -z $seed ]]; then
	seed=$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 ))
fi
fseed=$(awk -v s="$seed" 'BEGIN { printf "%.6f", (s % 1000000) / 1000000 }')
conc_secs=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')

t_start=$(now)
echo "== suite-stress: seed $seed, concurrency phase ${conc_secs}s (replay: test/suite-stress.sh --seed $seed --minutes $minutes)"
[[ -f $(pg_pkglibdir)/btree_jit.so ]] || build_and_install

# Sections 2-6 expect compiles in the session that needs them (inline);
# section 5b and 8 test the compile worker (background, the default).
cluster_start "" \
	"btree_jit.verify = on" \
	"btree_jit.compile_threshold = 0" \
	"btree_jit.compile_mode = inline" \
	"max_connections = 60" \
	"deadlock_timeout = '200ms'" \
	"autovacuum_naptime = '5s'" \
	"log_min_error_statement = panic" \
	"shared_buffers = '64MB'"
work=$BTJIT_CLUSTER_DIR/work
mkdir -p "$work"
chown "$BTJIT_OS_USER:" "$work"
# keep the sessions' outputs of a failed run (the cluster dir goes away)
cluster_on_exit 'if [[ $check_failed -gt 0 && -d $work ]]; then keep=/tmp/btree_jit-stress-$(date +%Y%m%d-%H%M%S); cp -r "$work" "$keep"; echo "session outputs kept in $keep (seed $seed)" >&2; fi'
psql_bin=$(pg_bindir)/psql

# psql as superuser with SQLSTATEs in messages, errors not fatal
psqlv() {
	as_postgres "$psql_bin" -X -q -At -v VERBOSITY=verbose "$@"
}

psql_as -q -c "CREATE EXTENSION btree_jit" -c "CREATE EXTENSION amcheck" \
	-c "CREATE ROLE plain LOGIN"
psql_as -q -f "$here/differential/stress_setup.sql" >/dev/null
psql_as -q -f "$here/differential/shapes_setup.sql" >/dev/null
pm_start=$(q "SELECT pg_postmaster_start_time()")
expect_eq "module active" "$(q "SELECT active FROM btree_jit_status()")" t

server_alive() {
	local got
	got=$(q "SELECT pg_postmaster_start_time()" 2>&1) || true
	[[ $got == "$pm_start" ]]
}

# expect_sqlstate WHAT SQLSTATE SQL [ROLE]
expect_sqlstate() {
	local what=$1 state=$2 sql=$3 role=${4:-postgres} out
	out=$(as_postgres "$psql_bin" -X -q -At -U "$role" -v VERBOSITY=verbose -c "$sql" 2>&1) || true
	if grep -q "ERROR:  $state:" <<<"$out"; then
		ok "$what: ERROR $state ($(grep -m1 -o "ERROR:  $state: .*" <<<"$out" | cut -c 16-90))"
	else
		bad "$what: want ERROR $state" "$out"
	fi
}

# expect_value WHAT SQL WANT [ROLE]
expect_value() {
	local what=$1 sql=$2 want=$3 role=${4:-postgres} out
	out=$(as_postgres "$psql_bin" -X -q -At -U "$role" -v VERBOSITY=verbose -c "$sql" 2>&1) || true
	expect_eq "$what" "$out" "$want"
}

# ===========================================================================
echo "-- 1. bad input"
t1=$(now)
psql_as -q <<'SQL'
CREATE TABLE bi (a int4, b int8, p point, arr int4[], t text);
INSERT INTO bi SELECT g, g, point(g, g), ARRAY[g], g::text FROM generate_series(1, 500) g;
CREATE INDEX bi_a ON bi (a);
CREATE INDEX bi_hash ON bi USING hash (a);
CREATE INDEX bi_gist ON bi USING gist (p);
CREATE INDEX bi_gin ON bi USING gin (arr);
CREATE INDEX bi_brin ON bi USING brin (b);
CREATE INDEX bi_expr ON bi ((a + 1), (b * 2) DESC);
CREATE INDEX bi_part ON bi (b) WHERE a > 10;
CREATE INDEX bi_t ON bi (t);
CREATE INDEX bi_wide ON bi (a, (a + 1), (a + 2), (a + 3), (a + 4), (a + 5), (a + 6), (a + 7), (a + 8));
CREATE VIEW bi_view AS SELECT * FROM bi;
CREATE SEQUENCE bi_seq;
CREATE MATERIALIZED VIEW bi_mv AS SELECT a FROM bi;
CREATE TABLE bi_pt (a int4, b date) PARTITION BY RANGE (a);
CREATE TABLE bi_pt1 PARTITION OF bi_pt FOR VALUES FROM (0) TO (1000);
CREATE INDEX bi_pt_ab ON bi_pt (a, b DESC);
CREATE UNLOGGED TABLE bi_unl (a int8 PRIMARY KEY);
CREATE INDEX bi_gone ON bi (b, a);
GRANT SELECT ON bi TO plain;
SQL
gone_oid=$(q "SELECT 'bi_gone'::regclass::oid")
psql_as -q -c "DROP INDEX bi_gone"
# an invalid index: a unique CREATE INDEX CONCURRENTLY that fails
psqlv -c "CREATE UNIQUE INDEX CONCURRENTLY bi_invalid ON bi ((a % 2))" >/dev/null 2>&1 || true
# an index of another session's temporary table (that session stays open)
(as_postgres "$psql_bin" -X -q -c "CREATE TEMP TABLE tmp_other (a int4 PRIMARY KEY)" \
	-c "INSERT INTO tmp_other SELECT generate_series(1, 100)" -c "SELECT pg_sleep(8)" >/dev/null 2>&1 &)
for _ in $(seq 1 50); do
	tmp_oid=$(q "SELECT c.oid FROM pg_class c WHERE relname = 'tmp_other_pkey' AND relpersistence = 't'")
	[[ -n $tmp_oid ]] && break
	sleep 0.1
done
toast_idx=$(q "SELECT i.indexrelid::regclass FROM pg_class c JOIN pg_index i ON i.indrelid = c.reltoastrelid WHERE c.oid = 'bi'::regclass")

expect_value "btree_jit_compile(NULL) is NULL (STRICT)" "SELECT state IS NULL AND signature IS NULL FROM btree_jit_compile(NULL)" t
expect_value "btree_jit_explain(NULL) is NULL" "SELECT btree_jit_explain(NULL) IS NULL" t
expect_value "btree_jit_explain(index, NULL) is NULL" "SELECT btree_jit_explain('bi_a', NULL) IS NULL" t
for f in "btree_jit_compile(%s)" "btree_jit_explain(%s)" "btree_jit_explain(%s, 'asm')"; do
	for rel in bi bi_view bi_seq bi_mv bi_pt bi_pt_ab bi_hash bi_gist bi_gin bi_brin pg_class; do
		# shellcheck disable=SC2059
		expect_sqlstate "$(printf "$f" "$rel")" 42809 "SELECT * FROM $(printf "$f" "'$rel'")"
	done
	for oid in 0 "$gone_oid" 4294967295; do
		# shellcheck disable=SC2059
		expect_sqlstate "$(printf "$f" "$oid")" 42P01 "SELECT * FROM $(printf "$f" "$oid")"
	done
done
expect_sqlstate "btree_jit_explain(index, 'pdf')" 22023 "SELECT btree_jit_explain('bi_a', 'pdf')"
expect_sqlstate "btree_jit_explain(index, '')" 22023 "SELECT btree_jit_explain('bi_a', '')"
expect_sqlstate "btree_jit_explain(nine key columns)" 0A000 "SELECT btree_jit_explain('bi_wide')"
expect_value "btree_jit_compile(nine key columns) -> stock with a reason" \
	"SELECT state = 'stock' AND reason <> '' FROM btree_jit_compile('bi_wide')" t
for idx in bi_a bi_t bi_expr bi_part bi_pt1_a_b_idx bi_unl_pkey "$toast_idx" pg_class_oid_index pg_attribute_relid_attnum_index; do
	expect_value "btree_jit_compile($idx) -> jit" "SELECT state FROM btree_jit_compile('$idx')" jit
done
expect_value "btree_jit_explain(expression index) has IR" \
	"SELECT btree_jit_explain('bi_expr') LIKE '%define%'" t
expect_value "btree_jit_explain(toast index, 'asm') has code" \
	"SELECT length(btree_jit_explain('$toast_idx', 'asm')) > 0" t
inv_out=$(psqlv -c "SELECT state FROM btree_jit_compile('bi_invalid')" 2>&1 || true)
if [[ $inv_out == jit || $inv_out == stock || $inv_out == *"ERROR:  "[0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z]:* ]]; then
	ok "btree_jit_compile(invalid index left by a failed CREATE INDEX CONCURRENTLY): $inv_out"
else
	bad "btree_jit_compile(invalid index)" "$inv_out"
fi
if [[ -n $tmp_oid ]]; then
	out=$(psqlv -c "SELECT state FROM btree_jit_compile($tmp_oid)" 2>&1 || true)
	if [[ $out == jit || $out == stock || $out == *"ERROR:  "*:* ]]; then
		ok "btree_jit_compile(index of another session's temp table): $(head -n1 <<<"$out" | cut -c1-80)"
	else
		bad "btree_jit_compile(index of another session's temp table)" "$out"
	fi
else
	bad "temp table of another session was not created"
fi
# indexes created in a transaction that rolls back, compiled first; then the
# per-backend stats must still be listable
expect_value "compile indexes of a rolled-back transaction, then list stats" \
	"BEGIN; CREATE TABLE rb (a int4, b date); CREATE INDEX rb_a ON rb (a); CREATE INDEX rb_b ON rb (b DESC);
	 SELECT count(*) FROM (SELECT btree_jit_compile('rb_a'), btree_jit_compile('rb_b')) x; ROLLBACK;
	 SELECT count(*) >= 0 FROM btree_jit_index_stats();" "1
t"
# privileges
expect_sqlstate "plain role: btree_jit_compile" 42501 "SELECT * FROM btree_jit_compile('bi_a')" plain
expect_sqlstate "plain role: btree_jit_explain" 42501 "SELECT btree_jit_explain('bi_a')" plain
expect_sqlstate "plain role: btree_jit_explain(asm)" 42501 "SELECT btree_jit_explain('bi_a', 'asm')" plain
expect_value "plain role: btree_jit_status() works" "SELECT active FROM btree_jit_status()" t plain
expect_value "plain role: btree_jit_index_stats() works" \
	"SET enable_seqscan = off; SELECT count(*) FROM bi WHERE a = 5; SELECT count(*) > 0 FROM btree_jit_index_stats()" "1
t" plain
expect_value "plain role: SET btree_jit.enabled works" "SET btree_jit.enabled = off; SHOW btree_jit.enabled" off plain
for g in verify template_path max_signatures compile_threshold object_cache log_compiles compile_fault; do
	case $g in
	template_path) v="'/tmp/x.bc'" ;;
	max_signatures | compile_threshold) v=5 ;;
	compile_fault) v=error ;;
	*) v=off ;;
	esac
	expect_sqlstate "plain role: SET btree_jit.$g" 42501 "SET btree_jit.$g = $v" plain
done
expect_sqlstate "SET btree_jit.max_signatures = 0" 22023 "SET btree_jit.max_signatures = 0"
expect_sqlstate "SET btree_jit.max_signatures = 100000" 22023 "SET btree_jit.max_signatures = 100000"
expect_sqlstate "SET btree_jit.compile_threshold = -1" 22023 "SET btree_jit.compile_threshold = -1"
expect_sqlstate "SET btree_jit.enabled = 'maybe'" 22023 "SET btree_jit.enabled = 'maybe'"
expect_sqlstate "SET btree_jit.no_such_setting" 42602 "SET btree_jit.no_such_setting = 1"
expect_sqlstate "ALTER SYSTEM SET btree_jit.object_cache_max_files = -1" 22023 "ALTER SYSTEM SET btree_jit.object_cache_max_files = -1"
expect_value "DROP EXTENSION + CREATE EXTENSION while loaded" \
	"DROP EXTENSION btree_jit; CREATE EXTENSION btree_jit; SELECT active FROM btree_jit_status()" t
check "server up after bad input (postmaster not restarted)" server_alive
echo "   ($(elapsed "$t1")s)"

# ===========================================================================
echo "-- 2. template faults"
t2=$(now)
tpl=$(q "SELECT setting FROM pg_settings WHERE name = 'btree_jit.template_path'")
[[ -n $tpl ]] || tpl=$(pg_pkglibdir)/btree_jit/search_template.bc
[[ -f $tpl ]] || tpl=$(ls "$(pg_pkglibdir)"/btree_jit/*.bc | head -n1)
head -c 4096 /dev/urandom >"$work/garbage.bc"
: >"$work/empty.bc"
head -c 1000 "$tpl" >"$work/truncated.bc"
other_bc=$(pg_pkglibdir)/bitcode/postgres/access/nbtree/nbtsearch.bc
[[ -f $other_bc ]] || other_bc=$work/garbage.bc
chmod 644 "$work"/*.bc
psql_as -q <<'SQL'
CREATE TABLE tf (a int2, b oid, c "char", d timestamptz, e bool, f time);
INSERT INTO tf SELECT g % 97, g * 104729, (g % 200 - 100)::int4::"char", '2001-01-01'::timestamptz + g * interval '1 h', g % 3 = 0, '00:00'::time + g * interval '1 s'
  FROM generate_series(1, 5000) g;
CREATE INDEX tf_1 ON tf (a DESC, b, c NULLS FIRST);
CREATE INDEX tf_2 ON tf (c DESC NULLS LAST, e, a);
CREATE INDEX tf_3 ON tf (f DESC, d NULLS FIRST);
CREATE INDEX tf_4 ON tf (e DESC, f, b DESC);
CREATE INDEX tf_5 ON tf (d DESC, c, e DESC NULLS LAST);
CREATE INDEX tf_6 ON tf (b NULLS FIRST, f DESC NULLS LAST);
CREATE INDEX tf_7 ON tf (a, e NULLS FIRST, d DESC);
VACUUM ANALYZE tf;
SQL
n=0
for case in "missing:/nonexistent.bc" "garbage:$work/garbage.bc" "empty:$work/empty.bc" \
	"truncated:$work/truncated.bc" "directory:$work" "other-bitcode:$other_bc"; do
	n=$((n + 1))
	# an equality probe: it always descends the index (a range that starts
	# at the index's end would be served by _bt_endpoint, no page search)
	name=${case%%:*}
	path=${case#*:}
	idx=tf_$n
	col=$(q "SELECT pg_get_indexdef('$idx'::regclass, 1, true)")
	# results on stdout, messages apart: interleaving the two streams
	# can glue a WARNING to a result line
	out=$(psqlv -v ON_ERROR_STOP=0 2>"$work/template-$name.err" <<SQL
SET btree_jit.object_cache = off;
SET btree_jit.template_path = '$path';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT 'on:' || count(*) || ':' || coalesce(sum(hashtext(tf::text)), 0) FROM tf WHERE $col = (SELECT $col FROM tf WHERE $col IS NOT NULL OFFSET 2000 LIMIT 1);
SET btree_jit.enabled = off;
SELECT 'off:' || count(*) || ':' || coalesce(sum(hashtext(tf::text)), 0) FROM tf WHERE $col = (SELECT $col FROM tf WHERE $col IS NOT NULL OFFSET 2000 LIMIT 1);
SET btree_jit.enabled = on;
-- the index's state asked for directly: which indexes the planner happened
-- to search must not decide the check
SELECT 'state:' || state || ':' || coalesce(reason, '') FROM btree_jit_compile('$idx');
RESET btree_jit.template_path;
CREATE TEMP TABLE tf_after_$n (a int8, b date);
INSERT INTO tf_after_$n SELECT g, '2000-01-01'::date + g FROM generate_series(1, 100) g;
CREATE INDEX tf_after_${n}_i ON tf_after_$n (b DESC, a DESC NULLS LAST);
SELECT count(*) FROM tf_after_$n WHERE b = '2000-02-01';
SELECT 'after:' || state FROM btree_jit_index_stats() WHERE indexrelid = 'tf_after_${n}_i'::regclass;
SQL
	) || true
	err=$(cat "$work/template-$name.err")
	on=$(grep '^on:' <<<"$out" || true)
	off=$(grep '^off:' <<<"$out" || true)
	state=$(grep '^state:' <<<"$out" || true)
	if [[ -z $state ]] || grep -q 'server closed the connection' <<<"$err"; then
		bad "template $name: the session survives (no connection loss)" "$(printf '%s\n%s' "$out" "$err" | grep -v '^LOCATION\|^HINT\|^LINE\|^ *^' | tail -n 12)"
		continue
	fi
	ok "template $name: the session survives"
	if grep -q 'WARNING: ' <<<"$err" && [[ $state == state:stock:* ]]; then
		ok "template $name: WARNING, index stock ($(cut -c1-90 <<<"${state#state:stock:}"))"
	else
		bad "template $name: want a WARNING and state stock" "$out"
	fi
	if [[ $name == missing ]]; then
		check "template missing: reason mentions the template" grep -qi template <<<"$state"
	fi
	if [[ -n $on && ${on#on:} == "${off#off:}" ]]; then
		ok "template $name: results equal with the module on and off (${on#on:})"
	else
		bad "template $name: results differ or missing" "$out"
	fi
	expect_eq "template $name: after RESET a new shape compiles" "$(grep '^after:' <<<"$out" || true)" "after:jit"
done
# faults inside the compiler library's LLVM error guard (the test hook
# btree_jit.compile_fault, superuser only): an ERROR there leaves the guard,
# so the same session compiles again; an LLVM fatal error there ends the
# session with FATAL, not the server with abort()
cf_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.object_cache = off;
SET btree_jit.compile_fault = error;
SELECT '@@E ' || state FROM btree_jit_compile('tf_1');
RESET btree_jit.compile_fault;
SELECT '@@A ' || state || ':' || coalesce(reason, '') FROM btree_jit_compile('tf_1');
SQL
) || true
if grep -q 'ERROR:  XX000: btree_jit: injected fault' <<<"$cf_out" && ! grep -q '^@@E' <<<"$cf_out"; then
	ok "compile_fault = error: the compile raises the injected ERROR"
else
	bad "compile_fault = error: want the injected ERROR" "$cf_out"
fi
expect_eq "compile_fault = error: the same session then compiles (guard left)" \
	"$(sed -n 's/^@@A //p' <<<"$cf_out")" "jit:"
log_from=$(stat -c %s "$BTJIT_CLUSTER_LOG")
cf_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.object_cache = off;
SET btree_jit.compile_fault = llvm_fatal;
SELECT '@@F ' || state FROM btree_jit_compile('tf_2');
SELECT '@@G still connected';
SQL
) || true
if grep -q 'FATAL:  XX000: btree_jit: fatal error in LLVM' <<<"$cf_out" && ! grep -q '^@@[FG]' <<<"$cf_out"; then
	ok "compile_fault = llvm_fatal: the session ends with FATAL"
else
	bad "compile_fault = llvm_fatal: want FATAL and the session gone" "$cf_out"
fi
check "compile_fault = llvm_fatal: postmaster did not restart" server_alive
expect_eq "compile_fault = llvm_fatal: no crash, abort or LLVM ERROR in the server log" \
	"$(server_log_problems "$log_from")" ""
expect_value "compile_fault = llvm_fatal: the next session compiles the shape" \
	"SET btree_jit.object_cache = off; SELECT state FROM btree_jit_compile('tf_2')" jit
check "server up after template faults" server_alive
echo "   ($(elapsed "$t2")s)"

# ===========================================================================
echo "-- 3. memory: one backend, 2000 indexes, many shapes"
t3=$(now)
nidx=$(q "SELECT make_shape_tables('m', 100, 20, $fseed)")
nshapes=$(q "SELECT count(DISTINCT regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING btree ', '') || (SELECT string_agg(format_type(a.atttypid, NULL), ',' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = i.indexrelid)) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname LIKE 'm\_%'")
echo "   created $nidx indexes on 100 tables ($(elapsed "$t3")s)"
# a cap below the number of shapes (and below the default 64: every
# compile costs ~0.4 s here, on two shared cores)
memsig=24
maxsig=$memsig
mem_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<SQL
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET btree_jit.max_signatures = $memsig;
SELECT '@@M0 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@P1 ' || indexes || ' ' || mismatches FROM compare_indexes('m\_%', 1);
SELECT '@@M1 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@P2 ' || probe_indexes('m\_%') || ' 0';
SELECT '@@M2 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@P3 ' || probe_indexes('m\_%') || ' 0';
SELECT '@@M3 ' || rss_kb || ' ' || context_bytes FROM mem();
\! $psql_bin -X -q -At -c "SELECT churn('m', 500)" >/dev/null
SELECT '@@P4 ' || probe_indexes('m\_%') || ' 0';
SELECT '@@M4 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@S ' || count(*) || ' ' || count(*) FILTER (WHERE state = 'jit') || ' '
       || count(DISTINCT signature) FILTER (WHERE state = 'jit') || ' '
       || count(*) FILTER (WHERE state = 'stock' AND reason LIKE '%max_signatures%') || ' '
       || count(*) FILTER (WHERE state = 'stock' AND coalesce(reason, '') NOT LIKE '%max_signatures%')
  FROM btree_jit_index_stats() s JOIN pg_class c ON c.oid = s.indexrelid WHERE c.relname LIKE 'm\_%';
SELECT '@@J ' || count(*) || ' ' || count(*) FILTER (WHERE c.oid IS NULL) FROM btree_jit_index_stats() s LEFT JOIN pg_class c ON c.oid = s.indexrelid;
SELECT '@@C ' || round(avg(compile_ms)) || ' ' || round(max(compile_ms)) FROM btree_jit_index_stats() WHERE code_source = 'compiled';
SQL
) || true
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
mbb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
memval() { sed -n "s/^@@$1 //p" <<<"$mem_out" | head -n1; }
if [[ -z $(memval M4) ]]; then
	bad "memory run finished" "$(tail -n 20 <<<"$mem_out")"
else
	read -r rss0 ctx0 <<<"$(memval M0)"
	read -r rss1 ctx1 <<<"$(memval M1)"
	read -r rss2 ctx2 <<<"$(memval M2)"
	read -r rss3 ctx3 <<<"$(memval M3)"
	read -r rss4 ctx4 <<<"$(memval M4)"
	read -r nstat njit njitsig nfull nother <<<"$(memval S)"
	read -r nall ndropped <<<"$(memval J)"
	echo "   VmRSS MB: start $(mb "$rss0"), pass1 $(mb "$rss1"), pass2 $(mb "$rss2"), pass3 $(mb "$rss3"), after churn of 500 + pass4 $(mb "$rss4")"
	echo "   memory contexts MB: $(mbb "$ctx0"), $(mbb "$ctx1"), $(mbb "$ctx2"), $(mbb "$ctx3"), $(mbb "$ctx4")"
	echo "   compile time of a shape in this backend: avg/max ms $(memval C)"
	echo "   ~$nshapes distinct index definitions; stats rows for m_* indexes: $nstat; jit $njit with $njitsig distinct signatures (max_signatures $maxsig); stock because the cache is full: $nfull; stock otherwise: $nother; stats rows in all $nall, of dropped indexes $ndropped"
	for p in P1 P2 P3 P4; do
		read -r pi pm <<<"$(memval $p)"
		expect_eq "memory pass ${p#P}: $pi indexes searched$([[ $p == P1 ]] && echo ", compared on/off") without mismatch (verify on)" "$pm" 0
	done
	check "memory: compiled shapes within max_signatures (0 < $njitsig <= $maxsig)" test "$njitsig" -le "$maxsig" -a "$njitsig" -gt 0
	check "memory: indexes beyond the cap fell back to stock with the reason ($nfull)" test "$nfull" -gt 0 -o "$nshapes" -le "$maxsig"
	check "memory: compiled indexes used ($njit)" test "$njit" -gt 0
	check "memory: VmRSS growth pass2 -> pass3 below 8 MB ($(mb $((rss3 - rss2))) MB)" test $((rss3 - rss2)) -lt 8192
	check "memory: VmRSS growth pass3 -> churn + pass4 below 24 MB ($(mb $((rss4 - rss3))) MB)" test $((rss4 - rss3)) -lt 24576
	check "memory: VmRSS growth over all below 256 MB ($(mb $((rss4 - rss0))) MB)" test $((rss4 - rss0)) -lt 262144
	check "memory: memory contexts below 64 MB after all ($(mbb "$ctx4") MB)" test "$ctx4" -lt 67108864
	check "memory: context growth pass2 -> pass3 below 2 MB ($(mbb $((ctx3 - ctx2))) MB)" test $((ctx3 - ctx2)) -lt 2097152
fi
if grep -q 'ERROR:' <<<"$mem_out"; then
	bad "memory run: errors" "$(grep -m5 'ERROR:' <<<"$mem_out")"
else
	ok "memory run: no errors (verify on)"
fi
# baseline: the same probes in a backend with the module switched off
base=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.enabled = off;
SELECT '@@M0 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT probe_indexes('m\_%');
SELECT '@@M1 ' || rss_kb || ' ' || context_bytes FROM mem();
SQL
) || true
read -r brss0 bctx0 <<<"$(sed -n 's/^@@M0 //p' <<<"$base")"
read -r brss1 bctx1 <<<"$(sed -n 's/^@@M1 //p' <<<"$base")"
if [[ -n ${brss1:-} && -n ${rss4:-} ]]; then
	echo "   baseline backend with btree_jit.enabled = off, same probes: VmRSS $(mb "$brss0") -> $(mb "$brss1") MB, contexts $(mbb "$bctx0") -> $(mbb "$bctx1") MB; the module's backend grew $(mb $((rss4 - rss0))) MB vs $(mb $((brss1 - brss0))) MB"
fi
# a second backend with a small cache: shapes beyond it run stock, correctly
small=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.max_signatures = 4;
SELECT '@@P ' || indexes || ' ' || mismatches FROM compare_indexes('m\_1%', 1);
SELECT '@@S ' || count(DISTINCT signature) FILTER (WHERE state = 'jit') FROM btree_jit_index_stats();
SQL
) || true
read -r spi spm <<<"$(sed -n 's/^@@P //p' <<<"$small")"
expect_eq "max_signatures = 4: $spi indexes compared on/off, no mismatch" "${spm:-missing}" 0
check "max_signatures = 4: 1 to 4 compiled signatures ($(sed -n 's/^@@S //p' <<<"$small"))" \
	test "$(sed -n 's/^@@S //p' <<<"$small")" -le 4 -a "$(sed -n 's/^@@S //p' <<<"$small")" -gt 0
echo "   ($(elapsed "$t3")s)"

# ===========================================================================
echo "-- 4. cancel and terminate during compile-heavy sessions"
t4=$(now)
psql_as -q -c "SELECT make_shape_tables('k', 4, 3, $fseed / 2)" >/dev/null
# statement_timeout at several points of a statement that compiles shapes
# (object cache off: every new shape is a real compile)
to_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.object_cache = off;
SET statement_timeout = '60ms';
SELECT compare_indexes('k\_%', 1);
SET statement_timeout = '250ms';
SELECT compare_indexes('k\_%', 1);
SET statement_timeout = '900ms';
SELECT compare_indexes('k\_%', 1);
RESET statement_timeout;
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('k\_%', 2);
SELECT '@@S ' || count(*) FILTER (WHERE state = 'jit') || ' ' || count(*) FROM btree_jit_index_stats() s JOIN pg_class c ON c.oid = s.indexrelid WHERE c.relname LIKE 'k\_%';
SQL
) || true
ntimeouts=$(grep -c 'ERROR:  57014' <<<"$to_out" || true)
read -r ri rm <<<"$(sed -n 's/^@@R //p' <<<"$to_out")"
echo "   statement_timeout fired $ntimeouts times; then $ri indexes compared; stats (jit, all): $(sed -n 's/^@@S //p' <<<"$to_out")"
expect_eq "statement_timeout mid-compile: the session then compares correctly" "${rm:-missing}" 0
if grep -v 'ERROR:  57014' <<<"$to_out" | grep -q 'ERROR:\|WARNING:'; then
	bad "statement_timeout mid-compile: only timeouts expected" "$(grep -v 'ERROR:  57014' <<<"$to_out" | grep -m5 'ERROR:\|WARNING:')"
else
	ok "statement_timeout mid-compile: only 57014 errors"
fi

# pg_cancel_backend and pg_terminate_backend of busy sessions at random
# moments, while another session keeps working
busy_script() { # $1 = tag
	cat <<SQL
SET application_name = '$1';
SET btree_jit.object_cache = off;
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('k\_%', 2);
SET btree_jit.object_cache = on;
INSERT INTO s_a (k, t, g, c, x, v) SELECT g % 7, now(), 1, 'q', 'busy', 500000000::int8 + g + $RANDOM * 100000::int8 FROM generate_series(1, 3000) g ON CONFLICT DO NOTHING;
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('tf', 2);
SELECT '@@DONE';
SQL
}
ncancel=0
nterm=0
busy_bad=0
cancel_rounds=()
for round in 1 2 3 4; do
	busy_script "busy$round" | as_postgres "$psql_bin" -X -q -At -v ON_ERROR_STOP=0 -v VERBOSITY=verbose >"$work/busy$round.out" 2>&1 &
	bpid=$!
	sleep "0.$((RANDOM % 9 + 1))"
	if ((round % 2)); then
		fn=pg_cancel_backend
	else
		fn=pg_terminate_backend
	fi
	r=$(q "SELECT count(*) FILTER (WHERE $fn(pid)) FROM pg_stat_activity WHERE application_name = 'busy$round'")
	if [[ $fn == pg_cancel_backend ]]; then ncancel=$((ncancel + r)); else nterm=$((nterm + r)); fi
	[[ $fn == pg_cancel_backend && $r == 1 ]] && cancel_rounds+=("$round")
	# another session meanwhile
	if ! q "SELECT count(*) FROM s_a WHERE k = 3" >/dev/null; then
		busy_bad=$((busy_bad + 1))
	fi
	wait "$bpid" || true
	if grep -q '@@R .* [1-9][0-9]*$' "$work/busy$round.out"; then
		busy_bad=$((busy_bad + 1))
		echo "   busy$round: mismatch: $(grep '@@R' "$work/busy$round.out")"
	fi
	if grep -v 'ERROR:  57014\|FATAL:  57P01\|terminating connection due to administrator\|server closed the connection\|connection to server was lost\|This probably means\|before or while processing' "$work/busy$round.out" | grep -q 'ERROR:\|FATAL:\|PANIC'; then
		busy_bad=$((busy_bad + 1))
		echo "   busy$round: unexpected: $(grep -m3 'ERROR:\|FATAL:' "$work/busy$round.out")"
	fi
done
echo "   cancelled $ncancel, terminated $nterm busy sessions"
ncont=0
for r in "${cancel_rounds[@]}"; do
	grep -q '^@@DONE' "$work/busy$r.out" && ncont=$((ncont + 1))
done
expect_eq "cancelled sessions carried on to the end of their script" "$ncont" "${#cancel_rounds[@]}"
expect_eq "cancel/terminate: no unexpected errors or mismatches, other sessions unaffected" "$busy_bad" 0
check "cancel/terminate: postmaster did not restart" server_alive
echo "   ($(elapsed "$t4")s)"

# ===========================================================================
echo "-- 5. object cache: corrupted, truncated and swapped files"
t5=$(now)
cache_dir=$PGDATA/btree_jit_cache
mapfile -t objs < <(ls "$cache_dir"/*.o 2>/dev/null || true)
if [[ ${#objs[@]} -lt 3 ]]; then
	bad "object cache has files to corrupt (found ${#objs[@]})"
else
	i=0
	for f in "${objs[@]}"; do
		case $((i % 3)) in
		0) head -c "$(stat -c %s "$f")" /dev/urandom >"$f" ;;
		1) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
		2) cp "${objs[$(((i + 1) % ${#objs[@]}))]}" "$f" ;;
		esac
		i=$((i + 1))
	done
	chown "$BTJIT_OS_USER:" "$cache_dir"/*.o
	log_from=$(server_log_size)
	oc_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('m\_1', 2);
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('tf', 2);
SELECT '@@S ' || count(*) FILTER (WHERE state = 'jit') || ' ' || count(*) FILTER (WHERE state = 'stock') FROM btree_jit_index_stats();
SQL
	) || true
	nignored=$(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'ignoring cached object' || true)
	echo "   ${#objs[@]} cached objects damaged; the server log says 'ignoring cached object' $nignored times; stats (jit, stock): $(sed -n 's/^@@S //p' <<<"$oc_out")"
	oc_mis=$(sed -n 's/^@@R [0-9]* //p' <<<"$oc_out" | sum_lines)
	expect_eq "damaged object cache: every index compared on/off without mismatch ($(sed -n 's/^@@R \([0-9]*\) .*/\1/p' <<<"$oc_out" | sum_lines) indexes)" "$oc_mis" 0
	if grep -q 'ERROR:' <<<"$oc_out"; then
		bad "damaged object cache: errors" "$(grep -m5 'ERROR:' <<<"$oc_out")"
	else
		ok "damaged object cache: no errors (verify on)"
	fi
fi
# Deterministic case: the cached file of shape B holds shape A's object.
# Loading it must not leave A's symbol behind in the backend, or A's own
# (valid) object later fails with "Duplicate definition of symbol".
psql_as -q <<'SQL'
CREATE TABLE oc (a int8, b date, c time, d oid, e int2);
INSERT INTO oc SELECT g, '2000-01-01'::date + g, '00:00'::time + g * interval '1 s', g, (g % 100)::int2 FROM generate_series(1, 2000) g;
CREATE INDEX oc_w ON oc (e DESC NULLS LAST, c NULLS FIRST, b DESC);
CREATE INDEX oc_a ON oc (a DESC, b NULLS FIRST);
CREATE INDEX oc_b ON oc (c, d DESC NULLS LAST);
SQL
new_cache_file() { # index -> the cache file its compile created (warm-up first)
	local files
	files=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<SQL | sed -n 's/^@@F //p'
SELECT count(*) FROM btree_jit_compile('oc_w');
SELECT coalesce(string_agg(f, ','), '') AS before FROM pg_ls_dir('btree_jit_cache') f \gset
SELECT count(*) FROM btree_jit_compile('$1');
SELECT '@@F ' || f FROM pg_ls_dir('btree_jit_cache') f
 WHERE f LIKE '%.o' AND NOT f = ANY (string_to_array(:'before', ','));
SQL
	)
	# opening the index may compile catalog shapes first: the index's own
	# object is the last one stored
	[[ -n $files ]] && (cd "$cache_dir" && ls -t $files | head -n 1)
}
# an empty cache first: a shape some earlier section compiled (section 3
# draws its shapes at random) would be linked, not stored again
find "$cache_dir" -name '*.o' -delete
fa=$(new_cache_file oc_a) || true
fb=$(new_cache_file oc_b) || true
if [[ $fa != *.o || $fb != *.o || $fa == *$'\n'* || $fb == *$'\n'* ]]; then
	bad "swapped cache file case: could not tell the cache files of oc_a and oc_b apart" "oc_a: $fa / oc_b: $fb"
else
	cp "$cache_dir/$fa" "$cache_dir/$fb"
	sw_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SELECT '@@B ' || state FROM btree_jit_compile('oc_b');
SELECT '@@A ' || state FROM btree_jit_compile('oc_a');
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('oc', 2);
SQL
	) || true
	echo "   cache file of oc_b replaced by oc_a's ($fb <- $fa): oc_b $(sed -n 's/^@@B //p' <<<"$sw_out"), then oc_a $(sed -n 's/^@@A //p' <<<"$sw_out")"
	if [[ $(sed -n 's/^@@A //p' <<<"$sw_out") == jit && $(sed -n 's/^@@B //p' <<<"$sw_out") == jit ]] && ! grep -q WARNING <<<"$sw_out"; then
		ok "swapped cache file: both shapes compile, no WARNING"
	else
		bad "swapped cache file: a wrong object in the cache must not break the shape it belongs to" \
			"$(grep -v '^LOCATION\|^HINT' <<<"$sw_out" | head -n 8)"
	fi
	expect_eq "swapped cache file: oc indexes compared on/off without mismatch" "$(sed -n 's/^@@R [0-9]* //p' <<<"$sw_out")" 0
fi
# leave a clean cache for the next sections
rm -f "$cache_dir"/*.o
check "object cache faults: postmaster did not restart" server_alive
echo "   ($(elapsed "$t5")s)"

# ===========================================================================
echo "-- 5b. compile worker: waits, a killed compile, a failing shape, an unwritable cache"
t5b=$(now)
worker_pid=$(q "SELECT worker_pid FROM btree_jit_status()")
check "compile worker running (pid ${worker_pid:-none})" test -n "$worker_pid"
set_worker_fault() { # none | slow | error
	q "ALTER SYSTEM SET btree_jit.compile_fault = '$1'" >/dev/null
	q "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
}
# cw_state INDEX: this backend's state of INDEX after one search
cw_search_sql() { # table index where
	cat <<SQL
SET btree_jit.compile_mode = background;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT '@@N ' || count(*) FROM $1 WHERE $3;
SELECT '@@S ' || state || ' ' || coalesce(reason, '') FROM btree_jit_index_stats() WHERE indexrelid = '$2'::regclass;
SQL
}
# wait_jit TABLE INDEX WHERE SECONDS: search until the index is on compiled code
wait_jit() {
	local deadline st
	deadline=$(awk -v n="$(now)" -v s="$4" 'BEGIN { printf "%d", n + s }')
	while :; do
		st=$(cw_search_sql "$1" "$2" "$3" | psqlv 2>&1 | sed -n 's/^@@S //p')
		[[ $st == jit* ]] && { echo jit; return; }
		[[ $(date +%s) -ge $deadline ]] && { echo "$st"; return; }
		sleep 0.2
	done
}
psql_as -q <<'SQL'
CREATE TABLE cw_a (a int2, b int4);
INSERT INTO cw_a SELECT g % 1000, g FROM generate_series(1, 50000) g;
CREATE INDEX cw_a_idx ON cw_a (a, b DESC);
CREATE TABLE cw_b (a int8, b int2);
INSERT INTO cw_b SELECT g, g % 77 FROM generate_series(1, 50000) g;
CREATE INDEX cw_b_idx ON cw_b (a DESC, b DESC NULLS FIRST);
CREATE TABLE cw_c (a date, b int4, c int2);
INSERT INTO cw_c SELECT '2000-01-01'::date + g % 5000, g, g % 100 FROM generate_series(1, 50000) g;
CREATE INDEX cw_c_idx ON cw_c (a, b, c);
ANALYZE cw_a, cw_b, cw_c;
SQL
# the catalogs' shapes into the cache first (inline, the tables not
# searched by index), so that the worker's queue holds only our shapes
psqlv -c "SET enable_indexscan = off" -c "SET enable_bitmapscan = off" \
	-c "SELECT count(*) FROM cw_a WHERE a = 1" -c "SELECT count(*) FROM cw_b WHERE a = 1" \
	-c "SELECT count(*) FROM cw_c WHERE a = '2001-01-01'" -c "SELECT * FROM btree_jit_index_stats() LIMIT 0" >/dev/null 2>&1 || true
log_from=$(server_log_size)

# (a) no query waits: the child sleeps 3 s before compiling
set_worker_fault slow
t_q=$(now)
out=$(cw_search_sql cw_a cw_a_idx "a = 7" | psqlv 2>&1) || true
q_secs=$(elapsed "$t_q")
expect_eq "queued search answers (count)" "$(sed -n 's/^@@N //p' <<<"$out")" 50
check "a search that queues its shape does not wait for the compile (${q_secs}s with a 3 s compile)" awk -v s="$q_secs" 'BEGIN { exit !(s < 1.5) }'
expect_eq "index state while the worker compiles" "$(sed -n 's/^@@S //p' <<<"$out" | cut -d' ' -f1)" queued
expect_eq "queue length while compiling" "$(q "SELECT queue_length FROM btree_jit_status()")" 1

# (b) the compile child killed mid-compile.  The worker forks it once the
# hold ends (the queuing backend idle or gone, at most 250 ms after
# queuing): wait for it, well within the child's 3 s sleep.
child=
for i in $(seq 1 40); do
	child=$(pgrep -P "$worker_pid" | head -n1 || true)
	[[ -n $child ]] && break
	sleep 0.05
done
if [[ -z $child ]]; then
	bad "compile child of the worker not found"
else
	kill -KILL "$child"
	sleep 0.3
	ok "compile child $child killed with SIGKILL mid-compile"
fi
out=$(cw_search_sql cw_a cw_a_idx "a = 8" | psqlv 2>&1) || true
expect_eq "after the kill: search answers on the stock path" "$(sed -n 's/^@@N //p' <<<"$out")" 50
expect_eq "after the kill: same worker" "$(q "SELECT worker_pid FROM btree_jit_status()")" "$worker_pid"
check "after the kill: postmaster did not restart" server_alive
set_worker_fault none
expect_eq "after the kill: the shape is retried and compiles (within 30 s)" "$(wait_jit cw_a cw_a_idx "a = 9" 30)" jit
check "the worker logged the killed compile and its retry" grep -q "failed, retrying: the compile process was killed by signal 9" <(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG")

# (c) a shape whose compile fails: failed once, logged once, never retried
set_worker_fault error
nfail0=$(q "SELECT worker_failures FROM btree_jit_status()")
out=$(cw_search_sql cw_b cw_b_idx "a = 5" | psqlv 2>&1) || true
expect_eq "failing shape: search answers" "$(sed -n 's/^@@N //p' <<<"$out")" 1
st=stock
for i in $(seq 1 50); do
	st=$(cw_search_sql cw_b cw_b_idx "a = 6" | psqlv 2>&1 | sed -n 's/^@@S //p')
	[[ $st == queued* ]] || break
	sleep 0.2
done
case $st in
stock*"the compile worker failed"*) ok "failing shape: index on the stock path with the worker's reason (${st:0:90})" ;;
*) bad "failing shape: want state stock with the worker's reason" "$st" ;;
esac
set_worker_fault none
nfail1=$(q "SELECT worker_failures FROM btree_jit_status()")
nlog1=$(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'the compile worker could not compile key shape' || true)
check "failing shape: counted as a worker failure ($nfail0 -> $nfail1) and logged ($nlog1)" test "$nfail1" -gt "$nfail0" -a "$nlog1" -ge 1
# new sessions and more searches, the fault gone: still failed, not
# compiled again, not logged again
for i in 1 2 3; do cw_search_sql cw_b cw_b_idx "a = $i" | psqlv >/dev/null 2>&1 || true; done
sleep 1
expect_eq "failing shape: not retried (worker failures unchanged)" "$(q "SELECT worker_failures FROM btree_jit_status()")" "$nfail1"
expect_eq "failing shape: still stock in a new session" "$(cw_search_sql cw_b cw_b_idx "a = 9" | psqlv 2>&1 | sed -n 's/^@@S //p' | cut -d' ' -f1)" stock
expect_eq "failing shape: not logged again" "$(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'the compile worker could not compile key shape' || true)" "$nlog1"

# (d) the cache directory unwritable (the server runs as $BTJIT_OS_USER)
nfail0=$(q "SELECT worker_failures FROM btree_jit_status()")
mkdir -p "$cache_dir"
chown "$BTJIT_OS_USER:" "$cache_dir"
chmod 0555 "$cache_dir"
t_q=$(now)
out=$(cw_search_sql cw_c cw_c_idx "a = '2001-01-01'" | psqlv 2>&1) || true
q_secs=$(elapsed "$t_q")
expect_eq "unwritable cache: search answers" "$(sed -n 's/^@@N //p' <<<"$out")" 10
check "unwritable cache: the search did not wait (${q_secs}s)" awk -v s="$q_secs" 'BEGIN { exit !(s < 1.5) }'
st=$(wait_jit cw_c cw_c_idx "a = '2001-01-02'" 20)
case $st in
stock*"ould not create file"*) ok "unwritable cache: index on the stock path, reason: ${st:0:100}" ;;
*) bad "unwritable cache: want state stock with the write error" "$st" ;;
esac
nfail1=$(q "SELECT worker_failures FROM btree_jit_status()")
nlog1=$(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'ould not create file' || true)
for i in 1 2 3; do cw_search_sql cw_c cw_c_idx "a = '2001-01-0$i'" | psqlv >/dev/null 2>&1 || true; done
sleep 1
expect_eq "unwritable cache: not retried, not logged again" \
	"$(q "SELECT worker_failures FROM btree_jit_status()") $(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'ould not create file' || true)" "$nfail1 $nlog1"
chmod 0700 "$cache_dir"
fin=$(psqlv -c "SET btree_jit.compile_mode = background" -c "SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('cw\__', 4)" 2>&1 | sed -n 's/^@@R [0-9]* //p')
expect_eq "compile worker tables compared on/off without mismatch" "$fin" 0
check "compile worker faults: postmaster did not restart" server_alive
expect_eq "compile worker faults: same worker throughout" "$(q "SELECT worker_pid FROM btree_jit_status()")" "$worker_pid"
q "ALTER SYSTEM RESET btree_jit.compile_fault" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
echo "   ($(elapsed "$t5b")s)"

# ===========================================================================
echo "-- 6. concurrency: readers, writers, pgbench, DDL for ${conc_secs}s"
t6=$(now)
as_postgres "$(pg_bindir)/pgbench" -i -s 1 -q >"$work/pgbench-init.out" 2>&1 ||
	bad "pgbench -i" "$(tail -n 5 "$work/pgbench-init.out")"
deadline=$(($(date +%s) + conc_secs))

cat >"$work/reader.sql" <<'SQL'
SET btree_jit.enabled = on;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL btree_jit.enabled = off;
SELECT '@@P ' || stress_probe(6);
SET btree_jit.enabled = on;
SELECT '@@P ' || stress_probe(6);
SET btree_jit.enabled = off;
ROLLBACK;
SELECT '@@SHOW on ' || current_setting('btree_jit.enabled');
BEGIN;
SET btree_jit.enabled = off;
COMMIT;
SELECT '@@SHOW off ' || current_setting('btree_jit.enabled');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SAVEPOINT s1;
SET btree_jit.enabled = on;
SELECT '@@P ' || stress_probe(6);
ROLLBACK TO s1;
SELECT '@@SHOW off ' || current_setting('btree_jit.enabled');
SET LOCAL btree_jit.enabled = on;
SELECT '@@P ' || stress_probe(6);
COMMIT;
SELECT '@@SHOW off ' || current_setting('btree_jit.enabled');
SET btree_jit.enabled = on;
SQL
cat >"$work/writer.sql" <<'SQL'
SELECT '@@W ' || stress_write(4);
SELECT '@@W ' || stress_write(4);
SELECT '@@W ' || stress_write(4);
SELECT '@@W ' || stress_write(4);
SELECT '@@W ' || stress_write(4);
SQL
cat >"$work/ddl.sql" <<'SQL'
SET lock_timeout = '2s';
SET statement_timeout = '30s';
REINDEX INDEX s_a_k_t;
SELECT pg_sleep(0.3);
REINDEX INDEX CONCURRENTLY s_a_g_k;
DROP INDEX IF EXISTS s_a_c_id;
CREATE INDEX s_a_c_id ON s_a (c DESC, id);
SELECT pg_sleep(0.3);
DROP INDEX CONCURRENTLY IF EXISTS s_b_bc;
CREATE INDEX CONCURRENTLY s_b_bc ON s_b (b DESC NULLS LAST, c);
REINDEX INDEX CONCURRENTLY pgbench_accounts_pkey;
ALTER TABLE s_a ALTER COLUMN k TYPE int8;
SELECT pg_sleep(0.5);
ALTER TABLE s_b ALTER COLUMN b TYPE timestamp;
VACUUM s_a;
REINDEX TABLE CONCURRENTLY s_b;
ALTER TABLE s_a ALTER COLUMN k TYPE int4;
SELECT pg_sleep(0.5);
ALTER TABLE s_b ALTER COLUMN b TYPE date;
ALTER TABLE s_a ALTER COLUMN g TYPE int4;
CLUSTER s_a USING s_a_k_t;
ALTER TABLE s_a ALTER COLUMN g TYPE int2;
ANALYZE s_a;
VACUUM s_b;
SELECT '@@DDL';
SQL

worker() { # name script
	local name=$1 script=$2
	while (($(date +%s) < deadline)); do
		PGAPPNAME=$name as_postgres "$psql_bin" -X -q -At -v ON_ERROR_STOP=0 -v VERBOSITY=verbose \
			<"$script" >>"$work/$name.out" 2>&1 || true
	done
}
wpids=()
worker reader1 "$work/reader.sql" & wpids+=($!)
worker reader2 "$work/reader.sql" & wpids+=($!)
worker writer1 "$work/writer.sql" & wpids+=($!)
worker writer2 "$work/writer.sql" & wpids+=($!)
worker ddl "$work/ddl.sql" & wpids+=($!)
as_postgres "$(pg_bindir)/pgbench" -n -S -M prepared -c 2 -j 1 -T "$conc_secs" >"$work/pgbench.out" 2>&1 &
pgb_pid=$!
for p in "${wpids[@]}"; do
	wait "$p" || true
done
pgb_rc=0
wait "$pgb_pid" || pgb_rc=$?

# classify errors
# (42P07: CREATE INDEX after its DROP INDEX ran into lock_timeout; the
# 55000 WARNING: REINDEX after a CREATE INDEX CONCURRENTLY that lock_timeout
# interrupted, leaving an invalid index the server's REINDEX skips)
expected_re='ERROR:  (40P01|40001|55P03|57014|42P01|42704|42P07|0A000: cached plan must not change result type|42804: .*does not match that when preparing the plan)|WARNING:  55000: skipping reindex of invalid index'
declare -A cls=()
unexpected=""
for f in reader1 reader2 writer1 writer2 ddl; do
	while IFS= read -r line; do
		code=$(grep -o 'ERROR:  [0-9A-Z]\{5\}' <<<"$line" | cut -c9- || true)
		if grep -Eq "$expected_re" <<<"$line"; then
			cls["expected $code"]=$((${cls["expected $code"]:-0} + 1))
		else
			cls["UNEXPECTED ${code:-?}"]=$((${cls["UNEXPECTED ${code:-?}"]:-0} + 1))
			unexpected+="$f: $line"$'\n'
		fi
	done < <(grep -E 'ERROR:|FATAL:|PANIC:|server closed|WARNING:' "$work/$f.out" | grep -v 'WARNING:  MISMATCH' || true)
done
nprobes=$(cat "$work"/reader*.out | grep -c '^@@P' || true)
probe_mis=$(cat "$work"/reader*.out | sed -n 's/^@@P //p' | sum_lines)
mismatch_lines=$(cat "$work"/reader*.out | grep 'MISMATCH' || true)
nshow=$(cat "$work"/reader*.out | grep -c '^@@SHOW' || true)
show_bad=$(cat "$work"/reader*.out | grep '^@@SHOW' | awk '$2 != $3' | head -n 5)
nwrites=$(cat "$work"/writer*.out | grep -c '^@@W' || true)
ndups=$(cat "$work"/writer*.out | sed -n 's/^@@W //p' | sum_lines)
nddl=$(grep -c ';$' "$work/ddl.sql")
ddl_loops=$(grep -c '^@@DDL' "$work/ddl.out" || true)
echo "   readers: $nprobes stress_probe calls (x6 probes, each on and off in one snapshot), $nshow setting checks after ROLLBACK/COMMIT/ROLLBACK TO"
echo "   writers: $nwrites stress_write calls (x4 writes), $ndups unique violations caught"
echo "   DDL session: $ddl_loops complete loops of $nddl statements (REINDEX [CONCURRENTLY], DROP/CREATE INDEX [CONCURRENTLY], ALTER COLUMN TYPE x4, CLUSTER, VACUUM)"
echo "   error classes: $(for k in "${!cls[@]}"; do printf '%s=%s ' "$k" "${cls[$k]}"; done)"
echo "   pgbench: $(grep -E 'number of transactions actually processed|number of failed|tps = .*without' "$work/pgbench.out" | tr '\n' ';')"
check "concurrency: readers ran" test "$nprobes" -gt 0
check "concurrency: writers ran" test "$nwrites" -gt 0
check "concurrency: the DDL session completed loops ($ddl_loops)" test "$ddl_loops" -gt 0
expect_eq "concurrency: on/off probe mismatches in REPEATABLE READ snapshots" "${probe_mis:-0}${mismatch_lines:+ $mismatch_lines}" 0
expect_eq "concurrency: btree_jit.enabled after ROLLBACK / COMMIT / ROLLBACK TO as expected ($nshow checks)" "$show_bad" ""
if [[ -z $unexpected ]]; then
	ok "concurrency: no unexpected errors"
else
	bad "concurrency: unexpected errors" "$(head -n 10 <<<"$unexpected")"
fi
expect_eq "pgbench -S -M prepared during DDL: exit status" "$pgb_rc" 0
check "pgbench: no failed transactions" grep -q 'number of failed transactions: 0 ' "$work/pgbench.out"
check "concurrency: postmaster did not restart" server_alive
echo "   ($(elapsed "$t6")s)"

# ===========================================================================
echo "-- 7. final checks"
t7=$(now)
# leftovers of failed CREATE/REINDEX CONCURRENTLY are invalid: drop them
q "SELECT count(*) FROM (SELECT 1 FROM pg_index WHERE NOT indisvalid) x" >/dev/null
psqlv -v ON_ERROR_STOP=0 -c "DO \$\$ DECLARE r record; BEGIN FOR r IN SELECT indexrelid::regclass AS ix FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE NOT i.indisvalid AND c.relname IN ('s_a', 's_b', 'pgbench_accounts') LOOP EXECUTE format('DROP INDEX %s', r.ix); END LOOP; END \$\$" >/dev/null 2>&1 || true
am_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.enabled = on;
SET btree_jit.verify = on;
SELECT '@@A ' || count(*) FROM (
  SELECT bt_index_parent_check(c.oid, true, true)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
   WHERE c.relam = 403 AND c.relkind = 'i' AND i.indisvalid AND i.indisready AND c.relpersistence <> 't'
     AND NOT (c.relname LIKE 'm\_%' AND random() > 0.1)) x;
SQL
) || true
nam=$(sed -n 's/^@@A //p' <<<"$am_out")
if [[ -n $nam ]] && ! grep -q 'ERROR:' <<<"$am_out"; then
	ok "amcheck bt_index_parent_check(heapallindexed, rootdescend) clean on $nam btree indexes (catalogs, stress tables, pgbench, a tenth of the 2000 shape indexes)"
else
	bad "amcheck" "$am_out"
fi
echo "   (amcheck $(elapsed "$t7")s)"
fin_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('s\__', 4);
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('pgbench%', 4);
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('tf', 4);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT '@@R 0 ' || stress_probe(300);
COMMIT;
SQL
) || true
fin_mis=$(sed -n 's/^@@R [0-9]* //p' <<<"$fin_out" | sum_lines)
fin_n=$(sed -n 's/^@@R \([0-9]*\) .*/\1/p' <<<"$fin_out" | sum_lines)
expect_eq "final on/off comparison over $fin_n indexes (4 probes each) + 300 random probes" "$fin_mis" 0
if grep -q 'ERROR:' <<<"$fin_out"; then bad "final comparisons: errors" "$(grep -m5 'ERROR:' <<<"$fin_out")"; fi
IFS='|' read -r s_jit s_stock s_ver s_comp s_cfail < <(q "SELECT jit_searches, stock_searches, verified_searches, compiles, compile_failures FROM btree_jit_status()")
echo "   cluster-wide btree_jit_status(): jit_searches=$s_jit stock_searches=$s_stock verified_searches=$s_ver compiles=$s_comp compile_failures=$s_cfail"
check "verified searches happened cluster-wide" test "${s_ver:-0}" -gt 0
expect_eq "postmaster start time unchanged (no crash restart)" "$(q "SELECT pg_postmaster_start_time()")" "$pm_start"
problems=$(server_log_problems)
if [[ -z $problems ]]; then
	ok "server log: no crash, PANIC, abort or verify mismatch"
else
	bad "server log: crash, PANIC, abort or verify mismatch" "$problems"
fi
echo "   ($(elapsed "$t7")s)"

# ===========================================================================
echo "-- 8. a second cluster (compile_queue_size = 1): a full queue, the worker killed, warm start"
t8=$(now)
cluster_stop
cluster_start "" \
	"btree_jit.verify = on" \
	"btree_jit.compile_queue_size = 1" \
	"btree_jit.compile_fault = slow" \
	"max_connections = 20"
psql_as -q <<'SQL'
CREATE EXTENSION btree_jit;
CREATE TABLE f_a (a int4, b int2);
CREATE TABLE f_b (a int8, b int4);
CREATE TABLE f_c (a int2, b int8);
INSERT INTO f_a SELECT g, g % 100 FROM generate_series(1, 20000) g;
INSERT INTO f_b SELECT g, g % 100 FROM generate_series(1, 20000) g;
INSERT INTO f_c SELECT g % 1000, g FROM generate_series(1, 20000) g;
CREATE INDEX f_a_idx ON f_a (b, a DESC);   -- probes search b: the leading column on every version
CREATE INDEX f_b_idx ON f_b (b DESC, a DESC);
CREATE INDEX f_c_idx ON f_c (b, a DESC);
ANALYZE f_a, f_b, f_c;
SQL
# probe TABLE INDEX: 100 index lookups (past compile_threshold), then the state
probe_sql() {
	cat <<SQL
SET btree_jit.compile_mode = background;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
DO \$\$ BEGIN FOR i IN 1..100 LOOP PERFORM count(*) FROM $1 WHERE b = i; END LOOP; END \$\$;
SELECT '@@S ' || state || ' ' || coalesce(reason, '') FROM btree_jit_index_stats() WHERE indexrelid = '$2'::regclass;
SQL
}
probe_state() { probe_sql "$1" "$2" | psqlv 2>&1 | sed -n 's/^@@S //p'; }
wait_state() { # table index want seconds
	local st deadline=$(( $(date +%s) + $4 ))
	while :; do
		st=$(probe_state "$1" "$2")
		[[ $st == "$3"* || $(date +%s) -ge $deadline ]] && { echo "$st"; return; }
		sleep 0.3
	done
}
wpid=$(q "SELECT worker_pid FROM btree_jit_status()")
check "worker running in the second cluster (pid ${wpid:-none})" test -n "$wpid"
# wait_queue_empty SECONDS: the setup's own catalog shapes may hold the
# one entry (their compiles sleep 3 s)
wait_queue_empty() {
	local i
	for i in $(seq 1 $(($1 * 2))); do
		[[ $(q "SELECT queue_length FROM btree_jit_status()" 2>/dev/null) == 0 ]] && return 0
		sleep 0.5
	done
	return 1
}
check "setup's queued shapes compiled (queue empty within 60 s)" wait_queue_empty 60
# the probes' catalog shapes into the cache (inline, no f_* index searched),
# so that the one entry is free for the f_* shapes
# (a sequential scan: with every scan type disabled the planner would
# still pick the index, whose shape must not be cached yet)
psqlv >/dev/null 2>&1 <<'SQL' || true
SET btree_jit.compile_mode = inline;
SET btree_jit.compile_threshold = 0;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
DO $$ BEGIN FOR i IN 1..100 LOOP PERFORM count(*) FROM f_a WHERE b = i; END LOOP; END $$;
SQL
# one session: f_a's shape takes the only entry (its compile sleeps 3 s),
# f_b's finds the queue full and is compiled by the session itself
out=$( (probe_sql f_a f_a_idx; probe_sql f_b f_b_idx) | psqlv 2>&1) || true
expect_eq "full queue: first shape queued, second compiled inline" \
	"$(sed -n 's/^@@S \([a-z]*\).*/\1/p' <<<"$out" | tr '\n' ' ')" "queued jit "
check "full queue: counted in btree_jit_status().queue_full" test "$(q "SELECT queue_full FROM btree_jit_status()")" -ge 1
expect_eq "full queue: the queued shape compiles (within 30 s)" "$(wait_state f_a f_a_idx jit 30 | cut -d' ' -f1)" jit

# the worker itself killed mid-compile: a crash of a process attached to
# shared memory, which makes the postmaster restart every process
check "before the kill: queue empty" wait_queue_empty 30
probe_sql f_c f_c_idx | psqlv >/dev/null 2>&1 || true
sleep 0.5
expect_eq "before the kill: f_c queued" "$(q "SELECT queue_length FROM btree_jit_status()")" 1
log_from=$(server_log_size)
kill -KILL "$wpid"
ok "compile worker $wpid killed with SIGKILL mid-compile"
up=no
for i in $(seq 1 60); do
	if "$(pg_bindir)/pg_isready" -q -t 1 && [[ $(q "SELECT worker_pid IS NOT NULL FROM btree_jit_status()" 2>/dev/null) == t ]]; then up=yes; break; fi
	sleep 0.5
done
expect_eq "after the worker's crash: the cluster restarted and a new worker runs" "$up" yes
check "after the worker's crash: the postmaster logged it as a crash of the worker" grep -q 'btree_jit compile worker.*terminated by signal 9' <(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG")
check "after the worker's crash: a new worker" test "$(q "SELECT worker_pid FROM btree_jit_status()")" != "$wpid"
expect_eq "after the worker's crash: the stock path answers" "$(q "SET enable_seqscan = off; SELECT count(*) FROM f_c WHERE b = 5")" 1
check "after the worker's crash: queue empty" wait_queue_empty 30
expect_eq "after the worker's crash: the shape compiles once the worker is back (within 30 s)" "$(wait_state f_c f_c_idx jit 30 | cut -d' ' -f1)" jit

# warm start: the listed shapes missing from the cache are recompiled at
# start-up, before any backend asks
cache_dir=$PGDATA/btree_jit_cache
check "warm start: the worker keeps a list of shapes" test -s "$cache_dir/shapes"
rm -f "$cache_dir"/*.o
q "ALTER SYSTEM SET btree_jit.compile_fault = none" >/dev/null
log_from=$(server_log_size)
as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -l "$BTJIT_CLUSTER_LOG" -w -t 60 restart >/dev/null 2>&1 ||
	bad "warm start: restart failed"
nobj=0
for i in $(seq 1 60); do
	nobj=$(find "$cache_dir" -name '*.o' | wc -l)
	[[ $(q "SELECT queue_length FROM btree_jit_status()" 2>/dev/null) == 0 && $nobj -ge 2 ]] && break
	sleep 0.5
done
check "warm start: the worker found the listed shapes missing from the cache" grep -q 'warm start: [0-9]* of [0-9]* listed shapes' <(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG")
check "warm start: their objects are back without any search ($nobj objects)" test "$nobj" -ge 2
expect_eq "warm start: a new session links f_a's shape from the cache at once" \
	"$(probe_state f_a f_a_idx | cut -d' ' -f1)" jit
problems=$(server_log_problems | grep -v 'btree_jit compile worker.*terminated by signal 9\|terminating any other active server processes\|all server processes terminated\|database system was interrupted' || true)
if [[ -z $problems ]]; then
	ok "second cluster's log: no crash but the one caused, no PANIC or verify mismatch"
else
	bad "second cluster's log" "$problems"
fi
echo "   ($(elapsed "$t8")s)"

echo "wall time $(elapsed "$t_start")s (seed $seed)"
summary
