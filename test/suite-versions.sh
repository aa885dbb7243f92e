#!/bin/bash
# test/suite-versions.sh - the version matrix: btree_jit built, installed and
# tested against PostgreSQL 17 (Debian 13), 18 (Debian unstable) and 19
# (19~rc1, Debian experimental on top of unstable), each in a chroot holding
# that distribution's real, stripped server (test/run tests 15, the host's
# own server, with the other suites).
#
#   test/suite-versions.sh            every version in $BTJIT_VERSIONS
#   BTJIT_VERSIONS=18 test/suite-versions.sh     one version
#
# Per version, on the host: chroot_ensure (test/lib/chroot.sh: created on
# first use, ~2-5 min, then cached), the server's Debian source for its
# regression suite (chroot_server_source, cached; for 19, whose source
# Debian does not serve, the REL_19 branch point's suite from
# ../shared/pg19 beside the clone: say so in reports), a private copy of this
# tree bound at /build/btree_jit (a build there must not write objects for
# another major into this tree).  Then inside the chroot, as root with the
# chroot server's PG_CONFIG, every cluster run as the chroot's postgres
# user through test/lib/cluster.sh, exactly as on the host:
#   build      make + make install into the chroot's server
#   status     a cluster with the module preloaded: btree_jit_status()
#              must say active, with the located _bt_binsrch and call sites
#   unit       make unitcheck: the unit tests (test_patcher against that
#              server's binary, test_objload, test_bcimport)
#   regress    test/regress.sh, the project's pg_regress suite
#   server     test/server_regress.sh verify: the server's own regression
#              suite without the module and with it + verify (the long
#              verify_jit run stays on 15, in test/run's server_regress)
#   diff       test/suite-differential.sh --minutes $BTJIT_MATRIX_DIFF_MINUTES
#              (default 1)
#   stats      test/suite-indexstats.sh: the cluster-wide per-index
#              statistics seen from another session
#   roles      test/suite-roles.sh: the DBA's switch caps a role's, and
#              other databases' counters only for pg_read_all_stats
#   package    test/suite-package.sh: the Debian package
#              postgresql-<major>-btree-jit built with that distribution's
#              tooling, installed, used, purged, for the majors in
#              BTJIT_MATRIX_PACKAGE (default "18 19": 17's package is built,
#              installed, used and purged on trixie by test/suite-install.sh,
#              and 15's by it and test/suite-package.sh on the host; "all"
#              every version, "0" none)
# Every step runs even when an earlier one failed (except after a failed
# build).  Logs and results come back to test/results/versions/<major>/;
# the last lines are a table, one row per version, and "N passed, M failed"
# over versions.  Exit status non-zero on any failure.
#
# One matrix run at a time: the whole suite (and bench/run --pg) holds
# $BTJIT_CHROOT_CACHE/.matrix.lock, waiting for another holder.
#
# Environment: BTJIT_VERSIONS (default "17 18 19"; "none": exit 77, which
# test/run reports as SKIP), BTJIT_MATRIX_DIFF_MINUTES
# (default 1), BTJIT_DIFF_SEED (the differential run's seed; default random,
# printed), and chroot.sh's knobs (BTJIT_CHROOT_CACHE, ...).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

# --- inside the chroot ----------------------------------------------------------

# step_run NAME CMD...: one step, its output in LOGDIR/NAME.log, its exit
# status in the result file
# shellcheck source=lib/steps.sh
source "$here/lib/steps.sh"

# The module's status in a fresh cluster with it preloaded.
in_status() {
	(
		source "$here/lib/cluster.sh"
		cluster_start ""
		psql_as -q -c 'CREATE EXTENSION btree_jit'
		psql_as -c 'SELECT active, reason, server_version, binsrch_address, call_sites FROM btree_jit_status()'
		psql_as -At -F ' ' -c 'SELECT active, call_sites, binsrch_address FROM btree_jit_status()' >"$logdir/status.row"
		grep -E 'LOG: +btree_jit' "$BTJIT_CLUSTER_LOG" || true
		cluster_stop
		read -r active _ <"$logdir/status.row"
		[[ $active == t ]]
	)
}

