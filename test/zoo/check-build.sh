#!/bin/bash
# test/zoo/check-build.sh - the module against one server: built and
# installed into it, then what the zoo asks of every build.  Runs where
# the server is (the host, or the version's chroot), as root, in a copy of
# the tree (test/suite-zoo.sh stages one), with PG_CONFIG naming the
# server.
#
#   check-build.sh OUTDIR zoo      a zoo build: every step below
#   check-build.sh OUTDIR debian   the distribution's own server of that
#                                  major, the reference: build, status and
#                                  (BTJIT_ZOO_BENCH=1) bench
#
# Steps, each logged to OUTDIR/STEP.log with STEP_rc=... in OUTDIR/result:
#   build    make + make install of the module into the server
#   status   a cluster with the module preloaded: btree_jit_status() must be
#            active, or, where BTJIT_ZOO_REFUSAL is set, inactive with a
#            reason that starts with it (the probe then expects the
#            server's code only, and the regress suite is skipped); its reason lists every entry point's outcome, kept in
#            OUTDIR/reason, OUTDIR/redirected (the symbols redirected) and
#            OUTDIR/refused (those the module refused on this binary; the
#            start-up LOG lines, OUTDIR/startup.log, say why)
#   probe    test/zoo/probe.sql: nested-loop probe joins (same-type and
#            int8 = int4), an "as of" LIMIT 1 lookup, a backward range scan
#            and inserts, off vs on vs on with verify: equal results,
#            compiled code used, amcheck clean
#   regress  test/regress.sh, the project's pg_regress suite (its tests turn
#            verify on; background.sql has the compile worker compile)
#   bench    BTJIT_ZOO_BENCH=1 only: bench/run --no-timing probe_int4
#            probe_asof (instructions off vs on); OUTDIR/bench.csv.  With
#            btree_jit.recent_buffers = off: the ratio compares the
#            compiled code (page search, checks, leaf read), which every
#            build runs alike; which page reads go through the remembered
#            buffer depends on what the build inlined (15's LTO builds
#            inline _bt_getbuf, a scan's step to the next page: src/README,
#            "The descent's page reads")
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 OUTDIR zoo|debian" >&2; exit 2; }
out=$1 mode=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
export BTJIT_ROOT=$root
: "${PG_CONFIG:?check-build.sh needs PG_CONFIG}"
export PG_CONFIG
mkdir -p "$out"
result=$out/result
: >"$result"
echo "server_version=$("$PG_CONFIG" --version)" >>"$result"
# gcc's and the clusters' temp files in this copy, not in a /tmp that other
# users of a chroot share
mkdir -p "$root/.tmp"
chmod 1777 "$root/.tmp"
export TMPDIR=$root/.tmp BTJIT_TMP=$root/.tmp

# shellcheck source=../lib/steps.sh
source test/lib/steps.sh
STEP_LABEL="zoo $mode" STEP_LOGDIR=$out STEP_RESULT=$result

do_build() {
	# shellcheck source=../lib/cluster.sh
	source test/lib/cluster.sh
	build_and_install
}

do_status() {
	(
		# shellcheck source=../lib/cluster.sh
		source test/lib/cluster.sh
		cluster_start ""
		psql_as -q -c 'CREATE EXTENSION btree_jit'
		psql_as -At -c 'SELECT active FROM btree_jit_status()' >"$out/active"
		psql_as -At -c 'SELECT reason FROM btree_jit_status()' >"$out/reason"
		cat "$out/reason"
		grep -E 'LOG: +btree_jit' "$BTJIT_CLUSTER_LOG" | sed 's/^[^L]*LOG/LOG/' >"$out/startup.log" || true
		cat "$out/startup.log"
		cluster_stop
		# "_bt_binsrch at postgres+0x... redirected (N call sites; SYM
		# redirected; SYM not redirected (why); ...)"
		{
			grep -q '^_bt_binsrch at .* redirected' "$out/reason" && echo _bt_binsrch
			grep -oE '; [_a-z0-9]+ redirected' "$out/reason" | sed 's/^; //; s/ redirected$//'
		} | sort -u >"$out/redirected"
		# refused: "SYM not redirected" with no parenthesis (a target the
		# major does not have says "(not replaceable in PostgreSQL N)")
		grep -oE '; [_a-z0-9]+ not redirected(;|\)|$)' "$out/reason" |
			sed -E 's/^; //; s/ not redirected.*$//' | sort -u >"$out/refused" || true
		echo "redirected: $(tr '\n' ' ' <"$out/redirected")"
		echo "refused: $(tr '\n' ' ' <"$out/refused")"
		[[ $(cat "$out/active") == t ]] && return 0
		# inactive: right only for a build whose expected refusal this is
		if [[ -n ${BTJIT_ZOO_REFUSAL:-} && $(cat "$out/reason") == "$BTJIT_ZOO_REFUSAL"* ]]; then
			echo "inactive, as expected of this build: $(cat "$out/reason")"
			touch "$out/refused_cleanly"
			return 0
		fi
		return 1
	)
}

do_probe() {
	(
		# shellcheck source=../lib/cluster.sh
		source test/lib/cluster.sh
		cluster_start ""
		cp "$here/probe.sql" "$BTJIT_CLUSTER_DIR/probe.sql"
		chmod 644 "$BTJIT_CLUSTER_DIR/probe.sql"
		local expect=on
		[[ ! -f $out/refused_cleanly ]] || expect=off
		psql_as -q -v expect_compiled="$expect" -f "$BTJIT_CLUSTER_DIR/probe.sql" >"$out/probe.out"
		cat "$out/probe.out"
		cluster_stop
		# every check of probe.sql prints "ok NAME" or "FAIL NAME: ..."
		! grep -q '^FAIL' "$out/probe.out" && grep -q '^ok ' "$out/probe.out"
	)
}

do_bench() {
	BENCH_SKIP_DEPS=1 BENCH_SKIP_BUILD=1 bash bench/run --no-timing \
		--set btree_jit.recent_buffers=off probe_int4 probe_asof
	cp bench/out/latest.csv "$out/bench.csv"
}

rc=0
step_run build do_build || { echo "build_failed=1" >>"$result"; exit 1; }
step_run status do_status || rc=1
if [[ $mode == zoo ]]; then
	step_run probe do_probe || rc=1
	if [[ -f $out/refused_cleanly ]]; then
		# the suite's expected output is that of an active module
		echo "regress_skipped=the module is inactive on this build" >>"$result"
	else
		step_run regress bash test/regress.sh || rc=1
		cp -r test/results/regress "$out/regress" 2>/dev/null || true
	fi
fi
if [[ ${BTJIT_ZOO_BENCH:-0} == 1 && ! -f $out/refused_cleanly ]]; then
	step_run bench do_bench || rc=1
fi
exit "$rc"
