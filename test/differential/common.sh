# test/differential/common.sh - helpers shared by test/suite-differential.sh
# and test/suite-stress.sh (sourced after test/lib/cluster.sh).
#
#   ok "what was checked"            count a pass
#   bad "what failed" [detail]       count a failure (printed, and listed at the end)
#   check "what" CMD...              run CMD: exit 0 = pass, else failure
#   expect_eq "what" GOT WANT        pass when the strings are equal
#   q SQL                            one value from psql (-At), errors are fatal
#   server_log_problems [FROM_BYTE]  crash / PANIC / verify-mismatch lines of
#                                    the server log (from a byte offset)
#   summary                          print "N passed, M failed", return 1 on failures

_pass=0
_fail=0
_failed_checks=()

ok() {
	_pass=$((_pass + 1))
	printf '  ok    %s\n' "$1"
}

bad() {
	_fail=$((_fail + 1))
	_failed_checks+=("$1")
	printf '  FAIL  %s\n' "$1"
	if [[ -n ${2:-} ]]; then
		printf '%s\n' "$2" | head -n 20 | sed 's/^/        /'
	fi
}

check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

expect_eq() {
	if [[ "$2" == "$3" ]]; then
		ok "$1"
	else
		bad "$1" "got: $2
want: $3"
	fi
}

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
		grep -E 'terminated by signal|PANIC|server process .* was terminated|was terminated by exception|terminating any other active server processes|all server processes terminated|database system was interrupted|differs|TRAP:|Segmentation fault|LLVM ERROR' || true
}

summary() {
	echo
	if [[ $_fail -gt 0 ]]; then
		echo "failed checks:"
		printf '  - %s\n' "${_failed_checks[@]}"
	fi
	echo "$_pass passed, $_fail failed"
	[[ $_fail -eq 0 ]]
}

# Seconds since the epoch with a fraction, for wall times.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Sum of the numbers on stdin, one per line (0 for none).
sum_lines() { awk '{ s += $1 } END { print s + 0 }'; }
