#!/bin/bash
# test/regress.sh - btree_jit's own pg_regress suite: test/sql/NAME.sql is run
# with psql and its output compared with test/expected/NAME.out, against a
# throwaway cluster that preloads the module (it cannot work otherwise).
#
#   test/regress.sh [TEST...]     default: test/schedule if it exists, else
#                                 every test/sql/*.sql in sorted order
#
# Tests create the extension themselves (CREATE EXTENSION btree_jit), as
# contrib tests do.  Each run uses a fresh database `btree_jit_regress`.
# Extra server settings for the suite go in test/regress.conf (optional; its
# lines are appended to postgresql.conf).
# Exit status: 0 all passed, 1 failures (regression.diffs is printed),
# 77 no tests exist yet (test/run reports that as SKIP).
# Results are kept in test/results/regress/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"

results=$BTJIT_ROOT/test/results/regress
schedule_args=()
if [[ $# -gt 0 ]]; then
	tests=("$@")
elif [[ -f $here/schedule ]]; then
	schedule_args=(--schedule="$here/schedule")
	tests=()
else
	tests=()
	shopt -s nullglob
	for f in "$here"/sql/*.sql; do
		tests+=("$(basename "$f" .sql)")
	done
	shopt -u nullglob
	if [[ ${#tests[@]} -eq 0 ]]; then
		echo "test/regress.sh: no tests in test/sql yet"
		exit 77
	fi
fi

extra_conf=()
if [[ -f $here/regress.conf ]]; then
	while IFS= read -r line; do extra_conf+=("$line"); done <"$here/regress.conf"
fi

cluster_start "" "${extra_conf[@]}"

# pg_regress runs as postgres, and the checkout may sit where postgres cannot
# read (e.g. under /root): give it a private copy of the suite.
inputdir=$BTJIT_CLUSTER_DIR/suite
mkdir -p "$inputdir" "$BTJIT_CLUSTER_DIR/out"
cp -r "$here/sql" "$inputdir/"
if [[ -d $here/expected ]]; then cp -r "$here/expected" "$inputdir/"; fi
if [[ -d $here/data ]]; then cp -r "$here/data" "$inputdir/"; fi
if [[ ${#schedule_args[@]} -gt 0 ]]; then
	cp "$here/schedule" "$inputdir/schedule"
	schedule_args=(--schedule="$inputdir/schedule")
fi
chown -R "$BTJIT_OS_USER:" "$inputdir" "$BTJIT_CLUSTER_DIR/out"

rm -rf "$results"
mkdir -p "$results"
set +e
(cd "$BTJIT_CLUSTER_DIR" && as_postgres "$(pg_regress_bin)" \
	--inputdir="$inputdir" \
	--outputdir="$BTJIT_CLUSTER_DIR/out" \
	--bindir="$(pg_bindir)" \
	--host="$PGHOST" --port="$PGPORT" \
	--dbname=btree_jit_regress \
	"${schedule_args[@]}" "${tests[@]}") 2>&1 | tee "$results/pg_regress.out"
rc=${PIPESTATUS[0]}
set -e

# keep what a human needs to look at after the cluster dir is gone
cp -r "$BTJIT_CLUSTER_DIR/out/." "$results/" 2>/dev/null || true
cp "$BTJIT_CLUSTER_LOG" "$results/server.log"

if [[ $rc -ne 0 ]]; then
	if [[ -f $results/regression.diffs ]]; then
		echo "---- regression.diffs ----"
		cat "$results/regression.diffs"
	fi
	echo "test/regress.sh: FAILED (results in $results)"
	exit 1
fi
if grep -E 'terminated by signal' "$results/server.log"; then
	echo "test/regress.sh: a backend crashed (see $results/server.log)"
	exit 1
fi
echo "test/regress.sh: all tests passed"
