#!/bin/bash
# test/suite-startup.sh - the module's start-up refusal paths, each on its own
# throwaway cluster:
#
#   - the locator fed wrong input (btree_jit.locate_fault = wrong_caller,
#     truncated, no_callconv): the server starts unpatched, queries work,
#     btree_jit_status() says active = false and why, and the log has one
#     LOG line saying what failed;
#   - a server of a major version the module does not support
#     (locate_fault = unsupported_major takes this server for a 16): one LOG
#     line, nothing located or patched;
#   - the library loaded without shared_preload_libraries (LOAD, CREATE
#     EXTENSION): a WARNING that it must be preloaded, nothing patched;
#   - the normal start: active, and the log names the address and evidence;
#     the compile worker runs (refused starts register none), and an index
#     crossing compile_threshold is queued and then compiled by it; the
#     worker stopped with SIGTERM exits cleanly (not a crash: no restart of
#     the cluster) and the postmaster starts it again.
#
# Ends with "N passed, M failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

# A query that must work whatever the module did: an index probe.
probe_works() {
	[[ $(psql_as -Atc "CREATE TABLE IF NOT EXISTS p (id int PRIMARY KEY);
		INSERT INTO p SELECT g FROM generate_series(1, 10000) g ON CONFLICT DO NOTHING;
		SET enable_seqscan = off; SELECT id FROM p WHERE id = 4321" | tail -n1) == 4321 ]]
}

status_field() {
	psql_as -Atc "CREATE EXTENSION IF NOT EXISTS btree_jit" \
		-c "SELECT $1 FROM btree_jit_status()" | tail -n1
}

# ---- start-up refusals: the locator fed wrong input, and a server of a ----
# ---- major version the module does not support                       ----
# The reason each must give, and the one LOG line that must say it.
declare -A want_reason=(
	[wrong_caller]='^_bt_binsrch not identified: '
	[truncated]='^_bt_binsrch not identified: '
	[no_callconv]='^_bt_binsrch not identified: '
	[unsupported_major]='^PostgreSQL 16 is not a supported major version \(supported: 15, 17, 18, 19\)$'
)
for fault in wrong_caller truncated no_callconv unsupported_major; do
	echo "# locate_fault = $fault"
	cluster_start "" "btree_jit.locate_fault = $fault"
	check "$fault: server runs queries" probe_works
	check "$fault: status says inactive" \
		test "$(status_field active)" = f
	reason=$(status_field reason)
	echo "     reason: $reason"
	check "$fault: reason says why" \
		grep -Eq "${want_reason[$fault]}" <<<"$reason"
	check "$fault: exactly one btree_jit LOG line, saying why" \
		test "$(grep -c 'LOG:  btree_jit' "$BTJIT_CLUSTER_LOG")" -eq 1 -a \
		"$(grep -cF "LOG:  btree_jit is inactive: ${reason:0:40}" "$BTJIT_CLUSTER_LOG")" -eq 1
	check "$fault: nothing redirected" \
		test "$(status_field call_sites)" = 0
	check "$fault: no compile worker" \
		test -z "$(status_field worker_pid)"
	check "$fault: indexes stay stock, reason module inactive" \
		test "$(psql_as -Atc "SET btree_jit.compile_threshold = 0; SET enable_seqscan = off;
			SELECT count(*) FROM p WHERE id < 100;
			SELECT reason FROM btree_jit_compile('p_pkey')" | tail -n1)" = "module inactive"
	cluster_stop
done

# ---- not preloaded ----
echo "# not preloaded"
BTJIT_PRELOAD=0 cluster_start ""
out=$(psql_as -c "LOAD 'btree_jit'" 2>&1 || true)
echo "     LOAD said: $(head -n1 <<<"$out")"
check "LOAD warns that preloading is required" \
	grep -q 'WARNING:  btree_jit is inactive: it must be loaded via shared_preload_libraries' <<<"$out"
check "not preloaded: server runs queries" probe_works
check "not preloaded: status says inactive" test "$(status_field active)" = f
check "not preloaded: reason says so" \
	test "$(status_field reason)" = "not loaded via shared_preload_libraries"
cluster_stop

# ---- the normal start ----
echo "# normal start"
cluster_start ""
check "normal: status active" test "$(status_field active)" = t
check "normal: two call sites redirected" test "$(status_field call_sites)" -ge 2
check "normal: LOG line names the address" \
	grep -q 'LOG:  btree_jit [0-9][0-9.]* on PostgreSQL [0-9][^:]*: _bt_binsrch at .*+0x[0-9a-f]* redirected' "$BTJIT_CLUSTER_LOG"
check "normal: LOG detail gives the evidence" \
	grep -q 'DETAIL:  Evidence: _bt_binsrch=postgres+0x' "$BTJIT_CLUSTER_LOG"
# the leaf read is the module's on 15, 17 and 18; 19 has no _bt_checkkeys
# to redirect (src/README)
if [[ $(psql_as -Atc "SHOW server_version_num") -lt 190000 ]]; then
	check "normal: _bt_readpage redirected, with its evidence" \
		grep -q 'leaf read: _bt_readpage=postgres+0x[0-9a-f]* size 0x[0-9a-f]*: .*its own calling convention: [0-9]* calls to _bt_checkkeys' \
		"$BTJIT_CLUSTER_LOG"
	check "normal: status says _bt_readpage is redirected" \
		grep -q '; _bt_readpage redirected' <<<"$(status_field reason)"
else
	check "normal: _bt_readpage left to the server" \
		bash -c "! grep -q '_bt_readpage redirected' '$BTJIT_CLUSTER_LOG'"
fi
check "normal: server runs queries" probe_works
# the worker registers its pid when it has started, which a busy machine
# delays
worker_up() { wpid=$(status_field worker_pid); [[ -n $wpid ]]; }
wait_until 120 worker_up || true
check "normal: the compile worker runs (pid ${wpid:-none})" test -n "$wpid"
bg_state() {
	# (a lower bound: "id < 100" would start at the leftmost leaf, no search)
	psql_as -Atc "SET btree_jit.compile_threshold = 0; SET enable_seqscan = off;
		SELECT count(*) FROM p WHERE id BETWEEN 100 AND 200;
		SELECT state FROM btree_jit_index_stats() WHERE indexrelid = 'p_pkey'::regclass" | tail -n1
}
st=$(bg_state)
check "normal: an index past the threshold is queued or compiled ($st)" grep -Eq '^(queued|jit)$' <<<"$st"
compiled() { st=$(bg_state); [[ $st == jit ]]; }
wait_until 300 compiled || true
check "normal: the worker compiled it (state $st)" test "$st" = jit
pm_start=$(psql_as -Atc "SELECT pg_postmaster_start_time()")
kill -TERM "$wpid"
# restarted after bgw_restart_time (5 s), plus what the machine adds
restarted() { nw=$(status_field worker_pid); [[ -n $nw && $nw != "$wpid" ]]; }
wait_until 120 restarted || true
check "normal: after SIGTERM the postmaster starts a new worker (pid ${nw:-none})" test -n "$nw" -a "$nw" != "$wpid"
check "normal: a worker's SIGTERM restarts nothing else" \
	test "$(psql_as -Atc "SELECT pg_postmaster_start_time()")" = "$pm_start"
check "normal: the worker's exit is not a crash" \
	bash -c "! grep -q 'terminating any other active server processes' '$BTJIT_CLUSTER_LOG'"
cluster_stop

summary
