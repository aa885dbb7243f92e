#!/bin/bash
# test/suite-fingerprints.sh - the module's copies of server code against the
# server's current source, and what start-up does on a point release they
# were not checked against (src/include/mirrorlist.h).
#
# 1. For every major in mirrorlist.h, the newest source Debian serves (15:
#    the host's, test/lib/source.sh; 17, 18, 19: the chroots', through
#    test/lib/chroot.sh, unless BTJIT_VERSIONS leaves a major out) is
#    fingerprinted by test/lib/fingerprint.py: a reproduced function whose
#    code changed fails the suite, by name.
# 2. The host's server with the default btree_jit.unchecked_release =
#    server, on a release mirrorlist.h does not list: the page search and
#    _bt_compare stay redirected, _bt_binsrch_insert, _bt_checkkeys,
#    _bt_readpage, and _bt_keep_natts_fast, the descent's page reads
#    (_bt_getroot, _bt_getbuf, _bt_relandgetbuf) and the descent
#    (_bt_search) (up to 18), the scan start (_bt_first, 15 and 17) and the
#    step from item to item (btgettuple, and index_getnext_tid and
#    index_deform_tuple_internal up to 18) are left to the server with one
#    LOG line each, the
#    status's reason says why, and an index's counters show compiled page
#    searches but no compiled insertion search, check or leaf read.  If the
#    host's release is listed, the release is taken for an unlisted one
#    through the test hook btree_jit.locate_fault = unchecked_release, and
#    the output says which.
# 3. The same server with btree_jit.unchecked_release = module: every
#    target redirected and used.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=lib/source.sh
source "$here/lib/source.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

mirrorlist=$BTJIT_ROOT/src/include/mirrorlist.h
fingerprint=$here/lib/fingerprint.py

# --- 1. fingerprints ----------------------------------------------------------
majors=$(sed -nE 's/^BTJIT_MIRROR\([A-Z]+, ([0-9]+),.*/\1/p' "$mirrorlist" | sort -un)
[[ -n $majors ]] || btjit_die "no BTJIT_MIRROR rows in $mirrorlist"
host_major=$("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')

fingerprint_check() {
	local major=$1 dir=$2 version=$3 out
	if out=$(python3 "$fingerprint" check "$major" "$dir" "$mirrorlist"); then
		ok "PostgreSQL $major: the reproduced functions of $version's source are the ones the module was checked against"
	else
		bad "PostgreSQL $major: $version's source differs" "$(tail -n 1 <<<"$out")"
	fi
	printf '%s\n' "$out"
}

for m in $majors; do
	if [[ $m == "$host_major" ]]; then
		host_server_source "postgresql-$m" "$(dpkg-query -W -f='${Version}' "postgresql-$m")"
		fingerprint_check "$m" "$BTJIT_HOST_SOURCE_DIR" "$BTJIT_HOST_SOURCE_VERSION"
		continue
	fi
	case " ${BTJIT_VERSIONS:-17 18 19} " in
	*" $m "*) ;;
	*)
		echo "PostgreSQL $m: left out by BTJIT_VERSIONS=${BTJIT_VERSIONS:-}"
		continue
		;;
	esac
	# shellcheck source=lib/chroot.sh
	source "$here/lib/chroot.sh"
	# the chroots are the version matrix's: one user at a time
	mkdir -p "$BTJIT_CHROOT_CACHE"
	exec 8>"$BTJIT_CHROOT_CACHE/.matrix.lock"
	flock 8
	chroot_ensure "$m"
	chroot_server_source "$m"
	flock -u 8
	fingerprint_check "$m" "$BTJIT_CHROOT_SOURCE_DIR" "$BTJIT_CHROOT_SOURCE_VERSION"
done

# --- 2 and 3. the host's server on an unchecked release -----------------------
# server_version_num from "PostgreSQL 15.20 (Debian ...)" (150020) or
# "PostgreSQL 19rc1 (...)" (190000: a pre-release is the major's .0)
server_num=$("$PG_CONFIG" --version |
	sed -nE 's/^PostgreSQL ([0-9]+)(\.([0-9]+))?.*/\1 \3/p' |
	awk '{ printf "%d%04d\n", $1, $2 }')
[[ $server_num =~ ^[0-9]{6}$ ]] || btjit_die "cannot read server_version_num from $("$PG_CONFIG" --version)"
hook=()
if grep -qE "^BTJIT_CHECKED\($host_major, $server_num," "$mirrorlist"; then
	how="release $server_num is listed as checked: an unlisted one simulated by btree_jit.locate_fault = unchecked_release"
	hook=("btree_jit.locate_fault = unchecked_release")
