#!/bin/bash
# test/suite-roles.sh - what an ordinary role cannot do: turn the module on
# past the DBA's switch, or read other databases' index counters.
#
# The DBA's switch caps the session's: btree_jit.cluster_enabled (sighup)
# off leaves every search of every session on the server's code, whatever
# a role sets btree_jit.enabled to.
#
#   - with both switches on, an ordinary role's searches, checks, leaf reads
#     and insertion searches use compiled code (so the checks below could
#     fail);
#   - after ALTER SYSTEM SET btree_jit.cluster_enabled = off and a reload,
#     the same role in a new session, having SET btree_jit.enabled = on,
#     runs the same workload with no compiled search of any kind, and the
#     cluster-wide jit_searches do not move;
#   - the role can neither SET btree_jit.cluster_enabled nor ALTER ROLE
#     ... SET it;
#   - turned on again by the DBA, the role's new session uses compiled code
#     again.
#
# btree_jit_index_counters() (and so the view btree_jit_indexes) shows an
# ordinary role the indexes of its own database and the shared catalogs';
# another database's rows only to members of pg_read_all_stats.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

cluster_start "" "btree_jit.compile_mode = inline" "btree_jit.compile_threshold = 0"
psql_as -q <<'SQL' >/dev/null
CREATE EXTENSION btree_jit;
CREATE ROLE sw_app LOGIN;
CREATE TABLE sw_t (id int4 PRIMARY KEY, v int4);
INSERT INTO sw_t SELECT g, g FROM generate_series(1, 20000) g;
GRANT SELECT, INSERT ON sw_t TO sw_app;
SQL

# as_app SQL... - one session of the ordinary role
as_app() {
	psql_as -U sw_app -v ON_ERROR_STOP=1 -At -F ' ' "$@"
}

# workload N - the role's session: enabled on, every kind of search, then
# the index's counters (searches inserts checks leafreads) of that session
# (zeros when the session never opened the index for the module)
workload() {
	as_app -c "SET btree_jit.enabled = on" \
		-c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
		-c "SELECT count(*) FROM generate_series(1, 2000) g, LATERAL (SELECT v FROM sw_t WHERE id = g) s" \
		-c "SELECT sum(v) FROM sw_t WHERE id BETWEEN 100 AND 5000" \
		-c "INSERT INTO sw_t SELECT g, g FROM generate_series($1, $1 + 499) g" \
		-c "SELECT coalesce(sum(jit_searches), 0), coalesce(sum(jit_inserts), 0),
				   coalesce(sum(jit_checks), 0), coalesce(sum(jit_leafreads), 0)
			  FROM btree_jit_index_stats() WHERE indexrelid = 'sw_t_pkey'::regclass" |
		tail -n 1
}

cluster_jit() {
	psql_as -At -c "SELECT jit_searches FROM btree_jit_status()"
}

# sees_setting VALUE - a new session sees btree_jit.cluster_enabled = VALUE
sees_setting() {
	[[ $(as_app -c "SHOW btree_jit.cluster_enabled") == "$1" ]]
}

# --- both on ------------------------------------------------------------------
read -r searches inserts checks leafreads <<<"$(workload 100001)"
echo "both on: searches inserts checks leafreads = $searches $inserts $checks $leafreads"
check "both on: the role's page searches use compiled code ($searches)" test "$searches" -gt 0
check "both on: its insertion searches do ($inserts)" test "$inserts" -gt 0
if [[ $("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p') -lt 19 ]]; then
	check "both on: its checks do ($checks)" test "$checks" -gt 0
	check "both on: its leaf reads do ($leafreads)" test "$leafreads" -gt 0
fi

# --- the DBA turns it off -------------------------------------------------------
psql_as -q -c "ALTER SYSTEM SET btree_jit.cluster_enabled = off" -c "SELECT pg_reload_conf()" >/dev/null
check "the reload reaches new sessions" wait_until 10 sees_setting off
before=$(cluster_jit)
read -r searches inserts checks leafreads <<<"$(workload 200001)"
after=$(cluster_jit)
echo "cluster_enabled off, session enabled on: searches inserts checks leafreads = $searches $inserts $checks $leafreads; cluster jit_searches $before -> $after"
check "off: no compiled page search in the role's session" eq "$searches" 0
check "off: no compiled insertion search" eq "$inserts" 0
check "off: no compiled check" eq "$checks" 0
check "off: no compiled leaf read" eq "$leafreads" 0
check "off: the cluster's jit_searches did not move" eq "$after" "$before"
check "off: the role's SET btree_jit.enabled = on took (it is the cap that holds)" \
	eq "$(as_app -c "SET btree_jit.enabled = on" -c "SHOW btree_jit.enabled" | tail -n 1)" on

out=$(as_app -c "SET btree_jit.cluster_enabled = on" 2>&1 || true)
check "the role cannot SET btree_jit.cluster_enabled" grep -q 'cannot be changed now' <<<"$out"
out=$(psql_as -At -c "ALTER ROLE sw_app SET btree_jit.cluster_enabled = on" 2>&1 || true)
check "nor can ALTER ROLE ... SET it" grep -q 'cannot be changed now' <<<"$out"

# --- and on again ---------------------------------------------------------------
psql_as -q -c "ALTER SYSTEM RESET btree_jit.cluster_enabled" -c "SELECT pg_reload_conf()" >/dev/null
check "the reset reaches new sessions" wait_until 10 sees_setting on
read -r searches inserts checks leafreads <<<"$(workload 300001)"
echo "on again: searches inserts checks leafreads = $searches $inserts $checks $leafreads"
check "on again: the role's page searches use compiled code ($searches)" test "$searches" -gt 0

# --- other databases' counters ---------------------------------------------------
psql_as -q -c "CREATE DATABASE sw_other" -c "CREATE ROLE sw_stats LOGIN IN ROLE pg_read_all_stats" >/dev/null
psql_as -d sw_other -q -c "CREATE EXTENSION btree_jit" \
	-c "CREATE TABLE sw_o (id int4 PRIMARY KEY)" \
	-c "INSERT INTO sw_o SELECT generate_series(1, 1000)" \
	-c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
	-c "SELECT count(*) FROM generate_series(1, 500) g, LATERAL (SELECT id FROM sw_o WHERE id = g) s" >/dev/null
other_oid=$(psql_as -At -c "SELECT oid FROM pg_database WHERE datname = 'sw_other'")
other_index=$(psql_as -d sw_other -At -c "SELECT 'sw_o_pkey'::regclass::oid")
seen_by() {
	psql_as -U "$1" -At -c "SELECT count(*) FROM btree_jit_index_counters()
							 WHERE dbid = $other_oid AND indexrelid = $other_index"
}
check "a member of pg_read_all_stats sees the other database's index" eq "$(seen_by sw_stats)" 1
check "an ordinary role does not" eq "$(seen_by sw_app)" 0
check "an ordinary role still sees its own database's index" \
	eq "$(psql_as -U sw_app -At -c "SELECT count(*) FROM btree_jit_indexes WHERE indexname = 'sw_t_pkey'")" 1

cluster_stop
summary
