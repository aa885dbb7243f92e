# test/stress/09-worker-cluster.sh - stress section 9, worker cluster:
# a second small cluster (compile_queue_size = 1, every compile made to
# sleep): a full queue falls back to inline compiles; the worker itself
# killed with SIGKILL (a crash: the postmaster restarts all processes), then
# the shape compiles after the worker is back, and its warm start recompiles
# listed shapes missing from the cache.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 9.
# cluster: own

echo "-- 9. a second cluster (compile_queue_size = 1): a full queue, the worker killed, warm start"
t9=$(now)
# the first cluster is done (when a section of it ran)
[[ -z ${BTJIT_CLUSTER_DIR:-} ]] || cluster_stop
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
echo "   ($(elapsed "$t9")s)"
