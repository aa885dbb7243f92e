#!/bin/bash
# test/suite-trust.sh - trust in the code the module runs from disk (cached
# objects, the compiler library), with btree_jit.verify off, as production
# runs:
#
#   objects    a cached object that is damaged (a byte of its code
#              flipped), truncated (inside the object, inside the header),
#              foreign (another key's object under this key's name), of
#              another build (the header's build identity changed) or of
#              the format before headers: each is refused with one LOG line
#              naming the file and what did not match, removed, and the
#              shape compiled again; the index ends on compiled code, its
#              query results equal the server's own, and the next backend
#              links the re-stored object.  Prints the link time of a
#              cached shape (median of btree_jit_compile's compile_ms over
#              fresh backends) and checks it stays under 0.5 ms.
#   bound      object_cache_max_files = 20 and 60 distinct shapes: every
#              shape reaches compiled code, the directory stays at 20
#              objects, the least recently used (by modification time,
#              which a link brings forward) are evicted.
#              The warm start after a restart compiles only as many
#              missing listed shapes as the bound has room for.  The
#              warm-start list has a CRC-32C (a damaged list is refused
#              with one LOG line), is written durably (temporary file,
#              fsync, rename, directory fsync) and pruned to the shapes
#              the cache holds.  Stale temporary files (their writer dead,
#              or older than 10 minutes) are removed at start-up and on
#              eviction; a live writer's is left alone.
#   handover   object_cache_max_files = 2, 60 shapes queued for the
#              compile worker by one session that searches them every
#              6 s (the worker compiles more than 2 shapes in that time):
#              no object is evicted before that session links it, so each
#              shape is compiled once and all 60 end on compiled code; the
#              cache exceeds its bound meanwhile, the worker logs a hint to
#              raise it, and once the objects are linked a store brings
#              the cache back to its bound.
#   library    a compiler library of another build (built here as version
#              9.9-test) installed under the running server: a compile in
#              a backend and in a restarted compile worker is refused with
#              the restart message, without a crash; cached objects still
#              link; after the right library is back and the server
#              restarted, everything compiles.
#
# The library case replaces btree_jit_llvm.so in the server's pkglibdir, so
# the suite never touches the installed server: it runs on a private copy
# of it (the Debian layout, which PostgreSQL relocates by its binaries'
# place), with the module built from this tree installed into the copy.
# Ends with "N passed, M failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
HOST_PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

# ---- a private copy of the server, with this tree's module installed ----
work=$(mktemp -d /tmp/btjit-trust.XXXXXX)
chmod 755 "$work"
libroot=$(dirname "$("$HOST_PG_CONFIG" --bindir)")	# /usr/lib/postgresql/15
sharedir=$("$HOST_PG_CONFIG" --sharedir)
incdir=$(dirname "$("$HOST_PG_CONFIG" --includedir-server)")
mkdir -p "$work/pg$(dirname "$libroot")" "$work/pg$(dirname "$sharedir")" \
	"$work/pg$(dirname "$incdir")"
cp -a "$libroot" "$work/pg$(dirname "$libroot")/"
cp -a "$sharedir" "$work/pg$(dirname "$sharedir")/"
ln -s "$incdir" "$work/pg$incdir"
chmod -R a+rX "$work"
export PG_CONFIG=$work/pg$libroot/bin/pg_config
[[ $("$PG_CONFIG" --pkglibdir) == "$work/pg"* ]] ||
	{ echo "suite-trust: the server copy does not relocate"; exit 1; }
make -s -C "$root" PG_CONFIG="$PG_CONFIG" >/dev/null
make -s -C "$root" PG_CONFIG="$PG_CONFIG" install >/dev/null
pkglib=$("$PG_CONFIG" --pkglibdir)

# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
cluster_on_exit "rm -rf '$work'"

# Automatic compiles off (threshold): only btree_jit_compile() compiles, so
# that the objects in the cache are the ones the test made.
conf=("btree_jit.compile_threshold = 1000000000" "btree_jit.verify = off")

sql() { psql_as -Atq "$@"; }

log_lines() { grep -cF -- "$1" "$BTJIT_CLUSTER_LOG" || true; }

