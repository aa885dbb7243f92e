#!/bin/bash
# test/suite-install.sh - the README's install and removal steps, taken
# literally, on clean Debian machines.
#
# For each release (BTJIT_INSTALL_RELEASES, default "bookworm trixie": 15
# and 17; "sid" adds 18) and each way to install (BTJIT_INSTALL_WAYS,
# default "source package"), in a fresh minimal chroot of that release
# (test/lib/install.sh: debootstrap --variant=minbase, nothing else):
#   - the README's steps for that way (its blocks tagged
#     <!-- steps: source --> / <!-- steps: package -->), run as root in a
#     copy of this tree, with PG and LLVM from the README's table: they
#     install exactly what the README lists (or, for the package, what
#     debian/control's Build-Depends list), build, and install;
#   - the server's own main cluster (created by the postgresql-PG package;
#     the test only makes it listen on its socket alone, preload
#     pg_stat_statements and auto_explain in its postgresql.conf, and starts
#     it: the server "you already run") gets the README's preload steps; the
#     test checks that all three are preloaded (pg_stat_statements counts a
#     query, auto_explain's settings exist), the start-up LOG line,
#     btree_jit_status() active, that an index runs compiled code
#     (btree_jit_indexes: state jit, jit_searches > 0, polled while
#     searching, as the background worker compiles) and that the object
#     cache $PGDATA/btree_jit_cache was written;
#   - the preload steps again: the same list, btree_jit once in
#     postgresql.auto.conf;
#   - the README's removal steps (<!-- steps: remove -->, the make
#     uninstall or the apt-get purge line by way): the server restarts and
#     works without the module, the other two still preloaded and
#     pg_stat_statements working, the object cache gone, the module's files
#     gone, the package purged (no dpkg status left, none of its files); the
#     removal's psql step again runs nothing;
#   - for the package, its postrm: installed again, `dpkg -r` keeps the
#     object cache, `dpkg -P` deletes it and not a directory of that name
#     outside a data directory;
#   - the psql steps of both blocks alone (test/lib/install.sh's
#     inst_sql_step), on lists a postgresql.auto.conf may hold (empty,
#     spaces around commas, quoted names, btree_jit listed or not, only
#     btree_jit), without a restart: what they run and the list they
#     leave; the last list starts the server.
# The host's PostgreSQL and the version matrix's chroots are not touched.
#
# The releases run side by side (BTJIT_INSTALL_PARALLEL=0: one after the
# other); the two ways of one release share apt's downloads.  Measured on
# this 2-core machine, shared with other work (load 4-5): 743 s for
# bookworm + trixie with the minbase tarballs still to make (debootstrap,
# ~2 min, in parallel), 870 s with them cached; ~500 MB downloaded per
# release.  sid alone: 720 s from nothing.
#
# Skipped (77) when not root (chroots).  Logs in test/results/install/.
# Ends with "N passed, M failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/install.sh
source "$here/lib/install.sh"
# shellcheck source=lib/check.sh
source "$here/lib/check.sh"

if [[ $(id -u) -ne 0 ]]; then
	echo "suite-install: needs root (debootstrap, chroot, mount namespaces): skipped"
	exit 77
fi

releases=${BTJIT_INSTALL_RELEASES:-bookworm trixie}
ways=${BTJIT_INSTALL_WAYS:-source package}
logs=$BTJIT_ROOT/test/results/install
mkdir -p "$logs"

