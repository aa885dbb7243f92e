# test/stress/lib.sh - what the stress suite's sections share (sourced by
# test/suite-stress.sh after test/lib/cluster.sh and
# test/differential/common.sh, before the sections):
#
#   stress_first_cluster     start the first cluster (btree_jit.verify = on,
#                            compile_threshold = 0, compile_mode = inline)
#                            and set it up: the extensions, role plain,
#                            test/differential/stress_setup.sql and
#                            shapes_setup.sql; sets work (a directory for
#                            the sessions' scripts and outputs, kept in
#                            /tmp/btree_jit-stress-* when a check failed),
#                            cache_dir (the object cache) and pm_start
#   server_alive             true while the postmaster that started with the
#                            first cluster still runs (no crash restart)
#   psqlv ARGS...            psql as superuser with SQLSTATEs in messages,
#                            errors not fatal
#   expect_sqlstate WHAT SQLSTATE SQL [ROLE]
#                            the SQL fails with that SQLSTATE
#   expect_value WHAT SQL WANT [ROLE]
#                            the SQL's output (psql -At) is WANT
#
# The sections use these variables of test/suite-stress.sh: seed, fseed (the
# seed as a fraction, for setseed), conc_secs (length of the concurrency
# phase), psql_bin.

psql_bin=$(pg_bindir)/psql

stress_first_cluster() {
	# Sections 2-5 expect compiles in the session that needs them (inline);
	# sections 6 and 9 test the compile worker (background, the default).
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
	cache_dir=$PGDATA/btree_jit_cache
	# keep the sessions' outputs of a failed run (the cluster dir goes away)
	cluster_on_exit 'if [[ $check_failed -gt 0 && -d $work ]]; then keep=/tmp/btree_jit-stress-$(date +%Y%m%d-%H%M%S); cp -r "$work" "$keep"; echo "session outputs kept in $keep (seed $seed)" >&2; fi'

	psql_as -q -c "CREATE EXTENSION btree_jit" -c "CREATE EXTENSION amcheck" \
		-c "CREATE ROLE plain LOGIN"
	psql_as -q -f "$BTJIT_ROOT/test/differential/stress_setup.sql" >/dev/null
	psql_as -q -f "$BTJIT_ROOT/test/differential/shapes_setup.sql" >/dev/null
	pm_start=$(q "SELECT pg_postmaster_start_time()")
	expect_eq "module active" "$(q "SELECT active FROM btree_jit_status()")" t
}

psqlv() {
	as_postgres "$psql_bin" -X -q -At -v VERBOSITY=verbose "$@"
}

server_alive() {
	local got
	got=$(q "SELECT pg_postmaster_start_time()" 2>&1) || true
	[[ $got == "$pm_start" ]]
}

expect_sqlstate() {
	local what=$1 state=$2 sql=$3 role=${4:-postgres} out
	out=$(as_postgres "$psql_bin" -X -q -At -U "$role" -v VERBOSITY=verbose -c "$sql" 2>&1) || true
	if grep -q "ERROR:  $state:" <<<"$out"; then
		ok "$what: ERROR $state ($(grep -m1 -o "ERROR:  $state: .*" <<<"$out" | cut -c 16-90))"
	else
		bad "$what: want ERROR $state" "$out"
	fi
}

expect_value() {
	local what=$1 sql=$2 want=$3 role=${4:-postgres} out
	out=$(as_postgres "$psql_bin" -X -q -At -U "$role" -v VERBOSITY=verbose -c "$sql" 2>&1) || true
	expect_eq "$what" "$out" "$want"
}