# Inside the chroot: every step, results into test/results/versions.
in_chroot() {
	local v
	cd "$root"
	export BTJIT_ROOT=$root
	matrix_label="PostgreSQL $("$PG_CONFIG" --version | awk '{ print $2 }')"
	logdir=$root/test/results/versions
	result=$logdir/result
	STEP_LABEL=$matrix_label STEP_LOGDIR=$logdir STEP_RESULT=$result
	rm -rf "$logdir"
	mkdir -p "$logdir"
	: >"$result"
	# gcc's and the clusters' temp files in this copy, not in the chroot's
	# /tmp that other users of the chroot share
	mkdir -p "$root/.tmp"
	chmod 1777 "$root/.tmp"
	export TMPDIR=$root/.tmp BTJIT_TMP=$root/.tmp
	v=$("$PG_CONFIG" --version)
	echo "server_version=${v#PostgreSQL }" >>"$result"

	if ! step_run build bash -c 'source test/lib/cluster.sh && build_and_install'; then
		return 1
	fi
	local fail=0
	step_run status in_status || fail=1
	if [[ -s $logdir/status.row ]]; then
		read -r a n addr <"$logdir/status.row"
		echo "status_row=$a $n $addr" >>"$result"
	fi
	step_run unit make PG_CONFIG="$PG_CONFIG" unitcheck || fail=1
	step_run regress bash test/regress.sh || fail=1
	step_run server bash test/server_regress.sh verify || fail=1
	if [[ -f test/results/server_regress/summary ]]; then
		cp test/results/server_regress/summary "$logdir/server.summary"
	fi
	local diff_args=(--minutes "${BTJIT_MATRIX_DIFF_MINUTES:-1}")
	[[ -z ${BTJIT_DIFF_SEED:-} ]] || diff_args+=(--seed "$BTJIT_DIFF_SEED")
	step_run diff bash test/suite-differential.sh "${diff_args[@]}" || fail=1
	step_run stats bash test/suite-indexstats.sh || fail=1
	step_run roles bash test/suite-roles.sh || fail=1
	local major
	major=$("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
	case " ${BTJIT_MATRIX_PACKAGE:-18 19} " in
	*" all "* | *" $major "*)
		step_run package bash test/suite-package.sh || fail=1
		;;
	*) echo "--- [$matrix_label] package: not in BTJIT_MATRIX_PACKAGE=\"${BTJIT_MATRIX_PACKAGE:-18 19}\"" ;;
	esac
	return "$fail"
}

if [[ ${1:-} == --in-chroot ]]; then
	in_chroot
	exit
fi

# --- on the host ------------------------------------------------------------------

# shellcheck source=lib/chroot.sh
source "$here/lib/chroot.sh"

if [[ ${BTJIT_VERSIONS:-} == none ]]; then
	echo "BTJIT_VERSIONS=none: the version matrix is skipped"
	exit 77
fi

# One matrix run at a time (chroot servers, builds in the same chroot).
if [[ -z ${_BTJIT_MATRIX_LOCKED:-} ]]; then
	mkdir -p "$BTJIT_CHROOT_CACHE"
	export _BTJIT_MATRIX_LOCKED=1
	if ! flock -n "$BTJIT_CHROOT_CACHE/.matrix.lock" true; then
		btjit_log "waiting for another matrix run ($BTJIT_CHROOT_CACHE/.matrix.lock)"
	fi
	# -o: the lock is not inherited by the servers started under it
	exec flock -o "$BTJIT_CHROOT_CACHE/.matrix.lock" bash "$0" "$@"
fi