# Several releases run side by side (downloads dominate, and they overlap
# well), each as this script for one release, its output shown when it
# ends; BTJIT_INSTALL_PARALLEL=0 runs them one after the other.
# shellcheck disable=SC2086
if [[ $(wc -w <<<"$releases") -gt 1 && ${BTJIT_INSTALL_PARALLEL:-1} != 0 ]]; then
	start=$SECONDS
	pids=()
	for r in $releases; do
		BTJIT_INSTALL_RELEASES=$r bash "$0" >"$logs/$r.out" 2>&1 </dev/null &
		pids+=($!)
		echo "# $r: started (pid $!, output in $logs/$r.out)"
	done
	np=0
	nf=0
	for r in $releases; do
		rc=0
		wait "${pids[0]}" || rc=$?
		pids=("${pids[@]:1}")
		echo "# ---- $r (exit $rc) ----"
		cat "$logs/$r.out"
		last=$(tail -n 1 "$logs/$r.out")
		if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			np=$((np + BASH_REMATCH[1]))
			nf=$((nf + BASH_REMATCH[2]))
			[[ $rc -eq 0 || ${BASH_REMATCH[2]} -gt 0 ]] || nf=$((nf + 1))
		else
			echo "FAIL - $r: no closing counts (exit $rc)"
			nf=$((nf + 1))
		fi
	done
	echo "# suite-install: $((SECONDS - start)) s"
	echo "$np passed, $nf failed"
	exit $((nf > 0))
fi

# The assertions are test/lib/check.sh's; check_rc where a failure stops
# the rest of one_way (|| return 1) or shows more.

# show_log LOG - the end of a failed step's log
show_log() {
	echo "    ---- last lines of $1 (cut at 300 characters) ----"
	tail -n 15 "$1" | cut -c 1-300 | sed 's/^/    /'
}

# q SQL... - psql as postgres on the chroot's main cluster (its socket in
# the chroot's /var/run/postgresql, the default)
q() {
	local a=()
	for s in "$@"; do a+=(-c "$s"); done
	inst_run runuser -u postgres -- psql -XAtq -v ON_ERROR_STOP=1 "${a[@]}"
}

# steps NAME [AGAIN] - run the README's block NAME, checked and timed;
# AGAIN (a word) names a later run of it, and its log
steps() {
	local name=$1 again=${2:+ ($2)} log=$logs/$INST_RELEASE-$way-$1${2:+-$2}.log t0=$SECONDS
	if inst_run_steps "$name" "$way" "$log"; then
		ok "$INST_RELEASE $way: the README's '$name' steps$again ($((SECONDS - t0)) s)"
	else
		bad "$INST_RELEASE $way: the README's '$name' steps$again (FAILED after $((SECONDS - t0)) s)"
		show_log "$log"
		return 1
	fi
}

# sql_step NAME - the psql step of the README's block NAME alone (its
# command with the <<'SQL' here-document, as the block has it), on the
# main cluster as it is; prints what psql printed
sql_step() {
	local cmd
	cmd=$(inst_sql_step "$1") || return 1
	inst_run bash -c "$cmd"
}

# auto_conf - the shared_preload_libraries line of the main cluster's
# postgresql.auto.conf (ALTER SYSTEM's file), none when it has none
auto_conf() {
	grep '^shared_preload_libraries' "$INST_ROOT$datadir/postgresql.auto.conf" || true
}

# list_case NAME BEFORE OUTPUT AFTER - the README's psql step of block NAME
# on a postgresql.auto.conf whose list is BEFORE (written as the file's
# line, spaces and quotes as given): psql prints OUTPUT ("ALTER SYSTEM"
# when it changed the list, nothing when it did not) and the file's list is
# then AFTER ("-": the file has no line left)
list_case() {
	local name=$1 before=$2 output=$3 after=$4 want got
	printf "shared_preload_libraries = '%s'\n" "$before" >"$INST_ROOT$datadir/postgresql.auto.conf"
	got=$(sql_step "$name" 2>&1) || true
	got="$got | $(auto_conf)"
	want="$output | shared_preload_libraries = '$after'"
	[[ $after != - ]] || want="$output | "
	expect_eq "$INST_RELEASE $way: the '$name' psql step on '$before': ${output:-nothing run}, then '$after'" \
		"$got" "$want"
}

