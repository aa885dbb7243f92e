# test/differential/common.sh - helpers shared by test/suite-differential.sh
# and the stress suite (test/suite-stress.sh, test/stress/); sourced after
# test/lib/cluster.sh.  It sources test/lib/check.sh, the assertions (ok,
# bad, check, expect_eq, summary).
#
#   q SQL                            one value from psql (-At), errors are fatal
#   q_as_role ROLE SQL               the same as another role
#   server_log_size                  the server log's size in bytes now
#   server_log_problems [FROM_BYTE]  crash / PANIC / verify-mismatch lines of
#                                    the server log (from a byte offset)
#   now, elapsed T0                  wall clock, seconds since T0 (one decimal)
#   sum_lines                        sum of the numbers on stdin

# shellcheck source=../lib/check.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"

# psql returning one unaligned value; -q so SET etc. print nothing
q() {
	psql_as -qAt -c "$1"
}

# psql as a given role (for privilege tests)
q_as_role() {
	local role=$1
	shift
	as_postgres "$(pg_bindir)/psql" -X -qAt -U "$role" -v ON_ERROR_STOP=1 -c "$1"
}

server_log_size() {
	stat -c %s "$BTJIT_CLUSTER_LOG"
}

# Lines of the server log (from byte offset $1) that mean a crash, a PANIC,
# an abort or a verify mismatch.
server_log_problems() {
	local from=${1:-0}
	tail -c +"$((from + 1))" "$BTJIT_CLUSTER_LOG" |
		grep -E 'terminated by signal|PANIC|btree_jit: .* differ|server process .* was terminated|was terminated by exception|terminating any other active server processes|all server processes terminated|database system was interrupted|differs|TRAP:|Segmentation fault|LLVM ERROR' || true
}

# Seconds since the epoch with a fraction, for wall times.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Sum of the numbers on stdin, one per line (0 for none).
sum_lines() { awk '{ s += $1 } END { print s + 0 }'; }
