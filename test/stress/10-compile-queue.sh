# test/stress/10-compile-queue.sh - stress section 10, the compile queue's
# order: on a fresh cluster with an empty object cache, shapes that one
# session queued and no longer searches must not delay an index that
# another session searches continuously (the worker compiles the busiest
# shape first).  Twice, with verify off (this is about what production
# runs):
#   - compiles at their real speed;
#   - every compile made to sleep 3 s (compile_fault = slow), which makes
#     the order plain in time: in arrival order the hot index would wait
#     for the six shapes queued before it (21 s and more).
# Both assert the order: when the hot index has its code, the worker has
# compiled at most two shapes since the hot session began (the one in
# progress when the hot one was queued, and the hot one); and the wait: at
# most the hold, the compile in progress and its own (bounded as three
# compiles, by the worker's own last compile time, plus a second; in
# arrival order it would be seven).
# The wall time itself is a figure, not an assertion (it depends on the
# machine's load: the compile child runs at nice 10): printed here, and
# measured on a quiet machine in bench/README.md ("The compile queue's
# order").
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 10.
# cluster: own

echo "-- 10. the compile queue: the busiest shape first, on a fresh cluster"
t10=$(now)
[[ -z ${BTJIT_CLUSTER_DIR:-} ]] || cluster_stop

# six "lukewarm" shapes, each searched past the threshold once, and one hot
# index of yet another shape
queue_setup_sql() {
	cat <<'SQL'
CREATE EXTENSION btree_jit;
CREATE TABLE q_cold (a int2, b int4, c int8, d float8, e int2, f int4);
INSERT INTO q_cold SELECT g % 300, g, g * 7, g / 3.0, g % 200, g FROM generate_series(1, 3000) g;
CREATE INDEX q_cold1 ON q_cold (a DESC, b);
CREATE INDEX q_cold2 ON q_cold (b, a DESC);
CREATE INDEX q_cold3 ON q_cold (c, b DESC);
CREATE INDEX q_cold4 ON q_cold (e, e, e);
CREATE INDEX q_cold5 ON q_cold (f DESC, f DESC, c);
CREATE INDEX q_cold6 ON q_cold (d);
CREATE TABLE q_hot (k int8, v int4, w int2);
INSERT INTO q_hot SELECT g, g % 1000, g % 100 FROM generate_series(1, 100000) g;
CREATE INDEX q_hot_idx ON q_hot (k DESC, v DESC, w DESC);
ANALYZE q_cold, q_hot;
SQL
}

# one session queues the six shapes (100 searches of each) and leaves
queue_cold_sql() {
	cat <<'SQL'
SET enable_seqscan = off;
SET enable_bitmapscan = off;
DO $$ BEGIN FOR i IN 1..100 LOOP
	PERFORM 1 FROM q_cold WHERE a = i;
	PERFORM 1 FROM q_cold WHERE b = i;
	PERFORM 1 FROM q_cold WHERE c = i * 7;
	PERFORM 1 FROM q_cold WHERE e = i;
	PERFORM 1 FROM q_cold WHERE f = i;
	PERFORM 1 FROM q_cold WHERE d = i;
END LOOP; END $$;
SELECT '@@Q ' || string_agg(indexrelid::regclass::text, ' ' ORDER BY 1)
  FROM btree_jit_index_stats()
 WHERE state = 'queued' AND indexrelid::regclass::text LIKE 'q_cold_';
SQL
}

# the hot session: probes q_hot_idx without a pause until it runs compiled
# code (or LIMIT seconds pass); prints the seconds from its first search,
# and the worker's compiles during that time and before it (a fast worker
# may have compiled lukewarm shapes before the hot session started: those
# say nothing about the order)
hot_sql() {
	cat <<SQL
SET enable_seqscan = off;
SET enable_bitmapscan = off;
DO \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
	st text;
	n int := 0;
	c0 bigint;
	c bigint;
	ms float8;
BEGIN
	SELECT worker_compiles INTO c0 FROM btree_jit_status();
	LOOP
		PERFORM 1 FROM q_hot WHERE k = 1 + (n::int8 * 7919) % 100000;
		n := n + 1;
		IF n % 100 = 0 THEN
			SELECT state INTO st FROM btree_jit_index_stats()
			 WHERE indexrelid = 'q_hot_idx'::regclass;
			EXIT WHEN st = 'jit' OR clock_timestamp() - t0 > interval '$1 s';
		END IF;
	END LOOP;
	SELECT worker_compiles, last_compile_ms INTO c, ms FROM btree_jit_status();
	RAISE NOTICE '@@H % % % % % %', st, round(extract(epoch FROM clock_timestamp() - t0)::numeric, 2), n, c - c0, round(ms::numeric), c0;
END \$\$;
SQL
}

# queue_run LABEL LIMIT_SECONDS SLEEP_SECONDS [conf lines]
# (SLEEP_SECONDS: what compile_fault = slow adds to each compile, outside
# the compile time the worker reports)
queue_run() {
	local label=$1 limit=$2 sleep_s=$3 out st secs n nq ncomp ms ncomp0 bound
	shift 3
	cluster_start "" "btree_jit.verify = off" "max_connections = 20" "$@"
	queue_setup_sql | psql_as -q >/dev/null
	# the set-up's own catalog shapes are queued too: let them be
	nq=$(queue_cold_sql | psqlv 2>&1 | sed -n 's/^@@Q //p')
	expect_eq "$label: the lukewarm session left its 6 shapes queued" "$nq" \
		"q_cold1 q_cold2 q_cold3 q_cold4 q_cold5 q_cold6"
	out=$(hot_sql "$limit" | psqlv 2>&1 | sed -n 's/.*@@H //p')
	read -r st secs n ncomp ms ncomp0 <<<"$out"
	echo "   $label: hot index state ${st:-?} after ${secs:-?} s (${n:-?} searches);" \
		"the worker compiled ${ncomp:-?} shapes meanwhile (${ncomp0:-?} before), the last in ${ms:-?} ms"
	expect_eq "$label: the hot index reached compiled code" "${st:-none}" jit
	# the compile in progress when it was queued, and its own
	check "$label: ... before the shapes queued earlier (worker compiles meanwhile: ${ncomp:-?}, at most 2)" \
		test "${ncomp:-99}" -le 2
	bound=$(awk -v ms="${ms:-0}" -v z="$sleep_s" 'BEGIN { printf "%.1f", 3 * (ms / 1000 + z) + 1 }')
	check "$label: ... within three compiles of its first search (took ${secs:-?} s, bound $bound s)" \
		awk -v s="${secs:-999}" -v b="$bound" 'BEGIN { exit !(s + 0 <= b + 0) }'
	problems=$(server_log_problems || true)
	if [[ -z $problems ]]; then
		ok "$label: server log clean"
	else
		bad "$label: server log" "$problems"
	fi
	cluster_stop
}

queue_run "real compiles" 30 0
queue_run "slow compiles (3 s each)" 60 3 "btree_jit.compile_fault = slow"
echo "   ($(elapsed "$t10")s)"