# one_version V - everything for one major, in a process of its own (so
# that set -e holds and the tree copy is removed at its exit); results in
# $out/V/.
one_version() {
	local v=$1 rc=0
	chroot_ensure "$v"
	chroot_server_source "$v"
	btjit_log "PostgreSQL $v: regression suite of $BTJIT_CHROOT_SOURCE_VERSION ($BTJIT_CHROOT_SOURCE_DIR)"
	chroot_bind "$v" "$BTJIT_CHROOT_SOURCE_DIR" /build/pgsrc
	chroot_stage_tree "$v"
	# a suite that is not an unpacked Debian source (19's) has no
	# debian/changelog to name its version: pass it.  The REL_19 branch
	# point's suite is months older than 19~rc1: 36 of its tests fail
	# against that server with the module off (expected output of features
	# changed or reverted since, e.g. opr_sanity, copy's JSON format), so
	# the baseline may have up to 40 failures there; the module runs must
	# still have the baseline's outcome test by test.
	local srcver=()
	[[ -f $BTJIT_CHROOT_SOURCE_DIR/debian/changelog ]] ||
		srcver=(BTJIT_SERVER_SOURCE_VERSION="$BTJIT_CHROOT_SOURCE_VERSION"
			BTJIT_MAX_BASELINE_FAILURES="${BTJIT_MAX_BASELINE_FAILURES:-40}")
	chroot_run "$v" env BTJIT_SERVER_SOURCE=/build/pgsrc "${srcver[@]}" \
		${BTJIT_MATRIX_DIFF_MINUTES:+BTJIT_MATRIX_DIFF_MINUTES=$BTJIT_MATRIX_DIFF_MINUTES} \
		${BTJIT_DIFF_SEED:+BTJIT_DIFF_SEED=$BTJIT_DIFF_SEED} \
		${BTJIT_MATRIX_PACKAGE:+BTJIT_MATRIX_PACKAGE=$BTJIT_MATRIX_PACKAGE} \
		bash "$BTJIT_CHROOT_SRC/test/suite-versions.sh" --in-chroot </dev/null || rc=$?
	mkdir -p "$out/$v"
	cp -r "$BTJIT_CHROOT_TREE/test/results/." "$out/$v/" || true
	mkdir -p "$out/$v/versions"
	echo "source_version=$BTJIT_CHROOT_SOURCE_VERSION" >>"$out/$v/versions/result"
	return "$rc"
}

out=$root/test/results/versions
if [[ ${1:-} == --one-version ]]; then
	one_version "$2"
	exit
fi

versions=${BTJIT_VERSIONS:-17 18 19}
rm -rf "$out"
mkdir -p "$out"

run_version() {
	local v=$1 t0=$SECONDS rc=0
	bash "$0" --one-version "$v" </dev/null || rc=$?
	mkdir -p "$out/$v/versions"
	echo "total_rc=$rc" >>"$out/$v/versions/result"
	echo "total_secs=$((SECONDS - t0))" >>"$out/$v/versions/result"
	return "$rc"
}

# get V KEY -> the value recorded for KEY (empty if none)
get() {
	sed -n "s/^$2=//p" "$out/$1/versions/result" 2>/dev/null | tail -n 1
}

# rc V STEP -> "ok", "FAIL" or "-" (did not run)
rc_word() {
	local r
	r=$(get "$1" "$2_rc")
	case $r in
	"") echo - ;;
	0) echo ok ;;
	*) echo FAIL ;;
	esac
}

