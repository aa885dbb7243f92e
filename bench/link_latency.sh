#!/usr/bin/env bash
# bench/link_latency.sh - what linking a cached object costs a fresh backend.
#
#   bench/link_latency.sh [--backends N] [--rounds R] [--aged]
#                         [--variant NAME=FILE.so]... [--set 'NAME = VALUE']...
#                         [--strace FILE] [--log FILE]
#
# Starts a throwaway cluster (test/lib/cluster.sh) on the server of
# $PG_CONFIG, which must have this tree's module installed (`make
# PG_CONFIG=... install`; use a private copy of the server, CONTRIBUTING.md),
# compiles two key shapes once so that the object cache holds them, then
# opens N fresh backends (default 15).  Each runs btree_jit_compile() on the
# first shape, then on the second: both are linked from the object cache.
# For each backend it prints the module's own compile_ms of each link
# (btree_jit_index_stats(): btjit_compile_shape's interval, which for a
# cached shape is the template check, the object key, and
# btjit_object_cache_load: open, read, header and CRC-32C checks, the ELF
# link), and the backend's minor page faults over each btree_jit_compile()
# call (/proc/PID/stat; the whole call, the index's examination included).
# Then the median, minimum and maximum of each column.
#
# --variant NAME=FILE.so  compare builds: each round runs every variant in
#              turn (a new cluster each), with FILE.so copied over the
#              installed btree_jit.so first (so $PG_CONFIG must be a private
#              copy of the server); the summary is per variant, over all its
#              rounds.  The variants must share the installed compiler
#              library and template (build them from one tree, changing
#              only what goes into btree_jit.so); the installed
#              btree_jit.so is put back at the end
# --rounds R   rounds (default 1); with variants, interleaved
# --aged       set the objects' modification time two hours back before
#              each backend, so that every first link in a backend also
#              brings the time forward (the LRU's utimensat), as on a
#              cluster whose objects were last linked over an hour ago
# --set 'NAME = VALUE'   another server setting (repeatable); the defaults
#              are compile_threshold = 1000000000 (nothing compiles but
#              what btree_jit_compile() asks for), verify = off,
#              compile_mode = inline (no compile worker)
# --strace F   also attach strace -T -tt to the first backend, into F
# --log F      copy the (last) server log to F at the end
#
# Times are wall-clock on whatever else runs on the machine: the script
# prints the load average before and after each run.  Exit status 0, or 1
# on an error (a link that did not come from the object cache is one).
set -euo pipefail

backends=15
rounds=1
aged=0
strace_out=""
log_out=""
settings=()
variants=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--backends) backends=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--aged) aged=1 ;;
	--variant) variants+=("$2"); shift ;;
	--set) settings+=("$2"); shift ;;
	--strace) strace_out=$2; shift ;;
	--log) log_out=$2; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "unknown option $1" >&2; exit 1 ;;
	esac
	shift
done

source "$(dirname "$0")/../test/lib/cluster.sh"

minflt() { awk '{print $10}' "/proc/$1/stat"; }

