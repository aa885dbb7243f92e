#!/bin/bash
# bench/query_callgrind.sh - instructions per query of a fresh backend's
# first and second query, module off against on, counted by callgrind in a
# real server (postmaster, compile worker and all), not in single-user mode:
# the query of bench/workloads/compile_latency.sql (100 nested-loop probes
# of an (int8, int2, int4) index whose shape was never seen), in
#   off    btree_jit.enabled = off
#   on     enabled, compile_mode = background: the index crosses
#          compile_threshold in the first query and is queued; both queries
#          run the stock path through the module's dispatchers
#   warm   a fresh backend once the worker has compiled the shape: the first
#          query links the object from the object cache
# Each session runs SELECT pg_sleep(0) before, between and after its queries,
# and callgrind dumps its counts at every pg_sleep (--dump-before), so that
# each query is a profile part of its own.  Prints the total per query and
# arm, and the functions whose cost differs most between off and each on arm
# (self cost, instructions).
#
#   bench/query_callgrind.sh [--pg 15|17|18] [--keep] [--cache-sim]
#
# --cache-sim adds callgrind's cache model (a generic CPU's, not this
# machine's: there are no counters here) and prints simulated I1, D1 and
# last-level misses per query: first-touch costs that instructions miss.
# With --pg 15 (the default) it runs on this machine, against the server of
# $PG_CONFIG (default pg_config) and the module installed there (bench/run,
# or make install, first); with 17 or 18 inside that version's chroot
# (test/lib/chroot.sh) against the module installed there (bench/run --pg
# N, or make install in the chroot, first).  The cluster is a throwaway one
# under (the chroot's) /var/tmp on port 54999, removed at the
# end (--keep keeps it and the profiles, and says where).  About 2 minutes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

if [[ ${1:-} == --here ]]; then
	keep=$2
	cachesim=$3
	B=$("${PG_CONFIG:-pg_config}" --bindir)
	D=$(mktemp -d /var/tmp/btjit-qcg.XXXXXX)
	chmod 755 "$D"
	mkdir -p "$D/sock" "$D/cg"
	chown -R postgres: "$D"
	pgs() { runuser -u postgres -- "$@"; }
	stop() { pgs "$B/pg_ctl" -D "$D/data" -w -t 600 -m fast stop >/dev/null 2>&1 || true; }
	trap 'stop; [[ $keep == 1 ]] || rm -rf "$D"' EXIT
	pgs "$B/initdb" -D "$D/data" -U postgres --auth=trust --encoding=UTF8 \
		--locale=C -N --no-instructions >/dev/null
	cat >>"$D/data/postgresql.conf" <<-EOF
		port = 54999
		listen_addresses = ''
		unix_socket_directories = '$D/sock'
		fsync = off
		shared_preload_libraries = 'btree_jit'
		autovacuum = off
		jit = off
	EOF
	psql_() { pgs "$B/psql" -X -q -h "$D/sock" -p 54999 -d postgres -v ON_ERROR_STOP=1 "$@"; }
	pgs "$B/pg_ctl" -D "$D/data" -l "$D/server.log" -w start >/dev/null
	psql_ <<-'EOF'
		CREATE EXTENSION btree_jit;
		CREATE TABLE lat (a int8, b int2, c int4, v int4);
		INSERT INTO lat SELECT i * 3, i % 100, i, i FROM generate_series(1, 10000) i;
		CREATE INDEX latidx ON lat (a DESC NULLS LAST, b NULLS FIRST, c DESC);
		VACUUM (FREEZE, ANALYZE) lat;
	EOF
	stop
	rm -rf "$D/data/btree_jit_cache"
	(cd "$D" && setsid runuser -u postgres -- valgrind --tool=callgrind \
		--smc-check=all --cache-sim="$cachesim" --callgrind-out-file="$D/cg/cg.%p" \
		--dump-before=pg_sleep --log-file="$D/cg/vg.%p.log" \
		"$B/postgres" -D "$D/data" </dev/null >"$D/vg-server.log" 2>&1 &)
	for _ in $(seq 1 300); do
		pgs "$B/pg_isready" -q -h "$D/sock" -p 54999 && break
		sleep 1
	done
	q="SELECT count(*) FROM generate_series(1, 100) g JOIN lat l ON l.a = g * 300 AND l.b = 0 AND l.c = g * 100;"
	base="-c enable_hashjoin=off -c enable_mergejoin=off -c enable_bitmapscan=off -c enable_material=off"
	# session ARM OPTIONS -> the backend's pid; parts 2 and 3 are the queries
	session() {
		printf 'SELECT pg_backend_pid();\nSELECT pg_sleep(0);\n%s\nSELECT pg_sleep(0);\n%s\nSELECT pg_sleep(0);\n' "$q" "$q" |
			PGOPTIONS="$base $2" pgs "$B/psql" -X -At -h "$D/sock" -p 54999 -d postgres >"$D/$1.out"
		head -n 1 "$D/$1.out"
	}
	# the table's first touch in no arm
	printf '%s\n' "$q" | PGOPTIONS="$base -c btree_jit.enabled=off" \
		pgs "$B/psql" -X -q -h "$D/sock" -p 54999 -d postgres >/dev/null
	off=$(session off "-c btree_jit.enabled=off")
	on=$(session on "-c btree_jit.enabled=on -c btree_jit.compile_mode=background")
	# the worker compiles once that backend has gone (under valgrind: slowly)
	for _ in $(seq 1 300); do
		ls "$D/data/btree_jit_cache/"*.o >/dev/null 2>&1 && break
		sleep 2
	done
	sleep 2
	warm=$(session warm "-c btree_jit.enabled=on")
	stop
	python3 "$root/bench/lib/cgdiff.py" "$D/cg" "off=$off" "on=$on" "warm=$warm"
	[[ $keep != 1 ]] || echo "kept: the cluster and profiles in the chroot's $D"
	exit 0
fi

pg=15
keep=0
cachesim=no
while [[ $# -gt 0 ]]; do
	case $1 in
	--pg) pg=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--cache-sim) cachesim=yes; shift ;;
	*) echo "usage: $0 [--pg 15|17|18] [--keep] [--cache-sim]" >&2; exit 2 ;;
	esac
done
if [[ $pg == 15 ]]; then
	command -v valgrind >/dev/null || { echo "valgrind is not installed (test/deps.sh)" >&2; exit 2; }
	PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config} exec bash "$0" --here "$keep" "$cachesim"
fi
# shellcheck source=../test/lib/chroot.sh
source "$root/test/lib/chroot.sh"
chroot_ensure "$pg" >/dev/null
# the chroot's installed module must not change under us (bench/run --pg
# and test/suite-versions.sh install into it while holding this lock)
exec 9>"$BTJIT_CHROOT_CACHE/.matrix.lock"
flock 9
chroot_bind "$pg" "$root" /build/btree_jit_qcg
chroot_run "$pg" env PATH="$(dirname "$(chroot_pg_config "$pg")"):/usr/sbin:/usr/bin:/sbin:/bin" \
	bash /build/btree_jit_qcg/bench/query_callgrind.sh --here "$keep" "$cachesim"