# state|code_source of idx after btree_jit_compile() in a fresh backend
compile_fresh() {
	sql -c "SELECT state FROM btree_jit_compile('$1')" \
		-c "SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = '$1'::regclass" |
		paste -sd'|'
}

# the index's query results with compiled code equal the server's own
# (verify off: the index scan runs the compiled search alone)
results_right() {
	local jit seq
	jit=$(sql -c "SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT btree_jit_compile('t_ab') IS NOT NULL;
		SELECT count(*), sum(v) FROM t WHERE a BETWEEN 1000 AND 3000;
		SELECT count(*), sum(v) FROM t WHERE a = 4321 AND b > 10;
		SELECT jit_searches > 0 FROM btree_jit_index_stats() WHERE indexrelid = 't_ab'::regclass" | tail -n3)
	seq=$(sql -c "SET enable_indexscan = off; SET enable_bitmapscan = off;
		SELECT count(*), sum(v) FROM t WHERE a BETWEEN 1000 AND 3000;
		SELECT count(*), sum(v) FROM t WHERE a = 4321 AND b > 10;
		SELECT true")
	[[ -n $jit && $jit == "$seq" ]]
}

# The two tables the object and library cases compile: two shapes, each
# with a DESC column, cross-width integer and date keys.
make_tables() {
	sql -c "CREATE EXTENSION btree_jit;
	CREATE TABLE t (a int8, b int4, v int);
	INSERT INTO t SELECT g * 7 % 10007, g % 97, g FROM generate_series(1, 30000) g;
	CREATE INDEX t_ab ON t (a DESC, b);
	CREATE TABLE u (a int2, b date);
	INSERT INTO u SELECT g % 300, date '2020-01-01' + g % 500 FROM generate_series(1, 5000) g;
	CREATE INDEX u_ab ON u (a, b DESC);"
}

# ---------------------------------------------------------------- objects
echo "# objects"
cluster_start "" "${conf[@]}" "fsync = on"
make_tables
cache=$PGDATA/btree_jit_cache
check "t_ab compiles" test "$(compile_fresh t_ab)" = "jit|compiled"
obj=$(ls "$cache"/*.o)
check "one object in the cache" test "$(wc -w <<<"$obj")" -eq 1
check "u_ab compiles" test "$(compile_fresh u_ab)" = "jit|compiled"
other=$(ls "$cache"/*.o | grep -vxF "$obj")
check "a fresh backend links t_ab from the cache" \
	test "$(compile_fresh t_ab)" = "jit|object cache"
check "t_ab's results are right" results_right
cp "$obj" "$work/good.o"
size=$(stat -c %s "$obj")
key=$(basename "$obj" .o)
echo "     object $key: $size bytes"

# The link time of a cached shape, over fresh backends.
for i in $(seq 1 30); do
	sql -c "SELECT btree_jit_compile('t_ab') IS NOT NULL" \
		-c "SELECT compile_ms FROM btree_jit_index_stats() WHERE indexrelid = 't_ab'::regclass" | tail -n1
done | sort -g >"$work/link_ms"
median=$(sed -n 15p "$work/link_ms")
echo "     link of a cached shape: median $median ms, min $(head -n1 "$work/link_ms"), max $(tail -n1 "$work/link_ms") (30 backends)"
check "a cached shape links in under 0.5 ms (median)" \
	awk -v m="$median" 'BEGIN { exit !(m < 0.5) }'

# fault name, how to damage the file, what the LOG line must say
damage() {
	local fault=$1 edit=$2 want=$3 before
	echo "# object: $fault"
	cp "$work/good.o" "$obj"
	eval "$edit"
	before=$(log_lines "refused cached object \"$obj\"")
	check "$fault: compiled again (not linked)" \
		test "$(compile_fresh t_ab)" = "jit|compiled"
	check "$fault: one LOG line naming the file and what did not match" \
		test "$(log_lines "LOG:  btree_jit: refused cached object \"$obj\": $want")" -eq 1 -a \
		"$(log_lines "refused cached object \"$obj\"")" -eq $((before + 1))
	check "$fault: results right" results_right
	check "$fault: the object is stored anew and verifies" \
		test "$(compile_fresh t_ab)" = "jit|object cache"
	check "$fault: the re-stored object is the same object" cmp -s "$obj" "$work/good.o"
}

# a byte of the code (the middle of the file: .text follows the ELF header)
damage "damaged" \
	'printf "\xff" | dd of="$obj" bs=1 seek=$((size / 2)) conv=notrunc status=none;
	 if cmp -s "$obj" "$work/good.o"; then
		printf "\x00" | dd of="$obj" bs=1 seek=$((size / 2)) conv=notrunc status=none; fi' \
	"its CRC-32C is "
damage "truncated" 'truncate -s $((size / 2)) "$obj"' \
	"its header says $((size - 56)) bytes of object, the file holds $((size / 2 - 56))"
damage "truncated in its header" 'truncate -s 20 "$obj"' \
	"it is 20 bytes, shorter than an object header"
damage "foreign" 'cp "$other" "$obj"' \
	"it holds the object of key $(basename "$other" .o), not $key"
damage "another build" \
	'printf "\x5a" | dd of="$obj" bs=1 seek=24 conv=notrunc status=none' \
	"it was written by another build of btree_jit"
damage "no header (the format before 1.3's headers)" \
	'tail -c +57 "$work/good.o" >"$obj"' \
	"it has no object header of this version"
check "no crash: the server never restarted" \
	test "$(log_lines 'terminated by signal')" -eq 0

# Durable writes (fsync = on in this cluster): the object's temporary file
# is fsynced before its rename, and the directory after it.
echo "# durable writes"
if command -v strace >/dev/null; then
	sql -c "CREATE TABLE w (a numeric(10,2)); CREATE INDEX w_a ON w (a);
		CREATE TABLE w2 (a int4, b int2); CREATE INDEX w2_ab ON w2 (a DESC, b DESC);"
	mkdir -p "$work/out"
	chown "$BTJIT_OS_USER:" "$work/out"
	# the backend compiles once strace is attached to it (it waits for the
	# file "go"), however long the attach takes on a busy machine
	sql -c "COPY (SELECT pg_backend_pid()) TO '$work/out/pid'" \
		-c "DO \$\$ BEGIN FOR i IN 1..2400 LOOP
			EXIT WHEN pg_stat_file('$work/out/go', true) IS NOT NULL;
			PERFORM pg_sleep(0.05); END LOOP; END \$\$" \
		-c "SELECT btree_jit_compile('w2_ab') IS NOT NULL" >/dev/null &
	for i in $(seq 1 1200); do [[ -s $work/out/pid ]] && break; sleep 0.1; done
	bpid=$(cat "$work/out/pid")
	timeout 300 strace -y -qq -e trace=openat,fsync,rename -p "$bpid" \
		-o "$work/strace" &
	for i in $(seq 1 1200); do
		[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$bpid/status") != 0 ]] && break
		sleep 0.1
	done
	touch "$work/out/go"
	wait %1
	sleep 0.5
	kill %2 2>/dev/null || true
	wait || true
	rc=0
	awk '/fsync\(.*btree_jit_cache\/[0-9a-f]*\.o\.tmp\./ { synced = NR }
		/^rename\(.*btree_jit_cache\/[0-9a-f]*\.o\.tmp\./ { renamed = NR }
		/fsync\([0-9]*<[^>]*btree_jit_cache>\)/ { dirsynced = NR }
		END { exit !(synced && renamed > synced && dirsynced > renamed) }' \
		"$work/strace" >/dev/null || rc=$?
	check "the object is fsynced, renamed, then its directory fsynced" test $rc -eq 0
	[[ $rc -eq 0 ]] || cat "$work/strace"
else
	bad "the object is fsynced, renamed, then its directory fsynced" \
		"strace is not installed (test/deps.sh installs it)"
fi
cluster_stop

# ---------------------------------------------------------------- bound
# btree_jit.object_cache_max_files = 20 and 60 distinct shapes: each store
# at the bound evicts the least recently used object (a link makes an
# object recent), and every shape still reaches compiled code.
echo "# a cache at its bound"
cluster_start "" "${conf[@]}" "btree_jit.object_cache_max_files = 20"
cache=$PGDATA/btree_jit_cache
types=(int2 int4 int8 date oid bool)
cols=$(for t in "${types[@]}"; do printf 'c_%s %s, ' "$t" "$t"; done)
shapes=()
for d in "" " DESC"; do
	for a in "${types[@]}"; do
		for b in "${types[@]}"; do
			[[ $a == "$b" ]] && continue
			shapes+=("c_$a$d, c_$b")
		done
	done
done
shapes=("${shapes[@]:0:60}")
{
	echo "CREATE EXTENSION btree_jit;"
	echo "CREATE TABLE m (${cols%, });"
	echo "INSERT INTO m SELECT g % 300, g, g * 3, date '2020-01-01' + g % 700, g, g % 2 = 0 FROM generate_series(1, 3000) g;"
	for i in "${!shapes[@]}"; do echo "CREATE INDEX m$((i + 1)) ON m (${shapes[i]});"; done
} | sql >/dev/null
# state|code_source of each of indexes m$1..m$2, in one fresh backend
states() {
	for i in $(seq "$1" "$2"); do
		echo "SELECT state || '|' || (SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'm$i'::regclass) FROM btree_jit_compile('m$i');"
	done | sql
}
nobjects() { find "$cache" -name '*.o' | wc -l; }
out=$(states 1 60)
check "60 shapes compiled, one backend" test "$(grep -c '^jit|compiled$' <<<"$out")" -eq 60
check "the cache holds 20 objects ($(nobjects))" test "$(nobjects)" -eq 20
out=$(states 41 60)
check "the 20 latest shapes link from the cache" \
	test "$(grep -c '^jit|object cache$' <<<"$out")" -eq 20
check "the first shape was evicted, compiles again" test "$(states 1 1)" = "jit|compiled"
check "still 20 objects ($(nobjects))" test "$(nobjects)" -eq 20
# A link makes an object recent: age every object, link 19 shapes, store
# one more; the one not linked (m1's, of m1 and m42..m60) is evicted.
find "$cache" -name '*.o' -exec touch -d '2 hours ago' {} +
out=$(states 42 60)
check "19 shapes link from the cache" \
	test "$(grep -c '^jit|object cache$' <<<"$out")" -eq 19
check "a new shape compiles and is stored" test "$(states 2 2)" = "jit|compiled"
out=$(states 42 60)
check "the 19 linked shapes are all still cached" \
	test "$(grep -c '^jit|object cache$' <<<"$out")" -eq 19
check "the cache still holds 20 objects ($(nobjects))" test "$(nobjects)" -eq 20
out=$(sql -c "SET enable_seqscan = off; SET enable_bitmapscan = off;
	SET btree_jit.compile_threshold = 0; SET btree_jit.compile_mode = inline;
	SELECT count(*) FROM m WHERE c_int4 = 77 AND c_int8 > 0;
	SELECT count(*) FROM m WHERE c_date = date '2020-03-01';
	SELECT count(*) FROM m WHERE c_int4 = 77 AND c_int8 > 0;
	SELECT count(*) FROM m WHERE c_date = date '2020-03-01';
	SELECT sum(jit_searches) > 0 FROM btree_jit_index_stats()" | paste -sd' ')
check "searches by compiled code return the right rows ($out)" test "$out" = "1 5 1 5 t"
cluster_stop

# The warm start compiles only what the bound has room for: 5 shapes
# compiled by the worker with room for 3, then a restart.  Only the test's
# own 5 shapes are queued: each session's query searches its index 600 to
# 6000 times, past the session's threshold of 300, while no catalog index
# is searched more than about 50 times in such a session (so no catalog
# shape gets into the list, however busy the machine).
echo "# warm start at the bound"
cluster_start "" "${conf[@]}" "btree_jit.object_cache_max_files = 3" "fsync = on"
cache=$PGDATA/btree_jit_cache
sql -c "CREATE EXTENSION btree_jit;
	CREATE TABLE m (c_int2 int2, c_int4 int4, c_int8 int8, c_date date, c_oid oid);
	INSERT INTO m SELECT g % 300, g, g * 3, date '2020-01-01' + g % 700, g FROM generate_series(1, 3000) g;
	CREATE INDEX w1 ON m (c_int2, c_int8); CREATE INDEX w2 ON m (c_int4 DESC, c_date);
	CREATE INDEX w3 ON m (c_int8 DESC, c_int2); CREATE INDEX w4 ON m (c_date, c_oid DESC);
	CREATE INDEX w5 ON m (c_oid DESC, c_int4 DESC);"
# the warm-start list's count of shapes (its header: 13-byte magic, then
# shape size, count and CRC as 4-byte words from offset 16)
listed() { od -An -t u4 -j 20 -N 4 "$cache/shapes" | tr -d ' '; }
worker_up() { worker_pid=$(sql -c "SELECT worker_pid FROM btree_jit_status()"); [[ -n $worker_pid ]]; }
wait_until 120 worker_up || true
if command -v strace >/dev/null; then
	timeout 600 strace -f -y -qq -e trace=openat,fsync,rename -p "$worker_pid" \
		-o "$work/strace.worker" &
	strace_pid=$!
	for i in $(seq 1 1200); do
		[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$worker_pid/status") != 0 ]] && break
		sleep 0.1
	done
fi
for c in c_int2 c_int4 c_int8 c_date c_oid; do
	sql -c "SET btree_jit.compile_threshold = 300; SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM m WHERE $c = ANY (ARRAY(SELECT $c FROM m))" >/dev/null
done
compiled5() { [[ $(sql -c "SELECT worker_compiles >= 5 AND queue_length = 0 FROM btree_jit_status()") == t ]]; }
wait_until 600 compiled5 || true
n=$(sql -c "SELECT worker_compiles || '|' || worker_failures FROM btree_jit_status()")
check "the worker compiled the test's 5 shapes, nothing else ($n)" test "$n" = "5|0"
check "the cache holds 3 objects ($(nobjects))" test "$(nobjects)" -eq 3
check "the list is pruned to the 3 shapes the cache holds ($(listed))" test "$(listed)" = 3
if [[ -n ${strace_pid:-} ]]; then
	rc=0
	kill "$strace_pid" 2>/dev/null || true
	wait "$strace_pid" 2>/dev/null || true
	awk '/fsync\(.*btree_jit_cache\/shapes\.tmp\./ { synced = NR }
		/rename\(.*btree_jit_cache\/shapes\.tmp\.[0-9]*", ".*btree_jit_cache\/shapes"/ { if (synced) renamed = NR }
		/fsync\([0-9]*<[^>]*btree_jit_cache>\)/ { if (renamed) dirsynced = NR }
		END { exit !(synced && renamed > synced && dirsynced > renamed) }' "$work/strace.worker" || rc=$?
	check "the list is fsynced, renamed, then its directory fsynced" test $rc -eq 0
	[[ $rc -eq 0 ]] || grep shapes "$work/strace.worker" | tail -n 20
else
	bad "the list is fsynced, renamed, then its directory fsynced" \
		"strace is not installed (test/deps.sh installs it)"
fi
restart() {
	(cd "$BTJIT_CLUSTER_DIR" && as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -w -t 120 restart -l "$BTJIT_CLUSTER_LOG" >/dev/null)
}
# two listed objects removed and two objects of no listed shape in their
# place: the warm start finds 2 missing and no room for them
objs=($(ls "$cache"/*.o))
cp "${objs[2]}" "$cache/fffffffffffffff1.o"
cp "${objs[2]}" "$cache/fffffffffffffff2.o"
chown "$BTJIT_OS_USER:" "$cache"/fffffffffffffff?.o
rm -f "${objs[0]}" "${objs[1]}"
restart
warm_logged() { [[ $(log_lines 'LOG:  btree_jit: warm start: ') -ge $1 ]]; }
wait_until 120 warm_logged 1 || true
check "the warm start compiles none: no room" \
	test "$(log_lines 'LOG:  btree_jit: warm start: 0 of 3 listed shapes are not in the object cache and will be compiled')" -eq 1 -a \
	"$(log_lines 'DETAIL:  2 more are not, for want of room (btree_jit.object_cache_max_files = 3).')" -eq 1
check "the worker compiled nothing after the restart" \
	test "$(sql -c "SELECT worker_compiles || '|' || queue_length FROM btree_jit_status()")" = "0|0"
# with the two strangers gone, the bound leaves room for both
rm -f "$cache"/fffffffffffffff?.o
restart
wait_until 120 warm_logged 2 || true
check "the warm start compiles the 2 missing listed shapes" \
	test "$(log_lines 'LOG:  btree_jit: warm start: 2 of 3 listed shapes are not in the object cache and will be compiled')" -eq 1
back() { [[ $(nobjects) -eq 3 && $(sql -c "SELECT queue_length FROM btree_jit_status()") == 0 ]]; }
wait_until 300 back || true
check "their objects are back ($(nobjects))" test "$(nobjects)" -eq 3
check "the worker compiled exactly them ($(sql -c "SELECT worker_compiles FROM btree_jit_status()"))" \
	test "$(sql -c "SELECT worker_compiles FROM btree_jit_status()")" -eq 2
check "the list still names the 3 shapes ($(listed))" test "$(listed)" = 3

# A damaged list is refused whole, with one LOG line, and nothing compiled
cp "$cache/shapes" "$work/shapes.good"
rm -f "$cache"/*.o
size=$(stat -c %s "$cache/shapes")
printf '\x5a' | dd of="$cache/shapes" bs=1 seek=$((size - 100)) conv=notrunc status=none
cmp -s "$cache/shapes" "$work/shapes.good" &&
	printf '\xa5' | dd of="$cache/shapes" bs=1 seek=$((size - 100)) conv=notrunc status=none
refused() { [[ $(log_lines "LOG:  btree_jit: refusing the list of shapes \"$cache/shapes\": its CRC-32C does not match its header") -ge 1 ]]; }
restart
wait_until 60 refused || true
check "a damaged list is refused with one LOG line" \
	test "$(log_lines "LOG:  btree_jit: refusing the list of shapes \"$cache/shapes\": its CRC-32C does not match its header")" -eq 1
check "its shapes are not compiled ahead" \
	test "$(log_lines 'LOG:  btree_jit: warm start: ')" -eq 2 -a "$(nobjects)" -eq 0
# a truncated list: refused for its size
head -c 100 "$work/shapes.good" >"$cache/shapes"
restart
truncated() { [[ $(log_lines "LOG:  btree_jit: refusing the list of shapes \"$cache/shapes\": its size does not match its header") -ge 1 ]]; }
wait_until 60 truncated || true
check "a truncated list is refused with one LOG line" \
	test "$(log_lines "LOG:  btree_jit: refusing the list of shapes \"$cache/shapes\": its size does not match its header")" -eq 1

# Temporary files left by writers that died between write and rename: one
# of a dead process and one of a live process older than 10 minutes are
# removed, a live process's fresh one stays (this script stands for a live
# writer); at start-up (the postmaster's preload) and on eviction.
dead=999999
while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
live=$$
tmpfiles() {
	for f in "0123456789abcdef.o.tmp.$dead" "shapes.tmp.$dead" \
		"1123456789abcdef.o.tmp.$live" "2123456789abcdef.o.tmp.$live"; do
		echo x | as_postgres tee "$cache/$f" >/dev/null
	done
	touch -d '20 minutes ago' "$cache/2123456789abcdef.o.tmp.$live"
}
tmp_left() { (cd "$cache" && ls -- *.tmp.* 2>/dev/null | sort | paste -sd' '); }
tmpfiles
sql -c "SELECT btree_jit_compile('w1') IS NOT NULL" >/dev/null
sql -c "SELECT btree_jit_compile('w2') IS NOT NULL" >/dev/null
sql -c "SELECT btree_jit_compile('w3') IS NOT NULL" >/dev/null
sql -c "SELECT btree_jit_compile('w4') IS NOT NULL" >/dev/null
check "eviction removes the dead writers' and the old temporary files ($(tmp_left))" \
	test "$(tmp_left)" = "1123456789abcdef.o.tmp.$live"
check "each removal is logged" \
	test "$(log_lines 'btree_jit: removed temporary file')" -eq 3
rm -f "$cache/1123456789abcdef.o.tmp.$live"
tmpfiles
cluster_stop_keep() { (cd "$BTJIT_CLUSTER_DIR" && as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -w -t 120 stop >/dev/null); }
cluster_stop_keep
(cd "$BTJIT_CLUSTER_DIR" && as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -w -t 120 start -l "$BTJIT_CLUSTER_LOG" >/dev/null)
check "start-up removes the temporary files of writers that are gone, keeps the live one's ($(tmp_left))" \
	test "$(tmp_left)" = "1123456789abcdef.o.tmp.$live"
cluster_stop

# ---------------------------------------------------------------- handover
# object_cache_max_files = 2 and 60 shapes queued for the compile worker by
# one session that searches them every 6 s: the worker compiles more than
# 2 shapes between two rounds (it takes 0.5-2 s a shape), so without
# keeping its objects for the session they were evicted before the session
# looked, and queued again.  The session goes on until all 60 are on
# compiled code (however long the compiles take on this machine, up to
# 10 minutes), then checks: every shape compiled once, all 60 linked.
echo "# handover below the bound"
cluster_start "" "btree_jit.verify = off" "btree_jit.object_cache_max_files = 2" \
	"btree_jit.compile_threshold = 1000000000" "btree_jit.log_compiles = on"
cache=$PGDATA/btree_jit_cache
{
	echo "CREATE EXTENSION btree_jit;"
	for i in "${!shapes[@]}"; do
		n=$((i + 1))
		echo "CREATE TABLE h$n (${cols%, });"
		echo "INSERT INTO h$n SELECT g % 300, g, g * 3, date '2020-01-01' + g % 700, g, g % 2 = 0 FROM generate_series(1, 2000) g;"
		echo "CREATE INDEX h${n}_i ON h$n (${shapes[i]});"
	done
	echo "VACUUM ANALYZE;"
} | sql >/dev/null
mkdir -p "$work/h"
chown "$BTJIT_OS_USER:" "$work/h"
# one round: each index probed 40 times by a nested loop (80 page
# searches, past the session's threshold of 60 in the first round; the
# session's catalog indexes may cross it over the rounds too: the checks
# count the test's own indexes only)
round() {
	for i in "${!shapes[@]}"; do
		c=${shapes[i]%%,*}
		c=${c% DESC}
		echo "SELECT count(*) FROM (SELECT $c FROM h$((i + 1)) LIMIT 40) v JOIN h$((i + 1)) x ON x.$c = v.$c;"
	done
}
own_jit="SELECT count(*) FILTER (WHERE state = 'jit') FROM btree_jit_index_stats() WHERE indexrelid::regclass::text ~ '^h[0-9]+_i\$'"
{
	echo "SET btree_jit.compile_threshold = 60; SET enable_seqscan = off; SET enable_bitmapscan = off;"
	echo "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET enable_memoize = off;"
	echo "\\o /dev/null"
	deadline=$(($(date +%s) + 600))
	r=0
	while :; do
		round
		r=$((r + 1))
		echo "\\o $work/h/jit"
		echo "$own_jit;"
		echo "\\o /dev/null"
		sleep 6
		[[ $(cat "$work/h/jit" 2>/dev/null) == 60 || $(date +%s) -ge $deadline ]] && break
	done
	echo "\\o"
	echo "SELECT 'rounds $r';"
	echo "$own_jit;"
} | sql >"$work/h/out"
echo "     $(sed -n 1p "$work/h/out"): $(sed -n 2p "$work/h/out") of 60 on compiled code"
check "all 60 shapes end on compiled code in the session that queued them" \
	test "$(sed -n 2p "$work/h/out")" = 60
compiled=$( (grep -o 'compile worker compiled shape [0-9a-f]*' "$BTJIT_CLUSTER_LOG" || true) | sort)
dup=$(uniq -d <<<"$compiled" | grep -c . || true)
check "the worker compiled each of the 60 shapes once ($(grep -c . <<<"$compiled") compiles; $dup shapes again)" \
	test "$dup" -eq 0 -a "$(grep -c . <<<"$compiled")" -ge 60
check "the worker logs that the bound is below the shapes in use, with a hint" \
	test "$(log_lines 'LOG:  btree_jit: the object cache is smaller than the key shapes in use')" -ge 1 -a \
	"$(log_lines 'HINT:  Raise btree_jit.object_cache_max_files above the number of key shapes')" -ge 1
# once linked, nothing holds them: the next store brings the cache back
sql -c "CREATE TABLE hx (a int8, b int2, c int4); CREATE INDEX hx_i ON hx (a DESC, b DESC, c);
	SELECT btree_jit_compile('hx_i') IS NOT NULL" >/dev/null
check "once they are linked, a store brings the cache back to its bound ($(nobjects))" test "$(nobjects)" -le 2
cluster_stop

# ---------------------------------------------------------------- library
echo "# library"
# Another build of the compiler library: this tree, built as 9.9-test.
alt=$work/alt
mkdir -p "$alt"
(cd "$root" && cp -r Makefile btree_jit.control src llvm-ir sql "$alt/")
find "$alt" -name '*.o' -o -name '*.so' -o -name '*.bc' | xargs rm -f
make -s -C "$alt" PG_CONFIG="$PG_CONFIG" EXTVERSION=9.9-test btree_jit_llvm.so >/dev/null
cp "$pkglib/btree_jit_llvm.so" "$work/good_llvm.so"

cluster_start "" "${conf[@]}"
make_tables
check "before the upgrade: t_ab compiles" test "$(compile_fresh t_ab)" = "jit|compiled"
# the upgrade: the library replaced under the running server, as a package
# manager does (a new file renamed over the old)
cp "$alt/btree_jit_llvm.so" "$pkglib/btree_jit_llvm.so.new"
mv "$pkglib/btree_jit_llvm.so.new" "$pkglib/btree_jit_llvm.so"
want="the compiler library on disk is version 9.9-test, this server runs $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$root/btree_jit.control"): restart the server"
out=$(sql -c "SELECT state || '|' || reason FROM btree_jit_compile('u_ab')")
echo "     backend: $out"
check "a backend's compile is refused with the restart message" \
	test "$out" = "stock|compilation failed: $want"
check "the refusal is logged" \
	test "$(log_lines "LOG:  btree_jit: refusing the compiler library: $want")" -ge 1
check "a cached shape still links" test "$(compile_fresh t_ab)" = "jit|object cache"
check "its results are right" results_right
# the compile worker, started again after the upgrade, refuses it too
oldpid=$(sql -c "SELECT worker_pid FROM btree_jit_status()")
kill -TERM "$oldpid"
for i in $(seq 1 40); do
	wpid=$(sql -c "SELECT worker_pid FROM btree_jit_status()")
	[[ -n $wpid && $wpid != "$oldpid" ]] && break
	sleep 0.5
done
check "the compile worker is started again (pid $oldpid -> ${wpid:-none})" \
	test -n "$wpid" -a "$wpid" != "$oldpid"
out=""
for i in $(seq 1 40); do
	out=$(sql -c "SET btree_jit.compile_threshold = 0; SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM u WHERE a = 17;
		SELECT state || '|' || reason FROM btree_jit_index_stats() WHERE indexrelid = 'u_ab'::regclass" | tail -n1)
	[[ $out == queued* ]] || break
	sleep 0.5
done
echo "     worker: $out"
check "the worker's compile is refused with the restart message" \
	grep -qF "$want" <<<"$out"
check "no crash: the server never restarted" \
	test "$(log_lines 'terminated by signal')" -eq 0
# the upgrade completed: the right library, and a restart
cp "$work/good_llvm.so" "$pkglib/btree_jit_llvm.so"
(cd "$BTJIT_CLUSTER_DIR" && as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -w -t 60 restart -l "$BTJIT_CLUSTER_LOG" >/dev/null)
check "after the restart: u_ab compiles" test "$(compile_fresh u_ab)" = "jit|compiled"
cluster_stop

summary