# The figures of one version's table row, from its logs.
row() {
	local v=$1 d=$out/$1 status unit regress off ver diff s verified leafshare
	s=$(get "$v" status_row)
	if [[ -n $s ]]; then
		read -r a n addr <<<"$s"
		status="$a ${addr##*/} ($n sites)"
	else
		status="-"
	fi
	# "N passed, M failed" of the unit tests
	unit=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$d/versions/unit.log" 2>/dev/null |
		awk '{ p += $1; f += $3 } END { if (NR) printf "%d/%d", p, p + f; else printf "-" }')
	# pg_regress 16+: TAP lines "ok N - name" / "not ok N - name"
	regress=$(grep -cE '^ok +[0-9]+ ' "$d/regress/pg_regress.out" 2>/dev/null || true)
	regress="${regress:-0}/$(grep -cE '^(not )?ok +[0-9]+ ' "$d/regress/pg_regress.out" 2>/dev/null || echo 0)"
	# summary: run tests passed failed secs verdict verified jit stock
	off=$(awk '$1 == "off" { printf "%d/%d", $3, $2 }' "$d/versions/server.summary" 2>/dev/null)
	ver=$(awk '$1 == "verify" { printf "%d/%d", $3, $2 }' "$d/versions/server.summary" 2>/dev/null)
	verified=$(awk '$1 == "verify" { print $7 }' "$d/versions/server.summary" 2>/dev/null)
	# the verify run's share of compiled indexes' leaf reads read by the module
	leafshare=$(awk '$1 == "verify" && $10 != "" && $10 != "-" { print $10 "%" }' "$d/versions/server.summary" 2>/dev/null)
	diff=$(sed -nE 's/.*generator: no differences.*\(([0-9]+) queries compared.*/\1/p' "$d/versions/diff.log" 2>/dev/null | tail -n 1)
	printf '%-8s %-9s %-38s %-9s %-7s %-9s %-9s %-10s %-6s %-6s %s\n' \
		"$(get "$v" server_version | awk '{ print $1 }')" "$(get "$v" source_version | sed 's/-.*//')" \
		"$status" "${unit:--}" "$regress" "${off:--}" "${ver:--}" "${verified:--}" "${leafshare:--}" "${diff:--}" \
		"$(rc_word "$v" status)/$(rc_word "$v" unit)/$(rc_word "$v" regress)/$(rc_word "$v" server)/$(rc_word "$v" diff)/$(rc_word "$v" stats)/$(rc_word "$v" roles)/$(rc_word "$v" package)"
}

t_all=$SECONDS
npass=0
nfail=0
declare -A verdict
for v in $versions; do
	case $v in
	17 | 18 | 19) ;;
	*) btjit_die "BTJIT_VERSIONS: no chroot for PostgreSQL '$v' (known: 17 18 19; 15 is the host's, test/run)" ;;
	esac
	echo
	echo "##### PostgreSQL $v #####"
	if run_version "$v"; then
		verdict[$v]=PASS
		npass=$((npass + 1))
	else
		verdict[$v]=FAIL
		nfail=$((nfail + 1))
	fi
	echo "##### PostgreSQL $v: ${verdict[$v]} ($(get "$v" total_secs) s; logs in $out/$v/)"
done

echo
echo "=== version matrix (logs: test/results/versions/<major>/) ==="
echo "server: off/verify = passed/tests of the server's suite (the suite of 'suite');"
echo "verified = searches checked against the stock path in the verify run;"
echo "leaf = of the leaf reads of compiled indexes in the verify run, the share the module read;"
echo "diff = differential queries compared; steps = status/unit/regress/server/diff/stats/roles/package"
printf '%-8s %-9s %-38s %-9s %-7s %-9s %-9s %-10s %-6s %-6s %s\n' \
	server suite "active, _bt_binsrch at" unit regress "srv off" "srv verif" verified leaf diff steps
for v in $versions; do
	row "$v"
done
for v in $versions; do
	printf '%s %s (%s s)\n' "${verdict[$v]}" "$v" "$(get "$v" total_secs)"
	# what the module logged at start, and the differential run's seed
	sed -nE 's/.*LOG: +(btree_jit.*)/  \1/p' "$out/$v/versions/status.log" 2>/dev/null | head -n 2 || true
	sed -nE 's/^== suite-differential: (seed [0-9]+).*/  differential \1/p' "$out/$v/versions/diff.log" 2>/dev/null || true
done
echo "matrix wall time $((SECONDS - t_all)) s"
echo "$npass passed, $nfail failed"
[[ $nfail -eq 0 ]]
