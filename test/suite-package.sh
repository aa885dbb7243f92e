#!/bin/bash
# test/suite-package.sh - the Debian package and the PGXN metadata, as a
# user of them would meet them:
#
#   - one version everywhere: btree_jit.control's default_version, META.json
#     (its version and the extension it provides), debian/changelog; and
#     META.json is valid JSON;
#   - the binary package builds with Debian's PostgreSQL tooling
#     (pg_buildext updatecontrol, dpkg-buildpackage, dh --with pgxs_loop)
#     from a copy of the tracked files, and holds exactly the files
#     `make install` installs (plus its docs);
#   - installed with dpkg into the host's PostgreSQL 15 (the module files
#     `make install` put there are replaced), a fresh cluster that preloads
#     it starts, logs the start-up LOG line with the package's version, the
#     extension is created at that version, an index runs compiled code;
#   - purged, every file of the package is gone, a server without the
#     preload starts and works, and one still preloading it refuses to
#     start with a clear FATAL.
# At the end (also on failure) the module is installed again from this tree
# with make install, as the other suites expect.
#
# Holds /tmp/btjit-install.lock while it changes the installed files, like
# every other user of the installed server; BTJIT_INSTALL_LOCK_HELD=1 says
# the caller holds it already (flock -o /tmp/btjit-install.lock ...).
# Ends with "N passed, M failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

cd "$BTJIT_ROOT"
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
package=postgresql-$major-btree-jit

# ---- one version everywhere ----
control_v=$(sed -n "s/^default_version = '\(.*\)'/\1/p" btree_jit.control)
check "META.json is valid JSON" python3 -m json.tool META.json /dev/null
meta_v=$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
provides_v=$(python3 -c 'import json; print(json.load(open("META.json"))["provides"]["btree_jit"]["version"])')
changelog_v=$(dpkg-parsechangelog -l debian/changelog -S Version)
check "META.json version is the control file's ($control_v)" eq "$meta_v" "$control_v"
check "META.json provides btree_jit $control_v" eq "$provides_v" "$control_v"
check "debian/changelog version is the control file's" eq "$changelog_v" "$control_v"
check "every SQL script META.json names exists" \
	test -f "$(python3 -c 'import json; print(json.load(open("META.json"))["provides"]["btree_jit"]["file"])')"

# ---- build ----
scratch=$(mktemp -d /tmp/btjit-package.XXXXXX)
restore() {
	# the make-installed module back, whatever happened
	exec 9>&- 2>/dev/null || true
	if [[ ${BTJIT_INSTALL_LOCK_HELD:-0} == 1 ]]; then
		lock=()
	else
		lock=(flock /tmp/btjit-install.lock)
	fi
	"${lock[@]}" make -C "$BTJIT_ROOT" install PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1 ||
		echo "suite-package: could not reinstall the module with make install" >&2
	rm -rf "$scratch"
}
cluster_on_exit restore

# copy_tree DEST - the source tree without build outputs: the tracked files
# of a git checkout, else (the matrix's staged copy in a chroot) the tree
# with make clean run in the copy
copy_tree() {
	mkdir -p "$1"
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z | tar --null -T - -cf - | tar -x -C "$1"
	else
		tar --exclude=./test/results --exclude=./bench/out --exclude=./.tmp \
			-cf - . | tar -x -C "$1"
		make -C "$1" clean PG_CONFIG="$PG_CONFIG" >/dev/null
	fi
}
copy_tree "$scratch/src"
copy_tree "$scratch/make"
echo "# building $package in $scratch/src"
start=$SECONDS
(cd "$scratch/src" && pg_buildext updatecontrol &&
	dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1 || {
	tail -n 30 "$scratch/build.log" >&2
	bad "dpkg-buildpackage (the last 30 lines of its log above)"
	summary || exit 1
}
deb=$scratch/${package}_${control_v}_amd64.deb
check "dpkg-buildpackage built $package $control_v in $((SECONDS - start)) s" test -f "$deb"
check "the package depends on the server it was built for" \
	grep -q "postgresql-$major" <<<"$(dpkg-deb -f "$deb" Depends)"

# the package's files (no directories, no docs) against make install's
make -C "$scratch/make" PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1
make -C "$scratch/make" install PG_CONFIG="$PG_CONFIG" DESTDIR="$scratch/destdir" >/dev/null 2>&1
(cd "$scratch/destdir" && find . -type f | sort) >"$scratch/make.files"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | grep -v '^\./usr/share/doc/' | sort >"$scratch/deb.files"
check "the package holds exactly the files make install installs ($(wc -l <"$scratch/make.files"))" \
	diff -u "$scratch/make.files" "$scratch/deb.files"

# ---- install, use, purge: the installed server is shared, so lock ----
if [[ ${BTJIT_INSTALL_LOCK_HELD:-0} != 1 ]]; then
	exec 9>/tmp/btjit-install.lock
	flock 9
fi

dpkg -i "$deb" >"$scratch/dpkg-install.log" 2>&1 || cat "$scratch/dpkg-install.log" >&2
check "dpkg -i installs $package" \
	eq "$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$package" 2>/dev/null)" "ii $control_v"

