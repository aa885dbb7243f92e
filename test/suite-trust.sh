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
#              missing listed shapes as the bound has room for.
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
	sql -c "COPY (SELECT pg_backend_pid()) TO '$work/out/pid'" -c "SELECT pg_sleep(3)" \
		-c "SELECT btree_jit_compile('w2_ab') IS NOT NULL" >/dev/null &
	for i in $(seq 1 50); do [[ -s $work/out/pid ]] && break; sleep 0.1; done
	timeout 20 strace -y -qq -e trace=openat,fsync,rename -p "$(cat "$work/out/pid")" \
		-o "$work/strace" &
	wait %1
	sleep 0.5
	kill %2 2>/dev/null || true
	wait || true
	awk '/fsync\(.*btree_jit_cache\/[0-9a-f]*\.o\.tmp\./ { synced = NR }
		/^rename\(.*btree_jit_cache\/[0-9a-f]*\.o\.tmp\./ { renamed = NR }
		/fsync\([0-9]*<[^>]*btree_jit_cache>\)/ { dirsynced = NR }
		END { exit !(synced && renamed > synced && dirsynced > renamed) }' \
		"$work/strace" >/dev/null
	rc=$?
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
# compiled by the worker with room for 3, then a restart.
echo "# warm start at the bound"
cluster_start "" "${conf[@]}" "btree_jit.object_cache_max_files = 3"
cache=$PGDATA/btree_jit_cache
sql -c "CREATE EXTENSION btree_jit;
	CREATE TABLE m (c_int2 int2, c_int4 int4, c_int8 int8, c_date date, c_oid oid);
	INSERT INTO m SELECT g % 300, g, g * 3, date '2020-01-01' + g % 700, g FROM generate_series(1, 3000) g;
	CREATE INDEX w1 ON m (c_int2, c_int8); CREATE INDEX w2 ON m (c_int4 DESC, c_date);
	CREATE INDEX w3 ON m (c_int8 DESC, c_int2); CREATE INDEX w4 ON m (c_date, c_oid DESC);
	CREATE INDEX w5 ON m (c_oid DESC, c_int4 DESC);"
for c in c_int2 c_int4 c_int8 c_date c_oid; do
	sql -c "SET btree_jit.compile_threshold = 0; SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM m WHERE $c = (SELECT $c FROM m LIMIT 1)" >/dev/null
done
for i in $(seq 1 120); do
	n=$(sql -c "SELECT worker_compiles FROM btree_jit_status()")
	[[ $n -ge 5 ]] && break
	sleep 0.5
done
check "the worker compiled the 5 shapes ($n)" test "$n" -ge 5
check "the cache holds 3 objects ($(nobjects))" test "$(nobjects)" -eq 3
(cd "$BTJIT_CLUSTER_DIR" && as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -w -t 60 restart -l "$BTJIT_CLUSTER_LOG" >/dev/null)
sleep 2
check "the warm start compiles none: no room" \
	test "$(log_lines 'LOG:  btree_jit: warm start: 0 of 5 listed shapes are not in the object cache and will be compiled')" -eq 1 -a \
	"$(log_lines 'DETAIL:  2 more are not, for want of room (btree_jit.object_cache_max_files = 3).')" -eq 1
check "the worker compiled nothing after the restart" \
	test "$(sql -c "SELECT worker_compiles FROM btree_jit_status()")" -eq 0
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
