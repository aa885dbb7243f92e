#!/bin/bash
# test/suite-upgrade.sh - a real point-release upgrade under the module, on a
# fresh Debian 12 machine (a minbase chroot, test/lib/install.sh): the module
# built from source against the older release the archive still has
# (bookworm's own 15.18), then `apt-get install` of the newer one
# (bookworm-security's 15.20) and a restart, as a DBA's `apt upgrade` does.
#
#   - on the older release, listed in src/include/mirrorlist.h: every
#     target redirected;
#   - after the upgrade, with the default btree_jit.unchecked_release =
#     server: the module starts, keeps the page search and _bt_compare,
#     leaves _bt_binsrch_insert, _bt_checkkeys and _bt_readpage to the
#     server with one LOG line each, and btree_jit_status() says why;
#   - README's third step after a point release, unchecked_release =
#     module and a restart: every target redirected again.
#
# When the archive has one release of postgresql-15 only (bookworm's point
# release caught up with its security archive), there is nothing to upgrade
# from: the suite is skipped, and test/suite-fingerprints.sh shows the same
# start-up with the test hook btree_jit.locate_fault = unchecked_release.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/install.sh
source "$here/lib/install.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

release=bookworm
pg=15
t0=$SECONDS
inst_fresh "$release"
inst_stage_tree

# the releases the archive offers, oldest first
mapfile -t offered < <(inst_run apt-cache madison "postgresql-$pg" |
	awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -uV)
echo "# postgresql-$pg in the archive: ${offered[*]}"
if [[ ${#offered[@]} -lt 2 ]]; then
	echo "one release of postgresql-$pg in the archive: nothing to upgrade from (test/suite-fingerprints.sh covers the start-up)"
	exit 77
fi
old=${offered[0]}
new=${offered[${#offered[@]} - 1]}
num_of() {
	local v=${1%%-*}
	printf '%d%04d' "${v%%.*}" "${v#*.}"
}
old_num=$(num_of "$old")
new_num=$(num_of "$new")
listed() { grep -qE "^BTJIT_CHECKED\($pg, $1," "$BTJIT_ROOT/src/include/mirrorlist.h"; }
listed "$old_num" || btjit_die "$old is not listed in mirrorlist.h: the suite needs a checked release to upgrade from"
if listed "$new_num"; then
	echo "$new is listed in mirrorlist.h: its upgrade leaves nothing to the server (test/suite-fingerprints.sh covers the start-up)"
	exit 77
fi
echo "# upgrading $old -> $new"

# the older release and what building the module from source needs (the
# README's source steps install the newest release, so they are not used)
inst_run apt-get -q install -y "postgresql-$pg=$old" "postgresql-client-$pg=$old" \
	"postgresql-server-dev-$pg=$old" make gcc g++ libzydis-dev libicu-dev >/dev/null
pgc=/usr/lib/postgresql/$pg/bin/pg_config
check "$old installed" eq "$(inst_run "$pgc" --version)" "PostgreSQL ${old%%-*} (Debian $old)"
inst_run make -s -C "$INST_TREE" PG_CONFIG="$pgc" >/dev/null
inst_run make -s -C "$INST_TREE" PG_CONFIG="$pgc" install >/dev/null

conf=/etc/postgresql/$pg/main/postgresql.conf
log=$INST_ROOT/var/log/postgresql/postgresql-$pg-main.log
{
	echo "listen_addresses = ''"
	echo "shared_preload_libraries = 'btree_jit'"
} >>"$INST_ROOT$conf"

q() {
	inst_run runuser -u postgres -- psql -X -q -At -c "$1"
}

# start_and_read - (re)start the main cluster; sets line (the start-up
# line of this start) and reason (btree_jit_status()'s)
start_and_read() {
	: >"$log"
	inst_run pg_ctlcluster "$pg" main restart
	q "CREATE EXTENSION IF NOT EXISTS btree_jit" >/dev/null
	line=$(grep -E "LOG:  btree_jit [0-9.]* on PostgreSQL" "$log" || true)
	reason=$(q "SELECT reason FROM btree_jit_status()")
}

start_and_read
echo "# on $old: ${line#*LOG:  }"
for sym in _bt_compare _bt_binsrch_insert _bt_checkkeys _bt_readpage; do
	check "$old: $sym redirected" grep -qF "; $sym redirected" <<<"$reason"
done

# the upgrade, as apt upgrade would do it (policy-rc.d keeps the package
# scripts from restarting the server: the DBA restarts it)
inst_run apt-get -q install -y "postgresql-$pg=$new" "postgresql-client-$pg=$new" \
	"postgresql-server-dev-$pg=$new" >/dev/null
check "$new installed" eq "$(inst_run "$pgc" --version)" "PostgreSQL ${new%%-*} (Debian $new)"
start_and_read
echo "# on $new: ${line#*LOG:  }"
new_text=${new%%-*}
check "$new: the start-up line names the running release" grep -qF "on PostgreSQL $new_text " <<<"$line"
check "$new: the page search stays redirected" grep -qF "_bt_binsrch at " <<<"$reason"
check "$new: _bt_compare stays redirected" grep -qF "; _bt_compare redirected" <<<"$reason"
for sym in _bt_binsrch_insert _bt_checkkeys _bt_readpage; do
	check "$new: the LOG says $sym is left to the release" \
		grep -qF "btree_jit: $sym not redirected: PostgreSQL $new_text is a release the module's copy of it was not checked against" "$log"
	check "$new: btree_jit_status() says $sym is left to the release" \
		grep -qF "; $sym not redirected (release $new_text not checked)" <<<"$reason"
done

echo "btree_jit.unchecked_release = module" >>"$INST_ROOT$conf"
start_and_read
for sym in _bt_compare _bt_binsrch_insert _bt_checkkeys _bt_readpage; do
	check "$new, unchecked_release = module: $sym redirected" grep -qF "; $sym redirected" <<<"$reason"
done
inst_run pg_ctlcluster "$pg" main stop || true
echo "# $((SECONDS - t0)) s"
summary