else
	how="release $server_num is not listed as checked: a real point release the module was not checked against"
fi
echo "host server: $how"

# the searches every target is used by, in one session (the counters of
# btree_jit_index_stats() are the backend's)
workload="
SET btree_jit.compile_mode = inline;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TABLE fp_t (id int4 PRIMARY KEY, v int4);
INSERT INTO fp_t SELECT g, g FROM generate_series(1, 20000) g;
SELECT state FROM btree_jit_compile('fp_t_pkey');
SELECT count(*) FROM generate_series(1, 2000) g, LATERAL (SELECT v FROM fp_t WHERE id = g) s;
SELECT sum(v) FROM fp_t WHERE id BETWEEN 100 AND 5000;
INSERT INTO fp_t SELECT g, g FROM generate_series(20001, 21000) g;
SELECT jit_searches, jit_inserts, jit_checks, jit_leafreads
  FROM btree_jit_index_stats() WHERE indexrelid = 'fp_t_pkey'::regclass;"

# run_case SETTING - start a cluster with btree_jit.unchecked_release =
# SETTING (and the hook, if any), run the workload; sets counts (searches
# inserts checks leafreads), reason (the status's) and log (the server's)
run_case() {
	cluster_start "" "btree_jit.unchecked_release = $1" "${hook[@]}"
	psql_as -q -c "CREATE EXTENSION btree_jit" >/dev/null
	[[ $(psql_as -At -c "SHOW server_version_num") == "$server_num" ]] ||
		btjit_die "the server reports server_version_num $(psql_as -At -c "SHOW server_version_num"), pg_config said $server_num"
	counts=$(psql_as -At -F ' ' -c "$workload" | tail -n 1)
	reason=$(psql_as -At -c "SELECT reason FROM btree_jit_status()")
	log=$(cat "$BTJIT_CLUSTER_LOG")
	cluster_stop
	echo "unchecked_release = $1: counters (searches inserts checks leafreads) $counts"
	echo "  reason: $reason"
}

run_case server
read -r searches inserts checks leafreads <<<"$counts"
version_text=$(printf '%d.%d' $((server_num / 10000)) $((server_num % 10000)))
for sym in _bt_binsrch_insert _bt_checkkeys _bt_readpage _bt_keep_natts_fast \
	_bt_getroot _bt_getbuf _bt_relandgetbuf _bt_search _bt_first btgettuple \
	index_getnext_tid index_deform_tuple_internal; do
	if [[ $host_major -ge 19 && $sym == _bt_checkkeys ]]; then
		continue				# static in 19: part of the leaf read
	fi
	if [[ $host_major -ge 18 && $sym == _bt_first ]]; then
		continue				# redirected on 15 and 17 only
	fi
	if [[ $host_major -ge 19 && $sym =~ ^(_bt_keep_natts_fast|_bt_getroot|_bt_getbuf|_bt_relandgetbuf|_bt_search|index_getnext_tid|index_deform_tuple_internal)$ ]]; then
		continue				# not redirected on 19 at all
	fi
	check "server: the LOG says $sym is left to release $version_text" \
		grep -qF "btree_jit: $sym not redirected: PostgreSQL $version_text is a release the module's copy of it was not checked against" <<<"$log"
	check "server: the status's reason says $sym is left to the release" \
		grep -qF "$sym not redirected (release $version_text not checked)" <<<"$reason"
done
check "server: _bt_compare stays redirected" grep -qF "_bt_compare redirected" <<<"$reason"
check "server: compiled page searches ($searches)" test "${searches:-0}" -gt 0
check "server: no compiled insertion search ($inserts)" test "${inserts:-x}" = 0
check "server: no compiled check ($checks)" test "${checks:-x}" = 0
check "server: no compiled leaf read ($leafreads)" test "${leafreads:-x}" = 0

run_case module
read -r searches inserts checks leafreads <<<"$counts"
check "module: no target left to the release" bash -c '! grep -q "not checked" <<<"$1"' _ "$reason"
check "module: compiled page searches ($searches)" test "${searches:-0}" -gt 0
check "module: compiled insertion searches ($inserts)" test "${inserts:-0}" -gt 0
check "module: compiled checks ($checks)" test "${checks:-0}" -gt 0
check "module: compiled leaf reads ($leafreads)" test "${leafreads:-0}" -gt 0

summary