# one_way RELEASE WAY - fresh machine, install, use, remove; returns non-zero
# at the first failure that makes the rest meaningless
one_way() {
	local release=$1 way=$2 pg t0 conf dlog state n pkg files left so datadir libs
	pg=$(inst_var "$release" PG)
	pkg=postgresql-$pg-btree-jit
	t0=$SECONDS
	echo "# $release (PostgreSQL $pg), $way: a fresh minbase chroot"
	inst_fresh "$release"
	inst_stage_tree
	echo "#   chroot $INST_ROOT ready in $((SECONDS - t0)) s"

	steps "$way" || return 1
	so=$(inst_run "/usr/lib/postgresql/$pg/bin/pg_config" --pkglibdir)/btree_jit.so
	check_rc "$release $way: btree_jit.so installed in the server's pkglibdir" test -f "$INST_ROOT$so" || return 1
	if [[ $way == package ]]; then
		check_rc "$release package: $pkg is installed" \
			eq "$(inst_run dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null)" "ii " || return 1
	fi
	echo "#   installed: $(inst_run dpkg-query -W -f='${db:Status-Abbrev}\n' | grep -c '^ii') packages in the chroot"

	# the server "you already run": Debian's main cluster, made by the
	# postgresql-$pg package; socket only (the chroot shares the host's
	# network)
	conf=/etc/postgresql/$pg/main/postgresql.conf
	check_rc "$release $way: the postgresql-$pg package made the main cluster" test -f "$INST_ROOT$conf" || return 1
	echo "listen_addresses = ''" >>"$INST_ROOT$conf"
	# that server preloads other libraries already, set in its
	# postgresql.conf with a space after the comma; the README's steps
	# must keep them
	echo "shared_preload_libraries = 'pg_stat_statements,  auto_explain'" >>"$INST_ROOT$conf"
	check_rc "$release $way: the main cluster starts (before the preload)" \
		inst_run pg_ctlcluster "$pg" main start || return 1
	check_rc "$release $way: it preloads pg_stat_statements and auto_explain" \
		eq "$(q "SHOW shared_preload_libraries")" "pg_stat_statements,  auto_explain" || return 1
	datadir=$(q "SHOW data_directory")
	libs="pg_stat_statements, auto_explain"

	steps preload || return 1
	check "$release $way: after the preload steps the server preloads the others and btree_jit" \
		eq "$(q "SHOW shared_preload_libraries")" "$libs, btree_jit"
	check "$release $way: pg_stat_statements works (CREATE EXTENSION, its view counts this query)" \
		eq "$(q "CREATE EXTENSION pg_stat_statements" "SELECT 4200 + 42 AS probe" \
			"SELECT calls FROM pg_stat_statements WHERE query = 'SELECT \$1 + \$2 AS probe'")" $'4242\n1'
	check "$release $way: auto_explain is loaded (its settings exist)" \
		eq "$(q "SHOW auto_explain.log_min_duration")" "-1"
	dlog=$INST_ROOT/var/log/postgresql/postgresql-$pg-main.log
	check_rc "$release $way: the server log says btree_jit redirected _bt_binsrch" \
		grep -q "LOG:  btree_jit [0-9.]* on PostgreSQL ${pg}[.0-9]* .*: _bt_binsrch at .* redirected" "$dlog" ||
		show_log "$dlog"
	check_rc "$release $way: btree_jit_status() is active" \
		eq "$(q "SELECT active FROM btree_jit_status()")" t || q "SELECT * FROM btree_jit_status()" || true
	q "CREATE TABLE t (id int PRIMARY KEY)" "INSERT INTO t SELECT generate_series(1, 10000)" \
		"VACUUM ANALYZE t" >/dev/null
	# search until the background worker has compiled the index's shape and
	# searches run the compiled code (90 s at most)
	state=""
	for n in $(seq 1 180); do
		state=$(q "SET enable_seqscan = off" "SET enable_bitmapscan = off" \
			"DO \$\$ BEGIN FOR i IN 1..200 LOOP PERFORM id FROM t WHERE id = i; END LOOP; END \$\$" \
			"SELECT state || ' ' || (jit_searches > 0) FROM btree_jit_indexes WHERE indexname = 't_pkey'")
		[[ $state == "jit true" ]] && break
		sleep 0.5
	done
	check_rc "$release $way: t_pkey runs compiled code (btree_jit_indexes: state jit, jit_searches > 0; $n rounds)" \
		eq "$state" "jit true" || q "SELECT * FROM btree_jit_indexes" || true
	check "$release $way: the module wrote its object cache, $datadir/btree_jit_cache" \
		test -d "$INST_ROOT$datadir/btree_jit_cache"

	# installing twice: the same list, btree_jit once
	steps preload again || return 1
	check "$release $way: after the preload steps again, the same list" \
		eq "$(q "SHOW shared_preload_libraries")" "$libs, btree_jit"
	check "$release $way: ... and postgresql.auto.conf names btree_jit once" \
		eq "$(auto_conf)" "shared_preload_libraries = '$libs, btree_jit'"
	check "$release $way: ... and the module is active" \
		eq "$(q "SELECT active FROM btree_jit_status()")" t

	if [[ $way == package ]]; then
		files=$(inst_run dpkg -L "$pkg" | while read -r f; do [[ -f $INST_ROOT$f ]] && echo "$f"; done)
	fi
	steps remove || return 1
	check "$release $way: after the removal steps the server runs without the module, the others still preloaded" \
		eq "$(q "SHOW shared_preload_libraries" "SELECT count(*) FROM t WHERE id < 100")" "$libs"$'\n99'
	check "$release $way: ... the extension is dropped" \
		eq "$(q "SELECT count(*) FROM pg_extension WHERE extname = 'btree_jit'")" 0
	# (a query of another shape: pg_stat_statements keeps its counts
	# across restarts, and its query id ignores the column alias)
	check "$release $way: ... pg_stat_statements still works" \
		eq "$(q "SELECT 4200 * 2 AS probe_after" \
			"SELECT calls FROM pg_stat_statements WHERE query = 'SELECT \$1 * \$2 AS probe_after'")" $'8400\n1'
	check "$release $way: ... the object cache is gone ($datadir/btree_jit_cache)" \
		test ! -e "$INST_ROOT$datadir/btree_jit_cache"
	# removing when it is not listed: nothing
	check "$release $way: the removal's psql step again runs nothing, the list unchanged" \
		eq "$(sql_step remove 2>&1) | $(auto_conf)" " | shared_preload_libraries = '$libs'"
	if [[ $way == package ]]; then
		check "$release package: $pkg is purged (no dpkg status left)" \
			eq "$(inst_run dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)" ""
		left=$(for f in $files; do [[ -e $INST_ROOT$f ]] && echo "$f"; done || true)
		check "$release package: every file of the package is gone ($(wc -w <<<"$files") files)" eq "$left" ""
	else
		left=$(cd "$INST_ROOT/usr" && find lib/postgresql share/postgresql -name '*btree_jit*' | sort)
		check "$release source: make uninstall removed every btree_jit file" eq "$left" ""
	fi
	check "$release $way: without the module the server restarts and works" \
		eval 'inst_run pg_ctlcluster "$pg" main restart && eq "$(q "SELECT count(*) FROM t")" 10000'
	if [[ $way == package ]]; then
		purge_keeps_others "$release" "$pg" "$pkg"
	fi

	# the README's psql steps alone, on lists as a postgresql.auto.conf may
	# hold them (postgresql.conf keeps $libs), the server not restarted:
	# they read the list the next start will use
	list_case preload "" "ALTER SYSTEM" "btree_jit"
	list_case preload "pg_stat_statements" "ALTER SYSTEM" "pg_stat_statements, btree_jit"
	list_case preload " pg_stat_statements ,auto_explain  " "ALTER SYSTEM" "pg_stat_statements, auto_explain, btree_jit"
	list_case preload '"$libdir/auto_explain", "a b",pg_stat_statements' "ALTER SYSTEM" \
		'"$libdir/auto_explain", "a b", pg_stat_statements, btree_jit'
	list_case preload ", ," "ALTER SYSTEM" "btree_jit"
	list_case preload "pg_stat_statements,btree_jit" "" "pg_stat_statements,btree_jit"
	list_case preload ' "btree_jit" , auto_explain' "" ' "btree_jit" , auto_explain'
	list_case remove "pg_stat_statements, btree_jit" "ALTER SYSTEM" "pg_stat_statements"
	list_case remove " btree_jit ,pg_stat_statements,  auto_explain " "ALTER SYSTEM" "pg_stat_statements, auto_explain"
	list_case remove '"$libdir/auto_explain", "btree_jit"' "ALTER SYSTEM" '"$libdir/auto_explain"'
	# none left: RESET (SET to '' would name a library "" and the server
	# would not start)
	list_case remove "btree_jit" "ALTER SYSTEM" -
	list_case remove "btree_jit,btree_jit" "ALTER SYSTEM" -
	list_case remove "pg_stat_statements ,auto_explain" "" "pg_stat_statements ,auto_explain"
	list_case remove "" "" ""
	# the list a remove then install leaves starts the server
	list_case remove " btree_jit, pg_stat_statements" "ALTER SYSTEM" "pg_stat_statements"
	check "$release $way: that list starts the server, which preloads it" \
		eval 'inst_run pg_ctlcluster "$pg" main restart && eq "$(q "SHOW shared_preload_libraries")" pg_stat_statements'
	inst_run pg_ctlcluster "$pg" main stop || true
	echo "#   $release $way: $((SECONDS - t0)) s"
}

