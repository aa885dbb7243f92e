# test/stress/06-compile-worker.sh - stress section 6, compile worker:
# (compile_mode = background) no query waits for the worker (its compile
# child made to sleep 3 s); the child killed with SIGKILL mid-compile:
# worker and postmaster carry on, the shape is retried and compiles; a shape
# whose compile fails is failed once, logged once, not retried for 5 minutes; the cache
# directory unwritable: the worker's compile cannot hand its object over,
# says so once, and the backends compile the shape themselves (compiled
# code, no worker failure counted, nothing blocks); a full disk while
# storing (a one-page tmpfs over the cache) likewise.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 6.
# cluster: first

echo "-- 6. compile worker: waits, a killed compile, a failing shape, an unwritable cache"
t6=$(now)
worker_pid=$(q "SELECT worker_pid FROM btree_jit_status()")
check "compile worker running (pid ${worker_pid:-none})" test -n "$worker_pid"
set_worker_fault() { # none | slow | error
	q "ALTER SYSTEM SET btree_jit.compile_fault = '$1'" >/dev/null
	q "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
}
# cw_state INDEX: this backend's state of INDEX after one search (verify
# off: the fault cases are about what production runs; the section ends
# with an on/off comparison of every cw_ table)
cw_search_sql() { # table index where
	cat <<SQL
SET btree_jit.compile_mode = background;
SET btree_jit.verify = off;
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

# (c) a shape whose compile fails: failed once, logged once, not retried
# (for BTJIT_FAILED_RETRY_SECS, 5 minutes, longer than this section)
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
expect_eq "unwritable cache: the backends compile the shape themselves" "${st%% *}" jit
check "unwritable cache: the worker said once that it could not store the object" \
	grep -q 'could not store key shape.*backends compile it themselves' <(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG")
nfail1=$(q "SELECT worker_failures FROM btree_jit_status()")
expect_eq "unwritable cache: not counted as a compile failure" "$nfail1" "$nfail0"
nlog1=$(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'could not store key shape' || true)
for i in 1 2 3; do
	st=$(cw_search_sql cw_c cw_c_idx "a = '2001-01-0$i'" | psqlv 2>&1 | sed -n 's/^@@S //p')
	[[ $st == jit* ]] || bad "unwritable cache: a new session's state" "$st"
done
sleep 1
expect_eq "unwritable cache: new sessions compile it without asking the worker again" \
	"$(q "SELECT worker_failures FROM btree_jit_status()") $(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'could not store key shape' || true)" "$nfail1 $nlog1"
chmod 0700 "$cache_dir"

# (e) a full disk while storing: the cache directory on a tmpfs of one page,
# too small for any object (mounted over it, and removed again)
psql_as -q <<'SQL'
CREATE TABLE cw_d (a int4, b int8);
INSERT INTO cw_d SELECT g % 1000, g FROM generate_series(1, 20000) g;
CREATE INDEX cw_d_idx ON cw_d (a DESC, b);
ANALYZE cw_d;
SQL
cluster_on_exit "umount '$cache_dir' 2>/dev/null || true"
if mount -t tmpfs -o "size=4k,mode=0700,uid=$(id -u "$BTJIT_OS_USER"),gid=$(id -g "$BTJIT_OS_USER")" \
	btjit-full "$cache_dir"; then
	ok "full disk: a 4 KiB tmpfs mounted over the object cache"
	# The mount hides every cached object, the catalogs' too, so the
	# worker's queue fills with the catalogs' shapes again; a search of
	# 2,048 probes a session reports its demand and is served first, and
	# the bound is for a loaded machine (the catalogs first took over 30 s
	# there).
	st=$(wait_jit cw_d cw_d_idx "a = ANY (ARRAY(SELECT generate_series(0, 2047)))" 120)
	expect_eq "full disk: the backends compile the shape themselves" "${st%% *}" jit
	check "full disk: the worker said that it could not store the object, and why" \
		grep -q 'could not store key shape.*backends compile it themselves' <(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG")
	check "full disk: ... no space left on device" \
		grep -q 'No space left on device' <(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG")
	expect_eq "full disk: no temporary file left behind" "$(find "$cache_dir" -type f -name '*.tmp*' | wc -l)" 0
	expect_eq "full disk: not counted as a compile failure" "$(q "SELECT worker_failures FROM btree_jit_status()")" "$nfail1"
	umount "$cache_dir" || bad "full disk: umount of the tmpfs"
else
	bad "full disk: could not mount a tmpfs over the object cache (the suite runs as root)"
fi
fin=$(psqlv -c "SET btree_jit.compile_mode = background" -c "SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('cw\__', 4)" 2>&1 | sed -n 's/^@@R [0-9]* //p')
expect_eq "compile worker tables compared on/off without mismatch" "$fin" 0
check "compile worker faults: postmaster did not restart" server_alive
expect_eq "compile worker faults: same worker throughout" "$(q "SELECT worker_pid FROM btree_jit_status()")" "$worker_pid"
q "ALTER SYSTEM RESET btree_jit.compile_fault" >/dev/null
q "SELECT pg_reload_conf()" >/dev/null
echo "   ($(elapsed "$t6")s)"
