# test/stress/07-concurrency.sh - stress section 7, concurrency:
# readers (REPEATABLE READ, btree_jit.enabled toggled mid-transaction and
# rolled back, on/off compared), a parallel reader (parallel index and
# index-only range scans, whose workers read leaf pages with the module's
# walk under verify, and IN-list scans, on/off compared in one snapshot),
# writers (duplicates, ON CONFLICT, caught
# unique violations, splits), pgbench -S -M prepared, and a DDL session
# (REINDEX [CONCURRENTLY], DROP/CREATE INDEX [CONCURRENTLY], ALTER COLUMN
# TYPE, CLUSTER, VACUUM) for --minutes; errors are classified (deadlocks,
# lock timeouts, DDL races are expected; anything else is not).
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 7.
# cluster: first

echo "-- 7. concurrency: readers, writers, pgbench, DDL for ${conc_secs}s"
t7=$(now)
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
# parallel plans are run at the top level: PL/pgSQL's EXECUTE ... INTO
# never runs one.  A statement that fails (a DDL race) leaves its
# variables unset, and that comparison is skipped.
# parallel_compare QUERY - QUERY (one row: c, s) with the module on and off
# in one REPEATABLE READ snapshot, and a line "@@PAR <equal> <c on> <c off>"
parallel_compare() {
	cat <<SQL
\unset on_c
\unset off_c
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL btree_jit.enabled = on;
$1 \gset on_
SET LOCAL btree_jit.enabled = off;
$1 \gset off_
\if :{?on_c}
\if :{?off_c}
SELECT '@@PAR ' || (:'on_c' = :'off_c' AND :'on_s' = :'off_s') || ' ' || :'on_c' || ' ' || :'off_c';
\endif
\endif
COMMIT;
SQL
}
{
	cat <<'SQL'
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SQL
	parallel_compare "SELECT count(*) AS c, coalesce(sum(id), 0) AS s FROM s_a WHERE k BETWEEN 20 AND 1800"
	parallel_compare "SELECT count(*) AS c, coalesce(sum(k), 0) AS s FROM s_a WHERE k > 300 AND k < 1900"
	# IN-lists (array keys; 15 and 17 read them with the module's walk):
	# one array, an array after an equality, and arrays on two columns
	parallel_compare "SELECT count(*) AS c, coalesce(sum(id), 0) AS s FROM s_a WHERE k = ANY (ARRAY(SELECT generate_series(7, 1990, 29)))"
	parallel_compare "SELECT count(*) AS c, coalesce(sum(id), 0) AS s FROM s_a WHERE g = 3 AND k IN (5, 77, 300, 301, 1500, 1999)"
	parallel_compare "SELECT count(*) AS c, coalesce(sum(v), 0) AS s FROM s_a WHERE g IN (1, 4, 9) AND k = ANY ('{12, 400, 401, 1700}'::int8[])"
} >"$work/preader.sql"
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
worker preader "$work/preader.sql" & wpids+=($!)
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
# interrupted, leaving an invalid index the server's REINDEX skips; the
# 0A000 WARNING: REINDEX TABLE CONCURRENTLY meeting that same invalid index)
expected_re='ERROR:  (40P01|40001|55P03|57014|42P01|42704|42P07|0A000: cached plan must not change result type|42804: .*does not match that when preparing the plan)|WARNING:  55000: skipping reindex of invalid index|WARNING:  0A000: cannot reindex invalid index "[^"]*" concurrently, skipping'
declare -A cls=()
unexpected=""
for f in reader1 reader2 preader writer1 writer2 ddl; do
	while IFS= read -r line; do
		# the parallel reader's transaction after a statement that failed
		[[ $f == preader && $line == *"ERROR:  25P02"* ]] && continue
		code=$(grep -o 'ERROR:  [0-9A-Z]\{5\}' <<<"$line" | cut -c9- || true)
		if grep -Eq "$expected_re" <<<"$line"; then
			cls["expected $code"]=$((${cls["expected $code"]:-0} + 1))
		else
			cls["UNEXPECTED ${code:-?}"]=$((${cls["UNEXPECTED ${code:-?}"]:-0} + 1))
			unexpected+="$f: $line"$'\n'
			# psql -v VERBOSITY=verbose prints the error's DETAIL next
			detail=$(grep -F -A 3 -- "$line" "$work/$f.out" | grep -m 1 'DETAIL:' || true)
			[[ -z $detail ]] || unexpected+="$f:   $detail"$'\n'
		fi
	done < <(grep -E 'ERROR:|FATAL:|PANIC:|server closed|WARNING:' "$work/$f.out" | grep -v 'WARNING:  MISMATCH' || true)