# purge_keeps_others RELEASE PG PKG - the package's postrm: installed again
# (the .deb the package steps built), then `dpkg -r` keeps the object cache
# of the main cluster, `dpkg -P` deletes it, and a directory of that name
# outside a data directory stays
purge_keeps_others() {
	local release=$1 pg=$2 pkg=$3 decoy=/var/lib/postgresql/$2/btree_jit_cache
	check_rc "$release package: $pkg installed again (dpkg -i)" \
		inst_run sh -c "dpkg -i /build/${pkg}_*_amd64.deb >/dev/null" || return 1
	check "$release package: its postrm is the one for PostgreSQL $pg" \
		grep -qx "major=$pg" "$INST_ROOT/var/lib/dpkg/info/$pkg.postrm"
	inst_run runuser -u postgres -- sh -c "mkdir -p '$datadir/btree_jit_cache' '$decoy' &&
		touch '$datadir/btree_jit_cache/obj' '$decoy/obj'"
	inst_run dpkg -r "$pkg" >/dev/null
	check "$release package: dpkg -r keeps the object cache" test -f "$INST_ROOT$datadir/btree_jit_cache/obj"
	inst_run dpkg -P "$pkg" >/dev/null
	check "$release package: dpkg -P deletes the object cache" test ! -e "$INST_ROOT$datadir/btree_jit_cache"
	check "$release package: ... and nothing else: $decoy (not in a data directory) stays" \
		test -f "$INST_ROOT$decoy/obj"
	check "$release package: ... and the data directory works" eq "$(q "SELECT count(*) FROM t")" 10000
	rm -rf "$INST_ROOT$decoy"
}

# a chroot that cannot be made ends the script (btjit_die): still close
# with the counts, that failure included
finished=0
close_early() {
	[[ $finished == 1 ]] && return
	bad "the suite stopped early (see the ERROR above)"
	summary || true
}
cluster_on_exit close_early

start=$SECONDS
for release in $releases; do
	for way in $ways; do
		if ! one_way "$release" "$way"; then
			echo "#   $release $way: stopped at the first failure (logs in $logs)"
			# one_way's checks counted it; a failure before any check
			# (the chroot itself) counts here
		fi
		inst_destroy
	done
done
echo "# suite-install: $((SECONDS - start)) s"
finished=1
summary
