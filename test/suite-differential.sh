#!/bin/bash
# test/suite-differential.sh - randomized differential tests: random key
# shapes and data, random index-scan queries run with btree_jit off, on, and
# on with verify, compared row for row; amcheck after write workloads; and
# proof that the compiled path really ran.  The generator is
# test/differential/gen.py (its header says what a round does).
#
#   test/suite-differential.sh [--seed N] [--minutes M] [--round R]
#                              [--rounds K] [--queries Q] [--verbose]
#
#   --seed N     random seed (default: new one, printed; replay with it)
#   --minutes M  time for the generator (default 2.5, or $BTJIT_DIFF_MINUTES)
#   --round R    replay only round R of seed N
#   --rounds K   stop after K rounds
#   --queries Q  queries per round (default 90)
#
# Ends with "N passed, M failed"; exit status 1 on any failure.  Failing
# rounds leave their SQL script in /tmp/btree_jit-differential/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=differential/common.sh
source "$here/differential/common.sh"

seed=${BTJIT_DIFF_SEED:-}
minutes=${BTJIT_DIFF_MINUTES:-2.5}
gen_args=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--seed) seed=$2; shift 2 ;;
	--minutes) minutes=$2; shift 2 ;;
	--round | --rounds | --queries) gen_args+=("$1" "$2"); shift 2 ;;
	--verbose | --keep-tables) gen_args+=("$1"); shift ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) btjit_die "unknown argument $1 (see --help)" ;;
	esac
done
if [[ -z $seed ]]; then
	seed=$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000000 ))
fi
[[ $seed =~ ^[0-9]+$ ]] || btjit_die "--seed must be a non-negative integer"

t_start=$(now)
echo "== suite-differential: seed $seed (replay: test/suite-differential.sh --seed $seed --minutes $minutes)"
cluster_on_exit 'if [[ $check_failed -gt 0 || ${gen_rc:-0} -ne 0 ]]; then echo "seed was $seed: replay with test/suite-differential.sh --seed $seed --minutes $minutes" >&2; fi'

module=1
if [[ ${BTJIT_PRELOAD:-1} == 0 ]]; then
	module=0
	echo "BTJIT_PRELOAD=0: dry run without the module (stats checks skipped)"
elif [[ ! -f $(pg_pkglibdir)/btree_jit.so ]]; then
	build_and_install
fi

# Shapes are compiled in the searching backend (compile_mode = inline): each
# round's coverage check needs the compiled code to run within the round's
# queries.  The compile worker has its own tests (test/sql/background.sql,
# test/suite-stress.sh, test/suite-startup.sh).
cluster_start "" "max_worker_processes = 8" "max_parallel_workers = 4" \
	"log_min_error_statement = error" "shared_buffers = '64MB'" \
	"btree_jit.compile_mode = inline"
psql_as -q -c "CREATE EXTENSION amcheck"
# the collations of test/differential/keytypes.py that initdb does not make
psql_as -q -c "$(cd "$here/differential" && python3 -c 'import keytypes; print(keytypes.SETUP_SQL)')"
if [[ $module == 1 ]]; then
	psql_as -q -c "CREATE EXTENSION btree_jit" -c "CREATE EXTENSION pageinspect"
	active=$(q "SELECT active FROM btree_jit_status()")
	expect_eq "module active (btree_jit_status().active)" "$active" t
	if [[ $active != t ]]; then
		q "SELECT reason FROM btree_jit_status()" >&2 || true
	fi
fi
pm_start=$(q "SELECT pg_postmaster_start_time()")

if [[ $module == 1 ]]; then
	echo "-- fixed cases: test/differential/fixed.sql"
	t_fixed=$(now)
	fixed_out=$(psql_as -q -At -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -f "$here/differential/fixed.sql" 2>&1) || true
	nfixed=0
	while IFS= read -r line; do
		nfixed=$((nfixed + 1))
		line=${line#@@CHECK }
		if [[ $line == *" FAIL "* ]]; then
			bad "${line%% FAIL *}" "${line#* FAIL }"
		else
			ok "$line"
		fi
	done < <(grep '^@@CHECK ' <<<"$fixed_out")
	check "fixed cases: all 8 ran ($nfixed)" test "$nfixed" -eq 8
	if grep -q 'ERROR:\|server closed' <<<"$fixed_out"; then
		bad "fixed cases: errors" "$(grep -m5 -A2 'ERROR:\|server closed' <<<"$fixed_out")"
	fi
	echo "   ($(elapsed "$t_fixed")s)"
fi

psql_cmd="$(pg_bindir)/psql"
if [[ $(id -u) -eq 0 ]]; then
	psql_cmd="runuser -u $BTJIT_OS_USER -- $psql_cmd"
fi
[[ $module == 1 ]] || gen_args+=(--no-module)

echo "-- generator: test/differential/gen.py --seed $seed --minutes $minutes ${gen_args[*]}"
gen_out=$BTJIT_CLUSTER_DIR/gen.out
set +e
python3 "$here/differential/gen.py" --seed "$seed" --minutes "$minutes" \
	--psql "$psql_cmd" "${gen_args[@]}" 2>&1 | tee "$gen_out"
gen_rc=${PIPESTATUS[0]}
set -e
echo "-- checks"

summ=$(grep '^@@SUMMARY' "$gen_out" | tail -n 1 || true)
val() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" ${summ#@@SUMMARY}"; }
if [[ -z $summ ]]; then
	bad "generator finished (no summary line; exit status $gen_rc)"
else
	compared=$(val compared)
	failures=$(val failures)
	expect_eq "generator: no differences, verify errors or failed steps ($compared queries compared, $(val rounds) rounds)" "$failures" 0
	check "generator: queries were compared ($compared)" test "$compared" -gt 0
	check "amcheck bt_index_parent_check(heapallindexed, rootdescend) clean after write workloads ($(val amchecks) index checks)" \
		test "$(val amchecks)" -gt 0
	if [[ $module == 1 ]]; then
		check "compiled path exercised: $(val idx_jit) of $(val idx_supported) covered indexes in state jit with jit_searches > 0 and verified_searches > 0" \
			test "$(val idx_jit)" -gt 0 -a "$(val idx_jit)" -eq "$(val idx_supported)"
		check "compiled searches counted ($(val jit_searches) jit, $(val verified) verified)" \
			test "$(val jit_searches)" -gt 0 -a "$(val verified)" -gt 0
	fi
fi
expect_eq "generator exit status" "$gen_rc" 0

if [[ $module == 1 ]]; then
	IFS='|' read -r s_jit s_stock s_ver s_comp s_cfail < <(q "SELECT jit_searches, stock_searches, verified_searches, compiles, compile_failures FROM btree_jit_status()")
	echo "  cluster-wide btree_jit_status(): jit_searches=$s_jit stock_searches=$s_stock verified_searches=$s_ver compiles=$s_comp compile_failures=$s_cfail"
	check "cluster-wide verified_searches > 0" test "${s_ver:-0}" -gt 0
	expect_eq "no compile failures" "$s_cfail" 0
fi
expect_eq "postmaster did not restart" "$(q "SELECT pg_postmaster_start_time()")" "$pm_start"
problems=$(server_log_problems)
if [[ -z $problems ]]; then
	ok "server log: no crash, PANIC or verify mismatch"
else
	bad "server log: crash, PANIC or verify mismatch" "$problems"
fi

echo "wall time $(elapsed "$t_start")s (seed $seed)"
summary