done
nprobes=$(cat "$work"/reader*.out | grep -c '^@@P' || true)
probe_mis=$(cat "$work"/reader*.out | sed -n 's/^@@P //p' | sum_lines)
mismatch_lines=$(cat "$work"/reader*.out | grep 'MISMATCH' || true)
nshow=$(cat "$work"/reader*.out | grep -c '^@@SHOW' || true)
show_bad=$(cat "$work"/reader*.out | grep '^@@SHOW' | awk '$2 != $3' | head -n 5)
npar=$(grep -c '^@@PAR' "$work/preader.out" || true)
par_bad=$(grep '^@@PAR' "$work/preader.out" | grep -v '^@@PAR true ' | head -n 5 || true)
nwrites=$(cat "$work"/writer*.out | grep -c '^@@W' || true)
ndups=$(cat "$work"/writer*.out | sed -n 's/^@@W //p' | sum_lines)
nddl=$(grep -c ';$' "$work/ddl.sql")
ddl_loops=$(grep -c '^@@DDL' "$work/ddl.out" || true)
echo "   readers: $nprobes stress_probe calls (x6 probes, each on and off in one snapshot), $nshow setting checks after ROLLBACK/COMMIT/ROLLBACK TO"
echo "   parallel reader: $npar range and IN-list scans compared on/off in one snapshot"
echo "   writers: $nwrites stress_write calls (x4 writes), $ndups unique violations caught"
echo "   DDL session: $ddl_loops complete loops of $nddl statements (REINDEX [CONCURRENTLY], DROP/CREATE INDEX [CONCURRENTLY], ALTER COLUMN TYPE x4, CLUSTER, VACUUM)"
echo "   error classes: $(for k in "${!cls[@]}"; do printf '%s=%s ' "$k" "${cls[$k]}"; done)"
echo "   pgbench: $(grep -E 'number of transactions actually processed|number of failed|tps = .*without' "$work/pgbench.out" | tr '\n' ';')"
check "concurrency: readers ran" test "$nprobes" -gt 0
check "concurrency: writers ran" test "$nwrites" -gt 0
check "concurrency: the parallel reader compared scans ($npar)" test "$npar" -gt 0
expect_eq "concurrency: parallel range scans on/off in one snapshot" "$par_bad" ""
check "concurrency: the DDL session completed loops ($ddl_loops)" test "$ddl_loops" -gt 0
expect_eq "concurrency: on/off probe mismatches in REPEATABLE READ snapshots" "${probe_mis:-0}${mismatch_lines:+ $mismatch_lines}" 0
expect_eq "concurrency: btree_jit.enabled after ROLLBACK / COMMIT / ROLLBACK TO as expected ($nshow checks)" "$show_bad" ""
if [[ -z $unexpected ]]; then
	ok "concurrency: no unexpected errors"
else
	bad "concurrency: unexpected errors" "$(head -n 20 <<<"$unexpected")"
fi
expect_eq "pgbench -S -M prepared during DDL: exit status" "$pgb_rc" 0
check "pgbench: no failed transactions" grep -q 'number of failed transactions: 0 ' "$work/pgbench.out"
check "concurrency: postmaster did not restart" server_alive
echo "   ($(elapsed "$t7")s)"
