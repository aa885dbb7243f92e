# test/stress/01-bad-input.sh - stress section 1, bad input:
# every SQL function with NULL, a table, a view, a sequence,
# hash/gist/gin/brin and partitioned indexes, OID 0, a dropped index's OID,
# an index of another session's temp table, bad formats and GUC values, an
# unprivileged role: a clear error with the expected SQLSTATE or a normal
# answer, never a crash.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 1.
# cluster: first

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