# One cluster, N fresh backends; rows "first_ms second_ms first_flt
# second_flt" appended to file $1.
measure() {
	local out=$1 objdir nobj i bpid spid f0 f1 f2 ms m1 m2

	cluster_start "" "btree_jit.compile_threshold = 1000000000" \
		"btree_jit.verify = off" "btree_jit.compile_mode = inline" \
		${settings[@]+"${settings[@]}"} >/dev/null 2>&1
	psql_as -q -o /dev/null <<-'SQL'
	CREATE EXTENSION btree_jit;
	CREATE TABLE t (a int4, b int8, c int2, d int4);
	CREATE INDEX t1 ON t (a, b);
	CREATE INDEX t2 ON t (b, c);
	SELECT (btree_jit_compile('t1')).state, (btree_jit_compile('t2')).state;
	SQL
	objdir=$PGDATA/btree_jit_cache
	nobj=$(find "$objdir" -name '*.o' | wc -l)
	[[ $nobj -ge 2 ]] || btjit_die "the object cache holds $nobj objects, not 2"

	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-8s %10s %10s %12s %12s\n' backend first_ms second_ms first_flt second_flt
	for ((i = 1; i <= backends; i++)); do
		if [[ $aged == 1 ]]; then
			find "$objdir" -name '*.o' -exec touch -d '-2 hours' {} +
		fi
		coproc P { as_postgres psql -X -Atq 2>&1; }
		# the pid, and a first call of the module's SQL functions, so that
		# the library's symbol lookups are not in the figures below
		echo "SELECT pg_backend_pid(); SELECT count(*) FROM btree_jit_index_stats();" >&"${P[1]}"
		read -r bpid <&"${P[0]}"
		read -r _ <&"${P[0]}"
		spid=""
		if [[ -n $strace_out && $i == 1 ]]; then
			strace -tt -T -p "$bpid" -o "$strace_out" & spid=$!
			sleep 1
		fi
		sleep 0.2
		f0=$(minflt "$bpid")
		echo "SELECT (btree_jit_compile('t1')).state;" >&"${P[1]}"
		read -r _ <&"${P[0]}"
		f1=$(minflt "$bpid")
		echo "SELECT (btree_jit_compile('t2')).state;" >&"${P[1]}"
		read -r _ <&"${P[0]}"
		f2=$(minflt "$bpid")
		echo "SELECT string_agg(CASE WHEN code_source = 'object cache' THEN round(compile_ms::numeric, 3)::text ELSE 'compiled' END, ' ' ORDER BY indexrelid::regclass::text) FROM btree_jit_index_stats() WHERE indexrelid::regclass::text IN ('t1', 't2');" >&"${P[1]}"
		read -r ms <&"${P[0]}"
		echo '\q' >&"${P[1]}"
		wait "$P_PID" 2>/dev/null || true
		if [[ -n $spid ]]; then
			kill "$spid" 2>/dev/null || true
			wait "$spid" 2>/dev/null || true
		fi
		read -r m1 m2 <<<"$ms"
		[[ $m1 != compiled && $m2 != compiled && -n ${m2:-} ]] ||
			btjit_die "backend $i: the links did not come from the object cache: $ms"
		printf '%-8s %10s %10s %12s %12s\n' "$i" "$m1" "$m2" $((f1 - f0)) $((f2 - f1))
		echo "$m1 $m2 $((f1 - f0)) $((f2 - f1))" >>"$out"
	done
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	[[ -z $log_out ]] || cp "$BTJIT_CLUSTER_LOG" "$log_out"
	cluster_stop
}

summary() {
	python3 -c '
import sys, statistics
cols = list(zip(*[map(float, l.split()) for l in open(sys.argv[1]) if l.strip()]))
names = ["first link ms", "second link ms", "first call faults", "second call faults"]
for name, c in zip(names, cols):
    print(f"  {name:20s} median {statistics.median(c):8.3f}  min {min(c):8.3f}  max {max(c):8.3f}  (n={len(c)})")
' "$1"
}

work=$(mktemp -d)
cluster_on_exit "rm -rf '$work'"
if [[ ${#variants[@]} -eq 0 ]]; then
	for ((r = 1; r <= rounds; r++)); do
		measure "$work/rows"
	done
	echo "summary:"
	summary "$work/rows"
	exit 0
fi

lib=$("$PG_CONFIG" --pkglibdir)/btree_jit.so
for v in "${variants[@]}"; do
	[[ $v == *=* && -f ${v#*=} ]] || btjit_die "--variant wants NAME=FILE.so: $v"
done
# the installed module is put back at the end, also after a failure
cp -p "$lib" "$work/installed.so"
cluster_on_exit "install -m 755 '$work/installed.so' '$lib'"
for ((r = 1; r <= rounds; r++)); do
	for v in "${variants[@]}"; do
		echo "== round $r, ${v%%=*}"
		install -m 755 "${v#*=}" "$lib"
		measure "$work/rows.${v%%=*}"
	done
done
for v in "${variants[@]}"; do
	echo "summary, ${v%%=*} (${v#*=}):"
	summary "$work/rows.${v%%=*}"
done
install -m 755 "$work/installed.so" "$lib"