# (clusters start with the lock's descriptor closed: a postmaster must not
# hold the lock after this script lets go of it)
cluster_start "" 9>&-
check "the start-up LOG line names version $control_v" \
	grep -q "LOG:  btree_jit $control_v on PostgreSQL [0-9][^:]*: _bt_binsrch at .* redirected" "$BTJIT_CLUSTER_LOG"
psql_as -Atq -c "CREATE EXTENSION btree_jit" \
	-c "CREATE TABLE t (id int PRIMARY KEY)" \
	-c "INSERT INTO t SELECT generate_series(1, 10000)" -c "VACUUM ANALYZE t" >/dev/null
check "CREATE EXTENSION installs version $control_v" \
	eq "$(psql_as -Atc "SELECT extversion FROM pg_extension WHERE extname = 'btree_jit'")" "$control_v"
check "the packaged module is active" eq "$(psql_as -Atc "SELECT active FROM btree_jit_status()")" t
# the packaged compile worker compiles the shape in the background (the
# default compile_mode): search until the index runs compiled code, 60 s at
# most
for _ in $(seq 1 120); do
	state=$(psql_as -Atq -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
		-c "DO \$\$ BEGIN FOR i IN 1..200 LOOP PERFORM id FROM t WHERE id = i; END LOOP; END \$\$" \
		-c "SELECT state FROM btree_jit_index_stats() WHERE indexrelid = 't_pkey'::regclass")
	[[ $state == jit ]] && break
	sleep 0.5
done
check "an index runs the packaged compiled code (compiled by the packaged worker)" eq "$state" jit
cluster_stop

files=$(dpkg -L "$package" | while read -r f; do [[ -f $f ]] && echo "$f"; done)
dpkg -P "$package" >"$scratch/dpkg-purge.log" 2>&1 || cat "$scratch/dpkg-purge.log" >&2
check "dpkg -P removes $package" eq "$(dpkg-query -W -f='${db:Status-Abbrev}' "$package" 2>/dev/null || true)" ""
left=$(for f in $files; do [[ -e $f ]] && echo "$f"; done || true)
check "every file of the package is gone" eq "$left" ""

BTJIT_PRELOAD=0 cluster_start "" 9>&-
check "without the preload the server starts and works" \
	eq "$(psql_as -Atc "SELECT 40 + 2")" 42
cluster_stop

fail_dir=$(mktemp -d /tmp/btjit-package-nostart.XXXXXX)
chmod 755 "$fail_dir"
out=$( (BTJIT_PRELOAD=0 cluster_start "$fail_dir/c" "shared_preload_libraries = 'btree_jit'") 2>&1 9>&-) && started=1 || started=0
check "still preloading the removed module, the server refuses to start" eq "$started" 0
check "... with FATAL: could not access file \"btree_jit\"" \
	grep -q 'FATAL:  could not access file "btree_jit"' <<<"$out"
if [[ $started == 1 ]]; then
	as_postgres "$(pg_bindir)/pg_ctl" -D "$fail_dir/c/data" -m immediate stop >/dev/null 2>&1 || true
fi
rm -rf "$fail_dir"

exec 9>&- 2>/dev/null || true

summary
